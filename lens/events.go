package lens

import (
	"context"
	"time"

	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Events is where the live page learns of changes: the store's typed event
// stream (package events).
type Events interface {
	// Follow calls fn for every event after it starts, in order, until ctx
	// ends; it returns nil then, or the error that stopped it.
	Follow(ctx context.Context, fn func(events.Event)) error
}

// StoreEvents follows st from the moment Follow starts: events.Follow,
// woken by src (events.FileSource for a bbolt file), filtered by opts (an
// agent actor's view: events.Visible). A write that appends no ledger entry
// is no event.
func StoreEvents(st store.Reader, src events.Source, now func() time.Time, opts ...events.Option) Events {
	if now == nil {
		now = time.Now
	}
	return &storeEvents{st: st, src: src, now: now, opts: opts}
}

type storeEvents struct {
	st   store.Reader
	src  events.Source
	now  func() time.Time
	opts []events.Option

	// Where the stream is: set by the first Follow, moved by each event, so
	// a Follow started again (after its source failed) misses nothing and
	// repeats nothing.
	since   string
	lastSeq uint64
}

// Follow is not for concurrent use: the lens runs one follower. The first
// starts at the ledger's newest entry (events.Head), so it reads none of
// the ledger before it, however long.
func (s *storeEvents) Follow(ctx context.Context, fn func(events.Event)) error {
	if s.since == "" {
		head, err := events.Head(ctx, s.st)
		if err != nil {
			return err
		}
		s.since, s.lastSeq = schema.FormatTime(s.now()), head
	}
	opts := append([]events.Option{events.After(s.lastSeq)}, s.opts...)
	return events.Follow(ctx, s.st, s.src, s.since, func(ev events.Event) error {
		if ev.Seq > 0 {
			if ev.Seq <= s.lastSeq {
				return nil
			}
			s.lastSeq, s.since = ev.Seq, ev.At
		}
		fn(ev)
		return nil
	}, opts...)
}
