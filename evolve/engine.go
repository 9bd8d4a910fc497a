// Package evolve is how a memory earns its way into an agent and how it
// leaves (ADR-0008 Decisions 1, 4, 5, 6, 7): reconciliation at save, the
// tiered gate chain for promotion and demotion, human proposals that fail
// closed, the eval gate, gardening and learnings. It sits on the store
// protocol and decides; the store records.
//
// # Tier x operation x actor
//
// Humans are actors of kind human; agents and system jobs (gardening) are
// never approvers.
//
//	tier     save (any actor)                 promote: agent/system           promote: human          demote/invalidate: agent/system       demote/invalidate: human
//	auto     promoted at save ("auto")        promoted                        promoted                done                                  done
//	earned   candidate; promoted when         promoted when recurrence met,   promoted (approver)     done with accumulated contradiction   done
//	         recurrence met                   else eval pass, else blocked                            or eval regression, else a proposal
//	guarded  candidate + promotion proposal   a pending promotion proposal    promoted (the approval) a pending demotion proposal; the     done
//	                                                                                                  record keeps rendering
//	locked   refused                          refused                         refused                 -                                     -
//
// Before any judgment promotion (every path above, humans included) the
// contradiction check runs: the same domain's authored and promoted
// heuristics and constraints are compared with lexical.Contradicts; a
// contradicting candidate is blocked and reported as a conflict. Resolve it
// with Supersede (keep one, retire the other). Approve and Reject are
// human-only: anyone else gets ErrRefused. Proposals expire at their TTL
// (promotion.proposalExpiry) and nothing changes. Delete is never an engine
// operation (the store refuses agents).
//
// # Shared records
//
// An agent changes only what is its own (trust.Decide). A record without an
// agent key is shared by every agent of its scope, so an agent's
// invalidate, demote, supersede, retarget or promotion of it never takes
// effect directly: it becomes a pending human proposal (a demotion
// proposal that invalidates, or supersedes, even when the record is not
// promoted; a promotion proposal), and the record stays as it is until a
// human approves. An agent's corroboration of a shared record counts as
// evidence; once the tier's bar is met it opens a promotion proposal
// instead of promoting.
//
// A record has at most one pending proposal of each kind: a supersede while
// a plain demotion (an earlier invalidate) is pending is a conflict naming
// that proposal, never folded into it (its approval would leave
// supersededBy empty).
//
// Recurrence counts distinct conversations (the record's provenance plus its
// supports): one conversation repeating a lesson never promotes it, and
// contradicting evidence never decrements the count (it is a separate record
// reported as a conflict).
//
// # Save
//
// A targeted save searches its scope and target first: a near-duplicate of
// a live record (lexical.NearDuplicate for list slots; identical content
// tokens for keyed background slots) is corroborated instead of written; a
// background key held by another live record is a conflict unless the save
// supersedes it. An agent's supersede of an earned or guarded promoted
// record writes the new record and opens a demotion proposal for the old
// one, which keeps rendering. Save never runs the eval gate (it may take
// minutes); an agent's Promote and Garden do.
//
// # Limits
//
// Save reconciles and writes in one store transaction (store.Tx.Update),
// so processes saving the same lesson at the same instant end with one
// record and a support per conversation; the exception is an agent's
// supersede with an evaluator configured (the eval gate may take minutes),
// whose reconciliation and write are separate operations (Garden reports a
// duplicate that slips through). SaveBatch reconciles and writes a whole batch in one store transaction
// (store.Tx.Update), so it has no such window and one durable commit per
// batch; between batches it caches the lines of the targets it reconciled
// against, valid while nobody else commits (store.Stamper). Contradiction detection
// is lexical (see evolve/lexical). A human's approval is not re-checked for
// contradictions: the human decides.
package evolve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// ErrRefused is a gate refusal: an operation the actor may never perform
// (an agent approving, a locked tier, a memory creating a judgment domain).
// Callers map it to a refused answer (CLI exit 1).
var ErrRefused = errors.New("refused")

