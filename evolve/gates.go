package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/evolve/contradiction"
	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/trust"
)

// Outcome is the answer of a gated operation.
type Outcome struct {
	// Status is promoted, pending, blocked, refused, demoted, invalidated,
	// approved or rejected.
	Status   Status      `json:"status"`
	RecordID string      `json:"recordId,omitempty"`
	Tier     schema.Tier `json:"tier,omitempty"`
	// Reason says why, in one human sentence.
	Reason     string         `json:"reason,omitempty"`
	Evidence   store.Evidence `json:"evidence"`
	ProposalID string         `json:"proposalId,omitempty"`
	// Conflicts are the contradictions that blocked a promotion.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Diff previews the composition change, when computed.
	Diff string `json:"diff,omitempty"`
}

// Conflict is the one conflict type (lint.Conflict): the gates return
// contradictions in it, Conflicts lists every kind.
type Conflict = lint.Conflict

func refused(o Outcome, format string, args ...any) (Outcome, error) {
	o.Status = StatusRefused
	o.Reason = fmt.Sprintf(format, args...)
	return o, fmt.Errorf("%s: %w", o.Reason, ErrRefused)
}

// checkDomain refuses a judgment or example target whose domain the agent
// lacks: a memory may not create a judgment domain.
func (e *Engine) checkDomain(t schema.MemoryTarget) string {
	if e.agent == nil {
		return ""
	}
	d := ""
	switch t.Primitive {
	case schema.PrimitiveJudgment:
		d = t.Domain
	case schema.PrimitiveExample:
		d = t.JudgmentDomain
	default:
		return ""
	}
	if e.agent.JudgmentByDomain(d) >= 0 {
		return ""
	}
	var have []string
	for _, j := range e.agent.RoleTemplate.Judgments {
		have = append(have, j.Domain)
	}
	return fmt.Sprintf("agent %q has no judgment domain %q (it has: %s); a memory may not create a judgment domain — a human adds it to the agent file",
		e.name, d, strings.Join(have, ", "))
}

// checkPayload reports why a record's structured payload cannot promote.
func checkPayload(rec *schema.MemoryRecord) string {
	if rec.Target == nil || !rec.Target.NeedsPayload() {
		return ""
	}
	if len(rec.Payload) == 0 {
		return fmt.Sprintf("%s %s memory needs a structured payload to promote", schema.Article(string(rec.Target.Primitive)), rec.Target.Primitive)
	}
	switch rec.Target.Primitive {
	case schema.PrimitiveExample:
		var p schema.ExamplePayload
		if err := json.Unmarshal(rec.Payload, &p); err != nil || p.Scenario == "" || p.Good == "" {
			return "an example payload needs non-empty scenario and good"
		}
	case schema.PrimitiveAwareness:
		var p schema.AwarenessPayload
		if err := json.Unmarshal(rec.Payload, &p); err != nil || p.Name == "" || p.Description == "" || p.AccessMethod == "" {
			return "an awareness payload needs non-empty name, description and accessMethod"
		}
	}
	return ""
}

