package bolt

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Promote records a promotion row for a live record (store.CheckPromote),
// indexes it by scope and ledgers it, in one transaction.
func (s *Store) Promote(ctx context.Context, id string, req store.PromoteRequest) (store.Promotion, error) {
	now := s.nowString()
	var p store.Promotion
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		st, found, err := s.getStored(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("promote %s: %w", id, store.ErrNotFound)
		}
		if err := store.CheckPromote(&st.Rec, req.Tier, now); err != nil {
			return fmt.Errorf("promote %s: %w", id, err)
		}
		p = store.Promotion{RecordID: id, Tier: req.Tier, PromotedAt: now, Actor: req.Actor, Approver: req.Approver, Evidence: store.CloneEvidence(req.Evidence)}
		if err := s.putPromotion(tx, st.Rec, p); err != nil {
			return err
		}
		ev := store.CloneEvidence(req.Evidence)
		return s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpPromote, RecordID: id, Actor: req.Actor, Tier: req.Tier, Approver: req.Approver, Evidence: &ev})
	})
	if err != nil {
		return store.Promotion{}, err
	}
	return p, nil
}

// Demote removes a record's promotion row; the record stays valid. An
// unknown id is store.ErrNotFound; an unpromoted record is a no-op.
func (s *Store) Demote(ctx context.Context, id, reason string, actor store.Actor) error {
	now := s.nowString()
	return s.update(ctx, func(tx *bbolt.Tx) error {
		st, found, err := s.getStored(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("demote %s: %w", id, store.ErrNotFound)
		}
		var row store.Promotion
		promoted, err := getJSON(tx.Bucket(bucketPromotions), id, &row)
		if err != nil {
			return s.corrupt("promotion of %s does not decode: %v", id, err)
		}
		if !promoted {
			return nil
		}
		if err := s.dropPromotion(tx, st.Rec); err != nil {
			return err
		}
		return s.appendLedger(tx, store.LedgerEntry{At: now, Op: store.OpDemote, RecordID: id, Actor: actor, Reason: reason, Tier: row.Tier})
	})
}

// Promotion returns a record's promotion row, or store.ErrNotFound.
func (s *Store) Promotion(ctx context.Context, id string) (store.Promotion, error) {
	var p store.Promotion
	var found bool
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketPromotions)
		if b == nil {
			return nil
		}
		v := b.Get([]byte(id))
		if v == nil {
			return nil
		}
		found = true
		var err error
		decode := func(v []byte) (store.Promotion, error) {
			var p store.Promotion
			return p, json.Unmarshal(v, &p)
		}
		if s.tx == nil || s.readTx {
			p, err = decode(v)
		} else {
			p, err = s.cache.promotion(id, v, decode)
		}
		if err != nil {
			return s.corrupt("promotion of %s does not decode: %v", id, err)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return store.Promotion{}, err
	}
	if !found {
		return store.Promotion{}, fmt.Errorf("promotion of %s: %w", id, store.ErrNotFound)
	}
	return p, nil
}

// Promoted returns the valid promoted records of scope for agent, newest
// first. With a non-empty filter it reads only the promoted-scope index
// under the filter's first pair, whose values are copies of the records, so
// its cost grows with the promoted records sharing that pair, not with the
// store. An empty filter reads every promotion row.
func (s *Store) Promoted(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	filter, mine := store.AgentFilter(scope, agent)
	if len(filter) == 0 {
		return s.indexed(ctx, bucketPromotions, bucketPScope, scope, agent, func(*bbolt.Tx, string) bool { return true })
	}
	now := s.nowString()
	keys := sortedKeys(filter)
	prefix := scopePrefix(keys[0], filter[keys[0]])
	var hits []*store.Stored
	keep := func(raw []rawRecord) {
		sts, oks := decodeAll(raw)
		for i := range sts {
			if !oks[i] {
				s.logger.Warn("skipped promoted record that does not decode", "store", s.path, "id", string(raw[i].key))
				continue
			}
			if st := &sts[i]; st.Rec.Valid(now) && store.MatchScope(st.Rec.Scope, filter) && mine(st.Rec.Scope) {
				hits = append(hits, st)
			}
		}
	}
	// The matches lie under one prefix of pscope: a few pages, read with
	// pread when they are few (scanPages), else through bbolt.
	var raw []rawRecord
	ok, err := s.scanPages(ctx, bucketPScope, prefix, func(k, v []byte) {
		raw = append(raw, rawRecord{k[len(prefix):], v})
	})
	if ok {
		keep(raw)
		return newest(hits), nil
	}
	if err == nil {
		err = s.view(ctx, func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketPScope)
			if b == nil {
				return nil
			}
			var raw []rawRecord
			c := b.Cursor()
			pg := newPager(tx)
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				pg.step()
				raw = append(raw, rawRecord{k[len(prefix):], v})
			}
			keep(raw)
			return nil
		})
	}
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	return newest(hits), nil
}