// Status is the outcome of a gated operation (Outcome.Status).
type Status string

// Outcome statuses.
const (
	StatusPromoted    Status = "promoted"
	StatusPending     Status = "pending"
	StatusBlocked     Status = "blocked"
	StatusRefused     Status = "refused"
	StatusDemoted     Status = "demoted"
	StatusInvalidated Status = "invalidated"
	StatusApproved    Status = "approved"
	StatusRejected    Status = "rejected"
)

// SaveStatus is the answer of a save (SaveResult.Status).
type SaveStatus string

// Save statuses.
const (
	SaveSaved    SaveStatus = "saved"
	SaveConflict SaveStatus = "conflict"
	SaveNotFound SaveStatus = "not_found"
	SaveRefused  SaveStatus = "refused"
)

// State is where a saved record stands (SaveResult.State).
type State string

// Record states.
const (
	StatePromoted  State = "promoted"
	StateCandidate State = "candidate"
	StatePending   State = "pending"
	StateRecall    State = "recall"
)

// Config is what an Engine needs. Store is required; the rest have defaults.
type Config struct {
	// Store is a Store, an Update's Tx, or store.ReadOnly of a View's
	// Reader (for a surface that only reads).
	Store store.Tx
	// Workspace carries promotion, staleness and budget settings; defaults
	// are filled in by New.
	Workspace schema.WorkspaceConfig
	// Agent is the authored config (nil when none was found: domain and
	// authored-contradiction checks are then skipped, and the overlay
	// reports unknown domains later).
	Agent *schema.AgentConfig
	// Scope is the base scope; records are saved with agent =
	// Agent.RoleTemplate.Name added (or Scope["agent"] when Agent is nil).
	Scope     map[string]string
	Now       func() time.Time
	Evaluator Evaluator
	Logger    *slog.Logger
	// ChainCheck verifies Store's ledger chain for the reads that show
	// what the ledger says (Learnings); nil is store.CheckChain of Store.
	// A long-lived surface passes one that remembers the verdict while the
	// store stays as it was (engine.ChainVerdicts).
	ChainCheck func(ctx context.Context) error
}

// Engine applies the evolution rules to one agent's view of a store. It is
// safe for concurrent use as far as its Store is.
type Engine struct {
	st         store.Tx
	ws         schema.WorkspaceConfig
	agent      *schema.AgentConfig
	name       string
	base       map[string]string // base scope without the agent key
	scope      map[string]string // scope records are saved with
	now        func() time.Time
	eval       Evaluator
	log        *slog.Logger
	policy     overlay.Policy
	recurrence int
	ttl        time.Duration
	staleAfter time.Duration
	// texts memoizes lexical analyses of contents (nil in an Engine{}
	// literal: every comparison analyzes its texts).
	texts *textMemo
	// shelf keeps the reconciliation cache between SaveBatch calls (nil in
	// an Engine{} literal: no cache); lc is the cache a batch copy works
	// with (linecache.go).
	shelf      *lineShelf
	lc         *lineCache
	chainCheck func(ctx context.Context) error // Config.ChainCheck
}

// textMemoSize bounds the analyses an engine keeps; past it the memo
// starts over.
const textMemoSize = 1 << 14

// textMemo maps a content string to its lexical analysis (a pure function
// of the string, so a hit is always right).
type textMemo struct {
	mu sync.Mutex
	m  map[string]*lexical.Text
}

