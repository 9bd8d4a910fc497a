package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/textkernel"
	"github.com/agent-ls/agent-ls/workspace"
)

// memorySub is one `agent-ls memory NAME` subcommand: its usage line
// (after the name, in the --flag style), summary, one example and run.
type memorySub struct {
	name, args, summary, example string
	run                          func(ctx context.Context, m *memCmd, args []string) int
}

// memorySubs is the `agent-ls memory` table, in the order help lists it.
// Adding a subcommand is one line here; its run gets the entry as m.sub.
func memorySubs() []memorySub {
	return []memorySub{
		{"save", "[--kind K] [--scope k=v,...] (--content TEXT | TEXT...) [flags]", "save a memory record",
			`agent-ls memory save --scope agent=support-bot --target judgment.refunds.escalationTriggers "refunds over 500 EUR need a manager"`, memSave},
		{"list", "[--scope k=v,...] [--kind K] [--tags a,b] [--limit N] [--all] [flags]", "list records, newest first",
			"agent-ls memory list --scope agent=support-bot --limit 20", memList},
		{"show", "ID [flags]", "show a record, its supports, promotion and ledger entries",
			"agent-ls memory show 01J9Z8K3V4M5N6P7Q8R9S0T1U2", memShow},
		{"search", "--query TEXT [--scope k=v,...] [flags]", "search records by keywords",
			`agent-ls memory search --query "refund manager" --scope agent=support-bot`, memSearch},
		{"invalidate", "ID [--reason TEXT] [flags]", "mark a record invalid",
			`agent-ls memory invalidate 01J9Z8K3V4M5N6P7Q8R9S0T1U2 --reason "the policy changed"`, memInvalidate},
		{"corroborate", "ID --conversation C [--run R] [flags]", "add a supporting conversation to a record",
			"agent-ls memory corroborate 01J9Z8K3V4M5N6P7Q8R9S0T1U2 --conversation conv-43", memCorroborate},
		{"import", "FILE.jsonl [flags]", "import records (one JSON record per line), all or nothing: exit 1 when a record's id exists, 2 for a malformed or invalid line (FILE:LINE)",
			"agent-ls memory import records.jsonl", memImport},
		{"export", "[--format jsonl|text|json] [--git DIR] [flags]", "write every readable record to stdout, as JSON lines by default (records only, without promotions, proposals or the ledger: backup copies the whole store); --git DIR: the agents' evolution as a git repository, a commit per composition change",
			"agent-ls memory export > records.jsonl", memExport},
		{"ledger", "[--since T] [--record ID] [--verify] [--head [SEQ:HASH]] [flags]", "list or verify the hash-chained ledger",
			"agent-ls memory ledger --verify", memLedger},
		{"retarget", "ID TARGET [--actor A] [--agent FILE] [flags]", "move a record to another target (a new record supersedes it, its supports carried)",
			"agent-ls memory retarget 01J9Z8K3V4M5N6P7Q8R9S0T1U2 judgment.refunds.escalationTriggers", memRetarget},
		{"restore", "ID [--actor A] [--agent FILE] [flags]", "bring a superseded or invalidated version back as the current one on its slot (humans only; a new record supersedes the current one)",
			`agent-ls memory invalidate 01J9Z8K3V4M5N6P7Q8R9S0T1U2 --reason "wrong call" && agent-ls memory restore 01J9Z8K3V4M5N6P7Q8R9S0T1U2`, memRestore},
		{"backup", "FILE [flags]", "write a consistent snapshot of the whole store (records, promotions, proposals, ledger) to FILE and verify it",
			"agent-ls memory backup backups/memory-2026-12-04.db", memBackup},
		{"save-batch", "FILE.jsonl [--scope k=v,...] [--actor A] [--agent FILE] [flags]", "save the memories of a JSONL file (one save request per line) in one transaction",
			"agent-ls memory save-batch --scope agent=support-bot saves.jsonl", memSaveBatch},
		{"events", "[--since T] [--follow] [--format json] [flags]", "print the typed event stream (JSON lines with --format json); --follow keeps printing as others write",
			"agent-ls memory events --follow --format json", memEvents},
		{"init", "[--store URL] [flags]", "create the store, or bring its schema up to date (run once by a database role that may create tables)",
			"agent-ls memory init --store postgres://admin@db.internal/agentls", memInit},
		{"migrate", "--from SRC --to DST [flags]", "copy a whole store (records, promotions, proposals, ledger) into an empty one: file or postgres:// URL, either way",
			"agent-ls memory migrate --from .agent-memory/memory.db --to postgres://agentls@db.internal/agentls", memMigrate},
	}
}

// memoryHelpMore is the paragraphs a subcommand's --help prints after its
// summary, where one line does not say enough.
var memoryHelpMore = map[string]string{
	"save-batch": saveBatchHelp,
	"corroborate": `It counts as a save of the same lesson from that conversation would: the record's tier applies (an
earned lesson that reaches its recurrence is promoted; an agent's support of a shared record opens a proposal
for a human). A retired record (invalidated, superseded or expired) gathers no support.

Exit 0 counted (or the conversation already supported it); 1 no such record, or a retired one (nothing is
written); 2 a usage or store error.`,
}

// memCmd carries what every memory subcommand shares: the process env, the
// store flags and the output format given before the subcommand name.
type memCmd struct {
	e      *env
	name   string // "memory SUB", for messages
	store  storeFlags
	format string
	usage  func()    // the current subcommand's help, to stdout
	sub    memorySub // the subcommand being run
	// formatSet: --format was given (before or after the subcommand name).
	formatSet bool
}

func (m *memCmd) errorf(format string, args ...any) {
	fmt.Fprintf(m.e.stderr, "agent-ls %s: %s\n", m.name, fmt.Sprintf(format, args...))
}

// usagef reports a usage error (the arguments) in the one wording with the
// pointer to the subcommand's help (usageFail) and returns exitUsage.
func (m *memCmd) usagef(format string, args ...any) int {
	return usageFail(m.e.stderr, m.name, fmt.Errorf(format, args...))
}

// storeError reports err on one line and returns its exit code.
func (m *memCmd) storeError(err error) int {
	m.errorf("%v", err)
	return storeExitCode(err)
}

// flags returns a FlagSet for the subcommand with the shared --store,
// --lock-timeout and --format flags.
func (m *memCmd) flags() *flag.FlagSet {
	sub := m.sub
	fs := flag.NewFlagSet("agent-ls memory "+sub.name, flag.ContinueOnError)
	fs.SetOutput(m.e.stderr)
	def := m.store
	m.store.register(fs, def)
	fs.StringVar(&m.format, "format", m.format, "output `format`: "+m.formats())
	m.usage = func() {
		body := upperFirst(sub.summary) + "."
		if more := memoryHelpMore[sub.name]; more != "" {
			body += "\n\n" + more
		}
		printHelp(m.e.stdout, help{path: "memory " + sub.name, usage: sub.args, body: body}, fs)
	}
	return fs
}

