package evolve

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Reconciliation cache. A save reconciles against every live record of its
// target and a judgment's contradiction check reads the promoted lines of
// its domain; asking the store each time costs a search that decodes every
// record of the slot, so a slot's cost grows with the records in it. An
// engine therefore keeps, across SaveBatch calls, the lines of the targets
// it searched: what reconciliation and the contradiction check read of a
// record, never the whole record.
//
// The cache describes the store as one commit left it: it is stamped with
// the store's ViewStamp (store.Stamper) after the SaveBatch that built it
// committed, and a later batch uses it only when its transaction starts
// from that very stamp, i.e. nobody (another handle, process or operation)
// committed in between. Inside the batch, every mutation goes through
// cachedView, which updates or drops what it changes. A batch that fails
// drops the cache. Validity and expiry are judged at each read with the
// view's clock, as the store's search does.

// maxCachedLines bounds the lines an engine keeps; past it the cache
// starts over.
const maxCachedLines = 1 << 16

// line is what reconciliation and the contradiction check read of a record
// of a target in the engine's view.
type line struct {
	id, content, createdAt string
	invalidAt, expiresAt   string
	promoted               bool
	// lesson and whole are lessonKeys of the record's payload.
	lesson, whole string
	// rec is the whole record when the line was read without the cache.
	rec *schema.MemoryRecord
}

// valid is schema.MemoryRecord.Valid for a line.
func (l *line) valid(now string) bool {
	return (l.invalidAt == "" || l.invalidAt > now) && (l.expiresAt == "" || l.expiresAt > now)
}

func lineOf(r *schema.MemoryRecord, promoted bool) line {
	l := line{id: r.ID, content: r.Content, createdAt: r.CreatedAt, invalidAt: r.InvalidAt, expiresAt: r.ExpiresAt, promoted: promoted}
	l.lesson, l.whole = lessonKeys(r.Target, r.Payload)
	return l
}

// slot is every record of one target in the engine's view, invalidated ones
// included, except those already expired at loadedAt (the store's search
// never returns them), in the store's listing order: createdAt descending,
// the later write first.
type slot struct {
	loadedAt string
	lines    []line
}

// lineCache is the cache of one engine, valid for the store state stamped
// stamp. It is used by one batch at a time (lineShelf).
type lineCache struct {
	stamp string
	slots map[schema.MemoryTarget]*slot
	// where maps the id of every cached line to its target.
	where map[string]schema.MemoryTarget
	n     int
	// now is the batch view's clock; broken is set when a mutation of the
	// batch failed: the cache is then bypassed and never kept.
	now    func() time.Time
	broken bool
}

func newLineCache() *lineCache {
	return &lineCache{slots: map[schema.MemoryTarget]*slot{}, where: map[string]schema.MemoryTarget{}}
}

// drop forgets the slot that holds id, if any.
func (c *lineCache) drop(id string) {
	t, ok := c.where[id]
	if !ok {
		return
	}
	c.dropSlot(t)
}

func (c *lineCache) dropSlot(t schema.MemoryTarget) {
	sl := c.slots[t]
	if sl == nil {
		return
	}
	for _, l := range sl.lines {
		delete(c.where, l.id)
	}
	c.n -= len(sl.lines)
	delete(c.slots, t)
}

func (c *lineCache) reset() {
	clear(c.slots)
	clear(c.where)
	c.n = 0
}

// add caches a freshly loaded slot.
func (c *lineCache) add(t schema.MemoryTarget, sl *slot) {
	c.dropSlot(t)
	if c.n+len(sl.lines) > maxCachedLines {
		c.reset()
	}
	c.slots[t] = sl
	for _, l := range sl.lines {
		c.where[l.id] = t
	}
	c.n += len(sl.lines)
}

