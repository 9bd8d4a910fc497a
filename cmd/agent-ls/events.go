package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store/backend"
)

// memEvents prints the typed event stream (package events): the events
// since --since (all without it), or, with --follow, each new one as other
// processes write from now on, after the history since --since when given.
func memEvents(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var since, actor, poll string
	var follow bool
	fs.StringVar(&since, "since", "", "only events since a `time`: a duration back from now (7d, 36h) or an RFC 3339 time")
	fs.BoolVar(&follow, "follow", false, "print events as they happen from now on (until interrupted); with --since, the history since then first")
	fs.StringVar(&poll, "poll", "", "with --follow on a PostgreSQL store, also read its change counter every `interval` besides LISTEN (at least 100ms, or off; default the workspace's storePoll, else 1s)")
	fs.StringVar(&actor, "actor", "", readActorUsage)
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return m.usagef("unexpected arguments %q", pos)
	}
	if since != "" {
		t, err := schema.ParseSince(since, m.e.now())
		if err != nil {
			m.errorf("%v", schema.Named("--since", err))
			return exitUsage
		}
		since = schema.FormatTime(t)
	} else if follow {
		// Following starts at now, as tail -f and the lens do: replaying a
		// store's whole history first buries the live events.
		since = schema.FormatTime(m.e.now())
	}
	if poll != "" && !follow {
		return m.usagef("--poll goes with --follow")
	}
	pollEvery, err := schema.ParseStorePoll(poll)
	if err != nil {
		m.errorf("%v", schema.Named("--poll", err))
		return exitUsage
	}
	s, loc, code, ok := m.open(true)
	if !ok {
		return code
	}
	defer s.Close()
	if poll == "" && loc.Workspace != nil {
		pollEvery, _ = schema.ParseStorePoll(loc.Workspace.Config.StorePoll) // checked with the config
	}
	a, ok := m.actor(actor, loc)
	if !ok {
		return exitUsage
	}
	var opts []events.Option
	if view := viewOf(a, loc); view.Confined() {
		opts = append(opts, events.Visible(func(scope map[string]string) bool {
			return view.Visible(&schema.MemoryRecord{Scope: scope})
		}))
	}
	emit := func(ev events.Event) error { return writeEvent(m.e.stdout, m.format, ev) }
	if !follow {
		evs, err := events.Since(ctx, s, since, opts...)
		if err != nil {
			return m.storeError(err)
		}
		for _, ev := range evs {
			if err := emit(ev); err != nil {
				m.errorf("write output: %v", err)
				return exitUsage
			}
		}
		return exitOK
	}
	if err := events.Follow(ctx, s, backend.Source(loc.Path, pollEvery), since, emit, opts...); err != nil {
		return m.storeError(err)
	}
	return exitOK
}

// writeEvent prints one event: a JSON line, or a text line of its fields
// (all but bytesPerPrimitive).
func writeEvent(w io.Writer, format string, ev events.Event) error {
	if format == "json" {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-27s", ev.At, ev.Type)
	seq := ""
	if ev.Seq > 0 {
		seq = strconv.FormatUint(ev.Seq, 10)
	}
	for _, f := range []struct{ k, v string }{
		{"seq", seq}, {"record", ev.RecordID}, {"new", ev.NewRecordID}, {"records", strings.Join(ev.RecordIDs, ",")},
		{"candidates", strings.Join(ev.CandidateIDs, ",")}, {"proposal", ev.ProposalID}, {"kind", ev.ProposalKind},
		{"token", ev.TokenID}, {"agent", ev.Agent}, {"target", ev.Target}, {"tier", string(ev.Tier)},
		{"actor", ev.Actor}, {"conversation", ev.ConversationID},
	} {
		if f.v != "" {
			fmt.Fprintf(&b, "  %s=%s", f.k, f.v)
		}
	}
	if ev.Type == events.Overlay {
		fmt.Fprintf(&b, "  recordCount=%d conflicts=%d spilled=%d", deref(ev.RecordCount), deref(ev.Conflicts), deref(ev.Spilled))
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}

// deref is *p, or 0 for nil.
func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