// parse parses args (flags may come before and after positional
// arguments) and checks --format. ok false means return code.
func (m *memCmd) parse(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		m.usage()
		return nil, exitOK, false
	}
	if err != nil {
		return nil, usageFail(m.e.stderr, m.name, err), false
	}
	fs.Visit(func(f *flag.Flag) { m.formatSet = m.formatSet || f.Name == "format" })
	if m.format != "text" && m.format != "json" && (m.sub.name != "export" || m.format != "jsonl") {
		return nil, usageFail(m.e.stderr, m.name, fmt.Errorf("--format %q: want %s", m.format, m.formats())), false
	}
	return pos, 0, true
}

// formats names the output formats of the subcommand: export's default is
// JSON lines (memExport), every other's text.
func (m *memCmd) formats() string {
	if m.sub.name == "export" {
		return "jsonl, text or json"
	}
	return "text or json"
}

func (m *memCmd) open(readOnly bool) (store.Store, storeLocation, int, bool) {
	missing := false
	if loc, err := locateStore(m.e, m.store); err == nil && storeMissing(loc.Path) {
		missing = true
		if readOnly {
			noteNoStore(m.e, m.name, loc.Path, "no records")
		}
	}
	s, loc, err := openStore(m.e, m.store, readOnly)
	if err != nil {
		return nil, loc, m.storeError(err), false
	}
	if missing && !readOnly {
		// Say where a new store went (docs/STORE.md, "Where the store lives").
		fmt.Fprintf(m.e.stderr, "agent-ls %s: created memory store %s\n", m.name, engine.Redact(loc.Path))
	}
	return s, loc, 0, true
}

// locate resolves the store and the actor without opening the store: a
// writing command checks its arguments, the actor among them, before
// m.open creates a store, so one that fails them leaves no store file.
// missing says the store file does not exist yet.
func (m *memCmd) locate(actorFlag string) (loc storeLocation, a store.Actor, missing bool, code int, ok bool) {
	loc, err := locateStore(m.e, m.store)
	if err != nil {
		return loc, a, false, m.storeError(err), false
	}
	if a, ok = m.actor(actorFlag, loc); !ok {
		return loc, a, false, exitUsage, false
	}
	return loc, a, storeMissing(loc.Path), 0, true
}

func (m *memCmd) actor(flagValue string, loc storeLocation) (store.Actor, bool) {
	a, err := resolveActor(m.e, flagValue, loc)
	if err != nil {
		m.errorf("%v", err)
		return store.Actor{}, false
	}
	return a, true
}

func (m *memCmd) writeJSON(v any) int {
	enc := json.NewEncoder(m.e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		m.errorf("write output: %v", err)
		return exitUsage
	}
	return exitOK
}

// runMemory dispatches `agent-ls memory [--store PATH] [--format F] SUB ...`.
func runMemory(ctx context.Context, e *env, args []string) int {
	m := &memCmd{e: e, name: "memory", format: "text", store: storeFlags{lockTimeout: bolt.DefaultLockTimeout}}
	fs := flag.NewFlagSet("agent-ls memory", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m.store.register(fs, m.store)
	fs.StringVar(&m.format, "format", m.format, "output `format`: text or json")
	fs.Usage = func() {}
	// Flags before the subcommand name apply to it; the name ends them.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			memoryUsage(e.stdout, fs)
			return exitOK
		}
		return usageFail(e.stderr, "memory", usageError(fs, err))
	}
	fs.Visit(func(f *flag.Flag) { m.formatSet = m.formatSet || f.Name == "format" })
	rest := fs.Args()
	if len(rest) == 0 {
		memoryUsage(e.stderr, fs)
		return exitUsage
	}
	if rest[0] == "help" {
		if len(rest) > 1 {
			rest = []string{rest[1], "--help"}
		} else {
			memoryUsage(e.stdout, fs)
			return exitOK
		}
	}
	for _, sub := range memorySubs() {
		if sub.name == rest[0] {
			m.name = "memory " + sub.name
			m.sub = sub
			return sub.run(ctx, m, rest[1:])
		}
	}
	names := make([]string, 0, len(memorySubs()))
	for _, sub := range memorySubs() {
		names = append(names, sub.name)
	}
	fmt.Fprintf(e.stderr, "agent-ls memory: unknown subcommand %q%s (run 'agent-ls memory --help')\n", rest[0], didYouMean(rest[0], names))
	return exitUsage
}

func memoryUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "Usage: agent-ls memory [--store FILE] [--format text|json] SUBCOMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Reads and changes the memory store (default: the workspace's "+schema.DefaultStorePath+").")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Subcommands:")
	for _, s := range memorySubs() {
		fmt.Fprintf(w, "  %-12s %s\n", s.name, s.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Example:")
	fmt.Fprintf(w, "  %s\n", exampleOf("memory"))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	printFlags(w, fs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'agent-ls memory SUBCOMMAND --help' (or 'agent-ls help memory SUBCOMMAND') for its flags.")
	fmt.Fprintln(w, "Exit codes: 0 success; 1 refused (no such record, forbidden, conflict, invalid import,")
	fmt.Fprintln(w, "broken ledger chain, damaged records skipped by export); 2 usage, locked or corrupt store, I/O.")
}

// saveSpec is the engine's save door (engine.Save, engine.SaveBatch) for
// a command of the CLI: the workspace ws, its store s, actor a's view, the
// record scope (the workspace scope plus --scope, withScopeFlag) and the
// --agent file. The door confines an agent actor, refuses a record no
// agent file of the workspace would see, validates and reconciles.
func saveSpec(e *env, s store.Store, ws *workspace.Workspace, a store.Actor, scope map[string]string, agentFile string) engine.SaveSpec {
	if agentFile != "" {
		agentFile = resolve(e.cwd, agentFile)
	}
	return engine.SaveSpec{Store: s, Workspace: ws, View: engine.ViewOf(a, ws.Config.Scope), Scope: scope,
		AgentFile: agentFile, Now: e.now, Evaluator: engine.EvaluatorFor(ws)}
}

func memSave(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var scope, kind, content, tags, target, payload, supersedes, conv, run, actor, expires, agentFile string
	fs.StringVar(&scope, "scope", "", "record scope: "+scopeUsage+"; agent=NAME names the agent")
	fs.StringVar(&kind, "kind", "fact", "record `kind`: fact, preference, episode or profile")
	fs.StringVar(&content, "content", "", "the memory's `text` (or give it as arguments)")
	fs.StringVar(&tags, "tags", "", "comma-separated `tags`")
	fs.StringVar(&target, "target", "", "slot the memory targets, compact form, e.g. background.projectContext.deploy_window")
	fs.StringVar(&payload, "payload", "", "structured payload as `JSON` (examples and awareness domains)")
	fs.StringVar(&supersedes, "supersedes", "", "`ID` of a record this one replaces")
	fs.StringVar(&conv, "conversation", "", "provenance conversation `id`")
	fs.StringVar(&run, "run", "", "provenance run `id`")
	fs.StringVar(&actor, "actor", "", "who saves, `kind:name` (default: the workspace actor or human:$USER)")
	fs.StringVar(&expires, "expires", "", "expiry: a duration from now (`7d`, 36h) or an RFC 3339 time")
	fs.StringVar(&agentFile, "agent", "", "the agent `file` (default: found in the workspace by the scope's agent name)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	for _, a := range pos {
		// An agent file among the words is a misplaced --agent, not text a
		// memory should learn: `memory save "text" ops.agent.yaml` would
		// have saved the file name into a shared record.
		if agentFileName(a) {
			m.errorf("%q looks like an agent file: pass it with --agent %s (the arguments are the memory's text)", a, a)
			return exitUsage
		}
	}
	if content == "" {
		content = strings.Join(pos, " ")
	} else if len(pos) > 0 {
		return m.usagef("unexpected arguments %q (the content is given by --content)", pos)
	}
	if strings.TrimSpace(content) == "" {
		m.errorf("no content: give --content TEXT")
		return exitUsage
	}
	if !schema.Kind(kind).Valid() {
		m.errorf("--kind %q: want fact, preference, episode or profile", kind)
		return exitUsage
	}
	if supersedes != "" {
		if err := schema.CheckIDArg("--supersedes", supersedes); err != nil {
			m.errorf("%v", err)
			return exitUsage
		}
	}
	req := engine.SaveRequest{Kind: schema.Kind(kind), Content: content, Supersedes: supersedes,
		Provenance: schema.Provenance{ConversationID: conv, RunID: run}, Tags: splitList(tags)}
	ws, err := workspace.Find(m.e.cwd)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	if err := checkProvenanceFlags(ws, conv, run); err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	recScope, err := withScopeFlag(ws.Config.Scope, scope)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	if target != "" {
		t, err := schema.ParseTarget(target)
		if errors.Is(err, schema.ErrLockedTarget) {
			return m.lockedRefusal(target)
		}
		if err != nil {
			m.errorf("%v", schema.Named("--target", err))
			return exitUsage
		}
		req.Target = &t
	}
	if payload != "" {
		if !json.Valid([]byte(payload)) {
			m.errorf("--payload is not valid JSON")
			return exitUsage
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, []byte(payload))
		req.Payload = buf.Bytes()
	}
	if expires != "" {
		t, err := parseExpiry(expires, m.e.now())
		if err != nil {
			m.errorf("%v", schema.Named("--expires", err))
			return exitUsage
		}
		req.ExpiresAt = schema.FormatTime(t)
	}
	// The arguments are checked before the store opens: one that fails
	// them creates no store file.
	_, a, missing, code, ok := m.locate(actor)
	if !ok {
		return code
	}
	checked, err := engine.CheckSave(saveSpec(m.e, nil, ws, a, recScope, agentFile), req)
	if err != nil {
		return m.storeError(err)
	}
	if checked == nil && missing && supersedes != "" {
		checked = &engine.SaveResult{Status: engine.SaveNotFound,
			Guidance: fmt.Sprintf("no record %s to supersede (the store is empty); save without --supersedes", supersedes)}
	}
	if checked != nil {
		return m.saveAnswer(*checked, "", nil)
	}
	s, loc, code, ok := m.open(false)
	if !ok {
		return code
	}
	defer s.Close()
	res, err := engine.Save(ctx, saveSpec(m.e, s, ws, a, recScope, agentFile), req)
	if err != nil {
		return m.storeError(err)
	}
	return m.saveAnswer(res, agentFile, loc.Workspace)
}

// saveAnswer prints the answer to a save and returns its exit code.
func (m *memCmd) saveAnswer(res engine.SaveResult, agentFile string, ws *workspace.Workspace) int {
	refused := res.Status != engine.SaveSaved
	if !refused && agentFile == "" && res.Record != nil {
		warnOrphanAgents(m.e, m.name, ws, []schema.MemoryRecord{*res.Record})
	}
	if m.format == "json" {
		if c := m.writeJSON(res); c != exitOK {
			return c
		}
	} else if !refused {
		verb := "saved"
		guidance := res.Guidance
		if res.Corroborated {
			verb = "corroborated existing record"
			guidance = res.StateGuidance
		}
		fmt.Fprintf(m.e.stdout, "%s %s%s\n", verb, res.Record.ID, prefixed(": ", guidance))
		if res.SupersededID != "" {
			fmt.Fprintf(m.e.stdout, "superseded %s\n", res.SupersededID)
		}
	}
	if refused {
		// Worded for a person: the guidance says what is missing (no
		// "not_found: "); a conflict or refusal names itself once.
		if res.Status == engine.SaveNotFound {
			m.errorf("%s", res.Guidance)
			return exitFindings
		}
		msg := string(res.Status)
		if res.Existing != nil {
			msg += " with " + res.Existing.ID
		}
		m.errorf("%s: %s", msg, res.Guidance)
		return exitFindings
	}
	return exitOK
}

// listing is the JSON shape of list and search.
type listing struct {
	Records []schema.MemoryRecord `json:"records"`
	Skipped int                   `json:"skipped"`
}

func memList(ctx context.Context, m *memCmd, args []string) int {
	return memQuery(ctx, m, args, false)
}

func memSearch(ctx context.Context, m *memCmd, args []string) int {
	return memQuery(ctx, m, args, true)
}

func memQuery(ctx context.Context, m *memCmd, args []string, search bool) int {
	fs := m.flags()
	var scope, kinds, tags, query, target, actor string
	var all, targeted bool
	limit := limitFlag(50)
	if search {
		limit = store.DefaultLimit
		fs.StringVar(&query, "query", "", "keywords, OR-matched; records matching more of them rank first")
	}
	fs.StringVar(&scope, "scope", "", "only records whose scope holds the workspace scope and every pair of `k=v,...` (added to the workspace scope; without it, every record)")
	fs.StringVar(&kinds, "kind", "", "only these comma-separated `kinds`")
	fs.StringVar(&tags, "tags", "", "only records carrying every one of these comma-separated `tags`")
	fs.StringVar(&target, "target", "", "only records targeting this slot (compact form)")
	fs.BoolVar(&targeted, "targeted", false, "only records that carry a target")
	fs.Var(&limit, "limit", "at most `N` records; "+limitMeaning)
	fs.BoolVar(&all, "all", false, "include invalidated and expired records (marked [invalid] and [expired]; in JSON, their invalidAt and expiresAt)")
	fs.StringVar(&actor, "actor", "", readActorUsage)
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if search && query == "" {
		query = strings.Join(pos, " ")
		pos = nil
	}
	if len(pos) > 0 {
		return m.usagef("unexpected arguments %q", pos)
	}
	if search && strings.TrimSpace(query) == "" {
		m.errorf("no query: give --query TEXT")
		return exitUsage
	}
	q := store.Query{Text: query, Tags: splitList(tags), IncludeInvalidated: all, IncludeExpired: all, TargetedOnly: targeted, Limit: limit.query()}
	if scope != "" {
		// The one scope rule: --scope adds to the workspace scope. Without
		// it every record is listed, records saved outside the workspace
		// scope included.
		ws, err := workspace.Find(m.e.cwd)
		if err != nil {
			m.errorf("%v", err)
			return exitUsage
		}
		if q.Scope, err = withScopeFlag(ws.Config.Scope, scope); err != nil {
			m.errorf("%v", err)
			return exitUsage
		}
	}
	for _, k := range splitList(kinds) {
		if !schema.Kind(k).Valid() {
			m.errorf("--kind %q: want fact, preference, episode or profile", k)
			return exitUsage
		}
		q.Kinds = append(q.Kinds, schema.Kind(k))
	}
	if target != "" {
		t, err := schema.ParseTarget(target)
		if err != nil {
			m.errorf("%v", schema.Named("--target", err))
			return exitUsage
		}
		q.Target = &t
	}
	s, loc, code, ok := m.open(true)
	if !ok {
		return code
	}
	defer s.Close()
	a, ok := m.actor(actor, loc)
	if !ok {
		return exitUsage
	}
	view := viewOf(a, loc)
	if view.Confined() {
		q.Limit = store.Limit(store.Unlimited)
	}
	res, err := s.Search(ctx, q)
	if err != nil {
		return m.storeError(err)
	}
	if view.Confined() {
		res.Records = view.Records(res.Records)
		if n := int(limit); n > 0 && len(res.Records) > n {
			res.Records = res.Records[:n]
		}
	}
	if res.Skipped > 0 {
		m.errorf("skipped %d stored record(s) that do not decode (run 'agent-ls memory export' to salvage the rest)", res.Skipped)
	}
	if m.format == "json" {
		if res.Records == nil {
			res.Records = []schema.MemoryRecord{}
		}
		return m.writeJSON(listing{Records: res.Records, Skipped: res.Skipped})
	}
	return printRecords(m.e.stdout, res.Records, schema.FormatTime(m.e.now()))
}

// limitMeaning is what every --limit flag says of 0 and negative numbers
// (limitFlag).
const limitMeaning = "0 for no limit"

// limitFlag is the value of every --limit flag: engine.Limit's rule, N > 0
// is at most N, 0 (and -1, the older spelling) no limit, any other
// negative number a usage error. After parsing, the value is N, or 0 for
// no limit.
type limitFlag int

func (l *limitFlag) String() string {
	if l == nil {
		return "0"
	}
	return strconv.Itoa(int(*l))
}

func (l *limitFlag) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err == nil {
		n, err = engine.Limit(n)
	}
	if err != nil {
		return errors.New(engine.LimitWant)
	}
	*l = limitFlag(n)
	return nil
}

// query is the limit as a store.Query takes it.
func (l limitFlag) query() *int { return engine.QueryLimit(int(l)) }

// printRecords writes records as aligned columns (ID, KIND, TARGET, SCOPE,
// CONTENT) under a header; nothing for none. It is the text form of list,
// search and export.
func printRecords(w io.Writer, recs []schema.MemoryRecord, now string) int {
	if len(recs) == 0 {
		return exitOK
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tTARGET\tSCOPE\tCONTENT")
	for _, r := range recs {
		fmt.Fprintln(tw, recordLine(r, now))
	}
	if err := tw.Flush(); err != nil {
		return exitUsage
	}
	return exitOK
}

// recordLine is the one-line text form of a record in listings.
func recordLine(r schema.MemoryRecord, now string) string {
	target, scope := "-", "-"
	if r.Target != nil {
		target = r.Target.String()
	}
	if len(r.Scope) > 0 {
		scope = "{" + engine.FormatScope(r.Scope) + "}"
	}
	line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.ID, r.Kind, target, scope, textkernel.Clip(r.Content, 100))
	switch {
	case r.InvalidAt != "" && r.InvalidAt <= now:
		line += "  [invalid]"
	case r.ExpiresAt != "" && r.ExpiresAt <= now:
		line += "  [expired]"
	}
	return line
}

// shown is the JSON shape of `memory show`.
type shown struct {
	Record    schema.MemoryRecord `json:"record"`
	Promotion *store.Promotion    `json:"promotion"`
	Ledger    []store.LedgerEntry `json:"ledger"`
}

func memShow(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var actor string
	fs.StringVar(&actor, "actor", "", readActorUsage)
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	id, ok := m.oneID(pos, "one record ID")
	if !ok {
		return exitUsage
	}
	s, loc, code, ok := m.open(true)
	if !ok {
		return code
	}
	defer s.Close()
	a, ok := m.actor(actor, loc)
	if !ok {
		return exitUsage
	}
	// One snapshot: the record, its promotion row and its ledger entries
	// agree even while other processes write to a shared store.
	var out shown
	code, found := exitOK, false
	err := s.View(ctx, func(r store.Reader) error {
		rec, c, ok := m.visibleRecord(ctx, r, viewOf(a, loc), id)
		if !ok {
			code = c
			return nil
		}
		found, out = true, shown{Record: rec}
		if p, err := r.Promotion(ctx, id); err == nil {
			out.Promotion = &p
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var err error
		out.Ledger, err = r.Ledger(ctx, store.LedgerFilter{RecordID: id})
		return err
	})
	if err != nil {
		return m.storeError(err)
	}
	if !found {
		return code
	}
	if m.format == "json" {
		if out.Ledger == nil {
			out.Ledger = []store.LedgerEntry{}
		}
		return m.writeJSON(out)
	}
	w := m.e.stdout
	r := out.Record
	field := func(name, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-14s %s\n", name+":", v)
		}
	}
	field("id", r.ID)
	field("kind", string(r.Kind))
	field("scope", engine.FormatScope(r.Scope))
	if r.Target != nil {
		field("target", fmt.Sprintf("%s (tier %s)", r.Target, schema.TierOf(*r.Target)))
	}
	field("content", r.Content)
	field("tags", strings.Join(r.Tags, ", "))
	field("provenance", formatProvenance(r.Provenance))
	field("created", r.CreatedAt)
	field("updated", r.UpdatedAt)
	if r.InvalidAt != "" {
		field("invalid", strings.TrimSpace(r.InvalidAt+" "+parens(r.InvalidReason)))
	}
	field("superseded by", r.SupersededBy)
	field("expires", r.ExpiresAt)
	field("payload", string(r.Payload))
	fmt.Fprintf(w, "learned in:    %s\n", schema.Conversations(r.DistinctConversations()))
	for _, sp := range r.Supports {
		fmt.Fprintf(w, "  supported %s  %s%s\n", sp.At, sp.ConversationID, prefixed("  run ", sp.RunID))
	}
	if p := out.Promotion; p != nil {
		fmt.Fprintf(w, "promotion:     tier %s, promoted %s by %s%s\n", p.Tier, p.PromotedAt, p.Actor, prefixed(", approved by ", p.Approver))
		if ev := formatEvidence(p.Evidence); ev != "" {
			fmt.Fprintf(w, "  evidence: %s\n", ev)
		}
	} else {
		fmt.Fprintln(w, "promotion:     not promoted")
	}
	fmt.Fprintf(w, "ledger:        %d entries\n", len(out.Ledger))
	for _, e := range out.Ledger {
		fmt.Fprintf(w, "  %s\n", ledgerLine(e))
	}
	return exitOK
}

func memInvalidate(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var reason, actor, agentFile string
	fs.StringVar(&reason, "reason", "", "why the record is no longer true (default: \"invalidated with agent-ls memory invalidate\")")
	fs.StringVar(&actor, "actor", "", "who invalidates, `kind:name`; an agent cannot retire a gated learning, it opens a proposal")
	fs.StringVar(&agentFile, "agent", "", "the agent `file` (default: found in the workspace by the record's agent name)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	id, ok := m.oneID(pos, "one record ID")
	if !ok {
		return exitUsage
	}
	if strings.TrimSpace(reason) == "" {
		reason = "invalidated with agent-ls memory invalidate"
	}
	s, eng, a, code, ok := m.recordEngine(ctx, id, actor, agentFile)
	if !ok {
		return code
	}
	defer s.Close()
	o, err := eng.Invalidate(ctx, id, reason, a)
	if err != nil && !errors.Is(err, engine.ErrRefused) {
		return m.storeError(err)
	}
	if m.format == "json" {
		if c := m.writeJSON(o); c != exitOK {
			return c
		}
	}
	switch {
	case errors.Is(err, engine.ErrRefused):
		m.errorf("refused: %s", o.Reason)
		return exitFindings
	case m.format == "json":
	case o.Status == engine.StatusPending:
		fmt.Fprintf(m.e.stdout, "pending: %s\n", o.Reason)
	default:
		fmt.Fprintf(m.e.stdout, "%s %s: %s\n", o.Status, id, o.Reason)
	}
	return exitOK
}

// memCorroborate counts a conversation as support of a live record through
// the engine (Engine.Corroborate: the record's tier applies, as when a save
// corroborates it). Exit 0 counted or already counted, 1 no such record or
// a retired one (invalidated, superseded, expired: nothing written), 2
// usage or store error.
func memCorroborate(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var conv, run, actor, agentFile string
	fs.StringVar(&conv, "conversation", "", "`id` of the conversation that taught the same lesson (required)")
	fs.StringVar(&run, "run", "", "run `id` within that conversation")
	fs.StringVar(&actor, "actor", "", "who corroborates, `kind:name`; an agent's support of a shared record is evidence, never a promotion by itself")
	fs.StringVar(&agentFile, "agent", "", "the agent `file` (default: found in the workspace by the record's agent name)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return m.usagef("want one record ID")
	}
	ws, err := workspace.Find(m.e.cwd)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	if err := checkProvenanceFlags(ws, conv, run); err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	conv, _ = schema.NormalizeConversationID(conv)
	if conv == "" {
		m.errorf("--conversation is required")
		return exitUsage
	}
	id := pos[0]
	if err := schema.CheckIDArg("ID", id); err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	s, eng, a, code, ok := m.recordEngine(ctx, id, actor, agentFile)
	if !ok {
		return code
	}
	defer s.Close()
	res, err := eng.Corroborate(ctx, id, schema.Support{ConversationID: conv, RunID: run}, a)
	if err != nil {
		return m.storeError(err)
	}
	if res.Status == engine.SaveNotFound {
		m.errorf("no record %s", id)
		return exitFindings
	}
	rec := res.Record
	if rec == nil {
		rec = res.Existing
	}
	convs := 0
	if rec != nil {
		convs = rec.DistinctConversations()
	}
	if m.format == "json" {
		// The answer, refused or not, as invalidate and retarget print theirs.
		if c := m.writeJSON(struct {
			ID            string             `json:"id"`
			Status        engine.SaveStatus  `json:"status"`
			Counted       bool               `json:"counted"`
			Conversations int                `json:"conversations"`
			Tier          schema.Tier        `json:"tier,omitempty"`
			State         engine.RecordState `json:"state,omitempty"`
			ProposalID    string             `json:"proposalId,omitempty"`
			Guidance      string             `json:"guidance"`
		}{id, res.Status, res.Corroborated, convs, res.Tier, res.State, res.ProposalID, res.Guidance}); c != exitOK {
			return c
		}
	}
	if res.Status != engine.SaveSaved || res.Record == nil {
		m.errorf("refused: %s", res.Guidance)
		return exitFindings
	}
	if m.format == "json" {
		return exitOK
	}
	if res.Corroborated {
		fmt.Fprintf(m.e.stdout, "counted: %s now has %s\n", id, schema.Conversations(convs))
	} else {
		fmt.Fprintf(m.e.stdout, "not counted: conversation %s already supports %s (%s)\n", conv, id, schema.Conversations(convs))
	}
	fmt.Fprintf(m.e.stdout, "%s\n", res.Guidance)
	return exitOK
}

// readActorUsage is the --actor flag of the reading subcommands.
const readActorUsage = "who reads, `kind:name` (default: the workspace actor or human:$USER); agent:NAME sees only NAME's and shared records"

// maxImportLine bounds one JSONL line.
const maxImportLine = 8 << 20

func memImport(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var actor string
	fs.StringVar(&actor, "actor", "", "who imports, `kind:name`")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return m.usagef("want one FILE.jsonl (- for stdin)")
	}
	name := pos[0]
	// Import writes records as they are (supports, provenance, any scope):
	// it is a human operation, refused before the input is read. Agents
	// write through save, save-batch and MCP, which reconcile and confine.
	loc, err := locateStore(m.e, m.store)
	if err != nil {
		return m.storeError(err)
	}
	a, ok := m.actor(actor, loc)
	if !ok {
		return exitUsage
	}
	if !engine.MayImport(a) {
		m.errorf("refused: %s cannot import; import is a human operation (agents save through memory save, save-batch or MCP); nothing imported", a)
		return exitFindings
	}
	in, done, err := m.openInput(name)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	defer done()
	recs, lines, err := readJSONL(name, in)
	if err != nil {
		// A malformed or invalid line is invalid input (exit 2), as in
		// save-batch; so is a read error.
		m.errorf("%v; nothing imported", err)
		return exitUsage
	}
	s, loc, code, ok := m.open(false)
	if !ok {
		return code
	}
	defer s.Close()
	if err := s.Import(ctx, recs, a); err != nil {
		if errors.Is(err, store.ErrConflict) {
			// Name the line of the first record whose id is taken.
			for i, r := range recs {
				if _, gerr := s.Get(ctx, r.ID); gerr == nil {
					m.errorf("%s:%d: record %s already exists; nothing imported", name, lines[i], r.ID)
					return exitFindings
				}
			}
		}
		return m.storeError(fmt.Errorf("%w; nothing imported", err))
	}
	warnOrphanAgents(m.e, m.name, loc.Workspace, recs)
	if m.format == "json" {
		return m.writeJSON(struct {
			Imported int `json:"imported"`
		}{len(recs)})
	}
	fmt.Fprintf(m.e.stdout, "imported %s\n", schema.Count(len(recs), "record"))
	return exitOK
}

// readJSONL decodes one record per non-blank line and checks each against
// the record schema (schema.ValidateRecordJSON) and as Import will, so a bad record is reported as FILE:LINE (with the column of a
// syntax error) before anything is written. Errors about the records wrap
// store.ErrInvalid; lines[i] is the line of recs[i].
func readJSONL(name string, r io.Reader) (recs []schema.MemoryRecord, lines []int, err error) {
	seen := map[string]int{}
	err = decodeJSONL(name, r, func(n int, line []byte, rec schema.MemoryRecord) error {
		if err := schema.ValidateRecordJSON(line); err != nil {
			return invalidf("%v", err)
		}
		if err := store.ValidateRecord(rec); err != nil {
			return err
		}
		if first, dup := seen[rec.ID]; dup {
			return invalidf("id %s repeats line %d", rec.ID, first)
		}
		seen[rec.ID] = n
		recs = append(recs, rec)
		lines = append(lines, n)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return recs, lines, nil
}

// decodeJSONL decodes each non-blank line of the JSONL file name (read
// from r) strictly (unknown fields, trailing values and lines over
// maxImportLine are errors; a UTF-8 byte order mark opening the file is
// skipped) into a T and hands it to each with its 1-based
// line number and text. Every error names name:LINE; an invalid line wraps
// store.ErrInvalid.
func decodeJSONL[T any](name string, r io.Reader, each func(n int, line []byte, v T) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxImportLine)
	n := 1
	for ; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 1 {
			// A UTF-8 byte order mark (editors on Windows write one) is
			// not part of the first record.
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s:%d:%s %w", name, n, jsonErrorColumn(err), invalidf("%v", err))
		}
		if dec.More() {
			return fmt.Errorf("%s:%d: %w", name, n, invalidf("more than one JSON value on the line"))
		}
		if err := each(n, line, v); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: %w", name, n, invalidf("line longer than the %d MiB limit", maxImportLine>>20))
		}
		return fmt.Errorf("read %s:%d: %w", name, n, err)
	}
	return nil
}

