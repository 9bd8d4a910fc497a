package schema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestNotAnAgentFile: a file that is clearly not an agent file gets one
// problem saying so, quoting none of it (issue 31, reproduction 8); a file
// with an agent key, an empty file and a near miss of an agent key are
// validated as agent files.
func TestNotAnAgentFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, src string
		notAgent        bool
	}{
		{"shadow lines", "x.agent.yaml", "root:$6$SECRET:1:2:::\ndaemon:*:SECRET:::\n", true},
		{"credentials", "c.agent.yaml", "password: SECRET\napi_token: SECRET\n", true},
		{"json credentials", "c.agent.json", `{"aws_secret_access_key": "SECRET"}`, true},
		{"a list", "l.agent.yaml", "- SECRET\n- b\n", true},
		{"plain text", "p.agent.yaml", "SECRET text\n", true},
		{"a number", "n.agent.json", "42", true},
		{"empty", "e.agent.yaml", "", false},
		{"an empty object", "o.agent.json", "{}", false},
		{"one agent key", "m.agent.yaml", "mission: {objective: z}\npassword: SECRET\n", false},
		{"a near miss", "t.agent.yaml", "misson: {objective: z}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps := Check(tc.file, []byte(tc.src))
			got := problemsText(ps)
			isNot := strings.Contains(got, "not an agent file")
			if isNot != tc.notAgent {
				t.Fatalf("not an agent file = %v, want %v:\n%s", isNot, tc.notAgent, got)
			}
			if tc.notAgent {
				if len(ps) != 1 || strings.Contains(got, "SECRET") || strings.Contains(got, "password") || strings.Contains(got, "aws") {
					t.Errorf("want one problem quoting nothing of the file:\n%s", got)
				}
			}
		})
	}
}

// TestUnknownKeyBounded: an unknown property's message names its key, cut
// to a bounded length, and never its value.
func TestUnknownKeyBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", 30) + strings.Repeat("S", 500)
	ps := Check("a.agent.yaml", []byte(validHead+long+": VALUE\n"))
	if len(ps) != 1 {
		t.Fatalf("problems: %s", problemsText(ps))
	}
	m := ps[0].Message
	if !strings.HasPrefix(m, `unknown property "kkk`) || len([]rune(m)) > 100 || strings.Contains(m, "VALUE") || !strings.Contains(m, "…") {
		t.Errorf("message %q: want the key cut to a bounded length", m)
	}
	dup := Check("a.agent.yaml", []byte(validHead+long+": 1\n"+long+": 2\n"))
	for _, p := range dup {
		if len([]rune(p.Message)) > 140 {
			t.Errorf("duplicate-key message is unbounded: %d runes", len([]rune(p.Message)))
		}
	}
}

func TestRequiredAgentKeys(t *testing.T) {
	t.Parallel()
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(AgentSchema, &s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Required, requiredAgentKeys[:]) {
		t.Errorf("requiredAgentKeys = %v, the schema requires %v", requiredAgentKeys, s.Required)
	}
	for _, k := range requiredAgentKeys {
		if !isAgentKey(agentKeys(), k) {
			t.Errorf("%s is not an agent key", k)
		}
	}
}
