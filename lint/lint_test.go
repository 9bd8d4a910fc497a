package lint_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

// fixture is one testdata/lint/RULE/{positive,negative}.txtar case.
type fixture struct {
	rule, kind string
	in         lint.Input
	want       []string
}

type factsFile struct {
	Now        string                `json:"now"`
	Promoted   []schema.MemoryRecord `json:"promoted"`
	Candidates []schema.MemoryRecord `json:"candidates"`
	Proposals  json.RawMessage       `json:"proposals"`
}

func loadFixture(t testing.TB, path string) fixture {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture{rule: filepath.Base(filepath.Dir(path)), kind: strings.TrimSuffix(filepath.Base(path), ".txtar")}
	for _, f := range ar.Files {
		switch {
		case strings.HasSuffix(f.Name, ".agent.yaml"):
			doc, cfg, _, err := schema.LoadAgent(f.Name, f.Data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			fx.in.Doc, fx.in.Config = doc, cfg
		case f.Name == schema.WorkspaceConfigName:
			ws, ps, err := schema.ParseWorkspaceConfig(f.Name, f.Data)
			if err != nil || len(ps) > 0 {
				t.Fatalf("%s: workspace: %v %v", path, err, ps)
			}
			fx.in.Settings = ws
		case f.Name == "facts.json":
			var ff factsFile
			if err := json.Unmarshal(f.Data, &ff); err != nil {
				t.Fatalf("%s: facts: %v", path, err)
			}
			fx.in.Facts.Now, fx.in.Facts.Promoted, fx.in.Facts.Candidates = ff.Now, ff.Promoted, ff.Candidates
			if err := json.Unmarshal(ff.Proposals, &fx.in.Facts.Proposals); err != nil {
				t.Fatalf("%s: proposals: %v", path, err)
			}
		case f.Name == "want":
			for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				if l != "" {
					fx.want = append(fx.want, l)
				}
			}
		}
	}
	if fx.in.Doc == nil {
		t.Fatalf("%s: no agent file", path)
	}
	return fx
}

func brief(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%d:%d %s %s", f.Range.Start.Line+1, f.Range.Start.Character+1, f.Severity, f.Rule))
	}
	return out
}