// openInput opens the input file name, standard input for "-"; the caller
// calls done when finished with it.
func (m *memCmd) openInput(name string) (in io.Reader, done func(), err error) {
	if name == "-" {
		return m.e.stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { _ = f.Close() }, nil
}

// recordEngine opens the store for writing, resolves the actor flag, reads
// record id as that actor sees it and builds the evolve engine of the
// record's agent (agentFile, or found by the record's scope): what a command
// acting on one record needs. The caller closes the store when ok.
func (m *memCmd) recordEngine(ctx context.Context, id, actorFlag, agentFile string) (store.Store, *engine.Agent, store.Actor, int, bool) {
	_, a, missing, code, ok := m.locate(actorFlag)
	if !ok {
		return nil, nil, store.Actor{}, code, false
	}
	if missing {
		// No store holds no record: said without creating one.
		m.errorf("no record %s", id)
		return nil, nil, store.Actor{}, exitFindings, false
	}
	s, loc, code, ok := m.open(false)
	if !ok {
		return nil, nil, store.Actor{}, code, false
	}
	fail := func(code int) (store.Store, *engine.Agent, store.Actor, int, bool) {
		_ = s.Close()
		return nil, nil, store.Actor{}, code, false
	}
	view := viewOf(a, loc)
	rec, code, ok := m.visibleRecord(ctx, s, view, id)
	if !ok {
		return fail(code)
	}
	scope := rec.Scope
	if view.Confined() {
		// An agent works in its own engine: what it writes (a retarget's
		// new record) is its own, a shared record it sees is not.
		scope = maps.Clone(rec.Scope)
		scope[store.AgentKey] = view.Agent
	}
	eng, err := newEngine(m.e, s, scope, agentFile)
	if err != nil {
		return fail(m.storeError(err))
	}
	return s, eng, a, 0, true
}

// visibleRecord reads id as a sees it (agentView): a record a may not see,
// or none, is "no record ID" with exit 1; another failure is a store error.
func (m *memCmd) visibleRecord(ctx context.Context, s store.Reader, view engine.View, id string) (schema.MemoryRecord, int, bool) {
	rec, err := view.Get(ctx, s, id)
	if errors.Is(err, store.ErrNotFound) {
		m.errorf("no record %s", id)
		return rec, exitFindings, false
	}
	if err != nil {
		return rec, m.storeError(err), false
	}
	return rec, 0, true
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", store.ErrInvalid, fmt.Sprintf(format, args...))
}

// jsonErrorColumn returns "COL:" for a syntax error (1-based), else "".
func jsonErrorColumn(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%d:", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%d:", te.Offset)
	}
	return ""
}

