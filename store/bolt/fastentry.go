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
	return decodeDirect(data, e, (*recordDecoder).entry)
}

// decodeDirect decodes data into *v with direct when the whole input is in
// the shape direct handles, else (v reset) with json.Unmarshal, which
// decides.
func decodeDirect[T any](data []byte, v *T, direct func(*recordDecoder, *T) bool) error {
	d := recordDecoder{data: data}
	if direct(&d, v) {
		d.ws()
		if d.pos == len(d.data) {
			return nil
		}
	}
	var zero T
	*v = zero
	return json.Unmarshal(data, v)
}

func (d *recordDecoder) entry(e *store.LedgerEntry) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "seq":
			return seen.first(0) && d.uint(&e.Seq)
		case "at":
			return seen.first(1) && d.str(&e.At)
		case "op":
			var s string
			ok := seen.first(2) && d.str(&s)
			e.Op = store.Op(s)
			return ok
		case "recordId":
			return seen.first(3) && d.str(&e.RecordID)
		case "proposalId":
			return seen.first(4) && d.str(&e.ProposalID)
		case "actor":
			return seen.first(5) && d.actor(&e.Actor)
		case "reason":
			return seen.first(6) && d.str(&e.Reason)
		case "tier":
			var s string
			ok := seen.first(7) && d.str(&s)
			e.Tier = schema.Tier(s)
			return ok
		case "approver":
			return seen.first(8) && d.str(&e.Approver)
		case "evidence":
			if !seen.first(9) {
				return false
			}
			e.Evidence = &store.Evidence{}
			return d.evidence(e.Evidence)
		case "support":
			if !seen.first(10) {
				return false
			}
			e.Support = &schema.Support{}
			return d.support(e.Support)
		case "record":
			if !seen.first(11) {
				return false
			}
			e.Record = &schema.MemoryRecord{}
			return d.recordObject(e.Record)
		case "prevHash":
			return seen.first(12) && d.str(&e.PrevHash)
		case "hash":
			return seen.first(13) && d.str(&e.Hash)
		}
		// proposal, conflict, token and anything unknown.
		return false
	})
}

func (d *recordDecoder) actor(a *store.Actor) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "kind":
			var s string
			ok := seen.first(0) && d.str(&s)
			a.Kind = store.ActorKind(s)
			return ok
		case "name":
			return seen.first(1) && d.str(&a.Name)
		}
		return false
	})
}

// evidence reads an Evidence without an eval result (left to
// json.Unmarshal).
func (d *recordDecoder) evidence(ev *store.Evidence) bool {
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
				if !d.str(&s) {
					return false
				}
				ev.Conversations = append(ev.Conversations, s)
				return true
			})
		case "approvedBy":
			return seen.first(1) && d.str(&ev.ApprovedBy)
		case "proposalId":
			return seen.first(2) && d.str(&ev.ProposalID)
		case "note":
			return seen.first(3) && d.str(&ev.Note)
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
	return decodeDirect(data, p, (*recordDecoder).promotion)
}

func (d *recordDecoder) promotion(p *store.Promotion) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "recordId":
			return seen.first(0) && d.str(&p.RecordID)
		case "tier":
			var s string
			ok := seen.first(1) && d.str(&s)
			p.Tier = schema.Tier(s)
			return ok
		case "promotedAt":
			return seen.first(2) && d.str(&p.PromotedAt)
		case "actor":
			return seen.first(3) && d.actor(&p.Actor)
		case "approver":
			return seen.first(4) && d.str(&p.Approver)
		case "evidence":
			return seen.first(5) && d.evidence(&p.Evidence)
		}
		return false
	})
}
