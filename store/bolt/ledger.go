package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Ledger lists ledger entries matching f in sequence order. With a
// positive Limit it reads the ledger newest first and stops at the
// Limit-th match, so `memory ledger --limit 10` decodes ten entries of a
// large ledger, not all of them (an older entry that does not decode is
// then not read either). f.After starts the read past the entries it
// skips, unread; a filtered read keeps only the matches in memory, and
// decodes only the entries whose op, time and record may match
// (ledgerSkip).
func (s *Store) Ledger(ctx context.Context, f store.LedgerFilter) ([]store.LedgerEntry, error) {
	if f.Limit > 0 {
		return s.ledgerTail(ctx, f)
	}
	if f.After == 0 && f.Before == 0 && f.Since == "" && f.Until == "" && f.RecordID == "" && len(f.Ops) == 0 {
		return s.ledger(ctx)
	}
	r := newFilterRead(s, f)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		if b == nil {
			return nil
		}
		pg := newPager(tx)
		c := b.Cursor()
		k, v := c.First()
		if f.After > 0 {
			k, v = c.Seek(u64(f.After + 1))
		}
		for ; k != nil && (f.Before == 0 || len(k) != 8 || be64(k) < f.Before); k, v = c.Next() {
			pg.step()
			if err := r.visit(ctx, k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	return r.out, nil
}

// ledgerTail is Ledger with a positive f.Limit: the last f.Limit matches.
func (s *Store) ledgerTail(ctx context.Context, f store.LedgerFilter) ([]store.LedgerEntry, error) {
	r := newFilterRead(s, f)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		var k, v []byte
		if f.Before == 0 {
			k, v = c.Last()
		} else if k, _ = c.Seek(u64(f.Before)); k == nil {
			k, v = c.Last() // every key is before Before
		} else {
			k, v = c.Prev() // the last key before the first at or past Before
		}
		for ; k != nil && len(r.out) < f.Limit && (len(k) != 8 || be64(k) > f.After); k, v = c.Prev() {
			if err := r.visit(ctx, k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	slices.Reverse(r.out)
	return r.out, nil
}

// filterRead is what both ledger loops of a filtered read share: each
// entry visited is checked, skipped unread when it cannot match
// (ledgerSkip), else decoded and kept when it matches.
type filterRead struct {
	s   *Store
	f   store.LedgerFilter
	sk  ledgerSkip
	n   int
	out []store.LedgerEntry
}

func newFilterRead(s *Store, f store.LedgerFilter) *filterRead {
	return &filterRead{s: s, f: f, sk: newLedgerSkip(f)}
}

// visit reads the entry stored under key k with value v.
func (r *filterRead) visit(ctx context.Context, k, v []byte) error {
	if r.n++; r.n%ctxCheckEvery == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if len(k) != 8 {
		return r.s.corrupt("ledger key %x is not a sequence", k)
	}
	if r.sk.skip(v) {
		return nil
	}
	var e store.LedgerEntry
	if err := unmarshalEntry(v, &e); err != nil {
		return r.s.corrupt("ledger entry %d does not decode: %v", be64(k), err)
	}
	if store.MatchLedger(e, r.f) {
		r.out = append(r.out, e)
	}
	return nil
}

// ctxCheckEvery is how many ledger entries a scan reads between checks of
// its context: a cancelled request (or the server's exit) ends a scan of a
// large ledger within a few hundred entries.
const ctxCheckEvery = 256

// EachLedger passes every ledger entry, oldest first, to fn in one read
// transaction without collecting them: a caller that keeps a few entries of
// a large ledger holds only those. An error from fn ends the scan and is
// returned.
func (s *Store) EachLedger(ctx context.Context, fn func(store.LedgerEntry) error) error {
	n := 0
	checked := func(e store.LedgerEntry) error {
		if n++; n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fn(e)
	}
	err := s.view(ctx, func(tx *bbolt.Tx) error { return s.eachLedger(tx, checked) })
	if err != nil && !errors.Is(err, errNoFile) {
		return err
	}
	return nil
}

// EachLedgerOf is EachLedger for the entries of some records: fn gets,
// oldest first, the entries whose record id or carried record's id (the
// rule of store.MatchLedger) satisfies want. Only those are decoded in full:
// the history of one agent's records in a ledger of 100k entries does not
// cost a decode of every other record the ledger carries.
func (s *Store) EachLedgerOf(ctx context.Context, want func(id string) bool, fn func(store.LedgerEntry) error) error {
	// want is asked for every entry: a cancelled ctx makes it pass the next
	// entry to checked, which ends the scan with ctx's error.
	n, stop := 0, false
	wantOrStop := func(id string) bool {
		if n++; n%ctxCheckEvery == 0 && ctx.Err() != nil {
			stop = true
		}
		return stop || want(id)
	}
	checked := func(e store.LedgerEntry) error {
		if stop {
			return ctx.Err()
		}
		return fn(e)
	}
	err := s.view(ctx, func(tx *bbolt.Tx) error { return s.eachLedgerOf(tx, wantOrStop, checked) })
	if err != nil && !errors.Is(err, errNoFile) {
		return err
	}
	return nil
}

// Verify checks the ledger's hash chain, then replays it and compares the
// result with everything stored: every record field, promotion row and
// proposal, and every index (targeted, tscope, tkey, pscope with its record
// copies, ledgerof). A broken chain is a *store.LedgerError naming the
// first bad entry; stored content the ledger does not vouch for is a
// *store.StateError listing each difference with its id. Both wrap
// store.ErrCorrupt. A head recorded in the file's meta bucket at every
// append also catches entries removed from the end of the chain. The cost
// is linear in the store.
//
// Its outcome is kept in the file (meta key verifyFailed, store.VerifyMark):
// after a failure no write lands, through any handle or process, until a
// verification passes again.
func (s *Store) Verify(ctx context.Context) error {
	var mark string
	err := s.verify(ctx, &mark)
	if want, set := store.VerifyMark(err); set && want != mark && s.tx == nil && !s.readTx && !s.opts.ReadOnly {
		if uerr := s.recordMark(ctx, want); uerr != nil {
			return errors.Join(err, uerr)
		}
	}
	return err
}

// RecordVerify implements store.VerifyRecorder, for a Verify run on a
// View's Reader. A handle opened read-only (a shared lock) cannot write
// the file and records nothing.
func (s *Store) RecordVerify(ctx context.Context, err error) error {
	want, set := store.VerifyMark(err)
	if !set || s.tx != nil || s.readTx || s.opts.ReadOnly {
		return nil
	}
	var mark string
	if verr := s.view(ctx, func(tx *bbolt.Tx) error {
		if m := tx.Bucket(bucketMeta); m != nil {
			mark = string(m.Get(keyVerifyFailed))
		}
		return nil
	}); verr != nil || mark == want {
		return nil
	}
	return s.recordMark(ctx, want)
}

func (s *Store) recordMark(ctx context.Context, want string) error {
	err := s.update(context.WithValue(ctx, markWrite{}, true), func(tx *bbolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if want == "" {
			return m.Delete(keyVerifyFailed)
		}
		return m.Put(keyVerifyFailed, []byte(want))
	})
	// A broken chain refuses this write as it refuses every other: the
	// chain check keeps such a store from taking writes anyway.
	if err != nil && !errors.Is(err, store.ErrCorrupt) {
		return fmt.Errorf("verify store %s: record the verification's outcome: %w", s.path, err)
	}
	return nil
}

// markWrite marks the context of the write that records a verification's
// outcome: the only write a failed verification's mark lets through.
type markWrite struct{}

func (s *Store) verify(ctx context.Context, mark *string) error {
	var chainErr error
	var diffs []store.Difference
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		if m := tx.Bucket(bucketMeta); m != nil {
			*mark = string(m.Get(keyVerifyFailed))
		}
		// The chain and its head, from the stored bytes.
		if err := s.checkChain(tx); err != nil {
			var le *store.LedgerError
			if !errors.As(err, &le) {
				return err
			}
			chainErr = le
			return nil
		}
		entries, err := s.allLedger(tx)
		if err != nil {
			return err
		}
		diffs = s.verifyState(tx, entries)
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return err
	}
	if chainErr != nil {
		return fmt.Errorf("verify store %s: %w", s.path, chainErr)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("verify store %s: %w", s.path, &store.StateError{Diffs: diffs})
	}
	return nil
}

// StateAt rebuilds the valid promoted records at time at from the ledger
// alone (store.ReplayState).
func (s *Store) StateAt(ctx context.Context, at string) ([]schema.MemoryRecord, error) {
	at, err := store.CanonicalTime(at)
	if err != nil {
		return nil, fmt.Errorf("state at: %w", err)
	}
	entries, err := s.ledger(ctx)
	if err != nil {
		return nil, err
	}
	// A replay rests on the chain up to at: it must verify.
	if err := store.VerifyUpTo(entries, at); err != nil {
		return nil, s.chainError(err)
	}
	return store.ReplayState(entries, at), nil
}

func (s *Store) ledger(ctx context.Context) ([]store.LedgerEntry, error) {
	var entries []store.LedgerEntry
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		entries, err = s.allLedger(tx)
		return err
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	return entries, nil
}

// AppendOverlaySummary stores an instantiate summary and drops the oldest
// beyond the retention bound, in one transaction.
func (s *Store) AppendOverlaySummary(ctx context.Context, sum store.OverlaySummary) error {
	if sum.At == "" {
		sum.At = s.nowString()
	}
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSummaries)
		b.FillPercent = appendFill
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		if err := putJSON(b, u64(seq), sum); err != nil {
			return fmt.Errorf("store overlay summary: %w", err)
		}
		// Keys are contiguous sequences trimmed from the front, so the
		// count is last - first + 1.
		c := b.Cursor()
		for k, _ := c.First(); len(k) == 8 && seq-be64(k)+1 > uint64(s.retention); k, _ = c.First() {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// OverlaySummaries returns the newest summaries first, up to limit (0 = all
// kept). Summaries that do not decode are left out.
func (s *Store) OverlaySummaries(ctx context.Context, limit int) ([]store.OverlaySummary, error) {
	var out []store.OverlaySummary
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSummaries)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			var sum store.OverlaySummary
			if json.Unmarshal(v, &sum) != nil {
				continue
			}
			out = append(out, sum)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	return out, nil
}

// ledgerSkip decides, from an entry's stored bytes and without decoding
// it, that the entry cannot pass a filter: its op or time, read where
// json.Marshal puts them first (`{"seq":…,"at":"…","op":"…"`), do not
// match, or the record id the filter names appears nowhere in its bytes
// (an id JSON writes as it is, so an entry about that record, or carrying
// it, holds it). Any other shape is not skipped: the caller decodes the
// entry and filters it. A read that skips an entry does not read it (as
// a limited read does not read the entries past its limit); the chain
// check reads every entry.
type ledgerSkip struct {
	f  store.LedgerFilter
	id []byte // f.RecordID when JSON writes it unchanged, else nil
}

func newLedgerSkip(f store.LedgerFilter) ledgerSkip {
	sk := ledgerSkip{f: f}
	if f.RecordID != "" && writtenAsIs(f.RecordID) {
		sk.id = []byte(f.RecordID)
	}
	return sk
}

// writtenAsIs reports whether json.Marshal writes s's bytes unchanged
// inside its quotes: printable ASCII other than '"', '\\', '<', '>', '&'.
func writtenAsIs(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// skip reports whether the stored entry v cannot pass the filter.
func (sk ledgerSkip) skip(v []byte) bool {
	if sk.id != nil && !bytes.Contains(v, sk.id) {
		return true
	}
	f := sk.f
	if len(f.Ops) == 0 && f.Since == "" && f.Until == "" {
		return false
	}
	d := recordDecoder{data: v}
	var seq uint64
	if !d.next('{') {
		return false
	}
	if k, ok := d.raw(); !ok || string(k) != "seq" || !d.next(':') || !d.uint(&seq) || !d.next(',') {
		return false
	}
	at, ok := d.raw()
	if !ok || string(at) != "at" || !d.next(':') {
		return false
	}
	if at, ok = d.raw(); !ok || !d.next(',') {
		return false
	}
	op, ok := d.raw()
	if !ok || string(op) != "op" || !d.next(':') {
		return false
	}
	if op, ok = d.raw(); !ok {
		return false
	}
	if f.Since != "" && string(at) < f.Since || f.Until != "" && string(at) > f.Until {
		return true
	}
	return len(f.Ops) > 0 && !slices.ContainsFunc(f.Ops, func(o store.Op) bool { return string(o) == string(op) })
}
