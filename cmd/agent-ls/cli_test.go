package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
		if c.name == "token" {
			for _, s := range tokenSubs() {
				out = append(out, []string{"token", s.name})
			}
		}
	}
	return out
}

// TestHelpEveryCommand: `help PATH...` prints exactly `PATH --help`, with
// exit 0, one example and flags in the --flag style of the usage lines
// (issue 22 items 2 and 3).
func TestHelpEveryCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, path := range commandPaths() {
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
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
	t.Parallel()
	dir := t.TempDir()
	for _, path := range commandPaths() {
		name := strings.Join(path, " ")
		if name == "help" {
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
	t.Parallel()
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
	t.Parallel()
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "deploys freeze on Fridays"); r.code != 0 {
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
	t.Parallel()
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
	t.Parallel()
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "--target", "background.projectContext.freeze", "deploys freeze on Fridays"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	if r := w.cli("memory", "save", "--scope", "agent=code-reviewer", "reviews need two approvals"); r.code != 0 {
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
		if byFlag.code != 0 || strings.Contains(byFlag.stdout, "code-reviewer") {
			t.Errorf("%v --agent: exit %d, stdout %q: want deploy-ops's report only", cmd, byFlag.code, byFlag.stdout)
		}
	}
}

// TestNoStoreSaysSo: a read that finds no store says where it looked, with
// and without --store, and a save that creates one says where (issue 22
// item 7).
func TestNoStoreSaysSo(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	def := filepath.Join(w.dir, ".agent-memory", "memory.db")
	other := filepath.Join(w.dir, "nonexist.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "deploy.agent.yaml"}, "agent-ls render: no memory store at " + def + ": the authored agent only\n"},
		{[]string{"render", "deploy.agent.yaml", "--store", "nonexist.db"}, "agent-ls render: no memory store at " + other + ": the authored agent only\n"},
		{[]string{"overlay", "deploy.agent.yaml", "--store", "nonexist.db"}, "agent-ls overlay: no memory store at " + other + ": the authored agent only\n"},
		{[]string{"lint", "deploy.agent.yaml"}, "agent-ls lint: no memory store at " + def + ": the authored agent only\n"},
		{[]string{"garden", "deploy.agent.yaml"}, "agent-ls garden: no memory store at " + def + ": nothing saved yet\n"},
		{[]string{"memory", "list", "--store", "nonexist.db"}, "agent-ls memory list: no memory store at " + other + ": no records\n"},
	} {
		r := w.cli(tc.args...)
		if r.code != 0 || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 0, %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("a read created %s", other)
	}
	// A file that does not compose gets its error alone, not the note
	// about the store first.
	if err := os.WriteFile(filepath.Join(w.dir, "notes.agent.yaml"), []byte("just some text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"render", "overlay"} {
		r := w.cli(cmd, "notes.agent.yaml")
		if r.code != exitUsage || strings.Contains(r.stderr, "no memory store") || !strings.Contains(r.stderr, "notes.agent.yaml:1:1: not an agent file") {
			t.Errorf("%s of a file that does not compose: exit %d, stderr %q; want 2 and its error alone", cmd, r.code, r.stderr)
		}
	}
	if r := w.cli("diff", "notes.agent.yaml", "--without", "01ARZ3NDEKTSV4RRFFQ69G5FAV"); r.code == exitOK || strings.Contains(r.stderr, "no memory store") {
		t.Errorf("diff of a file that does not compose: exit %d, stderr %q; want its error alone", r.code, r.stderr)
	}
	r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "deploys freeze on Fridays")
	if r.code != 0 || r.stderr != "agent-ls memory save: created memory store "+def+"\n" {
		t.Errorf("first save: exit %d, stderr %q", r.code, r.stderr)
	}
	// The agent file's workspace, not the working directory's, for every
	// command given one: from a subdirectory, garden finds the same store.
	sub := filepath.Join(w.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	g := runBin(t, sub, "", []string{"USER=ana"}, "garden", "../deploy.agent.yaml")
	if g.code != 0 || g.stderr != "" || !strings.Contains(g.stdout, "agent deploy-ops:") {
		t.Errorf("garden ../deploy.agent.yaml from sub/: exit %d, stdout %q, stderr %q", g.code, g.stdout, g.stderr)
	}
}

// TestOrphanAgents: a save or save-batch for an agent no agent file names
// is refused with the nearest name (issue 30: never saved and invisible);
// import, which restores records as they were, warns; lint of the
// workspace reports the records; a scope with separators in a key or value
// is refused (issue 22 item 6).
func TestOrphanAgents(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	refusal := `no agent file in the workspace names agent "deploy-op" (did you mean deploy-ops?); its records would reach no composition; nothing saved`
	r := w.cli("memory", "save", "--scope", "project=atlas,agent=deploy-op", "deploys freeze on Fridays")
	if r.code != exitFindings || !strings.HasSuffix(r.stderr, "agent-ls memory save: refused: "+refusal+"\n") {
		t.Errorf("save: exit %d, stderr %q; want the refusal %q", r.code, r.stderr, refusal)
	}
	// The refused save created no store (issue 32): the first saved one does.
	if r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "deploys need a ticket"); r.code != 0 || r.stderr != "agent-ls memory save: created memory store "+w.db+"\n" {
		t.Errorf("save for a real agent: exit %d, stderr %q", r.code, r.stderr)
	}
	batch := filepath.Join(w.dir, "b.jsonl")
	if err := os.WriteFile(batch, []byte(`{"content":"rollbacks need a note"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := w.cli("memory", "save-batch", "--scope", "project=atlas,agent=deploy-op", batch); r.code != exitFindings || !strings.Contains(r.stdout, "b.jsonl:1: refused: "+refusal) {
		t.Errorf("save-batch: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Import writes records as they were exported: it warns.
	imp := filepath.Join(w.dir, "i.jsonl")
	var lines []string
	for i, c := range []string{"deploys freeze on Fridays", "rollbacks need a note"} {
		lines = append(lines, fmt.Sprintf(`{"id":"01J9Z8K3V4M5N6P7Q8R9S0T1X%d","scope":{"project":"atlas","agent":"deploy-op"},"kind":"fact","content":%q,"provenance":{"author":"human:ana","at":"2026-01-01T00:00:00.000Z"},"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}`, i, c))
	}
	if err := os.WriteFile(imp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `warning: no agent file in the workspace (` + w.dir + `) names agent "deploy-op" (did you mean deploy-ops?); its records reach no composition` + "\n"
	if r := w.cli("memory", "import", imp); r.code != 0 || !strings.HasSuffix(r.stderr, "agent-ls memory import: "+want) {
		t.Errorf("import: exit %d, stderr %q; want the warning %q", r.code, r.stderr, want)
	}
	l := w.cli("lint", ".", "--format", "json")
	var findings []lintFinding
	if err := json.Unmarshal([]byte(l.stdout), &findings); err != nil {
		t.Fatalf("lint: %v\n%s\n%s", err, l.stdout, l.stderr)
	}
	n := 0
	for _, f := range findings {
		if f.Rule == "orphan-records" {
			n++
			if f.File != ".agent-ls.yaml" || !strings.Contains(f.Message, `2 records of agent "deploy-op"`) || !strings.Contains(f.Message, "did you mean deploy-ops?") {
				t.Errorf("orphan finding %+v", f)
			}
		}
	}
	if n != 1 {
		t.Errorf("lint .: %d orphan-records findings, want 1: %s", n, l.stdout)
	}
	for _, scope := range []string{"agent=deploy-ops;user=x", "agent=a=b", "us;er=x"} {
		r := w.cli("memory", "save", "--scope", scope, "x")
		if r.code != exitUsage || !strings.Contains(r.stderr, "keys and values may not contain , ; =") {
			t.Errorf("--scope %q: exit %d, stderr %q; want it refused", scope, r.code, r.stderr)
		}
	}
}

// TestProposalsWithSharedRecords: with shared records beside several
// agents, proposals prints the real composition diff and garden credits
// the pending review to its agent only (issue 22 item 8).
func TestProposalsWithSharedRecords(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	s := w.cli("memory", "save", "--actor", "agent:deploy-ops", "--target", "judgment.deploy.constraints", "never deploy on Fridays")
	if s.code != 0 {
		t.Fatalf("save: %d %s", s.code, s.stderr)
	}
	for _, args := range [][]string{
		{"memory", "save", "--scope", "project=atlas,agent=code-reviewer", "reviews need two approvals"},
		{"memory", "save", "--scope", "project=atlas,team=ops", "the on-call rota is in the wiki"},
	} {
		if r := w.cli(args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	p := w.cli("proposals")
	if p.code != 0 || !strings.Contains(p.stdout, "+++ after promote") || !strings.Contains(p.stdout, "+- never deploy on Fridays") {
		t.Errorf("proposals: exit %d, want the composition diff:\n%s%s", p.code, p.stdout, p.stderr)
	}
	var g struct {
		Reports []struct {
			Agent          string `json:"agent"`
			PendingReviews int    `json:"pendingReviews"`
		} `json:"reports"`
	}
	w.cliJSON(&g, "garden")
	pending := map[string]int{}
	for _, r := range g.Reports {
		pending[r.Agent] = r.PendingReviews
	}
	if pending["deploy-ops"] != 1 || pending[""] != 0 || pending["code-reviewer"] != 0 {
		t.Errorf("garden pending reviews by agent %v, want deploy-ops 1 and no other", pending)
	}
}

// TestValidateNamesAndKeys: validate and lint answer a file that is not an
// agent file by its name, and suggest the key a misspelt one meant (issue
// 22 item 9).
func TestValidateNamesAndKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "agents", "support.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(data), "\n  persona:", "\n  persna:", 1)
	if typo == string(data) {
		t.Fatal("fixture has no persona key")
	}
	for name, text := range map[string]string{"README.md": "# notes\n", "typo.agent.yaml": typo} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{"validate", "lint"} {
		r := runBin(t, dir, "", nil, cmd, "README.md")
		want := "agent-ls " + cmd + ": README.md: not an agent file (want *.agent.yaml, *.agent.yml or *.agent.json; also .agent-ls.yaml and *.jsonl records)\n"
		if r.code != exitUsage || r.stderr != want || r.stdout != "" {
			t.Errorf("%s README.md: exit %d, stdout %q, stderr %q; want 2 and %q", cmd, r.code, r.stdout, r.stderr, want)
		}
		args := []string{cmd, "typo.agent.yaml"}
		if cmd == "lint" {
			args = append(args, "--store", "none.db")
		}
		r = runBin(t, dir, "", nil, args...)
		if r.code != exitFindings || !strings.Contains(r.stdout, `unknown property "persna" (did you mean "persona"?) [schema]`) {
			t.Errorf("%s typo.agent.yaml: exit %d, stdout %q", cmd, r.code, r.stdout)
		}
	}
}

// TestExportFormatsAndListColumns: export prints JSON lines by default and
// the listing with --format text; list's columns line up (issue 22 item
// 10).
func TestExportFormatsAndListColumns(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	for _, args := range [][]string{
		{"memory", "save", "--scope", "project=atlas,agent=deploy-ops", "--target", "background.projectContext.freeze", "deploys freeze on Fridays"},
		{"memory", "save", "--scope", "project=atlas,team=ops", "--kind", "preference", "the on-call rota is in the wiki"},
	} {
		if r := w.cli(args...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
	jsonl := w.cli("memory", "export")
	lines := strings.Split(strings.TrimSpace(jsonl.stdout), "\n")
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("export line %q is not JSON", l)
		}
	}
	text := w.cli("memory", "export", "--format", "text")
	if text.code != 0 || strings.HasPrefix(text.stdout, "{") || !strings.Contains(text.stdout, "deploys freeze on Fridays") {
		t.Errorf("export --format text: exit %d\n%s", text.code, text.stdout)
	}
	for _, out := range []string{text.stdout, w.cli("memory", "list").stdout} {
		rows := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(rows) != 3 || !strings.HasPrefix(rows[0], "ID ") {
			t.Fatalf("listing %q: want a header and two rows", out)
		}
		col := strings.Index(rows[0], "CONTENT")
		for _, r := range rows[1:] {
			if col < 0 || len(r) < col || r[col-2:col] != "  " || r[col] == ' ' {
				t.Errorf("row %q does not start its content under CONTENT (column %d):\n%s", r, col, out)
			}
		}
	}
}

// TestUnknownFlagDidYouMean: every command answers a misspelt flag with its
// nearest flag (issue 32, small things: validate had it, render not).
func TestUnknownFlagDidYouMean(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flagLine := regexp.MustCompile(`(?m)^  --([a-z][a-z0-9-]*)`)
	for _, path := range commandPaths() {
		name := strings.Join(path, " ")
		h := runBin(t, dir, "", nil, append(append([]string{}, path...), "--help")...)
		var longest string
		for _, m := range flagLine.FindAllStringSubmatch(h.stdout, -1) {
			if len(m[1]) > len(longest) {
				longest = m[1]
			}
		}
		if longest == "" {
			continue // version, help: no flags
		}
		typo := longest[:len(longest)-1] // one letter short
		r := runBin(t, dir, "", nil, append(append([]string{}, path...), "--"+typo)...)
		want := "agent-ls " + name + ": unknown flag --" + typo + ` (did you mean "--` + longest + `"?) (run 'agent-ls ` + name + " --help')\n"
		if r.code != exitUsage || r.stderr != want {
			t.Errorf("%s --%s: exit %d, stderr %q; want 2, %q", name, typo, r.code, r.stderr, want)
		}
	}
	// The memory command's own flags, before the subcommand.
	r := runBin(t, dir, "", nil, "memory", "--stor", "x.db", "list")
	if want := "agent-ls memory: unknown flag --stor (did you mean \"--store\"?) (run 'agent-ls memory --help')\n"; r.code != exitUsage || r.stderr != want {
		t.Errorf("memory --stor: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
}

// TestConfigKeyDidYouMean: a misspelt .agent-ls.yaml key is answered with
// the nearest key by every command that loads the config, not only by
// validate (issue 32, small things).
func TestConfigKeyDidYouMean(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "storePol: 1s\n")
	for _, args := range [][]string{
		{"render", "deploy.agent.yaml"},
		{"overlay", "deploy.agent.yaml"},
		{"lint", "deploy.agent.yaml"},
		{"memory", "list"},
		{"memory", "save", "--kind", "fact", "--content", "x", "--actor", "human:ana"},
		{"proposals"},
		{"garden", "deploy.agent.yaml"},
	} {
		r := runBin(t, w.dir, "", nil, args...)
		if r.code == exitOK || !strings.Contains(r.stderr+r.stdout, `unknown property "storePol" (did you mean "storePoll"?)`) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want the hint", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	r := runBin(t, w.dir, "", nil, "validate", ".agent-ls.yaml")
	if !strings.Contains(r.stdout, `unknown property "storePol" (did you mean "storePoll"?)`) {
		t.Errorf("validate .agent-ls.yaml: exit %d, stdout %q", r.code, r.stdout)
	}
}

// TestMemoryArgumentErrorsPointAtHelp: a wrong number of arguments to a
// memory subcommand is a usage error in the one wording every other command
// uses, ending with the pointer to its help. The memory subcommands said
// "agent-ls memory show: want one record ID" and stopped, where render says
// "... (run 'agent-ls render --help')".
func TestMemoryArgumentErrorsPointAtHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "want one record ID"},
		{[]string{"show", "a", "b"}, "want one record ID"},
		{[]string{"invalidate"}, "want one record ID"},
		{[]string{"corroborate"}, "want one record ID"},
		{[]string{"restore"}, "want one record ID (a superseded or invalidated version)"},
		{[]string{"retarget", "01J9Z8K3V4M5N6P7Q8R9S0T1U2"}, "want a record ID and a target (compact form, e.g. judgment.deploy.heuristics)"},
		{[]string{"import"}, "want one FILE.jsonl (- for stdin)"},
		{[]string{"save-batch"}, "want one FILE.jsonl (- for stdin): lines of "},
		{[]string{"list", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"ledger", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"export", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"events", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"search", "--query", "x", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"init", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"migrate", "--from", "a.db", "--to", "b.db", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"save", "--content", "x", "extra"}, `unexpected arguments ["extra"] (the content is given by --content)`},
	} {
		name := "memory " + tc.args[0]
		r := runBin(t, dir, "", memEnv, append([]string{"memory"}, tc.args...)...)
		prefix, suffix := "agent-ls "+name+": "+tc.want, " (run 'agent-ls "+name+" --help')\n"
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, prefix) || !strings.HasSuffix(r.stderr, suffix) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line %q...%q", tc.args, r.code, r.stderr, prefix, suffix)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".agent-memory")); err == nil {
		t.Error("a usage error created the store")
	}
}

// TestFlagValueErrorsSayWhatIsWanted: a bad value of a boolean, duration,
// integer or --head flag is worded like every other flag error ("flag
// --NAME: invalid value "V": what is wanted"), never the flag package's
// single-dash "invalid boolean value ... for -all" or a bare "parse error".
func TestFlagValueErrorsSayWhatIsWanted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "list", "--all=maybe"}, `agent-ls memory list: flag --all: invalid value "maybe": want true or false (run 'agent-ls memory list --help')`},
		{[]string{"garden", "--every", "abc"}, `agent-ls garden: flag --every: invalid value "abc": want a duration such as 30s, 10m or 1h30m (run 'agent-ls garden --help')`},
		{[]string{"lint", "--max-warnings", "many"}, `agent-ls lint: flag --max-warnings: invalid value "many": want an integer (run 'agent-ls lint --help')`},
		{[]string{"memory", "ledger", "--verify", "--head", "3:abc"}, `agent-ls memory ledger: flag --head: invalid value "3:abc": the hash must be 64 hex digits (run 'agent-ls memory ledger --help')`},
	} {
		r := runBin(t, dir, "", nil, tc.args...)
		if r.code != exitUsage || r.stderr != tc.want+"\n" {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestConfigLintRuleDidYouMean: a lint.rules entry naming no rule (a typo
// of near-duplicate) was taken silently, and the rule kept its default
// severity. It is a config error at the key, with the nearest rule, like an
// unknown key: validate reports it (exit 1) and commands refuse the config
// (exit 2, file:line:col).
func TestConfigLintRuleDidYouMean(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "lint: {rules: {near-dup: off}}\n")
	const want = `unknown lint rule "near-dup" (did you mean "near-duplicate"?)`
	r := runBin(t, w.dir, "", nil, "validate", ".agent-ls.yaml")
	if r.code != exitFindings || !strings.Contains(r.stdout, want) || !regexp.MustCompile(`\.agent-ls\.yaml:\d+:\d+: error: `).MatchString(r.stdout) {
		t.Errorf("validate .agent-ls.yaml: exit %d, stdout %q; want 1 and %q at file:line:col", r.code, r.stdout, want)
	}
	for _, args := range [][]string{{"lint", "deploy.agent.yaml"}, {"memory", "list"}} {
		r := runBin(t, w.dir, "", nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, want)
		}
	}

	// A suppression comment naming no rule suppresses nothing: lint says so
	// at the comment, where it was taken silently.
	v := newEvoWorkspace(t, "")
	path := filepath.Join(v.dir, "deploy.agent.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(data[:strings.Index(string(data), "roleTemplate:\n")]), "\n") + 1
	data = []byte(strings.Replace(string(data), "roleTemplate:\n", "roleTemplate: # agent-ls: ignore near-dup restated on purpose\n", 1))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, v.dir, "", nil, "lint", "deploy.agent.yaml")
	if wantS := fmt.Sprintf("deploy.agent.yaml:%d:1: warning: ", line) + strings.Replace(want, "unknown lint rule", "the suppression names no lint rule:", 1); !strings.Contains(r.stdout, wantS) {
		t.Errorf("lint with a suppression of no rule: exit %d, stdout %q; want %q", r.code, r.stdout, wantS)
	}
}

// TestConfigBoundsInIntegers: a config number over its maximum was worded
// by the schema library in floats ("must be <= 4.194304e+06 but found
// 5e+06"); it is "must be at most 4194304, got 5000000", as a number under
// its minimum is "must be at least 1, got 0".
func TestConfigBoundsInIntegers(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "limits: {content: 5000000, tags: 0}\n")
	r := runBin(t, w.dir, "", nil, "validate", ".agent-ls.yaml")
	for _, want := range []string{"must be at most 4194304, got 5000000 [schema]", "must be at least 1, got 0 [schema]"} {
		if r.code != exitFindings || !strings.Contains(r.stdout, want) {
			t.Errorf("validate: exit %d, stdout %q; want 1 and %q", r.code, r.stdout, want)
		}
	}
}

// TestConfigDurationsPositive: eval.timeout: 0s was accepted and ran the
// gate with the 5m default; a zero proposalExpiry or staleAfter was taken
// too. A zero duration in the config is an error at its value, as a zero
// --lock-timeout is on the command line.
func TestConfigDurationsPositive(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "eval: {command: [\"./evals/run.sh\"], timeout: 0s}\npromotion: {proposalExpiry: 0d}\nstaleAfter: 0h\n")
	r := runBin(t, w.dir, "", nil, "validate", ".agent-ls.yaml")
	if n := strings.Count(r.stdout, "must be a positive duration"); r.code != exitFindings || n != 3 {
		t.Errorf("validate: exit %d, %d problems, stdout %q; want 1 and 3 problems", r.code, n, r.stdout)
	}
}

