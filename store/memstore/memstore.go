// Package memstore is an in-memory store.Store: the same semantics as the
// bbolt backend (it is checked by the same conformance kit, store/storetest)
// without files, for fast unit tests of the layers above the store. State
// lives in mutex-protected maps and the hash-chained ledger in a slice; it is
// lost on Close.
package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Store is an in-memory store.Store, safe for concurrent use.
type Store struct {
	now       func() time.Time
	retention int

	mu         sync.Mutex
	closed     bool
	ids        *schema.IDGenerator
	seq        uint64
	records    map[string]*store.Stored
	promotions map[string]store.Promotion
	proposals  map[string]store.Proposal
	tokens     map[string]store.StoredToken
	ledger     []store.LedgerEntry
	summaries  []store.OverlaySummary // oldest first
	// changes counts the changes made (the store's stamp); an Update commit
	// counts as one. An Update's Tx (view) remembers the count it started
	// from (base) and whether it can stamp (not nested in another Update).
	changes   uint64
	base      uint64
	view      bool
	stampable bool
	// readOnly marks the Reader View hands to fn.
	readOnly bool
	// verifyFailed is the finding of the last Verify that failed (""
	// when the last one passed): no write lands while it is set.
	verifyFailed string
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Stamper = (*Store)(nil)
)

// New returns an empty store. opts.Now defaults to time.Now, opts.Entropy
// to crypto/rand and opts.SummaryRetention to 1000; the other options do not
// apply to memory.
func New(opts store.Options) *Store {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ret := opts.SummaryRetention
	if ret <= 0 {
		ret = 1000
	}
	return &Store{
		now:        now,
		retention:  ret,
		ids:        schema.NewIDGenerator(opts.Entropy),
		records:    map[string]*store.Stored{},
		promotions: map[string]store.Promotion{},
		proposals:  map[string]store.Proposal{},
		tokens:     map[string]store.StoredToken{},
	}
}

// lock takes the mutex and returns the operation's now, or an error when the
// context is done or the store closed. On error the mutex is not held.
func (s *Store) lock(ctx context.Context) (time.Time, string, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, "", err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return time.Time{}, "", store.ErrClosed
	}
	t := s.now()
	return t, schema.FormatTime(t), nil
}

// wlock is lock for a write: a View's Reader refuses every write.
func (s *Store) wlock(ctx context.Context) (time.Time, string, error) {
	t, now, err := s.lock(ctx)
	if err == nil && s.readOnly {
		s.mu.Unlock()
		return time.Time{}, "", fmt.Errorf("memstore: %w: a write in a read-only View", store.ErrForbidden)
	}
	if err == nil && s.verifyFailed != "" {
		s.mu.Unlock()
		return time.Time{}, "", fmt.Errorf("memstore: %w", store.CheckVerifyMark(s.verifyFailed))
	}
	return t, now, err
}

func (s *Store) appendLedger(e store.LedgerEntry) {
	s.changes++
	prev := ""
	if n := len(s.ledger); n > 0 {
		prev = s.ledger[n-1].Hash
	}
	s.ledger = append(s.ledger, store.SealEntry(e, uint64(len(s.ledger)+1), prev))
}

func (s *Store) newID(t time.Time) (string, error) {
	id, err := s.ids.New(t)
	if err != nil {
		return "", fmt.Errorf("memstore: %w", err)
	}
	return id, nil
}