func memExport(ctx context.Context, m *memCmd, args []string) int {
	if !m.formatSet {
		// JSON lines unless --format says text (the aligned listing) or
		// json (one {"records", "skipped"} document).
		m.format = "jsonl"
	}
	fs := m.flags()
	var actor, gitDir string
	fs.StringVar(&actor, "actor", "", readActorUsage)
	fs.StringVar(&gitDir, "git", "", "write the agents' evolution as a git repository in `DIR`: a commit per ledger entry that changes a composition, holding NAME.prompt.md for every agent file as render prints it then (DIR created if missing; run again, it appends the new entries)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return m.usagef("unexpected arguments %q", pos)
	}
	if gitDir != "" && m.formatSet && m.format == "jsonl" {
		m.errorf("--git writes a repository: --format is text or json")
		return exitUsage
	}
	s, loc, code, ok := m.open(true)
	if !ok {
		return code
	}
	defer s.Close()
	a, ok := m.actor(actor, loc)
	if !ok {
		return exitUsage
	}
	view := viewOf(a, loc)
	if gitDir != "" {
		return memExportGit(ctx, m, gitDir, s, loc, view)
	}
	format := m.format
	w := bufio.NewWriter(m.e.stdout)
	n := 0
	var kept []schema.MemoryRecord
	skipped, err := s.Export(ctx, func(r schema.MemoryRecord) error {
		if !view.Visible(&r) {
			return nil
		}
		if format != "jsonl" {
			n++
			kept = append(kept, r)
			return nil
		}
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		n++
		w.Write(data)
		return w.WriteByte('\n')
	})
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return m.storeError(err)
	}
	switch format {
	case "text":
		if code := printRecords(m.e.stdout, kept, schema.FormatTime(m.e.now())); code != exitOK {
			return code
		}
	case "json":
		if kept == nil {
			kept = []schema.MemoryRecord{}
		}
		if code := m.writeJSON(listing{Records: kept, Skipped: skipped}); code != exitOK {
			return code
		}
	}
	if skipped > 0 {
		m.errorf("exported %d record(s); skipped %d that do not decode", n, skipped)
		return exitFindings
	}
	return exitOK
}

