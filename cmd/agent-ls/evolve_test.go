package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// evoWorkspace is a temp workspace with the code-review and deploy agents,
// a .agent-ls.yaml (extra YAML appended) and a bbolt store.
type evoWorkspace struct {
	t    *testing.T
	dir  string
	db   string
	cfgs map[string]*schema.AgentConfig
}

func newEvoWorkspace(t *testing.T, extraYAML string) *evoWorkspace {
	t.Helper()
	dir := t.TempDir()
	w := &evoWorkspace{t: t, dir: dir, db: filepath.Join(dir, ".agent-memory", "memory.db"), cfgs: map[string]*schema.AgentConfig{}}
	for _, f := range []string{"code-review.agent.yaml", "deploy.agent.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, cfg, ps, err := schema.LoadAgent(f, data)
		if err != nil || cfg == nil {
			t.Fatalf("fixture %s: %v %v", f, err, ps)
		}
		w.cfgs[cfg.RoleTemplate.Name] = cfg
	}
	yaml := "scope:\n  project: atlas\n" + extraYAML
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// engine is the in-process engine of an agent over the same bbolt file (the
// agent's memory_save path), with the workspace's eval config if any.
func (w *evoWorkspace) engine(agent string, ev engine.Evaluator) *engine.Agent {
	st, err := bolt.Open(w.db, store.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { st.Close() })
	return engine.NewAgent(engine.AgentSpec{Store: st, Agent: w.cfgs[agent], Scope: map[string]string{"project": "atlas"}, Evaluator: ev})
}

func (w *evoWorkspace) save(eng *engine.Agent, content, target, conv string, payload string) engine.SaveResult {
	w.t.Helper()
	mt, err := schema.ParseTarget(target)
	if err != nil {
		w.t.Fatal(err)
	}
	req := engine.SaveRequest{Kind: schema.KindEpisode, Content: content, Target: &mt,
		Provenance: schema.Provenance{ConversationID: conv, RunID: "run-" + conv},
		Actor:      store.Actor{Kind: store.ActorAgent, Name: eng.AgentName()}}
	if payload != "" {
		req.Payload = json.RawMessage(payload)
	}
	res, err := eng.Save(context.Background(), req)
	if err != nil {
		w.t.Fatalf("save %q: %v", content, err)
	}
	return res
}

// cli runs the built binary in the workspace.
func (w *evoWorkspace) cli(args ...string) binResult {
	w.t.Helper()
	return runBin(w.t, w.dir, "", []string{"USER=ana"}, args...)
}

func (w *evoWorkspace) cliJSON(v any, args ...string) binResult {
	w.t.Helper()
	r := w.cli(append(args, "--format", "json")...)
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		w.t.Fatalf("%v: decode %q: %v (stderr %s)", args, r.stdout, err, r.stderr)
	}
	return r
}

