package evolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// GardenActor is who gardening's proposals are requested by: system:garden.
func GardenActor() store.Actor { return store.Actor{Kind: store.ActorSystem, Name: "garden"} }

// FragmentThreshold is the Similarity from which two records of one slot
// (below the near-duplicate threshold) are reported as fragments to merge.
const FragmentThreshold = 0.35

// Finding kinds of a health report.
const (
	FindingDuplicate      = "duplicate"
	FindingFragment       = "fragment"
	FindingStale          = "stale"
	FindingConflict       = "conflict"
	FindingKeyCollision   = "key-collision"
	FindingSpilled        = "spilled"
	FindingDropped        = "dropped"
	FindingEvalRegression = "eval-regression"
	FindingEvalFailed     = "eval-failed"
	FindingCeiling        = "ceiling"
	FindingExpired        = "expired"
)

// Finding is one thing gardening noticed; ProposalID is set when it opened
// a proposal for a human.
type Finding struct {
	Kind       string   `json:"kind"`
	RecordIDs  []string `json:"recordIds"`
	Message    string   `json:"message"`
	ProposalID string   `json:"proposalId,omitempty"`
	// Diff is the composition diff the proposal would make once approved
	// (set for the proposals this run opened).
	Diff string `json:"diff,omitempty"`
}

// PrimitiveHealth is the size of one primitive's learned composition.
type PrimitiveHealth struct {
	Promoted int `json:"promoted"`
	Chars    int `json:"chars"`
	Budget   int `json:"budget"`
}

// CandidateProgress is a candidate and how far it is from promotion.
type CandidateProgress struct {
	ID      string      `json:"id"`
	Target  string      `json:"target"`
	Tier    schema.Tier `json:"tier"`
	Content string      `json:"content"`
	Have    int         `json:"have"`
	Need    int         `json:"need"`
	Pending string      `json:"pendingProposal,omitempty"`
}

// RecallStats describe what stays in recall and whether it gets used.
type RecallStats struct {
	Candidates int `json:"candidates"`
	Untargeted int `json:"untargeted"`
	// NeverCorroborated counts candidates no second conversation supported.
	NeverCorroborated int `json:"neverCorroborated"`
	// Unused counts candidates older than staleAfter and never corroborated.
	Unused int `json:"unused"`
}

// HealthReport is gardening's answer: sizes, conflicts, candidates and
// their progress, recall statistics, staleness, and the proposals opened.
type HealthReport struct {
	Agent      string                     `json:"agent"`
	Scope      map[string]string          `json:"scope"`
	At         string                     `json:"at"`
	Primitives map[string]PrimitiveHealth `json:"primitives"`
	// TotalChars is the learned text; ComposedChars the whole composition
	// (what the ceiling counts), AuthoredChars of it authored.
	TotalChars    int                 `json:"totalChars"`
	ComposedChars int                 `json:"composedChars"`
	AuthoredChars int                 `json:"authoredChars"`
	Ceiling       int                 `json:"ceiling"`
	Promoted      int                 `json:"promoted"`
	Candidates    []CandidateProgress `json:"candidates"`
	Recall        RecallStats         `json:"recall"`
	Findings      []Finding           `json:"findings"`
	// Conflicts are the agent's conflicts of every kind (Engine.Conflicts,
	// the list lint and the lens show), read before this run's proposals.
	Conflicts []Conflict `json:"conflicts"`
	// Proposals lists the proposals gardening opened in this run.
	Proposals []string `json:"proposals"`
	// PendingReviews counts pending proposals after the run.
	PendingReviews int `json:"pendingReviews"`
}

// Count returns the number of findings of a kind.
func (h *HealthReport) Count(kind string) int {
	n := 0
	for _, f := range h.Findings {
		if f.Kind == kind {
			n++
		}
	}
	return n
}

