package memstore

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// EachLedger implements store.Store. The entries are copied under the lock
// and fn is called without it.
func (s *Store) EachLedger(ctx context.Context, fn func(store.LedgerEntry) error) error {
	entries, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// History implements store.Store.
func (s *Store) History(ctx context.Context, ids []string, fn func(store.LedgerEntry) error) error {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	return s.EachLedger(ctx, func(e store.LedgerEntry) error {
		if want[e.RecordID] || (e.Record != nil && want[e.Record.ID]) {
			return fn(e)
		}
		return nil
	})
}

// Promotions implements store.Store.
func (s *Store) Promotions(ctx context.Context, ids []string) (map[string]store.Promotion, error) {
	if _, _, err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make(map[string]store.Promotion, len(ids))
	for _, id := range ids {
		if p, ok := s.promotions[id]; ok {
			out[id] = clonePromotion(p)
		}
	}
	return out, nil
}

var _ store.Loader = (*Store)(nil)

// Load implements store.Loader.
func (s *Store) Load(ctx context.Context, snap store.Snapshot) error {
	if _, _, err := s.wlock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if len(s.records)+len(s.ledger)+len(s.proposals)+len(s.summaries) > 0 {
		return fmt.Errorf("load: %w: the destination is not empty", store.ErrConflict)
	}
	for _, st := range snap.Records {
		s.records[st.Rec.ID] = &store.Stored{Rec: store.CloneRecord(st.Rec), Seq: st.Seq}
		s.seq = max(s.seq, st.Seq)
	}
	for _, p := range snap.Promotions {
		s.promotions[p.RecordID] = clonePromotion(p)
	}
	for _, p := range snap.Proposals {
		s.proposals[p.ID] = cloneProposal(p)
	}
	for _, e := range snap.Ledger {
		s.ledger = append(s.ledger, store.CloneEntry(e))
	}
	for _, sum := range snap.Summaries {
		s.summaries = append(s.summaries, store.CloneSummary(sum))
	}
	for _, t := range store.ReplayTokens(snap.Ledger) {
		s.tokens[t.ID] = t
	}
	s.changes++
	return nil
}

// Vouch implements store.Reader: each record as given is replayed against
// the ledger entries about it (store.VouchRecord) with its promotion row.
func (s *Store) Vouch(ctx context.Context, recs []schema.MemoryRecord) error {
	if _, _, err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, r := range recs {
		var entries []store.LedgerEntry
		for _, e := range s.ledger {
			if store.MatchLedger(e, store.LedgerFilter{RecordID: r.ID}) {
				entries = append(entries, e)
			}
		}
		var prom *store.Promotion
		if p, ok := s.promotions[r.ID]; ok {
			prom = &p
		}
		if err := store.VouchRecord(r, prom, entries); err != nil {
			return err
		}
	}
	return nil
}
