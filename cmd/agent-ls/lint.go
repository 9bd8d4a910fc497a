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
	"text/tabwriter"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/lint/gather"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

const lintUsage = `Lints agent files (*.agent.yaml, *.agent.yml, *.agent.json; a directory is
searched recursively, default ".") against the workspace's memory store:
schema violations, the composition ceiling, budget spills, authored-vs-memory
and memory-vs-memory collisions, unknown domains, missing payloads,
contradictions, pending approvals, stale currentState facts, near-duplicates
and candidates' progress. The store is opened read-only; without one only the
file itself is checked, and a locked or corrupt store gives a warning and a
schema-only lint. A store named with --store must open: one that cannot be
(unreachable, locked, corrupt) is an error (exit 2) after the findings. Rules are configured in .agent-ls.yaml (lint.rules:
RULE: off|error|warning|info|hint) and suppressed inline with a comment
"# agent-ls: ignore RULE reason" on the line or the line above.

Each finding prints as
  file:line:col: severity: message [rule]
--format json prints an array of {file, line, column, endLine, endColumn,
severity, message, rule, pointer, related, fixes}; --format sarif prints a
SARIF 2.1.0 log for code-scanning tools.

--list-rules documents every rule. --report prints each agent's health
report (size per primitive, conflicts, candidates, staleness, recall use)
instead of findings; a file that does not load has none: its errors go to
stderr and the exit code is 1.

Exit status: 0 clean, 1 errors found (or more warnings than --max-warnings),
2 usage or I/O failure.`

// lintFinding is one finding of one file, as lint prints it in JSON.
type lintFinding struct {
	File      string         `json:"file"`
	Line      int            `json:"line"`
	Column    int            `json:"column"`
	EndLine   int            `json:"endLine"`
	EndColumn int            `json:"endColumn"`
	Severity  string         `json:"severity"`
	Message   string         `json:"message"`
	Rule      string         `json:"rule"`
	Pointer   string         `json:"pointer"`
	Related   []lint.Related `json:"related,omitempty"`
	Fixes     []lint.Fix     `json:"fixes,omitempty"`
}

// lintCmd is one `agent-ls lint` run.
type lintCmd struct {
	e      *env
	store  storeFlags
	stores map[string]*lintStore
	// storeFailed: the store --store names could not be used (exit 2).
	storeFailed bool
	// wsOf is the workspace of each store opened, for the workspace rules.
	wsOf map[string]*workspace.Workspace
	// actorFlag is --actor; confined: some file was linted for an agent
	// actor, who sees no other agent's records (no orphans are counted).
	actorFlag string
	confined  bool
}

// lintStore is a store opened for the run, or why it could not be.
type lintStore struct {
	st     store.Store
	failed bool
}

