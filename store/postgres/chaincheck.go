package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/agent-ls/agent-ls/store"
)

// chainState is how far a store handle has verified the ledger: entries
// 1..seq chain link by link and entry seq has hash. It is shared by the
// handle's transactions.
type chainState struct {
	mu   sync.Mutex
	id   string // the store id it was verified on
	seq  int64
	hash string
}

// chainCheckSQL finds, on the server, the first entry from $1 on that does
// not verify in the layout store.SealEntryJSON writes (`{"seq":N,` ...
// `"prevHash":"P","hash":"H"}` with H the sha256 of the bytes with H
// emptied), so a check costs the server's hashing, not the ledger's bytes on
// the wire. The entry at $1 must have hash $2 ($1 = 1 with an empty $2 checks the
// whole chain from its first entry, whose prevHash is empty). It returns
// the first bad seq (NULL when none), and the last entry's seq and hash.
const chainCheckSQL = `
WITH l AS (
	SELECT seq, body,
		substr(body, length(body) - 65, 64) AS h,
		left(body, greatest(length(body) - 66, 0)) AS p,
		row_number() OVER (ORDER BY seq) AS n
	FROM agent_ls_ledger WHERE seq >= $1
), c AS (
	SELECT l.*, lag(h) OVER (ORDER BY seq) AS prev FROM l
)
SELECT
	(SELECT min(seq) FROM c WHERE NOT coalesce(
		seq = $1 + n - 1
		AND length(body) > 100 AND right(body, 2) = '"}'
		AND starts_with(body, '{"seq":' || seq || ',')
		AND encode(sha256(convert_to(p || '"}', 'UTF8')), 'hex') = h
		AND CASE
			WHEN n > 1 THEN right(p, 86) = '"prevHash":"' || prev || '","hash":"'
			WHEN $2 = '' THEN right(p, 22) = '"prevHash":"","hash":"'
			ELSE h = $2
		END, false)),
	(SELECT seq FROM c ORDER BY seq DESC LIMIT 1),
	(SELECT h FROM c ORDER BY seq DESC LIMIT 1)`

// checkChain refuses a write onto a ledger that does not verify, as the
// file store does: the entries appended since this handle last verified
// (all of them, the first time) are checked link by link on the server,
// and the last one must be the head the transaction locked. An entry in
// another layout (none that agent-ls writes) is checked here instead, with
// store.CheckSealedJSON. The error is a *store.ChainError.
func (s *Store) checkChain(ctx context.Context, ts *txState) error {
	cs := &s.shared.chain
	cs.mu.Lock()
	from, fromHash := cs.seq, cs.hash
	if cs.id != ts.h.storeID || from > ts.h.ledgerSeq {
		from, fromHash = 0, "" // another store, or a shorter ledger: all of it
	}
	cs.mu.Unlock()
	if ts.h.ledgerSeq == 0 && from == 0 {
		var n int64
		if err := ts.QueryRow(ctx, `SELECT count(*) FROM agent_ls_ledger`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return s.chainError(store.CheckLedgerHead(uint64(n), "", 0, ""))
		}
		return nil
	}
	start := max(from, 1)
	var bad, lastSeq *int64
	var lastHash *string
	if err := ts.QueryRow(ctx, chainCheckSQL, start, fromHash).Scan(&bad, &lastSeq, &lastHash); err != nil {
		return err
	}
	seq, hash := int64(0), ""
	if lastSeq != nil && lastHash != nil {
		seq, hash = *lastSeq, *lastHash
	}
	if bad != nil {
		var err error
		if seq, hash, err = s.checkChainHere(ctx, ts, *bad, start, fromHash); err != nil {
			return s.chainError(err)
		}
	}
	if from > 0 && (seq < from) {
		return s.chainError(&store.LedgerError{Seq: uint64(from), Reason: "the entry this process verified is gone (entries removed from the end)"})
	}
	if err := store.CheckLedgerHead(uint64(seq), hash, uint64(ts.h.ledgerSeq), ts.h.ledgerHash); err != nil {
		return s.chainError(err)
	}
	cs.mu.Lock()
	cs.id, cs.seq, cs.hash = ts.h.storeID, seq, hash
	cs.mu.Unlock()
	return nil
}

// checkChainHere checks, with store.CheckSealedJSON, the entries from bad
// on (the server found bad not in agent-ls's layout or broken), after
// taking the hash of the entry before it. start and fromHash are where the
// server's check began. It returns the last entry's seq and hash.
func (s *Store) checkChainHere(ctx context.Context, ts *txState, bad, start int64, fromHash string) (int64, string, error) {
	prev := ""
	if bad > 1 {
		var body []byte
		err := ts.QueryRow(ctx, `SELECT body FROM agent_ls_ledger WHERE seq = $1`, bad-1).Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, "", &store.LedgerError{Seq: uint64(bad - 1), Reason: "missing (entries removed)"}
		} else if err != nil {
			return 0, "", err
		}
		e, ok, err := store.EntryFromJSON(body)
		if err != nil || !ok {
			return 0, "", &store.LedgerError{Seq: uint64(bad - 1), Reason: "hash does not match its content (entry edited)"}
		}
		prev = e.Hash
	}
	rows, err := ts.Query(ctx, `SELECT seq, body FROM agent_ls_ledger WHERE seq >= $1 ORDER BY seq`, bad)
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	want, hash := bad, prev
	for rows.Next() {
		var seq int64
		var body []byte
		if err := rows.Scan(&seq, &body); err != nil {
			return 0, "", err
		}
		if seq != want {
			return 0, "", &store.LedgerError{Seq: uint64(want), Reason: fmt.Sprintf("found entry %d at position %d (entries removed or reordered)", seq, want)}
		}
		if seq == start && start > 1 && fromHash != "" {
			e, ok, err := store.EntryFromJSON(body)
			if err != nil || !ok || e.Hash != fromHash {
				return 0, "", &store.LedgerError{Seq: uint64(seq), Reason: "hash does not match the entry this process verified (entry edited)"}
			}
			hash = e.Hash
		} else if hash, err = store.CheckSealedJSON(body, uint64(seq), hash); err != nil {
			return 0, "", err
		}
		want++
	}
	if err := rows.Err(); err != nil {
		return 0, "", err
	}
	return want - 1, hash, nil
}

func (s *Store) chainError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store %s: %w", s.shared.location, store.AsChainError(err))
}
