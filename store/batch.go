package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/agent-ls/agent-ls/schema"
)

// TxGuard wraps the Tx a backend hands to Update's fn and remembers the
// first failed mutation, so the backend can refuse to commit a transaction
// in which an operation failed although fn went on (Tx.Update). Reads are
// passed through: a read error (ErrNotFound) changes nothing.
type TxGuard struct {
	Tx
	mu  sync.Mutex
	err error
	// nested counts Update calls running on the guard.
	nested int
}

// Failed returns the first mutation error seen, wrapped with its operation.
func (g *TxGuard) Failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *TxGuard) note(op string, err error) {
	if err == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = fmt.Errorf("transaction: %s failed: %w", op, err)
	}
}

// Write passes through and remembers a failure.
func (g *TxGuard) Write(ctx context.Context, batch []WriteRequest, actor Actor) ([]schema.MemoryRecord, error) {
	recs, err := g.Tx.Write(ctx, batch, actor)
	g.note("write", err)
	return recs, err
}

// Invalidate passes through and remembers a failure.
func (g *TxGuard) Invalidate(ctx context.Context, id, reason string, actor Actor) error {
	err := g.Tx.Invalidate(ctx, id, reason, actor)
	g.note("invalidate", err)
	return err
}

// Delete passes through and remembers a failure.
func (g *TxGuard) Delete(ctx context.Context, id string, actor Actor) error {
	err := g.Tx.Delete(ctx, id, actor)
	g.note("delete", err)
	return err
}

// Corroborate passes through and remembers a failure.
func (g *TxGuard) Corroborate(ctx context.Context, id string, s schema.Support, actor Actor) (bool, error) {
	ok, err := g.Tx.Corroborate(ctx, id, s, actor)
	g.note("corroborate", err)
	return ok, err
}

// Promote passes through and remembers a failure.
func (g *TxGuard) Promote(ctx context.Context, id string, req PromoteRequest) (Promotion, error) {
	p, err := g.Tx.Promote(ctx, id, req)
	g.note("promote", err)
	return p, err
}

// Demote passes through and remembers a failure.
func (g *TxGuard) Demote(ctx context.Context, id, reason string, actor Actor) error {
	err := g.Tx.Demote(ctx, id, reason, actor)
	g.note("demote", err)
	return err
}

// Propose passes through and remembers a failure.
func (g *TxGuard) Propose(ctx context.Context, req ProposalRequest) (Proposal, error) {
	p, err := g.Tx.Propose(ctx, req)
	g.note("propose", err)
	return p, err
}

// Approve passes through and remembers a failure.
func (g *TxGuard) Approve(ctx context.Context, id string, actor Actor, reason string) (Proposal, error) {
	p, err := g.Tx.Approve(ctx, id, actor, reason)
	g.note("approve", err)
	return p, err
}

// Reject passes through and remembers a failure.
func (g *TxGuard) Reject(ctx context.Context, id string, actor Actor, reason string) (Proposal, error) {
	p, err := g.Tx.Reject(ctx, id, actor, reason)
	g.note("reject", err)
	return p, err
}

// ExpireProposals passes through and remembers a failure.
func (g *TxGuard) ExpireProposals(ctx context.Context) ([]Proposal, error) {
	ps, err := g.Tx.ExpireProposals(ctx)
	g.note("expire proposals", err)
	return ps, err
}

// RecordExpiry passes through and remembers a failure.
func (g *TxGuard) RecordExpiry(ctx context.Context, id string, actor Actor) (bool, error) {
	ok, err := g.Tx.RecordExpiry(ctx, id, actor)
	g.note("record expiry", err)
	return ok, err
}

// RecordConflict passes through and remembers a failure.
func (g *TxGuard) RecordConflict(ctx context.Context, c ConflictInfo, actor Actor) (bool, error) {
	ok, err := g.Tx.RecordConflict(ctx, c, actor)
	g.note("record conflict", err)
	return ok, err
}

// AppendOverlaySummary passes through and remembers a failure.
func (g *TxGuard) AppendOverlaySummary(ctx context.Context, s OverlaySummary) error {
	err := g.Tx.AppendOverlaySummary(ctx, s)
	g.note("append overlay summary", err)
	return err
}

// CreateToken passes through and remembers a failure.
func (g *TxGuard) CreateToken(ctx context.Context, t Token, hash string, actor Actor) (Token, error) {
	out, err := g.Tx.CreateToken(ctx, t, hash, actor)
	g.note("create token", err)
	return out, err
}

// RevokeToken passes through and remembers a failure.
func (g *TxGuard) RevokeToken(ctx context.Context, id string, actor Actor) (Token, error) {
	out, err := g.Tx.RevokeToken(ctx, id, actor)
	g.note("revoke token", err)
	return out, err
}

// Import passes through and remembers a failure.
func (g *TxGuard) Import(ctx context.Context, recs []schema.MemoryRecord, actor Actor) error {
	err := g.Tx.Import(ctx, recs, actor)
	g.note("import", err)
	return err
}

// Update on a guarded Tx runs in the same transaction; its failures are
// the outer transaction's.
func (g *TxGuard) Update(ctx context.Context, fn func(tx Tx) error) error {
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

// VerifyChainAt implements ChainVerifier over the guarded Tx (CheckChain).
func (g *TxGuard) VerifyChainAt(ctx context.Context, at string) error {
	return CheckChain(ctx, g.Tx, at)
}

// Agents implements AgentLister over the guarded Tx (Agents).
func (g *TxGuard) Agents(ctx context.Context, base map[string]string) ([]string, error) {
	return Agents(ctx, g.Tx, base)
}