// TestMCPLogLevelHelpDefault: mcp --help said --log-level defaults to
// "warn", but with --http it is info (a service logs every request, as
// docs/SERVICE.md says): the help says both.
func TestMCPLogLevelHelpDefault(t *testing.T) {
	t.Parallel()
	r := runBin(t, t.TempDir(), "", nil, "mcp", "--help")
	if !strings.Contains(r.stdout, "(default warn; info with --http)") || strings.Contains(r.stdout, `(default "warn")`) {
		t.Errorf("mcp --help on --log-level:\n%s", r.stdout)
	}
}

// TestAgentFlagOnCompositionCommands: docs/COMMANDS.md says a command
// about one agent takes the agent file as an argument and that --agent FILE
// is the same; render, overlay, diff and bisect answered "unknown flag
// --agent". They take it now, with the same answer as the argument, and
// two different files are a usage error.
func TestAgentFlagOnCompositionCommands(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "--target", "background.projectContext.freeze", "deploys freeze on Fridays"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	for _, cmd := range [][]string{{"render"}, {"overlay"}, {"diff", "--from", "2020-01-01T00:00:00Z"}} {
		byArg := w.cli(append(append([]string{}, cmd...), "deploy.agent.yaml")...)
		byFlag := w.cli(append(append([]string{}, cmd...), "--agent", "deploy.agent.yaml")...)
		if byFlag.code != byArg.code || byFlag.stdout != byArg.stdout || byFlag.stderr != byArg.stderr || byArg.code != 0 {
			t.Errorf("%v --agent: exit %d, stdout %q, stderr %q; the argument gave %d, %q, %q", cmd, byFlag.code, byFlag.stdout, byFlag.stderr, byArg.code, byArg.stdout, byArg.stderr)
		}
		both := w.cli(append(append([]string{}, cmd...), "--agent", "deploy.agent.yaml", "code-review.agent.yaml")...)
		if both.code != exitUsage || !strings.Contains(both.stderr, "two agent files") {
			t.Errorf("%v with two files: exit %d, stderr %q; want 2 and 'two agent files'", cmd, both.code, both.stderr)
		}
		same := w.cli(append(append([]string{}, cmd...), "--agent", "deploy.agent.yaml", "deploy.agent.yaml")...)
		if same.code != 0 {
			t.Errorf("%v with the same file twice: exit %d, stderr %q", cmd, same.code, same.stderr)
		}
	}
	if r := w.cli("bisect", "--agent", "deploy.agent.yaml"); strings.Contains(r.stderr, "unknown flag") {
		t.Errorf("bisect --agent: %s", r.stderr)
	}
}

