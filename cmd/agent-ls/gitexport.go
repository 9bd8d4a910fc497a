package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/textkernel"
	"github.com/agent-ls/agent-ls/workspace"
)

// The trailers of an exported commit: the last ledger entry it covers and
// that entry's hash. A second export appends after the seq of HEAD's, and
// refuses a repository whose HEAD has none (not made by export) or whose
// hash is not the store's (another store's history).
const (
	trailerSeq  = "Agent-Ls-Ledger-Seq"
	trailerHash = "Agent-Ls-Ledger-Hash"
)

// promptFileSuffix names an agent's file in the exported repository.
const promptFileSuffix = ".prompt.md"

// gitExportResult is what `memory export --git` did.
type gitExportResult struct {
	Dir string `json:"dir"`
	// Commits is the number of commits this run appended.
	Commits int `json:"commits"`
	// Seq is the last ledger entry the repository covers now; Head its
	// HEAD commit ("" when no entry changed a composition yet).
	Seq    uint64   `json:"seq"`
	Head   string   `json:"head,omitempty"`
	Agents []string `json:"agents"`
}

// errNotExport is a DIR export refuses (exit 1).
type errNotExport struct{ msg string }

func (e *errNotExport) Error() string { return e.msg }

// gitDir is a repository export writes through the git binary, with a
// controlled environment: no user or system config, no prompts.
type gitDir struct{ dir string }

func (g gitDir) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), extra...)
}

// run runs git in the directory with stdin and returns its stdout.
func (g gitDir) run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.dir
	cmd.Env = g.env()
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out.String(), nil
}