// Contradictions finds the authored and promoted heuristics and constraints
// of rec's judgment domain that rec contradicts (lexical.Contradicts). Only
// judgment targets are checked.
func (e *Engine) Contradictions(ctx context.Context, rec schema.MemoryRecord) ([]Conflict, error) {
	if !contradiction.Applies(rec.Target) {
		return nil, nil
	}
	var out []Conflict
	for _, l := range contradiction.Authored(e.agent, rec.Target) {
		if c, why := contradiction.Contradicts(e.text(rec.Content), e.text(l.Text)); c {
			out = append(out, Conflict{Kind: lint.ConflictContradiction, RecordID: rec.ID, Authored: l.Pointer, Text: l.Text, Why: why})
		}
	}
	prom, err := e.promotedLines(ctx, rec.Target, rec.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range prom {
		if c, why := contradiction.Contradicts(e.text(rec.Content), e.text(p.content)); c {
			out = append(out, Conflict{Kind: lint.ConflictContradiction, RecordID: rec.ID, With: p.id, Text: p.content, Why: why})
		}
	}
	return out, nil
}

// promotedLines returns the valid promoted lines the lesson id at t is
// checked against (contradiction.Opposes) in this engine's view, newest
// first (ties: the later id first). It asks the store for the promoted
// records of the domain's contradiction.Slots only, so
// its cost grows with the domain's promoted records, not with every
// promoted record of the agent nor every candidate of the domain.
func (e *Engine) promotedLines(ctx context.Context, lesson *schema.MemoryTarget, id string) ([]line, error) {
	var out []line
	for _, slot := range contradiction.Slots {
		t := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: lesson.Domain, Slot: slot}
		err := e.eachLine(ctx, t, true, func(l *line) bool {
			if contradiction.Opposes(lesson, id, &schema.MemoryRecord{ID: l.id, Target: &t}) {
				out = append(out, *l)
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, func(a, b line) int {
		if c := strings.Compare(b.createdAt, a.createdAt); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	return out, nil
}

func conflictReason(cs []Conflict) string {
	c := cs[0]
	what := "authored line " + c.Authored
	switch {
	case c.Other != nil && c.Other.State == lint.SideCandidate:
		what = "candidate record " + c.With
	case c.With != "":
		what = "promoted record " + c.With
	}
	more := ""
	if len(cs) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(cs)-1)
	}
	return fmt.Sprintf("contradicts %s %q%s: %s; resolve it with a supersede (keep one, retire the other)", what, c.Text, more, c.Why)
}

// Promote runs rec's gate chain for actor (see the package doc's table).
// Refusals return an error wrapping ErrRefused along with the Outcome;
// blocked and pending are answers, not errors.
func (e *Engine) Promote(ctx context.Context, id string, actor store.Actor) (Outcome, error) {
	// An eval gate may take minutes: then the gate's reads and its writes
	// are separate store operations (the writer lock is not held meanwhile).
	if e.eval != nil {
		return e.promote(ctx, id, actor)
	}
	return e.atomically(ctx, func(be *Engine) (Outcome, error) { return be.promote(ctx, id, actor) })
}

// atomically runs a gate on an engine over one Update of its store, so what
// the gate read (the record, its promotion row, pending proposals) is what
// its writes change: no other process writes in between, and a failure
// leaves nothing half done. A refusal (ErrRefused) is an answer: what the
// gate wrote before it (a ledgered expiry) commits. Inside a transaction
// already (a batch view), fn runs on e itself.
func (e *Engine) atomically(ctx context.Context, fn func(be *Engine) (Outcome, error)) (Outcome, error) {
	if _, inTx := store.StampOf(e.st); inTx || e.lc != nil {
		return fn(e)
	}
	var o Outcome
	var answer error
	err := e.st.Update(ctx, func(tx store.Tx) error {
		var err error
		o, err = fn(e.withStore(tx))
		if errors.Is(err, ErrRefused) {
			answer = err
			return nil
		}
		return err
	})
	if err != nil {
		return o, err
	}
	return o, answer
}

func (e *Engine) promote(ctx context.Context, id string, actor store.Actor) (Outcome, error) {
	o := Outcome{RecordID: id}
	rec, err := e.get(ctx, id)
	if err != nil {
		return o, err
	}
	if rec.Target == nil {
		return refused(o, "record %s has no target: untargeted memories stay recall-only", id)
	}
	o.Tier = schema.TierOf(*rec.Target)
	if !rec.Valid(e.nowString()) {
		return refused(o, "record %s is invalidated or expired", id)
	}
	if p, ok, err := e.promotion(ctx, id); err != nil {
		return o, err
	} else if ok {
		o.Status, o.Reason, o.Evidence = StatusPromoted, "already promoted", p.Evidence
		return o, nil
	}
	if o.Tier == schema.TierLocked {
		return refused(o, "%s is a locked target: identity and structure are authored, never learned", rec.Target)
	}
	if why := e.checkDomain(*rec.Target); why != "" {
		return refused(o, "%s", why)
	}
	if why := checkPayload(&rec); why != "" {
		o.Status, o.Reason = StatusBlocked, why
		return o, nil
	}
	return e.gate(ctx, rec, actor, o)
}

// gate is the promotion chain after the static checks.
func (e *Engine) gate(ctx context.Context, rec schema.MemoryRecord, actor store.Actor, o Outcome) (Outcome, error) {
	conflicts, err := e.Contradictions(ctx, rec)
	if err != nil {
		return o, err
	}
	if len(conflicts) > 0 {
		o.Status, o.Conflicts, o.Reason = StatusBlocked, conflicts, conflictReason(conflicts)
		e.log.Info("promotion blocked by contradiction", "record", rec.ID, "conflicts", len(conflicts))
		return o, nil
	}
	convs := evidenceConversations(&rec)
	if !isHuman(actor) {
		// A record whose promotion a human rejected is not proposed again
		// on the same evidence: only new evidence reopens it.
		if at, err := e.rejectedAt(ctx, rec.ID); err != nil {
			return o, err
		} else if store.IsRejected(&rec, at) {
			o.Status = StatusBlocked
			o.Reason = fmt.Sprintf("a human rejected its promotion at %s; new evidence (a corroboration from another conversation) reopens it", at)
			return o, nil
		}
	}
	if trust.Decide(actor, trust.OpPromote, &rec) == trust.Propose {
		// A shared record is in every agent's prompt: an agent's promotion
		// of it waits for a human, whatever its tier.
		if o.Tier == schema.TierEarned && len(convs) < e.recurrence {
			o.Status = StatusBlocked
			o.Evidence = store.Evidence{Conversations: convs}
			o.Reason = fmt.Sprintf("needs support from %s, has %d (or a human's promote)", schema.Conversations(e.recurrence), len(convs))
			return o, nil
		}
		return e.proposeShared(ctx, rec, actor, o, convs)
	}
	switch o.Tier {
	case schema.TierAuto:
		ev := store.Evidence{Conversations: convs, Note: "auto"}
		return e.doPromote(ctx, rec, actor, ev, o)
	case schema.TierEarned:
		have := len(convs)
		if have >= e.recurrence {
			ev := store.Evidence{Conversations: convs, Note: "recurrence: " + schema.ConversationsOf(have, e.recurrence)}
			return e.doPromote(ctx, rec, actor, ev, o)
		}
		if isHuman(actor) {
			ev := store.Evidence{Conversations: convs, ApprovedBy: actor.String(), Note: "promoted by a human"}
			return e.doPromote(ctx, rec, actor, ev, o)
		}
		if e.eval != nil && e.agent != nil {
			res, err := e.evaluate(ctx, rec)
			if err != nil {
				return o, err
			}
			ev := store.Evidence{Conversations: convs, Eval: res.Result}
			if !res.Pass {
				o.Status, o.Evidence = StatusBlocked, ev
				o.Reason = fmt.Sprintf("eval gate failed: %s; recurrence %s", res.Reason, schema.ConversationsOf(have, e.recurrence))
				return o, nil
			}
			ev.Note = "eval pass: " + res.Reason
			return e.doPromote(ctx, rec, actor, ev, o)
		}
		o.Status = StatusBlocked
		o.Evidence = store.Evidence{Conversations: convs}
		o.Reason = fmt.Sprintf("needs support from %s, has %d (or an eval pass, or a human's promote)", schema.Conversations(e.recurrence), have)
		return o, nil
	case schema.TierGuarded:
		if isHuman(actor) {
			ev := store.Evidence{Conversations: convs, ApprovedBy: actor.String(), Note: "approved by a human promote"}
			return e.doPromote(ctx, rec, actor, ev, o)
		}
		p, err := e.propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: rec.ID, Tier: o.Tier,
			RequestedBy: actor, Reason: "guarded tier: needs a human approval", Evidence: store.Evidence{Conversations: convs}})
		if err != nil {
			return o, err
		}
		o.Status, o.ProposalID = StatusPending, p.ID
		o.Reason = fmt.Sprintf("proposal %s waits for a human approval until %s", p.ID, p.ExpiresAt)
		return o, nil
	}
	return refused(o, "%s is not promotable", rec.Target)
}

// rejectedAt is the decision time of the newest rejected promotion
// proposal of id, "" when none.
func (e *Engine) rejectedAt(ctx context.Context, id string) (string, error) {
	ps, err := e.st.Proposals(ctx, store.ProposalFilter{State: store.ProposalRejected, RecordID: id})
	if err != nil {
		return "", fmt.Errorf("proposals of %s: %w", id, err)
	}
	at := ""
	for _, p := range ps {
		if p.Kind == store.ProposePromote {
			at = max(at, p.DecidedAt)
		}
	}
	return at, nil
}

// proposeShared opens (or finds) the promotion proposal of a shared record
// an agent asked to promote (trust.Decide: Propose).
func (e *Engine) proposeShared(ctx context.Context, rec schema.MemoryRecord, actor store.Actor, o Outcome, convs []string) (Outcome, error) {
	p, err := e.propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: rec.ID, Tier: o.Tier,
		RequestedBy: actor, Reason: sharedReason, Evidence: store.Evidence{Conversations: convs}})
	if err != nil {
		return o, err
	}
	o.Status, o.ProposalID, o.Evidence = StatusPending, p.ID, p.Evidence
	o.Reason = fmt.Sprintf("%s: proposal %s waits for a human approval until %s", sharedReason, p.ID, p.ExpiresAt)
	return o, nil
}

