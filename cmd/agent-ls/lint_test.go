package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
	bbolt "go.etcd.io/bbolt"
	"golang.org/x/tools/txtar"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// lintWorkspace writes a lint fixture (testdata/lint/RULE/KIND.txtar) into
// a temporary workspace: the agent file, .agent-ls.yaml and, unless noStore,
// a real bbolt store holding the fixture's records, promotions and pending
// proposals. It returns the workspace directory.
func lintWorkspace(t *testing.T, rule, kind string, noStore bool) string {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join(repoRoot, "testdata/lint", rule, kind+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var facts struct {
		Promoted   []schema.MemoryRecord `json:"promoted"`
		Candidates []schema.MemoryRecord `json:"candidates"`
		Proposals  []store.Proposal      `json:"proposals"`
	}
	wroteConfig := false
	for _, f := range ar.Files {
		switch {
		case f.Name == "facts.json":
			if err := json.Unmarshal(f.Data, &facts); err != nil {
				t.Fatal(err)
			}
		case f.Name == "want":
		default:
			if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			wroteConfig = wroteConfig || f.Name == schema.WorkspaceConfigName
		}
	}
	if !wroteConfig {
		if err := os.WriteFile(filepath.Join(dir, schema.WorkspaceConfigName), []byte("recall: 4000\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if noStore {
		return dir
	}
	ctx := context.Background()
	st, err := bolt.Open(filepath.Join(dir, schema.DefaultStorePath), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	human := store.Actor{Kind: store.ActorHuman, Name: "test"}
	all := append(append([]schema.MemoryRecord{}, facts.Promoted...), facts.Candidates...)
	if len(all) > 0 {
		if err := st.Import(ctx, all, human); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range facts.Promoted {
		if _, err := st.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: human}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range facts.Proposals {
		if p.State != store.ProposalPending {
			continue
		}
		if _, err := st.Propose(ctx, store.ProposalRequest{Kind: p.Kind, RecordID: p.RecordID, Tier: p.Tier,
			RequestedBy: p.RequestedBy, TTL: time.Hour, Reason: p.Reason}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLintExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, rule, kind string
		noStore          bool
		args             []string // nil: support.agent.yaml
		code             int
		stdout           []string // substrings
		emptyOut         bool
		stderr           string
	}{
		{name: "ceiling error", rule: "ceiling-exceeded", kind: "positive", code: exitFindings,
			stdout: []string{"support.agent.yaml:1:1: error: the composition is ", " learned), over the composition ceiling of ", "[ceiling-exceeded]"}},
		{name: "ceiling clean", rule: "ceiling-exceeded", kind: "negative", code: exitOK, emptyOut: true},
		{name: "warning only", rule: "memory-conflict", kind: "positive", code: exitOK,
			stdout: []string{"support.agent.yaml:14:3: warning: memories m2 and m1 collide on background.projectContext.release_day: m2 renders (newer), m1 is shadowed [memory-conflict]"}},
		{name: "warnings over max", rule: "memory-conflict", kind: "positive", args: []string{"--max-warnings", "0", "support.agent.yaml"}, code: exitFindings},
		{name: "warnings at max", rule: "memory-conflict", kind: "positive", args: []string{"--max-warnings=1", "support.agent.yaml"}, code: exitOK},
		{name: "warnings without max", rule: "memory-conflict", kind: "positive", args: []string{"--max-warnings=-1", "support.agent.yaml"}, code: exitOK},
		// -7 meant no limit, as -1 does, silently.
		{name: "max below -1", rule: "memory-conflict", kind: "positive", args: []string{"--max-warnings", "-7", "support.agent.yaml"}, code: exitUsage,
			stderr: `agent-ls lint: --max-warnings -7: want a number of warnings, or -1 for no limit`},
		{name: "info only", rule: "authored-wins", kind: "positive", code: exitOK, stdout: []string{"support.agent.yaml:15:5: info: the authored key"}},
		{name: "pending review", rule: "pending-review", kind: "positive", code: exitOK,
			stdout: []string{"support.agent.yaml:9:7: info: pending promote of memory c1", "[pending-review]", "9:7: hint: candidate c1"}},
		{name: "schema error without store", rule: "schema", kind: "positive", noStore: true, code: exitFindings,
			stdout: []string{`support.agent.yaml:21:1: error: unknown property "colour" [schema]`}},
		{name: "missing store", rule: "authored-wins", kind: "positive", noStore: true, code: exitOK, emptyOut: true, stderr: "/.agent-memory/memory.db: the authored agent only\n"},
		{name: "directory", rule: "ceiling-exceeded", kind: "positive", args: []string{"."}, code: exitFindings, stdout: []string{"support.agent.yaml:1:1: error:"}},
		{name: "bad format", rule: "schema", kind: "negative", args: []string{"--format", "xml", "support.agent.yaml"}, code: exitUsage, stderr: "agent-ls lint: --format \"xml\": want text, json or sarif"},
		{name: "bad flag", rule: "schema", kind: "negative", args: []string{"--bogus"}, code: exitUsage, stderr: "agent-ls lint: unknown flag --bogus (run 'agent-ls lint --help')"},
		{name: "missing file", rule: "schema", kind: "negative", args: []string{"nope.agent.yaml"}, code: exitUsage, stderr: "nope.agent.yaml"},
		{name: "help", rule: "schema", kind: "negative", args: []string{"--help"}, code: exitOK, stdout: []string{"Usage: agent-ls lint", "-max-warnings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := lintWorkspace(t, tt.rule, tt.kind, tt.noStore)
			args := append([]string{"lint"}, tt.args...)
			if tt.args == nil {
				args = append(args, "support.agent.yaml")
			}
			r := runBin(t, dir, "", nil, args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if tt.emptyOut && r.stdout != "" {
				t.Errorf("stdout %q, want none", r.stdout)
			}
			if tt.stderr == "" && r.stderr != "" {
				t.Errorf("stderr %q", r.stderr)
			}
			if tt.stderr != "" && !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tt.stderr)
			}
		})
	}
}

// TestLintRepoTestdata lints the repository's own fixtures (with an empty
// store, so the result does not depend on a developer's memory).
func TestLintRepoTestdata(t *testing.T) {
	t.Parallel()
	none := filepath.Join(t.TempDir(), "none.db")
	r := runBin(t, repoRoot, "", nil, "lint", "--store", none, "testdata/agents")
	if r.code != exitOK || r.stdout != "" || r.stderr != "agent-ls lint: no memory store at "+none+": the authored agent only\n" {
		t.Errorf("testdata/agents: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, repoRoot, "", nil, "lint", "--store", none, "testdata/invalid")
	if r.code != exitFindings || !strings.Contains(r.stdout, "testdata/invalid/duplicate-domain.agent.yaml:7:15: error: duplicate judgment domain") {
		t.Errorf("testdata/invalid: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("lint created the store: %v", err)
	}
}

func TestLintSARIFAndJSON(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata/lint/sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{"memory-conflict", "pending-review", "schema", "ceiling-exceeded"} {
		dir := lintWorkspace(t, rule, "positive", false)
		r := runBin(t, dir, "", nil, "lint", "--format", "sarif", ".")
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("%s: sarif output: %v\n%s", rule, err, r.stdout)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: SARIF does not validate: %v", rule, err)
		}
		if !strings.Contains(r.stdout, `"ruleId": "`+rule+`"`) || !strings.Contains(r.stdout, `"uri": "support.agent.yaml"`) {
			t.Errorf("%s: sarif lacks the result:\n%s", rule, r.stdout)
		}
	}
	dir := lintWorkspace(t, "memory-conflict", "positive", false)
	r := runBin(t, dir, "", nil, "lint", "--format", "json", "support.agent.yaml")
	var out []struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Rule    string `json:"rule"`
		Pointer string `json:"pointer"`
		Fixes   []struct {
			Title   string            `json:"title"`
			Command string            `json:"command"`
			Args    map[string]string `json:"args"`
		} `json:"fixes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	if len(out) != 1 || out[0].Line != 14 || out[0].Column != 3 || out[0].Rule != "memory-conflict" || out[0].Pointer != "/background/projectContext/release_day" ||
		len(out[0].Fixes) != 2 || out[0].Fixes[0].Command != "agent-ls.supersede" || out[0].Fixes[0].Args["keepId"] != "m2" || out[0].Fixes[1].Args["keepId"] != "m1" {
		t.Errorf("json findings %+v", out)
	}
}

func TestLintDegradedStore(t *testing.T) {
	t.Parallel()
	t.Run("locked", func(t *testing.T) {
		t.Parallel()
		dir := lintWorkspace(t, "memory-conflict", "positive", false)
		db, err := bbolt.Open(filepath.Join(dir, schema.DefaultStorePath), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		r := runBin(t, dir, "", nil, "lint", "--lock-timeout", "50ms", "support.agent.yaml")
		if r.code != exitOK || r.stdout != "" || !strings.Contains(r.stderr, "agent-ls lint: warning: store .agent-memory/memory.db is locked") {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		// Schema errors still count while the store is locked.
		bad := filepath.Join(dir, "bad.agent.yaml")
		if err := os.WriteFile(bad, []byte("roleTemplate:\n  name: x\n  persona: {identity: y}\nmission: {objective: z}\ncolour: red\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r = runBin(t, dir, "", nil, "lint", "--lock-timeout", "50ms", ".")
		if r.code != exitFindings || !strings.Contains(r.stdout, "bad.agent.yaml:5:1: error:") || strings.Count(r.stderr, "warning: store") != 1 {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("corrupt", func(t *testing.T) {
		t.Parallel()
		dir := lintWorkspace(t, "memory-conflict", "positive", false)
		if err := os.WriteFile(filepath.Join(dir, schema.DefaultStorePath), bytes.Repeat([]byte("garbage!"), 1024), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runBin(t, dir, "", nil, "lint", "support.agent.yaml")
		if r.code != exitOK || r.stdout != "" || !strings.Contains(r.stderr, "agent-ls lint: warning: store .agent-memory/memory.db is") {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
}

func TestLintListRulesAndReport(t *testing.T) {
	t.Parallel()
	dir := lintWorkspace(t, "budget-spill", "positive", false)
	r := runBin(t, dir, "", nil, "lint", "--list-rules", "--format", "json")
	var rules []struct{ ID, Doc, DefaultSeverity string }
	if err := json.Unmarshal([]byte(r.stdout), &rules); err != nil || r.code != exitOK || len(rules) != len(lint.Rules()) {
		t.Fatalf("list-rules: %v %d %s", err, r.code, r.stdout)
	}
	r = runBin(t, dir, "", nil, "lint", "--list-rules")
	if r.code != exitOK || !strings.Contains(r.stdout, "candidate-progress  hint") {
		t.Errorf("list-rules text: %d\n%s", r.code, r.stdout)
	}
	r = runBin(t, dir, "", nil, "lint", "--report", "support.agent.yaml")
	for _, s := range []string{"support.agent.yaml (agent support-bot): composition 494/4000 chars (370 authored, 124 learned)", "2 promoted: 1 applied, 1 spilled", "background", "recall: 0 candidates"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("report lacks %q:\n%s", s, r.stdout)
		}
	}
	if r.code != exitOK {
		t.Errorf("report exit %d", r.code)
	}
	r = runBin(t, dir, "", nil, "lint", "--report", "--format", "json", "support.agent.yaml")
	var rep struct {
		Reports []struct {
			Agent  string `json:"agent"`
			Health struct {
				Spilled    int `json:"spilled"`
				Primitives []struct {
					Primitive string `json:"primitive"`
					Budget    int    `json:"budget"`
				} `json:"primitives"`
			} `json:"health"`
		} `json:"reports"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Reports) != 1 || rep.Reports[0].Agent != "support-bot" ||
		rep.Reports[0].Health.Spilled != 1 || rep.Reports[0].Health.Primitives[0].Budget != 60 {
		t.Errorf("report json: %v %+v\n%s", err, rep, r.stdout)
	}
}

// TestLintReportNamesConflicts (issue 21 item 7): --report names the
// records of each conflict, in text and JSON, not only their count.
func TestLintReportNamesConflicts(t *testing.T) {
	t.Parallel()
	dir := lintWorkspace(t, "memory-conflict", "positive", false)
	r := runBin(t, dir, "", nil, "lint", "--report", "support.agent.yaml")
	if !strings.Contains(r.stdout, "1 conflict;") || !strings.Contains(r.stdout, "m2 renders (newest), m1 is shadowed") {
		t.Errorf("report does not name the conflict's records:\n%s%s", r.stdout, r.stderr)
	}
	r = runBin(t, dir, "", nil, "lint", "--report", "--format", "json", "support.agent.yaml")
	var rep struct {
		Reports []struct {
			Health struct {
				ConflictRecords []struct{ Kind, Target, RecordID, With string } `json:"conflictRecords"`
			} `json:"health"`
		} `json:"reports"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Reports) != 1 {
		t.Fatalf("report json: %v\n%s", err, r.stdout)
	}
	cs := rep.Reports[0].Health.ConflictRecords
	if len(cs) != 1 || cs[0].Kind != "key-collision" || cs[0].RecordID != "m2" || cs[0].With != "m1" || cs[0].Target == "" {
		t.Errorf("conflictRecords %+v", cs)
	}
}

// TestLintCeilingCountsAuthoredText: issue 34's reproduction. With
// `ceiling: 50`, testdata/agents/support.agent.yaml composes to thousands
// of characters with no memory at all: lint fails (a hard rule), and the
// finding says how much is authored and how much learned.
func TestLintCeilingCountsAuthoredText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "agents", "support.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("support.agent.yaml", string(agent))
	write(".agent-ls.yaml", "ceiling: 50\n")
	r := runBin(t, dir, "", nil, "lint", "support.agent.yaml")
	if r.code != exitFindings || !strings.Contains(r.stdout, ": error: the composition is ") ||
		!strings.Contains(r.stdout, " learned), over the composition ceiling of 50 (.agent-ls.yaml ceiling) [ceiling-exceeded]") {
		t.Fatalf("exit %d, want %d with the ceiling finding\nstdout: %s\nstderr: %s", r.code, exitFindings, r.stdout, r.stderr)
	}
	r = runBin(t, dir, "", nil, "lint", "--format", "json", "support.agent.yaml")
	var out []struct {
		Rule    string `json:"rule"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("lint --format json: %v\n%s", err, r.stdout)
	}
	found := false
	for _, f := range out {
		if f.Rule == "ceiling-exceeded" && strings.Contains(f.Message, " authored, 0 learned)") {
			found = true
		}
	}
	if !found {
		t.Fatalf("json findings lack the ceiling's authored/learned split:\n%s", r.stdout)
	}
	write(".agent-ls.yaml", "ceiling: 100000\n")
	if r := runBin(t, dir, "", nil, "lint", "support.agent.yaml"); r.code != exitOK {
		t.Fatalf("ceiling 100000: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestLintReportInvalidFile: `lint --report` has no report for an agent
// file that does not load; it says why on stderr (the file's errors, as
// lint prints them) and exits 1, the valid files' reports still printed.
// It printed nothing for it and exited 0, so `lint --report broken.agent.yaml`
// was an empty success.
func TestLintReportInvalidFile(t *testing.T) {
	t.Parallel()
	dir := newEvoWorkspace(t, "").dir
	if err := os.WriteFile(filepath.Join(dir, "broken.agent.yaml"), []byte("roleTemplate:\n  name: broken\n  persona: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "broken.agent.yaml:3:3: error: invalid YAML: did not find expected node content [parse]\n"
	for _, tc := range []struct {
		args    []string
		reports int // valid files reported
		json    bool
	}{
		{[]string{"lint", "--report", "broken.agent.yaml"}, 0, false},
		{[]string{"lint", "--report"}, 2, false},
		{[]string{"lint", "--report", "--format", "json", "."}, 2, true},
	} {
		r := runBin(t, dir, "", []string{"USER=ana"}, tc.args...)
		if r.code != exitFindings || strings.Count(r.stderr, want) != 1 || strings.Contains(r.stdout, "broken") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tc.args, r.code, r.stderr, want)
		}
		if n := strings.Count(r.stdout, ".agent.yaml"); !tc.json && n != tc.reports {
			t.Errorf("%v: %d reports, want %d:\n%s", tc.args, n, tc.reports, r.stdout)
		}
		if tc.json {
			var doc struct {
				Reports []json.RawMessage `json:"reports"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Reports) != tc.reports {
				t.Errorf("%v: stdout is not the JSON of %d reports (%v):\n%s", tc.args, tc.reports, err, r.stdout)
			}
		}
	}
}
