package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

// evoCmd carries what the evolution commands (promote, demote, proposals,
// approve, reject, garden, learnings) share: flags, the workspace, the
// store, and how to build an engine.Agent for one agent.
type evoCmd struct {
	e         *env
	name      string
	usageLine string
	summary   string
	fs        *flag.FlagSet
	store     storeFlags
	format    string
	scopeFlag string
	agentFile string
	actorFlag string

	ws  *workspace.Workspace
	st  store.Store
	loc storeLocation
	// authored is the agent file's config, read by open (nil: no file).
	authored *schema.AgentConfig
	// missing: there is no store file yet (nothing saved).
	missing bool
	// reads: a report (garden, learnings, proposals) that says so on stderr
	// when there is no store.
	reads bool
	// snapshot: eachAgent runs its reports on one View of the store (a
	// report that writes nothing: learnings, proposals after expiring).
	snapshot bool
	// beforeSnapshot, when set, runs before the snapshot is taken (a
	// write the report's reads must see).
	beforeSnapshot func(ctx context.Context) error
	// tx is that View while it runs; db() is what the engines read.
	tx store.Tx
}

// db is the store the command's engines and reads use: the snapshot of
// eachAgent while it runs, else the opened store.
func (c *evoCmd) db() store.Tx {
	if c.tx != nil {
		return c.tx
	}
	return c.st
}

// noStore reports a missing store for commands that need a record.
func (c *evoCmd) noStore() int {
	c.errorf("no memory store at %s (nothing has been saved yet)", c.loc.Path)
	return exitFindings
}

func newEvoCmd(e *env, name, usageLine, summary string, mutating bool) *evoCmd {
	c := &evoCmd{e: e, name: name, usageLine: usageLine, summary: summary}
	fs := flag.NewFlagSet("agent-ls "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	c.store.register(fs, storeFlags{lockTimeout: bolt.DefaultLockTimeout})
	fs.StringVar(&c.format, "format", "text", "output `format`: text or json")
	fs.StringVar(&c.scopeFlag, "scope", "", "base scope: "+scopeUsage+"; agent=NAME selects the agent")
	fs.StringVar(&c.agentFile, "agent", "", "the agent `file`, the same as the AGENT_FILE argument (default: found in the workspace by the record's or scope's agent name)")
	if mutating {
		fs.StringVar(&c.actorFlag, "actor", "", "who acts, `kind:name` (default: the workspace actor or human:$USER); agents pass agent:NAME")
	} else {
		fs.StringVar(&c.actorFlag, "actor", "", "who reads, `kind:name` (default: the workspace actor or human:$USER); agent:NAME sees only its own agent")
	}
	fs.Usage = func() {}
	c.fs = fs
	return c
}

func (c *evoCmd) errorf(format string, args ...any) {
	fmt.Fprintf(c.e.stderr, "agent-ls %s: %s\n", c.name, fmt.Sprintf(format, args...))
}

// fail reports err on one line and maps it to an exit code: refusals and
// unknown ids are exitFindings, store and I/O failures exitUsage.
func (c *evoCmd) fail(err error) int {
	c.errorf("%v", err)
	if errors.Is(err, engine.ErrRefused) {
		return exitFindings
	}
	return storeExitCode(err)
}

// parse parses flags (they may follow positional arguments); ok false means
// return code.
func (c *evoCmd) parse(args []string, npos int) (pos []string, code int, ok bool) {
	pos, err := parseArgs(c.fs, args)
	if errors.Is(err, errHelp) {
		printHelp(c.e.stdout, help{path: c.name, usage: c.usageLine, body: c.summary}, c.fs)
		return nil, exitOK, false
	}
	if err != nil {
		return nil, usageFail(c.e.stderr, c.name, err), false
	}
	if c.format != "text" && c.format != "json" {
		return nil, usageFail(c.e.stderr, c.name, fmt.Errorf("--format %q: want text or json", c.format)), false
	}
	// The agent file is a positional argument (*.agent.yaml, *.agent.yml,
	// *.agent.json) like render's; --agent FILE is the same.
	ids := pos[:0:0]
	for _, p := range pos {
		if !schema.IsAgentFile(p) {
			ids = append(ids, p)
			continue
		}
		if c.agentFile != "" && c.agentFile != p {
			return nil, usageFail(c.e.stderr, c.name, fmt.Errorf("two agent files, %s and %s: give one", c.agentFile, p)), false
		}
		c.agentFile = p
	}
	pos = ids
	if len(pos) != npos {
		if npos == 0 {
			return nil, usageFail(c.e.stderr, c.name, fmt.Errorf("unexpected arguments %q", pos)), false
		}
		return nil, usageFail(c.e.stderr, c.name, fmt.Errorf("want %s", c.usageLine)), false
	}
	return pos, 0, true
}

// open finds the workspace and opens the store.
func (c *evoCmd) open() (int, bool) {
	// One rule with render: given an agent file, its workspace (and store)
	// is found from the file, else from the working directory.
	start := c.e.cwd
	if c.agentFile != "" {
		start = resolve(c.e.cwd, c.agentFile)
		// The file is read first, as render reads it: an invalid one fails
		// the command whether or not a store exists yet.
		cfg, err := loadAgent(start)
		if err != nil {
			c.errorf("%v", err)
			return exitUsage, false
		}
		c.authored = cfg
	}
	ws, err := workspace.Find(start)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage, false
	}
	c.ws = ws
	if c.store.path == "" && c.agentFile != "" {
		c.store.path = ws.StorePath
	}
	loc, err := locateStore(c.e, c.store)
	if err != nil {
		return c.fail(err), false
	}
	if _, err := os.Stat(loc.Path); errors.Is(err, os.ErrNotExist) && !backend.IsURL(loc.Path) {
		// Never create a store as a side effect of a query or a gate.
		c.loc, c.missing = loc, true
		if c.reads {
			noteNoStore(c.e, c.name, loc.Path, "nothing saved yet")
		}
		return 0, true
	}
	st, loc, err := openStore(c.e, c.store, false)
	if err != nil {
		return c.fail(err), false
	}
	c.st, c.loc = st, loc
	return 0, true
}