// sharedReason is why an agent's change to a shared record waits.
const sharedReason = "a shared record (no agent key) is in every agent's prompt: an agent's change to it needs a human"

func (e *Engine) doPromote(ctx context.Context, rec schema.MemoryRecord, actor store.Actor, ev store.Evidence, o Outcome) (Outcome, error) {
	if isHuman(actor) {
		// A human's promote is the decision a pending promotion proposal
		// waits for: approving it promotes in the same transaction.
		if p, ok, err := e.pendingFor(ctx, rec.ID, store.ProposePromote); err != nil {
			return o, err
		} else if ok {
			if _, err := e.st.Approve(ctx, p.ID, actor, "promoted by "+actor.String()); err != nil {
				return o, fmt.Errorf("promote %s: approve %s: %w", rec.ID, p.ID, err)
			}
			e.log.Info("promoted by approving its proposal", "record", rec.ID, "proposal", p.ID, "by", actor.String())
			o.Status, o.Evidence, o.ProposalID = StatusPromoted, ev, p.ID
			if o.Reason == "" {
				o.Reason = fmt.Sprintf("%s; proposal %s approved by %s", ev.Note, p.ID, actor)
			}
			return o, nil
		}
	}
	req := store.PromoteRequest{Tier: o.Tier, Actor: actor, Evidence: ev}
	if ev.ApprovedBy != "" {
		req.Approver = ev.ApprovedBy
	}
	if _, err := e.st.Promote(ctx, rec.ID, req); err != nil {
		return o, fmt.Errorf("promote %s: %w", rec.ID, err)
	}
	e.log.Info("promoted", "record", rec.ID, "tier", o.Tier, "by", actor.String())
	o.Status, o.Evidence = StatusPromoted, ev
	if o.Reason == "" {
		o.Reason = ev.Note
	}
	return o, nil
}