// written records a record the batch just wrote (the store's latest
// write) in its slot, if that slot is cached.
func (c *lineCache) written(r *schema.MemoryRecord) {
	if r.Target == nil {
		return
	}
	sl := c.slots[*r.Target]
	if sl == nil {
		return
	}
	// The latest write lists before every record of its createdAt or an
	// earlier one.
	i := 0
	for i < len(sl.lines) && sl.lines[i].createdAt > r.CreatedAt {
		i++
	}
	sl.lines = slices.Insert(sl.lines, i, lineOf(r, false))
	c.where[r.ID] = *r.Target
	c.n++
}

// setPromoted records a promotion or demotion of id.
func (c *lineCache) setPromoted(id string, promoted bool) {
	t, ok := c.where[id]
	if !ok {
		return
	}
	sl := c.slots[t]
	for i := range sl.lines {
		if sl.lines[i].id == id {
			sl.lines[i].promoted = promoted
			return
		}
	}
}

// lineShelf holds an engine's cache between batches: a batch takes it and
// puts it back, stamped, once committed.
type lineShelf struct {
	mu sync.Mutex
	c  *lineCache
}

// take returns the shelved cache when it describes the state stamped base,
// else an empty one; either way the shelf is left empty.
func (s *lineShelf) take(base string) *lineCache {
	s.mu.Lock()
	c := s.c
	s.c = nil
	s.mu.Unlock()
	if c == nil || c.stamp != base {
		c = newLineCache()
	}
	return c
}

// put shelves c as the cache of the state stamped stamp.
func (s *lineShelf) put(c *lineCache, stamp string) {
	c.stamp, c.now, c.broken = stamp, nil, false
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

// eachLine calls fn with the lines of target t in this engine's view that
// are valid now (promoted ones only with promotedOnly), in the store's
// listing order (newest first), until fn returns false. fn must neither
// keep nor change l. Without a cache the lines come from a search and carry their records.
func (e *Engine) eachLine(ctx context.Context, t schema.MemoryTarget, promotedOnly bool, fn func(l *line) bool) error {
	c := e.lc
	if c == nil || c.broken {
		qt := t
		res, err := e.st.Search(ctx, store.Query{Scope: e.base, Target: &qt, PromotedOnly: promotedOnly, Limit: store.Limit(store.Unlimited)})
		if err != nil {
			if promotedOnly {
				return fmt.Errorf("search promoted %s: %w", t, err)
			}
			return fmt.Errorf("search %s: %w", t, err)
		}
		ls := make([]line, 0, len(res.Records))
		for i := range res.Records {
			if r := &res.Records[i]; e.visible(r) {
				ls = append(ls, lineOf(r, promotedOnly))
				ls[len(ls)-1].rec = r
			}
		}
		for i := range ls {
			if !fn(&ls[i]) {
				return nil
			}
		}
		return nil
	}
	now := schema.FormatTime(c.now())
	sl := c.slots[t]
	if sl == nil || now < sl.loadedAt {
		var err error
		if sl, err = e.loadSlot(ctx, t); err != nil {
			return err
		}
		c.add(t, sl)
		now = schema.FormatTime(c.now())
		if now < sl.loadedAt {
			now = sl.loadedAt
		}
	}
	for i := range sl.lines {
		l := &sl.lines[i]
		if l.valid(now) && (!promotedOnly || l.promoted) && !fn(l) {
			return nil
		}
	}
	return nil
}

// loadSlot reads every record of target t in this engine's view,
// invalidated ones included, with their promotion state.
func (e *Engine) loadSlot(ctx context.Context, t schema.MemoryTarget) (*slot, error) {
	q := store.Query{Scope: e.base, Target: &t, Limit: store.Limit(store.Unlimited), IncludeInvalidated: true}
	slots, err := e.readSlots(ctx, q, []schema.MemoryTarget{t})
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", t, err)
	}
	return slots[t], nil
}

