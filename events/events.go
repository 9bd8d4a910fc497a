// Package events is the typed stream of what a memory store learns: one
// Event per ledger entry (agent.memory.write, .corroborate, .promote, ...)
// and one agent.memory.overlay per recorded instantiate. Events carry ids,
// agent, tier, actor and time, never a record's content. Since reads the
// events after a time; Follow keeps delivering them as other processes
// write, woken by a pluggable change Source (fsnotify on the store's
// directory for a file store). docs/EVENTS.md is the schema.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Type names an event; it is "agent.memory." followed by the ledger op.
type Type string

// The event types. The first ten are the ADR's; the others mirror the
// remaining ledger ops so that every ledger entry has exactly one event.
const (
	Write       Type = "agent.memory.write"
	Corroborate Type = "agent.memory.corroborate"
	Promote     Type = "agent.memory.promote"
	Demote      Type = "agent.memory.demote"
	Propose     Type = "agent.memory.propose"
	Approve     Type = "agent.memory.approve"
	Reject      Type = "agent.memory.reject"
	Expire      Type = "agent.memory.expire"
	Conflict    Type = "agent.memory.conflict"
	Overlay     Type = "agent.memory.overlay"
	Supersede   Type = "agent.memory.supersede"
	Invalidate  Type = "agent.memory.invalidate"
	Delete      Type = "agent.memory.delete"
	Import      Type = "agent.memory.import"
	TokenCreate Type = "agent.memory.token-create"
	TokenRevoke Type = "agent.memory.token-revoke"
)

// TypeOf returns the event type of a ledger op.
func TypeOf(op store.Op) Type { return Type("agent.memory." + string(op)) }

// Event is one typed event. Ledger events have Seq > 0 and are ordered by
// it; overlay events have Seq 0 and are placed by At.
type Event struct {
	Type Type   `json:"type"`
	Seq  uint64 `json:"seq,omitempty"`
	At   string `json:"at"`
	// RecordID is the record the entry is about (for supersede, the
	// record superseded); NewRecordID is the record a supersede created.
	RecordID    string `json:"recordId,omitempty"`
	NewRecordID string `json:"newRecordId,omitempty"`
	// RecordIDs: a conflict's records (the one rendered first), an
	// overlay's composed records.
	RecordIDs []string `json:"recordIds,omitempty"`
	// CandidateIDs: the candidates an overlay's recall slice showed.
	CandidateIDs []string    `json:"candidateIds,omitempty"`
	ProposalID   string      `json:"proposalId,omitempty"`
	ProposalKind string      `json:"proposalKind,omitempty"`
	Agent        string      `json:"agent,omitempty"`
	Target       string      `json:"target,omitempty"`
	Tier         schema.Tier `json:"tier,omitempty"`
	Actor        string      `json:"actor,omitempty"`
	// TokenID is the service token of a token-create or token-revoke
	// (never its secret or hash).
	TokenID string `json:"tokenId,omitempty"`
	// ConversationID is the supporting conversation of a corroborate.
	ConversationID string `json:"conversationId,omitempty"`
	// The instantiate summary (agent.memory.overlay only, where every one of
	// them is always present, zeros included; nil on other events): records
	// composed, conflicts, records spilled to recall, and the UTF-8 bytes of
	// learned text per primitive (ADR-0008), every primitive listed.
	RecordCount       *int           `json:"recordCount,omitempty"`
	Conflicts         *int           `json:"conflicts,omitempty"`
	Spilled           *int           `json:"spilled,omitempty"`
	BytesPerPrimitive map[string]int `json:"bytesPerPrimitive,omitempty"`
}

// JSON returns the event's one-line JSON encoding (no trailing newline).
func (e Event) JSON() []byte {
	b, err := json.Marshal(e)
	if err != nil {
		// Only strings, ints and maps of them: cannot fail.
		return []byte(`{}`)
	}
	return b
}

// recordInfo is what an event needs to know of a record.
type recordInfo struct {
	known  bool
	scope  map[string]string
	agent  string
	target *schema.MemoryTarget
}

// Option adjusts what Since and Follow deliver.
type Option func(*options)

type options struct {
	visible func(scope map[string]string) bool
	after   uint64
}