func runLint(ctx context.Context, e *env, args []string) int {
	c := &lintCmd{e: e, stores: map[string]*lintStore{}, wsOf: map[string]*workspace.Workspace{}}
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "text", "output `format`: text, json or sarif (sarif: findings only)")
	maxWarnings := fs.Int("max-warnings", -1, "exit 1 when there are more than `N` warnings (-1: no limit)")
	listRules := fs.Bool("list-rules", false, "document every rule and exit")
	report := fs.Bool("report", false, "print each agent's health report instead of findings")
	c.store.register(fs, storeFlags{lockTimeout: bolt.DefaultLockTimeout})
	fs.StringVar(&c.actorFlag, "actor", "", "who reads, `kind:name` (default: the workspace actor or human:$USER); agent:NAME lints another agent's file without its memories")
	paths, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "lint", usage: "[flags] [PATH...]", body: lintUsage}, fs)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "lint", err)
	}
	if *maxWarnings < -1 {
		return usageFail(e.stderr, "lint", fmt.Errorf("--max-warnings %d: want a number of warnings, or -1 for no limit", *maxWarnings))
	}
	switch *format {
	case "text", "json", "sarif":
	default:
		return usageFail(e.stderr, "lint", fmt.Errorf("--format %q: want text, json or sarif", *format))
	}
	if *listRules {
		return c.printRules(*format)
	}
	if *report && *format == "sarif" {
		fmt.Fprintln(e.stderr, "agent-ls lint: --report prints text or json, not sarif")
		return exitUsage
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	defer c.close()

	code := exitOK
	var linted struct{ dir bool } // a directory was linted: the workspace rules run
	var findings []lint.FileFinding
	var reports []lintReport
	for _, arg := range paths {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(e.stderr, "agent-ls lint: %v\n", err)
			return exitUsage
		}
		if fi, err := os.Stat(resolve(e.cwd, arg)); err == nil && fi.IsDir() {
			linted.dir = true
		}
		files, err := expandArg(e.cwd, arg)
		if err != nil {
			fmt.Fprintf(e.stderr, "agent-ls lint: %v\n", err)
			code = exitUsage
			continue
		}
		for _, f := range files {
			in, fileFindings, ok := c.load(ctx, f)
			if !ok {
				code = exitUsage
			}
			if *report {
				if in != nil && in.Config != nil {
					reports = append(reports, lintReport{File: f, Agent: in.Config.RoleTemplate.Name, Health: lint.HealthOf(*in)})
					continue
				}
				// No report for a file that does not load: its errors say
				// why (on stderr: stdout is the reports), and the exit code
				// that the reports are not the whole.
				for _, ff := range fileFindings {
					if ff.Severity != schema.SeverityError {
						continue
					}
					r := ff.Range
					fmt.Fprintf(e.stderr, "%s:%d:%d: %s: %s [%s]\n", f, r.Start.Line+1, r.Start.Character+1, ff.Severity, ff.Message, ff.Rule)
					if code == exitOK {
						code = exitFindings
					}
				}
				continue
			}
			if in != nil {
				for _, ff := range lint.Run(*in) {
					if ff.Rule == schema.RuleSchema && isUnknownKey(ff.Message) {
						ff.Message += keyHint(in.Doc, f, ff.Pointer)
					}
					fileFindings = append(fileFindings, ff)
				}
			}
			for _, ff := range fileFindings {
				findings = append(findings, lint.FileFinding{File: f, Finding: ff})
			}
		}
	}
	if linted.dir && !*report && !c.confined {
		findings = append(findings, c.orphans(ctx)...)
	}
	if *report {
		if err := c.printReports(*format, reports); err != nil {
			fmt.Fprintf(e.stderr, "agent-ls lint: %v\n", err)
			return exitUsage
		}
		return code
	}
	if err := c.printFindings(*format, findings); err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lint: %v\n", err)
		return exitUsage
	}
	if code != exitOK {
		return code
	}
	if c.storeFailed {
		// --store named it: linting without its facts is not what was asked.
		return exitUsage
	}
	errs, warns := 0, 0
	for _, f := range findings {
		switch f.Severity {
		case schema.SeverityError:
			errs++
		case schema.SeverityWarning:
			warns++
		}
	}
	if errs > 0 || (*maxWarnings >= 0 && warns > *maxWarnings) {
		return exitFindings
	}
	return exitOK
}

// load reads and parses one file and gathers its lint input. Files that are
// not agent files (workspace configs, JSONL records) are only validated;
// their problems are the findings and the input is nil. ok is false on an
// I/O or workspace failure (reported on stderr).
func (c *lintCmd) load(ctx context.Context, file string) (*lint.Input, []lint.Finding, bool) {
	e := c.e
	path := resolve(e.cwd, file)
	if ps, err := outsideProblem(path, file); err != nil || ps != nil {
		if err != nil {
			fmt.Fprintf(e.stderr, "agent-ls lint: %v\n", pathError(err, file))
			return nil, nil, false
		}
		p := ps[0]
		return nil, []lint.Finding{{Rule: p.Rule, Severity: p.Severity, Message: p.Message, Range: p.Range}}, true
	}
	data, size, err := readChecked(path, file)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lint: %v\n", pathError(err, file))
		return nil, nil, false
	}
	if ps := schema.TooLarge(file, size); ps != nil {
		var out []lint.Finding
		for _, p := range ps {
			out = append(out, lint.Finding{Rule: p.Rule, Severity: p.Severity, Message: p.Message, Pointer: p.Pointer, Range: p.Range})
		}
		return nil, out, true
	}
	if schema.KindOf(file) != schema.FileAgent {
		var out []lint.Finding
		for _, p := range schema.Check(file, data) {
			out = append(out, lint.Finding{Rule: p.Rule, Severity: p.Severity, Message: p.Message, Pointer: p.Pointer, Range: p.Range})
		}
		return nil, out, true
	}
	doc, cfg, _, err := schema.LoadAgent(file, data)
	var pre []lint.Finding
	if err != nil {
		var pe *schema.ParseError
		f := lint.Finding{Rule: schema.RuleParse, Severity: schema.SeverityError, Message: err.Error()}
		if errors.As(err, &pe) {
			f.Message, f.Range = pe.Msg, pe.Range()
		}
		pre = append(pre, f)
		if doc == nil {
			return nil, pre, true
		}
	}
	in := &lint.Input{Doc: doc, Config: cfg}
	ws, err := workspace.Find(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lint: %s: workspace: %v\n", file, err)
		return in, pre, false
	}
	in.Settings = ws.Config
	if cfg == nil {
		return in, pre, true
	}
	// The store is read as the actor: an agent sees its own records and
	// shared ones, so another agent's file is linted without memories.
	a, _, err := engine.ResolveActor(c.actorFlag, ws, e.getenv)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lint: %v\n", err)
		return in, pre, false
	}
	view := engine.ViewOf(a, ws.Config.Scope)
	if view.Confined() {
		c.confined = true
		if err := engine.ConfineFile(view, cfg); err != nil {
			fmt.Fprintf(e.stderr, "agent-ls lint: %s: %v; linted without its memories\n", file, err)
			return in, pre, true
		}
	}
	storePath := ws.StorePath
	if c.store.path != "" {
		storePath = engine.StoreLocation(e.cwd, c.store.path)
	}
	ls := c.open(storePath)
	if ls.st == nil {
		return in, pre, true
	}
	c.wsOf[storePath] = ws
	facts, err := gather.Facts(ctx, ls.st, cfg.RoleTemplate.Name, ws.Config.Scope, e.now())
	if err != nil {
		c.warnStore(storePath, ls, err)
		return in, pre, true
	}
	in.Facts = facts
	return in, pre, true
}

