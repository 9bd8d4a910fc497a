package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// batchLine is one line of a `memory save-batch` file: the flags of
// `memory save` as JSON fields.
type batchLine struct {
	Kind         schema.Kind     `json:"kind"`
	Content      string          `json:"content"`
	Tags         []string        `json:"tags"`
	Target       string          `json:"target"`
	Payload      json.RawMessage `json:"payload"`
	Supersedes   string          `json:"supersedes"`
	Conversation string          `json:"conversation"`
	Run          string          `json:"run"`
	Expires      string          `json:"expires"`
}

// batchAnswer is one line's answer in `memory save-batch --format json`.
type batchAnswer struct {
	Line int `json:"line"`
	engine.SaveResult
}

// saveBatchHelp is what `memory save-batch --help` adds to its summary:
// what the file is and what each exit code means.
const saveBatchHelp = `Each line is one save request, memory save's flags as JSON fields ({"content", "kind", "tags", "target",
"payload", "supersedes", "conversation", "run", "expires"}), reconciled like memory save against the store and
the lines before it; the whole file is one transaction. Each line's answer is printed (FILE:LINE: ...).

Exit 0 every line saved; 1 some line answered refused, conflict or not_found (the file's other lines are
saved); 2 a malformed or invalid line (named FILE:LINE:COL), a usage or a store error:
nothing of the file is saved.`

// memSaveBatch saves every line of a JSONL file with evolve.SaveBatch: each
// line is reconciled like `memory save` (against the store and the earlier
// lines), and the whole file is one store transaction. A malformed line or
// an invalid request saves nothing (exit 2); refusals, conflicts and
// unknown supersedes are answers (exit 1 when any line was not saved).
func memSaveBatch(ctx context.Context, m *memCmd, args []string) int {
	fs := m.flags()
	var scope, actor, agentFile, conv, run string
	fs.StringVar(&scope, "scope", "", "record scope: "+scopeUsage+"; agent=NAME names the agent")
	fs.StringVar(&conv, "conversation", "", "provenance conversation `id` of every line (an agent's lines may not name their own)")
	fs.StringVar(&run, "run", "", "provenance run `id` of every line (an agent's lines may not name their own)")
	fs.StringVar(&actor, "actor", "", "who saves, `kind:name` (default: the workspace actor or human:$USER)")
	fs.StringVar(&agentFile, "agent", "", "the agent `file` (default: found in the workspace by the scope's agent name)")
	pos, code, ok := m.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return m.usagef("want one FILE.jsonl (- for stdin): lines of {\"content\", \"kind\", \"tags\", \"target\", \"payload\", \"supersedes\", \"conversation\", \"run\", \"expires\"}")
	}
	name := pos[0]
	in, done, err := m.openInput(name)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	defer done()
	reqs, lines, named, err := readSaveLines(name, in, m.e)
	if err != nil {
		// A malformed or invalid line is invalid input, as the engine's
		// checks below answer an invalid request (saveBatchHelp).
		m.errorf("%v; nothing saved", err)
		return exitUsage
	}
	ws, err := workspace.Find(m.e.cwd)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	recScope, err := withScopeFlag(ws.Config.Scope, scope)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	// Who saves is known before the store is opened, so a refused batch
	// creates no store file.
	loc0, err := locateStore(m.e, m.store)
	if err != nil {
		m.errorf("%v", err)
		return exitUsage
	}
	a, ok := m.actor(actor, loc0)
	if !ok {
		return exitUsage
	}
	// Provenance is the runtime's: an agent's batch is the one conversation
	// of --conversation; a human's lines may each name theirs.
	for i := range reqs {
		if a.Kind == store.ActorAgent && named[i] {
			m.errorf("%s:%d: an agent's batch takes its conversation and run from --conversation and --run (the runtime), not from its lines; nothing saved", name, lines[i])
			return exitUsage
		}
		if reqs[i].Provenance.ConversationID == "" && reqs[i].Provenance.RunID == "" {
			reqs[i].Provenance = schema.Provenance{ConversationID: conv, RunID: run}
		}
	}
	// The lines are checked before the store opens (engine.CheckSave): an
	// invalid batch, or one refused whole, creates no store file.
	res := make([]engine.SaveResult, len(reqs))
	answered := 0
	for i, r := range reqs {
		checked, err := engine.CheckSave(saveSpec(m.e, nil, ws, a, recScope, agentFile), r)
		if err != nil {
			if errors.Is(err, store.ErrInvalid) { // the line's; else the door's, for every line
				err = fmt.Errorf("%s:%d: %w", name, lines[i], err)
			}
			return m.storeError(fmt.Errorf("%w; nothing saved", err))
		}
		if checked != nil {
			res[i] = *checked
			answered++
		}
	}
	if answered < len(reqs) {
		s, _, code, ok := m.open(false)
		if !ok {
			return code
		}
		defer s.Close()
		var err error
		res, err = engine.SaveBatch(ctx, saveSpec(m.e, s, ws, a, recScope, agentFile), reqs)
		if err != nil {
			var be *engine.BatchError
			if errors.As(err, &be) && be.Index < len(lines) {
				err = fmt.Errorf("%s:%d: %w", name, lines[be.Index], be.Err)
			}
			return m.storeError(fmt.Errorf("%w; nothing saved", err))
		}
	}
	loc := loc0
	if agentFile == "" {
		var saved []schema.MemoryRecord
		for _, r := range res {
			if r.Status == engine.SaveSaved && r.Record != nil {
				saved = append(saved, *r.Record)
			}
		}
		warnOrphanAgents(m.e, m.name, loc.Workspace, saved)
	}
	notSaved := 0
	answers := make([]batchAnswer, len(res))
	for i, r := range res {
		answers[i] = batchAnswer{Line: lines[i], SaveResult: r}
		if r.Status != engine.SaveSaved {
			notSaved++
		}
	}
	if m.format == "json" {
		if c := m.writeJSON(answers); c != exitOK {
			return c
		}
	} else {
		for _, a := range answers {
			switch {
			case a.Status != engine.SaveSaved:
				fmt.Fprintf(m.e.stdout, "%s:%d: %s%s\n", name, a.Line, a.Status, prefixed(": ", a.Guidance))
			default:
				fmt.Fprintf(m.e.stdout, "%s:%d: saved %s%s\n", name, a.Line, a.Record.ID, prefixed(": ", a.Guidance))
			}
		}
	}
	if notSaved > 0 {
		m.errorf("%d of %d line(s) not saved", notSaved, len(res))
		return exitFindings
	}
	return exitOK
}