// Visible keeps only the events whose record (or overlay) scope passes
// keep, e.g. an agent's view (trust.View). An event whose record is gone
// (deleted) is then dropped: its scope is unknown.
func Visible(keep func(scope map[string]string) bool) Option {
	return func(o *options) { o.visible = keep }
}

// After starts the stream past ledger entry seq: the entries up to it are
// neither delivered nor read (a follower that starts now passes the
// ledger's newest sequence, Head).
func After(seq uint64) Option {
	return func(o *options) { o.after = seq }
}

// Head is the sequence of the newest ledger entry of s (0 for none), read
// without reading the entries before it.
func Head(ctx context.Context, s store.Reader) (uint64, error) {
	es, err := s.Ledger(ctx, store.LedgerFilter{Limit: 1})
	if err != nil {
		return 0, fmt.Errorf("read the ledger's head: %w", err)
	}
	if len(es) == 0 {
		return 0, nil
	}
	return es[len(es)-1].Seq, nil
}

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Reader turns ledger entries and overlay summaries of one store into
// events. It remembers each record's agent and target, so events of a
// record (corroborate, promote, ...) are filled without re-reading it.
// A Reader is not safe for concurrent use.
type Reader struct {
	s       store.Reader
	records map[string]recordInfo
}

// NewReader returns a Reader of s.
func NewReader(s store.Reader) *Reader {
	return &Reader{s: s, records: map[string]recordInfo{}}
}

func info(r *schema.MemoryRecord) recordInfo {
	return recordInfo{known: true, scope: r.Scope, agent: r.Scope[store.AgentKey], target: r.Target}
}

// lookup returns what is known of record id, reading it from the store on a
// miss (a deleted record is unknown: an empty info).
func (r *Reader) lookup(ctx context.Context, id string) (recordInfo, error) {
	if id == "" {
		return recordInfo{}, nil
	}
	if ri, ok := r.records[id]; ok {
		return ri, nil
	}
	rec, err := r.s.Get(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.records[id] = recordInfo{}
		return recordInfo{}, nil
	case err != nil:
		return recordInfo{}, fmt.Errorf("event of record %s: %w", id, err)
	}
	ri := info(&rec)
	r.records[id] = ri
	return ri, nil
}

// FromEntry returns the event of one ledger entry.
func (r *Reader) FromEntry(ctx context.Context, e store.LedgerEntry) (Event, error) {
	ev, _, err := r.fromEntry(ctx, e)
	return ev, err
}

func (r *Reader) fromEntry(ctx context.Context, e store.LedgerEntry) (Event, recordInfo, error) {
	ev := Event{Type: TypeOf(e.Op), Seq: e.Seq, At: e.At, RecordID: e.RecordID, ProposalID: e.ProposalID,
		Tier: e.Tier, Actor: e.Actor.String()}
	if e.Actor == (store.Actor{}) {
		ev.Actor = ""
	}
	var ri recordInfo
	if e.Record != nil {
		ri = info(e.Record)
		r.records[e.Record.ID] = ri
		if e.RecordID == "" {
			ev.RecordID = e.Record.ID
		} else if e.Record.ID != e.RecordID {
			ev.NewRecordID = e.Record.ID
		}
	} else {
		var err error
		if ri, err = r.lookup(ctx, e.RecordID); err != nil {
			return Event{}, ri, err
		}
	}
	if e.Proposal != nil {
		ev.ProposalKind = string(e.Proposal.Kind)
		if ev.Tier == "" {
			ev.Tier = e.Proposal.Tier
		}
	}
	if e.Support != nil {
		ev.ConversationID = e.Support.ConversationID
	}
	if e.Conflict != nil {
		ev.RecordIDs = append([]string(nil), e.Conflict.Records...)
		ev.Target = e.Conflict.Target
	}
	ev.Agent = ri.agent
	if e.Token != nil {
		ev.TokenID, ev.Agent = e.Token.ID, e.Token.Agent
	}
	if ri.target != nil {
		if ev.Target == "" {
			ev.Target = ri.target.String()
		}
		if ev.Tier == "" {
			ev.Tier = schema.TierOf(*ri.target)
		}
	}
	return ev, ri, nil
}

