package compose_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/memstore"
)

const deployAgent = "../testdata/agents/deploy.agent.yaml"

// clock is a manual clock: every reading advances it by a second, so each
// store operation happens at a distinct time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// backends opens each real store on the same clock.
var backends = []struct {
	name string
	open func(t *testing.T, now func() time.Time) store.Store
}{
	{"memstore", func(t *testing.T, now func() time.Time) store.Store {
		return memstore.New(store.Options{Now: now})
	}},
	{"bolt", func(t *testing.T, now func() time.Time) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "memory.db"), store.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

var (
	agentActor = store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}
	human      = store.Actor{Kind: store.ActorHuman, Name: "ana"}
	system     = store.Actor{Kind: store.ActorSystem, Name: "evolve"}
	scope      = map[string]string{"user": "u1"}
)

type env struct {
	t   *testing.T
	ctx context.Context
	s   store.Store
	clk *clock
}

func forEachBackend(t *testing.T, f func(t *testing.T, e *env)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			clk := newClock()
			s := b.open(t, clk.Now)
			t.Cleanup(func() { s.Close() })
			f(t, &env{t: t, ctx: context.Background(), s: s, clk: clk})
		})
	}
}

func (e *env) write(target, content, supersedes string) schema.MemoryRecord {
	e.t.Helper()
	tg, err := schema.ParseTarget(target)
	if err != nil {
		e.t.Fatal(err)
	}
	sc := map[string]string{"user": "u1", "agent": "deploy-ops"}
	recs, err := e.s.Write(e.ctx, []store.WriteRequest{{
		Scope: sc, Kind: schema.KindFact, Content: content, Target: &tg, Supersedes: supersedes,
		Provenance: schema.Provenance{ConversationID: "conv-" + content[:3], RunID: "run-1"},
	}}, agentActor)
	if err != nil {
		e.t.Fatalf("write %q: %v", content, err)
	}
	return recs[0]
}

func (e *env) promote(id string, tier schema.Tier) {
	e.t.Helper()
	if _, err := e.s.Promote(e.ctx, id, store.PromoteRequest{Tier: tier, Actor: system}); err != nil {
		e.t.Fatalf("promote %s: %v", id, err)
	}
}

func (e *env) instantiate(at string, p overlay.Policy) *compose.Result {
	e.t.Helper()
	res, err := compose.Instantiate(e.ctx, compose.Request{AgentFile: deployAgent, Store: e.s, Scope: scope, At: at, Policy: p, Now: e.clk.Now})
	if err != nil {
		e.t.Fatalf("instantiate (at %q): %v", at, err)
	}
	return res
}

func (e *env) mark() string { return schema.FormatTime(e.clk.Now()) }

// Scenario 1: an auto-tier fact lands beside authored entries; a correction
// supersedes it; replaying the ledger at the earlier time gives the earlier
// prompt byte for byte.
func TestScenarioSupersede(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		p := overlay.DefaultPolicy()
		authored := e.instantiate("", p).Prompt.Text()
		if strings.Contains(authored, "deploy_window") {
			t.Fatalf("the authored deploy agent already has a deploy_window")
		}
		tue := e.write("background.projectContext.deploy_window", "Tuesdays after 14:00 ET", "")
		e.promote(tue.ID, schema.TierAuto)
		r1 := e.instantiate("", p)
		line := "- **deploy_window**: Tuesdays after 14:00 ET"
		if !strings.Contains(r1.Prompt.Text(), "\n- **pipeline**: Argo CD with a canary stage\n") || !strings.Contains(r1.Prompt.Text(), line+"\n") {
			t.Fatalf("Tuesday fact not beside the authored entries:\n%s", r1.Prompt.Text())
		}
		if f := fragment(r1.Prompt, line); f == nil || f.Source != overlay.SourceMemory || !slices.Equal(f.MemoryIDs, []string{tue.ID}) {
			t.Fatalf("Tuesday fragment = %+v, want memory [%s]", f, tue.ID)
		}
		tTue := e.mark()

		thu := e.write("background.projectContext.deploy_window", "Thursdays after 14:00 ET", tue.ID)
		e.promote(thu.ID, schema.TierAuto)
		r2 := e.instantiate("", p)
		text := r2.Prompt.Text()
		if !strings.Contains(text, "- **deploy_window**: Thursdays after 14:00 ET\n") || strings.Contains(text, "Tuesdays") {
			t.Fatalf("after the supersede:\n%s", text)
		}
		if got := r2.Report.IDs(overlay.StatusApplied); !slices.Equal(got, []string{thu.ID}) || len(r2.Report.Conflicts) != 0 {
			t.Fatalf("applied %v conflicts %v, want only %s", got, r2.Report.Conflicts, thu.ID)
		}

		// Point in time: the ledger at tTue reproduces r1 byte for byte.
		past := e.instantiate(tTue, p)
		if past.Prompt.Text() != r1.Prompt.Text() || past.Prompt.Annotated() != r1.Prompt.Annotated() {
			t.Fatalf("--at %s:\n%s\nwant:\n%s", tTue, past.Prompt.Annotated(), r1.Prompt.Annotated())
		}
		if past.At != tTue {
			t.Errorf("Result.At = %q, want %q", past.At, tTue)
		}
	})
}