func fixtures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../testdata/lint/*/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("fixtures: %v %v", paths, err)
	}
	return paths
}

// TestFixtures checks every rule's positive and negative fixture: all
// findings land on the exact expected line:col, the positive one has the
// rule's finding and the negative one does not.
func TestFixtures(t *testing.T) {
	t.Parallel()
	for _, p := range fixtures(t) {
		t.Run(strings.TrimPrefix(p, "../testdata/lint/"), func(t *testing.T) {
			t.Parallel()
			fx := loadFixture(t, p)
			got := lint.Run(fx.in)
			if g, w := strings.Join(brief(got), "\n"), strings.Join(fx.want, "\n"); g != w {
				t.Errorf("findings:\n%s\nwant:\n%s\nmessages: %v", g, w, messages(got))
			}
			n := 0
			for _, f := range got {
				if f.Rule == fx.rule {
					n++
				}
			}
			switch fx.kind {
			case "positive":
				if n == 0 {
					t.Errorf("positive fixture has no %s finding", fx.rule)
				}
			case "negative":
				if n != 0 {
					t.Errorf("negative fixture has %d %s findings", n, fx.rule)
				}
			default:
				t.Fatalf("fixture kind %q", fx.kind)
			}
		})
	}
}

func messages(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+": "+f.Message)
	}
	return out
}

// TestEveryRuleHasFixtures: each documented rule has both fixtures.
func TestEveryRuleHasFixtures(t *testing.T) {
	t.Parallel()
	for _, r := range lint.Rules() {
		if r.Doc == "" || strings.Contains(r.Doc, "\n") {
			t.Errorf("%s: doc %q, want one line", r.ID, r.Doc)
		}
		if r.Workspace {
			continue // tested on a workspace: TestOrphans, cmd/agent-ls TestOrphanAgents
		}
		for _, k := range []string{"positive", "negative"} {
			if _, err := os.Stat(filepath.Join("../testdata/lint", r.ID, k+".txtar")); err != nil {
				t.Errorf("%s: %v", r.ID, err)
			}
		}
	}
}

func fixtureInput(t testing.TB, rule, kind string) lint.Input {
	t.Helper()
	return loadFixture(t, filepath.Join("../testdata/lint", rule, kind+".txtar")).in
}

func only(fs []lint.Finding, rule string) []lint.Finding {
	var out []lint.Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func TestMessagesAndFixes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule     string
		contains []string
		fixes    []string // title: command args-json
	}{
		{lint.RuleBudgetSpill, []string{"1 memory over the 60-character background budget spills to recall: m1"}, nil},
		{lint.RuleCeilingExceeded, []string{"over the composition ceiling of 40"}, nil},
		{lint.RuleAuthoredWins, []string{`authored key "deploy_window" wins over memory m1`}, nil},
		{lint.RuleMemoryConflict, []string{"m2 renders (newer), m1 is shadowed"}, []string{
			`Keep m2 (supersede m1): agent-ls.supersede {"keepId":"m2","dropId":"m1"}`,
			`Keep m1 (supersede m2): agent-ls.supersede {"keepId":"m1","dropId":"m2"}`}},
		{lint.RuleUnknownDomain, []string{`domain "billing"`, "domains: refunds"}, nil},
		{lint.RuleMissingPayload, []string{"m1 (example.refunds)", "scenario and good required"}, nil},
		{lint.RuleContradiction, []string{"candidate c1", "contradicts this authored constraint"}, nil},
		{lint.RulePendingReview, []string{"pending promote of memory c1", "proposal p1"}, []string{
			`Approve promote of c1: agent-ls.approve {"proposalId":"p1"}`,
			`Reject promote of c1: agent-ls.reject {"proposalId":"p1"}`}},
		{lint.RuleStaleState, []string{`currentState "incident" (memory m1)`, "staleAfter (30d)"}, nil},
		{lint.RuleNearDuplicate, []string{"candidate c2 near-duplicates candidate c1"}, nil},
		{lint.RuleCandidateProgress, []string{"1 of 2 conversations toward promotion"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()
			fs := only(lint.Run(fixtureInput(t, tt.rule, "positive")), tt.rule)
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1: %v", len(fs), messages(fs))
			}
			for _, s := range tt.contains {
				if !strings.Contains(fs[0].Message, s) {
					t.Errorf("message %q lacks %q", fs[0].Message, s)
				}
			}
			var fixes []string
			for _, fx := range fs[0].Fixes {
				args, _ := json.Marshal(fx.Args)
				fixes = append(fixes, fx.Title+": "+fx.Command+" "+string(args))
			}
			if strings.Join(fixes, "\n") != strings.Join(tt.fixes, "\n") {
				t.Errorf("fixes:\n%s\nwant:\n%s", strings.Join(fixes, "\n"), strings.Join(tt.fixes, "\n"))
			}
		})
	}
}

func TestRuleOverrides(t *testing.T) {
	t.Parallel()
	tests := []struct {
		setting string
		want    []string
	}{
		{"", []string{"15:5 info authored-wins"}},
		{"off", nil},
		{"error", []string{"15:5 error authored-wins"}},
		{"Warning", []string{"15:5 warning authored-wins"}},
		{"bogus", []string{"15:5 info authored-wins"}},
	}
	for _, tt := range tests {
		in := fixtureInput(t, lint.RuleAuthoredWins, "positive")
		if tt.setting != "" {
			in.Settings.Lint.Rules = map[string]string{lint.RuleAuthoredWins: tt.setting}
		}
		if got := brief(lint.Run(in)); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("setting %q: %v, want %v", tt.setting, got, tt.want)
		}
	}
}

func TestSuppression(t *testing.T) {
	t.Parallel()
	base := fixtureInput(t, lint.RuleAuthoredWins, "positive")
	src := string(base.Doc.Source())
	tests := []struct {
		name, src string
		want      int
	}{
		{"none", src, 1},
		{"line above", strings.Replace(src, "    deploy_window:", "    # agent-ls: ignore authored-wins the team owns this\n    deploy_window:", 1), 0},
		{"same line", strings.Replace(src, "deploy_window: Tuesdays", "deploy_window: Tuesdays # agent-ls: ignore authored-wins reason", 1), 0},
		{"other rule", strings.Replace(src, "deploy_window: Tuesdays", "deploy_window: Tuesdays # agent-ls: ignore stale-state reason", 1), 1},
		{"two lines above", strings.Replace(src, "  projectContext:", "  # agent-ls: ignore authored-wins reason\n  projectContext:", 1), 1},
	}
	for _, tt := range tests {
		doc, cfg, _, err := schema.LoadAgent("support.agent.yaml", []byte(tt.src))
		if err != nil {
			t.Fatal(err)
		}
		in := base
		in.Doc, in.Config = doc, cfg
		if got := len(only(lint.Run(in), lint.RuleAuthoredWins)); got != tt.want {
			t.Errorf("%s: %d findings, want %d", tt.name, got, tt.want)
		}
	}
}

func TestSchemaOnlyAndNil(t *testing.T) {
	t.Parallel()
	if got := lint.Run(lint.Input{}); got != nil {
		t.Errorf("nil doc: %v", got)
	}
	in := fixtureInput(t, lint.RuleSchema, "positive")
	if in.Config != nil {
		t.Fatal("schema fixture decoded")
	}
	// Store facts of a file with schema errors are ignored: schema only.
	in.Facts = fixtureInput(t, lint.RuleCandidateProgress, "positive").Facts
	if got := brief(lint.Run(in)); strings.Join(got, ",") != "21:1 error schema" {
		t.Errorf("schema-only: %v", got)
	}
	in.Settings.Lint.Rules = map[string]string{"schema": "off"}
	if got := lint.Run(in); len(got) != 0 {
		t.Errorf("schema off: %v", got)
	}
}

// TestDeterministic: the same input gives the same findings, sorted.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	for _, p := range fixtures(t) {
		in := loadFixture(t, p).in
		a, _ := json.Marshal(lint.Run(in))
		for range 5 {
			b, _ := json.Marshal(lint.Run(in))
			if string(a) != string(b) {
				t.Fatalf("%s: nondeterministic\n%s\n%s", p, a, b)
			}
		}
	}
}

func TestProblems(t *testing.T) {
	t.Parallel()
	fs := lint.Run(fixtureInput(t, lint.RuleMemoryConflict, "positive"))
	ps := lint.Problems(fs)
	if len(ps) != len(fs) || ps[0].Rule != fs[0].Rule || ps[0].Range != fs[0].Range || ps[0].Message != fs[0].Message {
		t.Errorf("Problems: %+v from %+v", ps, fs)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	h := lint.HealthOf(fixtureInput(t, lint.RuleBudgetSpill, "positive"))
	bg := h.Primitives[0]
	if bg.Primitive != "background" || bg.Records != 1 || bg.Budget != 60 || bg.Chars == 0 {
		t.Errorf("background size %+v", bg)
	}
	if h.Spilled != 1 || h.Recall.Spilled != 1 || h.Promoted != 2 {
		t.Errorf("health %+v", h)
	}
	h = lint.HealthOf(fixtureInput(t, lint.RuleStaleState, "positive"))
	if strings.Join(h.Stale, ",") != "m1" {
		t.Errorf("stale %v", h.Stale)
	}
	h = lint.HealthOf(fixtureInput(t, lint.RuleMemoryConflict, "positive"))
	if h.Conflicts != 1 {
		t.Errorf("conflicts %d", h.Conflicts)
	}
	h = lint.HealthOf(fixtureInput(t, lint.RulePendingReview, "positive"))
	if h.PendingReviews != 1 || len(h.Candidates) != 1 || h.Candidates[0].Tier != schema.TierGuarded || h.Recall.NeverCorroborated != 1 {
		t.Errorf("health %+v", h)
	}
	h = lint.HealthOf(fixtureInput(t, lint.RuleCandidateProgress, "positive"))
	if c := h.Candidates[0]; c.Have != 1 || c.Need != 2 {
		t.Errorf("candidate %+v", c)
	}
}

// TestDone: a run whose Done is closed stops before the rules (its
// findings are dropped by the caller); an open Done changes nothing.
func TestDone(t *testing.T) {
	t.Parallel()
	for _, rule := range []string{lint.RuleContradiction, lint.RuleNearDuplicate, lint.RuleAuthoredWins} {
		t.Run(rule, func(t *testing.T) {
			t.Parallel()
			in := fixtureInput(t, rule, "positive")
			want := brief(lint.Run(in))
			if len(only(lint.Run(in), rule)) == 0 {
				t.Fatalf("fixture has no %s finding", rule)
			}
			open := make(chan struct{})
			in.Done = open
			if got := brief(lint.Run(in)); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("open Done: %v, want %v", got, want)
			}
			closed := make(chan struct{})
			close(closed)
			in.Done = closed
			if got := lint.Run(in); len(got) != 0 {
				t.Errorf("closed Done: %v, want no findings", brief(got))
			}
		})
	}
}

// TestNearDuplicateGroups: near-duplicate pairs of one slot join into one
// finding per group (a slot with n restatements of one lesson is not
// n(n-1)/2 findings); a pair keeps its pair message; a message names at most
// ten records and counts the rest, the related information lists them all.
func TestNearDuplicateGroups(t *testing.T) {
	t.Parallel()
	in := fixtureInput(t, lint.RuleNearDuplicate, "positive")
	base := in.Facts.Candidates[0]
	cand := func(id, content, day string) schema.MemoryRecord {
		r := base
		r.ID, r.Content = id, content
		r.Provenance.ConversationID = "conv-" + id
		r.CreatedAt, r.UpdatedAt = "2026-11-"+day+"T10:00:00.000Z", "2026-11-"+day+"T10:00:00.000Z"
		return r
	}
	in.Facts.Candidates = nil
	for i := range 12 {
		in.Facts.Candidates = append(in.Facts.Candidates, cand(fmt.Sprintf("g%02d", i), "Ask the customer for the order number before a refund", fmt.Sprintf("%02d", i+1)))
	}
	in.Facts.Candidates = append(in.Facts.Candidates,
		cand("p1", "Escalate chargebacks from enterprise accounts to finance", "20"),
		cand("p2", "Escalate chargebacks from enterprise accounts to the finance team", "21"),
		cand("x1", "Quote the refund policy link in every reply", "22"))
	fs := only(lint.Run(in), lint.RuleNearDuplicate)
	if len(fs) != 2 {
		t.Fatalf("%d findings, want one for the group of 12 and one for the pair: %v", len(fs), messages(fs))
	}
	group, pair := fs[0], fs[1]
	if !strings.HasPrefix(group.Message, "12 memories on judgment.refunds.heuristics restate one lesson") ||
		!strings.Contains(group.Message, "newest first: g11, g10, g09, g08, g07, g06, g05, g04, g03, g02 and 2 more") {
		t.Errorf("group message %q", group.Message)
	}
	if len(group.Related) != 12 || group.Related[0].RecordID != "g11" || group.Related[11].RecordID != "g00" {
		t.Errorf("group related %v, want all 12, newest first", group.Related)
	}
	if !strings.HasPrefix(pair.Message, "candidate p2 near-duplicates candidate p1") {
		t.Errorf("pair message %q", pair.Message)
	}
}

// TestBudgetSpillListsTenIDs: a spill of many memories names ten of them in
// the message and the count of the rest; the related information has all.
func TestBudgetSpillListsTenIDs(t *testing.T) {
	t.Parallel()
	in := fixtureInput(t, lint.RuleBudgetSpill, "positive")
	base := in.Facts.Promoted[0]
	in.Facts.Promoted = nil
	for i := range 15 {
		r := base
		r.ID = fmt.Sprintf("m%02d", i)
		r.Content = fmt.Sprintf("Background fact number %d that takes up room", i)
		tgt := *base.Target
		tgt.Key = fmt.Sprintf("fact%02d", i)
		r.Target = &tgt
		in.Facts.Promoted = append(in.Facts.Promoted, r)
	}
	fs := only(lint.Run(in), lint.RuleBudgetSpill)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), messages(fs))
	}
	if !strings.HasSuffix(fs[0].Message, " and 4 more") || strings.Count(fs[0].Message, ", ") != 9 {
		t.Errorf("message %q, want ten ids and 'and 4 more'", fs[0].Message)
	}
	if len(fs[0].Related) != 14 {
		t.Errorf("%d related, want the 14 spilled", len(fs[0].Related))
	}
}

// TestCandidateProgressGroups: up to ten candidates of one target are a
// finding each; more are one finding counting them by state, naming ten
// and listing all in its related information.
func TestCandidateProgressGroups(t *testing.T) {
	t.Parallel()
	in := fixtureInput(t, lint.RuleCandidateProgress, "positive")
	base := in.Facts.Candidates[0]
	mk := func(n int, prefix string) []schema.MemoryRecord {
		var out []schema.MemoryRecord
		for i := range n {
			r := base
			r.ID = fmt.Sprintf("%s%02d", prefix, i)
			r.Content = fmt.Sprintf("Distinct lesson number %d about %s", i, prefix)
			out = append(out, r)
		}
		return out
	}
	for _, tt := range []struct {
		n, findings int
	}{{10, 10}, {25, 1}} {
		in.Facts.Candidates = mk(tt.n, "c")
		fs := only(lint.Run(in), lint.RuleCandidateProgress)
		if len(fs) != tt.findings {
			t.Fatalf("%d candidates: %d findings, want %d: %v", tt.n, len(fs), tt.findings, messages(fs))
		}
		if tt.findings == 1 {
			m := fs[0].Message
			if !strings.HasPrefix(m, fmt.Sprintf("25 candidates on %s", base.Target)) || !strings.Contains(m, "25 1 of 2 conversations toward promotion") ||
				!strings.HasSuffix(m, "and 15 more") || len(fs[0].Related) != 25 {
				t.Errorf("grouped finding %q with %d related", m, len(fs[0].Related))
			}
		}
	}
}

// TestRuleIDsStatedOnce: the rule table is exactly schema.LintRuleIDs, in
// order: the workspace config's lint.rules is checked against that list,
// so a rule missing from it would be refused in the config, and an id in it
// without a rule accepted for nothing.
func TestRuleIDsStatedOnce(t *testing.T) {
	t.Parallel()
	var got []string
	for _, r := range lint.Rules() {
		got = append(got, r.ID)
	}
	if want := schema.LintRuleIDs(); !slices.Equal(got, want) {
		t.Errorf("lint's rules %v, schema.LintRuleIDs %v", got, want)
	}
}
