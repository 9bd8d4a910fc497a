package lens

import (
	"context"
	"path/filepath"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// engineBackend is the lens's Backend over the engine's review verbs: it
// translates their typed results into the pages' shapes and nothing more.
type engineBackend struct{ v *engine.Verbs }

// EngineBackend is the Backend of a session: every read and action is one
// of v's verbs, as v's session's actor, confined to its view.
func EngineBackend(v *engine.Verbs) Backend { return engineBackend{v} }

func (b engineBackend) Actor() store.Actor { return b.v.S.Actor }

func (b engineBackend) Overview(ctx context.Context) (Overview, error) { return b.v.Overview(ctx) }

func (b engineBackend) Agent(ctx context.Context, name, at string, since time.Time) (AgentView, error) {
	p, err := b.v.Agent(ctx, name, at, since)
	v := AgentView{Name: name, File: p.File, Records: map[string]schema.MemoryRecord{}, Learnings: p.Learnings}
	if ws := b.v.S.Workspace; ws != nil && ws.Root != "" && p.File != "" {
		// Shown relative to the workspace, as the landing lists it.
		if rel, err := filepath.Rel(ws.Root, p.File); err == nil && filepath.IsLocal(rel) {
			v.File = rel
		}
	}
	if res := p.Composed; res != nil {
		v.At, v.Sections = res.At, res.Prompt.Sections
		for _, r := range res.Records {
			v.Records[r.ID] = r
		}
		for _, pr := range schema.Primitives {
			v.Sizes = append(v.Sizes, Size{Primitive: string(pr), Chars: res.Report.Totals.CharsPerPrimitive[string(pr)], Budget: p.Policy.Budgets.For(pr)})
		}
		v.Chars, v.Ceiling = res.Report.Totals.ComposedChars, res.Report.Totals.Ceiling
		totals := res.Report.Totals
		v.Totals = &totals
	}
	return v, err
}

func (b engineBackend) Timeline(ctx context.Context, name string, before uint64) (engine.TimelinePage, error) {
	return b.v.Timeline(ctx, name, before, engine.TimelinePageSize)
}

func (b engineBackend) Record(ctx context.Context, id string) (RecordView, error) {
	return b.v.Record(ctx, id)
}

func (b engineBackend) Garden(ctx context.Context, name string) (engine.HealthReport, error) {
	return b.v.Garden(ctx, name)
}

func (b engineBackend) Approve(ctx context.Context, id, content string) (engine.Outcome, error) {
	return b.v.Approve(ctx, id, content)
}

func (b engineBackend) Reject(ctx context.Context, id, reason string) (engine.Outcome, error) {
	return b.v.Reject(ctx, id, reason)
}

func (b engineBackend) Restore(ctx context.Context, id string) (engine.Outcome, error) {
	return b.v.Restore(ctx, id)
}

func (b engineBackend) Supersede(ctx context.Context, keepID, dropID string) (engine.Outcome, error) {
	return b.v.Supersede(ctx, keepID, dropID)
}

// SessionEvents is the live page's event stream of a session's store
// (StoreEvents): a read-only handle, woken by the session opener's Source
// (a watch of the store file's directory, or the database's notifications
// with polling), confined to the actor's view for an agent actor. close
// releases the handle.
func SessionEvents(ctx context.Context, v *engine.Verbs) (ev Events, close func(), err error) {
	s := v.S
	o := v.Options
	o.ReadOnly = true
	st, err := s.Open(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	var opts []events.Option
	if view := s.View; view.Confined() {
		opts = append(opts, events.Visible(func(scope map[string]string) bool {
			return view.Visible(&schema.MemoryRecord{Scope: scope})
		}))
	}
	poll, _ := schema.ParseStorePoll(s.Workspace.Config.StorePoll) // checked with the config
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return StoreEvents(st, s.Opener.Source(s.Location, poll), now, opts...), func() { st.Close() }, nil
}
