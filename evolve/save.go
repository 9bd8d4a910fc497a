package evolve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agent-ls/agent-ls/evolve/contradiction"
	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/trust"
)

// SaveRequest is one new memory, as memory_save, `agent-ls memory save` and
// the language server send it. An empty Kind means fact.
type SaveRequest struct {
	Kind       schema.Kind          `json:"kind"`
	Content    string               `json:"content"`
	Tags       []string             `json:"tags,omitempty"`
	Target     *schema.MemoryTarget `json:"target,omitempty"`
	Payload    json.RawMessage      `json:"payload,omitempty"`
	Supersedes string               `json:"supersedes,omitempty"`
	Provenance schema.Provenance    `json:"provenance"`
	// ExpiresAt is an RFC 3339 time (stored in the canonical form).
	ExpiresAt string      `json:"expiresAt,omitempty"`
	Actor     store.Actor `json:"actor"`
}

// SaveResult is Save's answer.
type SaveResult struct {
	// Status is saved, conflict, not_found or refused.
	Status SaveStatus `json:"status"`
	// Record is the record written, or the existing one that was corroborated.
	Record       *schema.MemoryRecord `json:"record,omitempty"`
	SupersededID string               `json:"supersededId,omitempty"`
	Corroborated bool                 `json:"corroborated"`
	Tier         schema.Tier          `json:"tier,omitempty"`
	// State is promoted, candidate, pending (a proposal waits) or recall
	// (untargeted).
	State      State  `json:"state,omitempty"`
	ProposalID string `json:"proposalId,omitempty"`
	// DemotionProposalID is the pending demotion opened when an agent
	// superseded a gated (earned or guarded) promoted record.
	DemotionProposalID string `json:"demotionProposalId,omitempty"`
	// Existing is the live record a conflict collided with.
	Existing *schema.MemoryRecord `json:"existing,omitempty"`
	// Conflicts are contradictions with authored or promoted judgment lines.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	Guidance  string     `json:"guidance,omitempty"`
	// StateGuidance is what the record's tier and state mean now: Guidance
	// without a corroboration's note about which record it joined, for a
	// surface that shows Record.ID and Corroborated itself.
	StateGuidance string `json:"stateGuidance,omitempty"`
}

// Save is the one entry point for new memories: it validates, reconciles
// (corroborates a near-duplicate, reports a key conflict, refuses a new
// judgment domain or a locked target), writes with scope = base scope +
// agent, and applies the save-time part of the target's tier. Invalid
// requests return an error wrapping store.ErrInvalid; refusals, conflicts
// and unknown supersedes are answers (nil error).
//
// Save is one store transaction (store.Tx.Update): the search for a
// near-duplicate and the write or corroboration commit together, so
// processes saving the same lesson at once end with one record and a
// support per conversation. The exception is an agent's supersede with an
// evaluator configured: the eval gate it may run can take minutes, so that
// save runs as separate store operations.
func (e *Engine) Save(ctx context.Context, r SaveRequest) (SaveResult, error) {
	_, inBatch := store.StampOf(e.st)
	if inBatch || e.lc != nil || (r.Supersedes != "" && !isHuman(r.Actor) && e.eval != nil && e.agent != nil) {
		return e.save(ctx, r)
	}
	var res SaveResult
	err := e.st.Update(ctx, func(tx store.Tx) error {
		var err error
		res, err = e.withStore(tx).save(ctx, r)
		return err
	})
	return res, err
}

// CheckSave runs the checks of Save that need no store: the request's
// fields (store.ValidateWrite), the workspace's limits, a locked target and
// a new judgment domain. A refusal comes back as a result, an invalid
// request as an error wrapping store.ErrInvalid; (nil, nil) is a request
// Save goes on to reconcile. A command checks its arguments with it before
// it opens (and so creates) a store.
func (e *Engine) CheckSave(r SaveRequest) (*SaveResult, error) {
	_, res, err := e.prepare(r)
	if err != nil || res.Status != "" {
		return &res, err
	}
	return nil, nil
}