// prompt renders the agent's composition from the store's promoted records.
func (w *evoWorkspace) prompt(agent string) string {
	w.t.Helper()
	st, err := bolt.Open(w.db, store.Options{ReadOnly: true})
	if err != nil {
		w.t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Promoted(context.Background(), map[string]string{"project": "atlas"}, agent)
	if err != nil {
		w.t.Fatal(err)
	}
	cfg, rep := engine.Apply(w.cfgs[agent], recs, engine.DefaultPolicy())
	return engine.Render(cfg, rep.Attribution).Text()
}

func wantCode(t *testing.T, r binResult, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
}

type learningsOut struct {
	Learnings []struct {
		Op, RecordID, Content, Target, Actor, ConversationID, Agent string
	} `json:"learnings"`
}

// Reference scenario 2: earned by recurrence (N=2).
func TestScenarioEarnedByRecurrence(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	eng := w.engine("code-reviewer", nil)
	lesson := "Flag deferred Close calls whose error is silently dropped"
	first := w.save(eng, lesson, "judgment.code-review.heuristics", "conv-1", "")
	if first.State != engine.StateCandidate {
		t.Fatalf("first: %+v", first)
	}
	id := first.Record.ID
	if strings.Contains(w.prompt("code-reviewer"), lesson) {
		t.Fatal("a candidate is in the composition")
	}
	r := w.cli("promote", id, "--actor", "agent:code-reviewer")
	wantCode(t, r, exitFindings, "agent promote of a 1/2 candidate")
	if !strings.Contains(r.stdout, "blocked") || !strings.Contains(r.stdout, "has 1") {
		t.Errorf("promote output: %s", r.stdout)
	}
	var ls learningsOut
	w.cliJSON(&ls, "learnings", "--since", "1h")
	if len(ls.Learnings) != 0 {
		t.Errorf("learnings before promotion: %+v", ls)
	}
	second := w.save(eng, "Flag deferred Close() calls whose error is dropped silently", "judgment.code-review.heuristics", "conv-2", "")
	if !second.Corroborated || second.State != engine.StatePromoted || second.Record.ID != id {
		t.Fatalf("second: %+v", second)
	}
	p := w.prompt("code-reviewer")
	if !strings.Contains(p, "- "+lesson) || !strings.Contains(p, "Check that every error is wrapped") {
		t.Errorf("the lesson did not join the code-review heuristics:\n%s", p)
	}
	w.cliJSON(&ls, "learnings", "--since", "1h")
	if len(ls.Learnings) != 1 || ls.Learnings[0].Op != "promote" || ls.Learnings[0].Content != lesson ||
		ls.Learnings[0].ConversationID != "conv-1" || ls.Learnings[0].Agent != "code-reviewer" {
		t.Errorf("learnings: %+v", ls)
	}
	r = w.cli("learnings", "--since", "1h")
	wantCode(t, r, 0, "learnings text")
	if !strings.Contains(r.stdout, "learned "+id) {
		t.Errorf("learnings text: %s", r.stdout)
	}
}

// Reference scenario 3: earned by eval — the suite goes from 7/9 to 9/9.
func TestScenarioEarnedByEval(t *testing.T) {
	t.Parallel()
	script, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "eval", "check-prompt.sh"))
	cases, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "eval", "deploy-cases.txt"))
	w := newEvoWorkspace(t, "eval:\n  command: [sh, "+script+", "+cases+"]\n  timeout: 30s\n")
	eng := w.engine("deploy-ops", nil)
	payload := `{"scenario":"A deploy's migration locks the orders table and checkout times out.",` +
		`"good":"Stop the rollout, kill the migration, and rerun it off-peak with a lock timeout.",` +
		`"bad":"Let the migration finish while checkout is down."}`
	res := w.save(eng, "Failed deploy: a migration locked the orders table", "example.deploy", "conv-9", payload)
	if res.State != engine.StateCandidate {
		t.Fatalf("save: %+v", res)
	}
	var o engine.Outcome
	r := w.cliJSON(&o, "promote", res.Record.ID, "--actor", "agent:deploy-ops")
	wantCode(t, r, 0, "eval-gated promote")
	if o.Status != engine.StatusPromoted || o.Evidence.Eval == nil || o.Evidence.Eval.BasePassed != 7 || o.Evidence.Eval.Passed != 9 ||
		o.Evidence.Eval.BaseFailed != 2 || o.Evidence.Eval.Failed != 0 {
		t.Fatalf("outcome %+v (eval %+v)", o, o.Evidence.Eval)
	}
	if !strings.Contains(w.prompt("deploy-ops"), "rerun it off-peak with a lock timeout") {
		t.Error("the example is not in the composition")
	}
}

