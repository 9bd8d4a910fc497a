package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGuessAgentName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"plain", "roleTemplate:\n  name: support-bot\n  persona: {}\n", "support-bot"},
		{"name after other keys", "mission: m\nroleTemplate:\n  persona:\n    name: not-this\n    tone: t\n  name: bot_2.x\n", "bot_2.x"},
		{"double quoted", "roleTemplate:\n  name: \"bot\"\n", "bot"},
		{"single quoted", "roleTemplate:\n    name: 'bot'  # the agent\n", "bot"},
		{"comments and blanks", "# agent\n\nroleTemplate: # rt\n\n  # name: no\n  name: bot # yes\n", "bot"},
		{"crlf", "roleTemplate:\r\n  name: bot\r\n", "bot"},
		{"after a document marker", "---\nroleTemplate:\n  name: bot\n", "bot"},
		{"no roleTemplate", "mission: m\n", ""},
		{"name outside roleTemplate", "name: bot\nroleTemplate:\n  persona: {}\nmission: m\n", ""},
		{"deeper name only", "roleTemplate:\n  persona:\n    name: bot\n", ""},
		{"flow mapping", "roleTemplate: {name: bot}\n", ""},
		{"anchor", "roleTemplate: &rt\n  name: bot\n", ""},
		{"alias value", "roleTemplate:\n  name: *n\n", ""},
		{"block scalar", "roleTemplate:\n  name: >-\n    bot\n", ""},
		{"value on the next line", "roleTemplate:\n  name:\n    bot\n", ""},
		{"tab", "roleTemplate:\n\tname: bot\n", ""},
		{"escape", "roleTemplate:\n  name: \"b\\u006ft\"\n", ""},
		{"spaces in the name", "roleTemplate:\n  name: support bot\n", ""},
		{"boolean", "roleTemplate:\n  name: true\n", ""},
		{"null", "roleTemplate:\n  name: null\n", ""},
		{"number", "roleTemplate:\n  name: 123\n", ""},
		{"quoted number", "roleTemplate:\n  name: \"123\"\n", "123"},
		{"less indented line", "roleTemplate:\n    persona: {}\n  name: bot\n", ""},
		{"json", `{"roleTemplate": {"name": "bot"}}`, ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GuessAgentName([]byte(tc.src)); got != tc.want {
				t.Errorf("GuessAgentName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGuessAgentNameAgreesWithParse: on every agent file of the
// repository the guess is the name the parse finds, or no guess.
func TestGuessAgentNameAgreesWithParse(t *testing.T) {
	t.Parallel()
	guessed := 0
	for _, root := range []string{"../testdata", "../examples", "../bench"} {
		err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !IsAgentFile(path) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			guess := GuessAgentName(data)
			d, err := ParseDocument(path, data)
			if err != nil {
				return nil
			}
			if parsed := rawAgentName(d.Value()); guess != "" && guess != parsed {
				t.Errorf("%s: guessed %q, parsed %q", path, guess, parsed)
			}
			if guess != "" {
				guessed++
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if guessed < 5 {
		t.Errorf("guessed only %d agent names", guessed)
	}
	// Mutations of a guessable file: the guess is the parsed name or none.
	base := "roleTemplate:\n  name: bot\n  persona:\n    identity: x\nmission: m\n"
	for i := 0; i < len(base); i++ {
		for _, ins := range []string{" ", "\n", "#", "'", "\"", ":", "-", "x", "{", "&"} {
			src := base[:i] + ins + base[i:]
			guess := GuessAgentName([]byte(src))
			d, err := ParseDocument("a.agent.yaml", []byte(src))
			if err != nil || guess == "" {
				continue
			}
			if parsed := rawAgentName(d.Value()); guess != parsed {
				t.Errorf("%q: guessed %q, parsed %q", src, guess, parsed)
			}
		}
		src := base[:i] + base[i+1:]
		if d, err := ParseDocument("a.agent.yaml", []byte(src)); err == nil {
			if guess, parsed := GuessAgentName([]byte(src)), rawAgentName(d.Value()); guess != "" && guess != parsed {
				t.Errorf("%q: guessed %q, parsed %q", strings.TrimSpace(src), guess, parsed)
			}
		}
	}
}
