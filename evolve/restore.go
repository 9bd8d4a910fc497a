package evolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// RestoreResult is what a restore did.
type RestoreResult struct {
	Outcome
	// RestoredFrom is the retired version brought back; Record the new
	// record holding it (its provenance.restoredFrom names RestoredFrom).
	RestoredFrom string               `json:"restoredFrom"`
	Record       *schema.MemoryRecord `json:"record,omitempty"`
	// Superseded is the record that was current on the slot, if any.
	Superseded string `json:"superseded,omitempty"`
	// WasPromoted: the restored version was promoted when it was retired,
	// so the new record went through the promotion gate (Promotion says
	// how that went).
	WasPromoted bool     `json:"wasPromoted"`
	Promotion   *Outcome `json:"promotion,omitempty"`
}

// Restore brings a superseded or invalidated version back as the current
// one on its slot. Human only. A new record with the old one's kind,
// content, tags, target, payload and conversation (its provenance's
// restoredFrom naming id, in the hash-chained write or supersede entry)
// supersedes the version that is current now, if any (following the
// supersededBy chain from id); the old version's supports are carried as
// corroborations; when the old version was promoted when it was retired,
// the new record goes through the promotion gate for the human. The old
// record itself is not changed: rollback is a new version.
func (e *Engine) Restore(ctx context.Context, id string, actor store.Actor) (RestoreResult, error) {
	if !isHuman(actor) {
		o, err := refused(Outcome{RecordID: id}, "%s cannot restore: only a human (actor human:NAME) restores a retired version", actor)
		return RestoreResult{Outcome: o, RestoredFrom: id}, err
	}
	var res RestoreResult
	run := func(be *Engine) (Outcome, error) {
		var err error
		res, err = be.restore(ctx, id, actor)
		return res.Outcome, err
	}
	var o Outcome
	var err error
	if e.eval != nil {
		o, err = run(e)
	} else {
		o, err = e.atomically(ctx, run)
	}
	res.Outcome = o
	return res, err
}

// restorePlan is what restoring a version does: the version, the
// current one it supersedes ("" for none) and whether it goes through the
// promotion gate.
type restorePlan struct {
	old         schema.MemoryRecord
	cur         string
	wasPromoted bool
}

// planRestore checks that id may be restored (why says why not) and plans it.
func (e *Engine) planRestore(ctx context.Context, id string) (plan restorePlan, why string, err error) {
	old, err := e.get(ctx, id)
	if err != nil {
		return plan, "", err
	}
	plan.old = old
	now := e.nowString()
	if old.Valid(now) {
		return plan, fmt.Sprintf("record %s is the current version: nothing to restore (restore brings back a superseded or invalidated one)", id), nil
	}
	if old.Target != nil {
		if why := e.checkDomain(*old.Target); why != "" {
			return plan, why, nil
		}
	}
	// The current version: follow supersededBy from id to a live record.
	seen := map[string]bool{id: true}
	for next := old.SupersededBy; next != "" && !seen[next]; {
		seen[next] = true
		r, err := e.get(ctx, next)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return plan, "", err
		}
		if r.Valid(now) {
			if r.Provenance.RestoredFrom == id || sameVersion(r, old) {
				return plan, fmt.Sprintf("record %s is already the current version on its slot, as %s: nothing to restore", id, r.ID), nil
			}
			plan.cur = r.ID
			break
		}
		next = r.SupersededBy
	}
	if plan.cur == "" {
		// No live successor on the supersededBy chain: the line was
		// invalidated without one. Its slot may still be current: a copy
		// restored from id (or the same version written again) is id
		// current again; a keyed slot (a background key) may be held by a
		// record written since, which the restore supersedes, so that no
		// two live records hold the key.
		holder, why, err := e.slotHolder(ctx, old, now)
		if err != nil || why != "" {
			return plan, why, err
		}
		plan.cur = holder
	}
	plan.wasPromoted, err = e.promotedWhenRetired(ctx, old)
	return plan, "", err
}

// slotHolder looks at the live records of old's scope and target for the
// version current on its slot: why is set when old is current again (a
// record restored from it, or the same version); holder names the live
// record holding old's key (keyed slots only), "" when none.
func (e *Engine) slotHolder(ctx context.Context, old schema.MemoryRecord, now string) (holder, why string, err error) {
	res, err := e.st.Search(ctx, store.Query{Scope: old.Scope, Target: old.Target, Limit: store.Limit(store.Unlimited)})
	if err != nil {
		return "", "", fmt.Errorf("records of %s's slot: %w", old.ID, err)
	}
	keyed := old.Target != nil && old.Target.SlotKey() != ""
	for _, r := range res.Records {
		if r.ID == old.ID || !r.Valid(now) || !maps.Equal(r.Scope, old.Scope) ||
			(r.Target == nil) != (old.Target == nil) || (r.Target != nil && *r.Target != *old.Target) {
			continue
		}
		if r.Provenance.RestoredFrom == old.ID || sameVersion(r, old) {
			return "", fmt.Sprintf("record %s is already the current version on its slot, as %s: nothing to restore", old.ID, r.ID), nil
		}
		if keyed && holder == "" {
			holder = r.ID
		}
	}
	return holder, "", nil
}