// Garden is the curation pass: it dedupes near-identical records, reports
// fragmenting entries, flags stale currentState facts, re-runs evals on
// earned promotions, and reports sizes, conflicts, candidates and recall
// statistics. It changes nothing a gate has not approved: it only opens
// proposals (as GardenActor, so only a human can carry them out) and
// reports findings.
func (e *Engine) Garden(ctx context.Context) (HealthReport, error) {
	now := e.now()
	h := HealthReport{Agent: e.name, Scope: e.Scope(), At: schema.FormatTime(now), Primitives: map[string]PrimitiveHealth{},
		Ceiling: e.policy.Ceiling, Candidates: []CandidateProgress{}, Findings: []Finding{}, Proposals: []string{}}
	if _, err := e.st.ExpireProposals(ctx); err != nil {
		return h, fmt.Errorf("expire proposals: %w", err)
	}
	cs, err := e.Conflicts(ctx)
	if err != nil {
		return h, err
	}
	h.Conflicts = append([]Conflict{}, cs...)
	prom, err := e.promoted(ctx)
	if err != nil {
		return h, err
	}
	cands, err := e.st.Candidates(ctx, e.base, e.name)
	if err != nil {
		return h, fmt.Errorf("candidates: %w", err)
	}
	h.Promoted = len(prom)
	e.sizes(&h, prom)
	propose := func(f *Finding, req store.ProposalRequest) error {
		req.RequestedBy = GardenActor()
		if p, ok, err := e.pendingFor(ctx, req.RecordID, req.Kind); err != nil || ok {
			f.ProposalID = p.ID
			return err
		}
		p, err := e.propose(ctx, req)
		if err != nil {
			return err
		}
		f.ProposalID = p.ID
		h.Proposals = append(h.Proposals, p.ID)
		if f.Diff, err = e.Preview(ctx, p); err != nil {
			return err
		}
		return nil
	}

	// The findings come from lint's rules (one rule engine); gardening adds
	// the proposal policy: which record to keep, what to propose.
	live := append(append([]schema.MemoryRecord{}, prom...), cands...)
	isProm := map[string]bool{}
	byID := map[string]*schema.MemoryRecord{}
	for i := range live {
		byID[live[i].ID] = &live[i]
	}
	for _, r := range prom {
		isProm[r.ID] = true
	}
	agent := e.agent
	if agent == nil {
		agent = &schema.AgentConfig{}
	}
	in := lint.Input{Config: agent, Settings: e.ws, Facts: lint.StoreFacts{Promoted: prom, Candidates: cands, Now: h.At}}
	retired := map[string]bool{}
	for _, lf := range lint.Check(in, lint.RuleNearDuplicate, lint.RuleMemoryConflict, lint.RuleContradiction, lint.RuleStaleState) {
		ids := lf.RecordIDs()
		switch lf.Rule {
		case lint.RuleNearDuplicate:
			if len(ids) < 2 {
				// A candidate restating an authored line: reported.
				h.Findings = append(h.Findings, Finding{Kind: FindingDuplicate, RecordIDs: ids, Message: lf.Message})
				continue
			}
			// A group of restatements: keep the best supported (then
			// oldest); every other promoted one is proposed for
			// invalidation, superseded by the keeper.
			group := make([]schema.MemoryRecord, 0, len(ids))
			for _, id := range ids {
				if r := byID[id]; r != nil {
					group = append(group, *r)
				}
			}
			sort.Slice(group, func(i, j int) bool { return keeperFirst(&group[i], &group[j]) })
			keep := group[0]
			for _, b := range group[1:] {
				if retired[b.ID] || retired[keep.ID] {
					continue
				}
				f := Finding{Kind: FindingDuplicate, RecordIDs: []string{keep.ID, b.ID},
					Message: fmt.Sprintf("%s: %s duplicates %s; keep %s (more support or older)", targetString(&b), b.ID, keep.ID, keep.ID)}
				if isProm[b.ID] {
					if err := propose(&f, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: b.ID, Tier: schema.TierOf(*b.Target),
						Reason: "duplicate of " + keep.ID, Invalidate: true, SupersededBy: keep.ID}); err != nil {
						return h, err
					}
					retired[b.ID] = true
				}
				h.Findings = append(h.Findings, f)
			}
		case lint.RuleMemoryConflict:
			// A residual conflict (two promoted records on one key or
			// awareness name): ledgered once; the newest renders and is
			// kept, the other proposed for invalidation, superseded by it.
			if len(ids) != 2 || retired[ids[0]] || retired[ids[1]] {
				continue
			}
			newer, older := byID[ids[0]], byID[ids[1]]
			if newer == nil || older == nil {
				continue
			}
			k := targetString(newer)
			f := Finding{Kind: FindingKeyCollision, RecordIDs: []string{newer.ID, older.ID},
				Message: fmt.Sprintf("%s is held by two live records: %s renders (newest), %s is shadowed; supersede %s by %s", k, newer.ID, older.ID, older.ID, newer.ID)}
			if _, err := e.st.RecordConflict(ctx, store.ConflictInfo{Records: []string{newer.ID, older.ID}, Target: k}, GardenActor()); err != nil {
				return h, fmt.Errorf("record conflict: %w", err)
			}
			if err := propose(&f, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: older.ID, Tier: schema.TierOf(*older.Target),
				Reason: fmt.Sprintf("conflict on %s: superseded by the newest, %s", k, newer.ID), Invalidate: true, SupersededBy: newer.ID}); err != nil {
				return h, err
			}
			retired[older.ID] = true
			h.Findings = append(h.Findings, f)
		case lint.RuleContradiction:
			h.Findings = append(h.Findings, Finding{Kind: FindingConflict, RecordIDs: ids, Message: lf.Message})
		case lint.RuleStaleState:
			if len(ids) != 1 || retired[ids[0]] || byID[ids[0]] == nil {
				continue
			}
			r := byID[ids[0]]
			f := Finding{Kind: FindingStale, RecordIDs: ids,
				Message: fmt.Sprintf("%s was last updated %s, older than staleAfter (%s): confirm or retire it", r.Target, r.UpdatedAt, e.ws.StaleAfter)}
			if err := propose(&f, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: r.ID, Tier: schema.TierOf(*r.Target),
				Reason: "stale currentState fact (older than " + e.ws.StaleAfter + ")", Invalidate: true}); err != nil {
				return h, err
			}
			h.Findings = append(h.Findings, f)
		}
	}

	// Promoted records whose expiry passed left the composition by
	// themselves: the first pass that sees one ledgers it (once).
	if err := e.expired(ctx, &h); err != nil {
		return h, err
	}

	// Fragments: promoted list entries of one slot that overlap without
	// repeating each other merge into the better supported one.
	if err := e.fragments(ctx, live, isProm, retired, &h, propose); err != nil {
		return h, err
	}
	cutoff := schema.FormatTime(now.Add(-e.staleAfter))

	// Re-run evals on earned promotions.
	if e.eval != nil && e.agent != nil {
		for _, r := range prom {
			if r.Target == nil || schema.TierOf(*r.Target) != schema.TierEarned || retired[r.ID] {
				continue
			}
			res, err := e.evaluate(ctx, r)
			if err != nil {
				return h, err
			}
			switch {
			case res.Regressed:
				f := Finding{Kind: FindingEvalRegression, RecordIDs: []string{r.ID}, Message: fmt.Sprintf("%s now regresses the eval suite: %s", r.ID, res.Reason)}
				if err := propose(&f, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: r.ID, Tier: schema.TierEarned,
					Reason: "eval regression: " + res.Reason, Evidence: store.Evidence{Eval: res.Result}}); err != nil {
					return h, err
				}
				h.Findings = append(h.Findings, f)
			case !res.Pass && res.Result == nil:
				h.Findings = append(h.Findings, Finding{Kind: FindingEvalFailed, RecordIDs: []string{r.ID}, Message: fmt.Sprintf("eval of %s could not run: %s", r.ID, res.Reason)})
			}
		}
	}

	// Candidates, their progress and recall statistics. The pending
	// promotions are listed once (pendingFor per candidate read the
	// proposals once per candidate).
	ageCut := cutoff
	pending, err := e.st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending})
	if err != nil {
		return h, fmt.Errorf("proposals: %w", err)
	}
	promoting := map[string]string{} // record id -> its first pending promotion
	for _, p := range pending {
		if _, ok := promoting[p.RecordID]; !ok && p.Kind == store.ProposePromote {
			promoting[p.RecordID] = p.ID
		}
	}
	for _, c := range cands {
		have, need := e.Progress(c)
		cp := CandidateProgress{ID: c.ID, Tier: schema.TierOf(*c.Target), Target: c.Target.String(), Content: c.Content, Have: have, Need: need,
			Pending: promoting[c.ID]}
		h.Candidates = append(h.Candidates, cp)
		if have <= 1 {
			h.Recall.NeverCorroborated++
			if c.CreatedAt < ageCut {
				h.Recall.Unused++
			}
		}
	}
	h.Recall.Candidates = len(cands)
	all, err := e.st.Search(ctx, store.Query{Scope: e.base, Limit: store.Limit(store.Unlimited)})
	if err != nil {
		return h, fmt.Errorf("search: %w", err)
	}
	for _, r := range all.Records {
		if r.Target == nil && e.visible(&r) {
			h.Recall.Untargeted++
		}
	}
	ps, err := e.Proposals(ctx)
	if err != nil {
		return h, err
	}
	h.PendingReviews = len(ps)
	return h, nil
}