// headFlag is --head of memory ledger: alone it asks for the head to be
// printed; with a SEQ:HASH value (--head=SEQ:HASH, or --head SEQ:HASH
// joined by joinHeadArg) it pins one for --verify.
type headFlag struct {
	print bool
	pin   *store.Head
}

func (h *headFlag) String() string {
	if h == nil || h.pin == nil {
		return ""
	}
	return h.pin.String()
}

func (h *headFlag) Set(v string) error {
	if v == "true" {
		h.print = true
		return nil
	}
	p, err := store.ParseHead(v)
	if err != nil {
		// The flag's error names the flag and the value already.
		return errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("head %q: ", v)))
	}
	h.pin = &p
	return nil
}

func (h *headFlag) IsBoolFlag() bool { return true }

// joinHeadArg turns "--head SEQ:HASH" into "--head=SEQ:HASH": --head alone
// is a boolean, so its value must be joined to it.
func joinHeadArg(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "--head" || a == "-head") && i+1 < len(args) {
			if seq, _, ok := strings.Cut(args[i+1], ":"); ok && seq != "" && strings.Trim(seq, "0123456789") == "" {
				out = append(out, a+"="+args[i+1])
				i++
				continue
			}
		}
		if a == "--" {
			return append(out, args[i:]...)
		}
		out = append(out, a)
	}
	return out
}

