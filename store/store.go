package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// Typed errors. Backends wrap them with context; test with errors.Is.
var (
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("conflict")
	ErrLocked    = errors.New("store locked")
	ErrCorrupt   = errors.New("store corrupt")
	ErrInvalid   = errors.New("invalid request")
	ErrForbidden = errors.New("forbidden")
	ErrClosed    = errors.New("store closed")
	// ErrUnavailable: the store's server cannot be reached (a database
	// store); retrying later may succeed.
	ErrUnavailable = errors.New("store unavailable")
)

// ActorKind says who performs an operation.
type ActorKind string

// The actor kinds.
const (
	ActorAgent  ActorKind = "agent"
	ActorHuman  ActorKind = "human"
	ActorSystem ActorKind = "system"
)

// Actor is who performed a mutation; it is recorded on every ledger entry.
type Actor struct {
	Kind ActorKind `json:"kind"`
	Name string    `json:"name"`
}

// String prints "kind:name".
func (a Actor) String() string { return string(a.Kind) + ":" + a.Name }

// ParseActor parses "kind:name" with kind agent, human or system; the name
// passes the identifier rule (schema.CheckIdentifier).
func ParseActor(s string) (Actor, error) {
	k, n, ok := strings.Cut(s, ":")
	if !ok || n == "" {
		return Actor{}, fmt.Errorf("actor %q: want kind:name, e.g. human:ana or agent:support-bot", s)
	}
	switch ActorKind(k) {
	case ActorAgent, ActorHuman, ActorSystem:
	default:
		return Actor{}, fmt.Errorf("actor %q: kind must be agent, human or system", s)
	}
	// The name is an identifier (an agent's name is its scope key).
	if err := schema.CheckIdentifier("actor name", n); err != nil {
		return Actor{}, err
	}
	return Actor{Kind: ActorKind(k), Name: n}, nil
}

// WriteRequest is one record to create in a Write batch.
type WriteRequest struct {
	Scope      map[string]string
	Kind       schema.Kind
	Content    string
	Tags       []string
	Provenance schema.Provenance
	ExpiresAt  string
	Target     *schema.MemoryTarget
	Payload    json.RawMessage
	// Supersedes names a record that existed before the batch; it is
	// invalidated with SupersededBy set to the new record, atomically.
	Supersedes string
}

// Unlimited as a Query limit returns every match.
const Unlimited = -1

// DefaultLimit is the number of records Search returns when Limit is nil.
const DefaultLimit = 10

// Limit returns a pointer to n, for Query.Limit.
func Limit(n int) *int { return &n }

// Query selects records for Search.
type Query struct {
	// Scope is a subset-match filter: a record matches when its scope holds
	// every pair. Empty matches all.
	Scope map[string]string
	Kinds []schema.Kind
	// Tags: a record matches when it carries every tag listed.
	Tags []string
	// Text is tokenized (lowercase, accents folded, split on non
	// letter/digit) and OR-matched; more matching tokens rank first.
	// Without text, results are newest first (later write first on ties).
	Text string
	// Target, when set, keeps records whose target equals it.
	Target *schema.MemoryTarget
	// Targets, when set, keeps records whose target equals one of them (a
	// caller reading several slots at once: one query, not one per slot).
	// With Target as well, both filters apply.
	Targets []schema.MemoryTarget
	// TargetedOnly keeps records that carry a target.
	TargetedOnly bool
	// PromotedOnly keeps records that have a promotion row (backends drop
	// the others before decoding them).
	PromotedOnly bool
	// Limit: nil is DefaultLimit, 0 returns nothing, Unlimited returns all.
	Limit              *int
	IncludeInvalidated bool
	// IncludeExpired keeps records expired at now (expiresAt <= now),
	// which a search otherwise never returns: a listing of every record
	// with its state (memory list --all). Invalidated records still need
	// IncludeInvalidated.
	IncludeExpired bool
}

// Result is a Search answer. Skipped counts stored records that failed to
// decode: they are left out, never a failed listing.
type Result struct {
	Records []schema.MemoryRecord
	Skipped int
}

// Evidence is why a promotion (or demotion) happened.
type Evidence struct {
	Conversations []string    `json:"conversations,omitempty"`
	Eval          *EvalResult `json:"eval,omitempty"`
	ApprovedBy    string      `json:"approvedBy,omitempty"`
	ProposalID    string      `json:"proposalId,omitempty"`
	Note          string      `json:"note,omitempty"`
}