// Scenario 4: a guarded escalation trigger renders only after a human
// approves it; invalidating it brings the prompt back byte-identical.
func TestScenarioGuardedRollback(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		p := overlay.DefaultPolicy()
		before := e.instantiate("", p).Prompt.Text()
		rec := e.write("judgment.deploy.escalationTriggers", "Ask before deleting any resource in prod", "")
		cand := e.instantiate("", p)
		if cand.Prompt.Text() != before {
			t.Fatalf("a candidate changed the composition")
		}
		block, err := cand.Recall(e.ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(block.Entries) != 1 || block.Entries[0].ID != rec.ID || block.Entries[0].Reason != overlay.RecallCandidate {
			t.Fatalf("recall = %+v, want the candidate in the reserved slice", block)
		}
		prop, err := e.s.Propose(e.ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: rec.ID, Tier: schema.TierGuarded, RequestedBy: agentActor, TTL: 72 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.instantiate("", p).Prompt.Text(); got != before {
			t.Fatalf("a pending proposal changed the composition")
		}
		if _, err := e.s.Approve(e.ctx, prop.ID, human, "ok"); err != nil {
			t.Fatal(err)
		}
		approved := e.instantiate("", p)
		want := "- A rollback fails\n- Error rates stay above 2% after a rollback\n- Ask before deleting any resource in prod\n- Customer data may be exposed\n"
		if !strings.Contains(approved.Prompt.Text(), "### Escalate When\n"+want) {
			t.Fatalf("approved trigger not under Escalate When:\n%s", approved.Prompt.Text())
		}
		tApproved := e.mark()

		if err := e.s.Invalidate(e.ctx, rec.ID, "rolled back", human); err != nil {
			t.Fatal(err)
		}
		after := e.instantiate("", p).Prompt.Text()
		if after != before {
			t.Fatalf("rollback is not byte-identical:\n%s\nwant:\n%s", after, before)
		}
		if got := e.instantiate(tApproved, p).Prompt.Text(); got != approved.Prompt.Text() {
			t.Fatalf("--at the approved time:\n%s\nwant:\n%s", got, approved.Prompt.Text())
		}
	})
}