// eachAgent opens the store and calls fn with an engine for every agent of
// the base scope (none when there is no store yet). It returns the exit code
// of the first failure, or exitOK; the store is closed when it returns.
func (c *evoCmd) eachAgent(ctx context.Context, fn func(name string, eng *engine.Agent) error) int {
	c.reads = true
	if code, ok := c.open(); !ok {
		return code
	}
	defer c.close()
	base, err := c.baseScope()
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	a, ok := c.actor()
	if !ok {
		return exitUsage
	}
	view := viewOf(a, c.loc)
	if err := view.ForeignAgent(base[store.AgentKey]); err != nil {
		return c.fail(err)
	}
	var names []string
	if !c.missing {
		if names, err = c.agentNames(ctx, base); err != nil {
			return c.fail(err)
		}
	}
	if view.Confined() && !c.missing {
		// An agent reports on its own view only (its records and shared ones).
		if c.agentFile != "" && (len(names) != 1 || names[0] != view.Agent) {
			return c.fail(view.ForeignAgent(names[0]))
		}
		names = []string{view.Agent}
	}
	delete(base, store.AgentKey)
	run := func() error {
		for _, name := range names {
			eng, err := c.engine(name, base)
			if err != nil {
				return err
			}
			if err := fn(name, eng); err != nil {
				return err
			}
		}
		return nil
	}
	if c.snapshot && !c.missing {
		// Every read of the report on one snapshot: on a shared store a
		// commit by another process between two reads (a proposal, then
		// the composition its preview renders) would make them disagree.
		if c.beforeSnapshot != nil {
			if err := c.beforeSnapshot(ctx); err != nil {
				return c.fail(err)
			}
		}
		err = c.st.View(ctx, func(r store.Reader) error {
			c.tx = store.ReadOnly(r)
			defer func() { c.tx = nil }()
			return run()
		})
	} else {
		err = run()
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

func (c *evoCmd) close() {
	if c.st != nil {
		c.st.Close()
	}
}

func (c *evoCmd) actor() (store.Actor, bool) {
	a, err := resolveActor(c.e, c.actorFlag, c.loc)
	if err != nil {
		c.errorf("%v", err)
		return store.Actor{}, false
	}
	return a, true
}

// baseScope is the workspace scope plus --scope (withScopeFlag, the one
// scope rule).
func (c *evoCmd) baseScope() (map[string]string, error) {
	s, err := withScopeFlag(c.ws.Config.Scope, c.scopeFlag)
	if s == nil && err == nil {
		s = map[string]string{}
	}
	return s, err
}

// loadAgent reads an agent file; problems make it unusable, and a file
// resolving outside its workspace root is not read.
func loadAgent(path string) (*schema.AgentConfig, error) {
	if err := workspace.ConfineFile(path); err != nil {
		return nil, err
	}
	data, err := workspace.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("agent file: %w", err)
	}
	// The engine's rule and wording for an invalid file (file:line:col of
	// the first error, how many more), as render and mcp report it.
	return engine.LoadAgent(path, data)
}

// agentConfig returns the authored config for an agent name: --agent when
// given, else the workspace's agent file of that name, else nil (the
// engine then skips authored checks).
func (c *evoCmd) agentConfig(name string) (*schema.AgentConfig, error) {
	if c.authored != nil {
		return c.authored, nil
	}
	if c.agentFile != "" {
		p := c.agentFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.e.cwd, p)
		}
		return loadAgent(p)
	}
	if name == "" {
		return nil, nil
	}
	path, err := c.ws.FindAgent(name)
	if err != nil || path == "" {
		return nil, nil
	}
	return loadAgent(path)
}