// fragments reports, per list slot, pairs of live records whose texts
// overlap (lexical.Similarity >= FragmentThreshold) without contradicting or
// repeating each other, and proposes merging promoted pairs: the less
// supported one superseded by the other.
func (e *Engine) fragments(ctx context.Context, live []schema.MemoryRecord, isProm, retired map[string]bool, h *HealthReport,
	propose func(*Finding, store.ProposalRequest) error) error {
	byTarget := map[string][]schema.MemoryRecord{}
	var targets []string
	for _, r := range live {
		if r.Target == nil || r.Target.SlotKey() != "" || r.Target.NeedsPayload() {
			continue
		}
		k := r.Target.String()
		if _, ok := byTarget[k]; !ok {
			targets = append(targets, k)
		}
		byTarget[k] = append(byTarget[k], r)
	}
	sort.Strings(targets)
	for _, k := range targets {
		group := byTarget[k]
		sort.Slice(group, func(i, j int) bool { return keeperFirst(&group[i], &group[j]) })
		// Each text analyzed once, into one word table (pairs compare
		// word ids); only the pairs that may reach FragmentThreshold are
		// compared (lexical.SimIndex), in the order of the all-pairs loop:
		// a pair below it neither reports nor retires.
		var in lexical.Interner
		texts := make([]*lexical.Text, len(group))
		for i := range group {
			texts[i] = in.Analyze(group[i].Content)
		}
		join := lexical.NewSimIndex(texts, FragmentThreshold)
		for i := 0; i < len(group); i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			for _, j := range join.Probe(texts[i], i+1) {
				a, b := group[i], group[j]
				if retired[a.ID] || retired[b.ID] {
					continue
				}
				// One similarity for both tests: the same lesson (a near
				// duplicate that does not contradict: sameLessonTexts) is
				// no fragment, and neither is a pair below the threshold
				// or one that contradicts.
				s := lexical.TextSimilarity(texts[i], texts[j])
				if s < FragmentThreshold {
					continue
				}
				if c, _ := lexical.TextContradicts(texts[i], texts[j]); c || s >= lexical.NearDuplicateThreshold {
					continue
				}
				merged := MergeFragments(a.Content, b.Content)
				f := Finding{Kind: FindingFragment, RecordIDs: []string{a.ID, b.ID},
					Message: fmt.Sprintf("%s: %s and %s overlap (similarity %.2f): merge them into one entry: %q", k, a.ID, b.ID, s, merged)}
				if isProm[a.ID] && isProm[b.ID] {
					if err := propose(&f, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: b.ID, Tier: schema.TierOf(*b.Target),
						Reason: fmt.Sprintf("merge: fragment of %s (similarity %.2f)", a.ID, s), Invalidate: true, SupersededBy: a.ID,
						MergedContent: merged}); err != nil {
						return err
					}
					retired[b.ID] = true
				}
				h.Findings = append(h.Findings, f)
			}
		}
	}
	return nil
}

