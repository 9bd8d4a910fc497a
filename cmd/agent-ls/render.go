package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

// compCmd is what render, overlay and diff share: an agent file composed
// with the memories of its workspace's store.
type compCmd struct {
	e         *env
	name      string
	usageLine string
	summary   string
	fs        *flag.FlagSet
	store     storeFlags
	scopeFlag string
	at        string
	format    string
	formats   []string
	actorFlag string
	agentFlag string
}

func newCompCmd(e *env, name, usageLine, summary string, formats []string) *compCmd {
	c := &compCmd{e: e, name: name, usageLine: usageLine, summary: summary, formats: formats}
	fs := flag.NewFlagSet("agent-ls "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	c.store.register(fs, storeFlags{lockTimeout: bolt.DefaultLockTimeout})
	fs.StringVar(&c.scopeFlag, "scope", "", "scope: "+scopeUsage+" (the agent key comes from roleTemplate.name)")
	fs.StringVar(&c.format, "format", formats[0], "output `format`: "+strings.Join(formats, ", "))
	fs.StringVar(&c.actorFlag, "actor", "", "who reads, `kind:name` (default: the workspace actor or human:$USER); agent:NAME may compose only agent NAME")
	fs.StringVar(&c.agentFlag, "agent", "", "the agent `file`, the same as the AGENT_FILE argument")
	fs.Usage = func() {}
	c.fs = fs
	return c
}

func (c *compCmd) errorf(format string, args ...any) {
	fmt.Fprintf(c.e.stderr, "agent-ls %s: %s\n", c.name, fmt.Sprintf(format, args...))
}

// parse parses flags (they may follow the agent file) and wants exactly one
// positional argument. ok false means return code.
func (c *compCmd) parse(args []string) (file string, code int, ok bool) {
	pos, err := parseArgs(c.fs, args)
	if errors.Is(err, errHelp) {
		printHelp(c.e.stdout, help{path: c.name, usage: c.usageLine, body: c.summary}, c.fs)
		return "", exitOK, false
	}
	if err != nil {
		return "", usageFail(c.e.stderr, c.name, err), false
	}
	if c.agentFlag != "" {
		// --agent FILE is the argument; the same file given both ways is one.
		switch {
		case len(pos) == 0:
			pos = []string{c.agentFlag}
		case len(pos) == 1 && pos[0] != c.agentFlag:
			return "", usageFail(c.e.stderr, c.name, fmt.Errorf("two agent files, %s and %s: give one", c.agentFlag, pos[0])), false
		}
	}
	if len(pos) != 1 {
		return "", usageFail(c.e.stderr, c.name, fmt.Errorf("want one AGENT_FILE, got %d arguments", len(pos))), false
	}
	valid := false
	for _, f := range c.formats {
		valid = valid || f == c.format
	}
	if !valid {
		c.errorf("--format %q: want %s", c.format, strings.Join(c.formats, ", "))
		return "", exitUsage, false
	}
	file = pos[0]
	if !filepath.IsAbs(file) {
		file = filepath.Join(c.e.cwd, file)
	}
	return file, 0, true
}

// composer is an opened workspace and store for one agent file.
type composer struct {
	file   string
	ws     *workspace.Workspace
	st     store.Store
	scope  map[string]string
	policy engine.Policy
	view   engine.View // the actor's view of the store
	// tx is the snapshot (or write transaction) of consistent while it
	// runs; the reads go through it.
	tx store.Tx
	// noStore is the store location a read found missing ("" when it
	// exists): noteStore tells it once the agent composed.
	noStore string
}

// noteStore tells that k read no store, composing the authored agent
// alone (noteNoStore). It runs once the agent composed: a file that does
// not compose gets its error alone.
func (c *compCmd) noteStore(k *composer) {
	if k.noStore != "" {
		noteNoStore(c.e, c.name, k.noStore, "the authored agent only")
	}
}

// consistent runs fn with every read of the store on one snapshot (a
// View), or in one write transaction when write: on a shared store another
// process's commit between two reads (the promoted records, then their
// ledger entries) would otherwise make them disagree.
func (k *composer) consistent(ctx context.Context, write bool, fn func() error) error {
	defer func() { k.tx = nil }()
	if write {
		return k.st.Update(ctx, func(tx store.Tx) error { k.tx = tx; return fn() })
	}
	return k.st.View(ctx, func(r store.Reader) error { k.tx = store.ReadOnly(r); return fn() })
}

// reads is the store a read goes to: consistent's snapshot while it runs.
func (k *composer) reads() store.Tx {
	if k.tx != nil {
		return k.tx
	}
	return k.st
}

// open finds the agent file's workspace and opens its store (--store wins),
// read-only unless write. A store file that does not exist reads as empty.
func (c *compCmd) open(file string, write bool) (*composer, error) {
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("agent file: %w", err)
	}
	ws, err := workspace.ForFile(file) // a file resolving outside its workspace is refused
	if err != nil {
		return nil, err
	}
	scope, err := withScopeFlag(ws.Config.Scope, c.scopeFlag)
	if err != nil {
		return nil, err
	}
	view, err := c.confine(ws, file, scope)
	if err != nil {
		return nil, err
	}
	path := ws.StorePath
	if c.store.path != "" {
		path = engine.StoreLocation(c.e.cwd, c.store.path)
	}
	noStore := ""
	if !write && storeMissing(path) {
		noStore = path
	}
	st, err := engine.OpenStore(c.e.context(), c.e.opener(), path, store.Options{Now: c.e.now, LockTimeout: c.store.lockTimeout, ReadOnly: !write})
	if err != nil {
		return nil, err
	}
	return &composer{file: file, ws: ws, st: st, scope: scope, policy: engine.PolicyFrom(ws.Config), view: view, noStore: noStore}, nil
}

