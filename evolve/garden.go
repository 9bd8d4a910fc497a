package evolve

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/agent-ls/agent-ls/evolve/lexical"
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
)

// Finding is one thing gardening noticed; ProposalID is set when it opened
// a proposal for a human.
type Finding struct {
	Kind       string   `json:"kind"`
	RecordIDs  []string `json:"recordIds"`
	Message    string   `json:"message"`
	ProposalID string   `json:"proposalId,omitempty"`
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
	TotalChars int                        `json:"totalChars"`
	Ceiling    int                        `json:"ceiling"`
	Promoted   int                        `json:"promoted"`
	Candidates []CandidateProgress        `json:"candidates"`
	Recall     RecallStats                `json:"recall"`
	Findings   []Finding                  `json:"findings"`
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
		return nil
	}

	// Duplicates and fragments, per target.
	live := append(append([]schema.MemoryRecord{}, prom...), cands...)
	isProm := map[string]bool{}
	for _, r := range prom {
		isProm[r.ID] = true
	}
	byTarget := map[string][]schema.MemoryRecord{}
	var targets []string
	for _, r := range live {
		if r.Target == nil {
			continue
		}
		k := r.Target.String()
		if _, ok := byTarget[k]; !ok {
			targets = append(targets, k)
		}
		byTarget[k] = append(byTarget[k], r)
	}
	sort.Strings(targets)
	retired := map[string]bool{}
	for _, k := range targets {
		group := byTarget[k]
		sort.Slice(group, func(i, j int) bool { return keeperFirst(&group[i], &group[j]) })
		keyed := group[0].Target.SlotKey() != ""
		for i := 0; i < len(group); i++ {
			for j := i + 1; j < len(group); j++ {
				a, b := group[i], group[j]
				if retired[a.ID] || retired[b.ID] {
					continue
				}
				switch {
				case e.sameLesson(keyed, a.Content, b.Content):
					f := Finding{Kind: FindingDuplicate, RecordIDs: []string{a.ID, b.ID},
						Message: fmt.Sprintf("%s: %s duplicates %s; keep %s (more support or older)", k, b.ID, a.ID, a.ID)}
					if isProm[b.ID] {
						if err := propose(&f, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: b.ID, Tier: schema.TierOf(*b.Target),
							Reason: "duplicate of " + a.ID, Invalidate: true, SupersededBy: a.ID}); err != nil {
							return h, err
						}
						retired[b.ID] = true
					}
					h.Findings = append(h.Findings, f)
				case keyed:
					h.Findings = append(h.Findings, Finding{Kind: FindingKeyCollision, RecordIDs: []string{a.ID, b.ID},
						Message: fmt.Sprintf("%s is held by two live records (%s, %s): the newest renders; supersede one", k, a.ID, b.ID)})
				default:
					if s := lexical.Similarity(a.Content, b.Content); s >= FragmentThreshold {
						if c, _ := lexical.Contradicts(a.Content, b.Content); !c {
							h.Findings = append(h.Findings, Finding{Kind: FindingFragment, RecordIDs: []string{a.ID, b.ID},
								Message: fmt.Sprintf("%s: %s and %s overlap (similarity %.2f): consider merging them into one entry", k, a.ID, b.ID, s)})
						}
					}
				}
			}
		}
	}

	// Contradictions: candidates and promoted judgment lines against the
	// authored and promoted lines of their domain.
	conflicts, err := e.conflicts(ctx, live)
	if err != nil {
		return h, err
	}
	for _, c := range conflicts {
		ids := []string{c.RecordID}
		what := "authored " + c.Authored
		if c.With != "" {
			ids = append(ids, c.With)
			what = "promoted " + c.With
		}
		h.Findings = append(h.Findings, Finding{Kind: FindingConflict, RecordIDs: ids,
			Message: fmt.Sprintf("%s contradicts %s %q: %s", c.RecordID, what, c.Text, c.Why)})
	}

	// Stale currentState facts.
	cutoff := schema.FormatTime(now.Add(-e.staleAfter))
	for _, r := range prom {
		if r.Target == nil || r.Target.Primitive != schema.PrimitiveBackground || r.Target.Section != schema.SectionCurrentState {
			continue
		}
		if r.UpdatedAt >= cutoff || retired[r.ID] {
			continue
		}
		f := Finding{Kind: FindingStale, RecordIDs: []string{r.ID},
			Message: fmt.Sprintf("%s was last updated %s, older than staleAfter (%s): confirm or retire it", r.Target, r.UpdatedAt, e.ws.StaleAfter)}
		if err := propose(&f, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: r.ID, Tier: schema.TierOf(*r.Target),
			Reason: "stale currentState fact (older than " + e.ws.StaleAfter + ")", Invalidate: true}); err != nil {
			return h, err
		}
		h.Findings = append(h.Findings, f)
	}

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

	// Candidates, their progress and recall statistics.
	ageCut := cutoff
	for _, c := range cands {
		have, need := e.Progress(c)
		cp := CandidateProgress{ID: c.ID, Tier: schema.TierOf(*c.Target), Target: c.Target.String(), Content: c.Content, Have: have, Need: need}
		if p, ok, err := e.pendingFor(ctx, c.ID, store.ProposePromote); err != nil {
			return h, err
		} else if ok {
			cp.Pending = p.ID
		}
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
	if rep.Totals.CeilingExceeded {
		h.Findings = append(h.Findings, Finding{Kind: FindingCeiling, RecordIDs: []string{},
			Message: fmt.Sprintf("learned text is %d characters, over the ceiling of %d", rep.Totals.Chars, rep.Totals.Ceiling)})
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