// Candidates returns the valid, targeted, unpromoted records of scope for
// agent, newest first, from the target index.
func (s *Store) Candidates(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	return s.indexed(ctx, bucketTargeted, bucketTScope, scope, agent, func(tx *bbolt.Tx, id string) bool {
		return tx.Bucket(bucketPromotions).Get([]byte(id)) == nil
	})
}

func (s *Store) indexed(ctx context.Context, all, byScope []byte, scope map[string]string, agent string, keep func(*bbolt.Tx, string) bool) ([]schema.MemoryRecord, error) {
	now := s.nowString()
	filter, mine := store.AgentFilter(scope, agent)
	var recs []schema.MemoryRecord
	var seqs []uint64
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		others := otherAgents(tx.Bucket(byScope), agent)
		records := tx.Bucket(bucketRecords)
		if records == nil {
			return nil
		}
		var raw []rawRecord
		rc := records.Cursor()
		pg := newPager(tx)
		eachIndexedID(tx.Bucket(all), tx.Bucket(byScope), filter, func(id []byte) {
			pg.step()
			if len(id) == 0 || others.has(id) {
				// Another agent's record: the agent-key rule drops it, so
				// it is not decoded (the keys of the scope index say so).
				return
			}
			if k, v := rc.Seek(id); v != nil && bytes.Equal(k, id) {
				raw = append(raw, rawRecord{id, v})
			}
		})
		// Decoded a chunk at a time in place into the result, the records
		// kept moved down over those dropped: the records are held once,
		// not as decoded values and again as the result (30 MB each for
		// 100k candidates).
		recs, seqs = make([]schema.MemoryRecord, len(raw)), make([]uint64, len(raw))
		oks := make([]bool, min(len(raw), decodeChunk))
		n := 0
		var share sharer
		for lo := 0; lo < len(raw); lo += decodeChunk {
			hi := min(lo+decodeChunk, len(raw))
			chunk := raw[lo:hi]
			decodeInto(chunk, recs[lo:hi], seqs[lo:hi], oks)
			for i := range chunk {
				pg.step()
				if !oks[i] {
					// A damaged record is left out, as in Search.
					s.logger.Warn("skipped record that does not decode", "store", s.path, "id", string(chunk[i].key))
					continue
				}
				r := &recs[lo+i]
				if !r.Valid(now) || !store.MatchScope(r.Scope, filter) || !mine(r.Scope) || !keep(tx, r.ID) {
					continue
				}
				share.record(r)
				recs[n], seqs[n] = *r, seqs[lo+i]
				n++
			}
		}
		// What was dropped is garbage: nothing of it stays reachable.
		clear(recs[n:])
		recs, seqs = recs[:n], seqs[:n]
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	sortNewest(recs, seqs)
	return recs, nil
}

// decodeChunk is how many records indexed decodes at a time.
const decodeChunk = 4096

// sortNewest sorts recs (with their write sequences seqs) newest first, as
// newest does, moving each record once: a stable sort of their indexes,
// then the permutation applied in place.
func sortNewest(recs []schema.MemoryRecord, seqs []uint64) {
	perm := make([]int32, len(recs))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int {
		ra, rb := &recs[a], &recs[b]
		switch {
		case ra.CreatedAt != rb.CreatedAt:
			return -strings.Compare(ra.CreatedAt, rb.CreatedAt)
		case seqs[a] != seqs[b]:
			return -cmp.Compare(seqs[a], seqs[b])
		}
		return 0
	})
	// Position i takes recs[perm[i]]: follow each cycle once.
	for i := range perm {
		if perm[i] < 0 {
			continue
		}
		tmp := recs[i]
		j := i
		for {
			k := int(perm[j])
			perm[j] = -1
			if k == i {
				recs[j] = tmp
				break
			}
			recs[j] = recs[k]
			j = k
		}
	}
}

