package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// Verbs are the product's review verbs over a session's store, each
// opening the store for one request and closing it after (so other
// processes write between requests): the agents in the actor's view, the
// overview (pending reviews, conflicts), one agent's composition and
// learnings, its timeline, a record's history, garden, approve, reject and
// supersede. The lens is an adapter over them; reads are confined to the
// session's view, and writes go through the gates as the session's actor.
type Verbs struct {
	S *Session
	// Options open the store (lock timeout, clock); ReadOnly is set per
	// verb.
	Options store.Options
	// conflicts remembers each agent's conflicts per state of the store
	// file and of its agent file: the landing lists them on every load.
	conflicts *conflictMemo
}

// Verbs returns the session's review verbs, opening its store with opts.
func (s *Session) Verbs(opts store.Options) *Verbs {
	return &Verbs{S: s, Options: opts, conflicts: &conflictMemo{}}
}

// chainCheck is the check of st's ledger chain the verbs' agents make
// (AgentSpec.ChainCheck): the store queue's (StoreQueue.ChainCheck), whose
// verdict the lens shows learnings by on every agent page load.
func (v *Verbs) chainCheck(st store.Reader) func(ctx context.Context) error {
	return QueueFor(v.S.Location).ChainCheck(st)
}

// base is the workspace scope without an agent key.
func (v *Verbs) base() map[string]string {
	b := maps.Clone(v.S.Workspace.Config.Scope)
	if b == nil {
		b = map[string]string{}
	}
	delete(b, store.AgentKey)
	return b
}

// missing reports whether the session's store is a file that does not
// exist yet: nothing is saved, and no verb creates it.
func (v *Verbs) missing() bool {
	if IsURL(v.S.Location) {
		return false
	}
	_, err := os.Stat(v.S.Location)
	return errors.Is(err, os.ErrNotExist)
}

// read runs fn on one snapshot of the store (none when it does not exist:
// fn is not called).
func (v *Verbs) read(ctx context.Context, fn func(st store.Tx) error) error {
	if v.missing() {
		return nil
	}
	return QueueFor(v.S.Location).WithStore(ctx, v.S.Opens(v.Options), false, fn)
}