// Reference scenario 5: a contradicting heuristic is blocked, gardening
// reports the conflict, and a supersede resolves it.
func TestScenarioContradiction(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	eng := w.engine("code-reviewer", nil)
	earned := "Ask for a benchmark when a change touches the request hot path"
	a := w.save(eng, earned, "judgment.code-review.heuristics", "conv-1", "")
	w.save(eng, earned, "judgment.code-review.heuristics", "conv-2", "")
	contra := "Don't ask for a benchmark when a change touches the request hot path"
	b := w.save(eng, contra, "judgment.code-review.heuristics", "conv-3", "")
	w.save(eng, contra, "judgment.code-review.heuristics", "conv-4", "")
	if len(b.Conflicts) != 1 || b.Conflicts[0].With != a.Record.ID {
		t.Fatalf("save of the contradiction: %+v", b)
	}
	r := w.cli("promote", b.Record.ID, "--actor", "human:ana")
	wantCode(t, r, exitFindings, "promote a contradicting candidate")
	if !strings.Contains(r.stdout, "blocked") || !strings.Contains(r.stdout, "contradicts promoted record "+a.Record.ID) {
		t.Errorf("promote output: %s", r.stdout)
	}
	var g struct {
		Reports []engine.HealthReport `json:"reports"`
	}
	w.cliJSON(&g, "garden", "--scope", "project=atlas,agent=code-reviewer")
	if len(g.Reports) != 1 || g.Reports[0].Count(engine.FindingConflict) != 1 {
		t.Fatalf("garden: %+v", g)
	}
	// Resolve: the human keeps the new lesson and retires the old one.
	o, err := eng.Supersede(context.Background(), b.Record.ID, a.Record.ID, store.Actor{Kind: store.ActorHuman, Name: "ana"})
	if err != nil || o.Status != engine.StatusPromoted {
		t.Fatalf("supersede: %+v %v", o, err)
	}
	p := w.prompt("code-reviewer")
	if strings.Contains(p, "- "+earned) || !strings.Contains(p, "- "+contra) {
		t.Errorf("after the supersede:\n%s", p)
	}
	var ls learningsOut
	w.cliJSON(&ls, "learnings", "--since", "1h")
	var ops []string
	for _, l := range ls.Learnings {
		ops = append(ops, l.Op+" "+l.RecordID)
	}
	want := "promote " + a.Record.ID + ",demote " + a.Record.ID + ",promote " + b.Record.ID
	if strings.Join(ops, ",") != want {
		t.Errorf("learnings %v, want %s", ops, want)
	}
}

// Reference scenario 7: one bad lesson stays a candidate forever.
func TestScenarioOneBadLesson(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	eng := w.engine("code-reviewer", nil)
	bad := "Retry flaky tests until they pass before reviewing"
	res := w.save(eng, bad, "judgment.code-review.heuristics", "conv-flaky", "")
	for i := 0; i < 5; i++ {
		w.save(eng, bad, "judgment.code-review.heuristics", "conv-flaky", "")
	}
	wantCode(t, w.cli("promote", res.Record.ID, "--actor", "agent:code-reviewer"), exitFindings, "agent promote")
	for i := 0; i < 2; i++ {
		var g struct {
			Reports []engine.HealthReport `json:"reports"`
		}
		wantCode(t, w.cliJSON(&g, "garden"), 0, "garden")
		if len(g.Reports) != 1 || len(g.Reports[0].Candidates) != 1 || g.Reports[0].Candidates[0].Have != 1 || g.Reports[0].Promoted != 0 {
			t.Fatalf("garden: %+v", g.Reports)
		}
	}
	if strings.Contains(w.prompt("code-reviewer"), bad) {
		t.Fatal("the flaky lesson reached the composition")
	}
	var ps struct {
		Proposals []proposalView `json:"proposals"`
	}
	w.cliJSON(&ps, "proposals")
	if len(ps.Proposals) != 0 {
		t.Errorf("proposals: %+v", ps)
	}
}