// EvalResult is the outcome of an eval gate: base vs candidate.
type EvalResult struct {
	BaseScore      float64 `json:"baseScore"`
	CandidateScore float64 `json:"candidateScore"`
	BasePassed     int     `json:"basePassed"`
	BaseFailed     int     `json:"baseFailed"`
	Passed         int     `json:"passed"`
	Failed         int     `json:"failed"`
	Require        string  `json:"require,omitempty"`
}

// Promotion is the row that makes a record part of the agent's composition.
type Promotion struct {
	RecordID   string      `json:"recordId"`
	Tier       schema.Tier `json:"tier"`
	PromotedAt string      `json:"promotedAt"`
	Actor      Actor       `json:"actor"`
	Approver   string      `json:"approver,omitempty"`
	Evidence   Evidence    `json:"evidence"`
}

// PromoteRequest asks the store to record a promotion. Gates are evolve's
// job; the store records what it is told, atomically with its ledger entry.
type PromoteRequest struct {
	Tier     schema.Tier
	Actor    Actor
	Approver string
	Evidence Evidence
}

// ProposalKind says what a pending proposal would do once approved.
type ProposalKind string

// The proposal kinds.
const (
	ProposePromote ProposalKind = "promote"
	ProposeDemote  ProposalKind = "demote"
)

// ProposalState is where a proposal is in its life.
type ProposalState string

// The proposal states.
const (
	ProposalPending  ProposalState = "pending"
	ProposalApproved ProposalState = "approved"
	ProposalRejected ProposalState = "rejected"
	ProposalExpired  ProposalState = "expired"
)

// Proposal is a promotion or demotion waiting for a human. It fails closed:
// unanswered by ExpiresAt it expires, and nothing changes.
type Proposal struct {
	ID          string       `json:"id"`
	Kind        ProposalKind `json:"kind"`
	RecordID    string       `json:"recordId"`
	Tier        schema.Tier  `json:"tier"`
	RequestedBy Actor        `json:"requestedBy"`
	CreatedAt   string       `json:"createdAt"`
	ExpiresAt   string       `json:"expiresAt"`
	Reason      string       `json:"reason,omitempty"`
	Evidence    Evidence     `json:"evidence"`
	// Invalidate: approving a demotion also invalidates the record (the
	// agent asked to invalidate or supersede it).
	Invalidate bool `json:"invalidate,omitempty"`
	// SupersededBy: approving the demotion sets the record's supersededBy.
	SupersededBy string `json:"supersededBy,omitempty"`
	// MergedContent makes the demotion a garden merge: approving it writes
	// this text (or the approver's edit) as one record that supersedes
	// SupersededBy on its slot with both records' supports, then retires
	// RecordID.
	MergedContent string        `json:"mergedContent,omitempty"`
	State         ProposalState `json:"state"`
	DecidedAt     string        `json:"decidedAt,omitempty"`
	DecidedBy     *Actor        `json:"decidedBy,omitempty"`
	Decision      string        `json:"decision,omitempty"`
}

// ProposalRequest creates a pending proposal.
type ProposalRequest struct {
	Kind         ProposalKind
	RecordID     string
	Tier         schema.Tier
	RequestedBy  Actor
	TTL          time.Duration
	Reason       string
	Evidence     Evidence
	Invalidate   bool
	SupersededBy string
	// MergedContent: see Proposal.MergedContent (a demotion that
	// invalidates RecordID, superseded by SupersededBy, only).
	MergedContent string
}

// ProposalFilter selects proposals; zero values match all.
type ProposalFilter struct {
	State    ProposalState
	RecordID string
	// Scope and Agent select proposals whose record matches (subset match,
	// then the agent-key rule).
	Scope map[string]string
	Agent string
}

// Op names a ledger operation.
type Op string

// The ledger operations: every mutation appends one.
const (
	OpWrite       Op = "write"
	OpSupersede   Op = "supersede"
	OpInvalidate  Op = "invalidate"
	OpDelete      Op = "delete"
	OpCorroborate Op = "corroborate"
	OpPromote     Op = "promote"
	OpDemote      Op = "demote"
	OpPropose     Op = "propose"
	OpApprove     Op = "approve"
	OpReject      Op = "reject"
	OpExpire      Op = "expire"
	OpImport      Op = "import"
	// OpConflict records a memory-vs-memory collision the first time an
	// instantiate or curation sees it; it changes no state.
	OpConflict Op = "conflict"
	// OpTokenCreate and OpTokenRevoke record a service token's creation
	// and revocation; they carry the token (StoredToken) and change no
	// record.
	OpTokenCreate Op = "token-create"
	OpTokenRevoke Op = "token-revoke"
)