// Scenario 6: 23 facts against a 1000-character background budget: those
// that do not fit spill to recall, exactly the reported ones.
func TestScenarioBloat(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		p := overlay.DefaultPolicy()
		p.Budgets.Background = 1000
		var recs []schema.MemoryRecord
		for i := range 23 {
			content := fmt.Sprintf("Service %02d runs on node pool %s", i, strings.Repeat("x", 10+i*3))
			r := e.write(fmt.Sprintf("background.currentState.service_%02d", i), content, "")
			e.promote(r.ID, schema.TierAuto)
			recs = append(recs, r)
		}
		res := e.instantiate("", p)
		spilled := res.Report.IDs(overlay.StatusSpilled)
		if len(spilled) == 0 || res.Report.Totals.Applied+len(spilled) != 23 {
			t.Fatalf("applied %d spilled %d of 23", res.Report.Totals.Applied, len(spilled))
		}
		if got := res.Report.Totals.CharsPerPrimitive["background"]; got > 1000 {
			t.Fatalf("background chars %d over 1000", got)
		}
		text := res.Prompt.Text()
		var missing []string
		for _, r := range recs {
			if !strings.Contains(text, r.Content+"\n") {
				missing = append(missing, r.ID)
			}
		}
		slices.Sort(missing)
		sortedSpilled := slices.Sorted(slices.Values(spilled))
		if !slices.Equal(missing, sortedSpilled) {
			t.Fatalf("records missing from the prompt %v, reported spilled %v", missing, sortedSpilled)
		}
		if !strings.Contains(text, overlay.MarkerText(len(spilled))+"\n") {
			t.Fatalf("no marker for %d spilled records:\n%s", len(spilled), text)
		}
		block, err := res.Recall(e.ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var recalled []string
		for _, en := range block.Entries {
			if en.Reason == overlay.RecallSpilled {
				recalled = append(recalled, en.ID)
			}
		}
		slices.Sort(recalled)
		if !slices.Equal(recalled, sortedSpilled) || block.Omitted != 0 {
			t.Fatalf("recall spilled %v (omitted %d), want %v", recalled, block.Omitted, sortedSpilled)
		}
	})
}

func TestInstantiateSummaryAndScope(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		mine := e.write("background.teamContext.pager", "PagerDuty atlas-primary", "")
		e.promote(mine.ID, schema.TierAuto)
		tg, _ := schema.ParseTarget("background.teamContext.other")
		others, err := e.s.Write(e.ctx, []store.WriteRequest{
			{Scope: map[string]string{"user": "u1", "agent": "someone-else"}, Kind: schema.KindFact, Content: "not mine", Target: &tg},
			{Scope: map[string]string{"user": "u2"}, Kind: schema.KindFact, Content: "other user", Target: &tg},
		}, agentActor)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range others {
			e.promote(r.ID, schema.TierAuto)
		}
		res, err := compose.Instantiate(e.ctx, compose.Request{AgentFile: deployAgent, Store: e.s, Scope: scope, Policy: overlay.DefaultPolicy(), Now: e.clk.Now, Summarize: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) != 1 || res.Records[0].ID != mine.ID {
			t.Fatalf("records = %v, want only %s (agent rule and scope)", res.Records, mine.ID)
		}
		sums, err := e.s.OverlaySummaries(e.ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(sums) != 1 || sums[0].Agent != "deploy-ops" || sums[0].RecordCount != 1 || !slices.Equal(sums[0].RecordIDs, []string{mine.ID}) ||
			sums[0].CharsPerPrimitive["background"] != len("pager")+len("PagerDuty atlas-primary") || sums[0].Scope["user"] != "u1" {
			t.Fatalf("summaries = %+v", sums)
		}
		if res.Summary == nil || res.Summary.At != sums[0].At {
			t.Fatalf("Result.Summary = %+v", res.Summary)
		}
	})
}

func TestInstantiateErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := compose.Instantiate(ctx, compose.Request{AgentFile: "nope.agent.yaml"}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.agent.yaml")
	if err := os.WriteFile(bad, []byte("roleTemplate: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := compose.Instantiate(ctx, compose.Request{AgentFile: bad}); err == nil || !strings.Contains(err.Error(), "bad.agent.yaml") {
		t.Errorf("malformed file: %v", err)
	}
	invalid := filepath.Join(t.TempDir(), "invalid.agent.yaml")
	if err := os.WriteFile(invalid, []byte("roleTemplate:\n  name: x\nmission:\n  objective: o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := compose.Instantiate(ctx, compose.Request{AgentFile: invalid}); err == nil || !strings.HasPrefix(err.Error(), invalid+":1:1: ") || !strings.Contains(err.Error(), "persona") {
		t.Errorf("schema-invalid file: %v, want %s:1:1: ... persona", err, invalid)
	}
	if _, err := compose.Instantiate(ctx, compose.Request{AgentFile: deployAgent, At: "last tuesday"}); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("bad at: %v", err)
	}
	// No store: the authored agent alone, file untouched.
	before, _ := os.ReadFile(deployAgent)
	res, err := compose.Instantiate(ctx, compose.Request{AgentFile: deployAgent, Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Prompt.Text(), overlay.Render(res.Authored, overlay.Attribution{}).Text(); got != want || res.Summary != nil {
		t.Errorf("no-store instantiate differs from the authored prompt")
	}
	after, _ := os.ReadFile(deployAgent)
	if string(before) != string(after) {
		t.Errorf("agent file changed")
	}
}

func fragment(p overlay.Prompt, text string) *overlay.Fragment {
	for _, s := range p.Sections {
		for i := range s.Fragments {
			if s.Fragments[i].Text == text {
				return &s.Fragments[i]
			}
		}
	}
	return nil
}

// TestInstantiateLoadedAgent: a Request carrying the already loaded agent
// composes the same prompt as reading the file, without reading it, and
// leaves the given config unchanged.
func TestInstantiateLoadedAgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data, err := os.ReadFile(deployAgent)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := compose.LoadAgent(deployAgent, data)
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New(store.Options{Now: newClock().Now})
	recs, err := st.Write(ctx, []store.WriteRequest{{
		Scope: map[string]string{store.AgentKey: cfg.RoleTemplate.Name}, Kind: schema.KindFact,
		Content: "deploys freeze on Fridays", Provenance: schema.Provenance{ConversationID: "c1"},
		Target: &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionConventions, Key: "freeze"},
	}}, agentActor)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierOf(*recs[0].Target), Actor: human}); err != nil {
		t.Fatal(err)
	}
	fromFile, err := compose.Instantiate(ctx, compose.Request{AgentFile: deployAgent, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := compose.Instantiate(ctx, compose.Request{AgentFile: deployAgent, Store: st, Agent: cfg,
		ReadFile: func(string) ([]byte, error) { return nil, errors.New("must not read") }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loaded.Prompt.Text(), fromFile.Prompt.Text(); got != want {
		t.Errorf("prompt from the loaded agent differs:\n%s\n--- want\n%s", got, want)
	}
	if !strings.Contains(loaded.Prompt.Text(), "deploys freeze on Fridays") || loaded.Report.Totals.Applied != 1 {
		t.Errorf("the promoted record is not applied: %+v", loaded.Report.Totals)
	}
	if fresh, err := compose.LoadAgent(deployAgent, data); err != nil || !reflect.DeepEqual(cfg, fresh) {
		t.Errorf("Instantiate modified the given agent config (%v)", err)
	}
}

// TestInstantiateWithStoreErrors: the memories are read while the file is
// validated; with a store, a file that parses but is invalid, a bad At and
// a store that cannot be read are still the errors, in that order, and the
// records composed are the agent's.
func TestInstantiateWithStoreErrors(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		r := e.write("background.projectContext.deploy_window", "Thursdays after 14:00 ET", "")
		e.promote(r.ID, schema.TierAuto)
		invalid := filepath.Join(t.TempDir(), "invalid.agent.yaml")
		if err := os.WriteFile(invalid, []byte("roleTemplate:\n  name: deploy-ops\nmission:\n  objective: o\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, file, at string
			closed         bool
			want           string // error substring; "" for success
		}{
			{"valid", deployAgent, "", false, ""},
			{"valid at now", deployAgent, e.mark(), false, ""},
			{"invalid file", invalid, "", false, "persona"},
			{"invalid file and bad at", invalid, "last tuesday", false, "persona"},
			{"bad at", deployAgent, "last tuesday", false, "RFC 3339"},
			{"closed store", deployAgent, "", true, "closed"},
		}
		if last := tests[len(tests)-1]; !last.closed {
			t.Fatal("the closed-store case must come last")
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.closed {
					e.s.Close() // the last case
				}
				res, err := compose.Instantiate(e.ctx, compose.Request{AgentFile: tt.file, Store: e.s, Scope: scope, At: tt.at, Now: e.clk.Now})
				if tt.want != "" {
					if err == nil || !strings.Contains(err.Error(), tt.want) {
						t.Fatalf("err %v, want one containing %q", err, tt.want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Records) != 1 || res.Records[0].ID != r.ID {
					t.Errorf("records %v, want [%s]", res.Records, r.ID)
				}
			})
		}
	})
}
