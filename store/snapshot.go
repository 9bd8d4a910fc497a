package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
)

// Snapshot is the whole state of a store, what a migration copies: the
// records with their write sequences, the promotion rows, the proposals as
// stored, the ledger entries as sealed and the overlay summaries (oldest
// first).
type Snapshot struct {
	Records    []Stored
	Promotions []Promotion
	Proposals  []Proposal
	Ledger     []LedgerEntry
	Summaries  []OverlaySummary
}

// Loader is implemented by the backends a migration can write to
// (store/bolt, store/postgres, store/memstore): Load writes snap into an
// empty store in one transaction, ledger entries as they are (hashes and
// sequences kept), so the destination verifies and composes exactly as
// the source. A store that holds records, proposals or ledger entries is
// ErrConflict and is left as it was.
type Loader interface {
	Load(ctx context.Context, snap Snapshot) error
}

// ReadSnapshot reads the whole state of s in one View (one snapshot, so
// the parts agree). Records come from Export (a record that does not
// decode is ErrCorrupt: a migration never drops data silently); their write
// sequences are the order of the ledger entries that created them; a
// proposal is read as stored (pending until ExpireProposals ledgers its
// expiry, even when its expiry has passed).
func ReadSnapshot(ctx context.Context, s Store) (Snapshot, error) {
	var snap Snapshot
	err := s.View(ctx, func(tx Reader) error {
		snap = Snapshot{}
		created := map[string]uint64{}
		if err := tx.EachLedger(ctx, func(e LedgerEntry) error {
			snap.Ledger = append(snap.Ledger, e)
			if e.Record != nil {
				if _, seen := created[e.Record.ID]; !seen {
					created[e.Record.ID] = uint64(len(created) + 1)
				}
			}
			return nil
		}); err != nil {
			return err
		}
		var late []int // records without a creating entry: after the others, in id order
		skipped, err := tx.Export(ctx, func(r schema.MemoryRecord) error {
			seq, ok := created[r.ID]
			if !ok {
				late = append(late, len(snap.Records))
			}
			snap.Records = append(snap.Records, Stored{Rec: r, Seq: seq})
			return nil
		})
		if err != nil {
			return err
		}
		if skipped > 0 {
			return fmt.Errorf("%w: %d record(s) do not decode; salvage them with memory export first", ErrCorrupt, skipped)
		}
		next := uint64(len(created))
		for _, i := range late {
			next++
			snap.Records[i].Seq = next
		}
		ids := make([]string, len(snap.Records))
		for i, r := range snap.Records {
			ids[i] = r.Rec.ID
		}
		rows, err := tx.Promotions(ctx, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if p, ok := rows[id]; ok {
				snap.Promotions = append(snap.Promotions, p)
			}
		}
		props, err := tx.Proposals(ctx, ProposalFilter{})
		if err != nil {
			return err
		}
		for _, p := range props {
			if p.State == ProposalExpired && p.DecidedAt == "" {
				// Expired by the clock only (ProposalStateAt): stored as pending.
				p.State = ProposalPending
			}
			snap.Proposals = append(snap.Proposals, p)
		}
		sums, err := tx.OverlaySummaries(ctx, 0)
		if err != nil {
			return err
		}
		for i := len(sums) - 1; i >= 0; i-- {
			snap.Summaries = append(snap.Summaries, sums[i])
		}
		return nil
	})
	return snap, err
}

// CopyReport counts what Copy copied.
type CopyReport struct {
	Records       int `json:"records"`
	Promotions    int `json:"promotions"`
	Proposals     int `json:"proposals"`
	LedgerEntries int `json:"ledgerEntries"`
	Summaries     int `json:"summaries"`
}

// Copy migrates the whole state of src into the empty store dst (a
// Loader): src must verify; dst must verify afterwards and read back
// exactly what was read from src (else ErrCorrupt). A dst that is not empty
// is ErrConflict, one that cannot load ErrInvalid; src is never written.
func Copy(ctx context.Context, src, dst Store) (CopyReport, error) {
	l, ok := dst.(Loader)
	if !ok {
		return CopyReport{}, fmt.Errorf("%w: the destination backend cannot be loaded", ErrInvalid)
	}
	if err := src.Verify(ctx); err != nil {
		return CopyReport{}, fmt.Errorf("the source does not verify: %w", err)
	}
	snap, err := ReadSnapshot(ctx, src)
	if err != nil {
		return CopyReport{}, fmt.Errorf("read the source: %w", err)
	}
	if err := l.Load(ctx, snap); err != nil {
		return CopyReport{}, err
	}
	if err := dst.Verify(ctx); err != nil {
		return CopyReport{}, fmt.Errorf("the destination does not verify: %w", err)
	}
	back, err := ReadSnapshot(ctx, dst)
	if err != nil {
		return CopyReport{}, fmt.Errorf("read the destination back: %w", err)
	}
	a, errA := json.Marshal(snap)
	b, errB := json.Marshal(back)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		return CopyReport{}, fmt.Errorf("%w: the destination does not read back as the source", ErrCorrupt)
	}
	return CopyReport{Records: len(snap.Records), Promotions: len(snap.Promotions), Proposals: len(snap.Proposals),
		LedgerEntries: len(snap.Ledger), Summaries: len(snap.Summaries)}, nil
}
