package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/memstore"
)

// zeroEntropy makes record ids depend on the clock alone, so two stores fed
// the same operations mint the same ids and ledger hashes.
type zeroEntropy struct{}

func (zeroEntropy) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type backend struct {
	name string
	open func(t *testing.T, opts store.Options) store.Store
}

var backends = []backend{
	{"memstore", func(t *testing.T, opts store.Options) store.Store { return memstore.New(opts) }},
	{"bolt", func(t *testing.T, opts store.Options) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "memory.db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// batchWorld is one store and the engine saving into it.
type batchWorld struct {
	st    store.Store
	eng   *Engine
	clock *clock
}

func newBatchWorld(t *testing.T, b backend, agent *schema.AgentConfig, scope map[string]string) *batchWorld {
	t.Helper()
	c := newClock()
	st := b.open(t, store.Options{Now: c.Now, Entropy: zeroEntropy{}})
	t.Cleanup(func() { _ = st.Close() })
	w := &batchWorld{st: st, clock: c, eng: New(Config{Store: st, Agent: agent, Scope: scope, Now: c.Now})}
	return w
}

// state is everything a save can change, in comparable form.
func (w *batchWorld) state(t *testing.T) (recs, ledger, proposals string) {
	t.Helper()
	ctx := context.Background()
	var all []schema.MemoryRecord
	if _, err := w.st.Export(ctx, func(r schema.MemoryRecord) error { all = append(all, r); return nil }); err != nil {
		t.Fatal(err)
	}
	l, err := w.st.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := w.st.Proposals(ctx, store.ProposalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.st.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return mustJSON(t, all), mustJSON(t, l), mustJSON(t, ps)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reviewerScript is every kind of answer Save gives, with later requests
// reconciled against earlier ones of the same batch.
func reviewerScript(t *testing.T, w *batchWorld) []SaveRequest {
	t.Helper()
	ctx := context.Background()
	scope := w.eng.Scope()
	write := func(content, target, conv string, promote bool) schema.MemoryRecord {
		mt := tgt(t, target)
		recs, err := w.st.Write(ctx, []store.WriteRequest{{Scope: scope, Kind: schema.KindFact, Content: content, Target: mt,
			Provenance: schema.Provenance{ConversationID: conv}}}, agentKind)
		if err != nil {
			t.Fatal(err)
		}
		if promote {
			if _, err := w.st.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierOf(*mt), Actor: human, Approver: human.String()}); err != nil {
				t.Fatal(err)
			}
		}
		return recs[0]
	}
	fact := write("The CI runs on GitHub Actions", "background.projectContext.ci", "conv-0", true)
	earned := write("Flag missing error checks on deferred Close calls", "judgment.code-review.heuristics", "conv-0", true)
	cand := write("Read the tests before the code", "judgment.code-review.heuristics", "conv-0", false)
	w.clock.Advance(60e9)
	req := func(content, target, conv string) SaveRequest {
		r := SaveRequest{Content: content, Provenance: schema.Provenance{ConversationID: conv}, Actor: agentKind}
		if target != "" {
			r.Target = tgt(t, target)
		}
		return r
	}
	sup := func(r SaveRequest, id string, a store.Actor) SaveRequest { r.Supersedes, r.Actor = id, a; return r }
	return []SaveRequest{
		req("Deploys go out on Tuesdays", "background.projectContext.deploy_window", "conv-1"),                          // auto: promoted
		req("Deploys go out on Thursdays", "background.projectContext.deploy_window", "conv-2"),                         // key held by #0: conflict
		req("Deploys go out on Tuesdays", "background.projectContext.deploy_window", "conv-3"),                          // same tokens as #0: corroborated
		req("Ask for a design doc before large changes", "judgment.code-review.heuristics", "conv-1"),                   // earned: candidate
		req("Ask for a design doc before large changes first", "judgment.code-review.heuristics", "conv-1"),             // same conversation: counted once
		req("Ask for a design doc before large changes first", "judgment.code-review.heuristics", ""),                   // no conversation
		req("Ask for a design doc before big changes", "judgment.code-review.heuristics", "conv-2"),                     // second conversation: promoted
		req("Read the tests before the code", "judgment.code-review.heuristics", "conv-4"),                              // corroborates the prior candidate
		req("Don't flag missing error checks on deferred Close calls", "judgment.code-review.heuristics", "conv-5"),     // contradicts a promoted record
		req("Approve a change without tests", "judgment.code-review.heuristics", "conv-5"),                              // contradicts an authored constraint
		req("Escalate when a migration drops a column", "judgment.code-review.escalationTriggers", "conv-6"),            // guarded: proposal
		req("Escalate when a migration drops a column", "judgment.code-review.escalationTriggers", "conv-7"),            // corroborates; proposal stays
		req("Keep workflows short", "manual.deploy.workflows", "conv-1"),                                                // locked: refused
		req("Prefer tabs", "judgment.style.heuristics", "conv-1"),                                                       // unknown domain: refused
		sup(req("The CI runs on Buildkite", "background.projectContext.ci", "conv-8"), fact.ID, agentKind),              // supersedes an auto fact
		sup(req("Flag unchecked errors everywhere", "judgment.code-review.heuristics", "conv-8"), earned.ID, agentKind), // gated: demotion proposal
		sup(req("Read the docs first", "judgment.code-review.heuristics", "conv-9"), cand.ID, human),                    // human supersede of a candidate
		sup(req("Anything", "background.projectContext.ci", "conv-9"), "01ARZ3NDEKTSV4RRFFQ69G5FAV", agentKind),         // unknown: not_found
		sup(req("Still Buildkite", "background.projectContext.ci", "conv-9"), fact.ID, agentKind),                       // already superseded in the batch
		req("remember the release train leaves at noon", "", "conv-10"),                                                 // untargeted: recall
	}
}

// TestSaveBatchSameAsSaves: SaveBatch answers, stores and ledgers exactly
// what a loop of Save does on the same inputs, on both backends.
func TestSaveBatchSameAsSaves(t *testing.T) {
	t.Parallel()
	type script struct {
		name  string
		agent func(t *testing.T) *schema.AgentConfig
		scope map[string]string
		reqs  func(t *testing.T, w *batchWorld) []SaveRequest
		batch int
		// want lists answers the script must produce, so the comparison
		// covers them.
		want []string
	}
	scripts := []script{
		{"reviewer", testAgent, map[string]string{"user": "u1"}, reviewerScript, 100,
			[]string{string(SaveSaved), string(SaveConflict), string(SaveRefused), string(SaveNotFound), string(StatePromoted), string(StateCandidate), string(StatePending), string(StateRecall), "corroborated", "conflicts", "demotion"}},
		{"bench-mix", func(*testing.T) *schema.AgentConfig { return saveBenchAgent() }, map[string]string{"project": "bench"},
			func(*testing.T, *batchWorld) []SaveRequest { return saveBenchRequests(300) }, 50,
			[]string{string(SaveSaved), string(StatePromoted), string(StateCandidate), string(StateRecall), "corroborated"}},
	}
	for _, b := range backends {
		for _, sc := range scripts {
			t.Run(b.name+"/"+sc.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				one := newBatchWorld(t, b, sc.agent(t), sc.scope)
				reqs := sc.reqs(t, one)
				var want []SaveResult
				for i, r := range reqs {
					res, err := one.eng.Save(ctx, r)
					if err != nil {
						t.Fatalf("Save[%d]: %v", i, err)
					}
					want = append(want, res)
				}
				batched := newBatchWorld(t, b, sc.agent(t), sc.scope)
				if again := sc.reqs(t, batched); mustJSON(t, again) != mustJSON(t, reqs) {
					t.Fatal("the script is not deterministic")
				}
				var got []SaveResult
				for start := 0; start < len(reqs); start += sc.batch {
					res, err := batched.eng.SaveBatch(ctx, reqs[start:min(start+sc.batch, len(reqs))])
					if err != nil {
						t.Fatalf("SaveBatch at %d: %v", start, err)
					}
					got = append(got, res...)
				}
				if len(got) != len(want) {
					t.Fatalf("SaveBatch answered %d requests, want %d", len(got), len(want))
				}
				for i := range want {
					if w, g := mustJSON(t, want[i]), mustJSON(t, got[i]); w != g {
						t.Errorf("request %d (%q):\nSave:      %s\nSaveBatch: %s", i, reqs[i].Content, w, g)
					}
				}
				wr, wl, wp := one.state(t)
				gr, gl, gp := batched.state(t)
				if wr != gr {
					t.Errorf("records differ:\nSave:      %s\nSaveBatch: %s", wr, gr)
				}
				if wl != gl {
					t.Errorf("ledgers differ:\nSave:      %s\nSaveBatch: %s", wl, gl)
				}
				if wp != gp {
					t.Errorf("proposals differ:\nSave:      %s\nSaveBatch: %s", wp, gp)
				}
				seen := map[string]bool{}
				for _, r := range want {
					seen[string(r.Status)], seen[string(r.State)] = true, true
					seen["corroborated"] = seen["corroborated"] || r.Corroborated
					seen["conflicts"] = seen["conflicts"] || len(r.Conflicts) > 0
					seen["demotion"] = seen["demotion"] || r.DemotionProposalID != ""
				}
				for _, w := range sc.want {
					if !seen[w] {
						t.Errorf("the script produced no %q answer: it does not cover what it claims", w)
					}
				}
			})
		}
	}
}

// TestSaveBatchAllOrNothing: an invalid request fails the whole batch and
// leaves the store as it was, including the saves before it in the batch.
func TestSaveBatchAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newBatchWorld(t, b, testAgent(t), map[string]string{"user": "u1"})
			if _, err := w.eng.Save(ctx, SaveRequest{Content: "before", Actor: agentKind}); err != nil {
				t.Fatal(err)
			}
			br, bl, bp := w.state(t)
			reqs := []SaveRequest{
				{Content: "Deploys go out on Tuesdays", Target: tgt(t, "background.projectContext.deploy_window"), Actor: agentKind,
					Provenance: schema.Provenance{ConversationID: "c1"}},
				{Content: "x", ExpiresAt: "not a time", Actor: agentKind},
			}
			res, err := w.eng.SaveBatch(ctx, reqs)
			if !errors.Is(err, store.ErrInvalid) || res != nil {
				t.Fatalf("SaveBatch with an invalid request: %v, %v; want ErrInvalid and no results", res, err)
			}
			ar, al, ap := w.state(t)
			if ar != br || al != bl || ap != bp {
				t.Errorf("a failed batch changed the store:\nbefore %s\n%s\nafter  %s\n%s", br, bl, ar, al)
			}
		})
	}
}

