package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is where the CLI tests run, so paths print as a user types them.
const repoRoot = "../.."

var wantLineRE = regexp.MustCompile(`^(\d+):(\d+)-\d+:\d+: (.*)$`)

// expectedOutput turns a fixture's golden .want file into the text lines
// validate prints for it.
func expectedOutput(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file+".want"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		m := wantLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s.want: bad line %q", file, line)
		}
		b.WriteString(file + ":" + m[1] + ":" + m[2] + ": " + m[3] + "\n")
	}
	return b.String()
}

func TestValidateClean(t *testing.T) {
	t.Parallel()
	agents, err := filepath.Glob(filepath.Join(repoRoot, "testdata/agents/*.agent.yaml"))
	if err != nil || len(agents) < 3 {
		t.Fatalf("agent fixtures: %v %v", agents, err)
	}
	var rel []string
	for _, a := range agents {
		rel = append(rel, strings.TrimPrefix(a, repoRoot+"/"))
	}
	for _, args := range [][]string{
		append([]string{"validate"}, rel...),
		{"validate", "testdata/agents"},
		{"validate", "testdata/agents/triage.agent.json"},
		{"validate", "--format", "json", "testdata/agents"},
		{"validate", "testdata/agents", "--format", "json"},
		{"validate", "--", "testdata/agents"},
	} {
		r := runBin(t, repoRoot, "", nil, args...)
		if r.code != exitOK || r.stderr != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 0 and no output", args, r.code, r.stderr, r.stdout)
		}
		isJSON := strings.Contains(strings.Join(args, " "), "--format json")
		if isJSON && strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("%v: stdout %q, want []", args, r.stdout)
		} else if !isJSON && r.stdout != "" {
			t.Errorf("%v: stdout %q, want none", args, r.stdout)
		}
	}
}

