package overlay

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// baseJSON is an authored config touching every part the renderer knows.
const baseJSON = `{
 "roleTemplate": {
  "name": "support-bot",
  "persona": {"identity": "a support agent for Acme", "tone": "warm and concise",
   "priorities": ["customer trust"], "principles": ["never guess"]},
  "judgments": [
   {"domain": "refunds", "heuristics": ["Check order age first"],
    "constraints": ["Never refund over $500 without a manager"],
    "escalationTriggers": ["Customer mentions legal action"],
    "examples": [{"scenario": "Late parcel", "good": "Apologize and track it", "bad": "Blame the courier"}]},
   {"domain": "billing-disputes"}
  ],
  "responsibilities": [{"key": "triage", "name": "Triage", "description": "Sort incoming tickets"}],
  "methodology": {"name": "triage", "prompt": "Triage, then act.", "checklist": ["Read the whole ticket"]},
  "recovery": {"name": "retry", "prompt": "Retry once, then hand over.", "maxAttempts": 2}
 },
 "mission": {"objective": "Resolve support tickets", "successCriteria": ["Resolved in one reply"],
  "constraints": ["Stay within policy"], "rationale": "Customers wait otherwise"},
 "background": {"teamContext": {"size": 4}, "projectContext": {"product": "Acme Cloud"}},
 "awareness": {"domains": [{"name": "orders", "description": "the order database", "accessMethod": "sql"}]},
 "capabilities": ["deploy"],
 "manuals": {"search": {"workflows": ["Search the KB first"]}}
}`

func mustConfig(t testing.TB, s string) *schema.AgentConfig {
	t.Helper()
	var c schema.AgentConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		t.Fatalf("test config: %v", err)
	}
	return &c
}

func base(t testing.TB) *schema.AgentConfig { return mustConfig(t, baseJSON) }

// rec builds a promoted record; target "" means untargeted.
func rec(t testing.TB, id, createdAt, target, content string) schema.MemoryRecord {
	t.Helper()
	r := schema.MemoryRecord{
		ID: id, Kind: schema.KindFact, Content: content,
		Scope:      map[string]string{"agent": "support-bot"},
		Provenance: schema.Provenance{ConversationID: "conv-" + id},
		CreatedAt:  createdAt, UpdatedAt: createdAt,
	}
	if target != "" {
		tg, err := schema.ParseTarget(target)
		if err != nil {
			t.Fatalf("target %q: %v", target, err)
		}
		r.Target = &tg
	}
	return r
}

func withPayload(r schema.MemoryRecord, payload string) schema.MemoryRecord {
	r.Payload = json.RawMessage(payload)
	return r
}

func withSupports(r schema.MemoryRecord, convs ...string) schema.MemoryRecord {
	for _, c := range convs {
		r.Supports = append(r.Supports, schema.Support{ConversationID: c, At: r.CreatedAt})
	}
	return r
}

// ts returns a fixed-width timestamp on 2026-11-0D at HH:00.
func ts(day, hour int) string {
	return schema.FormatTime(timeAt(day, hour))
}

func timeAt(day, hour int) (t time.Time) {
	return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC)
}