// preload caches, with one search and one promotion read in all, the slots of the targets ts
// that are not cached yet, so a batch touching many slots does not pay a
// search per slot.
func (e *Engine) preload(ctx context.Context, ts []schema.MemoryTarget) error {
	c := e.lc
	if c == nil || c.broken {
		return nil
	}
	var want []schema.MemoryTarget
	for _, t := range ts {
		if c.slots[t] == nil && !slices.Contains(want, t) {
			want = append(want, t)
		}
	}
	if len(want) == 0 {
		return nil
	}
	if len(want) == 1 {
		// One slot reads as eachLine would read it.
		sl, err := e.loadSlot(ctx, want[0])
		if err != nil {
			return err
		}
		c.add(want[0], sl)
		return nil
	}
	q := store.Query{Scope: e.base, Targets: want, Limit: store.Limit(store.Unlimited), IncludeInvalidated: true}
	slots, err := e.readSlots(ctx, q, want)
	if err != nil {
		return fmt.Errorf("search %d targets: %w", len(want), err)
	}
	for _, t := range want {
		c.add(t, slots[t])
	}
	return nil
}

// readSlots runs q (a search of the targets ts, invalidated records
// included), reads the promotion rows of what it found, and splits the
// records into a slot per target, each in the store's listing order.
func (e *Engine) readSlots(ctx context.Context, q store.Query, ts []schema.MemoryTarget) (map[schema.MemoryTarget]*slot, error) {
	all, err := e.st.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(all.Records))
	for i := range all.Records {
		if r := &all.Records[i]; r.Target != nil && e.visible(r) {
			ids = append(ids, r.ID)
		}
	}
	proms, err := e.st.Promotions(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("promotions: %w", err)
	}
	// Read after both reads: a read at a time before it may miss records
	// that expired in between, so it reloads.
	loadedAt := schema.FormatTime(e.lc.now())
	slots := make(map[schema.MemoryTarget]*slot, len(ts))
	for _, t := range ts {
		slots[t] = &slot{loadedAt: loadedAt}
	}
	for i := range all.Records {
		r := &all.Records[i]
		if r.Target == nil || !e.visible(r) {
			continue
		}
		if sl := slots[*r.Target]; sl != nil {
			_, promoted := proms[r.ID]
			sl.lines = append(sl.lines, lineOf(r, promoted))
		}
	}
	return slots, nil
}

// lineRecord returns the whole record of a line.
func (e *Engine) lineRecord(ctx context.Context, l *line) (schema.MemoryRecord, error) {
	if l.rec != nil {
		return *l.rec, nil
	}
	r, err := e.st.Get(ctx, l.id)
	if err != nil {
		return r, fmt.Errorf("record %s: %w", l.id, err)
	}
	return r, nil
}

// cachedView is the batch view a caching SaveBatch works on: reads pass
// through to the store, and every mutation updates or drops the cached
// lines it changes (a failed one breaks the cache for the rest of the
// batch). It passes the store.Reader methods through; every other method
// of store.Tx must be written out here (TestCachedViewIntercepts).
type cachedView struct {
	store.Tx
	c *lineCache
	// visible is the engine's view filter (Engine.visible).
	visible func(*schema.MemoryRecord) bool
}

func (v *cachedView) failed(err error) {
	if err != nil {
		v.c.broken = true
	}
}

// Write caches the new records; a supersede drops the old record's slot.
func (v *cachedView) Write(ctx context.Context, batch []store.WriteRequest, actor store.Actor) ([]schema.MemoryRecord, error) {
	recs, err := v.Tx.Write(ctx, batch, actor)
	v.failed(err)
	if err != nil {
		return recs, err
	}
	for i := range recs {
		if batch[i].Supersedes != "" {
			v.c.drop(batch[i].Supersedes)
		}
		if v.visible(&recs[i]) {
			v.c.written(&recs[i])
		}
	}
	return recs, nil
}

// Invalidate drops the record's slot.
func (v *cachedView) Invalidate(ctx context.Context, id, reason string, actor store.Actor) error {
	err := v.Tx.Invalidate(ctx, id, reason, actor)
	v.failed(err)
	v.c.drop(id)
	return err
}