// Demote removes a record's promotion (the record stays valid and returns
// to recall) if actor may; see the package doc's table.
func (e *Engine) Demote(ctx context.Context, id, reason string, actor store.Actor) (Outcome, error) {
	return e.atomically(ctx, func(be *Engine) (Outcome, error) { return be.unlearn(ctx, id, reason, actor, false, "") })
}

// Invalidate retires a record. A promoted guarded record invalidated by an
// agent keeps rendering: a pending demotion proposal opens instead.
func (e *Engine) Invalidate(ctx context.Context, id, reason string, actor store.Actor) (Outcome, error) {
	return e.atomically(ctx, func(be *Engine) (Outcome, error) { return be.unlearn(ctx, id, reason, actor, true, "") })
}

// unlearn is Demote (invalidate=false) and Invalidate; supersededBy names
// the record replacing this one (for proposals opened by a supersede).
func (e *Engine) unlearn(ctx context.Context, id, reason string, actor store.Actor, invalidate bool, supersededBy string) (Outcome, error) {
	o := Outcome{RecordID: id}
	if strings.TrimSpace(reason) == "" {
		return refused(o, "a reason is required")
	}
	if err := e.ws.Limits.CheckReason("reason", reason); err != nil {
		return o, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	rec, err := e.get(ctx, id)
	if err != nil {
		return o, err
	}
	if rec.Target != nil {
		o.Tier = schema.TierOf(*rec.Target)
	}
	prom, promoted, err := e.promotion(ctx, id)
	if err != nil {
		return o, err
	}
	if !rec.Valid(e.nowString()) {
		o.Status, o.Reason = StatusInvalidated, "already invalidated"
		if !invalidate {
			return refused(o, "record %s is invalidated: nothing to demote", id)
		}
		return o, nil
	}
	if !promoted && !invalidate {
		return refused(o, "record %s is not promoted", id)
	}
	op := trust.OpDemote
	switch {
	case supersededBy != "":
		op = trust.OpSupersede
	case invalidate:
		op = trust.OpInvalidate
	}
	if trust.Decide(actor, op, &rec) == trust.Propose {
		// Another agent sees this record: the agent proposes, a human decides.
		if promoted {
			o.Tier = prom.Tier
		}
		p, err := e.propose(ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: id, Tier: o.Tier,
			RequestedBy: actor, Reason: reason, Invalidate: invalidate || supersededBy != "", SupersededBy: supersededBy})
		if err != nil {
			return o, err
		}
		o.Status, o.ProposalID = StatusPending, p.ID
		o.Reason = fmt.Sprintf("%s; the record stays as it is until a human approves proposal %s (expires %s)", sharedReason, p.ID, p.ExpiresAt)
		return o, nil
	}
	if !promoted {
		// A candidate or untargeted record of the actor's own: it may retire it.
		if o, done, err := e.resolveDemotion(ctx, id, reason, actor, true, o); err != nil || done {
			return o, err
		}
		return e.doInvalidate(ctx, id, reason, actor, o)
	}
	o.Tier = prom.Tier
	allowed, ev, why, err := e.mayUnlearn(ctx, rec, prom, actor)
	if err != nil {
		return o, err
	}
	if !allowed {
		p, err := e.propose(ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: id, Tier: prom.Tier,
			RequestedBy: actor, Reason: reason, Evidence: ev, Invalidate: invalidate || supersededBy != "", SupersededBy: supersededBy})
		if err != nil {
			return o, err
		}
		o.Status, o.ProposalID, o.Evidence = StatusPending, p.ID, ev
		o.Reason = fmt.Sprintf("%s; the record keeps rendering until a human approves proposal %s (expires %s)", why, p.ID, p.ExpiresAt)
		return o, nil
	}
	o.Evidence = ev
	if supersededBy != "" && isHuman(actor) {
		// A human's supersede goes through a proposal approved at once, so
		// the record's supersededBy is set and the ledger shows the decision.
		// A pending demotion asking for something else is closed first, in
		// the human's name.
		if q, ok, err := e.pendingFor(ctx, id, store.ProposeDemote); err != nil {
			return o, err
		} else if ok && q.SupersededBy != supersededBy {
			if _, err := e.st.Reject(ctx, q.ID, actor, "replaced by the supersede by "+supersededBy+" ("+actor.String()+")"); err != nil {
				return o, fmt.Errorf("supersede %s: close proposal %s: %w", id, q.ID, err)
			}
		}
		p, err := e.propose(ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: id, Tier: prom.Tier,
			RequestedBy: actor, Reason: reason, Evidence: ev, Invalidate: true, SupersededBy: supersededBy})
		if err != nil {
			return o, err
		}
		if p.SupersededBy == supersededBy {
			if _, err := e.st.Approve(ctx, p.ID, actor, reason); err != nil {
				return o, fmt.Errorf("supersede %s: %w", id, err)
			}
			o.Status, o.Reason, o.ProposalID = StatusInvalidated, reason, p.ID
			return o, nil
		}
	}
	if o, done, err := e.resolveDemotion(ctx, id, reason, actor, invalidate, o); err != nil || done {
		return o, err
	}
	if invalidate {
		return e.doInvalidate(ctx, id, reason, actor, o)
	}
	if err := e.st.Demote(ctx, id, reason, actor); err != nil {
		return o, fmt.Errorf("demote %s: %w", id, err)
	}
	o.Status, o.Reason = StatusDemoted, reason
	return o, nil
}