// FromSummary returns the overlay event of an instantiate summary.
//
// A summary stored before bytes were kept (it has characters per
// primitive only) reports its characters as bytes: equal for ASCII text.
func FromSummary(s store.OverlaySummary) Event {
	sizes := s.BytesPerPrimitive
	if sizes == nil {
		sizes = s.CharsPerPrimitive
	}
	bytes := make(map[string]int, len(schema.Primitives))
	for _, p := range schema.Primitives {
		bytes[string(p)] = sizes[string(p)]
	}
	n, c, sp := s.RecordCount, s.Conflicts, s.Spilled
	return Event{Type: Overlay, At: s.At, Agent: s.Agent, RecordIDs: s.RecordIDs, CandidateIDs: s.CandidateIDs,
		RecordCount: &n, Conflicts: &c, Spilled: &sp, BytesPerPrimitive: bytes}
}

// Since returns the events at or after since (a schema time string; ""
// is all), oldest first: ledger events in sequence order, each overlay
// event after the ledger events of its time.
func Since(ctx context.Context, s store.Reader, since string, opts ...Option) ([]Event, error) {
	return newCursor(s, opts).next(ctx, since)
}

// newCursor is a cursor over s from the start opts give.
func newCursor(s store.Reader, opts []Option) *cursor {
	o := collect(opts)
	return &cursor{r: NewReader(s), o: o, lastSeq: o.after}
}

// cursor reads what is new since its last read: each read of the ledger
// starts past the last entry it read (LedgerFilter.After).
type cursor struct {
	r       *Reader
	o       options
	lastSeq uint64
	// lastAt is the newest overlay time delivered; seenAt the summaries
	// delivered with that time (summaries have no sequence of their own).
	lastAt string
	seenAt map[string]bool
}

func summaryKey(s store.OverlaySummary) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// next returns the events not yet delivered whose time is at or after
// since, oldest first.
func (c *cursor) next(ctx context.Context, since string) ([]Event, error) {
	f := store.LedgerFilter{Since: since, After: c.lastSeq}
	entries, err := c.r.s.Ledger(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	var out []Event
	for _, e := range entries {
		if e.Seq <= c.lastSeq {
			continue
		}
		ev, ri, err := c.r.fromEntry(ctx, e)
		if err != nil {
			return nil, err
		}
		c.lastSeq = e.Seq
		if c.o.visible != nil && (!ri.known || !c.o.visible(ri.scope)) {
			continue
		}
		out = append(out, ev)
	}
	sums, err := c.r.s.OverlaySummaries(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	var overlays []Event
	newest, newSeen := c.lastAt, c.seenAt
	// Newest first: collect the summaries after the cursor.
	for _, sum := range sums {
		if sum.At < since || sum.At < c.lastAt {
			continue
		}
		k := summaryKey(sum)
		if sum.At == c.lastAt && c.seenAt[k] {
			continue
		}
		if sum.At > newest {
			newest, newSeen = sum.At, map[string]bool{}
		}
		if sum.At == newest {
			if newSeen == nil {
				newSeen = map[string]bool{}
			}
			newSeen[k] = true
		}
		if c.o.visible != nil {
			scope := maps.Clone(sum.Scope)
			if scope == nil {
				scope = map[string]string{}
			}
			if sum.Agent != "" {
				scope[store.AgentKey] = sum.Agent
			}
			if !c.o.visible(scope) {
				continue
			}
		}
		overlays = append(overlays, FromSummary(sum))
	}
	c.lastAt, c.seenAt = newest, newSeen
	if len(overlays) == 0 {
		return out, nil
	}
	// Oldest first; then merge by time, ledger events first on equal times.
	for i, j := 0, len(overlays)-1; i < j; i, j = i+1, j-1 {
		overlays[i], overlays[j] = overlays[j], overlays[i]
	}
	merged := make([]Event, 0, len(out)+len(overlays))
	for len(out) > 0 || len(overlays) > 0 {
		if len(overlays) == 0 || (len(out) > 0 && out[0].At <= overlays[0].At) {
			merged, out = append(merged, out[0]), out[1:]
		} else {
			merged, overlays = append(merged, overlays[0]), overlays[1:]
		}
	}
	return merged, nil
}