// Delete drops the record's slot.
func (v *cachedView) Delete(ctx context.Context, id string, actor store.Actor) error {
	err := v.Tx.Delete(ctx, id, actor)
	v.failed(err)
	v.c.drop(id)
	return err
}

// Corroborate changes a record's supports only, which no line holds.
func (v *cachedView) Corroborate(ctx context.Context, id string, s schema.Support, actor store.Actor) (bool, error) {
	ok, err := v.Tx.Corroborate(ctx, id, s, actor)
	v.failed(err)
	return ok, err
}

// Promote marks the record's line promoted.
func (v *cachedView) Promote(ctx context.Context, id string, req store.PromoteRequest) (store.Promotion, error) {
	p, err := v.Tx.Promote(ctx, id, req)
	v.failed(err)
	if err == nil {
		v.c.setPromoted(id, true)
	}
	return p, err
}

// Demote marks the record's line unpromoted.
func (v *cachedView) Demote(ctx context.Context, id, reason string, actor store.Actor) error {
	err := v.Tx.Demote(ctx, id, reason, actor)
	v.failed(err)
	if err == nil {
		v.c.setPromoted(id, false)
	}
	return err
}

// Propose changes proposals only.
func (v *cachedView) Propose(ctx context.Context, req store.ProposalRequest) (store.Proposal, error) {
	p, err := v.Tx.Propose(ctx, req)
	v.failed(err)
	return p, err
}

// Approve may promote, demote or invalidate the proposal's record: its
// slot is dropped.
func (v *cachedView) Approve(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	p, err := v.Tx.Approve(ctx, id, actor, reason)
	v.failed(err)
	if err == nil {
		v.c.drop(p.RecordID)
	}
	return p, err
}

// Reject changes proposals only.
func (v *cachedView) Reject(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	p, err := v.Tx.Reject(ctx, id, actor, reason)
	v.failed(err)
	return p, err
}

// ExpireProposals changes proposals only.
func (v *cachedView) ExpireProposals(ctx context.Context) ([]store.Proposal, error) {
	ps, err := v.Tx.ExpireProposals(ctx)
	v.failed(err)
	return ps, err
}

// AppendOverlaySummary changes summaries only.
func (v *cachedView) AppendOverlaySummary(ctx context.Context, s store.OverlaySummary) error {
	err := v.Tx.AppendOverlaySummary(ctx, s)
	v.failed(err)
	return err
}

// RecordConflict changes no record (a ledger entry only); a failure breaks
// the cache like any failed operation of the batch.
func (v *cachedView) RecordConflict(ctx context.Context, c store.ConflictInfo, actor store.Actor) (bool, error) {
	ok, err := v.Tx.RecordConflict(ctx, c, actor)
	v.failed(err)
	return ok, err
}

// RecordExpiry changes no record (a ledger entry only).
func (v *cachedView) RecordExpiry(ctx context.Context, id string, actor store.Actor) (bool, error) {
	ok, err := v.Tx.RecordExpiry(ctx, id, actor)
	v.failed(err)
	return ok, err
}

// CreateToken changes tokens only.
func (v *cachedView) CreateToken(ctx context.Context, t store.Token, hash string, actor store.Actor) (store.Token, error) {
	out, err := v.Tx.CreateToken(ctx, t, hash, actor)
	v.failed(err)
	return out, err
}

// RevokeToken changes tokens only.
func (v *cachedView) RevokeToken(ctx context.Context, id string, actor store.Actor) (store.Token, error) {
	out, err := v.Tx.RevokeToken(ctx, id, actor)
	v.failed(err)
	return out, err
}

// Import may add records to any slot: the cache starts over.
func (v *cachedView) Import(ctx context.Context, recs []schema.MemoryRecord, actor store.Actor) error {
	err := v.Tx.Import(ctx, recs, actor)
	v.failed(err)
	v.c.reset()
	return err
}

// Update runs fn on this view, in the same transaction.
func (v *cachedView) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return v.Tx.Update(ctx, func(store.Tx) error { return fn(v) })
}