// Guarded tier through the CLI: proposal with diff, agent approve refused,
// human approve, agent demote opens a proposal, reject closes it.
func TestGuardedThroughCLI(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	eng := w.engine("deploy-ops", nil)
	trigger := "Ask before deleting any resource in prod"
	res := w.save(eng, trigger, "judgment.deploy.escalationTriggers", "conv-1", "")
	if res.State != engine.StatePending {
		t.Fatalf("save: %+v", res)
	}
	before := w.prompt("deploy-ops")
	var ps struct {
		Proposals []proposalView `json:"proposals"`
	}
	w.cliJSON(&ps, "proposals")
	if len(ps.Proposals) != 1 || ps.Proposals[0].ID != res.ProposalID || !strings.Contains(ps.Proposals[0].Diff, "+- "+trigger) {
		t.Fatalf("proposals: %+v", ps)
	}
	r := w.cli("proposals")
	wantCode(t, r, 0, "proposals text")
	if !strings.Contains(r.stdout, res.ProposalID) || !strings.Contains(r.stdout, "+- "+trigger) {
		t.Errorf("proposals text: %s", r.stdout)
	}
	r = w.cli("approve", res.ProposalID, "--actor", "agent:deploy-ops")
	wantCode(t, r, exitFindings, "agent approve")
	if !strings.HasPrefix(r.stderr, "agent-ls approve: refused:") || !strings.Contains(r.stderr, "only a human") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("agent approve stderr: %q", r.stderr)
	}
	if strings.Contains(w.prompt("deploy-ops"), trigger) {
		t.Fatal("a refused approval changed the composition")
	}
	r = w.cli("approve", res.ProposalID)
	wantCode(t, r, 0, "human approve (default actor human:$USER)")
	if !strings.Contains(r.stdout, "approved") || !strings.Contains(w.prompt("deploy-ops"), "- "+trigger) {
		t.Fatalf("approve: %s", r.stdout)
	}
	// The agent cannot unlearn it: a proposal opens, the line keeps rendering.
	var o engine.Outcome
	r = w.cliJSON(&o, "demote", res.Record.ID, "--reason", "slows me down", "--actor", "agent:deploy-ops")
	wantCode(t, r, 0, "agent demote")
	if o.Status != engine.StatusPending || !strings.Contains(w.prompt("deploy-ops"), "- "+trigger) {
		t.Fatalf("agent demote: %+v", o)
	}
	wantCode(t, w.cli("reject", o.ProposalID), exitUsage, "reject without --reason")
	wantCode(t, w.cli("reject", o.ProposalID, "--reason", "keep it"), 0, "reject")
	if !strings.Contains(w.prompt("deploy-ops"), "- "+trigger) {
		t.Fatal("a rejected demotion removed the line")
	}
	// A human demotes; the prompt is back byte-identical.
	wantCode(t, w.cli("demote", res.Record.ID, "--reason", "replaced by policy"), 0, "human demote")
	if got := w.prompt("deploy-ops"); got != before {
		t.Errorf("prompt after demotion differs from before")
	}
}

func TestEvolveCommandUsage(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	w.save(w.engine("code-reviewer", nil), "Prefer small diffs", "judgment.code-review.heuristics", "conv-1", "")
	for _, c := range []string{"promote", "demote", "proposals", "approve", "reject", "garden", "learnings"} {
		r := w.cli(c, "--help")
		wantCode(t, r, 0, c+" --help")
		if !strings.HasPrefix(r.stdout, "Usage: agent-ls "+c) {
			t.Errorf("%s --help: %s", c, r.stdout)
		}
	}
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"promote"}, exitUsage, "want ID"},
		{[]string{"promote", "01JZZZZZZZZZZZZZZZZZZZZZZZ"}, exitFindings, "agent-ls promote: no record 01JZZZZZZZZZZZZZZZZZZZZZZZ\n"},
		{[]string{"promote", "X", "--actor", "robot:x"}, exitUsage, "kind must be"},
		{[]string{"demote", "X"}, exitUsage, "--reason is required"},
		{[]string{"learnings", "--since", "yesterday"}, exitUsage, "--since"},
		{[]string{"garden", "--format", "yaml"}, exitUsage, "--format"},
		{[]string{"approve", "01JZZZZZZZZZZZZZZZZZZZZZZZ"}, exitFindings, "agent-ls approve: no proposal 01JZZZZZZZZZZZZZZZZZZZZZZZ\n"},
	}
	for _, tt := range tests {
		r := w.cli(tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d containing %q", tt.args, r.code, r.stderr, tt.code, tt.msg)
		}
	}
}