func TestValidateInvalidFixtures(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir(filepath.Join(repoRoot, "testdata/invalid"), func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !de.IsDir() && !strings.HasSuffix(p, ".want") && de.Name() != ".gitattributes" {
			files = append(files, strings.TrimPrefix(p, repoRoot+"/"))
		}
		return nil
	})
	if err != nil || len(files) < 10 {
		t.Fatalf("invalid fixtures: %d, %v", len(files), err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			r := runBin(t, repoRoot, "", nil, "validate", f)
			if r.code != exitFindings {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, exitFindings, r.stderr)
			}
			// The .want files are the schema's problems, shared with the
			// schema and lsp tests; the command line adds "did you mean"
			// to unknown keys (TestValidateNamesAndKeys).
			got := regexp.MustCompile(` \(did you mean "[^"]*"\?\)`).ReplaceAllString(r.stdout, "")
			if want := expectedOutput(t, f); got != want {
				t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	t.Parallel()
	r := runBin(t, repoRoot, "", nil, "validate", "--format", "json", "testdata/invalid/missing-required.agent.yaml")
	if r.code != exitFindings {
		t.Fatalf("exit %d, want 1: %s", r.code, r.stderr)
	}
	var got []finding
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not a JSON array of findings: %v\n%s", err, r.stdout)
	}
	want := []finding{
		{File: "testdata/invalid/missing-required.agent.yaml", Line: 1, Column: 1, EndLine: 1, EndColumn: 13, Severity: "error", Message: `missing required property "persona"`, Rule: "schema", Pointer: "/roleTemplate/persona"},
		{File: "testdata/invalid/missing-required.agent.yaml", Line: 4, Column: 5, EndLine: 4, EndColumn: 6, Severity: "error", Message: `missing required property "domain"`, Rule: "schema", Pointer: "/roleTemplate/judgments/0/domain"},
		{File: "testdata/invalid/missing-required.agent.yaml", Line: 6, Column: 1, EndLine: 6, EndColumn: 8, Severity: "error", Message: `missing required property "objective"`, Rule: "schema", Pointer: "/mission/objective"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d findings, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("finding %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestValidateUsageAndIOErrors(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // exact, one line
		stdout string // prefix
	}{
		{"missing file", []string{"validate", "testdata/agents/nope.agent.yaml"}, exitUsage, "agent-ls validate: stat testdata/agents/nope.agent.yaml: no such file or directory\n", ""},
		{"missing file beside a clean one", []string{"validate", "testdata/agents/support.agent.yaml", "nope.yaml"}, exitUsage, "agent-ls validate: stat nope.yaml: no such file or directory\n", ""},
		{"missing file beside findings", []string{"validate", "nope.yaml", "testdata/invalid/empty.agent.yaml"}, exitUsage, "agent-ls validate: stat nope.yaml: no such file or directory\n", "testdata/invalid/empty.agent.yaml:1:1: error: the document holds no value (the file is empty, comments only, or null): expected object [schema]\n"},
		{"after --, a dash is a file name", []string{"validate", "--", "-x.agent.yaml"}, exitUsage, "agent-ls validate: stat -x.agent.yaml: no such file or directory\n", ""},
		{"no arguments", []string{"validate"}, exitUsage, "agent-ls validate: no files given (run 'agent-ls validate --help')\n", ""},
		{"bad format", []string{"validate", "--format", "xml", "testdata/agents"}, exitUsage, "agent-ls validate: --format \"xml\": want text or json (run 'agent-ls validate --help')\n", ""},
		{"unknown flag", []string{"validate", "--strict", "testdata/agents"}, exitUsage, "agent-ls validate: unknown flag --strict (run 'agent-ls validate --help')\n", ""},
		{"empty directory", []string{"validate", empty}, exitUsage, "agent-ls validate: " + empty + ": no agent files found\n", ""},
		{"help", []string{"validate", "--help"}, exitOK, "", "Usage: agent-ls validate [--format text|json] FILE|DIR..."},
		{"help via help", []string{"help", "validate"}, exitOK, "", "Usage: agent-ls validate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runBin(t, repoRoot, "", nil, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d", r.code, tt.code)
			}
			if r.stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", r.stderr, tt.stderr)
			}
			if !strings.HasPrefix(r.stdout, tt.stdout) || (tt.stdout == "" && r.stdout != "") {
				t.Errorf("stdout %q, want prefix %q", r.stdout, tt.stdout)
			}
		})
	}
}

// TestInvalidAgentFileOneMessage: every command that reads an agent file
// says an invalid one is invalid in one wording, the engine's
// (engine.LoadAgent): the first error at file:line:col and how many more.
// garden, learnings, proposals, promote and bisect had a copy of the rule
// of their own that said "(run 'agent-ls validate FILE')" without the count.
func TestInvalidAgentFileOneMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := "roleTemplate:\n  name: broken\n  persona:\n    identity: 5\n    tonee: hi\n"
	if err := os.WriteFile(filepath.Join(dir, "broken.agent.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "broken.agent.yaml")
	want := file + `:1:1: missing required property "mission" (and 2 more; run agent-ls validate)` + "\n"
	for _, args := range [][]string{
		{"render", "broken.agent.yaml"},
		{"overlay", "broken.agent.yaml"},
		{"garden", "broken.agent.yaml"},
		{"learnings", "broken.agent.yaml"},
		{"proposals", "broken.agent.yaml"},
		{"promote", "01J9Z8K3V4M5N6P7Q8R9S0T1U2", "broken.agent.yaml"},
		{"bisect", "broken.agent.yaml"},
	} {
		r := runBin(t, dir, "", []string{"USER=ana"}, args...)
		if r.code != exitUsage || r.stdout != "" || !strings.HasSuffix(r.stderr, "agent-ls "+args[0]+": "+want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 ending %q", args, r.code, r.stdout, r.stderr, "agent-ls "+args[0]+": "+want)
		}
	}
}