func memLedger(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var since, record, ops, actor string
	var verify bool
	var limit limitFlag
	fs.StringVar(&since, "since", "", "only entries since a `time`: a duration back from now (7d, 36h) or an RFC 3339 time")
	fs.StringVar(&record, "record", "", "only entries about record `ID`")
	fs.StringVar(&ops, "op", "", "only these comma-separated `ops` (write, supersede, invalidate, promote, ...)")
	fs.Var(&limit, "limit", "only the newest `N` matching entries (default: all); "+limitMeaning)
	fs.BoolVar(&verify, "verify", false, "check the hash chain and replay it against everything stored instead of listing; exit 1 naming each difference (to an agent actor, the verdict only)")
	var head headFlag
	fs.Var(&head, "head", "print the ledger's head as SEQ:HASH; with --verify and a `SEQ:HASH`, also check the chain still extends that pinned head")
	fs.StringVar(&actor, "actor", "", readActorUsage)
	pos, code, ok := m.parse(fs, joinHeadArg(args))
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return m.usagef("unexpected arguments %q", pos)
	}
	if record != "" {
		if err := schema.CheckIDArg("--record", record); err != nil {
			m.errorf("%v", err)
			return exitUsage
		}
	}
	f := store.LedgerFilter{RecordID: record, Limit: int(limit)}
	if since != "" {
		t, err := schema.ParseSince(since, m.e.now())
		if err != nil {
			m.errorf("%v", schema.Named("--since", err))
			return exitUsage
		}
		f.Since = schema.FormatTime(t)
	}
	for _, op := range splitList(ops) {
		if !store.Op(op).Valid() {
			names := make([]string, 0, len(store.Ops()))
			for _, o := range store.Ops() {
				names = append(names, string(o))
			}
			m.errorf("--op %q: not a ledger op%s; want %s or %s", op, didYouMean(op, names), strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
			return exitUsage
		}
		f.Ops = append(f.Ops, store.Op(op))
	}
	s, loc, code, ok := m.open(true)
	if !ok {
		return code
	}
	defer s.Close()
	a, ok := m.actor(actor, loc)
	if !ok {
		return exitUsage
	}
	if head.pin != nil && !verify {
		m.errorf("--head SEQ:HASH pins a head for --verify; without --verify, --head takes no value")
		return exitUsage
	}
	if head.print && !verify {
		entries, err := s.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			return m.storeError(err)
		}
		h := store.HeadOf(entries)
		if m.format == "json" {
			return m.writeJSON(struct {
				Seq  uint64 `json:"seq"`
				Hash string `json:"hash"`
				Head string `json:"head"`
			}{h.Seq, h.Hash, h.String()})
		}
		fmt.Fprintln(m.e.stdout, h)
		return exitOK
	}
	if verify {
		// One snapshot: on a shared store a write landing between the
		// ledger read and the record listing would look like entries cut
		// from the end of the chain.
		var entries []store.LedgerEntry
		var verr error
		err := s.View(ctx, func(r store.Reader) error {
			var err error
			if entries, err = r.Ledger(ctx, store.LedgerFilter{}); err != nil {
				return err
			}
			if verr = r.Verify(ctx); verr == nil {
				verr = verifyCreations(ctx, r, entries)
			}
			return nil
		})
		if err != nil {
			return m.storeError(err)
		}
		// Verify ran on the View's snapshot: the store keeps its outcome
		// now, and no write lands after a failure until one passes.
		if rerr := store.RecordVerify(ctx, s, verr); rerr != nil {
			return m.storeError(rerr)
		}
		if verr == nil && head.pin != nil {
			verr = store.CheckPin(entries, *head.pin)
		}
		var le *store.LedgerError
		var se *store.StateError
		if verr != nil && !errors.As(verr, &le) && !errors.As(verr, &se) {
			return m.storeError(verr)
		}
		// An agent actor gets the store's verdict, which is everyone's, but
		// nothing of other agents' records, which do not exist for it (the
		// trust model): no differences naming records, no count of the
		// whole ledger. A human's --verify names them.
		confined := viewOf(a, loc).Confined()
		if confined && se != nil {
			verr = fmt.Errorf("the store does not verify: %d difference(s) between the stored state and the ledger's replay (an agent is not shown which; a human's --verify names them)", len(se.Diffs))
			se.Diffs = nil
		}
		if m.format == "json" {
			out := struct {
				OK          bool               `json:"ok"`
				Entries     *int               `json:"entries,omitempty"`
				Head        string             `json:"head"`
				BadSeq      uint64             `json:"badSeq,omitempty"`
				Differences []store.Difference `json:"differences,omitempty"`
				Error       string             `json:"error,omitempty"`
			}{OK: verr == nil, Head: store.HeadOf(entries).String()}
			if n := len(entries); !confined {
				out.Entries = &n
			}
			if le != nil {
				out.BadSeq = le.Seq
			}
			if se != nil {
				out.Differences = se.Diffs
			}
			if verr != nil {
				out.Error = verr.Error()
			}
			if c := m.writeJSON(out); c != exitOK {
				return c
			}
		} else if verr == nil {
			pinned := ""
			if head.pin != nil {
				pinned = ", extends the pinned head " + head.pin.String()
			}
			count := fmt.Sprintf(" %d entries,", len(entries))
			if confined {
				count = ""
			}
			fmt.Fprintf(m.e.stdout, "ledger ok:%s hash chain intact, stored state matches its replay%s\n", count, pinned)
		} else if se != nil {
			for _, d := range se.Diffs {
				fmt.Fprintln(m.e.stdout, d)
			}
		}
		if verr != nil {
			m.errorf("%v", verr)
			return exitFindings
		}
		return exitOK
	}
	view := viewOf(a, loc)
	if view.Confined() {
		f.Limit = 0 // the newest N of the agent's view, not of the whole ledger
	}
	entries, err := s.Ledger(ctx, f)
	if err == nil {
		entries, err = view.Ledger(ctx, s, entries)
	}
	if n := int(limit); view.Confined() && n > 0 && len(entries) > n {
		entries = entries[len(entries)-n:]
	}
	if err != nil {
		return m.storeError(err)
	}
	if m.format == "json" {
		if entries == nil {
			entries = []store.LedgerEntry{}
		}
		return m.writeJSON(entries)
	}
	for _, e := range entries {
		fmt.Fprintln(m.e.stdout, ledgerLine(e))
	}
	return exitOK
}

// ledgerLine is the one-line text form of a ledger entry.
func ledgerLine(e store.LedgerEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%4d  %s  %-11s  %s  %s", e.Seq, e.At, e.Op, e.RecordID, e.Actor)
	if e.Record != nil && e.Record.ID != e.RecordID {
		fmt.Fprintf(&b, "  new %s", e.Record.ID)
	}
	if e.Record != nil && e.Record.Provenance.RestoredFrom != "" {
		fmt.Fprintf(&b, "  restored from %s", e.Record.Provenance.RestoredFrom)
	}
	if e.Token != nil {
		fmt.Fprintf(&b, "  token %s agent %s", e.Token.ID, e.Token.Agent)
	}
	if e.ProposalID != "" {
		fmt.Fprintf(&b, "  proposal %s", e.ProposalID)
	}
	if e.Tier != "" {
		fmt.Fprintf(&b, "  tier %s", e.Tier)
	}
	if e.Support != nil {
		fmt.Fprintf(&b, "  conversation %s", e.Support.ConversationID)
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, "  %q", e.Reason)
	}
	return b.String()
}