// resolveDemotion closes the review a human's demote or invalidate of id
// answers: a pending demotion proposal asking for no more than the human
// does (no invalidation when the human only demotes, no supersede) is
// approved by that human, which demotes (and invalidates) in the same
// transaction; done reports that it was. A pending promotion proposal of a
// record the human invalidates can no longer be approved: it is rejected
// in the human's name.
func (e *Engine) resolveDemotion(ctx context.Context, id, reason string, actor store.Actor, invalidate bool, o Outcome) (Outcome, bool, error) {
	if !isHuman(actor) {
		return o, false, nil
	}
	if invalidate {
		if p, ok, err := e.pendingFor(ctx, id, store.ProposePromote); err != nil {
			return o, false, err
		} else if ok {
			if _, err := e.st.Reject(ctx, p.ID, actor, "record invalidated by "+actor.String()+": "+reason); err != nil {
				return o, false, fmt.Errorf("invalidate %s: close proposal %s: %w", id, p.ID, err)
			}
		}
	}
	p, ok, err := e.pendingFor(ctx, id, store.ProposeDemote)
	if err != nil || !ok || p.SupersededBy != "" || p.Invalidate && !invalidate {
		return o, false, err
	}
	if _, err := e.st.Approve(ctx, p.ID, actor, reason); err != nil {
		return o, false, fmt.Errorf("%s: approve %s: %w", id, p.ID, err)
	}
	o.ProposalID, o.Reason = p.ID, fmt.Sprintf("%s; proposal %s approved by %s", reason, p.ID, actor)
	o.Status = StatusDemoted
	if !p.Invalidate && invalidate {
		o, err = e.doInvalidate(ctx, id, reason, actor, o)
		o.Reason = fmt.Sprintf("%s; proposal %s approved by %s", reason, p.ID, actor)
		return o, true, err
	}
	if p.Invalidate {
		o.Status = StatusInvalidated
	}
	return o, true, nil
}