// prepare normalizes and checks r without the store (CheckSave): the
// request to save, or a result with a Status (a refusal) or an error.
func (e *Engine) prepare(r SaveRequest) (SaveRequest, SaveResult, error) {
	if r.Kind == "" {
		r.Kind = schema.KindFact
	}
	// Distinct conversations are counted on normalized ids: "c1", "C1" and
	// "c1 " are one conversation.
	conv, err := schema.NormalizeConversationID(r.Provenance.ConversationID)
	if err != nil {
		return r, SaveResult{}, fmt.Errorf("%w: provenance: %v", store.ErrInvalid, err)
	}
	r.Provenance.ConversationID = conv
	if r.ExpiresAt != "" {
		t, err := schema.ParseTime(r.ExpiresAt)
		if err != nil {
			return r, SaveResult{}, fmt.Errorf("%w: expiresAt: %v", store.ErrInvalid, err)
		}
		r.ExpiresAt = schema.FormatTime(t)
		// A memory that has expired when it is saved reaches no
		// composition and no recall: the request is a mistake (a past
		// time, a zero duration), not a record to keep.
		if now := e.nowString(); r.ExpiresAt <= now {
			return r, SaveResult{}, fmt.Errorf("%w: expiresAt %s is not after now (%s)", store.ErrInvalid, r.ExpiresAt, now)
		}
	}
	if r.Provenance.At != "" {
		t, err := schema.ParseTime(r.Provenance.At)
		if err != nil {
			return r, SaveResult{}, fmt.Errorf("%w: provenance.at: %v", store.ErrInvalid, err)
		}
		r.Provenance.At = schema.FormatTime(t)
	}
	if string(bytes.TrimSpace(r.Payload)) == "null" {
		r.Payload = nil // JSON's "no payload" (an MCP client's null)
	}
	// The one record validator (schema.CheckMemory), as import runs it: a
	// record save accepts survives export → import.
	if err := store.ValidateWrite(store.WriteRequest{Scope: e.scope, Kind: r.Kind, Content: r.Content, Tags: r.Tags,
		Target: r.Target, Payload: r.Payload, ExpiresAt: r.ExpiresAt, Provenance: r.Provenance,
		Supersedes: r.Supersedes}); err != nil {
		return r, SaveResult{}, err // the surface says it saves: no "save: " here
	}
	// The workspace's limits (schema.Limits), for every surface.
	if err := store.CheckLimits(e.ws.Limits, &schema.MemoryRecord{Content: r.Content, Scope: e.scope, Tags: r.Tags,
		Payload: r.Payload, Provenance: r.Provenance, SupersededBy: r.Supersedes}); err != nil {
		return r, SaveResult{}, err
	}
	res := SaveResult{State: StateRecall}
	if r.Target != nil {
		res.Tier = schema.TierOf(*r.Target)
		if res.Tier == schema.TierLocked {
			res.Status = SaveRefused
			res.Guidance = fmt.Sprintf("%s is locked: %s", r.Target, schema.LockedReason)
			return r, res, nil
		}
		if why := e.checkDomain(*r.Target); why != "" {
			// A new judgment domain is in the locked tier (the tier table).
			res.Status, res.Tier, res.Guidance = SaveRefused, schema.TierLocked, "locked: "+why
			return r, res, nil
		}
	}
	return r, res, nil
}

