package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/agent-ls/agent-ls/schema"
)

// BatchGuard wraps the Store a backend hands to a Batch's fn and remembers
// the first failed mutation, so the backend can refuse to commit a batch in
// which an operation failed although fn went on (Store.Batch). Reads are
// passed through: a read error (ErrNotFound) changes nothing.
type BatchGuard struct {
	Store
	mu  sync.Mutex
	err error
	// nested counts Batch calls running on the guard.
	nested int
}

// Failed returns the first mutation error seen, wrapped with its operation.
func (g *BatchGuard) Failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *BatchGuard) note(op string, err error) {
	if err == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = fmt.Errorf("batch: %s failed: %w", op, err)
	}
}

// Write passes through and remembers a failure.
func (g *BatchGuard) Write(ctx context.Context, batch []WriteRequest, actor Actor) ([]schema.MemoryRecord, error) {
	recs, err := g.Store.Write(ctx, batch, actor)
	g.note("write", err)
	return recs, err
}

// Invalidate passes through and remembers a failure.
func (g *BatchGuard) Invalidate(ctx context.Context, id, reason string, actor Actor) error {
	err := g.Store.Invalidate(ctx, id, reason, actor)
	g.note("invalidate", err)
	return err
}

// Delete passes through and remembers a failure.
func (g *BatchGuard) Delete(ctx context.Context, id string, actor Actor) error {
	err := g.Store.Delete(ctx, id, actor)
	g.note("delete", err)
	return err
}

// Corroborate passes through and remembers a failure.
func (g *BatchGuard) Corroborate(ctx context.Context, id string, s schema.Support, actor Actor) (bool, error) {
	ok, err := g.Store.Corroborate(ctx, id, s, actor)
	g.note("corroborate", err)
	return ok, err
}

// Promote passes through and remembers a failure.
func (g *BatchGuard) Promote(ctx context.Context, id string, req PromoteRequest) (Promotion, error) {
	p, err := g.Store.Promote(ctx, id, req)
	g.note("promote", err)
	return p, err
}

// Demote passes through and remembers a failure.
func (g *BatchGuard) Demote(ctx context.Context, id, reason string, actor Actor) error {
	err := g.Store.Demote(ctx, id, reason, actor)
	g.note("demote", err)
	return err
}

// Propose passes through and remembers a failure.
func (g *BatchGuard) Propose(ctx context.Context, req ProposalRequest) (Proposal, error) {
	p, err := g.Store.Propose(ctx, req)
	g.note("propose", err)
	return p, err
}

// Approve passes through and remembers a failure.
func (g *BatchGuard) Approve(ctx context.Context, id string, actor Actor, reason string) (Proposal, error) {
	p, err := g.Store.Approve(ctx, id, actor, reason)
	g.note("approve", err)
	return p, err
}

// Reject passes through and remembers a failure.
func (g *BatchGuard) Reject(ctx context.Context, id string, actor Actor, reason string) (Proposal, error) {
	p, err := g.Store.Reject(ctx, id, actor, reason)
	g.note("reject", err)
	return p, err
}

// ExpireProposals passes through and remembers a failure.
func (g *BatchGuard) ExpireProposals(ctx context.Context) ([]Proposal, error) {
	ps, err := g.Store.ExpireProposals(ctx)
	g.note("expire proposals", err)
	return ps, err
}

// RecordExpiry passes through and remembers a failure.
func (g *BatchGuard) RecordExpiry(ctx context.Context, id string, actor Actor) (bool, error) {
	ok, err := g.Store.RecordExpiry(ctx, id, actor)
	g.note("record expiry", err)
	return ok, err
}

// RecordConflict passes through and remembers a failure.
func (g *BatchGuard) RecordConflict(ctx context.Context, c ConflictInfo, actor Actor) (bool, error) {
	ok, err := g.Store.RecordConflict(ctx, c, actor)
	g.note("record conflict", err)
	return ok, err
}

// AppendOverlaySummary passes through and remembers a failure.
func (g *BatchGuard) AppendOverlaySummary(ctx context.Context, s OverlaySummary) error {
	err := g.Store.AppendOverlaySummary(ctx, s)
	g.note("append overlay summary", err)
	return err
}

// Import passes through and remembers a failure.
func (g *BatchGuard) Import(ctx context.Context, recs []schema.MemoryRecord, actor Actor) error {
	err := g.Store.Import(ctx, recs, actor)
	g.note("import", err)
	return err
}

// Batch on a guarded Store runs in the same transaction; its failures are
// the outer batch's.
func (g *BatchGuard) Batch(ctx context.Context, fn func(tx Store) error) error {
	g.mu.Lock()
	g.nested++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.nested--
		g.mu.Unlock()
	}()
	return fn(g)
}