// New returns an engine for c. Unparseable durations in the workspace config
// fall back to their defaults (schema validation reports them).
func New(c Config) *Engine {
	ws := c.Workspace.WithDefaults()
	e := &Engine{
		st:         c.Store,
		ws:         ws,
		agent:      c.Agent,
		now:        c.Now,
		eval:       c.Evaluator,
		log:        c.Logger,
		chainCheck: c.ChainCheck,
		policy:     overlay.PolicyFrom(ws),
		recurrence: ws.Promotion.Recurrence,
		ttl:        schema.DefaultProposalExpiry,
		staleAfter: schema.DefaultStaleAfter,
		texts:      &textMemo{m: map[string]*lexical.Text{}},
		shelf:      &lineShelf{},
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if d, err := schema.ParseDuration(ws.Promotion.ProposalExpiry); err == nil && d > 0 {
		e.ttl = d
	}
	if d, err := schema.ParseDuration(ws.StaleAfter); err == nil && d > 0 {
		e.staleAfter = d
	}
	if c.Agent != nil {
		e.name = c.Agent.RoleTemplate.Name
	} else {
		e.name = c.Scope[store.AgentKey]
	}
	e.base = map[string]string{}
	for k, v := range c.Scope {
		if k != store.AgentKey {
			e.base[k] = v
		}
	}
	e.scope = maps.Clone(e.base)
	if e.name != "" {
		e.scope[store.AgentKey] = e.name
	}
	return e
}

// withStore returns a copy of the engine working on st (the Tx of an
// Update of its store).
func (e *Engine) withStore(st store.Tx) *Engine {
	c := *e
	c.st = st
	c.lc = nil
	return &c
}

// text is the lexical analysis of s, memoized.
func (e *Engine) text(s string) *lexical.Text {
	m := e.texts
	if m == nil {
		return lexical.Analyze(s)
	}
	m.mu.Lock()
	t, ok := m.m[s]
	m.mu.Unlock()
	if ok {
		return t
	}
	t = lexical.Analyze(s)
	m.mu.Lock()
	if len(m.m) >= textMemoSize {
		clear(m.m)
	}
	m.m[s] = t
	m.mu.Unlock()
	return t
}

// AgentName is the agent key this engine works for ("" when unknown).
func (e *Engine) AgentName() string { return e.name }

// Scope returns a copy of the scope saved records get.
func (e *Engine) Scope() map[string]string { return maps.Clone(e.scope) }

// Recurrence is N: distinct conversations that earn a promotion.
func (e *Engine) Recurrence() int { return e.recurrence }

// Progress reports an earned-tier record's recurrence progress: distinct
// conversations it has and the number it needs. Other tiers need 0.
func (e *Engine) Progress(rec schema.MemoryRecord) (have, need int) {
	have = rec.DistinctConversations()
	if rec.Target != nil && schema.TierOf(*rec.Target) == schema.TierEarned {
		need = e.recurrence
	}
	return have, need
}

func (e *Engine) nowString() string { return schema.FormatTime(e.now()) }

// visible reports whether a record belongs to this engine's view: its scope
// holds the base scope and its agent is unset or this agent.
func (e *Engine) visible(rec *schema.MemoryRecord) bool {
	return store.InView(rec.Scope, e.base, e.name)
}

// get returns a record of this engine's view; a missing record and one
// outside the view are the same ErrNotFound.
func (e *Engine) get(ctx context.Context, id string) (schema.MemoryRecord, error) {
	rec, err := e.st.Get(ctx, id)
	if err != nil && !isNotFound(err) {
		return rec, fmt.Errorf("record %s: %w", id, err)
	}
	if err != nil || !e.visible(&rec) {
		// Another agent's record answers exactly like a missing one: its
		// existence is not leaked.
		return schema.MemoryRecord{}, fmt.Errorf("record %s: %w", id, store.ErrNotFound)
	}
	return rec, nil
}

// promotion returns the record's promotion row, ok=false when unpromoted.
func (e *Engine) promotion(ctx context.Context, id string) (store.Promotion, bool, error) {
	p, err := e.st.Promotion(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("promotion of %s: %w", id, err)
	}
	return p, true, nil
}

// promoted returns the valid promoted records of this engine's view.
func (e *Engine) promoted(ctx context.Context) ([]schema.MemoryRecord, error) {
	recs, err := e.st.Promoted(ctx, e.base, e.name)
	if err != nil {
		return nil, fmt.Errorf("promoted records: %w", err)
	}
	return recs, nil
}

// live returns the valid records of this view with exactly target t.
func (e *Engine) live(ctx context.Context, t schema.MemoryTarget) ([]schema.MemoryRecord, error) {
	res, err := e.st.Search(ctx, store.Query{Scope: e.base, Target: &t, Limit: store.Limit(store.Unlimited)})
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", t, err)
	}
	out := res.Records[:0]
	for i := range res.Records {
		if e.visible(&res.Records[i]) {
			out = append(out, res.Records[i])
		}
	}
	return out, nil
}