// save is Save on the engine's store as it is (a batch view or the store).
func (e *Engine) save(ctx context.Context, r SaveRequest) (SaveResult, error) {
	r, res, err := e.prepare(r)
	if err != nil || res.Status != "" {
		return res, err
	}
	var old *schema.MemoryRecord
	if r.Supersedes != "" {
		o, err := e.get(ctx, r.Supersedes)
		if err != nil {
			if isNotFound(err) {
				res.Status = SaveNotFound
				res.Guidance = fmt.Sprintf("no record %s to supersede in this agent's scope; search first, or save without supersedes", r.Supersedes)
				return res, nil
			}
			return res, err
		}
		if now := e.nowString(); !o.Valid(now) {
			res.Status, res.Existing = SaveConflict, &o
			res.Guidance = fmt.Sprintf("record %s %s; supersede the live record instead", o.ID, retiredWhy(&o, now))
			return res, nil
		}
		old = &o
	}
	if r.Target != nil {
		// The first near-duplicate is corroborated; else a keyed slot's
		// first live record (newest first) is a conflict. A judgment lesson
		// is tested against each line for contradiction first
		// (contradiction.Contradicts), candidates included: a line it
		// contradicts is never its near-duplicate, and when no line is, the
		// lesson is written as its own record, kept a candidate and reported
		// as a conflict with each line it contradicts (settle).
		keyed := r.Target.SlotKey() != ""
		byPayload := r.Target.NeedsPayload()
		judged := contradiction.Applies(r.Target)
		lesson, whole := lessonKeys(r.Target, r.Payload)
		var dup, held *line
		var opposed []Conflict
		err := e.eachLine(ctx, *r.Target, false, func(l *line) bool {
			if old != nil && l.id == old.ID {
				return true
			}
			if judged {
				if c, why := contradiction.Contradicts(e.text(r.Content), e.text(l.content)); c {
					opposed = append(opposed, Conflict{Kind: lint.ConflictContradiction, With: l.id, Text: l.content, Why: why,
						Other: &lint.ConflictSide{RecordID: l.id, State: lint.SideCandidate, Content: l.content}})
					return true
				}
			}
			if byPayload {
				// Examples and awareness domains are one lesson by payload,
				// never by prose (lessonKeys).
				if lesson == "" || l.lesson != lesson {
					return true
				}
				c := *l
				if r.Target.Primitive == schema.PrimitiveAwareness && l.whole != whole {
					held = &c
				} else {
					dup = &c
				}
				return false
			}
			if e.sameLesson(keyed, l.content, r.Content) {
				c := *l
				dup = &c
				return false
			}
			if keyed && held == nil {
				c := *l
				held = &c
			}
			return true
		})
		if err != nil {
			return res, err
		}
		if dup == nil {
			res.Conflicts = opposed
		}
		if dup != nil {
			rec, err := e.lineRecord(ctx, dup)
			if err != nil {
				return res, err
			}
			return e.corroborate(ctx, rec, r, res)
		}
		if held != nil {
			rec, err := e.lineRecord(ctx, held)
			if err != nil {
				return res, err
			}
			res.Status, res.Existing = SaveConflict, &rec
			res.Guidance = fmt.Sprintf("%s already holds %q (record %s): supersede it or choose another key",
				r.Target, rec.Content, rec.ID)
			if r.Target.Primitive == schema.PrimitiveAwareness {
				var p schema.AwarenessPayload
				_ = json.Unmarshal(rec.Payload, &p)
				res.Guidance = fmt.Sprintf("awareness already holds a domain named %q (record %s, names compare case-insensitively): supersede it or choose another name",
					p.Name, rec.ID)
			}
			return res, nil
		}
	}
	return e.write(ctx, r, old, res)
}

// sameLesson: list slots use lexical.NearDuplicate; keyed background slots
// demand identical content tokens (a one-word change there is a correction,
// not a corroboration).
func (e *Engine) sameLesson(keyed bool, a, b string) bool {
	return sameLessonTexts(keyed, e.text(a), e.text(b))
}

// sameLessonTexts is sameLesson of two analyzed texts.
func sameLessonTexts(keyed bool, ta, tb *lexical.Text) bool {
	if keyed {
		return slices.Equal(ta.TokenList(), tb.TokenList())
	}
	return lexical.TextNearDuplicate(ta, tb)
}

