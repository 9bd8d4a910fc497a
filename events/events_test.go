package events

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/store/memstore"
	"github.com/agent-ls/agent-ls/store/storetest"
)

var (
	human = store.Actor{Kind: store.ActorHuman, Name: "ana"}
	agent = store.Actor{Kind: store.ActorAgent, Name: "bot"}
)

// history writes one record of agent bot through every op the events map
// and returns the record id.
func history(t *testing.T, ctx context.Context, s store.Store) (id, newID string) {
	t.Helper()
	tgt := &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "refunds", Slot: schema.SlotHeuristics}
	recs, err := s.Write(ctx, []store.WriteRequest{{Scope: map[string]string{"agent": "bot"}, Kind: schema.KindEpisode,
		Content: "SECRET CONTENT never in an event", Target: tgt}}, agent)
	if err != nil {
		t.Fatal(err)
	}
	id = recs[0].ID
	if _, err := s.Corroborate(ctx, id, schema.Support{ConversationID: "c1"}, agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Promote(ctx, id, store.PromoteRequest{Tier: schema.TierEarned, Actor: human}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: id, Tier: schema.TierEarned, RequestedBy: agent, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reject(ctx, p.ID, human, "keep it"); err != nil {
		t.Fatal(err)
	}
	if err := s.Demote(ctx, id, "regressed", human); err != nil {
		t.Fatal(err)
	}
	recs, err = s.Write(ctx, []store.WriteRequest{{Scope: map[string]string{"agent": "bot"}, Kind: schema.KindEpisode,
		Content: "newer SECRET", Target: tgt, Supersedes: id}}, human)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendOverlaySummary(ctx, store.OverlaySummary{Agent: "bot", RecordCount: 1, RecordIDs: []string{recs[0].ID},
		CandidateIDs: []string{id}}); err != nil {
		t.Fatal(err)
	}
	return id, recs[0].ID
}

func TestSince(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := storetest.NewClock(time.Date(2026, 11, 3, 14, 0, 0, 0, time.UTC))
	tick := func() time.Time { clock.Advance(time.Second); return clock.Now() }
	for name, s := range map[string]store.Store{
		"memstore": memstore.New(store.Options{Now: tick}),
		"bolt":     openBolt(t, store.Options{Now: tick}),
	} {
		t.Run(name, func(t *testing.T) {
			id, newID := history(t, ctx, s)
			evs, err := Since(ctx, s, "")
			if err != nil {
				t.Fatal(err)
			}
			want := []Type{Write, Corroborate, Promote, Propose, Reject, Demote, Supersede, Overlay}
			if len(evs) != len(want) {
				t.Fatalf("got %d events %+v, want %v", len(evs), evs, want)
			}
			for i, ev := range evs {
				if ev.Type != want[i] {
					t.Errorf("event %d: type %s, want %s", i, ev.Type, want[i])
				}
				if ev.Agent != "bot" {
					t.Errorf("event %d (%s): agent %q, want bot", i, ev.Type, ev.Agent)
				}
				if ev.At == "" {
					t.Errorf("event %d: no time", i)
				}
				if strings.Contains(string(ev.JSON()), "SECRET") {
					t.Errorf("event %d carries content: %s", i, ev.JSON())
				}
			}
			if evs[0].RecordID != id || evs[0].Tier != schema.TierEarned || evs[0].Actor != "agent:bot" || evs[0].Target != "judgment.refunds.heuristics" {
				t.Errorf("write event %+v", evs[0])
			}
			if evs[1].ConversationID != "c1" {
				t.Errorf("corroborate event %+v", evs[1])
			}
			if evs[3].ProposalID == "" || evs[3].ProposalKind != "demote" || evs[4].ProposalID != evs[3].ProposalID {
				t.Errorf("propose/reject events %+v %+v", evs[3], evs[4])
			}
			if evs[6].RecordID != id || evs[6].NewRecordID != newID || evs[6].Actor != "human:ana" {
				t.Errorf("supersede event %+v", evs[6])
			}
			if evs[7].RecordCount == nil || *evs[7].RecordCount != 1 || len(evs[7].CandidateIDs) != 1 {
				t.Errorf("overlay event %+v", evs[7])
			}
			// --since drops what came before.
			later, err := Since(ctx, s, evs[5].At)
			if err != nil {
				t.Fatal(err)
			}
			if len(later) != 3 || later[0].Type != Demote {
				t.Errorf("since %s: %+v", evs[5].At, later)
			}
		})
	}
}

func openBolt(t *testing.T, opts store.Options) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "memory.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// chanSource is a Source driven by the test.
type chanSource struct{ ch chan struct{} }

func (c chanSource) Watch(context.Context) (<-chan struct{}, error) { return c.ch, nil }
func (c chanSource) Err() error                                     { return nil }

// TestFollow: a follower on a file store sees writes made through another
// handle (the file is the only thing they share), woken by fsnotify; and a
// pluggable source drives the same loop.
func TestFollow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  func(path string) (Source, func())
	}{
		{"fsnotify", func(path string) (Source, func()) { return FileSource(path), func() {} }},
		{"plugged", func(string) (Source, func()) {
			c := chanSource{ch: make(chan struct{}, 1)}
			return c, func() { c.ch <- struct{}{} }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			path := filepath.Join(t.TempDir(), "memory.db")
			writer, err := bolt.Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer writer.Close()
			reader, err := bolt.Open(path, store.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()
			src, poke := tc.src(path)
			got := make(chan Event, 16)
			done := make(chan error, 1)
			go func() {
				done <- Follow(ctx, reader, src, "", func(ev Event) error { got <- ev; return nil })
			}()
			// Wait for the (empty) backlog read: write, then expect an event
			// per write, each within the bound.
			for i := range 3 {
				if _, err := writer.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "fact"}}, human); err != nil {
					t.Fatal(err)
				}
				poke()
				select {
				case ev := <-got:
					if ev.Type != Write || ev.Seq != uint64(i+1) {
						t.Fatalf("event %d: %+v", i, ev)
					}
				case <-ctx.Done():
					t.Fatalf("no event for write %d", i)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Follow after cancel: %v", err)
			}
		})
	}
}