// otherIDs answers, for ids asked in increasing order, whether the scope
// index files an id under an agent key other than one agent (and not
// empty): records the agent-key rule excludes. It walks one cursor per
// other agent along with the ids asked, instead of collecting every other
// agent's ids (with a million records, a set of them was most of a
// read's memory).
type otherIDs struct {
	agents []agentIDs
}

// agentIDs is one other agent's run of the scope index: its keys are
// prefix + id, in id order.
type agentIDs struct {
	c      *bbolt.Cursor
	prefix []byte
	id     []byte // the id at the cursor; nil when the run is done
}

// otherAgents returns the other agents' runs of the scope index byScope
// for agent.
func otherAgents(byScope *bbolt.Bucket, agent string) *otherIDs {
	o := &otherIDs{}
	if byScope == nil {
		return o
	}
	prefix := []byte(store.AgentKey + "=")
	c := byScope.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); {
		v, _, ok := bytes.Cut(k[len(prefix):], []byte{0})
		if !ok {
			k, _ = c.Next()
			continue
		}
		run := append(append(bytes.Clone(prefix), v...), 0)
		if len(v) > 0 && string(v) != agent {
			a := agentIDs{c: byScope.Cursor(), prefix: run}
			a.at(a.c.Seek(run))
			o.agents = append(o.agents, a)
		}
		// The next agent's run: past every key of this one (a value holds
		// no NUL).
		past := bytes.Clone(run)
		past[len(past)-1] = 1
		k, _ = c.Seek(past)
	}
	return o
}

// at sets the run's current id from the key k its cursor is at.
func (a *agentIDs) at(k, _ []byte) {
	if k == nil || !bytes.HasPrefix(k, a.prefix) {
		a.id = nil
		return
	}
	a.id = k[len(a.prefix):]
}

// has reports whether another agent's run holds id. Calls must ask for
// increasing ids.
func (o *otherIDs) has(id []byte) bool {
	found := false
	for i := range o.agents {
		a := &o.agents[i]
		// A few steps along the run, then a seek.
		for n := 0; a.id != nil && bytes.Compare(a.id, id) < 0; n++ {
			if n == 4 {
				a.at(a.c.Seek(append(bytes.Clone(a.prefix), id...)))
				break
			}
			a.at(a.c.Next())
		}
		if a.id != nil && bytes.Equal(a.id, id) {
			found = true
		}
	}
	return found
}

// newest returns the records of hits newest first (store.SortNewest's
// order), sorting the pointers rather than the records.
func newest(hits []*store.Stored) []schema.MemoryRecord {
	sort.SliceStable(hits, func(i, j int) bool { return store.Newer(hits[i], hits[j]) })
	out := make([]schema.MemoryRecord, len(hits))
	for i, h := range hits {
		out[i] = h.Rec
	}
	return out
}

// putPromotion writes a promotion row and its scope index entries, each a
// copy of the stored record.
func (s *Store) putPromotion(tx *bbolt.Tx, rec schema.MemoryRecord, p store.Promotion) error {
	b := tx.Bucket(bucketPromotions)
	if err := putJSON(b, []byte(rec.ID), p); err != nil {
		return fmt.Errorf("store promotion of %s: %w", rec.ID, err)
	}
	v := append([]byte(nil), tx.Bucket(bucketRecords).Get([]byte(rec.ID))...)
	return putScopeValues(tx.Bucket(bucketPScope), rec, v)
}

// dropPromotion removes a promotion row (if any) and its index entries.
func (s *Store) dropPromotion(tx *bbolt.Tx, rec schema.MemoryRecord) error {
	return dropIndex(tx.Bucket(bucketPromotions), tx.Bucket(bucketPScope), rec)
}
