package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
)

// clock is a controllable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 3, 14, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

var (
	agentKind = store.Actor{Kind: store.ActorAgent, Name: "code-reviewer"}
	human     = store.Actor{Kind: store.ActorHuman, Name: "ana"}
	system    = store.Actor{Kind: store.ActorSystem, Name: "garden"}
)

// testAgent is a small authored config: one code-review judgment with an
// authored heuristic and constraint, and a recovery block.
const testAgentJSON = `{
  "roleTemplate": {
    "name": "code-reviewer",
    "persona": {"identity": "a careful Go code reviewer", "tone": "direct"},
    "judgments": [{
      "domain": "code-review",
      "heuristics": ["Prefer small, focused pull requests"],
      "constraints": ["Never approve a change without tests"]
    }, {
      "domain": "deploy",
      "heuristics": ["Deploy in the morning"]
    }],
    "recovery": {"name": "retry", "prompt": "Retry once, then escalate.", "maxAttempts": 2}
  },
  "mission": {"objective": "Review pull requests"},
  "background": {"projectContext": {"language": "Go"}},
  "awareness": {}
}`

func testAgent(t *testing.T) *schema.AgentConfig {
	t.Helper()
	var c schema.AgentConfig
	if err := json.Unmarshal([]byte(testAgentJSON), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

type fixture struct {
	t     *testing.T
	ctx   context.Context
	clock *clock
	st    store.Store
	eng   *Engine
	cfg   Config
}

func newFixture(t *testing.T, mod ...func(*Config)) *fixture {
	t.Helper()
	c := newClock()
	st := memstore.New(store.Options{Now: c.Now})
	cfg := Config{Store: st, Agent: testAgent(t), Scope: map[string]string{"user": "u1"}, Now: c.Now}
	for _, m := range mod {
		m(&cfg)
	}
	return &fixture{t: t, ctx: context.Background(), clock: c, st: st, eng: New(cfg), cfg: cfg}
}

func tgt(t *testing.T, s string) *schema.MemoryTarget {
	t.Helper()
	mt, err := schema.ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return &mt
}

// save saves through the engine and fails the test on error.
func (f *fixture) save(content, target, conv string, actor store.Actor) SaveResult {
	f.t.Helper()
	req := SaveRequest{Content: content, Provenance: schema.Provenance{ConversationID: conv}, Actor: actor}
	if target != "" {
		req.Target = tgt(f.t, target)
	}
	res, err := f.eng.Save(f.ctx, req)
	if err != nil {
		f.t.Fatalf("Save(%q): %v", content, err)
	}
	return res
}

// write stores a record directly (bypassing the engine), optionally
// promoted at tier.
func (f *fixture) write(content, target, conv string, promote bool) schema.MemoryRecord {
	f.t.Helper()
	mt := tgt(f.t, target)
	var payload json.RawMessage
	switch mt.Primitive {
	case schema.PrimitiveExample:
		payload = json.RawMessage(`{"scenario":"s","good":"g"}`)
	case schema.PrimitiveAwareness:
		payload = json.RawMessage(`{"name":"n","description":"d","accessMethod":"a"}`)
	}
	recs, err := f.st.Write(f.ctx, []store.WriteRequest{{Scope: f.eng.Scope(), Kind: schema.KindFact, Content: content,
		Target: mt, Payload: payload, Provenance: schema.Provenance{ConversationID: conv}}}, agentKind)
	if err != nil {
		f.t.Fatal(err)
	}
	if promote {
		if _, err := f.st.Promote(f.ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierOf(*mt), Actor: human, Approver: human.String()}); err != nil {
			f.t.Fatal(err)
		}
	}
	return recs[0]
}

func (f *fixture) isPromoted(id string) bool {
	f.t.Helper()
	recs, err := f.st.Promoted(f.ctx, map[string]string{"user": "u1"}, "code-reviewer")
	if err != nil {
		f.t.Fatal(err)
	}
	for _, r := range recs {
		if r.ID == id {
			return true
		}
	}
	return false
}

func (f *fixture) isValid(id string) bool {
	f.t.Helper()
	r, err := f.st.Get(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.Valid(schema.FormatTime(f.clock.Now()))
}

func (f *fixture) pending() []store.Proposal {
	f.t.Helper()
	ps, err := f.eng.Proposals(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return ps
}

func isRefused(err error) bool { return errors.Is(err, ErrRefused) }