// newEngine finds the agent file in the workspace by the scope's agent key,
// so memory save through it gets the domain check.
func TestNewEngine(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	st, err := bolt.Open(w.db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := &env{cwd: w.dir, getenv: os.Getenv}
	eng, err := newEngine(e, st, map[string]string{"project": "atlas", "agent": "code-reviewer"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if eng.AgentName() != "code-reviewer" || eng.Scope()["project"] != "atlas" {
		t.Fatalf("engine for %q scope %v", eng.AgentName(), eng.Scope())
	}
	mt, _ := schema.ParseTarget("judgment.refunds.heuristics")
	res, err := eng.Save(context.Background(), engine.SaveRequest{Content: "Refund within 30 days", Target: &mt,
		Actor: store.Actor{Kind: store.ActorAgent, Name: "code-reviewer"}})
	if err != nil || res.Status != engine.SaveRefused {
		t.Fatalf("save into a domain the agent lacks: %+v %v", res, err)
	}
}

// Without a store file, queries answer empty and gates answer "no store";
// none of them creates the file.
func TestEvolveWithoutStore(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"proposals"}, 0, "no pending proposals"},
		{[]string{"learnings"}, 0, "no learnings since"},
		{[]string{"garden"}, 0, ""},
		{[]string{"promote", "01JZZZZZZZZZZZZZZZZZZZZZZZ"}, exitFindings, ""},
		{[]string{"approve", "01JZZZZZZZZZZZZZZZZZZZZZZZ"}, exitFindings, ""},
	} {
		r := w.cli(c.args...)
		if r.code != c.code || !strings.Contains(r.stdout, c.out) {
			t.Errorf("%v: exit %d stdout %q stderr %q", c.args, r.code, r.stdout, r.stderr)
		}
		if c.code != 0 && !strings.Contains(r.stderr, "no memory store at") {
			t.Errorf("%v: stderr %q", c.args, r.stderr)
		}
	}
	if _, err := os.Stat(w.db); !os.IsNotExist(err) {
		t.Errorf("a query created the store: %v", err)
	}
}

// The same flows through nothing but the built binary: memory save (through
// evolve), render, promote, proposals, approve, memory invalidate.
func TestEvolutionAllThroughCLI(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	render := func(file string) string {
		t.Helper()
		r := w.cli("render", file, "--scope", "project=atlas")
		wantCode(t, r, 0, "render")
		return r.stdout
	}
	save := func(agent, target, conv, content string) engine.SaveResult {
		t.Helper()
		var res engine.SaveResult
		r := w.cliJSON(&res, "memory", "save", "--scope", "project=atlas,agent="+agent, "--target", target,
			"--conversation", conv, "--actor", "agent:"+agent, "--content", content)
		wantCode(t, r, 0, "memory save")
		return res
	}
	// Scenario 2 through the CLI.
	lesson := "Flag deferred Close calls whose error is silently dropped"
	authored := render("code-review.agent.yaml")
	first := save("code-reviewer", "judgment.code-review.heuristics", "conv-1", lesson)
	if first.State != engine.StateCandidate || render("code-review.agent.yaml") != authored {
		t.Fatalf("first save: %+v", first)
	}
	second := save("code-reviewer", "judgment.code-review.heuristics", "conv-2", lesson)
	if !second.Corroborated || second.State != engine.StatePromoted {
		t.Fatalf("second save: %+v", second)
	}
	if !strings.Contains(render("code-review.agent.yaml"), "- "+lesson) {
		t.Fatal("the earned lesson is not rendered")
	}
	// Guarded escalation trigger: approve, then the agent's invalidate only proposes.
	before := render("deploy.agent.yaml")
	trig := save("deploy-ops", "judgment.deploy.escalationTriggers", "conv-3", "Ask before deleting any resource in prod")
	if trig.State != engine.StatePending || render("deploy.agent.yaml") != before {
		t.Fatalf("guarded save: %+v", trig)
	}
	wantCode(t, w.cli("approve", trig.ProposalID, "--actor", "agent:deploy-ops"), exitFindings, "agent approve")
	wantCode(t, w.cli("approve", trig.ProposalID, "--actor", "human:ana"), 0, "human approve")
	with := render("deploy.agent.yaml")
	if !strings.Contains(with, "- Ask before deleting any resource in prod") {
		t.Fatalf("approved trigger not rendered:\n%s", with)
	}
	r := w.cli("memory", "invalidate", trig.Record.ID, "--reason", "annoying", "--actor", "agent:deploy-ops")
	if render("deploy.agent.yaml") != with {
		t.Fatalf("an agent's invalidate removed a guarded line (exit %d: %s %s)", r.code, r.stdout, r.stderr)
	}
	var ps struct {
		Proposals []proposalView `json:"proposals"`
	}
	w.cliJSON(&ps, "proposals", "--scope", "project=atlas,agent=deploy-ops")
	if len(ps.Proposals) != 1 || ps.Proposals[0].Kind != "demote" || !strings.Contains(ps.Proposals[0].Diff, "-- Ask before deleting any resource in prod") {
		t.Fatalf("demotion proposal: %+v", ps)
	}
	wantCode(t, w.cli("approve", ps.Proposals[0].ID, "--actor", "human:ana"), 0, "approve the demotion")
	if got := render("deploy.agent.yaml"); got != before {
		t.Errorf("after the approved invalidation the prompt is not byte-identical to before:\n%s", got)
	}
}