// readSaveLines decodes one save request per non-blank line, checking each
// as `memory save` checks its flags.
// named says which lines name their own conversation or run.
func readSaveLines(name string, r io.Reader, e *env) (reqs []engine.SaveRequest, lines []int, named []bool, err error) {
	err = decodeJSONL(name, r, func(n int, _ []byte, l batchLine) error {
		req, err := l.request(e)
		if err != nil {
			return err
		}
		named = append(named, l.Conversation != "" || l.Run != "")
		reqs = append(reqs, req)
		lines = append(lines, n)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if len(reqs) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: %w", name, invalidf("no save requests"))
	}
	return reqs, lines, named, nil
}

func (l batchLine) request(e *env) (engine.SaveRequest, error) {
	if strings.TrimSpace(l.Content) == "" {
		return engine.SaveRequest{}, invalidf("no content")
	}
	if l.Kind == "" {
		l.Kind = schema.KindFact
	}
	if !l.Kind.Valid() {
		return engine.SaveRequest{}, invalidf("kind %q: want fact, preference, episode or profile", l.Kind)
	}
	if l.Supersedes != "" {
		if err := schema.CheckIDArg("supersedes", l.Supersedes); err != nil {
			return engine.SaveRequest{}, invalidf("%v", err)
		}
	}
	req := engine.SaveRequest{Kind: l.Kind, Content: l.Content, Tags: l.Tags, Supersedes: l.Supersedes,
		Provenance: schema.Provenance{ConversationID: l.Conversation, RunID: l.Run}}
	if l.Target != "" {
		t, err := schema.ParseTarget(l.Target)
		if err != nil {
			return req, invalidf("%v", err) // a *schema.ValueError naming target
		}
		req.Target = &t
	}
	if len(l.Payload) > 0 && string(l.Payload) != "null" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, l.Payload); err != nil {
			return req, invalidf("payload: %v", err)
		}
		req.Payload = buf.Bytes()
	}
	if l.Expires != "" {
		t, err := parseExpiry(l.Expires, e.now())
		if err != nil {
			return req, invalidf("%v", err) // a *schema.ValueError naming expires
		}
		req.ExpiresAt = schema.FormatTime(t)
	}
	return req, nil
}
