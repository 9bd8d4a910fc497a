package engine

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/agent-ls/agent-ls/evolve"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// SuiteResult is what an eval command prints: score, passed, failed.
type SuiteResult = evolve.SuiteResult

// SuiteRunner runs the eval suite once on a composed config (the eval
// gate's command contract: evolve.CommandEvaluator.RunSuite). reason says
// why a suite could not run; err is a host failure.
type SuiteRunner interface {
	RunSuite(ctx context.Context, cfg *schema.AgentConfig) (res SuiteResult, reason string, err error)
}

// ErrEvalCannotRun: the eval suite could not run (no command, a crash, a
// timeout, unusable output). Bisect never guesses past it.
var ErrEvalCannotRun = errors.New("the eval cannot run")

// SuiteRunnerFor is the eval suite a workspace configures (eval.command,
// run in the workspace root, the eval gate's evaluator), or an error
// wrapping ErrEvalCannotRun when it configures none.
func SuiteRunnerFor(ws *workspace.Workspace) (SuiteRunner, error) {
	if ws == nil || ws.Config.Eval == nil || len(ws.Config.Eval.Command) == 0 {
		return nil, fmt.Errorf("%w: no eval command configured (eval.command in .agent-ls.yaml)", ErrEvalCannotRun)
	}
	ce := evolve.NewCommandEvaluator(*ws.Config.Eval, "")
	ce.Dir = ws.Root
	return ce, nil
}

// Regresses reports whether cand scores worse than base (the eval gate's
// non-regression rule: a lower score or fewer passed cases).
func Regresses(base, cand SuiteResult) bool {
	return evolve.Compare(base, cand, "non-regression").Regressed
}

