// Package compose is the instantiate seam (ADR-0008 Decision 2): it reads an
// authored agent file, takes the agent's valid, promoted records from the
// store (now, or replayed from the ledger at a past time), applies the
// overlay, renders the system prompt and records the overlay summary. The
// authored file is never written.
package compose

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// Request says what to instantiate.
type Request struct {
	// AgentFile is the path of the authored agent file (YAML or JSON).
	AgentFile string
	// Store holds the memories; nil composes the authored agent alone
	// (or with Promoted). Without Summarize it is only read: a read-only
	// surface passes store.ReadOnly of a View's Reader.
	Store store.Tx
	// Promoted, when non-nil, are the agent's valid, promoted records of
	// now, already read by the caller: they are composed and Store is not
	// asked for them (At must be empty).
	Promoted []schema.MemoryRecord
	// Scope is the base scope; the agent key comes from roleTemplate.name.
	Scope map[string]string
	// At, when set (RFC 3339), composes the agent as it was at that time,
	// from the ledger alone.
	At string
	// Policy holds budgets and ceiling (overlay.PolicyFrom of the workspace).
	Policy overlay.Policy
	// Now stamps the overlay summary; nil is time.Now.
	Now func() time.Time
	// Summarize appends the overlay summary to the store (what a runtime's
	// instantiate does), with the candidate slice it shows, and records each
	// conflict it sees for the first time in the ledger. It is ignored with
	// At: a replay is not an instantiate.
	Summarize bool
	// ReadFile reads the agent file; nil is workspace.ReadFile (regular files only).
	ReadFile func(string) ([]byte, error)
	// Agent, when set, is the already loaded (parsed, validated and decoded)
	// authored agent of AgentFile: it is used as is and the file is neither
	// read nor parsed again. Instantiate does not modify it.
	Agent *schema.AgentConfig
}

// Result is an instantiated agent.
type Result struct {
	// Agent is roleTemplate.name.
	Agent string
	// At is the canonical point in time composed, "" for now.
	At string
	// Authored is the agent file as written; Config is config′.
	Authored *schema.AgentConfig
	Config   *schema.AgentConfig
	// Records are the valid, promoted records the overlay was given.
	Records []schema.MemoryRecord
	Report  overlay.Report
	Prompt  overlay.Prompt
	// Summary is the overlay summary appended to the store, when one was.
	Summary *store.OverlaySummary

	scope  map[string]string
	store  store.Reader
	policy overlay.Policy
	// slice and rotation are the candidate slice an instantiate recorded
	// (sliceSet); pastSt is the replayed store of a result At a time.
	slice    []schema.MemoryRecord
	rotation int
	sliceSet bool
	pastSt   *pastState
}

// AtError is Instantiate's error for a Request.At that is not a time. It
// names no parameter: each surface words it with its own (the CLI's --at,
// --from or --to, MCP's and the lens's at). It wraps store.ErrInvalid.
type AtError struct {
	At  string // the value given
	Err error  // why it is not a time (schema.ParseTime)
}

func (e *AtError) Error() string { return "point in time: " + e.Err.Error() }

// Unwrap is store.ErrInvalid and the parse error.
func (e *AtError) Unwrap() []error { return []error{store.ErrInvalid, e.Err} }