// open opens a store read-only once per run; a failure is warned about
// once and the store's agents are linted schema-only.
func (c *lintCmd) open(path string) *lintStore {
	if ls, ok := c.stores[path]; ok {
		return ls
	}
	ls := &lintStore{}
	c.stores[path] = ls
	if storeMissing(path) {
		noteNoStore(c.e, "lint", path, "the authored agent only")
	}
	st, err := engine.OpenStore(c.e.context(), c.e.opener(), path, store.Options{Now: c.e.now, LockTimeout: c.store.lockTimeout, ReadOnly: true})
	if err != nil {
		c.warnStore(path, ls, err)
		return ls
	}
	ls.st = st
	return ls
}

func (c *lintCmd) warnStore(path string, ls *lintStore, err error) {
	if ls.failed {
		return
	}
	ls.failed = true
	level := "warning"
	if c.store.path != "" {
		c.storeFailed, level = true, "error"
	}
	why := "unreadable"
	switch {
	case errors.Is(err, store.ErrLocked):
		why = "locked"
	case errors.Is(err, store.ErrCorrupt):
		why = "corrupt"
	}
	fmt.Fprintf(c.e.stderr, "agent-ls lint: %s: store %s is %s (%v); linting without memory facts\n", level, engine.Redact(c.rel(path)), why, err)
	if ls.st != nil {
		ls.st.Close()
		ls.st = nil
	}
}

// rel names a path relative to the working directory when it is below it.
func (c *lintCmd) rel(path string) string {
	if r, err := filepath.Rel(c.e.cwd, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func (c *lintCmd) close() {
	for _, ls := range c.stores {
		if ls.st != nil {
			ls.st.Close()
		}
	}
}

func (c *lintCmd) writeJSON(v any) error {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.e.stdout, "%s\n", out)
	return err
}

func (c *lintCmd) printFindings(format string, fs []lint.FileFinding) error {
	switch format {
	case "sarif":
		out, err := lint.SARIF(fs, versionString())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.e.stdout, "%s\n", out)
		return err
	case "json":
		out := make([]lintFinding, 0, len(fs))
		for _, f := range fs {
			r := f.Range
			out = append(out, lintFinding{File: f.File, Line: r.Start.Line + 1, Column: r.Start.Character + 1,
				EndLine: r.End.Line + 1, EndColumn: r.End.Character + 1, Severity: f.Severity, Message: f.Message,
				Rule: f.Rule, Pointer: f.Pointer, Related: f.Related, Fixes: f.Fixes})
		}
		return c.writeJSON(out)
	}
	for _, f := range fs {
		r := f.Range
		if _, err := fmt.Fprintf(c.e.stdout, "%s:%d:%d: %s: %s [%s]\n", f.File, r.Start.Line+1, r.Start.Character+1, f.Severity, f.Message, f.Rule); err != nil {
			return err
		}
	}
	return nil
}

