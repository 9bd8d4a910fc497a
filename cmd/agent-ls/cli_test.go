package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// commandPaths lists every command and memory subcommand of the table.
func commandPaths() [][]string {
	var out [][]string
	for _, c := range commands() {
		out = append(out, []string{c.name})
		if c.name == "memory" {
			for _, s := range memorySubs() {
				out = append(out, []string{"memory", s.name})
			}
		}
	}
	return out
}

// TestHelpEveryCommand: `help PATH...` prints exactly `PATH --help`, with
// exit 0, one example and flags in the --flag style of the usage lines
// (issue 22 items 2 and 3).
func TestHelpEveryCommand(t *testing.T) {
	dir := t.TempDir()
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, path := range commandPaths() {
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			viaHelp := runBin(t, dir, "", nil, append([]string{"help"}, path...)...)
			viaFlag := runBin(t, dir, "", nil, append(append([]string{}, path...), "--help")...)
			if viaHelp.code != 0 || viaFlag.code != 0 {
				t.Fatalf("exit %d (help) and %d (--help), want 0; stderr %q %q", viaHelp.code, viaFlag.code, viaHelp.stderr, viaFlag.stderr)
			}
			if viaHelp.stdout != viaFlag.stdout {
				t.Errorf("help %s and %s --help differ:\n%s\n----\n%s", name, name, viaHelp.stdout, viaFlag.stdout)
			}
			out := viaFlag.stdout
			if !strings.HasPrefix(out, "Usage: agent-ls "+name) {
				t.Errorf("help does not start with the usage line of %q:\n%s", name, out)
			}
			if n := strings.Count(out, "\nExample:\n  agent-ls "+path[0]); n != 1 {
				t.Errorf("help has %d examples of agent-ls %s, want 1:\n%s", n, path[0], out)
			}
			if singleDash.MatchString(out) {
				t.Errorf("help lists a flag as -flag, want --flag:\n%s", out)
			}
		})
	}
	r := runBin(t, dir, "", nil, "help", "--help")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: agent-ls help") {
		t.Errorf("help --help: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestUnknownFlagOneMessage: every command answers an unknown flag the
// same way, before or after its arguments.
func TestUnknownFlagOneMessage(t *testing.T) {
	dir := t.TempDir()
	for _, path := range commandPaths() {
		name := strings.Join(path, " ")
		if name == "help" || name == "version" {
			continue
		}
		r := runBin(t, dir, "", nil, append(append([]string{}, path...), "--bogus")...)
		want := "agent-ls " + name + ": unknown flag --bogus (run 'agent-ls " + name + " --help')\n"
		if r.code != exitUsage || r.stderr != want {
			t.Errorf("%s --bogus: exit %d, stderr %q; want 2, %q", name, r.code, r.stderr, want)
		}
	}
}

// TestLintFlagsAfterPaths: lint takes its flags after the paths too
// (issue 22 item 1: --format sarif after a file printed text and failed).
func TestLintFlagsAfterPaths(t *testing.T) {
	dir := lintWorkspace(t, "schema", "positive", true)
	r := runBin(t, dir, "", nil, "lint", "support.agent.yaml", "--format", "sarif")
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) == 0 {
		t.Fatalf("lint FILE --format sarif: exit %d, not a SARIF log with results (%v):\n%s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	conflicts := lintWorkspace(t, "memory-conflict", "positive", false)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"support.agent.yaml", "--list-rules"}, exitOK, "RULE"},
		{[]string{"support.agent.yaml", "--format", "json", "--store", "other.db"}, exitFindings, `"rule": "schema"`},
		{[]string{"support.agent.yaml", "--report"}, exitOK, "support.agent.yaml (agent "},
		{[]string{"support.agent.yaml", "--max-warnings", "0"}, exitFindings, "[memory-conflict]"},
	} {
		d := dir
		if tc.args[1] == "--report" || tc.args[1] == "--max-warnings" {
			d = conflicts
		}
		r := runBin(t, d, "", nil, append([]string{"lint"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stdout, tc.want) || strings.Contains(r.stderr, "stat ") {
			t.Errorf("lint %v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, r.code, r.stdout, r.stderr, tc.code, tc.want)
		}
	}
}

// TestErrorsSaidOnce: a missing record or a bad target is named once, in
// the one not-found wording (issue 22 item 2).
func TestErrorsSaidOnce(t *testing.T) {
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-bot", "deploys freeze on Fridays"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	var list struct {
		Records []struct{ ID string } `json:"records"`
	}
	w.cliJSON(&list, "memory", "list")
	if len(list.Records) != 1 {
		t.Fatalf("records %+v", list.Records)
	}
	id := list.Records[0].ID
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"promote", "NOPE"}, "agent-ls promote: no record NOPE\n"},
		{[]string{"demote", "NOPE", "--reason", "x"}, "agent-ls demote: no record NOPE\n"},
		{[]string{"diff", "deploy.agent.yaml", "--with", "NOPE"}, "agent-ls diff: no record NOPE\n"},
		{[]string{"diff", "deploy.agent.yaml", "--without", "NOPE"}, "agent-ls diff: no record NOPE\n"},
		{[]string{"memory", "show", "NOPE"}, "agent-ls memory show: no record NOPE\n"},
		{[]string{"approve", "NOPE"}, "agent-ls approve: no proposal NOPE\n"},
		{[]string{"memory", "retarget", id, "bad"}, `agent-ls memory retarget: target "bad": unknown primitive "bad" (want background, judgment, example, awareness, recovery or manual)` + "\n"},
	} {
		r := w.cli(tc.args...)
		if r.stderr != tc.want {
			t.Errorf("%v: stderr %q, want %q", tc.args, r.stderr, tc.want)
		}
	}
}

// TestUnknownCommandSuggests: a misspelled command or subcommand gets the
// nearest name.
func TestUnknownCommandSuggests(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rendr"}, `agent-ls: unknown command "rendr" (did you mean "render"?) (run 'agent-ls help')` + "\n"},
		{[]string{"memory", "serch"}, `agent-ls memory: unknown subcommand "serch" (did you mean "search"?) (run 'agent-ls memory --help')` + "\n"},
	} {
		r := runBin(t, dir, "", nil, tc.args...)
		if r.code != exitUsage || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestAgentFilePositional: every command about one agent takes the agent
// file as an argument, the same as --agent (issue 22 item 5).
func TestAgentFilePositional(t *testing.T) {
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-bot", "--target", "background.projectContext.freeze", "deploys freeze on Fridays"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	if r := w.cli("memory", "save", "--scope", "agent=code-review-bot", "reviews need two approvals"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	for _, cmd := range [][]string{{"garden"}, {"learnings", "--since", "2020-01-01T00:00:00Z"}, {"proposals"}} {
		byFlag := w.cli(append(append([]string{}, cmd...), "--agent", "deploy.agent.yaml")...)
		for _, args := range [][]string{
			append([]string{cmd[0], "deploy.agent.yaml"}, cmd[1:]...),
			append(append([]string{}, cmd...), "deploy.agent.yaml"),
		} {
			r := w.cli(args...)
			if r.code != byFlag.code || r.stdout != byFlag.stdout || r.stderr != byFlag.stderr {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; --agent gave %d, %q, %q", args, r.code, r.stdout, r.stderr, byFlag.code, byFlag.stdout, byFlag.stderr)
			}
		}
		if byFlag.code != 0 || strings.Contains(byFlag.stdout, "code-review-bot") {
			t.Errorf("%v --agent: exit %d, stdout %q: want deploy-bot's report only", cmd, byFlag.code, byFlag.stdout)
		}
	}
}