// TestOverlayEventCarriesEveryField: the overlay event always carries its
// counts, zeros included, and its sizes in UTF-8 bytes per primitive, every
// primitive listed (ADR-0008); other events carry none of them; a summary
// stored before bytes were kept reports its characters.
func TestOverlayEventCarriesEveryField(t *testing.T) {
	t.Parallel()
	bytes := map[string]int{"judgment": len("Prüfe zuerst")}
	for _, tt := range []struct {
		name string
		s    store.OverlaySummary
		want string
	}{
		{"zeros", store.OverlaySummary{At: "2026-12-06T00:00:00.000Z", Agent: "bot", BytesPerPrimitive: map[string]int{}},
			`"recordCount":0,"conflicts":0,"spilled":0,"bytesPerPrimitive":{"awareness":0,"background":0,"example":0,"judgment":0,"manual":0,"recovery":0}`},
		{"bytes", store.OverlaySummary{At: "2026-12-06T00:00:00.000Z", Agent: "bot", RecordCount: 1,
			CharsPerPrimitive: map[string]int{"judgment": 12}, BytesPerPrimitive: bytes},
			`"recordCount":1,"conflicts":0,"spilled":0,"bytesPerPrimitive":{"awareness":0,"background":0,"example":0,"judgment":13,"manual":0,"recovery":0}`},
		{"stored before bytes", store.OverlaySummary{At: "2026-12-06T00:00:00.000Z", Agent: "bot", RecordCount: 1, Spilled: 2,
			CharsPerPrimitive: map[string]int{"background": 7}},
			`"recordCount":1,"conflicts":0,"spilled":2,"bytesPerPrimitive":{"awareness":0,"background":7,"example":0,"judgment":0,"manual":0,"recovery":0}`},
	} {
		if got := string(FromSummary(tt.s).JSON()); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %s\nwant it to contain %s", tt.name, got, tt.want)
		}
	}
	other := string(Event{Type: Write, At: "2026-12-06T00:00:00.000Z", RecordID: "r1"}.JSON())
	for _, k := range []string{"recordCount", "conflicts", "spilled", "bytesPerPrimitive"} {
		if strings.Contains(other, k) {
			t.Errorf("a write event carries %s: %s", k, other)
		}
	}
}

// TestFollowReadsOnlyWhatIsNew: each read of a follower after its first
// starts past the last entry it read (LedgerFilter.After), so its cost is
// what is new, not the ledger; After(Head) starts a follower at the
// ledger's end, reading none of it (Head reads one entry).
func TestFollowReadsOnlyWhatIsNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		fromHead  bool
		wantFirst []uint64 // the seqs the first read delivers
	}{
		{"from the start", false, []uint64{1, 2, 3}},
		{"from the head", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			st := memstore.New(store.Options{})
			write := func() {
				t.Helper()
				if _, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "fact"}}, human); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				write()
			}
			r := &storetest.LedgerReads{Reader: st}
			var opts []Option
			firstAfter := uint64(0)
			if tc.fromHead {
				head, err := Head(ctx, r)
				if err != nil || head != 3 {
					t.Fatalf("Head = %d, %v; want 3", head, err)
				}
				if f := r.Filters(); len(f) != 1 || f[0].Limit != 1 {
					t.Fatalf("Head read %+v, want one read of one entry", f)
				}
				opts, firstAfter = append(opts, After(head)), head
			}
			src := chanSource{ch: make(chan struct{}, 1)}
			got := make(chan Event, 16)
			done := make(chan error, 1)
			go func() {
				done <- Follow(ctx, r, src, "", func(ev Event) error { got <- ev; return nil }, opts...)
			}()
			for _, want := range tc.wantFirst {
				if ev := <-got; ev.Seq != want {
					t.Fatalf("backlog event %d, want %d", ev.Seq, want)
				}
			}
			// Each later write is one event, found by a read that starts
			// past what was read before.
			for want := uint64(4); want <= 5; want++ {
				write()
				src.ch <- struct{}{}
				if ev := <-got; ev.Seq != want {
					t.Fatalf("event %d, want %d", ev.Seq, want)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			fs := r.Filters()
			if tc.fromHead {
				fs = fs[1:] // Head's read
			}
			if len(fs) < 3 || fs[0].After != firstAfter {
				t.Fatalf("ledger reads %+v, want the first after %d and one per wake", fs, firstAfter)
			}
			for _, f := range fs[1:] {
				if f.After < 3 {
					t.Errorf("a read after the first did not start past the entries read: %+v", f)
				}
			}
		})
	}
}