// BisectSearch is bisect's pure search over points 0..n of a history: 0 is
// good, n is bad, and the points between are in order. It runs eval on 0
// and on n once each (the baseline), and when n regresses against 0 it
// binary-searches for the first point that does, assuming that once a
// point regresses every later one does: ⌈log₂ n⌉ more runs at most. first
// is that point (1..n), 0 when n does not regress. An eval error ends the
// search and is returned as is.
func BisectSearch(ctx context.Context, n int, eval func(ctx context.Context, i int) (SuiteResult, error)) (first int, steps []BisectStep, err error) {
	if n < 1 {
		return 0, nil, errors.New("nothing between good and bad")
	}
	run := func(i int) (SuiteResult, error) { return eval(ctx, i) }
	good, err := run(0)
	if err != nil {
		return 0, nil, err
	}
	steps = append(steps, BisectStep{Point: 0, Result: good})
	bad, err := run(n)
	if err != nil {
		return 0, steps, err
	}
	reg := Regresses(good, bad)
	steps = append(steps, BisectStep{Point: n, Result: bad, Regressed: reg})
	if !reg {
		return 0, steps, nil
	}
	lo, hi := 0, n // lo does not regress, hi does
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		r, err := run(mid)
		if err != nil {
			return 0, steps, err
		}
		reg := Regresses(good, r)
		steps = append(steps, BisectStep{Point: mid, Result: r, Regressed: reg})
		if reg {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, steps, nil
}

// MaxBisectRuns is the most eval runs BisectSearch makes for n points
// after good: the baseline (good and bad) and ⌈log₂ n⌉.
func MaxBisectRuns(n int) int {
	if n <= 1 {
		return 2
	}
	return 2 + bits.Len(uint(n-1))
}

// BisectStep is one eval run of a bisect: the point (0 good, n bad), its
// result and whether it regresses against good.
type BisectStep struct {
	Point     int         `json:"point"`
	Seq       uint64      `json:"seq"`
	Result    SuiteResult `json:"result"`
	Regressed bool        `json:"regressed"`
}

// BisectRequest asks which ledger entry first made an agent regress.
type BisectRequest struct {
	// Agent is the authored agent (LoadAgent); its name is its agent key.
	Agent *schema.AgentConfig
	// Store is read only: its ledger is verified and replayed.
	Store store.Reader
	// Scope is the base scope; Policy the overlay's.
	Scope  map[string]string
	Policy Policy
	// Good and Bad are ledger points: a sequence number (the state after
	// that entry; 0 is before the first) or an RFC 3339 time (the state
	// after the last entry at or before it). Good defaults to the first
	// entry, Bad to the last.
	Good, Bad string
	// Suite runs the eval (SuiteRunnerFor).
	Suite SuiteRunner
}

// BisectResult is what a bisect found.
type BisectResult struct {
	Agent   string `json:"agent"`
	GoodSeq uint64 `json:"goodSeq"`
	BadSeq  uint64 `json:"badSeq"`
	// Changes counts the ledger entries between good and bad that change
	// the agent's composition (the points searched).
	Changes int `json:"changes"`
	// Runs counts the eval runs; MaxRuns is ⌈log₂ Changes⌉ + 2.
	Runs    int          `json:"runs"`
	MaxRuns int          `json:"maxRuns"`
	Steps   []BisectStep `json:"steps"`
	// Found: bad regresses against good and Culprit is the first entry
	// whose composition does.
	Found   bool           `json:"found"`
	Good    SuiteResult    `json:"good"`
	Bad     SuiteResult    `json:"bad"`
	Culprit *BisectCulprit `json:"culprit,omitempty"`
}

// BisectCulprit is the first ledger entry whose composition regresses.
type BisectCulprit struct {
	Seq    uint64          `json:"seq"`
	At     string          `json:"at"`
	Op     store.Op        `json:"op"`
	Actor  string          `json:"actor"`
	Reason string          `json:"reason,omitempty"`
	Result SuiteResult     `json:"result"`
	Record *BisectedRecord `json:"record,omitempty"`
	// Added and Removed are the records the entry put into and took out
	// of the composition.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Rollback is the one command that undoes it.
	Rollback string `json:"rollback"`
}

// BisectedRecord is the record a culprit entry is about.
type BisectedRecord struct {
	ID         string               `json:"id"`
	Content    string               `json:"content"`
	Target     string               `json:"target,omitempty"`
	Provenance schema.Provenance    `json:"provenance"`
	Supports   []schema.Support     `json:"supports,omitempty"`
	PromotedBy string               `json:"promotedBy,omitempty"`
	Approver   string               `json:"approver,omitempty"`
	Record     *schema.MemoryRecord `json:"-"`
}

// bisectPoint is one composition of the search: the state after Seq.
type bisectPoint struct {
	seq    uint64
	entry  *store.LedgerEntry
	cfg    *schema.AgentConfig
	ids    map[string]bool
	prompt string
}

// Bisect finds the first ledger entry between good and bad whose
// composition of the agent regresses against good's, running the eval at
// most MaxBisectRuns(changes) times. The ledger must verify. An eval that
// cannot run is an error wrapping ErrEvalCannotRun.
func Bisect(ctx context.Context, req BisectRequest) (*BisectResult, error) {
	if req.Agent == nil || req.Store == nil || req.Suite == nil {
		return nil, errors.New("agent, store and eval are required")
	}
	entries, err := req.Store.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	if err := store.VerifyChain(entries); err != nil {
		return nil, fmt.Errorf("the ledger does not verify: %w", err)
	}
	if len(entries) == 0 {
		return nil, errors.New("the ledger is empty: nothing to bisect")
	}
	last := entries[len(entries)-1].Seq
	goodSeq, err := ledgerPoint(entries, req.Good, "good", 1)
	if err != nil {
		return nil, err
	}
	badSeq, err := ledgerPoint(entries, req.Bad, "bad", last)
	if err != nil {
		return nil, err
	}
	if goodSeq >= badSeq {
		return nil, fmt.Errorf("good (entry %d) must come before bad (entry %d)", goodSeq, badSeq)
	}
	agent := req.Agent.RoleTemplate.Name
	points := composePoints(entries, req.Agent, agent, req.Scope, req.Policy, goodSeq, badSeq)
	res := &BisectResult{Agent: agent, GoodSeq: goodSeq, BadSeq: badSeq, Changes: len(points) - 1, MaxRuns: MaxBisectRuns(len(points) - 1)}
	if len(points) < 2 {
		return nil, fmt.Errorf("no ledger entry between %d and %d changes %s's composition: nothing to bisect", goodSeq, badSeq, agent)
	}
	eval := func(ctx context.Context, i int) (SuiteResult, error) {
		res.Runs++
		r, why, err := req.Suite.RunSuite(ctx, points[i].cfg)
		if err != nil {
			return r, fmt.Errorf("eval at ledger entry %d: %w", points[i].seq, err)
		}
		if why != "" {
			return r, fmt.Errorf("%w: at ledger entry %d: %s", ErrEvalCannotRun, points[i].seq, why)
		}
		return r, nil
	}
	first, steps, err := BisectSearch(ctx, len(points)-1, eval)
	for i := range steps {
		steps[i].Seq = points[steps[i].Point].seq
	}
	res.Steps = steps
	if err != nil {
		return res, err
	}
	res.Good, res.Bad = steps[0].Result, steps[1].Result
	if first == 0 {
		return res, nil
	}
	res.Found = true
	for _, s := range steps {
		if s.Point == first {
			res.Culprit = culprit(points[first-1], points[first], s.Result, entries)
		}
	}
	return res, nil
}

// CheckBisectPoint checks the form of a good or bad value (name) without
// the ledger: "" (the default), a sequence number or an RFC 3339 time;
// else a *schema.ValueError named name. A surface checks its arguments
// with it before it needs the eval or the store.
func CheckBisectPoint(name, v string) error {
	_, _, err := parseBisectPoint(name, v)
	return err
}

// parseBisectPoint is a good or bad value as a sequence number (at "") or
// a stored time (at); "" is the zero sequence number and no time.
func parseBisectPoint(name, v string) (seq uint64, at string, err error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, "", nil
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		return n, "", nil
	}
	t, err := schema.ParseTime(v)
	if err != nil {
		return 0, "", &schema.ValueError{Name: name, Value: v, Why: "want a ledger sequence number or an RFC 3339 time"}
	}
	return 0, schema.FormatTime(t), nil
}