// mayUnlearn applies the demotion bar: it equals the bar that added the
// record. It returns whether actor may demote now, the evidence, and why not.
func (e *Engine) mayUnlearn(ctx context.Context, rec schema.MemoryRecord, prom store.Promotion, actor store.Actor) (bool, store.Evidence, string, error) {
	if isHuman(actor) {
		return true, store.Evidence{ApprovedBy: actor.String(), Note: "demoted by a human"}, "", nil
	}
	switch prom.Tier {
	case schema.TierAuto:
		return true, store.Evidence{Note: "auto tier"}, "", nil
	case schema.TierEarned:
		if ev, ok, err := e.accumulatedContradiction(ctx, rec); err != nil || ok {
			return ok, ev, "", err
		}
		if e.eval != nil && e.agent != nil {
			res, err := e.evaluate(ctx, rec)
			if err != nil {
				return false, store.Evidence{}, "", err
			}
			if res.Regressed {
				return true, store.Evidence{Eval: res.Result, Note: "eval regression: " + res.Reason}, "", nil
			}
		}
		return false, store.Evidence{}, "demotion of an earned record needs a human, an eval regression or accumulated contradicting evidence", nil
	}
	return false, store.Evidence{}, "an agent cannot unlearn a guarded record, only propose to", nil
}

