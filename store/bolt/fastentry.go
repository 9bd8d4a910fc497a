package bolt

import (
	"encoding/json"
	"strconv"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// unmarshalEntry decodes a stored ledger entry's JSON as json.Unmarshal
// into a store.LedgerEntry does. The ledger holds json.Marshal's output, so
// the direct decoder (recordDecoder's rules: exact field names, strings
// without escapes, no nulls, no repeated keys) handles the entries of
// records — writes with their record, promotions with their evidence,
// corroborations, invalidations — several times faster; anything else (a
// proposal, conflict or token, an eval result, a number other than a plain
// unsigned integer, an escape, ...) goes to json.Unmarshal, which decides.
func unmarshalEntry(data []byte, e *store.LedgerEntry) error {
	return unmarshalEntryWith(recordDecoder{data: data}, e)
}

// unmarshalEntryWith is unmarshalEntry with d (its data, and its like,
// likeEntry and scratch when set). The direct decoder is called as a
// method, not a function value, so that d stays on the stack.
func unmarshalEntryWith(d recordDecoder, e *store.LedgerEntry) error {
	if d.entry(e) && d.atEnd() {
		return nil
	}
	*e = store.LedgerEntry{}
	return json.Unmarshal(d.data, e)
}

// atEnd reports whether only white space is left: the direct decoder
// decoded the whole input.
func (d *recordDecoder) atEnd() bool {
	d.ws()
	return d.pos == len(d.data)
}

// entry reads a ledger entry; d.like and d.likeEntry offer their strings
// (strLike).
func (d *recordDecoder) entry(e *store.LedgerEntry) bool {
	var seen once
	h, p := d.likeRecord(), d.likeLedgerEntry()
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "seq":
			return seen.first(0) && d.uint(&e.Seq)
		case "at":
			return seen.first(1) && d.strLike(&e.At, h.UpdatedAt, h.CreatedAt, p.At)
		case "op":
			var s string
			ok := seen.first(2) && d.strLike(&s, string(store.OpWrite), string(store.OpPromote), string(p.Op))
			e.Op = store.Op(s)
			return ok
		case "recordId":
			return seen.first(3) && d.strLike(&e.RecordID, h.ID)
		case "proposalId":
			return seen.first(4) && d.strLike(&e.ProposalID, p.ProposalID)
		case "actor":
			return seen.first(5) && d.actor(&e.Actor, &p.Actor)
		case "reason":
			return seen.first(6) && d.str(&e.Reason)
		case "tier":
			var s string
			ok := seen.first(7) && d.strLike(&s, string(schema.TierAuto), string(schema.TierEarned), string(schema.TierGuarded))
			e.Tier = schema.Tier(s)
			return ok
		case "approver":
			return seen.first(8) && d.strLike(&e.Approver, p.Approver)
		case "evidence":
			if !seen.first(9) {
				return false
			}
			if d.scratch != nil {
				e.Evidence = d.scratch.evidences.take()
			} else {
				e.Evidence = &store.Evidence{}
			}
			return d.evidence(e.Evidence, &noEvidence)
		case "support":
			if !seen.first(10) {
				return false
			}
			e.Support = &schema.Support{}
			return d.support(e.Support, &noSupport)
		case "record":
			if !seen.first(11) {
				return false
			}
			if d.scratch != nil {
				e.Record = d.scratch.recs.take()
			} else {
				e.Record = &schema.MemoryRecord{}
			}
			return d.recordObject(e.Record)
		case "prevHash":
			return seen.first(12) && d.strLike(&e.PrevHash, p.Hash)
		case "hash":
			return seen.first(13) && d.str(&e.Hash)
		}
		// proposal, conflict, token and anything unknown.
		return false
	})
}

// Read-only stand-ins with no strings to offer.
var (
	noEvidence store.Evidence
	noSupport  schema.Support
)

// actor reads an actor; h offers its strings (strLike).
func (d *recordDecoder) actor(a, h *store.Actor) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "kind":
			var s string
			ok := seen.first(0) && d.strLike(&s, string(h.Kind))
			a.Kind = store.ActorKind(s)
			return ok
		case "name":
			return seen.first(1) && d.strLike(&a.Name, h.Name)
		}
		return false
	})
}

// evidence reads an Evidence without an eval result (left to
// json.Unmarshal); h offers its strings (strLike).
func (d *recordDecoder) evidence(ev, h *store.Evidence) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "conversations":
			if !seen.first(0) {
				return false
			}
			ev.Conversations = []string{}
			return d.array(func() bool {
				var s string
				if !d.strLike(&s, stringAt(h.Conversations, len(ev.Conversations))) {
					return false
				}
				ev.Conversations = append(ev.Conversations, s)
				return true
			})
		case "approvedBy":
			return seen.first(1) && d.strLike(&ev.ApprovedBy, h.ApprovedBy)
		case "proposalId":
			return seen.first(2) && d.strLike(&ev.ProposalID, h.ProposalID)
		case "note":
			return seen.first(3) && d.strLike(&ev.Note, h.Note)
		}
		return false
	})
}

// uint reads an unsigned integer as json.Marshal writes one: digits, no
// leading zero, no sign, fraction or exponent, within uint64.
func (d *recordDecoder) uint(out *uint64) bool {
	d.ws()
	start := d.pos
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
	}
	digits := d.data[start:d.pos]
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '.', 'e', 'E':
			return false
		}
	}
	n, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return false
	}
	*out = n
	return true
}

// unmarshalPromotion decodes a stored promotion row's JSON as json.Unmarshal
// into a store.Promotion does, directly for json.Marshal's output of one
// without an eval result (unmarshalEntry's rules); anything else goes to
// json.Unmarshal.
func unmarshalPromotion(data []byte, p *store.Promotion) error {
	return unmarshalPromotionWith(recordDecoder{data: data}, p)
}

// unmarshalPromotionWith is unmarshalPromotion with d (unmarshalEntryWith).
func unmarshalPromotionWith(d recordDecoder, p *store.Promotion) error {
	if d.promotion(p) && d.atEnd() {
		return nil
	}
	*p = store.Promotion{}
	return json.Unmarshal(d.data, p)
}

// promotion reads a promotion row; d.like and d.likeEntry (the promote
// entry) offer their strings (strLike).
func (d *recordDecoder) promotion(p *store.Promotion) bool {
	var seen once
	h, e := d.likeRecord(), d.likeLedgerEntry()
	ev := e.Evidence
	if ev == nil {
		ev = &noEvidence
	}
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "recordId":
			return seen.first(0) && d.strLike(&p.RecordID, h.ID)
		case "tier":
			var s string
			ok := seen.first(1) && d.strLike(&s, string(e.Tier))
			p.Tier = schema.Tier(s)
			return ok
		case "promotedAt":
			return seen.first(2) && d.strLike(&p.PromotedAt, e.At)
		case "actor":
			return seen.first(3) && d.actor(&p.Actor, &e.Actor)
		case "approver":
			return seen.first(4) && d.strLike(&p.Approver, e.Approver, ev.ApprovedBy)
		case "evidence":
			return seen.first(5) && d.evidence(&p.Evidence, ev)
		}
		return false
	})
}