// TestRetargetThroughCLI: `agent-ls memory retarget` moves a memory
// stranded on a removed judgment domain to an existing one (the editor's
// quick fix), with its evidence; refusals exit 1, bad targets 2.
func TestRetargetThroughCLI(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	eng := w.engine("deploy-ops", nil)
	lesson := "Page the database owner when replication lag passes a minute"
	first := w.save(eng, lesson, "judgment.incident.heuristics", "conv-1", "")
	if first.Record == nil {
		t.Fatalf("save: %+v", first)
	}
	id := first.Record.ID
	wantCode(t, w.cli("memory", "corroborate", id, "--conversation", "conv-2"), 0, "corroborate")
	// The author renames the domain: the memory no longer applies.
	path := filepath.Join(w.dir, "deploy.agent.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	renamed := []byte(strings.Replace(string(data), "- domain: incident\n", "- domain: incidents\n", 1))
	if err := os.WriteFile(path, renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, w.cfgs["deploy-ops"], _, err = schema.LoadAgent(path, renamed); err != nil || w.cfgs["deploy-ops"].JudgmentByDomain("incidents") < 0 {
		t.Fatalf("renamed agent: %v", err)
	}
	r := w.cli("memory", "retarget", id, "judgment.nope.heuristics")
	wantCode(t, r, exitFindings, "retarget to an unknown domain")
	if !strings.Contains(r.stderr, "no judgment domain \"nope\"") {
		t.Errorf("stderr: %s", r.stderr)
	}
	wantCode(t, w.cli("memory", "retarget", id, "judgment.incidents"), exitUsage, "retarget to a malformed target")
	var res engine.SaveResult
	r = w.cliJSON(&res, "memory", "retarget", id, "judgment.incidents.heuristics")
	wantCode(t, r, 0, "retarget")
	if res.SupersededID != id || res.Record == nil || res.Record.Target.String() != "judgment.incidents.heuristics" || res.State != engine.StatePromoted {
		t.Fatalf("retarget answered %+v", res)
	}
	if p := w.prompt("deploy-ops"); !strings.Contains(p, "- "+lesson) {
		t.Errorf("the retargeted lesson (two conversations) is not in the composition:\n%s", p)
	}
	var ents []store.LedgerEntry
	w.cliJSON(&ents, "memory", "ledger", "--record", res.Record.ID)
	var ops []string
	for _, e := range ents {
		ops = append(ops, string(e.Op)+" by "+e.Actor.String())
	}
	if got := strings.Join(ops, ", "); !strings.HasPrefix(got, "supersede by human:ana, corroborate by human:ana, promote") {
		t.Errorf("ledger of the new record: %s", got)
	}
	r = w.cli("memory", "retarget", id, "judgment.deploy.heuristics")
	wantCode(t, r, exitFindings, "retarget of the retired record")
	if !strings.Contains(r.stderr, "already invalidated") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestRetargetLockedRefused: retargeting a record to a locked slot is a
// refusal (exit 1, "refused: persona is locked: ..."), as saving there is,
// and as the engine's Retarget documents; it was a usage error (exit 2)
// worded by the target parser. Nothing is written.
func TestRetargetLockedRefused(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	var s struct {
		Record struct{ ID string } `json:"record"`
	}
	w.cliJSON(&s, "memory", "save", "--scope", "agent=deploy-ops", "--conversation", "c1", "--target", "background.projectContext.k", "a fact")
	save := w.cli("memory", "save", "--scope", "agent=deploy-ops", "--conversation", "c1", "--target", "persona", "a persona")
	for _, tgt := range []string{"persona", "mission", "manual.deploy.workflows"} {
		r := w.cli("memory", "retarget", s.Record.ID, tgt)
		if r.code != exitFindings || r.code != save.code || !strings.Contains(r.stderr, "refused: "+tgt+" is locked: ") {
			t.Errorf("retarget to %s: exit %d, stderr %q; want 1 and 'refused: %s is locked' (save there: exit %d, %q)", tgt, r.code, r.stderr, tgt, save.code, save.stderr)
		}
	}
	var js struct {
		Status string `json:"status"`
		Tier   string `json:"tier"`
	}
	if r := w.cliJSON(&js, "memory", "retarget", s.Record.ID, "persona"); r.code != exitFindings || js.Status != "refused" || js.Tier != "locked" {
		t.Errorf("retarget --format json to persona: exit %d, %+v", r.code, js)
	}
}

// TestRenderJSONRecallText: docs/RUNTIME.md's runtime without MCP reads
// `recall.text` from render --recall --format json, the block to deliver
// with the first message (MCP's compose has it); render's JSON had only
// the entries. It has the block's text now, the one the text format
// appends after the prompt.
func TestRenderJSONRecallText(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	if r := w.cli("memory", "save", "--scope", "agent=deploy-ops", "--conversation", "c1", "--target", "judgment.deploy.heuristics", "Pause the rollout when the queue depth doubles"); r.code != 0 {
		t.Fatalf("save: %d %s", r.code, r.stderr)
	}
	var out struct {
		Text   string `json:"text"`
		Recall *struct {
			Text    string            `json:"text"`
			Entries []json.RawMessage `json:"entries"`
		} `json:"recall"`
	}
	w.cliJSON(&out, "render", "deploy.agent.yaml", "--recall")
	text := w.cli("render", "deploy.agent.yaml", "--recall")
	if out.Recall == nil || len(out.Recall.Entries) != 1 || !strings.Contains(out.Recall.Text, "Pause the rollout when the queue depth doubles") ||
		text.stdout != out.Text+"\n"+out.Recall.Text {
		t.Errorf("render --recall --format json: recall %+v\ntext format:\n%s", out.Recall, text.stdout)
	}
}

// TestLintConfinedToTheActor: lint reads the store, so it acts as the
// actor (--actor, else the workspace's actor:) like every command that
// reads records. An agent actor linting another agent's file got that
// agent's records in the findings and the health report (its candidates'
// content, pending reviews, sizes), though render of the same file is
// refused; and lint DIR counted other agents' records as orphans. Now the
// other agent's file is linted without its memories (a note says so on
// stderr), its own file with its own and shared ones.
func TestLintConfinedToTheActor(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	for _, args := range [][]string{
		{"--scope", "agent=code-reviewer", "--target", "judgment.code-review.heuristics", "Ask for the secret reviewer rubric"},
		{"--scope", "agent=deploy-ops", "--target", "judgment.deploy.heuristics", "Watch the canary for ten minutes"},
		{"--scope", "agent=ghost", "an orphan record"},
	} {
		if r := w.cli(append([]string{"memory", "save", "--conversation", "c1"}, args...)...); r.code > 1 {
			t.Fatalf("save %v: %d %s", args, r.code, r.stderr)
		}
	}
	for _, args := range [][]string{{"lint", "."}, {"lint", "code-review.agent.yaml"}, {"lint", "--report", "code-review.agent.yaml"}} {
		human := w.cli(args...)
		if !strings.Contains(human.stdout, "secret reviewer rubric") && !strings.Contains(human.stdout, "1 candidate") && !strings.Contains(human.stdout, "candidates: 1") {
			t.Fatalf("%v as a human does not show code-reviewer's candidate:\n%s", args, human.stdout)
		}
		r := w.cli(append(args, "--actor", "agent:deploy-ops")...)
		if strings.Contains(r.stdout, "secret reviewer rubric") || strings.Contains(r.stdout, "ghost") ||
			strings.Contains(r.stdout, "candidates: 1 ") || !strings.Contains(r.stderr, `agent:deploy-ops cannot act on or read agent "code-reviewer"'s memories`) {
			t.Errorf("%v --actor agent:deploy-ops: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := w.cli("lint", "deploy.agent.yaml", "--actor", "agent:deploy-ops"); !strings.Contains(r.stdout, "Watch the canary for ten minutes") {
		t.Errorf("lint of its own file as agent:deploy-ops lacks its candidate:\n%s%s", r.stdout, r.stderr)
	}
}