// Instantiate composes the agent of req.AgentFile. A missing or malformed
// file, a bad At and store failures are errors; memories that cannot apply
// are not (they are in the report).
func Instantiate(ctx context.Context, req Request) (*Result, error) {
	at, atErr := "", error(nil)
	if req.At != "" {
		t, err := schema.ParseTime(req.At)
		if err != nil {
			atErr = &AtError{At: req.At, Err: err}
		} else {
			at = schema.FormatTime(t)
		}
	}
	cfg := req.Agent
	var early *earlyRead
	if cfg == nil {
		read := req.ReadFile
		if read == nil {
			read = workspace.ReadFile
		}
		data, err := read(req.AgentFile)
		if err != nil {
			return nil, fmt.Errorf("read agent file: %w", err)
		}
		// The memories are read while the file is parsed, validated and
		// decoded: for the name the file's text shows (GuessAgentName), or
		// else for the one the parse found; the read's name is checked
		// against the decoded agent below.
		canRead := req.Store != nil && req.Promoted == nil && atErr == nil
		if canRead {
			if name := schema.GuessAgentName(data); name != "" {
				early = startRead(ctx, req.Store, req.Scope, name, at)
			}
		}
		parsed := func(name string) {
			if !canRead || name == "" || early != nil && early.agent == name {
				return
			}
			// A wrong guess: its read ends before another starts, so
			// reads of the store's transaction never overlap.
			early.wait()
			early = startRead(ctx, req.Store, req.Scope, name, at)
		}
		cfg, err = loadAgentEarly(req.AgentFile, data, parsed)
		early.wait()
		if err != nil {
			return nil, err
		}
		if early != nil && early.agent != cfg.RoleTemplate.Name {
			early = nil
		}
	}
	if atErr != nil {
		return nil, atErr
	}
	var err error
	res := &Result{Agent: cfg.RoleTemplate.Name, At: at, Authored: cfg, scope: req.Scope, store: req.Store, policy: req.Policy}
	switch {
	case req.Promoted != nil:
		if res.At != "" {
			return nil, fmt.Errorf("compose: records read for now cannot compose %s", res.At)
		}
		res.Records = req.Promoted
	case early != nil:
		if early.err != nil {
			return nil, early.err
		}
		res.Records = early.recs
	case req.Store != nil:
		res.Records, err = promoted(ctx, req.Store, req.Scope, res.Agent, res.At)
		if err != nil {
			return nil, err
		}
	}
	res.Config, res.Report = overlay.Apply(cfg, res.Records, req.Policy)
	res.Prompt = overlay.Render(res.Config, res.Report.Attribution)
	if req.Summarize && req.Store != nil && res.At == "" {
		now := req.Now
		if now == nil {
			now = time.Now
		}
		s := Summary(res.Report, res.Agent, req.Scope, schema.FormatTime(now()))
		slice, rot, err := res.candidateSlice(ctx)
		if err != nil {
			return nil, err
		}
		res.slice, res.rotation, res.sliceSet = slice, rot, true
		s.CandidateIDs, s.Rotation = []string{}, rot
		for _, c := range slice {
			s.CandidateIDs = append(s.CandidateIDs, c.ID)
		}
		if err := req.Store.AppendOverlaySummary(ctx, s); err != nil {
			return nil, fmt.Errorf("append overlay summary: %w", err)
		}
		// Each residual conflict becomes a ledger entry the first time an
		// instantiate sees it (the store keeps it once per pair).
		for _, c := range res.Report.Conflicts {
			ci := store.ConflictInfo{Records: []string{c.Winner, c.Shadowed}, Target: c.Slot}
			if _, err := req.Store.RecordConflict(ctx, ci, store.SystemActor); err != nil {
				return nil, fmt.Errorf("record conflict: %w", err)
			}
		}
		res.Summary = &s
	}
	return res, nil
}

// earlyRead is promoted running on its own goroutine for an agent name.
type earlyRead struct {
	agent string
	done  chan struct{}
	recs  []schema.MemoryRecord
	err   error
}

func startRead(ctx context.Context, s store.Reader, scope map[string]string, agent, at string) *earlyRead {
	r := &earlyRead{agent: agent, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.recs, r.err = promoted(ctx, s, scope, agent, at)
	}()
	return r
}

// wait waits for the read to end (nil: none started).
func (r *earlyRead) wait() {
	if r != nil {
		<-r.done
	}
}