// engine builds the engine for agent name over base scope.
func (c *evoCmd) engine(name string, base map[string]string) (*engine.Agent, error) {
	cfg, err := c.agentConfig(name)
	if err != nil {
		return nil, err
	}
	return engine.NewAgent(engine.AgentSpec{Store: c.db(), Workspace: c.ws, Agent: cfg, Name: name, Scope: base, Now: c.e.now, Evaluator: engine.EvaluatorFor(c.ws)}), nil
}

// engineForRecord builds the engine of the agent a record belongs to: the
// scope's agent (from --scope or --agent), else the record's own agent key.
// The base scope is --scope, else the workspace scope when the record lies
// in it, else the record's scope without its agent key.
func (c *evoCmd) engineForRecord(ctx context.Context, id string) (*engine.Agent, error) {
	rec, err := c.st.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, engine.NotFound(id)
	}
	if err != nil {
		return nil, err // the store names the record
	}
	base, err := c.baseScope()
	if err != nil {
		return nil, err
	}
	name := base[store.AgentKey]
	if name == "" {
		name = rec.Scope[store.AgentKey]
	}
	delete(base, store.AgentKey)
	if c.scopeFlag == "" && !store.MatchScope(rec.Scope, base) {
		base = maps.Clone(rec.Scope)
		delete(base, store.AgentKey)
	}
	return c.engine(name, base)
}

// engineForRecordAs is engineForRecord for actor a: an agent actor gets
// its own agent's engine, so another agent's record is not found, and a
// --scope or --agent naming another agent is refused.
func (c *evoCmd) engineForRecordAs(ctx context.Context, id string, a store.Actor) (*engine.Agent, error) {
	view := viewOf(a, c.loc)
	if !view.Confined() {
		return c.engineForRecord(ctx, id)
	}
	rec, err := view.Get(ctx, c.st, id)
	if err != nil {
		return nil, err
	}
	base, err := c.baseScope()
	if err != nil {
		return nil, err
	}
	if err := view.ForeignAgent(base[store.AgentKey]); err != nil {
		return nil, err
	}
	delete(base, store.AgentKey)
	if c.scopeFlag == "" && !store.MatchScope(rec.Scope, base) {
		base = maps.Clone(rec.Scope)
		delete(base, store.AgentKey)
	}
	eng, err := c.engine(view.Agent, base)
	if err != nil {
		return nil, err
	}
	if eng.AgentName() != view.Agent {
		return nil, view.ForeignAgent(eng.AgentName())
	}
	return eng, nil
}

// agentNames lists the agents to report on: the one named by --agent or
// --scope, else every agent key present in the store's records of the base
// scope (sorted), plus "" for shared records.
func (c *evoCmd) agentNames(ctx context.Context, base map[string]string) ([]string, error) {
	if c.agentFile != "" {
		cfg, err := c.agentConfig("")
		if err != nil {
			return nil, err
		}
		return []string{cfg.RoleTemplate.Name}, nil
	}
	if n := base[store.AgentKey]; n != "" {
		return []string{n}, nil
	}
	return engine.StoreAgents(ctx, c.st, base)
}

func (c *evoCmd) writeJSON(v any) int {
	enc := json.NewEncoder(c.e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		c.errorf("write output: %v", err)
		return exitUsage
	}
	return exitOK
}

// outcomeCode maps an outcome to an exit code: promoted, pending, demoted,
// invalidated, approved and rejected succeed; blocked and refused are 1.
func outcomeCode(o engine.Outcome) int {
	switch o.Status {
	case engine.StatusBlocked, engine.StatusRefused:
		return exitFindings
	}
	return exitOK
}