// accumulatedContradiction finds a live candidate contradicting rec that has
// itself earned the recurrence bar.
func (e *Engine) accumulatedContradiction(ctx context.Context, rec schema.MemoryRecord) (store.Evidence, bool, error) {
	if rec.Target == nil {
		return store.Evidence{}, false, nil
	}
	live, err := e.live(ctx, *rec.Target)
	if err != nil {
		return store.Evidence{}, false, err
	}
	for _, c := range live {
		if c.ID == rec.ID || c.DistinctConversations() < e.recurrence {
			continue
		}
		if ok, why := lexical.TextContradicts(e.text(rec.Content), e.text(c.Content)); ok {
			return store.Evidence{Conversations: evidenceConversations(&c),
				Note: fmt.Sprintf("accumulated contradiction: %s (%s) %s", c.ID, schema.Conversations(c.DistinctConversations()), why)}, true, nil
		}
	}
	return store.Evidence{}, false, nil
}

func (e *Engine) doInvalidate(ctx context.Context, id, reason string, actor store.Actor, o Outcome) (Outcome, error) {
	if err := e.st.Invalidate(ctx, id, reason, actor); err != nil {
		return o, fmt.Errorf("invalidate %s: %w", id, err)
	}
	o.Status, o.Reason = StatusInvalidated, reason
	return o, nil
}

// Approve carries out a pending proposal. Only humans approve; anyone else
// gets ErrRefused. Expired proposals are expired first and cannot be
// approved.
func (e *Engine) Approve(ctx context.Context, proposalID string, actor store.Actor, reason string) (Outcome, error) {
	return e.ApproveWith(ctx, proposalID, actor, reason, "")
}

// ApproveWith is Approve with the approver's edit of a merge proposal's
// merged text (content; "" keeps the proposal's). content on any other
// proposal is refused.
func (e *Engine) ApproveWith(ctx context.Context, proposalID string, actor store.Actor, reason, content string) (Outcome, error) {
	return e.atomically(ctx, func(be *Engine) (Outcome, error) {
		return be.decideWith(ctx, proposalID, actor, reason, true, content)
	})
}

// Reject closes a pending proposal without effect. Only humans reject.
func (e *Engine) Reject(ctx context.Context, proposalID string, actor store.Actor, reason string) (Outcome, error) {
	return e.atomically(ctx, func(be *Engine) (Outcome, error) { return be.decide(ctx, proposalID, actor, reason, false) })
}

func (e *Engine) decide(ctx context.Context, id string, actor store.Actor, reason string, approve bool) (Outcome, error) {
	return e.decideWith(ctx, id, actor, reason, approve, "")
}

