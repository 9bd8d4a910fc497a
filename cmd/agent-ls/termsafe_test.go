package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTermSafe: control characters but newline and tab, C1 and
// bidirectional overrides are escaped; other text, multi-byte characters
// included, passes as it is, also when a write splits a character.
func TestTermSafe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain", []string{"a.agent.yaml:1:1: error: x\n\tindented é 日本"}, "a.agent.yaml:1:1: error: x\n\tindented é 日本"},
		{"escape sequence", []string{"evil\x1b[2Jx.agent.yaml"}, `evil\x1b[2Jx.agent.yaml`},
		{"carriage return and bell", []string{"a\rb\x07"}, `a\x0db\x07`},
		{"DEL and C1", []string{"a\x7fb\u009bc"}, `a\x7fb\u009bc`},
		{"bidi override", []string{"abc\u202etxt.exe"}, `abc\u202etxt.exe`},
		{"split character", []string{"x\xe2\x80", "\xaey é", "\xc3", "\xa9"}, `x\u202ey éé`},
		{"invalid byte", []string{"a\xffb"}, "a\xffb"},
		{"safe punctuation around an escape", []string{"· learned … → ©\x1b[0m \u200fx\u2066"}, "· learned … → ©\\x1b[0m \u200fx\\u2066"},
		{"lead byte alone", []string{"a\xc2A\xe2"}, "a\xc2A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			w := &termSafe{w: &b}
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if b.String() != tt.want {
				t.Errorf("wrote %q, want %q", b.String(), tt.want)
			}
		})
	}
}

// TestHostileFileNameOnTerminal: validate over an agent file whose name
// holds an escape sequence (a file in a cloned repository) names it
// escaped on stderr, and on stdout when stdout is a terminal; to a pipe or
// a file stdout keeps the bytes (a script gets the real name).
func TestHostileFileNameOnTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "evil\x1b]0;pwned\x07\x1b[2J.agent.yaml"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("roleTemplate: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, cwd: dir}
	if code := run(context.Background(), e, []string{"validate", name, "nosuch\x1b[2J.agent.yaml"}); code == exitOK {
		t.Fatalf("validate of an invalid file: exit %d", code)
	}
	if strings.ContainsRune(stderr.String(), 0x1b) || !strings.Contains(stderr.String(), `nosuch\x1b[2J`) {
		t.Errorf("stderr writes the escape raw or not at all:\n%q", stderr.String())
	}
	if !strings.Contains(stdout.String(), name+":1:1:") {
		t.Errorf("stdout to a buffer (not a terminal) changed the file's name:\n%q", stdout.String())
	}
	// A terminal: the pseudo-terminal is not available everywhere; the
	// character device /dev/null stands in for one (terminal()).
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if !terminal(null) {
		t.Fatal("/dev/null is not taken for a terminal")
	}
	e2 := &env{stdout: null, stderr: &stderr, getenv: func(string) string { return "" }, cwd: dir}
	run(context.Background(), e2, []string{"version"})
	if _, ok := e2.stdout.(*termSafe); !ok {
		t.Errorf("stdout to a terminal is %T, want termSafe", e2.stdout)
	}
}