// pendingFor returns the pending proposal of kind k for a record, if any.
func (e *Engine) pendingFor(ctx context.Context, id string, k store.ProposalKind) (store.Proposal, bool, error) {
	ps, err := e.st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending, RecordID: id})
	if err != nil {
		return store.Proposal{}, false, fmt.Errorf("proposals of %s: %w", id, err)
	}
	for _, p := range ps {
		if p.Kind == k {
			return p, true, nil
		}
	}
	return store.Proposal{}, false, nil
}

// propose opens a proposal unless one of the same kind is already pending
// (the store keeps one per record and kind): an equivalent one (the same
// superseding record) is returned; another (a plain demotion when a
// supersede is asked, or a supersede by another record) is an error
// wrapping store.ErrConflict, so a supersede never reuses a proposal whose
// approval would not set supersededBy.
func (e *Engine) propose(ctx context.Context, req store.ProposalRequest) (store.Proposal, error) {
	ps, err := e.st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending, RecordID: req.RecordID})
	if err != nil {
		return store.Proposal{}, fmt.Errorf("proposals of %s: %w", req.RecordID, err)
	}
	for _, p := range ps {
		if p.Kind != req.Kind {
			continue
		}
		if p.SupersededBy != req.SupersededBy {
			return p, pendingConflict(p)
		}
		return p, nil
	}
	req.TTL = e.ttl
	p, err := e.st.Propose(ctx, req)
	if err != nil {
		return p, fmt.Errorf("propose %s of %s: %w", req.Kind, req.RecordID, err)
	}
	e.log.Info("proposal opened", "id", p.ID, "kind", p.Kind, "record", p.RecordID, "by", req.RequestedBy.String())
	return p, nil
}

func isHuman(a store.Actor) bool { return a.Kind == store.ActorHuman }

// evidenceConversations lists a record's distinct conversations in order.
func evidenceConversations(rec *schema.MemoryRecord) []string {
	var out []string
	seen := map[string]bool{}
	add := func(c string) {
		if k, err := schema.NormalizeConversationID(c); err == nil {
			c = k
		}
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	add(rec.Provenance.ConversationID)
	for _, s := range rec.Supports {
		add(s.ConversationID)
	}
	return out
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// pendingConflict is the error of a change that a different pending
// proposal of the record stands in the way of.
func pendingConflict(p store.Proposal) error {
	return fmt.Errorf("%w: %s", store.ErrConflict, pendingWhy(p))
}

// pendingWhy is why p blocks another change of its record, without the
// status word (a save's Guidance beside its conflict status).
func pendingWhy(p store.Proposal) string {
	what := "a demotion"
	switch {
	case p.Kind == store.ProposePromote:
		what = "a promotion"
	case p.SupersededBy != "":
		what = "a supersede by " + p.SupersededBy
	case p.Invalidate:
		what = "an invalidation"
	}
	return fmt.Sprintf("proposal %s (%s of record %s) is already pending: a human decides it first", p.ID, what, p.RecordID)
}

// snapshotter is a store that reads on one snapshot (store.Store's View).
type snapshotter interface {
	View(ctx context.Context, fn func(store.Reader) error) error
}

// readAll runs fn's reads on one snapshot of the engine's store when it
// offers one (a Store; on a file store one open instead of one per read),
// else on the store as it is (a transaction already is one).
func (e *Engine) readAll(ctx context.Context, fn func(store.Reader) error) error {
	if s, ok := e.st.(snapshotter); ok {
		return s.View(ctx, fn)
	}
	return fn(e.st)
}