func (e *Engine) decideWith(ctx context.Context, id string, actor store.Actor, reason string, approve bool, content string) (Outcome, error) {
	o := Outcome{ProposalID: id}
	verb, done := "reject", "rejected"
	if approve {
		verb, done = "approve", "approved"
	}
	if !isHuman(actor) {
		return refused(o, "%s cannot %s: only a human (actor human:NAME) approves or rejects proposals", actor, verb)
	}
	if err := e.ws.Limits.CheckReason("reason", reason); err != nil {
		return o, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if _, err := e.st.ExpireProposals(ctx); err != nil {
		return o, fmt.Errorf("expire proposals: %w", err)
	}
	p, err := e.st.GetProposal(ctx, id)
	if err != nil {
		return o, err // the store's error names the proposal
	}
	o.RecordID, o.Tier, o.Evidence = p.RecordID, p.Tier, p.Evidence
	if p.State != store.ProposalPending {
		return refused(o, "proposal %s is %s: nothing to %s", id, p.State, verb)
	}
	if content != "" && p.MergedContent == "" {
		return refused(o, "proposal %s is not a merge: only a merge's text can be edited on approval", id)
	}
	if approve && p.MergedContent != "" {
		if content == "" {
			content = p.MergedContent
		}
		return e.merge(ctx, o, p, actor, reason, content)
	}
	if approve {
		p, err = e.st.Approve(ctx, id, actor, reason)
	} else {
		if strings.TrimSpace(reason) == "" {
			return refused(o, "a reason is required to reject")
		}
		p, err = e.st.Reject(ctx, id, actor, reason)
	}
	if errors.Is(err, store.ErrConflict) {
		return refused(o, "proposal %s can no longer be %s: %v", id, done, err)
	}
	if err != nil {
		return o, fmt.Errorf("%s proposal %s: %w", verb, id, err)
	}
	o.Status = StatusRejected
	if approve {
		o.Status = StatusApproved
	}
	o.Reason = fmt.Sprintf("%s of %s %s by %s", p.Kind, p.RecordID, done, actor)
	return o, nil
}

// Proposals expires overdue proposals, then lists the pending ones of this
// agent, oldest first.
func (e *Engine) Proposals(ctx context.Context) ([]store.Proposal, error) {
	if _, err := e.st.ExpireProposals(ctx); err != nil {
		return nil, fmt.Errorf("expire proposals: %w", err)
	}
	return e.pending(ctx)
}

// pending lists the pending proposals this engine answers for, as stored
// (overdue ones included): its agent's, or for the engine of the shared
// records (no agent) the shared records' only, since another agent's
// review is that agent's.
func (e *Engine) pending(ctx context.Context) ([]store.Proposal, error) {
	ps, err := e.st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending, Scope: e.base, Agent: e.name})
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	if e.name != "" {
		return ps, nil
	}
	out := ps[:0]
	for _, p := range ps {
		rec, err := e.st.Get(ctx, p.RecordID)
		if err != nil || rec.Scope[store.AgentKey] == "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// PendingProposals lists the pending proposals of this agent, oldest first,
// as Proposals does but without expiring overdue ones (it writes nothing):
// an overdue proposal is left out. For read-only surfaces.
func (e *Engine) PendingProposals(ctx context.Context) ([]store.Proposal, error) {
	ps, err := e.pending(ctx)
	if err != nil {
		return nil, err
	}
	now := e.nowString()
	out := ps[:0]
	for _, p := range ps {
		if store.ProposalStateAt(p, now) == store.ProposalPending {
			out = append(out, p)
		}
	}
	return out, nil
}

// Supersede resolves a conflict: dropID is retired in favour of keepID
// (through dropID's demotion gate for actor), then keepID, if a candidate,
// runs its promotion gate.
func (e *Engine) Supersede(ctx context.Context, keepID, dropID string, actor store.Actor) (Outcome, error) {
	if e.eval != nil {
		return e.supersede(ctx, keepID, dropID, actor)
	}
	return e.atomically(ctx, func(be *Engine) (Outcome, error) { return be.supersede(ctx, keepID, dropID, actor) })
}

func (e *Engine) supersede(ctx context.Context, keepID, dropID string, actor store.Actor) (Outcome, error) {
	if keepID == dropID {
		return refused(Outcome{RecordID: keepID}, "a record cannot supersede itself")
	}
	keep, err := e.get(ctx, keepID)
	if err != nil {
		return Outcome{RecordID: keepID}, err
	}
	if !keep.Valid(e.nowString()) {
		return refused(Outcome{RecordID: keepID}, "record %s is invalidated: keep a live record", keepID)
	}
	o, err := e.unlearn(ctx, dropID, "superseded by "+keepID, actor, true, keepID)
	if err != nil || o.Status != StatusInvalidated {
		return o, err
	}
	if keep.Target == nil {
		return o, nil
	}
	if _, ok, err := e.promotion(ctx, keepID); err != nil || ok {
		return o, err
	}
	po, err := e.Promote(ctx, keepID, actor)
	if err != nil && !errors.Is(err, ErrRefused) {
		return po, err
	}
	po.Reason = fmt.Sprintf("%s superseded by %s; %s: %s", dropID, keepID, po.Status, po.Reason)
	return po, nil
}