// prepare makes dir a repository export may write: created (git init) when
// missing or an empty directory; a repository whose HEAD is an exported
// commit (its trailers returned) or has no commit yet. Anything else is
// refused.
func (g gitDir) prepare(ctx context.Context) (head string, seq uint64, hash string, err error) {
	fi, err := os.Stat(g.dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(g.dir, 0o755); err != nil {
			return "", 0, "", err
		}
		_, err := g.run(ctx, nil, "init", "-q", "-b", "main")
		return "", 0, "", err
	case err != nil:
		return "", 0, "", err
	case !fi.IsDir():
		return "", 0, "", &errNotExport{g.dir + " is not a directory"}
	}
	top, err := g.run(ctx, nil, "rev-parse", "--show-toplevel")
	isRepo := false
	if err == nil {
		a, _ := filepath.EvalSymlinks(strings.TrimSpace(top))
		b, _ := filepath.EvalSymlinks(g.dir)
		isRepo = a != "" && a == b
	}
	if !isRepo {
		ents, err := os.ReadDir(g.dir)
		if err != nil {
			return "", 0, "", err
		}
		if len(ents) > 0 {
			return "", 0, "", &errNotExport{g.dir + " is neither empty nor a repository made by memory export --git"}
		}
		_, err = g.run(ctx, nil, "init", "-q", "-b", "main")
		return "", 0, "", err
	}
	out, err := g.run(ctx, nil, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", 0, "", nil // no commit yet: an empty repository
	}
	head = strings.TrimSpace(out)
	msg, err := g.run(ctx, nil, "log", "-1", "--format=%B", head)
	if err != nil {
		return "", 0, "", err
	}
	for _, l := range strings.Split(msg, "\n") {
		if v, ok := strings.CutPrefix(l, trailerSeq+": "); ok {
			seq, _ = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
		if v, ok := strings.CutPrefix(l, trailerHash+": "); ok {
			hash = strings.TrimSpace(v)
		}
	}
	if seq == 0 || hash == "" {
		return "", 0, "", &errNotExport{g.dir + " is a git repository not made by memory export --git (its HEAD has no " + trailerSeq + " trailer)"}
	}
	return head, seq, hash, nil
}

// files reads the prompt files of commit head.
func (g gitDir) files(ctx context.Context, head string) (map[string]string, error) {
	files := map[string]string{}
	if head == "" {
		return files, nil
	}
	out, err := g.run(ctx, nil, "ls-tree", "--name-only", head)
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Fields(out) {
		if !strings.HasSuffix(name, promptFileSuffix) {
			continue
		}
		data, err := g.run(ctx, nil, "cat-file", "blob", head+":"+name)
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	return files, nil
}

// exportAgent is one agent file of the workspace, loaded.
type exportAgent struct {
	file, name string
	cfg        *schema.AgentConfig
}

// workspaceAgents loads every agent file of ws, one per roleTemplate.name
// (the first in path order wins; the others are reported).
func (m *memCmd) workspaceAgents(ws *workspace.Workspace) ([]exportAgent, error) {
	files, err := ws.AgentFiles()
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	seen := map[string]string{}
	var out []exportAgent
	for _, f := range files {
		data, err := workspace.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cfg, err := engine.LoadAgent(f, data)
		if err != nil {
			return nil, err
		}
		name := cfg.RoleTemplate.Name
		if strings.ContainsAny(name, `/\`) {
			// NAME.prompt.md is one file at the repository's root: a
			// separator would put it elsewhere (../ out of the tree).
			return nil, fmt.Errorf("%s: agent name %q cannot name its file in the repository (NAME%s): it holds a path separator", f, name, promptFileSuffix)
		}
		if prev, ok := seen[name]; ok {
			m.errorf("%s: agent %s is already exported from %s; skipped", f, name, prev)
			continue
		}
		seen[name] = f
		out = append(out, exportAgent{file: f, name: name, cfg: cfg})
	}
	return out, nil
}

// memExportGit writes the agents' evolution as a git repository in dir:
// one commit per ledger entry that changes a composition (entries of one
// timestamp are one point of `render --at` and so one commit), each holding
// NAME.prompt.md for every agent file of the workspace, byte-equal to
// `agent-ls render` at that point (engine.Compose with At, render's path).
// A repository made by an earlier export gets only the entries after its
// HEAD's.
func memExportGit(ctx context.Context, m *memCmd, dir string, s store.Store, loc storeLocation, view engine.View) int {
	if view.Confined() {
		m.errorf("--git exports every agent's evolution: an agent actor (%s) may not; a human or system actor may", view.Agent)
		return exitFindings
	}
	if loc.Workspace == nil {
		m.errorf("--git needs a workspace (its agent files)")
		return exitUsage
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(m.e.cwd, dir)
	}
	g := gitDir{dir: filepath.Clean(dir)}
	if _, err := exec.LookPath("git"); err != nil {
		m.errorf("--git needs the git command: %v", err)
		return exitUsage
	}
	// The agent files are read before the directory is touched: one that
	// cannot be exported leaves nothing behind.
	agents, err := m.workspaceAgents(loc.Workspace)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	head, lastSeq, lastHash, err := g.prepare(ctx)
	var ne *errNotExport
	if errors.As(err, &ne) {
		m.errorf("%v", err)
		return exitFindings
	}
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	prev, err := g.files(ctx, head)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	scope, err := withScopeFlag(loc.Workspace.Config.Scope, "")
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	policy := engine.PolicyFrom(loc.Workspace.Config)
	if head == "" {
		// Before the first entry every agent is as authored: the first
		// commit is the first entry that changes a composition.
		for _, a := range agents {
			cr, err := engine.Compose(ctx, engine.ComposeRequest{AgentFile: a.file, Agent: a.cfg, Scope: scope, Policy: policy})
			if err != nil {
				m.errorf("%s: %v", a.name, err)
				return exitUsage
			}
			prev[a.name+promptFileSuffix] = cr.Prompt.Text()
		}
	}
	res := gitExportResult{Dir: g.dir, Seq: lastSeq, Head: head, Agents: []string{}}
	for _, a := range agents {
		res.Agents = append(res.Agents, a.name)
	}

	var stream bytes.Buffer
	ref := "refs/heads/main"
	if out, err := g.run(ctx, nil, "symbolic-ref", "-q", "HEAD"); err == nil && strings.TrimSpace(out) != "" {
		ref = strings.TrimSpace(out)
	}
	err = s.View(ctx, func(r store.Reader) error {
		tx := store.ReadOnly(r)
		entries, err := r.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			return err
		}
		records := map[string]schema.MemoryRecord{}
		start := 0
		for i, e := range entries {
			if e.Record != nil {
				records[e.Record.ID] = *e.Record
			}
			if lastSeq > 0 && e.Seq == lastSeq {
				if e.Hash != lastHash {
					return &errNotExport{fmt.Sprintf("%s was exported from another store: its ledger entry %d has hash %s, this store's %s", g.dir, lastSeq, lastHash, e.Hash)}
				}
				start = i + 1
			}
		}
		if lastSeq > 0 && start == 0 {
			return &errNotExport{fmt.Sprintf("%s was exported from another store: this store's ledger has no entry %d", g.dir, lastSeq)}
		}
		first := true
		for i := start; i < len(entries); {
			// One point of render --at: the entries of one timestamp.
			j := i + 1
			for j < len(entries) && entries[j].At == entries[i].At {
				j++
			}
			group := entries[i:j]
			i = j
			if bookkeeping(group) {
				continue
			}
			cur := map[string]string{}
			changed := false
			for _, a := range agents {
				cr, err := engine.Compose(ctx, engine.ComposeRequest{AgentFile: a.file, Agent: a.cfg, Store: tx, Scope: scope, At: group[0].At, Policy: policy})
				if err != nil {
					return fmt.Errorf("%s at %s: %w", a.name, group[0].At, err)
				}
				name := a.name + promptFileSuffix
				cur[name] = cr.Prompt.Text()
				if p, ok := prev[name]; !ok || p != cur[name] {
					changed = true
				}
			}
			if !changed && len(cur) == len(prev) {
				continue
			}
			from := ""
			if first {
				// The first commit continues the branch from its tip.
				from = head
			}
			if err := writeCommit(&stream, ref, from, group, records, cur); err != nil {
				return err
			}
			first = false
			prev = cur
			res.Commits++
			res.Seq = group[len(group)-1].Seq
		}
		return nil
	})
	if errors.As(err, &ne) {
		m.errorf("%v", err)
		return exitFindings
	}
	if err != nil {
		return m.storeError(err)
	}
	if res.Commits > 0 {
		stream.WriteString("done\n")
		if _, err := g.run(ctx, &stream, "fast-import", "--quiet", "--done"); err != nil {
			m.errorf("%v", err)
			return exitUsage
		}
		// The work tree shows HEAD's files.
		if _, err := g.run(ctx, nil, "reset", "-q", "--hard"); err != nil {
			m.errorf("%v", err)
			return exitUsage
		}
		out, err := g.run(ctx, nil, "rev-parse", "HEAD")
		if err != nil {
			m.errorf("%v", err)
			return exitUsage
		}
		res.Head = strings.TrimSpace(out)
	}
	if m.format == "json" {
		return m.writeJSON(res)
	}
	if res.Commits == 0 {
		fmt.Fprintf(m.e.stdout, "%s is up to date (ledger entry %d)\n", g.dir, res.Seq)
		return exitOK
	}
	fmt.Fprintf(m.e.stdout, "exported %s to %s (%s, up to ledger entry %d)\n",
		schema.Count(res.Commits, "commit"), g.dir, schema.Count(len(res.Agents), "agent"), res.Seq)
	return exitOK
}

// bookkeeping reports whether every entry of group only records proposals
// or conflicts, which no composition reads: the export does not compose at
// it.
func bookkeeping(group []store.LedgerEntry) bool {
	for _, e := range group {
		switch e.Op {
		case store.OpPropose, store.OpReject, store.OpExpire, store.OpConflict:
		default:
			return false
		}
	}
	return true
}

// gitIdent is a git identity of an actor: kind:name <name@kind.agent-ls.invalid>.
func gitIdent(a store.Actor) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '<' || r == '>' || r == '\n' || r == '\r' || r == 0 {
				return '_'
			}
			return r
		}, s)
	}
	name := clean(a.String())
	if strings.TrimSpace(name) == "" {
		name = "unknown"
	}
	local := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, a.Name)
	if local == "" {
		local = "unknown"
	}
	kind := string(a.Kind)
	if kind == "" {
		kind = "unknown"
	}
	return fmt.Sprintf("%s <%s@%s.agent-ls.invalid>", name, local, kind)
}

// leadEntry is the entry of group a commit is named after: the first that
// changes what composes (a promotion, demotion, approval, supersede,
// invalidation, deletion or import), else the first that is not
// bookkeeping (a write, a corroboration).
func leadEntry(group []store.LedgerEntry) store.LedgerEntry {
	for _, e := range group {
		switch e.Op {
		case store.OpPromote, store.OpDemote, store.OpApprove, store.OpSupersede, store.OpInvalidate, store.OpDelete, store.OpImport:
			return e
		}
	}
	for _, e := range group {
		if !bookkeeping([]store.LedgerEntry{e}) {
			return e
		}
	}
	return group[0]
}

// writeCommit appends one fast-import commit of group to w: the author is
// the actor of the group's lead entry (leadEntry), the dates the entries'
// time; the message the events, their records and provenance,
// and the trailers.
func writeCommit(w *bytes.Buffer, ref, from string, group []store.LedgerEntry, records map[string]schema.MemoryRecord, files map[string]string) error {
	lead := leadEntry(group)
	t, err := schema.ParseTime(lead.At)
	if err != nil {
		return fmt.Errorf("ledger entry %d: %w", lead.Seq, err)
	}
	date := fmt.Sprintf("%d +0000", t.Unix())
	last := group[len(group)-1]
	var msg strings.Builder
	msg.WriteString(entrySubject(lead, records) + "\n\n")
	for _, e := range group {
		describeEntry(&msg, e, records)
	}
	fmt.Fprintf(&msg, "\n%s: %d\n%s: %s\n", trailerSeq, last.Seq, trailerHash, last.Hash)
	fmt.Fprintf(w, "commit %s\nauthor %s %s\ncommitter agent-ls export <export@agent-ls.invalid> %s\ndata %d\n%s\n",
		ref, gitIdent(lead.Actor), date, date, msg.Len(), msg.String())
	if from != "" {
		fmt.Fprintf(w, "from %s\n", from)
	}
	w.WriteString("deleteall\n")
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", n, len(files[n]), files[n])
	}
	w.WriteString("\n")
	return nil
}

// entryRecord is the record an entry is about.
func entryRecord(e store.LedgerEntry, records map[string]schema.MemoryRecord) (schema.MemoryRecord, bool) {
	if e.Record != nil {
		return *e.Record, true
	}
	id := e.RecordID
	if id == "" && e.Proposal != nil {
		id = e.Proposal.RecordID
	}
	r, ok := records[id]
	return r, ok
}

// entrySubject is a commit's subject: the event and its record.
func entrySubject(e store.LedgerEntry, records map[string]schema.MemoryRecord) string {
	s := string(e.Op)
	if e.Op == store.OpApprove && e.Proposal != nil {
		s = "approve " + string(e.Proposal.Kind)
	}
	if r, ok := entryRecord(e, records); ok {
		s += " " + r.ID
		if r.Target != nil {
			s += " (" + r.Target.String() + ")"
		}
		s += ": " + textkernel.Clip(oneLine(r.Content), 72)
	} else if e.RecordID != "" {
		s += " " + e.RecordID
	}
	return s
}

// describeEntry writes an entry's event, record and provenance.
func describeEntry(w *strings.Builder, e store.LedgerEntry, records map[string]schema.MemoryRecord) {
	fmt.Fprintf(w, "Ledger entry %d: %s by %s at %s\n", e.Seq, e.Op, e.Actor, e.At)
	if e.Approver != "" {
		fmt.Fprintf(w, "  approver: %s\n", e.Approver)
	}
	if e.Tier != "" {
		fmt.Fprintf(w, "  tier: %s\n", e.Tier)
	}
	if e.Proposal != nil {
		fmt.Fprintf(w, "  proposal: %s (%s %s)\n", e.Proposal.ID, e.Proposal.Kind, e.Proposal.RecordID)
	}
	if e.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", oneLine(e.Reason))
	}
	if r, ok := entryRecord(e, records); ok {
		fmt.Fprintf(w, "  record: %s (%s", r.ID, r.Kind)
		if r.Target != nil {
			fmt.Fprintf(w, ", target %s", r.Target.String())
		}
		fmt.Fprintf(w, ")\n  content: %s\n", oneLine(r.Content))
		if p := r.Provenance; p.ConversationID != "" || p.RunID != "" {
			fmt.Fprintf(w, "  provenance: conversation %s, run %s\n", orNone(p.ConversationID), orNone(p.RunID))
		}
		if e.RecordID != "" && e.RecordID != r.ID {
			fmt.Fprintf(w, "  supersedes: %s\n", e.RecordID)
		}
	}
	if e.Support != nil && e.Support.ConversationID != "" {
		fmt.Fprintf(w, "  support: conversation %s\n", e.Support.ConversationID)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