// ledgerPoint resolves a good or bad value to a sequence number. An error
// is a *schema.ValueError named name ("good" or "bad"); a surface words it
// with its own parameter (schema.Named: the CLI's --good and --bad).
func ledgerPoint(entries []store.LedgerEntry, v, name string, def uint64) (uint64, error) {
	n, at, err := parseBisectPoint(name, v)
	switch {
	case err != nil:
		return 0, err
	case strings.TrimSpace(v) == "":
		return def, nil
	}
	last := entries[len(entries)-1].Seq
	if at == "" {
		if n > last {
			return 0, &schema.ValueError{Name: name, Value: strings.TrimSpace(v), Why: fmt.Sprintf("the ledger ends at entry %d", last)}
		}
		return n, nil
	}
	var seq uint64
	for _, e := range entries {
		if e.At <= at {
			seq = e.Seq
		}
	}
	return seq, nil
}

// composePoints replays the ledger and returns good's composition, then
// the composition after each entry in (goodSeq, badSeq] that changes the
// agent's rendered prompt.
func composePoints(entries []store.LedgerEntry, authored *schema.AgentConfig, agent string, scope map[string]string, p Policy, goodSeq, badSeq uint64) []bisectPoint {
	filter, keep := store.AgentFilter(scope, agent)
	st := store.NewState()
	mine := map[string]bool{}
	compose := func(seq uint64, at string) bisectPoint {
		var recs []schema.MemoryRecord
		ids := map[string]bool{}
		for id := range mine {
			r, ok := st.Records[id]
			if _, promoted := st.Promotions[id]; ok && promoted && (at == "" || r.Valid(at)) {
				recs = append(recs, r)
				ids[id] = true
			}
		}
		sortRecords(recs)
		cfg, rep := overlay.Apply(authored, recs, p)
		return bisectPoint{seq: seq, cfg: cfg, ids: ids, prompt: overlay.Render(cfg, rep.Attribution).Text()}
	}
	var points []bisectPoint
	if goodSeq == 0 {
		points = append(points, compose(0, ""))
	}
	for i := range entries {
		e := entries[i]
		if e.Seq > badSeq {
			break
		}
		store.ApplyEntry(&st, e)
		touched := false
		if e.Record != nil && store.MatchScope(e.Record.Scope, filter) && keep(e.Record.Scope) {
			mine[e.Record.ID] = true
			touched = true
		}
		touched = touched || mine[e.RecordID]
		switch {
		case e.Seq == goodSeq:
			pt := compose(e.Seq, e.At)
			points = append(points, pt)
		case e.Seq > goodSeq && touched:
			pt := compose(e.Seq, e.At)
			if pt.prompt != points[len(points)-1].prompt {
				pt.entry = &entries[i]
				points = append(points, pt)
			}
		}
	}
	return points
}