func (c *lintCmd) printRules(format string) int {
	rules := lint.Rules()
	if format == "json" {
		if err := c.writeJSON(rules); err != nil {
			fmt.Fprintf(c.e.stderr, "agent-ls lint: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	if format == "sarif" {
		fmt.Fprintln(c.e.stderr, "agent-ls lint: --list-rules prints text or json, not sarif")
		return exitUsage
	}
	tw := tabwriter.NewWriter(c.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tDEFAULT\tDESCRIPTION")
	for _, r := range rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.DefaultSeverity, r.Doc)
	}
	tw.Flush()
	fmt.Fprintln(c.e.stdout, "\nConfigure in .agent-ls.yaml (lint: {rules: {RULE: off|error|warning|info|hint}}); suppress with \"# agent-ls: ignore RULE reason\".")
	return exitOK
}

// lintReport is one agent file's health report.
type lintReport struct {
	File   string      `json:"file"`
	Agent  string      `json:"agent"`
	Health lint.Health `json:"health"`
}

func (c *lintCmd) printReports(format string, reports []lintReport) error {
	if reports == nil {
		reports = []lintReport{}
	}
	if format == "json" {
		return c.writeJSON(struct {
			Reports []lintReport `json:"reports"`
		}{reports})
	}
	w := c.e.stdout
	for i, r := range reports {
		h := r.Health
		if i > 0 {
			fmt.Fprintln(w)
		}
		over := ""
		if h.CeilingExceeded {
			over = " (over the ceiling)"
		}
		fmt.Fprintf(w, "%s (agent %s): composition %d/%d chars%s (%d authored, %d learned); %d promoted: %d applied, %d spilled, %d dropped; %s; %s\n",
			r.File, r.Agent, h.ComposedChars, h.Ceiling, over, h.AuthoredChars, h.ComposedChars-h.AuthoredChars, h.Promoted, h.Applied, h.Spilled, h.Dropped, schema.Count(h.Conflicts, "conflict"), schema.Count(h.PendingReviews, "pending review"))
		for _, cf := range h.ConflictRecords {
			fmt.Fprintf(w, "  %s\n", conflictLine(cf))
		}
		fmt.Fprintf(w, "  %-10s  %7s  %7s  %7s\n", "primitive", "records", "chars", "budget")
		for _, p := range h.Primitives {
			fmt.Fprintf(w, "  %-10s  %7d  %7d  %7d\n", p.Primitive, p.Records, p.Chars, p.Budget)
		}
		fmt.Fprintf(w, "  candidates: %d\n", len(h.Candidates))
		for _, cd := range h.Candidates {
			prog := ""
			if cd.Need > 0 {
				prog = ", " + schema.ConversationsOf(cd.Have, cd.Need)
			}
			fmt.Fprintf(w, "    %s %s (%s%s)\n", cd.ID, cd.Target, cd.Tier, prog)
		}
		if len(h.Rejected) > 0 {
			fmt.Fprintf(w, "  rejected (a human declined their promotion; new evidence reopens them): %s\n", strings.Join(h.Rejected, ", "))
		}
		stale := "none"
		if len(h.Stale) > 0 {
			stale = strings.Join(h.Stale, ", ")
		}
		fmt.Fprintf(w, "  stale currentState: %s\n", stale)
		fmt.Fprintf(w, "  recall: %d candidates (%d never corroborated, %d unused), %d spilled\n",
			h.Recall.Candidates, h.Recall.NeverCorroborated, h.Recall.Unused, h.Recall.Spilled)
	}
	return nil
}

// orphans runs the workspace rule orphan-records over every store the run
// opened: records of agents no agent file of the store's workspace names,
// reported on the workspace config (or the store file without one).
func (c *lintCmd) orphans(ctx context.Context) []lint.FileFinding {
	var out []lint.FileFinding
	for _, path := range sortedKeys(c.wsOf) {
		ws, ls := c.wsOf[path], c.stores[path]
		if ls == nil || ls.st == nil {
			continue
		}
		res, err := ls.st.Search(ctx, store.Query{Scope: ws.Config.Scope, Limit: store.Limit(store.Unlimited)})
		if err != nil {
			c.warnStore(path, ls, err)
			continue
		}
		counts := map[string]int{}
		for _, r := range res.Records {
			counts[r.Scope[store.AgentKey]]++
		}
		file := path
		if ws.ConfigPath != "" {
			file = ws.ConfigPath
		}
		for _, f := range lint.Orphans(counts, workspaceAgentNames(ws), ws.Config) {
			out = append(out, lint.FileFinding{File: c.rel(file), Finding: f})
		}
	}
	return out
}

// conflictLine is one conflict in one line of text, as lint --report and
// garden print it.
func conflictLine(cf engine.Conflict) string {
	switch cf.Kind {
	case engine.ConflictKeyCollision:
		return fmt.Sprintf("conflict on %s: %s renders (newest), %s is shadowed", cf.Target, cf.RecordID, cf.With)
	case engine.ConflictAuthoredWins:
		return fmt.Sprintf("authored wins on %s: %s", cf.Target, cf.Why)
	}
	other := "authored line " + cf.Authored
	if cf.With != "" {
		other = "record " + cf.With
	}
	return fmt.Sprintf("contradiction on %s: %s contradicts %s %q: %s", cf.Target, cf.RecordID, other, cf.Text, cf.Why)
}