// parseScope parses "k=v,k2=v2" (empty: nil).
func parseScope(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q: want key=value pairs separated by commas, e.g. project=web,agent=support-bot", pair)
		}
		if err := schema.CheckScopePart("key", k); err != nil {
			return nil, err
		}
		if err := schema.CheckScopePart("value", v); err != nil {
			return nil, err
		}
		if old, dup := out[k]; dup && old != v {
			return nil, fmt.Errorf("key %q given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseExpiry accepts a duration from now or an RFC 3339 time, after now
// (a *schema.ValueError named expires otherwise).
func parseExpiry(s string, now time.Time) (time.Time, error) {
	var t time.Time
	if d, err := schema.ParseDuration(s); err == nil {
		t = now.Add(d)
	} else if t, err = schema.ParseTime(s); err != nil {
		return time.Time{}, &schema.ValueError{Name: "expires", Value: s, Why: "want a duration such as 7d or 36h, or an RFC 3339 time"}
	}
	if !t.After(now) {
		return time.Time{}, &schema.ValueError{Name: "expires", Value: s, Why: "not after now: a record must expire in the future"}
	}
	return t, nil
}

func formatProvenance(p schema.Provenance) string {
	var parts []string
	if p.ConversationID != "" {
		parts = append(parts, "conversation "+p.ConversationID)
	}
	if p.RunID != "" {
		parts = append(parts, "run "+p.RunID)
	}
	if p.Author != "" {
		parts = append(parts, "by "+p.Author)
	}
	if p.At != "" {
		parts = append(parts, "at "+p.At)
	}
	return strings.Join(parts, ", ")
}

func formatEvidence(ev store.Evidence) string {
	var parts []string
	if len(ev.Conversations) > 0 {
		parts = append(parts, schema.Conversations(len(ev.Conversations))+" ("+strings.Join(ev.Conversations, ", ")+")")
	}
	if ev.Eval != nil {
		parts = append(parts, fmt.Sprintf("eval %d/%d -> %d/%d", ev.Eval.BasePassed, ev.Eval.BasePassed+ev.Eval.BaseFailed, ev.Eval.Passed, ev.Eval.Passed+ev.Eval.Failed))
	}
	if ev.ProposalID != "" {
		parts = append(parts, "proposal "+ev.ProposalID)
	}
	if ev.Note != "" {
		parts = append(parts, ev.Note)
	}
	return strings.Join(parts, "; ")
}

func parens(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// memRetarget moves a record to another target through the engine
// (engine.Agent.Retarget): the editor's "Retarget memory" quick fix.
func memRetarget(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var actor, agentFile string
	fs.StringVar(&actor, "actor", "", "who retargets, `kind:name` (default: the workspace actor or human:$USER)")
	fs.StringVar(&agentFile, "agent", "", "the agent `file` (default: found in the workspace by the record's agent name)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return m.usagef("want a record ID and a target (compact form, e.g. judgment.deploy.heuristics)")
	}
	id := pos[0]
	if err := schema.CheckIDArg("ID", id); err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	to, err := schema.ParseTarget(pos[1])
	locked := errors.Is(err, schema.ErrLockedTarget)
	if err != nil && !locked {
		m.errorf("%v", err) // ParseTarget names the target
		return exitUsage
	}
	s, eng, a, code, ok := m.recordEngine(ctx, id, actor, agentFile)
	if !ok {
		return code
	}
	defer s.Close()
	if locked {
		return m.lockedRefusal(pos[1])
	}
	res, err := eng.Retarget(ctx, id, to, a)
	if err != nil {
		return m.storeError(err)
	}
	if m.format == "json" {
		if c := m.writeJSON(res); c != exitOK {
			return c
		}
	}
	if res.Status != engine.SaveSaved {
		m.errorf("%s: %s", res.Status, res.Guidance)
		return exitFindings
	}
	if m.format != "json" {
		fmt.Fprintf(m.e.stdout, "%s: %s\n", res.State, res.Guidance)
	}
	return exitOK
}

// lockedRefusal answers a save or retarget to a locked target, which
// schema.ParseTarget refuses to parse: a refusal (exit 1) in the words Save
// uses for the locked targets it can parse.
func (m *memCmd) lockedRefusal(target string) int {
	res := engine.SaveResult{Status: engine.SaveRefused, Tier: schema.TierLocked, Guidance: fmt.Sprintf("%s is locked: %s", target, schema.LockedReason)}
	if m.format == "json" {
		if c := m.writeJSON(res); c != exitOK {
			return c
		}
	}
	m.errorf("%s: %s", res.Status, res.Guidance)
	return exitFindings
}

// agentFileName reports whether arg names an agent file (NAME.agent.yaml,
// .agent.yml or .agent.json) rather than words of a memory's text.
func agentFileName(arg string) bool {
	if strings.ContainsAny(arg, " \t\n") {
		return false
	}
	for _, ext := range []string{".agent.yaml", ".agent.yml", ".agent.json"} {
		if strings.HasSuffix(strings.ToLower(arg), ext) {
			return true
		}
	}
	return false
}

// memRestore brings a retired version back (engine Restore): human only.
// Exit 0 restored, 1 refused or unknown (an agent or system actor, the
// current version, no such record: as every memory command), 2 usage or
// store error.
func memRestore(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var actor, agentFile string
	fs.StringVar(&actor, "actor", "", "who restores, `kind:name` (default: the workspace actor or human:$USER); only a human may")
	fs.StringVar(&agentFile, "agent", "", "the agent `file` (default: found in the workspace by the record's agent name)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	id, ok := m.oneID(pos, "one record ID (a superseded or invalidated version)")
	if !ok {
		return exitUsage
	}
	s, eng, a, code, ok := m.recordEngine(ctx, id, actor, agentFile)
	if !ok {
		return code
	}
	defer s.Close()
	res, err := eng.Restore(ctx, id, a)
	if errors.Is(err, engine.ErrRefused) {
		if m.format == "json" {
			if c := m.writeJSON(res); c != exitOK {
				return c
			}
		}
		m.errorf("refused: %s", res.Reason)
		return exitFindings
	}
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	if m.format == "json" {
		return m.writeJSON(res)
	}
	fmt.Fprintf(m.e.stdout, "%s\n", res.Reason)
	return exitOK
}

// oneID is the one record ID a command takes as its arguments, checked
// (schema.CheckIDArg); want says what the command wants when the count is
// wrong. It reports the problem and returns false.
func (m *memCmd) oneID(pos []string, want string) (string, bool) {
	if len(pos) != 1 {
		m.usagef("want %s", want)
		return "", false
	}
	if err := schema.CheckIDArg("ID", pos[0]); err != nil {
		m.errorf("%v", err)
		return "", false
	}
	return pos[0], true
}