func (e *Engine) write(ctx context.Context, r SaveRequest, old *schema.MemoryRecord, res SaveResult) (SaveResult, error) {
	req := store.WriteRequest{Scope: e.Scope(), Kind: r.Kind, Content: r.Content, Tags: r.Tags, Provenance: r.Provenance,
		ExpiresAt: r.ExpiresAt, Target: r.Target, Payload: r.Payload, Supersedes: r.Supersedes}
	deferred := false
	if old != nil && trust.Decide(r.Actor, trust.OpSupersede, old) == trust.Propose {
		// A shared record is superseded for every agent: write the new
		// record, propose the retirement of the old one to a human.
		req.Supersedes, deferred = "", true
	} else if old != nil && !isHuman(r.Actor) {
		if p, ok, err := e.promotion(ctx, old.ID); err != nil {
			return res, err
		} else if ok && p.Tier != schema.TierAuto {
			// A gated learning is not unlearned by an agent's supersede:
			// write the new record, propose the demotion of the old one.
			req.Supersedes, deferred = "", true
		}
	}
	if deferred {
		// The supersede becomes a proposal naming the new record; a pending
		// demotion of the old record (an earlier invalidate) would not set
		// supersededBy on approval, so the save waits for that decision.
		if p, ok, err := e.pendingFor(ctx, old.ID, store.ProposeDemote); err != nil {
			return res, err
		} else if ok {
			res.Status, res.Existing = SaveConflict, old
			res.Guidance = pendingWhy(p) + "; try again once it is decided" // a save or a retarget
			return res, nil
		}
	}
	recs, err := e.st.Write(ctx, []store.WriteRequest{req}, r.Actor)
	if err != nil {
		return res, err // the surface says it saves: no "save: " here
	}
	rec := recs[0]
	res.Status, res.Record = SaveSaved, &rec
	if old != nil && !deferred {
		res.SupersededID = old.ID
	}
	if deferred {
		o, err := e.unlearn(ctx, old.ID, "superseded by "+rec.ID, r.Actor, true, rec.ID)
		if err != nil {
			return res, err
		}
		switch o.Status {
		case StatusPending:
			res.DemotionProposalID = o.ProposalID
		case StatusInvalidated:
			res.SupersededID = old.ID
		}
	}
	if rec.Target == nil {
		res.State = StateRecall
		res.Guidance = "saved untargeted: it reaches the agent through recall"
		return res, nil
	}
	if err := e.settle(ctx, rec, r.Actor, &res, true); err != nil {
		return res, err
	}
	if e.authoredKey(*rec.Target) {
		res.Guidance += fmt.Sprintf("; the authored config already holds %s: authored wins, so this memory will not render (choose another key)", rec.Target)
	}
	if res.DemotionProposalID != "" {
		res.Guidance += fmt.Sprintf("; %s is a gated learning and keeps rendering until a human approves its demotion (proposal %s)", old.ID, res.DemotionProposalID)
	}
	return res, nil
}