func sortRecords(recs []schema.MemoryRecord) {
	slices.SortFunc(recs, func(a, b schema.MemoryRecord) int { return strings.Compare(a.ID, b.ID) })
}

// culprit describes the entry of point cur (prev is the point before it).
func culprit(prev, cur bisectPoint, r SuiteResult, entries []store.LedgerEntry) *BisectCulprit {
	e := cur.entry
	// The state right after the entry (the chain verified: seq n is
	// entries[n-1]).
	state := store.ReplayAll(entries[:e.Seq])
	c := &BisectCulprit{Seq: e.Seq, At: e.At, Op: e.Op, Actor: e.Actor.String(), Reason: e.Reason, Result: r}
	for id := range cur.ids {
		if !prev.ids[id] {
			c.Added = append(c.Added, id)
		}
	}
	for id := range prev.ids {
		if !cur.ids[id] {
			c.Removed = append(c.Removed, id)
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Removed)
	id := e.RecordID
	if e.Op == store.OpSupersede && e.Record != nil || id == "" && e.Record != nil {
		id = e.Record.ID
	}
	if len(c.Added) == 1 {
		id = c.Added[0]
	} else if len(c.Added) == 0 && len(c.Removed) == 1 {
		id = c.Removed[0]
	}
	if rec, ok := state.Records[id]; ok {
		br := &BisectedRecord{ID: rec.ID, Content: rec.Content, Provenance: rec.Provenance, Supports: rec.Supports, Record: &rec}
		if rec.Target != nil {
			br.Target = rec.Target.String()
		}
		if pr, ok := state.Promotions[id]; ok {
			br.PromotedBy, br.Approver = pr.Actor.String(), pr.Approver
		} else {
			// Taken out by this entry: who had promoted it.
			for _, le := range entries {
				if le.Seq >= e.Seq {
					break
				}
				if le.RecordID == id && (le.Op == store.OpPromote || le.Op == store.OpApprove && le.Proposal != nil && le.Proposal.Kind == store.ProposePromote) {
					p := store.PromotionOf(le)
					br.PromotedBy, br.Approver = le.Actor.String(), p.Approver
				}
			}
		}
		c.Record = br
	}
	// A learning that superseded a version is rolled back by restoring
	// that version (which supersedes it in turn).
	prior := ""
	if len(c.Added) == 1 {
		for _, le := range entries[:e.Seq] {
			if le.Op == store.OpSupersede && le.Record != nil && le.Record.ID == c.Added[0] {
				prior = le.RecordID
			}
		}
	}
	c.Rollback = rollback(c, id, prior)
	return c
}

// rollback is the one command that undoes a culprit: a learning it put in
// is invalidated (rollback is invalidation), or, when it superseded a
// version (prior), that version is restored; a version it superseded or
// invalidated is restored; one it only demoted is promoted again.
func rollback(c *BisectCulprit, id, prior string) string {
	const why = `--reason "agent-ls bisect: first regression"`
	switch {
	case prior != "":
		return "agent-ls memory restore " + prior
	case c.Op == store.OpSupersede && len(c.Removed) > 0:
		return "agent-ls memory restore " + c.Removed[0]
	case len(c.Added) > 0:
		return fmt.Sprintf("agent-ls memory invalidate %s %s", c.Added[0], why)
	case len(c.Removed) > 0 && c.Record != nil && c.Record.Record != nil && c.Record.Record.InvalidAt != "":
		return "agent-ls memory restore " + c.Removed[0]
	case len(c.Removed) > 0:
		return "agent-ls promote " + c.Removed[0]
	}
	// The records stayed, their rendering changed (e.g. a retarget in place).
	return fmt.Sprintf("agent-ls memory invalidate %s %s", id, why)
}