// RestorePreview is the composition diff restoring id would make (the
// current version leaves, the restored one enters when it goes through the
// promotion gate), or why id may not be restored.
func (e *Engine) RestorePreview(ctx context.Context, id string) (diff, why string, err error) {
	plan, why, err := e.planRestore(ctx, id)
	if err != nil || why != "" || e.agent == nil {
		return "", why, err
	}
	prom, err := e.promoted(ctx)
	if err != nil {
		return "", "", err
	}
	var after []schema.MemoryRecord
	for _, r := range prom {
		if r.ID != plan.cur {
			after = append(after, r)
		}
	}
	if plan.wasPromoted && plan.old.Target != nil {
		after = append(after, plan.old)
	}
	return e.renderDiff(prom, after, "current", "after restoring "+id), "", nil
}

func (e *Engine) restore(ctx context.Context, id string, actor store.Actor) (RestoreResult, error) {
	res := RestoreResult{Outcome: Outcome{RecordID: id}, RestoredFrom: id}
	plan, why, err := e.planRestore(ctx, id)
	if err != nil {
		return res, err
	}
	if why != "" {
		res.Outcome, err = refused(res.Outcome, "%s", why)
		return res, err
	}
	old, cur, wasPromoted := plan.old, plan.cur, plan.wasPromoted
	now := e.nowString()
	expires := old.ExpiresAt
	if expires != "" && expires <= now {
		expires = "" // an expired version comes back without its past expiry
	}
	prov := schema.Provenance{ConversationID: old.Provenance.ConversationID, RunID: old.Provenance.RunID, RestoredFrom: old.ID}
	recs, err := e.st.Write(ctx, []store.WriteRequest{{Scope: old.Scope, Kind: old.Kind, Content: old.Content, Tags: old.Tags,
		Provenance: prov, ExpiresAt: expires, Target: old.Target, Payload: old.Payload, Supersedes: cur}}, actor)
	if err != nil {
		return res, fmt.Errorf("restore %s: write: %w", id, err)
	}
	rec := recs[0]
	for _, s := range old.Supports {
		if _, err := e.st.Corroborate(ctx, rec.ID, s, actor); err != nil {
			return res, fmt.Errorf("restore %s: support of %s: %w", id, s.ConversationID, err)
		}
	}
	res.Superseded, res.WasPromoted, res.Status = cur, wasPromoted, StatusApproved
	res.Outcome.RecordID = rec.ID
	switch {
	case cur != "":
		res.Reason = fmt.Sprintf("restored %s as %s, superseding %s", id, rec.ID, cur)
	default:
		res.Reason = fmt.Sprintf("restored %s as %s (no current version on its slot)", id, rec.ID)
	}
	if wasPromoted && rec.Target != nil {
		po, err := e.promote(ctx, rec.ID, actor)
		if err != nil && !errors.Is(err, ErrRefused) {
			return res, err
		}
		res.Promotion = &po
		res.Reason += fmt.Sprintf("; promotion: %s", po.Status)
		if po.Reason != "" {
			res.Reason += " (" + po.Reason + ")"
		}
	}
	got, err := e.get(ctx, rec.ID)
	if err != nil {
		return res, err
	}
	res.Record = &got
	return res, nil
}

// promotedWhenRetired reports whether rec was promoted when it was
// retired: its ledger history replayed up to the entry that invalidated or
// superseded it (a demotion that is part of that retirement, at the same
// time, does not count).
func (e *Engine) promotedWhenRetired(ctx context.Context, rec schema.MemoryRecord) (bool, error) {
	promoted, last := false, false
	demotedAt := ""
	done := false
	// The whole ledger, not History: a backend may find a record's entries
	// through an index (bbolt's ledgerof), which the hash chain does not
	// cover, and this answer decides what a write promotes. The ledger is
	// the truth; restore is a rare human command.
	err := e.st.EachLedger(ctx, func(le store.LedgerEntry) error {
		if done || le.RecordID != rec.ID {
			return nil
		}
		retires := le.Op == store.OpInvalidate || le.Op == store.OpSupersede ||
			le.Op == store.OpApprove && le.Proposal != nil && le.Proposal.Kind == store.ProposeDemote && (le.Proposal.Invalidate || le.Proposal.SupersededBy != "")
		if retires {
			last = promoted || (demotedAt != "" && demotedAt == le.At)
			done = true
			return nil
		}
		switch le.Op {
		case store.OpPromote:
			promoted, demotedAt = true, ""
		case store.OpDemote:
			if promoted {
				demotedAt = le.At
			}
			promoted = false
		case store.OpApprove:
			if le.Proposal != nil {
				if le.Proposal.Kind == store.ProposePromote {
					promoted, demotedAt = true, ""
				} else if promoted {
					promoted, demotedAt = false, le.At
				}
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("history of %s: %w", rec.ID, err)
	}
	if !done {
		// Retired by expiry: as it stood.
		_, ok, err := e.promotion(ctx, rec.ID)
		return ok || promoted, err
	}
	return last, nil
}

// sameVersion reports whether two records say the same thing in the same
// place: content, target and payload.
func sameVersion(a, b schema.MemoryRecord) bool {
	return a.Content == b.Content && bytes.Equal(a.Payload, b.Payload) &&
		(a.Target == nil) == (b.Target == nil) && (a.Target == nil || *a.Target == *b.Target)
}