// settle applies the save-time tier rules to a targeted record: auto
// promotes, earned promotes once recurrence is met, guarded opens a
// promotion proposal; a contradiction keeps it a candidate.
func (e *Engine) settle(ctx context.Context, rec schema.MemoryRecord, actor store.Actor, res *SaveResult, fresh bool) error {
	tier := schema.TierOf(*rec.Target)
	res.Tier, res.State = tier, StateCandidate
	res.Record = &rec
	if _, ok, err := e.promotion(ctx, rec.ID); err != nil {
		return err
	} else if ok {
		res.State = StatePromoted
		res.Guidance = "promoted: part of the agent's composition"
		return nil
	}
	if why := checkPayload(&rec); why != "" {
		res.Guidance = "candidate: " + why
		return nil
	}
	conflicts, err := e.Contradictions(ctx, rec)
	if err != nil {
		return err
	}
	// Lines of the slot the save found contradicted (save's reconciliation):
	// those Contradictions did not report (candidates) come first.
	var opposed []Conflict
	for _, c := range res.Conflicts {
		if !slices.ContainsFunc(conflicts, func(x Conflict) bool { return x.With == c.With }) {
			c.RecordID = rec.ID
			opposed = append(opposed, c)
		}
	}
	res.Conflicts = nil
	if conflicts = append(opposed, conflicts...); len(conflicts) > 0 {
		res.Conflicts = conflicts
		res.Guidance = "candidate, cannot promote: " + conflictReason(conflicts)
		return nil
	}
	convs := evidenceConversations(&rec)
	o := Outcome{RecordID: rec.ID, Tier: tier}
	if trust.Decide(actor, trust.OpCorroborate, &rec) == trust.Evidence {
		// An agent's corroboration of a shared record counts as evidence; it
		// never promotes by itself: once the tier's bar is met a human
		// decides (a promotion proposal).
		if tier == schema.TierEarned && len(convs) < e.recurrence {
			res.Guidance = "candidate (earned tier, shared record): " + schema.ConversationsOf(len(convs), e.recurrence)
			return nil
		}
		po, err := e.proposeShared(ctx, rec, actor, o, convs)
		if err != nil {
			return err
		}
		res.State, res.ProposalID, res.Guidance = StatePending, po.ProposalID, "pending: "+po.Reason
		return nil
	}
	switch tier {
	case schema.TierAuto:
		if _, err := e.doPromote(ctx, rec, actor, store.Evidence{Conversations: convs, Note: "auto"}, o); err != nil {
			return err
		}
		res.State, res.Guidance = StatePromoted, "promoted (auto tier): part of the agent's composition from the next instantiate"
	case schema.TierEarned:
		have := len(convs)
		if have >= e.recurrence {
			ev := store.Evidence{Conversations: convs, Note: "recurrence: " + schema.ConversationsOf(have, e.recurrence)}
			if _, err := e.doPromote(ctx, rec, actor, ev, o); err != nil {
				return err
			}
			res.State, res.Guidance = StatePromoted, "promoted (earned tier): "+ev.Note
			return nil
		}
		res.Guidance = fmt.Sprintf("candidate (earned tier): %s; it reaches the agent through recall until another conversation corroborates it", schema.ConversationsOf(have, e.recurrence))
	case schema.TierGuarded:
		if p, ok, err := e.pendingFor(ctx, rec.ID, store.ProposePromote); err != nil {
			return err
		} else if ok {
			res.State, res.ProposalID = StatePending, p.ID
			res.Guidance = fmt.Sprintf("pending (guarded tier): proposal %s waits for a human approval until %s", p.ID, p.ExpiresAt)
			return nil
		}
		if !fresh {
			// A decided or expired proposal is not reopened by corroboration.
			res.Guidance = "candidate (guarded tier): its proposal was decided or expired; a human may promote it"
			return nil
		}
		p, err := e.propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: rec.ID, Tier: tier, RequestedBy: actor,
			Reason: "guarded tier: needs a human approval", Evidence: store.Evidence{Conversations: convs}})
		if err != nil {
			return err
		}
		res.State, res.ProposalID = StatePending, p.ID
		res.Guidance = fmt.Sprintf("pending (guarded tier): proposal %s waits for a human approval until %s", p.ID, p.ExpiresAt)
	}
	return nil
}

// corroborate counts r as support of the existing near-duplicate c.
func (e *Engine) corroborate(ctx context.Context, c schema.MemoryRecord, r SaveRequest, res SaveResult) (SaveResult, error) {
	res.Status = SaveSaved
	conv := r.Provenance.ConversationID
	if conv == "" {
		rec := c
		res.Record = &rec
		res.Tier = schema.TierOf(*c.Target)
		res.State = StateCandidate
		if _, ok, err := e.promotion(ctx, c.ID); err != nil {
			return res, err
		} else if ok {
			res.State = StatePromoted
		}
		res.Guidance = fmt.Sprintf("already known as record %s; without a conversationId the save cannot count as support", c.ID)
		return res, nil
	}
	counted, err := e.st.Corroborate(ctx, c.ID, schema.Support{ConversationID: conv, RunID: r.Provenance.RunID, At: e.nowString()}, r.Actor)
	if err != nil {
		return res, fmt.Errorf("corroborate %s: %w", c.ID, err)
	}
	rec, err := e.get(ctx, c.ID)
	if err != nil {
		return res, err
	}
	res.Corroborated = counted
	if err := e.settle(ctx, rec, r.Actor, &res, false); err != nil {
		return res, err
	}
	note := fmt.Sprintf("corroborated existing record %s", c.ID)
	if !counted {
		note = fmt.Sprintf("near-duplicate of record %s from the same conversation: counted once", c.ID)
	}
	res.StateGuidance = res.Guidance
	res.Guidance = note + "; " + res.Guidance
	return res, nil
}