// countingEvaluator counts its runs and always reports a regression.
type countingEvaluator struct{ runs int }

func (c *countingEvaluator) Evaluate(context.Context, *schema.AgentConfig, *schema.AgentConfig) (EvalOutcome, error) {
	c.runs++
	return EvalOutcome{Regressed: true, Reason: "worse"}, nil
}

// TestSaveBatchRunsNoEval: an agent superseding an earned promoted record
// makes Save run the eval gate (a regression demotes the old record at
// once); SaveBatch, which holds the writer lock, never runs it and opens the
// demotion proposal instead.
func TestSaveBatchRunsNoEval(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			for _, batched := range []bool{false, true} {
				w := newBatchWorld(t, b, testAgent(t), map[string]string{"user": "u1"})
				ev := &countingEvaluator{}
				w.eng.eval = ev
				reviewerScript(t, w) // writes the prior records, among them an earned promoted heuristic
				recs, err := w.st.Search(ctx, store.Query{Target: tgt(t, "judgment.code-review.heuristics"), Limit: store.Limit(store.Unlimited)})
				if err != nil {
					t.Fatal(err)
				}
				var earned string
				for _, r := range recs.Records {
					if r.Content == "Flag missing error checks on deferred Close calls" {
						earned = r.ID
					}
				}
				req := SaveRequest{Content: "Flag unchecked errors everywhere", Target: tgt(t, "judgment.code-review.heuristics"),
					Supersedes: earned, Actor: agentKind, Provenance: schema.Provenance{ConversationID: "conv-8"}}
				var res SaveResult
				if batched {
					out, err := w.eng.SaveBatch(ctx, []SaveRequest{req})
					if err != nil {
						t.Fatal(err)
					}
					res = out[0]
				} else if res, err = w.eng.Save(ctx, req); err != nil {
					t.Fatal(err)
				}
				switch {
				case !batched && (ev.runs != 1 || res.SupersededID != earned || res.DemotionProposalID != ""):
					t.Errorf("Save: %d eval runs, result %+v; want one run and the old record demoted", ev.runs, res)
				case batched && (ev.runs != 0 || res.DemotionProposalID == "" || res.SupersededID != ""):
					t.Errorf("SaveBatch: %d eval runs, result %+v; want no run and a demotion proposal", ev.runs, res)
				}
			}
		})
	}
}