// promoted returns the agent's valid, promoted records of scope: now, or
// from the ledger at a canonical time at.
func promoted(ctx context.Context, s store.Reader, scope map[string]string, agent, at string) ([]schema.MemoryRecord, error) {
	if at == "" {
		recs, err := s.Promoted(ctx, scope, agent)
		if err != nil {
			return nil, fmt.Errorf("promoted records: %w", err)
		}
		// Nothing renders bytes the ledger does not vouch for.
		if err := store.VouchFor(ctx, s, recs); err != nil {
			return nil, fmt.Errorf("promoted records: %w", err)
		}
		return recs, nil
	}
	all, err := s.StateAt(ctx, at)
	if err != nil {
		return nil, fmt.Errorf("state at %s: %w", at, err)
	}
	filter, keep := store.AgentFilter(scope, agent)
	var recs []schema.MemoryRecord
	for _, r := range all {
		if store.MatchScope(r.Scope, filter) && keep(r.Scope) {
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// Summary is the overlay summary of a report: counts and ids, no content.
func Summary(rep overlay.Report, agent string, scope map[string]string, at string) store.OverlaySummary {
	ids := rep.IDs(overlay.StatusApplied)
	if ids == nil {
		ids = []string{}
	}
	chars := maps.Clone(rep.Totals.CharsPerPrimitive)
	bytes := maps.Clone(rep.Totals.BytesPerPrimitive)
	var sc map[string]string
	if len(scope) > 0 {
		sc = make(map[string]string, len(scope))
		for k, v := range scope {
			sc[k] = v
		}
	}
	return store.OverlaySummary{
		At: at, Agent: agent, Scope: sc,
		RecordCount:       rep.Totals.Applied,
		CharsPerPrimitive: chars,
		BytesPerPrimitive: bytes,
		Conflicts:         rep.Totals.Conflicts,
		Spilled:           rep.Totals.Spilled,
		RecordIDs:         ids,
	}
}

// Recall builds the recall block a runtime delivers with a conversation's
// first message: the rotating slice of targeted candidates (the one the
// instantiate recorded, see candidateSlice), the spilled records, and the
// records matching query (none when query is empty). For a result At a
// time, all three are as the store held them then: candidates and hits
// are replayed from the ledger, and the slice is the one the last
// instantiate at or before that time showed. Records already in the
// composition are never repeated.
func (r *Result) Recall(ctx context.Context, query string) (overlay.RecallBlock, error) {
	spilledIDs := map[string]bool{}
	for _, id := range r.Report.IDs(overlay.StatusSpilled) {
		spilledIDs[id] = true
	}
	var spilled []schema.MemoryRecord
	for _, rec := range r.Records {
		if spilledIDs[rec.ID] {
			spilled = append(spilled, rec)
		}
	}
	var cands, hits []schema.MemoryRecord
	if r.store != nil {
		var err error
		if cands, _, err = r.candidateSlice(ctx); err != nil {
			return overlay.RecallBlock{}, err
		}
		if query != "" {
			if hits, err = r.hits(ctx, query); err != nil {
				return overlay.RecallBlock{}, err
			}
		}
	}
	block := overlay.Recall(cands, spilled, hits, r.policy)
	// A replay's records are the verified ledger's own replay (past); now
	// they are the store's bytes, vouched for against the ledger.
	if r.store != nil && r.At == "" {
		// What the block delivers from the store now (candidates and
		// hits; spilled records were vouched for with the composition)
		// must match the ledger.
		delivered := map[string]bool{}
		for _, e := range block.Entries {
			delivered[e.ID] = true
		}
		var check []schema.MemoryRecord
		for _, list := range [][]schema.MemoryRecord{cands, hits} {
			for _, rec := range list {
				if delivered[rec.ID] && !spilledIDs[rec.ID] {
					check = append(check, rec)
					delete(delivered, rec.ID)
				}
			}
		}
		if err := store.VouchFor(ctx, r.store, check); err != nil {
			return overlay.RecallBlock{}, fmt.Errorf("recall: %w", err)
		}
	}
	return block, nil
}