// expired finds the agent's promoted records (in its view) whose expiresAt
// has passed, ledgers each expiry once (store.RecordExpiry as
// system:garden) and reports the ones first ledgered now.
func (e *Engine) expired(ctx context.Context, h *HealthReport) error {
	// The records are read on one snapshot when the store offers one (a
	// read per record would open a file store once per promoted record);
	// the expiries are written after it.
	var due []schema.MemoryRecord
	err := e.readAll(ctx, func(st store.Reader) error {
		due = nil
		entries, err := st.Ledger(ctx, store.LedgerFilter{Ops: []store.Op{store.OpPromote, store.OpApprove}})
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		now := e.nowString()
		seen := map[string]bool{}
		for _, en := range entries {
			if seen[en.RecordID] || (en.Op == store.OpApprove && (en.Proposal == nil || en.Proposal.Kind != store.ProposePromote)) {
				continue
			}
			seen[en.RecordID] = true
			rec, err := st.Get(ctx, en.RecordID)
			if err != nil || !e.visible(&rec) || rec.ExpiresAt == "" || rec.ExpiresAt > now || (rec.InvalidAt != "" && rec.InvalidAt <= rec.ExpiresAt) {
				continue
			}
			if _, err := st.Promotion(ctx, rec.ID); errors.Is(err, store.ErrNotFound) {
				continue
			} else if err != nil {
				return fmt.Errorf("promotion of %s: %w", rec.ID, err)
			}
			due = append(due, rec)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, rec := range due {
		recorded, err := e.st.RecordExpiry(ctx, rec.ID, GardenActor())
		if err != nil {
			return fmt.Errorf("record expiry: %w", err)
		}
		if recorded {
			h.Findings = append(h.Findings, Finding{Kind: FindingExpired, RecordIDs: []string{rec.ID},
				Message: fmt.Sprintf("%s (%s) expired at %s and left the composition", rec.ID, targetString(&rec), rec.ExpiresAt)})
		}
	}
	return nil
}

// targetString is a record's target in compact form ("" untargeted).
func targetString(r *schema.MemoryRecord) string {
	if r.Target == nil {
		return ""
	}
	return r.Target.String()
}

// keeperFirst orders duplicates: more distinct conversations first, then
// older, then id.
func keeperFirst(a, b *schema.MemoryRecord) bool {
	if da, db := a.DistinctConversations(), b.DistinctConversations(); da != db {
		return da > db
	}
	if a.CreatedAt != b.CreatedAt {
		return a.CreatedAt < b.CreatedAt
	}
	return a.ID < b.ID
}

// sizes fills the per-primitive sizes and the overlay's spill/drop findings.
func (e *Engine) sizes(h *HealthReport, prom []schema.MemoryRecord) {
	for _, p := range schema.Primitives {
		h.Primitives[string(p)] = PrimitiveHealth{Budget: e.policy.Budgets.For(p)}
	}
	for _, r := range prom {
		if r.Target == nil {
			continue
		}
		ph := h.Primitives[string(r.Target.Primitive)]
		ph.Promoted++
		h.Primitives[string(r.Target.Primitive)] = ph
	}
	if e.agent == nil {
		for _, r := range prom {
			if r.Target != nil {
				ph := h.Primitives[string(r.Target.Primitive)]
				ph.Chars += len([]rune(r.Content))
				h.Primitives[string(r.Target.Primitive)] = ph
				h.TotalChars += len([]rune(r.Content))
			}
		}
		return
	}
	_, rep := overlay.Apply(e.agent, prom, e.policy)
	for p, n := range rep.Totals.CharsPerPrimitive {
		ph := h.Primitives[p]
		ph.Chars = n
		h.Primitives[p] = ph
	}
	h.TotalChars = rep.Totals.Chars
	h.ComposedChars, h.AuthoredChars = rep.Totals.ComposedChars, rep.Totals.AuthoredChars
	if rep.Totals.CeilingExceeded {
		h.Findings = append(h.Findings, Finding{Kind: FindingCeiling, RecordIDs: []string{}, Message: rep.Totals.CeilingMessage()})
	}
	spilled := rep.IDs(overlay.StatusSpilled)
	if len(spilled) > 0 {
		h.Findings = append(h.Findings, Finding{Kind: FindingSpilled, RecordIDs: slices.Clone(spilled),
			Message: fmt.Sprintf("%d promoted record(s) over budget fall back to recall", len(spilled))})
	}
	for _, o := range rep.Records {
		if o.Status == overlay.StatusDropped {
			h.Findings = append(h.Findings, Finding{Kind: FindingDropped, RecordIDs: []string{o.ID},
				Message: fmt.Sprintf("%s (%s) does not apply: %s", o.ID, o.Target, o.Reason)})
		}
	}
}
