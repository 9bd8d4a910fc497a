package store

import (
	"context"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
)

// ReadOnly returns r as a Tx whose every write and Update is ErrForbidden,
// for code written against a Tx (evolve's engine, compose) that a
// read-only surface runs on the Reader of a View.
func ReadOnly(r Reader) Tx { return readOnly{r} }

type readOnly struct{ Reader }

func errReadOnly(op string) error {
	return fmt.Errorf("%s: %w: the store is open for reading only", op, ErrForbidden)
}

func (readOnly) Write(context.Context, []WriteRequest, Actor) ([]schema.MemoryRecord, error) {
	return nil, errReadOnly("write")
}
func (readOnly) Invalidate(context.Context, string, string, Actor) error {
	return errReadOnly("invalidate")
}
func (readOnly) Delete(context.Context, string, Actor) error { return errReadOnly("delete") }
func (readOnly) Corroborate(context.Context, string, schema.Support, Actor) (bool, error) {
	return false, errReadOnly("corroborate")
}
func (readOnly) Promote(context.Context, string, PromoteRequest) (Promotion, error) {
	return Promotion{}, errReadOnly("promote")
}
func (readOnly) Demote(context.Context, string, string, Actor) error { return errReadOnly("demote") }
func (readOnly) Propose(context.Context, ProposalRequest) (Proposal, error) {
	return Proposal{}, errReadOnly("propose")
}
func (readOnly) Approve(context.Context, string, Actor, string) (Proposal, error) {
	return Proposal{}, errReadOnly("approve")
}
func (readOnly) Reject(context.Context, string, Actor, string) (Proposal, error) {
	return Proposal{}, errReadOnly("reject")
}
func (readOnly) ExpireProposals(context.Context) ([]Proposal, error) {
	return nil, errReadOnly("expire proposals")
}
func (readOnly) RecordConflict(context.Context, ConflictInfo, Actor) (bool, error) {
	return false, errReadOnly("record conflict")
}
func (readOnly) RecordExpiry(context.Context, string, Actor) (bool, error) {
	return false, errReadOnly("record expiry")
}
func (readOnly) AppendOverlaySummary(context.Context, OverlaySummary) error {
	return errReadOnly("append overlay summary")
}
func (readOnly) Import(context.Context, []schema.MemoryRecord, Actor) error {
	return errReadOnly("import")
}
func (readOnly) CreateToken(context.Context, Token, string, Actor) (Token, error) {
	return Token{}, errReadOnly("create token")
}
func (readOnly) RevokeToken(context.Context, string, Actor) (Token, error) {
	return Token{}, errReadOnly("revoke token")
}
func (readOnly) Update(context.Context, func(Tx) error) error { return errReadOnly("update") }

// VerifyChainAt implements ChainVerifier over the wrapped Reader: its own
// check when it has one (CheckChain), so a read-only view does not turn a
// check of the stored bytes into a listing of the whole ledger.
func (r readOnly) VerifyChainAt(ctx context.Context, at string) error {
	return CheckChain(ctx, r.Reader, at)
}