// instantiate composes the agent now, or at at, which the flag named
// atFlag gave (a bad time is an error naming it).
func (k *composer) instantiate(ctx context.Context, e *env, at, atFlag string, summarize bool) (*engine.ComposeResult, error) {
	res, err := engine.Compose(ctx, engine.ComposeRequest{
		AgentFile: k.file, Store: k.reads(), Scope: k.scope, At: at,
		Policy: k.policy, Now: e.now, Summarize: summarize,
	})
	if ae, ok := errors.AsType[*engine.AtError](err); ok {
		return nil, schema.Named(atFlag, ae.Err)
	}
	return res, err
}

// fail reports err and returns its exit code: unknown records are refusals,
// the rest usage or I/O failures.
func (c *compCmd) fail(err error) int {
	c.errorf("%v", err)
	return storeExitCode(err)
}

// runRender prints the composed system prompt of an agent file.
func runRender(ctx context.Context, e *env, args []string) int {
	c := newCompCmd(e, "render", "AGENT_FILE [--scope k=v,...] [--at T] [--format text|json|markdown] [--annotate] [--recall [--query TEXT]] [flags]",
		"Prints the agent's system prompt composed with its promoted memories: learned lines\n"+
			"render under the authored headings. --annotate marks each learned line with its record\n"+
			"and conversation; --format json gives sections with fragments, sources and memory ids.\n"+
			"--recall appends the recall block a runtime delivers at a conversation's first message.",
		[]string{"text", "json", "markdown"})
	annotate := c.fs.Bool("annotate", false, "mark memory-derived lines with their record and conversation (text format)")
	recall := c.fs.Bool("recall", false, "append the recall block: reserved candidates, spilled records and --query hits")
	query := c.fs.String("query", "", "the conversation's first message, searched for the recall block (with --recall)")
	summarize := c.fs.Bool("summarize", false, "append the overlay summary to the store, as a runtime's instantiate does")
	c.fs.StringVar(&c.at, "at", "", "compose the agent as it was at `time` T (RFC 3339), from the ledger")
	file, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if *query != "" && !*recall {
		c.errorf("--query needs --recall")
		return exitUsage
	}
	k, err := c.open(file, *summarize)
	if err != nil {
		return c.fail(err)
	}
	defer k.st.Close()
	var res *engine.ComposeResult
	var block *engine.RecallBlock
	err = k.consistent(ctx, *summarize, func() error {
		var err error
		if res, err = k.instantiate(ctx, e, c.at, "--at", *summarize); err != nil {
			return err
		}
		if *recall {
			b, err := res.Recall(ctx, *query)
			if err != nil {
				return err
			}
			block = &b
		}
		return nil
	})
	if err != nil {
		return c.fail(err)
	}
	c.noteStore(k)
	switch c.format {
	case "json":
		// recall: the block's entries and its text as delivered (the one the
		// text format appends), as MCP's compose answers it.
		type recallJSON struct {
			engine.RecallBlock
			Text string `json:"text"`
		}
		var rj *recallJSON
		if block != nil {
			rj = &recallJSON{*block, block.Text()}
		}
		out := struct {
			Agent    string           `json:"agent"`
			At       string           `json:"at,omitempty"`
			Text     string           `json:"text"`
			Markdown string           `json:"markdown"`
			Sections []engine.Section `json:"sections"`
			Recall   *recallJSON      `json:"recall,omitempty"`
		}{res.Agent, res.At, res.Prompt.Text(), res.Prompt.Markdown(), res.Prompt.Sections, rj}
		return writeJSONTo(e, c.name, out)
	case "markdown":
		printText(e.stdout, res.Prompt.Markdown())
	default:
		if *annotate {
			printText(e.stdout, res.Prompt.AnnotatedWith(provenanceLabel(res.Records)))
		} else {
			printText(e.stdout, res.Prompt.Text())
		}
	}
	if block != nil {
		if t := block.Text(); t != "" {
			printText(e.stdout, "\n"+t)
		}
	}
	return exitOK
}

// printText writes text to w as it is (fmt.Fprint copied a prompt whole
// into its buffer first: 120 KB for a 2,000-line agent).
func printText(w io.Writer, text string) {
	_, _ = io.WriteString(w, text)
}

// provenanceLabel annotates a memory fragment with its records and the
// conversations that taught them: "memory ID (conv C)".
func provenanceLabel(recs []schema.MemoryRecord) func(engine.Fragment) string {
	byID := make(map[string]*schema.MemoryRecord, len(recs))
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	return func(f engine.Fragment) string {
		if engine.IsMarker(f) {
			return "spilled to recall: " + strings.Join(f.MemoryIDs, ", ")
		}
		parts := make([]string, len(f.MemoryIDs))
		for i, id := range f.MemoryIDs {
			parts[i] = "memory " + id
			if r := byID[id]; r != nil && r.Provenance.ConversationID != "" {
				conv := "conv " + r.Provenance.ConversationID
				if n := r.DistinctConversations(); n > 1 {
					conv += ", " + schema.Conversations(n)
				}
				parts[i] += " (" + conv + ")"
			}
		}
		return strings.Join(parts, ", ")
	}
}

func writeJSONTo(e *env, name string, v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(e.stderr, "agent-ls %s: write output: %v\n", name, err)
		return exitUsage
	}
	return exitOK
}
