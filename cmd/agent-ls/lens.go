package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/lens"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

const lensUsage = `Serves the evolution lens for the workspace's store: the pending-review queue with each proposal's
composition diff (Approve, Reject with a reason), the conflicts panel (keep this one), and per agent the
composed prompt with learned lines attributed, sizes against budget and ceiling, the health report,
learnings and the ledger timeline, updated live. Prints the page's URL, with its access token, as the
first line and runs until interrupted (exit 0). Loopback only. Actions go through the same gates as the CLI, as
the workspace's actor; with an agent actor configured the lens is read-only.`

// runLens serves the evolution lens for the workspace's store until
// interrupted.
func runLens(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("lens", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs, storeFlags{lockTimeout: bolt.DefaultLockTimeout})
	addr := fs.String("addr", "127.0.0.1:0", "loopback `address` to serve on (port 0 picks a free one)")
	open := fs.Bool("open", false, "open the page in the default browser")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "lens", usage: "[--addr 127.0.0.1:0] [--open] [flags]", body: lensUsage}, fs)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "lens", err)
	}
	if len(pos) > 0 {
		return usageFail(e.stderr, "lens", fmt.Errorf("unexpected arguments %q", pos))
	}
	b, err := newLensBackend(e, sf)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	evs, closeEvents, err := b.events(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	defer closeEvents()
	srv, err := lens.New(lens.Options{Backend: b, Events: evs, ReadOnly: b.actor.Kind != store.ActorHuman, Now: e.now})
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	ln, err := lens.Listen(*addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	u := srv.URL(ln.Addr())
	fmt.Fprintln(e.stdout, u)
	if b.actor.Kind != store.ActorHuman {
		fmt.Fprintf(e.stderr, "agent-ls lens: read-only: the workspace's actor is %s (only a human decides)\n", b.actor)
	}
	if *open {
		if err := openBrowser(u); err != nil {
			fmt.Fprintf(e.stderr, "agent-ls lens: open a browser: %v (open the URL above)\n", err)
		}
	}
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// openBrowser hands url to the desktop's opener.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the opener's exit does not matter
	return nil
}

// lensBackend is the lens's adapter over the CLI's own commands: every
// read and action builds the same evoCmd/compCmd the CLI commands build
// (same workspace, store opening, actor confinement, engine and gates),
// for one request, and closes the store after it, so other processes can
// write between requests.
type lensBackend struct {
	e     *env
	sf    storeFlags
	loc   storeLocation
	actor store.Actor
	view  engine.View // what the actor sees (engine.ViewOf)
}

func newLensBackend(e *env, sf storeFlags) (*lensBackend, error) {
	if _, err := workspace.Find(e.cwd); err != nil {
		return nil, err
	}
	loc, err := locateStore(e, sf)
	if err != nil {
		return nil, err
	}
	a, err := resolveActor(e, "", loc)
	if err != nil {
		// No actor is no access: nothing falls back to a human.
		return nil, fmt.Errorf("workspace actor: %w", err)
	}
	return &lensBackend{e: e, sf: sf, loc: loc, actor: a, view: viewOf(a, loc)}, nil
}

// events is the live page's event stream (package events): a read-only
// handle of the store (bbolt opens the file per read, so it holds no lock
// between reads), woken by backend.Source (a watch of the store file's
// directory, or LISTEN/NOTIFY with a polling fallback on PostgreSQL), and
// the actor's view for an agent actor. close releases the handle.
func (b *lensBackend) events(ctx context.Context) (ev lens.Events, close func(), err error) {
	st, err := engine.OpenStore(ctx, b.e.opener(), b.loc.Path, store.Options{ReadOnly: true, LockTimeout: b.sf.lockTimeout, Now: b.e.now})
	if err != nil {
		return nil, nil, err
	}
	var opts []events.Option
	if view := b.view; view.Confined() {
		opts = append(opts, events.Visible(func(scope map[string]string) bool {
			return view.Visible(&schema.MemoryRecord{Scope: scope})
		}))
	}
	var poll time.Duration
	if b.loc.Workspace != nil {
		poll, _ = schema.ParseStorePoll(b.loc.Workspace.Config.StorePoll) // checked with the config
	}
	return lens.StoreEvents(st, backend.Source(b.loc.Path, poll), b.e.now, opts...), func() { st.Close() }, nil
}

func (b *lensBackend) Actor() store.Actor { return b.actor }

// evo is a fresh evoCmd for one request; its messages go to errs.
func (b *lensBackend) evo() (*evoCmd, *bytes.Buffer) {
	var errs bytes.Buffer
	e := *b.e
	e.stdout, e.stderr = io.Discard, &errs
	c := newEvoCmd(&e, "lens", "", "", true)
	c.store = b.sf
	c.actorFlag = b.actor.String()
	return c, &errs
}

// cmdError turns a command's exit code and message into an error.
func cmdError(code int, errs *bytes.Buffer) error {
	msg := strings.TrimSpace(errs.String())
	msg = strings.ReplaceAll(msg, "agent-ls lens: ", "")
	if msg == "" {
		msg = fmt.Sprintf("failed (exit %d)", code)
	}
	if code == exitFindings {
		return fmt.Errorf("%w: %s", store.ErrForbidden, msg)
	}
	return errors.New(msg)
}

// each runs fn for every agent of the actor's view, as the CLI's
// proposals, garden and learnings commands do.
func (b *lensBackend) each(ctx context.Context, fn func(c *evoCmd, name string, eng *engine.Agent) error) error {
	c, errs := b.evo()
	var ferr error
	code := c.eachAgent(ctx, func(name string, eng *engine.Agent) error {
		if err := fn(c, name, eng); err != nil {
			ferr = err
			return err
		}
		return nil
	})
	if ferr != nil {
		return ferr
	}
	if code != exitOK {
		return cmdError(code, errs)
	}
	return nil
}

// mayRead refuses an agent actor another agent's pages.
func (b *lensBackend) mayRead(name string) error {
	if b.view.Confined() && name != b.view.Agent && name != "" {
		return fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
	}
	return nil
}

func (b *lensBackend) Overview(ctx context.Context) (lens.Overview, error) {
	ov := lens.Overview{Agents: []string{}, Proposals: []lens.Proposal{}, Conflicts: []lens.Conflict{}}
	seen := map[string]bool{}
	pairs := map[[2]string]bool{}
	err := b.each(ctx, func(c *evoCmd, name string, eng *engine.Agent) error {
		ov.Agents = append(ov.Agents, name)
		items, err := c.pendingReviews(ctx, eng, seen)
		if err != nil {
			return err
		}
		for _, it := range items {
			ov.Proposals = append(ov.Proposals, lens.Proposal{Proposal: it.Proposal, Agent: name, Content: it.Content, Target: it.Target, Diff: it.Diff})
		}
		cs, err := eng.Conflicts(ctx)
		if err != nil {
			return err
		}
		for _, cf := range cs {
			other := cf.With + cf.Authored
			key := [2]string{min(cf.RecordID, other), max(cf.RecordID, other)}
			if pairs[key] {
				continue
			}
			pairs[key] = true
			side, err := b.side(ctx, c.st, cf.RecordID)
			if err != nil {
				return err
			}
			v := lens.Conflict{Agent: name, Why: cf.Why, Record: side, Authored: cf.Authored, Text: cf.Text}
			if cf.With != "" {
				o, err := b.side(ctx, c.st, cf.With)
				if err != nil {
					return err
				}
				v.Other = &o
			}
			ov.Conflicts = append(ov.Conflicts, v)
		}
		return nil
	})
	return ov, err
}

func (b *lensBackend) side(ctx context.Context, st store.Reader, id string) (lens.Side, error) {
	rec, err := st.Get(ctx, id)
	if err != nil {
		return lens.Side{}, err
	}
	_, perr := st.Promotion(ctx, id)
	if perr != nil && !errors.Is(perr, store.ErrNotFound) {
		return lens.Side{}, perr
	}
	return lens.Side{Record: rec, Promoted: perr == nil}, nil
}

func (b *lensBackend) Agent(ctx context.Context, name, at string, since time.Time) (lens.AgentView, error) {
	v := lens.AgentView{Name: name, Records: map[string]schema.MemoryRecord{}}
	if err := b.mayRead(name); err != nil {
		return v, err
	}
	if name != "" {
		if err := b.compose(ctx, &v, at); err != nil {
			return v, err
		}
	}
	err := b.each(ctx, func(_ *evoCmd, n string, eng *engine.Agent) error {
		if n != name {
			return nil
		}
		ls, err := eng.Learnings(ctx, since)
		v.Learnings = append(v.Learnings, ls...)
		return err
	})
	return v, err
}

// compose fills v with the agent's composition, as render and diff compose
// it (the agent file found in the workspace by name).
func (b *lensBackend) compose(ctx context.Context, v *lens.AgentView, at string) error {
	ws, err := workspace.Find(b.e.cwd)
	if err != nil {
		return err
	}
	file, err := ws.FindAgent(v.Name)
	if err != nil || file == "" {
		return nil // no agent file: nothing to compose (the page says so)
	}
	var errs bytes.Buffer
	e := *b.e
	e.stdout, e.stderr = io.Discard, &errs
	c := newCompCmd(&e, "lens", "", "", []string{"text"})
	c.store = b.sf
	c.actorFlag = b.actor.String()
	k, err := c.open(file, false)
	if err != nil {
		return err
	}
	defer k.st.Close()
	var res *engine.ComposeResult
	err = k.consistent(ctx, false, func() error {
		var err error
		res, err = k.instantiate(ctx, &e, at, false)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	v.File, v.At, v.Sections = file, res.At, res.Prompt.Sections
	for _, r := range res.Records {
		v.Records[r.ID] = r
	}
	for _, p := range schema.Primitives {
		v.Sizes = append(v.Sizes, lens.Size{Primitive: string(p), Chars: res.Report.Totals.CharsPerPrimitive[string(p)], Budget: k.policy.Budgets.For(p)})
	}
	v.Chars, v.Ceiling = res.Report.Totals.Chars, res.Report.Totals.Ceiling
	totals := res.Report.Totals
	v.Totals = &totals
	return nil
}

func (b *lensBackend) Timeline(ctx context.Context, name string) ([]store.LedgerEntry, error) {
	if err := b.mayRead(name); err != nil {
		return nil, err
	}
	c, errs := b.evo()
	if code, ok := c.open(); !ok {
		return nil, cmdError(code, errs)
	}
	defer c.close()
	if c.missing {
		return nil, nil
	}
	entries, err := c.st.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		return nil, err
	}
	// An agent's timeline is the ledger as that agent sees it (its records
	// and shared ones); the shared records' is the whole ledger in view.
	view := b.view
	if name != "" && !view.Confined() {
		view = engine.ViewOf(store.Actor{Kind: store.ActorAgent, Name: name}, b.loc.Workspace.Config.Scope)
	}
	return view.Ledger(ctx, c.st, entries)
}

func (b *lensBackend) Record(ctx context.Context, id string) (lens.RecordView, error) {
	c, errs := b.evo()
	if code, ok := c.open(); !ok {
		return lens.RecordView{}, cmdError(code, errs)
	}
	defer c.close()
	if c.missing {
		return lens.RecordView{}, fmt.Errorf("record %s: %w", id, store.ErrNotFound)
	}
	rec, err := b.view.Get(ctx, c.st, id)
	if err != nil {
		return lens.RecordView{}, err
	}
	v := lens.RecordView{Record: rec}
	if p, err := c.st.Promotion(ctx, id); err == nil {
		v.Promotion = &p
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	v.Ledger, err = c.st.Ledger(ctx, store.LedgerFilter{RecordID: id})
	return v, err
}

func (b *lensBackend) Garden(ctx context.Context, name string) (engine.HealthReport, error) {
	var h engine.HealthReport
	found := false
	err := b.each(ctx, func(_ *evoCmd, n string, eng *engine.Agent) error {
		if n != name {
			return nil
		}
		found = true
		var err error
		h, err = eng.Garden(ctx)
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
	}
	return h, err
}

// act opens the store for one action as the lens's actor.
func (b *lensBackend) act(ctx context.Context, fn func(c *evoCmd) (engine.Outcome, error)) (engine.Outcome, error) {
	c, errs := b.evo()
	if code, ok := c.open(); !ok {
		return engine.Outcome{}, cmdError(code, errs)
	}
	defer c.close()
	if c.missing {
		return engine.Outcome{}, fmt.Errorf("no memory store at %s: %w", c.loc.Path, store.ErrNotFound)
	}
	return fn(c)
}

func (b *lensBackend) Approve(ctx context.Context, id string) (engine.Outcome, error) {
	return b.act(ctx, func(c *evoCmd) (engine.Outcome, error) { return c.decide(ctx, id, b.actor, true, "") })
}

func (b *lensBackend) Reject(ctx context.Context, id, reason string) (engine.Outcome, error) {
	return b.act(ctx, func(c *evoCmd) (engine.Outcome, error) { return c.decide(ctx, id, b.actor, false, reason) })
}

// Supersede keeps keepID and retires dropID through the gates of the agent
// the records belong to (the one with an agent key, drop's first).
func (b *lensBackend) Supersede(ctx context.Context, keepID, dropID string) (engine.Outcome, error) {
	return b.act(ctx, func(c *evoCmd) (engine.Outcome, error) {
		id := dropID
		if rec, err := b.view.Get(ctx, c.st, dropID); err == nil && rec.Scope[store.AgentKey] == "" {
			id = keepID
		}
		eng, err := c.engineForRecordAs(ctx, id, b.actor)
		if err != nil {
			return engine.Outcome{}, err
		}
		return eng.Supersede(ctx, keepID, dropID, b.actor)
	})
}