// Ops lists every ledger operation, in the order declared above.
func Ops() []Op {
	return []Op{OpWrite, OpSupersede, OpInvalidate, OpDelete, OpCorroborate, OpPromote, OpDemote, OpPropose,
		OpApprove, OpReject, OpExpire, OpImport, OpConflict, OpTokenCreate, OpTokenRevoke}
}

// Valid reports whether o is one of Ops.
func (o Op) Valid() bool { return slices.Contains(Ops(), o) }

// ConflictInfo names the records of a residual memory-vs-memory conflict:
// Records[0] is the one the overlay renders (the newest), Target the slot
// they collide on.
type ConflictInfo struct {
	Records []string `json:"records"`
	Target  string   `json:"target,omitempty"`
}

// LedgerEntry is one hash-chained history entry. Hash covers every other
// field and PrevHash, so editing, removing or reordering entries breaks the
// chain. Record carries the record as written (write, supersede, import) so
// StateAt can rebuild the composition from the ledger alone.
type LedgerEntry struct {
	Seq        uint64      `json:"seq"`
	At         string      `json:"at"`
	Op         Op          `json:"op"`
	RecordID   string      `json:"recordId,omitempty"`
	ProposalID string      `json:"proposalId,omitempty"`
	Actor      Actor       `json:"actor"`
	Reason     string      `json:"reason,omitempty"`
	Tier       schema.Tier `json:"tier,omitempty"`
	// Approver is a promote entry's approver (kind:name), as its promotion
	// row records it.
	Approver string               `json:"approver,omitempty"`
	Evidence *Evidence            `json:"evidence,omitempty"`
	Support  *schema.Support      `json:"support,omitempty"`
	Record   *schema.MemoryRecord `json:"record,omitempty"`
	// Proposal carries the proposal as it stood after a propose, approve,
	// reject or expire entry, so replay knows what an approval did.
	Proposal *Proposal `json:"proposal,omitempty"`
	// Conflict names the records of a conflict entry.
	Conflict *ConflictInfo `json:"conflict,omitempty"`
	// Token is a token-create or token-revoke entry's token as it stood
	// after the entry (its public record and its secret's hash, never the
	// secret), so replay rebuilds the tokens.
	Token    *StoredToken `json:"token,omitempty"`
	PrevHash string       `json:"prevHash"`
	Hash     string       `json:"hash"`
}

// LedgerFilter selects ledger entries; zero values match all.
type LedgerFilter struct {
	Since    string // entries with At >= Since
	Until    string // entries with At <= Until
	RecordID string
	Ops      []Op
	Limit    int // 0 = all
	// After keeps the entries with Seq > After (0: from the first): a
	// follower's next read, which backends answer without reading the
	// entries before it.
	After uint64
	// Before keeps the entries with Seq < Before (0: to the last): with
	// Limit, a page of history older than the last one read.
	Before uint64
}

// OverlaySummary is appended at each instantiate: counts and ids, never
// content. Backends keep a bounded number (oldest dropped first).
type OverlaySummary struct {
	At                string            `json:"at"`
	Agent             string            `json:"agent"`
	Scope             map[string]string `json:"scope,omitempty"`
	RecordCount       int               `json:"recordCount"`
	CharsPerPrimitive map[string]int    `json:"charsPerPrimitive"`
	// BytesPerPrimitive is the same learned text in UTF-8 bytes (nil in
	// summaries stored before it was kept).
	BytesPerPrimitive map[string]int `json:"bytesPerPrimitive,omitempty"`
	Conflicts         int            `json:"conflicts"`
	Spilled           int            `json:"spilled"`
	RecordIDs         []string       `json:"recordIds"`
	// CandidateIDs are the candidates the recall block's slice showed, in
	// order; Rotation is the slice's position (see overlay.RotateCandidates)
	// so the next instantiate shows the next slots and --at replays this one.
	CandidateIDs []string `json:"candidateIds,omitempty"`
	Rotation     int      `json:"rotation,omitempty"`
}

// Store is the memory-store protocol, shaped like bbolt's DB: View runs a
// function on one consistent read snapshot (a Reader), Update on one
// all-or-nothing read-write transaction (a Tx). Every Reader and Writer
// method may also be called on the Store directly, as a transaction of its
// own. A caller that only reads takes a Reader; one that reads and writes
// takes a Tx, which a Store is too. All methods are safe for concurrent use
// within a process; backends that share a file across processes serialize
// writers and report ErrLocked rather than hang.
type Store interface {
	Tx
	// View runs fn with a Reader on one consistent snapshot: every read fn
	// makes sees the same committed state, none of a write committed
	// meanwhile. fn's error is View's. The Reader is valid until fn
	// returns (then ErrClosed); a write through it, by any means, is
	// ErrForbidden. File backends hold a reader's lock while fn runs, which
	// makes writers wait: keep fn to reads and in-memory work.
	View(ctx context.Context, fn func(tx Reader) error) error
	// Close releases the store.
	Close() error
}

