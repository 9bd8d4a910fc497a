package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

var _ store.Loader = (*Store)(nil)

// Load implements store.Loader: snap goes into this empty store in one
// transaction, the ledger entries byte for byte as sealed.
func (s *Store) Load(ctx context.Context, snap store.Snapshot) error {
	return s.mutate(ctx, func(ts *txState) error {
		var used bool
		if err := ts.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agent_ls_records) OR EXISTS (SELECT 1 FROM agent_ls_ledger)
			OR EXISTS (SELECT 1 FROM agent_ls_proposals) OR EXISTS (SELECT 1 FROM agent_ls_summaries)
			OR EXISTS (SELECT 1 FROM agent_ls_tokens)`).Scan(&used); err != nil {
			return err
		}
		if used {
			return fmt.Errorf("load into %s: %w: the destination is not empty", s.shared.location, store.ErrConflict)
		}
		recs := make(map[string]schema.MemoryRecord, len(snap.Records))
		for _, st := range snap.Records {
			if err := insertRecord(ts, st.Rec, int64(st.Seq)); err != nil {
				return err
			}
			recs[st.Rec.ID] = st.Rec
			if int64(st.Seq) > ts.h.recSeq {
				ts.h.recSeq = int64(st.Seq)
			}
		}
		for _, p := range snap.Promotions {
			rec, ok := recs[p.RecordID]
			if !ok {
				return fmt.Errorf("load: promotion of %s: %w: no such record", p.RecordID, store.ErrInvalid)
			}
			if err := putPromotion(ts, rec, p); err != nil {
				return err
			}
		}
		for _, p := range snap.Proposals {
			if err := putProposal(ctx, ts, p, true); err != nil {
				return err
			}
		}
		for _, e := range snap.Ledger {
			b, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("load: ledger entry %d: %w", e.Seq, err)
			}
			carried := ""
			if e.Record != nil {
				carried = e.Record.ID
			}
			ts.queueLedger(int64(e.Seq), e.RecordID, carried, string(b))
			ts.h.ledgerSeq, ts.h.ledgerHash = int64(e.Seq), e.Hash
		}
		if err := loadTokens(ctx, ts, snap.Ledger); err != nil {
			return err
		}
		for _, sum := range snap.Summaries {
			b, err := json.Marshal(sum)
			if err != nil {
				return fmt.Errorf("load: overlay summary: %w", err)
			}
			ts.h.summarySeq++
			if _, err := ts.Exec(ctx, `INSERT INTO agent_ls_summaries (seq, body) VALUES ($1, $2)`, ts.h.summarySeq, string(b)); err != nil {
				return err
			}
		}
		ts.dirty = true
		return nil
	})
}