// TestEventsPollFlag: --poll goes with --follow (its help says so); without
// it the flag was taken and ignored. A bad value names the flag, not the
// config key (`--poll: storePoll "50ms": ...`).
func TestEventsPollFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "events", "--poll", "1s"}, "agent-ls memory events: --poll goes with --follow (run 'agent-ls memory events --help')\n"},
		{[]string{"memory", "events", "--follow", "--poll", "50ms"}, "agent-ls memory events: --poll \"50ms\": at least 100ms, or off\n"},
		{[]string{"memory", "events", "--follow", "--poll", "soon"}, "agent-ls memory events: --poll \"soon\": want a duration such as 1s or 500ms, or off\n"},
	} {
		r := runBin(t, dir, "", nil, tc.args...)
		if r.code != exitUsage || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestDecideReasonHelp: approve --help said its --reason is "why (required
// to reject)", reject's wording; approve's reason is optional, reject's
// required, and each help says its own.
func TestDecideReasonHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for cmd, want := range map[string]string{"approve": "why you approve (optional; kept with the decision)", "reject": "why you reject (required; kept with the decision)"} {
		r := runBin(t, dir, "", nil, cmd, "--help")
		if !strings.Contains(r.stdout, want) {
			t.Errorf("%s --help on --reason, want %q:\n%s", cmd, want, r.stdout)
		}
	}
}