// Agents lists the agents of the actor's view in st: every agent file of
// the workspace (by roleTemplate.name, records or not) and every agent key
// of the records of the workspace scope, sorted, with "" for the shared
// records; an agent actor's view is its own agent alone. A nil st (no store
// yet) lists the agent files alone.
func (v *Verbs) Agents(ctx context.Context, st store.Reader) ([]string, error) {
	if v.S.View.Confined() {
		return []string{v.S.View.Agent}, nil
	}
	var names []string
	if st != nil {
		var err error
		if names, err = StoreAgents(ctx, st, v.base()); err != nil {
			return nil, err
		}
	}
	for n := range v.agentFiles() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// agentFiles is AgentFileNames of the session's workspace.
func (v *Verbs) agentFiles() map[string]string { return AgentFileNames(v.S.Workspace) }

// StoreAgents lists the agents that have records in st inside base scope,
// sorted ("" for the shared records): the agents a report covers (the
// lens's agents, the CLI's proposals, garden and learnings).
func StoreAgents(ctx context.Context, st store.Reader, base map[string]string) ([]string, error) {
	return store.Agents(ctx, st, base)
}

// agentFile is the workspace's agent file of name, "" when none.
func (v *Verbs) agentFile(name string) string {
	if name == "" {
		return ""
	}
	file, err := v.S.Workspace.FindAgent(name)
	if err != nil {
		return ""
	}
	return file
}

// AgentOf is the engine of agent name over st in the workspace scope, with
// the workspace's agent file of that name when there is one ("" is the
// shared records).
func (v *Verbs) AgentOf(st store.Tx, name string) (*Agent, error) {
	return v.agentIn(st, name, v.base())
}

// agentIn is the engine of agent name over st in base scope.
func (v *Verbs) agentIn(st store.Tx, name string, base map[string]string) (*Agent, error) {
	eng, _, err := v.agentSum(st, name, base)
	return eng, err
}

// agentSum is agentIn with the hash of the agent file's bytes as read
// (zero without a file).
func (v *Verbs) agentSum(st store.Tx, name string, base map[string]string) (*Agent, [sha256.Size]byte, error) {
	var cfg *schema.AgentConfig
	var sum [sha256.Size]byte
	if file := v.agentFile(name); file != "" {
		data, err := workspace.ReadFile(file)
		if err != nil {
			return nil, sum, fmt.Errorf("agent file: %w", err)
		}
		if cfg, err = LoadAgent(file, data); err != nil {
			return nil, sum, err
		}
		sum = sha256.Sum256(data)
	}
	return NewAgent(AgentSpec{Store: st, Workspace: v.S.Workspace, Agent: cfg, Name: name, Scope: base,
		Now: v.Options.Now, Evaluator: EvaluatorFor(v.S.Workspace), ChainCheck: v.chainCheck(st)}), sum, nil
}

// mayRead refuses an agent actor another agent's pages, as a missing agent.
func (v *Verbs) mayRead(name string) error {
	if view := v.S.View; view.Confined() && name != view.Agent && name != "" {
		return fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
	}
	return nil
}

// AgentConflict is a conflict of one agent's view.
type AgentConflict struct {
	Conflict
	Agent string
}

// Overview is what needs a human: the agents of the view, the pending
// reviews (oldest first) and the conflicts of every kind.
type Overview struct {
	Agents []string // "" is the shared records
	// Files maps an agent of Agents to its agent file, relative to the
	// workspace root (an agent with records and no file has none).
	Files     map[string]string
	Proposals []Review
	Conflicts []AgentConflict
}

// Overview reads the agents, their pending reviews and their conflicts
// (Agent.Conflicts, the list lint and garden give) on one snapshot. A
// conflict two agents' views share (on shared records) is listed once.
func (v *Verbs) Overview(ctx context.Context) (Overview, error) {
	ov := Overview{Agents: []string{}, Files: map[string]string{}, Proposals: []Review{}, Conflicts: []AgentConflict{}}
	files := v.agentFiles()
	if v.missing() {
		// No store yet: the agent files alone, nothing to review.
		names, err := v.Agents(ctx, nil)
		if err != nil {
			return ov, err
		}
		for _, n := range names {
			ov.Agents = append(ov.Agents, n)
			if f, ok := files[n]; ok {
				ov.Files[n] = f
			}
		}
		return ov, nil
	}
	// Overdue proposals close first (they fail closed), in a write of their
	// own when the snapshot finds one, and the snapshot is read again; a
	// landing with none due opens the store for reading alone (a write
	// open takes the writer lock and checks the whole file first).
	err := v.overview(ctx, &ov, files, true)
	if !errors.Is(err, errProposalsDue) {
		return ov, err
	}
	err = QueueFor(v.S.Location).WithStore(ctx, v.S.Opens(v.Options), true, func(st store.Tx) error {
		_, err := st.ExpireProposals(ctx)
		return err
	})
	if err != nil {
		return ov, fmt.Errorf("expire proposals: %w", err)
	}
	// A proposal that falls due after the write is not listed: reviews
	// are listed as they stand at now (PendingReviews).
	ov.Agents, ov.Files, ov.Proposals, ov.Conflicts = []string{}, map[string]string{}, []Review{}, []AgentConflict{}
	return ov, v.overview(ctx, &ov, files, false)
}

// errProposalsDue stops an overview's read that found pending proposals
// past their expiry: they are expired first.
var errProposalsDue = errors.New("pending proposals past their expiry")

// overview reads ov on one snapshot; with due, it stops with
// errProposalsDue at a proposal past its expiry that is not closed yet.
func (v *Verbs) overview(ctx context.Context, ov *Overview, files map[string]string, due bool) error {
	return v.read(ctx, func(st store.Tx) error {
		if due {
			ps, err := st.Proposals(ctx, store.ProposalFilter{State: store.ProposalExpired})
			if err != nil {
				return err
			}
			if slices.ContainsFunc(ps, store.AwaitsExpiry) {
				return errProposalsDue
			}
		}
		names, err := v.Agents(ctx, st)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		pairs := map[string]bool{}
		for _, name := range names {
			ov.Agents = append(ov.Agents, name)
			if f, ok := files[name]; ok {
				ov.Files[name] = f
			}
			eng, sum, err := v.agentSum(st, name, v.base())
			if err != nil {
				return err
			}
			rs, err := PendingReviews(ctx, st, eng, name, true, seen)
			if err != nil {
				return err
			}
			ov.Proposals = append(ov.Proposals, rs...)
			cs, err := v.conflicts.conflicts(ctx, eng, v.S.Location, name, sum, v.now())
			if err != nil {
				return err
			}
			for _, c := range cs {
				p := c.Pair()
				key := string(c.Kind) + " " + min(p[0], p[1]) + " " + max(p[0], p[1])
				if pairs[key] {
					continue
				}
				pairs[key] = true
				ov.Conflicts = append(ov.Conflicts, AgentConflict{Conflict: c, Agent: name})
			}
		}
		return nil
	})
}

// AgentPage is one agent's composition (now, or at a time) and what it
// learned since a time.
type AgentPage struct {
	Name string
	File string // the agent file, "" when the workspace has none
	// Composed is the composition (nil without an agent file).
	Composed *ComposeResult
	Policy   Policy
	// Learnings since the time asked for, oldest first.
	Learnings []Learning
}

// Agent composes agent name as its file and the store say (at: "" now,
// else RFC 3339) and lists its learnings since since. A composition that
// fails (a malformed file, a bad time) wraps store.ErrInvalid.
func (v *Verbs) Agent(ctx context.Context, name, at string, since time.Time) (AgentPage, error) {
	p := AgentPage{Name: name, Policy: PolicyFrom(v.S.Workspace.Config)}
	if err := v.mayRead(name); err != nil {
		return p, err
	}
	p.File = v.agentFile(name)
	compose := func(st store.Tx) error {
		if p.File == "" {
			return nil // no agent file: nothing to compose
		}
		scope := maps.Clone(v.S.Workspace.Config.Scope)
		res, err := Compose(ctx, ComposeRequest{AgentFile: p.File, Store: st, Scope: scope, At: at, Policy: p.Policy, Now: v.Options.Now})
		if err != nil {
			return fmt.Errorf("%w: %w", store.ErrInvalid, err)
		}
		p.Composed = res
		return nil
	}
	if v.missing() {
		return p, compose(nil)
	}
	err := v.read(ctx, func(st store.Tx) error {
		if err := compose(st); err != nil {
			return err
		}
		// The agents listed (Agents) have learnings to show: one with an
		// agent file always is, so only a name without one asks the store.
		if p.File == "" {
			names, err := v.Agents(ctx, st)
			if err != nil {
				return err
			}
			if !slices.Contains(names, name) {
				return nil
			}
		}
		eng, err := v.AgentOf(st, name)
		if err != nil {
			return err
		}
		p.Learnings, err = eng.Learnings(ctx, since)
		return err
	})
	return p, err
}

// TimelinePage is one page of a timeline, newest entry first.
type TimelinePage struct {
	Entries []store.LedgerEntry
	// Older is where the next, older page starts (its before); 0 when no
	// older entry is left.
	Older uint64
}

// TimelinePageSize is the entries of a timeline page when the caller does
// not say.
const TimelinePageSize = 200

// timelineChunk is the ledger entries a timeline reads at a time.
const timelineChunk = 256

// Timeline is a page of the ledger of one agent's view (the shared
// records' is the whole ledger of the actor's view), newest first: at most
// limit (<= 0: TimelinePageSize) entries older than entry before (0: from
// the newest). The ledger is read newest first, a chunk at a time, until
// the page is full: a page costs its entries, not the ledger.
func (v *Verbs) Timeline(ctx context.Context, name string, before uint64, limit int) (TimelinePage, error) {
	var p TimelinePage
	if err := v.mayRead(name); err != nil {
		return p, err
	}
	if limit <= 0 {
		limit = TimelinePageSize
	}
	err := v.read(ctx, func(st store.Tx) error {
		view := v.S.View
		if name != "" && !view.Confined() {
			view = ViewOf(store.Actor{Kind: store.ActorAgent, Name: name}, v.S.Workspace.Config.Scope)
		}
		var out []store.LedgerEntry
		n := max(limit+1, timelineChunk)
		for cursor := before; ; {
			chunk, err := st.Ledger(ctx, store.LedgerFilter{Before: cursor, Limit: n})
			if err != nil {
				return err
			}
			vis, err := view.Ledger(ctx, st, chunk)
			if err != nil {
				return err
			}
			for i := len(vis) - 1; i >= 0 && len(out) <= limit; i-- {
				out = append(out, vis[i])
			}
			if len(out) > limit {
				p.Entries, p.Older = out[:limit], out[limit-1].Seq
				return nil
			}
			if len(chunk) < n {
				p.Entries = out
				return nil
			}
			cursor = chunk[0].Seq
		}
	})
	return p, err
}

// RecordHistory is a record, its promotion (nil when not promoted) and the
// ledger entries about it.
type RecordHistory struct {
	Record    schema.MemoryRecord
	Promotion *store.Promotion
	Ledger    []store.LedgerEntry
	// Restore, for a superseded or invalidated version, is what restoring
	// it would do (nil for a live record).
	Restore *RestorePreview
}

// RestorePreview is "restore this version": the composition diff it
// would make, or why it may not be restored.
type RestorePreview struct {
	Diff string
	// Why, when set, is why the version may not be restored.
	Why string
}

// Record is one record of the actor's view with its promotion and ledger
// history; another agent's record is not found.
func (v *Verbs) Record(ctx context.Context, id string) (RecordHistory, error) {
	var h RecordHistory
	if v.missing() {
		return h, NotFound(id)
	}
	err := v.read(ctx, func(st store.Tx) error {
		rec, err := v.S.View.Get(ctx, st, id)
		if err != nil {
			return err
		}
		h.Record = rec
		if p, err := st.Promotion(ctx, id); err == nil {
			h.Promotion = &p
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		h.Ledger, err = st.Ledger(ctx, store.LedgerFilter{RecordID: id})
		if err != nil || rec.Valid(schema.FormatTime(v.now())) {
			return err
		}
		eng, err := v.agentForRecord(ctx, st, id)
		if err != nil {
			return err
		}
		diff, why, err := eng.RestorePreview(ctx, id)
		if err != nil {
			return err
		}
		h.Restore = &RestorePreview{Diff: diff, Why: why}
		return nil
	})
	return h, err
}

// now is the verbs' clock.
func (v *Verbs) now() time.Time {
	if v.Options.Now != nil {
		return v.Options.Now()
	}
	return time.Now()
}

// Restore brings a superseded or invalidated version back as the current
// one on its slot, as the session's actor (human only), through the gates
// of the agent the record belongs to.
func (v *Verbs) Restore(ctx context.Context, id string) (Outcome, error) {
	return v.write(ctx, func(st store.Tx) (Outcome, error) {
		eng, err := v.agentForRecord(ctx, st, id)
		if err != nil {
			return Outcome{}, err
		}
		res, err := eng.Restore(ctx, id, v.S.Actor)
		return res.Outcome, err
	})
}

// write opens the store for one write as the session's actor, in its turn
// in the store's queue (StoreQueue.WithStore): after the reads and writes
// of this process ahead of it (a landing over a large store), and alone,
// so a page read after it returns sees it.
func (v *Verbs) write(ctx context.Context, fn func(st store.Tx) (Outcome, error)) (Outcome, error) {
	if v.missing() {
		return Outcome{}, fmt.Errorf("no memory store at %s: %w", Redact(v.S.Location), store.ErrNotFound)
	}
	var out Outcome
	err := QueueFor(v.S.Location).WithStore(ctx, v.S.Opens(v.Options), true, func(st store.Tx) error {
		var err error
		out, err = fn(st)
		return err
	})
	return out, err
}

// Garden runs the curation pass for agent name (it may open proposals, as
// system:garden) and returns its health report.
func (v *Verbs) Garden(ctx context.Context, name string) (HealthReport, error) {
	var h HealthReport
	if err := v.mayRead(name); err != nil {
		return h, err
	}
	_, err := v.write(ctx, func(st store.Tx) (Outcome, error) {
		names, err := v.Agents(ctx, st)
		if err != nil {
			return Outcome{}, err
		}
		for _, n := range names {
			if n == name {
				eng, err := v.AgentOf(st, name)
				if err != nil {
					return Outcome{}, err
				}
				h, err = eng.Garden(ctx)
				return Outcome{}, err
			}
		}
		return Outcome{}, fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
	})
	return h, err
}

// agentForRecord is the engine of the agent a record of the actor's view
// belongs to, in the workspace scope when the record lies in it, else in
// the record's own scope (without its agent key). An agent actor gets its
// own agent's engine.
func (v *Verbs) agentForRecord(ctx context.Context, st store.Tx, id string) (*Agent, error) {
	rec, err := v.S.View.Get(ctx, st, id)
	if err != nil {
		return nil, err
	}
	name := rec.Scope[store.AgentKey]
	if v.S.View.Confined() {
		name = v.S.View.Agent
	}
	base := v.base()
	if !store.MatchScope(rec.Scope, base) {
		base = maps.Clone(rec.Scope)
		delete(base, store.AgentKey)
	}
	return v.agentIn(st, name, base)
}

// Approve approves a pending proposal as the session's actor (Decide);
// content is the approver's edit of a merge's text ("" keeps it).
func (v *Verbs) Approve(ctx context.Context, id, content string) (Outcome, error) {
	return v.decide(ctx, id, true, "", content)
}

// Reject rejects a pending proposal as the session's actor (Decide).
func (v *Verbs) Reject(ctx context.Context, id, reason string) (Outcome, error) {
	return v.decide(ctx, id, false, reason, "")
}

func (v *Verbs) decide(ctx context.Context, id string, approve bool, reason, content string) (Outcome, error) {
	return v.write(ctx, func(st store.Tx) (Outcome, error) {
		return Decide(ctx, st, v.S.View, v.S.Actor, id, approve, reason, content, func(rid string) (*Agent, error) {
			return v.agentForRecord(ctx, st, rid)
		})
	})
}

// Supersede keeps keepID and retires dropID through the gates of the agent
// the records belong to (the one with an agent key, drop's first), as the
// session's actor.
func (v *Verbs) Supersede(ctx context.Context, keepID, dropID string) (Outcome, error) {
	return v.write(ctx, func(st store.Tx) (Outcome, error) {
		id := dropID
		if rec, err := v.S.View.Get(ctx, st, dropID); err == nil && rec.Scope[store.AgentKey] == "" {
			id = keepID
		}
		eng, err := v.agentForRecord(ctx, st, id)
		if err != nil {
			return Outcome{}, err
		}
		return eng.Supersede(ctx, keepID, dropID, v.S.Actor)
	})
}