// Write implements store.Store.
func (s *Store) Write(ctx context.Context, batch []store.WriteRequest, actor store.Actor) ([]schema.MemoryRecord, error) {
	t, now, err := s.wlock(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	superseded := map[string]int{}
	for i, req := range batch {
		if err := store.ValidateWrite(req); err != nil {
			return nil, fmt.Errorf("write batch item %d: %w", i, err)
		}
		if req.Supersedes == "" {
			continue
		}
		old, ok := s.records[req.Supersedes]
		if !ok {
			return nil, fmt.Errorf("write batch item %d: supersedes %s: %w (it must exist before the batch)", i, req.Supersedes, store.ErrNotFound)
		}
		if old.Rec.InvalidAt != "" {
			return nil, fmt.Errorf("write batch item %d: supersedes %s: %w: it is already invalid", i, req.Supersedes, store.ErrConflict)
		}
		if j, dup := superseded[req.Supersedes]; dup {
			return nil, fmt.Errorf("write batch item %d: supersedes %s: %w: item %d supersedes it too", i, req.Supersedes, store.ErrConflict, j)
		}
		superseded[req.Supersedes] = i
	}
	out := make([]schema.MemoryRecord, 0, len(batch))
	for _, req := range batch {
		id, err := s.newID(t)
		if err != nil {
			return nil, err
		}
		out = append(out, store.NewRecord(req, id, now, actor))
	}
	// Everything is checked: apply.
	for i, req := range batch {
		r := out[i]
		s.seq++
		s.records[r.ID] = &store.Stored{Rec: store.CloneRecord(r), Seq: s.seq}
		snap := store.CloneRecord(r)
		if req.Supersedes != "" {
			store.ApplySupersede(&s.records[req.Supersedes].Rec, r.ID, now)
			s.appendLedger(store.LedgerEntry{At: now, Op: store.OpSupersede, RecordID: req.Supersedes, Actor: actor, Record: &snap})
		} else {
			s.appendLedger(store.LedgerEntry{At: now, Op: store.OpWrite, RecordID: r.ID, Actor: actor, Record: &snap})
		}
	}
	return out, nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, id string) (schema.MemoryRecord, error) {
	_, _, err := s.lock(ctx)
	if err != nil {
		return schema.MemoryRecord{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok {
		return schema.MemoryRecord{}, fmt.Errorf("record %s: %w", id, store.ErrNotFound)
	}
	return store.CloneRecord(r.Rec), nil
}

// Search implements store.Store.
func (s *Store) Search(ctx context.Context, q store.Query) (store.Result, error) {
	_, now, err := s.lock(ctx)
	if err != nil {
		return store.Result{}, err
	}
	defer s.mu.Unlock()
	cands := make([]store.Stored, 0, len(s.records))
	for id, r := range s.records {
		if q.PromotedOnly {
			if _, ok := s.promotions[id]; !ok {
				continue
			}
		}
		cands = append(cands, store.Stored{Rec: store.CloneRecord(r.Rec), Seq: r.Seq})
	}
	return store.Result{Records: store.Rank(cands, q, now)}, nil
}

// Invalidate implements store.Store.
func (s *Store) Invalidate(ctx context.Context, id, reason string, actor store.Actor) error {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok {
		return fmt.Errorf("invalidate %s: %w", id, store.ErrNotFound)
	}
	if store.ApplyInvalidate(&r.Rec, now, reason) {
		s.appendLedger(store.LedgerEntry{At: now, Op: store.OpInvalidate, RecordID: id, Actor: actor, Reason: reason})
	}
	return nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, id string, actor store.Actor) error {
	if err := store.MayDelete(id, actor); err != nil {
		return err
	}
	_, now, err := s.wlock(ctx)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.records[id]; !ok {
		return fmt.Errorf("delete %s: %w", id, store.ErrNotFound)
	}
	delete(s.records, id)
	delete(s.promotions, id)
	s.appendLedger(store.LedgerEntry{At: now, Op: store.OpDelete, RecordID: id, Actor: actor})
	return nil
}

// Corroborate implements store.Store.
func (s *Store) Corroborate(ctx context.Context, id string, sup schema.Support, actor store.Actor) (bool, error) {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok {
		return false, fmt.Errorf("corroborate %s: %w", id, store.ErrNotFound)
	}
	sup, err = store.NormalizeSupport(sup, now)
	if err != nil {
		return false, fmt.Errorf("corroborate %s: %w", id, err)
	}
	if !store.ApplySupport(&r.Rec, sup, now) {
		return false, nil
	}
	s.appendLedger(store.LedgerEntry{At: now, Op: store.OpCorroborate, RecordID: id, Actor: actor, Support: &sup})
	return true, nil
}

// Promote implements store.Store.
func (s *Store) Promote(ctx context.Context, id string, req store.PromoteRequest) (store.Promotion, error) {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return store.Promotion{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok {
		return store.Promotion{}, fmt.Errorf("promote %s: %w", id, store.ErrNotFound)
	}
	if err := store.CheckPromote(&r.Rec, req.Tier, now); err != nil {
		return store.Promotion{}, fmt.Errorf("promote %s: %w", id, err)
	}
	p := store.Promotion{RecordID: id, Tier: req.Tier, PromotedAt: now, Actor: req.Actor, Approver: req.Approver, Evidence: store.CloneEvidence(req.Evidence)}
	s.promotions[id] = p
	ev := store.CloneEvidence(req.Evidence)
	s.appendLedger(store.LedgerEntry{At: now, Op: store.OpPromote, RecordID: id, Actor: req.Actor, Tier: req.Tier, Approver: req.Approver, Evidence: &ev})
	return clonePromotion(p), nil
}

// Demote implements store.Store.
func (s *Store) Demote(ctx context.Context, id, reason string, actor store.Actor) error {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.records[id]; !ok {
		return fmt.Errorf("demote %s: %w", id, store.ErrNotFound)
	}
	p, ok := s.promotions[id]
	if !ok {
		return nil
	}
	delete(s.promotions, id)
	s.appendLedger(store.LedgerEntry{At: now, Op: store.OpDemote, RecordID: id, Actor: actor, Reason: reason, Tier: p.Tier})
	return nil
}

// Promotion implements store.Store.
func (s *Store) Promotion(ctx context.Context, id string) (store.Promotion, error) {
	_, _, err := s.lock(ctx)
	if err != nil {
		return store.Promotion{}, err
	}
	defer s.mu.Unlock()
	p, ok := s.promotions[id]
	if !ok {
		return store.Promotion{}, fmt.Errorf("promotion of %s: %w", id, store.ErrNotFound)
	}
	return clonePromotion(p), nil
}

// Promoted implements store.Store.
func (s *Store) Promoted(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	_, now, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	filter, keep := store.AgentFilter(scope, agent)
	var hits []store.Stored
	for id := range s.promotions {
		r := s.records[id]
		if r != nil && r.Rec.Valid(now) && store.MatchScope(r.Rec.Scope, filter) && keep(r.Rec.Scope) {
			hits = append(hits, store.Stored{Rec: store.CloneRecord(r.Rec), Seq: r.Seq})
		}
	}
	// A record the ledger promoted whose row is missing is refused, never
	// silently left out (store.PromotedByLedger).
	byID := map[string][]store.LedgerEntry{}
	for _, e := range s.ledger {
		if _, rowed := s.promotions[e.RecordID]; (e.Op == store.OpPromote || e.Op == store.OpApprove) && !rowed {
			byID[e.RecordID] = nil
		}
	}
	if len(byID) > 0 {
		for _, e := range s.ledger {
			for id := range byID {
				if store.MatchLedger(e, store.LedgerFilter{RecordID: id}) {
					byID[id] = append(byID[id], e)
				}
			}
		}
		for _, id := range slices.Sorted(maps.Keys(byID)) {
			if store.PromotedByLedger(id, byID[id], now, filter, keep) {
				return nil, store.MissingPromotion(id)
			}
		}
	}
	return newestRecords(hits), nil
}

// Candidates implements store.Store.
func (s *Store) Candidates(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error) {
	_, now, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	filter, keep := store.AgentFilter(scope, agent)
	var hits []store.Stored
	for id, r := range s.records {
		if _, promoted := s.promotions[id]; promoted || r.Rec.Target == nil {
			continue
		}
		if r.Rec.Valid(now) && store.MatchScope(r.Rec.Scope, filter) && keep(r.Rec.Scope) {
			hits = append(hits, store.Stored{Rec: store.CloneRecord(r.Rec), Seq: r.Seq})
		}
	}
	return newestRecords(hits), nil
}

func newestRecords(hits []store.Stored) []schema.MemoryRecord {
	store.SortNewest(hits)
	out := make([]schema.MemoryRecord, len(hits))
	for i, h := range hits {
		out[i] = h.Rec
	}
	return out
}

// Propose implements store.Store.
func (s *Store) Propose(ctx context.Context, req store.ProposalRequest) (store.Proposal, error) {
	t, now, err := s.wlock(ctx)
	if err != nil {
		return store.Proposal{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.records[req.RecordID]
	if !ok {
		return store.Proposal{}, fmt.Errorf("propose %s of %s: %w", req.Kind, req.RecordID, store.ErrNotFound)
	}
	var cur *store.Promotion
	if p, ok := s.promotions[req.RecordID]; ok {
		cur = &p
	}
	for _, o := range s.proposals {
		if o.RecordID == req.RecordID && o.Kind == req.Kind && store.ProposalStateAt(o, now) == store.ProposalPending {
			return store.Proposal{}, fmt.Errorf("propose %s of %s: %w: proposal %s is already pending", req.Kind, req.RecordID, store.ErrConflict, o.ID)
		}
	}
	id, err := s.newID(t)
	if err != nil {
		return store.Proposal{}, err
	}
	p, err := store.NewProposal(req, &r.Rec, cur, id, t)
	if err != nil {
		return store.Proposal{}, fmt.Errorf("propose %s of %s: %w", req.Kind, req.RecordID, err)
	}
	s.proposals[id] = p
	s.ledgerProposal(store.OpPropose, p, req.RequestedBy, p.Reason, now)
	return cloneProposal(p), nil
}

func (s *Store) ledgerProposal(op store.Op, p store.Proposal, actor store.Actor, reason, now string) {
	snap := cloneProposal(p)
	s.appendLedger(store.LedgerEntry{At: now, Op: op, RecordID: p.RecordID, ProposalID: p.ID, Actor: actor, Reason: reason, Tier: p.Tier, Proposal: &snap})
}

// GetProposal implements store.Store.
func (s *Store) GetProposal(ctx context.Context, id string) (store.Proposal, error) {
	_, now, err := s.lock(ctx)
	if err != nil {
		return store.Proposal{}, err
	}
	defer s.mu.Unlock()
	p, ok := s.proposals[id]
	if !ok {
		return store.Proposal{}, fmt.Errorf("proposal %s: %w", id, store.ErrNotFound)
	}
	p = cloneProposal(p)
	p.State = store.ProposalStateAt(p, now)
	return p, nil
}

// Proposals implements store.Store.
func (s *Store) Proposals(ctx context.Context, f store.ProposalFilter) ([]store.Proposal, error) {
	_, now, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.Proposal
	for _, p := range s.proposals {
		p = cloneProposal(p)
		p.State = store.ProposalStateAt(p, now)
		var recScope map[string]string
		if r, ok := s.records[p.RecordID]; ok {
			recScope = r.Rec.Scope
		}
		if store.MatchProposal(p, recScope, f) {
			out = append(out, p)
		}
	}
	store.SortProposals(out)
	return out, nil
}

// Approve implements store.Store.
func (s *Store) Approve(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	if err := store.MayDecide(store.OpApprove, id, actor); err != nil {
		return store.Proposal{}, err
	}
	_, now, err := s.wlock(ctx)
	if err != nil {
		return store.Proposal{}, err
	}
	defer s.mu.Unlock()
	p, ok := s.proposals[id]
	if !ok {
		return store.Proposal{}, fmt.Errorf("approve %s: %w", id, store.ErrNotFound)
	}
	if st := store.ProposalStateAt(p, now); st != store.ProposalPending {
		return store.Proposal{}, fmt.Errorf("approve %s: %w: proposal is %s", id, store.ErrConflict, st)
	}
	r, ok := s.records[p.RecordID]
	if !ok {
		return store.Proposal{}, fmt.Errorf("approve %s: record %s: %w", id, p.RecordID, store.ErrNotFound)
	}
	if p.Kind == store.ProposePromote {
		if err := store.CheckPromote(&r.Rec, p.Tier, now); err != nil {
			return store.Proposal{}, fmt.Errorf("approve %s: %w", id, err)
		}
	}
	p = store.DecideProposal(p, store.ProposalApproved, actor, reason, now)
	if store.ApplyApproval(&r.Rec, p, now) {
		s.promotions[p.RecordID] = store.ApprovedPromotion(p, actor, now)
	} else {
		delete(s.promotions, p.RecordID)
	}
	s.proposals[id] = p
	s.ledgerProposal(store.OpApprove, p, actor, reason, now)
	return cloneProposal(p), nil
}

// Reject implements store.Store.
func (s *Store) Reject(ctx context.Context, id string, actor store.Actor, reason string) (store.Proposal, error) {
	if err := store.MayDecide(store.OpReject, id, actor); err != nil {
		return store.Proposal{}, err
	}
	_, now, err := s.wlock(ctx)
	if err != nil {
		return store.Proposal{}, err
	}
	defer s.mu.Unlock()
	p, ok := s.proposals[id]
	if !ok {
		return store.Proposal{}, fmt.Errorf("reject %s: %w", id, store.ErrNotFound)
	}
	if st := store.ProposalStateAt(p, now); st != store.ProposalPending {
		return store.Proposal{}, fmt.Errorf("reject %s: %w: proposal is %s", id, store.ErrConflict, st)
	}
	p = store.DecideProposal(p, store.ProposalRejected, actor, reason, now)
	s.proposals[id] = p
	s.ledgerProposal(store.OpReject, p, actor, reason, now)
	return cloneProposal(p), nil
}

// ExpireProposals implements store.Store.
func (s *Store) ExpireProposals(ctx context.Context) ([]store.Proposal, error) {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.Proposal
	for _, p := range s.proposals {
		if p.State == store.ProposalPending && store.ProposalStateAt(p, now) == store.ProposalExpired {
			out = append(out, p)
		}
	}
	store.SortProposals(out)
	for i, p := range out {
		p = store.DecideProposal(p, store.ProposalExpired, store.SystemActor, "unanswered by "+p.ExpiresAt, now)
		s.proposals[p.ID] = p
		s.ledgerProposal(store.OpExpire, p, store.SystemActor, p.Decision, now)
		out[i] = cloneProposal(p)
	}
	return out, nil
}

// Ledger implements store.Store.
func (s *Store) Ledger(ctx context.Context, f store.LedgerFilter) ([]store.LedgerEntry, error) {
	_, _, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := store.FilterLedger(s.ledger, f)
	for i := range out {
		out[i] = store.CloneEntry(out[i])
	}
	return out, nil
}

// Verify implements store.Store.
func (s *Store) Verify(ctx context.Context) error {
	_, _, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	err = s.verify()
	if mark, set := store.VerifyMark(err); set && !s.readOnly {
		s.verifyFailed = mark
	}
	return err
}

// verify checks the chain, then replays it and compares the result with
// every stored record, promotion row and proposal (store.CompareState,
// store.CompareProposalRows), as the file store does.
func (s *Store) verify() error {
	if err := store.VerifyChain(s.ledger); err != nil {
		return err
	}
	got := store.NewState()
	for id, st := range s.records {
		got.Records[id] = st.Rec
	}
	maps.Copy(got.Promotions, s.promotions)
	var rows []store.ProposalRow
	for id, p := range s.proposals {
		got.Proposals[id] = p
		rows = append(rows, store.ProposalRow{Key: id, RecordID: p.RecordID, Kind: string(p.Kind), State: string(p.State), ExpiresAt: p.ExpiresAt, Body: p})
	}
	maps.Copy(got.Tokens, s.tokens)
	want := store.ReplayAll(s.ledger)
	if diffs := append(store.CompareState(want, got), store.CompareProposalRows(want, rows)...); len(diffs) > 0 {
		return &store.StateError{Diffs: diffs}
	}
	return nil
}

// EditBehindLedger runs fn on the stored records, promotion rows and
// proposals without a ledger entry, as someone with access to a backend's
// storage would edit its rows: for tests of what notices (Verify, Vouch,
// Promoted; store/storetest's Tamper cases).
func (s *Store) EditBehindLedger(fn func(records map[string]*store.Stored, promotions map[string]store.Promotion, proposals map[string]store.Proposal)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.records, s.promotions, s.proposals)
}

// StateAt implements store.Store.
func (s *Store) StateAt(ctx context.Context, at string) ([]schema.MemoryRecord, error) {
	at, err := store.CanonicalTime(at)
	if err != nil {
		return nil, fmt.Errorf("state at: %w", err)
	}
	if _, _, err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return store.ReplayState(s.ledger, at), nil
}

// AppendOverlaySummary implements store.Store.
func (s *Store) AppendOverlaySummary(ctx context.Context, sum store.OverlaySummary) error {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	sum = store.CloneSummary(sum)
	if sum.At == "" {
		sum.At = now
	}
	s.summaries = append(s.summaries, sum)
	s.changes++
	if n := len(s.summaries) - s.retention; n > 0 {
		s.summaries = slices.Delete(s.summaries, 0, n)
	}
	return nil
}

// OverlaySummaries implements store.Store.
func (s *Store) OverlaySummaries(ctx context.Context, limit int) ([]store.OverlaySummary, error) {
	_, _, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.OverlaySummary
	for i := len(s.summaries) - 1; i >= 0; i-- {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, store.CloneSummary(s.summaries[i]))
	}
	return out, nil
}

// Export implements store.Store. The records are copied under the lock and
// fn is called without it, so fn may use the store.
func (s *Store) Export(ctx context.Context, fn func(schema.MemoryRecord) error) (int, error) {
	_, _, err := s.lock(ctx)
	if err != nil {
		return 0, err
	}
	recs := make([]schema.MemoryRecord, 0, len(s.records))
	for _, id := range slices.Sorted(maps.Keys(s.records)) {
		recs = append(recs, store.CloneRecord(s.records[id].Rec))
	}
	s.mu.Unlock()
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := fn(r); err != nil {
			return 0, fmt.Errorf("export %s: %w", r.ID, err)
		}
	}
	return 0, nil
}

// Import implements store.Store.
func (s *Store) Import(ctx context.Context, recs []schema.MemoryRecord, actor store.Actor) error {
	_, now, err := s.wlock(ctx)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	prepared, err := store.PrepareImport(recs, now, func(id string) bool { _, ok := s.records[id]; return ok })
	if err != nil {
		return err
	}
	for _, r := range prepared {
		s.seq++
		s.records[r.ID] = &store.Stored{Rec: store.CloneRecord(r), Seq: s.seq}
		snap := store.CloneRecord(r)
		s.appendLedger(store.LedgerEntry{At: now, Op: store.OpImport, RecordID: r.ID, Actor: actor, Record: &snap})
	}
	return nil
}

// Close implements store.Store; the contents are dropped. Closing twice is
// a no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.records, s.promotions, s.proposals, s.ledger, s.summaries = nil, nil, nil, nil, nil
	return nil
}

func clonePromotion(p store.Promotion) store.Promotion {
	p.Evidence = store.CloneEvidence(p.Evidence)
	return p
}

func cloneProposal(p store.Proposal) store.Proposal { return store.CloneProposal(p) }

// ViewStamp implements store.Stamper for an Update's Tx: the stamps count
// the store's changes before and after its commit. ok is false on the
// Store itself, on a View's Reader and on an Update nested in another.
func (s *Store) ViewStamp() (store.ViewStamp, bool) {
	if !s.stampable {
		return store.ViewStamp{}, false
	}
	return store.ViewStamp{Base: strconv.FormatUint(s.base, 10), Next: strconv.FormatUint(s.base+1, 10), Now: s.now}, true
}

// View implements store.Store: fn reads the state as it is, the store's
// mutex held while fn runs (so no write lands meanwhile); writes through
// the Reader are refused.
func (s *Store) View(ctx context.Context, fn func(tx store.Reader) error) error {
	if _, _, err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	child := &Store{now: s.now, retention: s.retention, ids: s.ids, seq: s.seq,
		changes: s.changes, base: s.changes, view: true, readOnly: true,
		records: s.records, promotions: s.promotions, proposals: s.proposals, tokens: s.tokens,
		ledger: s.ledger, summaries: s.summaries}
	defer func() {
		child.mu.Lock()
		child.closed = true
		child.mu.Unlock()
	}()
	return fn(child)
}

// Update implements store.Tx: fn works on a copy of the state, which
// replaces the state when fn (and every operation in it) succeeded. The
// store's mutex is held while fn runs.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if _, _, err := s.wlock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	child := &Store{now: s.now, retention: s.retention, ids: s.ids, seq: s.seq,
		changes: s.changes, base: s.changes, view: true, stampable: !s.view,
		records:    make(map[string]*store.Stored, len(s.records)),
		promotions: maps.Clone(s.promotions),
		proposals:  make(map[string]store.Proposal, len(s.proposals)),
		tokens:     make(map[string]store.StoredToken, len(s.tokens)),
		ledger:     slices.Clone(s.ledger),
		summaries:  slices.Clone(s.summaries),
	}
	for id, st := range s.records {
		child.records[id] = &store.Stored{Rec: store.CloneRecord(st.Rec), Seq: st.Seq}
	}
	for id, p := range s.promotions {
		child.promotions[id] = clonePromotion(p)
	}
	for id, p := range s.proposals {
		child.proposals[id] = cloneProposal(p)
	}
	for id, t := range s.tokens {
		child.tokens[id] = store.CloneStoredToken(t)
	}
	g := &store.TxGuard{Tx: child}
	err := fn(g)
	if err == nil {
		err = g.Failed()
	}
	child.mu.Lock()
	defer child.mu.Unlock()
	if err != nil {
		child.closed = true
		return err
	}
	s.seq, s.records, s.promotions, s.proposals, s.tokens, s.ledger, s.summaries =
		child.seq, child.records, child.promotions, child.proposals, child.tokens, child.ledger, child.summaries
	s.changes = child.base + 1
	child.closed = true
	return nil
}