// report prints an outcome (text or JSON) and returns its exit code. A
// refusal (err wrapping ErrRefused) is one line on stderr.
func (c *evoCmd) report(o engine.Outcome, err error) int {
	if err != nil && !errors.Is(err, engine.ErrRefused) {
		return c.fail(err)
	}
	if c.format == "json" {
		if code := c.writeJSON(o); code != exitOK {
			return code
		}
		if err != nil {
			c.errorf("refused: %s", o.Reason)
			return exitFindings
		}
		return outcomeCode(o)
	}
	if err != nil {
		c.errorf("refused: %s", o.Reason)
		return exitFindings
	}
	subject := o.RecordID
	if subject == "" {
		subject = o.ProposalID
	}
	line := fmt.Sprintf("%s %s", o.Status, subject)
	if o.Tier != "" {
		line += fmt.Sprintf(" (%s tier)", o.Tier)
	}
	if o.Reason != "" {
		line += ": " + o.Reason
	}
	fmt.Fprintln(c.e.stdout, line)
	if o.ProposalID != "" && o.Status == engine.StatusPending {
		fmt.Fprintf(c.e.stdout, "proposal %s (review with 'agent-ls proposals', decide with 'agent-ls approve|reject %s')\n", o.ProposalID, o.ProposalID)
	}
	for _, cf := range o.Conflicts {
		with := cf.With
		if with == "" {
			with = "authored " + cf.Authored
		}
		fmt.Fprintf(c.e.stdout, "  conflict with %s: %q (%s)\n", with, cf.Text, cf.Why)
	}
	if o.Evidence.Eval != nil {
		ev := o.Evidence.Eval
		fmt.Fprintf(c.e.stdout, "  eval: score %g → %g, passed %d → %d\n", ev.BaseScore, ev.CandidateScore, ev.BasePassed, ev.Passed)
	}
	if o.Diff != "" {
		fmt.Fprint(c.e.stdout, indent("  ", o.Diff))
	}
	return outcomeCode(o)
}

func runPromote(ctx context.Context, e *env, args []string) int {
	c := newEvoCmd(e, "promote", "ID [AGENT_FILE] [flags]",
		"Promote a candidate memory through its tier's gate: auto promotes; earned needs recurrence, an eval pass or\na human; guarded opens a proposal for an agent and is the approval for a human; locked never promotes.\nExit 0 promoted or pending, 1 blocked or refused, 2 usage or store error.", true)
	pos, code, ok := c.parse(args, 1)
	if !ok {
		return code
	}
	if code, ok := c.open(); !ok {
		return code
	}
	defer c.close()
	a, ok := c.actor()
	if !ok {
		return exitUsage
	}
	if err := schema.CheckIDArg("ID", pos[0]); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if c.missing {
		return c.noStore()
	}
	eng, err := c.engineForRecordAs(ctx, pos[0], a)
	if err != nil {
		return c.fail(err)
	}
	return c.report(eng.Promote(ctx, pos[0], a))
}

func runDemote(ctx context.Context, e *env, args []string) int {
	c := newEvoCmd(e, "demote", "ID [AGENT_FILE] --reason TEXT [flags]",
		"Demote a promoted memory (it stays valid and returns to recall). The bar to remove equals the bar that added:\nan agent's demotion of an earned or guarded record opens a proposal for a human instead.\nExit 0 demoted or pending, 1 refused, 2 usage or store error.", true)
	var reason string
	c.fs.StringVar(&reason, "reason", "", "why (required)")
	pos, code, ok := c.parse(args, 1)
	if !ok {
		return code
	}
	if strings.TrimSpace(reason) == "" {
		c.errorf("--reason is required")
		return exitUsage
	}
	if code, ok := c.open(); !ok {
		return code
	}
	defer c.close()
	a, ok := c.actor()
	if !ok {
		return exitUsage
	}
	if err := schema.CheckIDArg("ID", pos[0]); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if c.missing {
		return c.noStore()
	}
	eng, err := c.engineForRecordAs(ctx, pos[0], a)
	if err != nil {
		return c.fail(err)
	}
	return c.report(eng.Demote(ctx, pos[0], reason, a))
}

// newEngine builds the evolve engine other commands (memory save,
// memory invalidate) route through: scope's agent key names the agent, whose
// file is agentFile or found in the workspace of e.cwd; the rest of scope is
// the base scope.
func newEngine(e *env, st store.Store, scope map[string]string, agentFile string) (*engine.Agent, error) {
	ws, err := workspace.Find(e.cwd)
	if err != nil {
		return nil, err
	}
	c := &evoCmd{e: e, ws: ws, st: st, agentFile: agentFile}
	base := maps.Clone(scope)
	name := base[store.AgentKey]
	delete(base, store.AgentKey)
	return c.engine(name, base)
}

// indent prefixes every line of s.
func indent(prefix, s string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}