// Tx is the reads and writes of one transaction: what Update hands to its
// function, and what a Store offers call by call.
type Tx interface {
	Reader
	Writer
	// Update runs fn with a Tx whose operations form one all-or-nothing
	// transaction: fn's reads see fn's own writes, other readers see none
	// of them until Update returns, and they are committed together (one
	// durable commit) when fn returns nil. Nothing is committed when fn
	// returns an error or panics (the panic goes on to Update's caller), or
	// when an operation inside fn failed, even if fn ignored its error (a
	// failed operation may have left part of its effects in the
	// transaction). Each operation appends the ledger entries it appends on
	// its own, chained in order. The Tx given to fn is valid until fn
	// returns (then ErrClosed); Update on it runs in the same transaction.
	// File backends hold the writer lock while fn runs: keep fn to store
	// work and in-memory decisions.
	Update(ctx context.Context, fn func(tx Tx) error) error
}

// Reader is the read half of the protocol: what the language server's
// views, render, lint and the lens ask of a store. A read changes nothing.
type Reader interface {
	// Get returns a record by id, invalidated ones included.
	Get(ctx context.Context, id string) (schema.MemoryRecord, error)
	// Search lists records matching q; expired records are never returned.
	Search(ctx context.Context, q Query) (Result, error)
	// Promotion returns a record's current promotion row, or ErrNotFound.
	Promotion(ctx context.Context, id string) (Promotion, error)
	// Promotions returns the current promotion rows of the records ids
	// names, keyed by record id; records without a row are absent.
	Promotions(ctx context.Context, ids []string) (map[string]Promotion, error)
	// Promoted returns the valid, promoted records of scope for agent (the
	// agent-key rule) in one bounded query whose cost grows with the number
	// of matches, not the size of the store.
	Promoted(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error)
	// Candidates returns the valid, targeted, unpromoted records of scope
	// for agent, newest first. The records of one Promoted or Candidates
	// call may share their scope maps: read them, do not modify them.
	Candidates(ctx context.Context, scope map[string]string, agent string) ([]schema.MemoryRecord, error)
	// GetProposal returns a proposal by id.
	GetProposal(ctx context.Context, id string) (Proposal, error)
	// Proposals lists proposals, oldest first. Pending proposals past their
	// expiry are reported as expired.
	Proposals(ctx context.Context, f ProposalFilter) ([]Proposal, error)
	// Ledger lists ledger entries in sequence order.
	Ledger(ctx context.Context, f LedgerFilter) ([]LedgerEntry, error)
	// EachLedger passes every ledger entry to fn, oldest first, without
	// collecting them; an error from fn ends the scan and is returned.
	EachLedger(ctx context.Context, fn func(LedgerEntry) error) error
	// History passes to fn, oldest first, the ledger entries of the records
	// ids names: an entry naming one of them or carrying one of them
	// (MatchLedger's rule). Backends read only those entries where they can.
	History(ctx context.Context, ids []string, fn func(LedgerEntry) error) error
	// Verify checks the hash chain and names the first bad entry.
	Verify(ctx context.Context) error
	// StateAt rebuilds, from the ledger alone, the records that were valid
	// and promoted at time at (a schema.FormatTime string), with the
	// supports they had then.
	StateAt(ctx context.Context, at string) ([]schema.MemoryRecord, error)
	// OverlaySummaries returns the newest summaries first, up to limit (0 = all kept).
	OverlaySummaries(ctx context.Context, limit int) ([]OverlaySummary, error)
	// Export calls fn for every readable record (invalidated and expired
	// included), in id order, and returns how many failed to decode.
	Export(ctx context.Context, fn func(schema.MemoryRecord) error) (skipped int, err error)
	// Tokens returns every service token, revoked and expired ones
	// included, oldest first. Never a secret or its hash.
	Tokens(ctx context.Context) ([]Token, error)
	// TokenByHash returns the token whose secret hashes to hash (TokenHash),
	// revoked and expired ones included; none is ErrNotFound.
	TokenByHash(ctx context.Context, hash string) (Token, error)
	// Vouch checks each record as given (its content and every other
	// field) and its stored promotion row against the record's ledger
	// entries (VouchRecord), at a cost proportional to the records checked,
	// not to the store: what a render delivers is vouched for before it
	// reaches an agent. The first record that does not match is an
	// *UnvouchedError.
	Vouch(ctx context.Context, recs []schema.MemoryRecord) error
}

