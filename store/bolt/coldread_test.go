package bolt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// coldStore writes n promoted records shaped like bench/gen's (the cold
// render of issue 35): agent bench-bot's facts, a write and a promote
// entry each.
func coldStore(t testing.TB, n int) *Store {
	t.Helper()
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "memory.db"), store.Options{Now: newClock().Now})
	actor := store.Actor{Kind: store.ActorAgent, Name: "bench-bot"}
	var batch []store.WriteRequest
	for i := range n {
		tg := &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("learned_%04d", i)}
		batch = append(batch, store.WriteRequest{Scope: map[string]string{store.AgentKey: "bench-bot"}, Kind: schema.KindFact,
			Content: fmt.Sprintf("learned fact %d about deploys", i), Target: tg, Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i)}})
	}
	recs, err := s.Write(ctx, batch, actor)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := s.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierOf(*r.Target), Actor: actor}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// allocated returns the fewest bytes one of three runs of fn allocated.
func allocated(fn func()) uint64 {
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestPromotedHoldsEachRecordOnce: Promoted of an agent's 1,000 records
// allocates each record's place once (the result), not also a decoded copy
// and a heap record per decode, and decodes a scope stored as the same
// bytes once: a cold render allocated three records' worth per record it
// showed, and a scope map for each. Not parallel: it counts the process's
// allocations.
func TestPromotedHoldsEachRecordOnce(t *testing.T) {
	const n = 1000
	ctx := context.Background()
	s := coldStore(t, n)
	var got []schema.MemoryRecord
	bytes := allocated(func() {
		var err error
		if got, err = s.Promoted(ctx, nil, "bench-bot"); err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != n {
		t.Fatalf("Promoted = %d records, want %d", len(got), n)
	}
	// The record itself, its strings and target, the read's own arrays
	// (about 800 bytes; 900 under -race); with a scope map decoded for each
	// record 1,150, and with a decoded copy and a heap record per decode
	// too 1,900.
	per := bytes / n
	limit := uint64(unsafe.Sizeof(schema.MemoryRecord{})) + 700
	if per > limit {
		t.Errorf("Promoted allocated %d bytes a record, want at most %d (a record is %d)", per, limit, unsafe.Sizeof(schema.MemoryRecord{}))
	}
	t.Logf("Promoted: %d bytes a record (a record is %d)", per, unsafe.Sizeof(schema.MemoryRecord{}))
}

// TestVouchCopiesNoStringOfTheRecord: vouching for an agent's 1,000
// records decodes each ledger entry's record copy with the strings of the
// record as rendered where they are equal, into a record, scope map and
// target the previous record's check used, and the replay takes the copy
// without cloning it: a cold render allocated 3,400 bytes a record here,
// the ledger's record copies twice over. Not parallel: it counts the
// process's allocations.
func TestVouchCopiesNoStringOfTheRecord(t *testing.T) {
	const n = 1000
	ctx := context.Background()
	s := coldStore(t, n)
	recs, err := s.Promoted(ctx, nil, "bench-bot")
	if err != nil || len(recs) != n {
		t.Fatalf("Promoted = %d records, %v", len(recs), err)
	}
	bytes := allocated(func() {
		if err := s.Vouch(ctx, recs); err != nil {
			t.Fatal(err)
		}
	})
	// The replay's own record and promotion row (map values), the entries'
	// hashes, bbolt's page reads: about 1,160 bytes a record (1,480 under
	// -race); 1,600 with the arrays of the lookups grown entry by entry
	// and the decoder on the heap, 2,400 with a record, scope map and
	// target decoded for each.
	per := bytes / n
	limit := uint64(unsafe.Sizeof(schema.MemoryRecord{})) + 1100
	if raceBuild {
		limit += 400
	}
	if per > limit {
		t.Errorf("Vouch allocated %d bytes a record, want at most %d", per, limit)
	}
	t.Logf("Vouch: %d bytes a record", per)
}

// richStore is coldStore's records and one with every kind of string a
// record holds: tags, a run id, a second scope key, supports.
func richStore(t *testing.T) (*Store, schema.MemoryRecord) {
	t.Helper()
	ctx := context.Background()
	s := coldStore(t, 3)
	actor := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	recs, err := s.Write(ctx, []store.WriteRequest{{
		Scope: map[string]string{store.AgentKey: "bench-bot", "project": "alpha"}, Kind: schema.KindEpisode,
		Content: "Ask for a failing test before reviewing a fix", Tags: []string{"review", "tests"},
		Target:     &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "code-review", Slot: schema.SlotHeuristics},
		Provenance: schema.Provenance{ConversationID: "conv-1", RunID: "run-1"},
	}}, actor)
	if err != nil {
		t.Fatal(err)
	}
	id := recs[0].ID
	if _, err := s.Corroborate(ctx, id, schema.Support{ConversationID: "conv-2", RunID: "run-2"}, actor); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Promote(ctx, id, store.PromoteRequest{Tier: schema.TierEarned, Actor: actor, Evidence: store.Evidence{Conversations: []string{"conv-1", "conv-2"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Promoted(ctx, nil, "bench-bot")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.ID == id {
			return s, r
		}
	}
	t.Fatalf("record %s is not promoted", id)
	return nil, schema.MemoryRecord{}
}

// TestVouchRefusesEveryEditedString: a record as rendered that differs
// from its ledger entries in one byte of any one string (the same length:
// the strings the ledger's copy shares with the record are shared only when
// equal) is refused, naming the field; the record unchanged is vouched for.
func TestVouchRefusesEveryEditedString(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rec := richStore(t)
	if err := s.Vouch(ctx, []schema.MemoryRecord{rec}); err != nil {
		t.Fatalf("Vouch of the record as stored = %v", err)
	}
	edit := func(v string) string {
		b := []byte(v)
		b[len(b)-1] ^= 1
		return string(b)
	}
	cases := map[string]func(r *schema.MemoryRecord){
		"content":     func(r *schema.MemoryRecord) { r.Content = edit(r.Content) },
		"kind":        func(r *schema.MemoryRecord) { r.Kind = schema.Kind(edit(string(r.Kind))) },
		"scope value": func(r *schema.MemoryRecord) { r.Scope["project"] = edit(r.Scope["project"]) },
		"scope key": func(r *schema.MemoryRecord) {
			v := r.Scope["project"]
			delete(r.Scope, "project")
			r.Scope["projecT"] = v
		},
		"tag":                       func(r *schema.MemoryRecord) { r.Tags[1] = edit(r.Tags[1]) },
		"provenance conversationId": func(r *schema.MemoryRecord) { r.Provenance.ConversationID = edit(r.Provenance.ConversationID) },
		"provenance runId":          func(r *schema.MemoryRecord) { r.Provenance.RunID = edit(r.Provenance.RunID) },
		"provenance author":         func(r *schema.MemoryRecord) { r.Provenance.Author = edit(r.Provenance.Author) },
		"provenance at":             func(r *schema.MemoryRecord) { r.Provenance.At = edit(r.Provenance.At) },
		"createdAt":                 func(r *schema.MemoryRecord) { r.CreatedAt = edit(r.CreatedAt) },
		"updatedAt":                 func(r *schema.MemoryRecord) { r.UpdatedAt = edit(r.UpdatedAt) },
		"target domain":             func(r *schema.MemoryRecord) { r.Target.Domain = edit(r.Target.Domain) },
		"target slot":               func(r *schema.MemoryRecord) { r.Target.Slot = edit(r.Target.Slot) },
		"support conversationId":    func(r *schema.MemoryRecord) { r.Supports[0].ConversationID = edit(r.Supports[0].ConversationID) },
		"support at":                func(r *schema.MemoryRecord) { r.Supports[0].At = edit(r.Supports[0].At) },
	}
	if len(rec.Supports) == 0 || len(rec.Tags) != 2 || rec.Target == nil {
		t.Fatalf("fixture record lacks supports, tags or target: %+v", rec)
	}
	for name, fn := range cases {
		r := store.CloneRecord(rec)
		fn(&r)
		var ue *store.UnvouchedError
		if err := s.Vouch(ctx, []schema.MemoryRecord{r}); !errors.As(err, &ue) || ue.ID != rec.ID {
			t.Errorf("%s edited: Vouch = %v; want it refused naming %s", name, err, rec.ID)
		}
	}
}

// TestVouchLeavesTheRecordsAsGiven: the records Vouch checks (which the
// render then shows) are not changed by the replay of their entries,
// whose strings they share.
func TestVouchLeavesTheRecordsAsGiven(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := richStore(t)
	recs, err := s.Promoted(ctx, nil, "bench-bot")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]schema.MemoryRecord, len(recs))
	for i, r := range recs {
		want[i] = store.CloneRecord(r)
	}
	for range 2 {
		if err := s.Vouch(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("Vouch changed the records it checked:\n got %+v\nwant %+v", recs, want)
	}
}

// TestVouchForgetsThePreviousRecord: the entries of each record are
// decoded into parts the previous record's check used (scope map, target,
// the record itself); none of that record's values is left in them. A
// record as rendered that carries, besides its own, the scope pair, tags
// or target key of the record checked just before is refused.
func TestVouchForgetsThePreviousRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rich := richStore(t)
	recs, err := s.Promoted(ctx, nil, "bench-bot")
	if err != nil {
		t.Fatal(err)
	}
	var plain schema.MemoryRecord
	for _, r := range recs {
		if r.ID != rich.ID {
			plain = r
		}
	}
	if err := s.Vouch(ctx, []schema.MemoryRecord{rich, plain}); err != nil {
		t.Fatalf("Vouch of the records as stored = %v", err)
	}
	cases := map[string]func(r *schema.MemoryRecord){
		"scope pair": func(r *schema.MemoryRecord) { r.Scope["project"] = rich.Scope["project"] },
		"tags":       func(r *schema.MemoryRecord) { r.Tags = rich.Tags },
		"run id":     func(r *schema.MemoryRecord) { r.Provenance.RunID = rich.Provenance.RunID },
		"supports":   func(r *schema.MemoryRecord) { r.Supports = rich.Supports },
		"target":     func(r *schema.MemoryRecord) { r.Target.Domain, r.Target.Slot = rich.Target.Domain, rich.Target.Slot },
	}
	for name, fn := range cases {
		forged := store.CloneRecord(plain)
		fn(&forged)
		var ue *store.UnvouchedError
		if err := s.Vouch(ctx, []schema.MemoryRecord{rich, forged}); !errors.As(err, &ue) || ue.ID != plain.ID {
			t.Errorf("the record with the previous one's %s: Vouch = %v; want it refused naming %s", name, err, plain.ID)
		}
	}
}

// TestPromotedScopesAsStored: records read together whose scopes are
// stored as the same bytes share one map; each record still has exactly
// the scope it was written with.
func TestPromotedScopesAsStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "memory.db"), store.Options{Now: newClock().Now})
	scopes := []map[string]string{
		{store.AgentKey: "a"}, {store.AgentKey: "a", "project": "x"}, {store.AgentKey: "a", "project": "y"},
		{"project": "x"}, {store.AgentKey: "a", "project": "x"}, {store.AgentKey: "a"}, {},
	}
	var reqs []store.WriteRequest
	for i, sc := range scopes {
		reqs = append(reqs, store.WriteRequest{Scope: sc, Kind: schema.KindFact, Content: fmt.Sprintf("fact %d", i),
			Target: &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("k%d", i)}})
	}
	recs, err := s.Write(ctx, reqs, human)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{}
	for i, r := range recs {
		if _, err := s.Promote(ctx, r.ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: human}); err != nil {
			t.Fatal(err)
		}
		want[r.ID] = scopes[i]
	}
	got, err := s.Promoted(ctx, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(scopes) {
		t.Fatalf("Promoted = %d records, want %d", len(got), len(scopes))
	}
	for _, r := range got {
		if !reflect.DeepEqual(r.Scope, want[r.ID]) {
			t.Errorf("record %s (%q): scope %v, want %v", r.ID, r.Content, r.Scope, want[r.ID])
		}
	}
	if err := s.Vouch(ctx, got); err != nil {
		t.Fatalf("Vouch = %v", err)
	}
}