// authoredKey reports whether a background target's key is authored, as
// overlay.AuthoredKey (the one authored-wins rule) compares keys.
func (e *Engine) authoredKey(t schema.MemoryTarget) bool {
	if e.agent == nil || t.Primitive != schema.PrimitiveBackground {
		return false
	}
	_, ok := overlay.AuthoredKey(e.agent, t.Section, t.Key)
	return ok
}

// BatchError is SaveBatch's error for the request at Index (nothing of the
// batch was saved).
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("save batch[%d]: %v", e.Index, e.Err) }

// Unwrap returns the request's error.
func (e *BatchError) Unwrap() error { return e.Err }

// SaveBatch saves rs in order, each answered as Save answers it; later
// requests are reconciled against the earlier ones of the batch. The batch
// is one store transaction (store.Tx.Update): every save's reads, writes,
// corroborations, promotions and proposals, with their ledger entries, are
// committed together, or none of them when a request is invalid or a store
// operation fails (the error names the request; no results are returned).
//
// The batch holds the store's writer lock, so it never runs the eval gate
// (a suite may take minutes): where Save would run it — an agent
// superseding an earned promoted record with an evaluator configured — a
// batch save opens the demotion proposal (or demotes on accumulated
// contradiction), as Save does without an evaluator. Otherwise the answers
// are those of a loop of Save.
//
// On a store whose batch views stamp their state (store.Stamper), the
// engine keeps what reconciliation reads of each searched target between
// batches and uses it only while no one else committed (linecache.go), so
// a batch does not search a slot's records again.
func (e *Engine) SaveBatch(ctx context.Context, rs []SaveRequest) ([]SaveResult, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	// The reconciliation cache (linecache.go) is used by a top-level batch
	// only: a batch nested in another commits with the outer one.
	_, inBatch := store.StampOf(e.st)
	var lc *lineCache
	var out []SaveResult
	err := e.st.Update(ctx, func(tx store.Tx) error {
		be := e.withStore(tx)
		be.eval = nil
		if vs, ok := store.StampOf(tx); ok && !inBatch && e.shelf != nil {
			lc = e.shelf.take(vs.Base)
			lc.stamp, lc.now = vs.Next, vs.Now
			be.lc = lc
			be.st = &cachedView{Tx: tx, c: lc, visible: be.visible}
		}
		if be.lc != nil {
			// Every slot the batch reconciles against, read at once.
			var ts []schema.MemoryTarget
			for _, r := range rs {
				if r.Target == nil {
					continue
				}
				ts = append(ts, *r.Target)
				if contradiction.Applies(r.Target) {
					// The contradiction check of a judgment reads the
					// promoted lines of its domain's slots
					// (promotedLines).
					for _, slot := range contradiction.Slots {
						ts = append(ts, schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: r.Target.Domain, Slot: slot})
					}
				}
			}
			if err := be.preload(ctx, ts); err != nil {
				return err
			}
		}
		out = make([]SaveResult, 0, len(rs))
		for i, r := range rs {
			res, err := be.save(ctx, r)
			if err != nil {
				return &BatchError{Index: i, Err: err}
			}
			out = append(out, res)
		}
		return nil
	})
	if err != nil {
		// The cache was taken off the shelf: a failed batch leaves none.
		return nil, err
	}
	if lc != nil && !lc.broken {
		e.shelf.put(lc, lc.stamp)
	}
	return out, nil
}

// retiredWhy is what follows "record ID" in a message about rec when it
// is not live at now (schema.MemoryRecord.Valid is false): "expired at T"
// when its expiry came first, else "is already invalidated (REASON)".
func retiredWhy(rec *schema.MemoryRecord, now string) string {
	if rec.ExpiresAt != "" && rec.ExpiresAt <= now && (rec.InvalidAt == "" || rec.InvalidAt > rec.ExpiresAt) {
		return "expired at " + rec.ExpiresAt
	}
	if rec.InvalidReason == "" {
		return "is already invalidated"
	}
	return fmt.Sprintf("is already invalidated (%s)", rec.InvalidReason)
}