// Writer is the write half: every method changes the store's state and
// appends the ledger entries that record the change, in one transaction.
type Writer interface {
	// Write creates a batch of records all-or-nothing with one `now`.
	Write(ctx context.Context, batch []WriteRequest, actor Actor) ([]schema.MemoryRecord, error)
	// Invalidate marks a record invalid with a reason. Unknown ids are
	// ErrNotFound; invalidating twice is a no-op.
	Invalidate(ctx context.Context, id, reason string, actor Actor) error
	// Delete removes a record. Humans only (MayDelete): other actors get ErrForbidden.
	Delete(ctx context.Context, id string, actor Actor) error
	// Corroborate appends a support; the same conversation twice counts
	// once (counted reports whether it was new).
	Corroborate(ctx context.Context, id string, s schema.Support, actor Actor) (counted bool, err error)
	// Promote records a promotion row and its ledger entry.
	Promote(ctx context.Context, id string, req PromoteRequest) (Promotion, error)
	// Demote removes a record's promotion row (the record stays valid).
	Demote(ctx context.Context, id, reason string, actor Actor) error
	// Propose opens a pending proposal.
	Propose(ctx context.Context, req ProposalRequest) (Proposal, error)
	// Approve carries out a pending proposal (promote, or demote and maybe
	// invalidate) atomically. Actors but humans get ErrForbidden (MayDecide); an expired or
	// decided proposal is ErrConflict.
	Approve(ctx context.Context, id string, actor Actor, reason string) (Proposal, error)
	// Reject closes a pending proposal without effect.
	Reject(ctx context.Context, id string, actor Actor, reason string) (Proposal, error)
	// ExpireProposals marks pending proposals past their expiry as expired
	// (ledgered) and returns them.
	ExpireProposals(ctx context.Context) ([]Proposal, error)
	// RecordConflict appends a conflict ledger entry (OpConflict) naming
	// c.Records the first time that set of records is reported, in any
	// order; recorded is false when it already was. Fewer than two
	// distinct records is ErrInvalid, an unknown one ErrNotFound.
	RecordConflict(ctx context.Context, c ConflictInfo, actor Actor) (recorded bool, err error)
	// RecordExpiry appends an expire ledger entry for a record whose
	// expiresAt has passed, the first time it is reported; recorded is
	// false when it already was. A record without an expiry, or not yet
	// expired, is ErrConflict; an unknown id ErrNotFound. It changes no
	// state: the record expired by itself.
	RecordExpiry(ctx context.Context, id string, actor Actor) (recorded bool, err error)
	// AppendOverlaySummary stores an instantiate summary (bounded retention).
	AppendOverlaySummary(ctx context.Context, s OverlaySummary) error
	// CreateToken stores a service token (PrepareToken's rules: an empty
	// t.ID gets a fresh one, CreatedAt is now, CreatedBy the actor) with
	// its secret's hash and ledgers it (OpTokenCreate). Agents get
	// ErrForbidden; an invalid token or hash is ErrInvalid, a used id or
	// hash ErrConflict.
	CreateToken(ctx context.Context, t Token, hash string, actor Actor) (Token, error)
	// RevokeToken marks a token revoked and ledgers it (OpTokenRevoke).
	// Revoking twice is a no-op returning the token; an unknown id is
	// ErrNotFound; agents get ErrForbidden.
	RevokeToken(ctx context.Context, id string, actor Actor) (Token, error)
	// Import stores records with their ids all-or-nothing; an existing id is
	// ErrConflict, an invalid record ErrInvalid naming its index.
	Import(ctx context.Context, recs []schema.MemoryRecord, actor Actor) error
}

// Options are what a backend needs from its host: a clock, randomness for
// ids, a logger and, for file backends, how long to wait for a lock.
type Options struct {
	Now         func() time.Time
	Entropy     io.Reader
	Logger      *slog.Logger
	LockTimeout time.Duration
	// ReadOnly opens file backends read-only (salvage, listing).
	ReadOnly bool
	// SummaryRetention bounds kept overlay summaries (default 1000).
	SummaryRetention int
}

// Opener opens a store; the language server and CLI receive one so tests can
// pass fakes.
type Opener func(ctx context.Context) (Store, error)
