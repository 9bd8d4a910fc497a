package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// stepClock advances one second per reading, so every write has its own time.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// fixture is a temp workspace (support-bot agent file, bbolt store) with an
// MCP server bound to support-bot over in-memory transports.
type fixture struct {
	t      *testing.T
	dir    string
	db     string
	clock  *stepClock
	srv    *Server
	client *mcp.ClientSession
}

const agentName = "support-bot"

// newFixture starts a server over a bbolt file in a temp dir; each opt may
// change its config before it starts.
func newFixture(t *testing.T, opts ...func(*fixture, *Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "agents", "support.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	agentFile := filepath.Join(dir, "support.agent.yaml")
	if err := os.WriteFile(agentFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, db: filepath.Join(dir, "memory.db"),
		clock: &stepClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}}
	cfg := Config{
		AgentFile:  agentFile,
		Workspace:  schema.WorkspaceConfig{},
		Scope:      map[string]string{"project": "atlas", store.AgentKey: "spoofed"},
		Provenance: schema.Provenance{ConversationID: "conv-start", RunID: "run-start"},
		Open: func(_ context.Context, readOnly bool) (store.Store, error) {
			return bolt.Open(f.db, store.Options{Now: f.clock.now, ReadOnly: readOnly})
		},
		Now: f.clock.now,
	}
	for _, opt := range opts {
		opt(f, &cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.client = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		cancel()
	})
	return f
}

// call calls a tool and decodes its structured output into out; it fails
// the test on a protocol error or a tool error.
func (f *fixture) call(name string, args map[string]any, out any) {
	f.t.Helper()
	res := f.callRaw(name, args)
	if res.IsError {
		f.t.Fatalf("%s %v: tool error: %s", name, args, text(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		f.t.Fatalf("%s: decode %s: %v", name, data, err)
	}
}

func (f *fixture) callRaw(name string, args map[string]any) *mcp.CallToolResult {
	f.t.Helper()
	return f.callMeta(name, args, nil)
}

// callMeta calls a tool with the request's _meta set, as a runtime does.
func (f *fixture) callMeta(name string, args map[string]any, meta map[string]any) *mcp.CallToolResult {
	f.t.Helper()
	res, err := f.client.CallTool(context.Background(), &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
	if err != nil {
		f.t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// withStore opens the fixture's store directly (the host's side).
func (f *fixture) withStore(fn func(store.Store)) {
	f.t.Helper()
	st, err := bolt.Open(f.db, store.Options{Now: f.clock.now})
	if err != nil {
		f.t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

// foreign writes a record of another agent in the same project, and a shared one.
func (f *fixture) seedOthers() (foreignID, sharedID string) {
	f.withStore(func(st store.Store) {
		recs, err := st.Write(context.Background(), []store.WriteRequest{
			{Scope: map[string]string{"project": "atlas", store.AgentKey: "billing-bot"}, Kind: schema.KindFact, Content: "Invoices close on the 25th of each month"},
			{Scope: map[string]string{"project": "atlas"}, Kind: schema.KindFact, Content: "Invoices are issued in EUR"},
			{Scope: map[string]string{"project": "other", store.AgentKey: agentName}, Kind: schema.KindFact, Content: "Invoices for the other project"},
		}, store.Actor{Kind: store.ActorHuman, Name: "dana"})
		if err != nil {
			f.t.Fatal(err)
		}
		foreignID, sharedID = recs[0].ID, recs[1].ID
	})
	return
}

func (f *fixture) composed() ComposeOutput {
	f.t.Helper()
	var out ComposeOutput
	f.call(ToolCompose, map[string]any{}, &out)
	return out
}

// fragmentIDs maps each fragment text of the composed prompt to its memory ids.
func fragmentIDs(c ComposeOutput) map[string][]string {
	m := map[string][]string{}
	for _, s := range c.Sections {
		for _, fr := range s.Fragments {
			if len(fr.MemoryIDs) > 0 {
				m[fr.Text] = fr.MemoryIDs
			}
		}
	}
	return m
}

func hasFragment(c ComposeOutput, substr, id string) bool {
	for txt, ids := range fragmentIDs(c) {
		if strings.Contains(txt, substr) && slices.Contains(ids, id) {
			return true
		}
	}
	return false
}

func TestToolsAndResourceListed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	tools, err := f.client.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	want := []string{ToolCompose, ToolInvalidate, ToolLearnings, ToolList, ToolSave, ToolSearch}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want exactly %v (no approve, promote or delete)", names, want)
	}
	res, err := f.client.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 || res.Resources[0].URI != "agent-ls://compose/support-bot" {
		t.Fatalf("resources = %+v", res.Resources)
	}
	if f.srv.Agent() != agentName || f.srv.Actor().String() != "agent:support-bot" {
		t.Fatalf("bound to %q as %v; the scope's agent key must not override roleTemplate.name", f.srv.Agent(), f.srv.Actor())
	}
}

func TestSaveFactRendersWithItsID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var out SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "Deploys freeze on Fridays after 15:00 CET",
		"target": "background.projectContext.deploy_window"}, &out)
	if out.Status != string(engine.SaveSaved) || out.Tier != "auto" || out.State != string(engine.StatePromoted) || out.ID == "" || out.Corroborated {
		t.Fatalf("save = %+v", out)
	}
	if out.Record.ConversationID != "conv-start" || out.Record.RunID != "run-start" {
		t.Fatalf("provenance = %q/%q, want the start flags", out.Record.ConversationID, out.Record.RunID)
	}
	if got := out.Record.Scope; got["agent"] != agentName || got["project"] != "atlas" {
		t.Fatalf("scope = %v", got)
	}
	c := f.composed()
	if c.Agent != agentName || !strings.Contains(c.Text, "Deploys freeze on Fridays") {
		t.Fatalf("composed prompt lacks the fact:\n%s", c.Text)
	}
	if !hasFragment(c, "Deploys freeze on Fridays", out.ID) {
		t.Fatalf("no fragment attributed to %s: %v", out.ID, fragmentIDs(c))
	}
	rr, err := f.client.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI(agentName)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "Deploys freeze on Fridays") || rr.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("resource = %+v", rr.Contents)
	}
	if _, err := f.client.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ResourceURI("billing-bot")}); err == nil {
		t.Fatal("another agent's composed prompt was readable")
	}
}

func TestSaveTargetForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		target any
		want   string // compact form saved; "" = tool error
	}{
		{"compact string", "judgment.refunds.heuristics", "judgment.refunds.heuristics"},
		{"union object", map[string]any{"primitive": "judgment", "domain": "refunds", "slot": "heuristics"}, "judgment.refunds.heuristics"},
		{"background object", map[string]any{"primitive": "background", "section": "conventions", "key": "tone_words"}, "background.conventions.tone_words"},
		{"bad string", "judgment", ""},
		{"bad object", map[string]any{"primitive": "nope"}, ""},
		{"number", 42, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			args := map[string]any{"kind": "fact", "content": "Lesson number " + string(rune('a'+i)) + " about refunds", "target": tt.target}
			res := f.callRaw(ToolSave, args)
			if tt.want == "" {
				if !res.IsError || !strings.Contains(text(res), "target") {
					t.Fatalf("want a tool error naming the target, got %v %s", res.IsError, text(res))
				}
				return
			}
			if res.IsError {
				t.Fatalf("tool error: %s", text(res))
			}
			var out SaveOutput
			data, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatal(err)
			}
			if out.Status != string(engine.SaveSaved) || out.Record.Target != tt.want {
				t.Fatalf("save = %+v", out)
			}
		})
	}
}

func TestEarnedHeuristicFromTwoConversations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lesson := "Offer an exchange before a refund when the size is wrong"
	var first, second, again SaveOutput
	save := func(conv, run string, out *SaveOutput) {
		t.Helper()
		meta := map[string]any{MetaConversationID: conv}
		if run != "" {
			meta[MetaRunID] = run
		}
		res := f.callMeta(ToolSave, map[string]any{"kind": "fact", "content": lesson, "target": "judgment.refunds.heuristics"}, meta)
		if res.IsError {
			t.Fatalf("save in %s: %s", conv, text(res))
		}
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatal(err)
		}
	}
	save("c1", "", &first)
	if first.Status != string(engine.SaveSaved) || first.Tier != "earned" || first.State != string(engine.StateCandidate) {
		t.Fatalf("first save = %+v", first)
	}
	if first.Record.ConversationID != "c1" || first.Record.RunID != "" {
		t.Fatalf("the request's _meta conversation must win over the start flags (and drop their run): %+v", first.Record)
	}
	if c := f.composed(); strings.Contains(c.Text, lesson) {
		t.Fatal("a candidate rendered before it recurred")
	}
	// The same conversation again never counts twice.
	save(" C1", "", &again)
	if again.Corroborated || again.ID != first.ID || again.State != string(engine.StateCandidate) || again.Record.Conversations != 1 {
		t.Fatalf("same conversation again = %+v", again)
	}
	save("c2", "r2", &second)
	if !second.Corroborated || second.ID != first.ID || second.State != string(engine.StatePromoted) {
		t.Fatalf("second conversation = %+v", second)
	}
	if second.Record.Conversations != 2 {
		t.Fatalf("conversations = %d, want 2", second.Record.Conversations)
	}
	if !hasFragment(f.composed(), lesson, first.ID) {
		t.Fatal("the earned heuristic does not render with its id")
	}
	var ls LearningsOutput
	f.call(ToolLearnings, map[string]any{"since": "1h"}, &ls)
	if len(ls.Learnings) != 1 || ls.Learnings[0].Op != "promote" || ls.Learnings[0].RecordID != first.ID || ls.Learnings[0].Content != lesson {
		t.Fatalf("learnings = %+v", ls)
	}
	f.call(ToolLearnings, map[string]any{"since": "2026-03-02T00:00:00Z"}, &ls)
	if len(ls.Learnings) != 0 {
		t.Fatalf("learnings since tomorrow = %+v", ls.Learnings)
	}
	if res := f.callRaw(ToolLearnings, map[string]any{"since": "last tuesday"}); !res.IsError {
		t.Fatal("a bad since was accepted")
	}
	// An agent cannot retire an earned promotion on its own word: a human reviews it.
	var inv InvalidateOutput
	f.call(ToolInvalidate, map[string]any{"id": first.ID, "reason": "customers prefer refunds"}, &inv)
	if inv.Status != StatusProposed || inv.ProposalID == "" || inv.Tier != "earned" {
		t.Fatalf("earned invalidate = %+v", inv)
	}
	if !hasFragment(f.composed(), lesson, first.ID) {
		t.Fatal("the earned heuristic stopped rendering on an agent's invalidate")
	}
}

func TestSaveRefusalsAndConflicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	foreign, _ := f.seedOthers()
	var fact SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "Support hours are 08:00-20:00 CET", "target": "background.teamContext.hours"}, &fact)

	tests := []struct {
		name       string
		args       map[string]any
		status     string
		existingID string
		guidance   string
	}{
		{"key conflict", map[string]any{"kind": "fact", "content": "Support hours are 09:00-17:00 CET", "target": "background.teamContext.hours"},
			string(engine.SaveConflict), fact.ID, "supersede"},
		{"locked target", map[string]any{"kind": "fact", "content": "Always call issue_refund twice", "target": "manual.issue_refund.workflows"},
			string(engine.SaveRefused), "", "locked"},
		{"new judgment domain", map[string]any{"kind": "fact", "content": "Ship gift wrap for free", "target": "judgment.gifting.heuristics"},
			string(engine.SaveRefused), "", "gifting"},
		{"supersede unknown", map[string]any{"kind": "fact", "content": "x replaces y", "supersedes": "mem_doesnotexist"},
			string(engine.SaveNotFound), "", "no record mem_doesnotexist"},
		{"supersede foreign", map[string]any{"kind": "fact", "content": "x replaces y", "supersedes": foreign},
			string(engine.SaveNotFound), "", "no record " + foreign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out SaveOutput
			f.call(ToolSave, tt.args, &out)
			if out.Status != tt.status || !strings.Contains(out.Guidance, tt.guidance) {
				t.Fatalf("got %+v, want status %s with guidance containing %q", out, tt.status, tt.guidance)
			}
			if tt.existingID != "" && (out.Existing == nil || out.Existing.ID != tt.existingID) {
				t.Fatalf("existing = %+v, want %s", out.Existing, tt.existingID)
			}
			if tt.status != string(engine.SaveSaved) && out.ID != "" {
				t.Fatalf("a refused save reported id %s", out.ID)
			}
			if strings.Contains(out.Guidance, "billing-bot") || strings.Contains(out.Guidance, "Invoices") {
				t.Fatalf("guidance leaks the foreign record: %s", out.Guidance)
			}
		})
	}
	// The foreign id and a missing id answer alike (only the id differs).
	var a, b SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "z", "supersedes": foreign}, &a)
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "z", "supersedes": "mem_missing"}, &b)
	if strings.ReplaceAll(a.Guidance, foreign, "ID") != strings.ReplaceAll(b.Guidance, "mem_missing", "ID") || a.Status != b.Status {
		t.Fatalf("foreign %+v vs missing %+v", a, b)
	}
	// A supersede of the agent's own fact replaces it.
	var sup SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "Support hours are 09:00-17:00 CET", "target": "background.teamContext.hours", "supersedes": fact.ID}, &sup)
	if sup.Status != string(engine.SaveSaved) || sup.SupersededID != fact.ID {
		t.Fatalf("supersede = %+v", sup)
	}
	if c := f.composed(); !hasFragment(c, "09:00-17:00", sup.ID) || hasFragment(c, "08:00-20:00", fact.ID) {
		t.Fatalf("after supersede: %v", fragmentIDs(c))
	}
}

func TestInvalidInputIsAToolError(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolSave, map[string]any{"kind": "opinion", "content": "x"}, "kind"},
		{ToolSave, map[string]any{"kind": "fact", "content": "   "}, "content"},
		// No kind is a fact, as on the command line (TestSaveKindDefaultsToFact).
		{ToolSave, map[string]any{"content": "bad kind", "kind": "opinion"}, "kind"},
		{ToolSave, map[string]any{"kind": "fact"}, "content"},
		{ToolSearch, map[string]any{"query": ""}, "query"},
		{ToolSearch, map[string]any{"query": "x", "kinds": []string{"opinion"}}, "kind"},
		{ToolList, map[string]any{"limit": -2}, "limit"},
		{ToolInvalidate, map[string]any{"id": "mem_x", "reason": ""}, "reason"},
		{ToolLearnings, map[string]any{"since": ""}, "since"},
		{ToolCompose, map[string]any{"at": "yesterday-ish"}, "yesterday-ish"},
	}
	for _, tt := range tests {
		res, err := f.client.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			// Schema violations may be protocol errors; they must still name the field.
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s %v: error %v does not name %q", tt.tool, tt.args, err, tt.want)
			}
			continue
		}
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v: isError=%v %q, want an error naming %q", tt.tool, tt.args, res.IsError, text(res), tt.want)
		}
	}
	if _, err := f.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_delete", Arguments: map[string]any{"id": "x"}}); err == nil {
		t.Error("memory_delete exists")
	}
}

func TestSearchAndListSeeOnlyThisAgentsView(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	foreign, shared := f.seedOthers()
	var own SaveOutput
	f.call(ToolSave, map[string]any{"kind": "preference", "content": "Invoices should be sent as PDF", "tags": []string{"billing"}}, &own)
	ids := func(out RecordsOutput) []string {
		var s []string
		for _, r := range out.Records {
			s = append(s, r.ID)
		}
		slices.Sort(s)
		return s
	}
	want := []string{own.ID, shared}
	slices.Sort(want)
	var out RecordsOutput
	f.call(ToolSearch, map[string]any{"query": "invoices"}, &out)
	if got := ids(out); !slices.Equal(got, want) {
		t.Fatalf("search = %v, want %v (never %s nor the other project's)", got, want, foreign)
	}
	f.call(ToolList, map[string]any{}, &out)
	if got := ids(out); !slices.Equal(got, want) {
		t.Fatalf("list = %v, want %v", got, want)
	}
	f.call(ToolList, map[string]any{"kinds": []string{"preference"}}, &out)
	if got := ids(out); !slices.Equal(got, []string{own.ID}) {
		t.Fatalf("list preferences = %v", got)
	}
	f.call(ToolSearch, map[string]any{"query": "invoices", "tags": []string{"billing"}}, &out)
	if got := ids(out); !slices.Equal(got, []string{own.ID}) {
		t.Fatalf("search tag billing = %v", got)
	}
	f.call(ToolList, map[string]any{"limit": 1}, &out)
	if len(out.Records) != 1 {
		t.Fatalf("limit 1 gave %d", len(out.Records))
	}
	f.call(ToolSearch, map[string]any{"query": "nothingmatchesthis"}, &out)
	if out.Records == nil || len(out.Records) != 0 {
		t.Fatalf("no hits = %#v, want an empty list", out.Records)
	}
}

func TestInvalidate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	foreign, shared := f.seedOthers()
	ctx := context.Background()

	var fact SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "The warehouse is in Leipzig", "target": "background.projectContext.warehouse"}, &fact)
	var out InvalidateOutput
	f.call(ToolInvalidate, map[string]any{"id": fact.ID, "reason": "moved to Halle"}, &out)
	if out.Status != StatusInvalidated {
		t.Fatalf("auto-tier invalidate = %+v", out)
	}
	if strings.Contains(f.composed().Text, "Leipzig") {
		t.Fatal("an invalidated auto fact still renders")
	}

	// Guarded: saved as a candidate with a proposal; a human approves it.
	constraint := "Never refund gift cards"
	var g SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": constraint, "target": "judgment.refunds.constraints"}, &g)
	if g.Tier != "guarded" || g.State != string(engine.StatePending) || g.ProposalID == "" {
		t.Fatalf("guarded save = %+v", g)
	}
	f.withStore(func(st store.Store) {
		data, _ := os.ReadFile(f.srv.cfg.AgentFile)
		_, cfg, _, err := schema.LoadAgent("support.agent.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		eng := engine.NewAgent(engine.AgentSpec{Store: st, Agent: cfg, Scope: map[string]string{"project": "atlas", "agent": agentName}, Now: f.clock.now})
		if _, err := eng.Approve(ctx, g.ProposalID, store.Actor{Kind: store.ActorHuman, Name: "dana"}, "ok"); err != nil {
			t.Fatal(err)
		}
	})
	if !hasFragment(f.composed(), constraint, g.ID) {
		t.Fatal("approved constraint does not render")
	}
	f.call(ToolInvalidate, map[string]any{"id": g.ID, "reason": "gift cards are refundable now"}, &out)
	if out.Status != StatusProposed || out.ProposalID == "" || !strings.Contains(out.Message, "proposed for human review") {
		t.Fatalf("guarded invalidate = %+v", out)
	}
	if !hasFragment(f.composed(), constraint, g.ID) {
		t.Fatal("a guarded-promoted record stopped rendering on an agent's invalidate")
	}

	// Foreign and missing ids answer alike; the foreign record is untouched.
	var a, b InvalidateOutput
	f.call(ToolInvalidate, map[string]any{"id": foreign, "reason": "wrong"}, &a)
	f.call(ToolInvalidate, map[string]any{"id": "mem_missing", "reason": "wrong"}, &b)
	if a.Status != StatusNotFound || b.Status != StatusNotFound ||
		strings.ReplaceAll(a.Message, foreign, "ID") != strings.ReplaceAll(b.Message, "mem_missing", "ID") {
		t.Fatalf("foreign %+v vs missing %+v", a, b)
	}
	f.withStore(func(st store.Store) {
		rec, err := st.Get(ctx, foreign)
		if err != nil || rec.InvalidAt != "" {
			t.Fatalf("foreign record after invalidate: %+v %v", rec, err)
		}
	})
	// A shared record is in the view, but another agent sees it too: the
	// agent's invalidate is a proposal for a human (issue 19 item 3).
	f.call(ToolInvalidate, map[string]any{"id": shared, "reason": "we invoice in CHF too"}, &out)
	if out.Status != StatusProposed || out.ProposalID == "" {
		t.Fatalf("shared invalidate = %+v, want proposed", out)
	}

	// Everything the tools wrote was written as agent:support-bot.
	f.withStore(func(st store.Store) {
		entries, err := st.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Actor.Kind == store.ActorHuman {
				continue // the test's own seeding and approval
			}
			if e.Actor.String() != "agent:support-bot" {
				t.Errorf("ledger entry %d by %v", e.Seq, e.Actor)
			}
		}
	})
}

func TestComposeAt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := f.composed()
	at := schema.FormatTime(f.clock.now())
	var s SaveOutput
	f.call(ToolSave, map[string]any{"kind": "fact", "content": "Returns ship to Halle", "target": "background.projectContext.returns_address"}, &s)
	var then ComposeOutput
	f.call(ToolCompose, map[string]any{"at": at}, &then)
	if strings.Contains(then.Text, "Halle") || then.Text != before.Text || then.At == "" {
		t.Fatalf("compose at %s shows a later memory or differs from then:\n%s", at, then.Text)
	}
	if !strings.Contains(f.composed().Text, "Returns ship to Halle") {
		t.Fatal("now lacks the fact")
	}
}

func TestNewRejectsBadAgentFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.agent.yaml")
	if err := os.WriteFile(bad, []byte("roleTemplate: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(context.Context, bool) (store.Store, error) { return nil, os.ErrNotExist }
	for _, c := range []Config{{AgentFile: bad, Open: open}, {AgentFile: filepath.Join(dir, "none.agent.yaml"), Open: open}, {AgentFile: bad}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%s) succeeded", c.AgentFile)
		} else if c.Open != nil && !strings.Contains(err.Error(), filepath.Base(c.AgentFile)) {
			t.Errorf("error %v does not name the file", err)
		}
	}
}

func TestStoreAndAgentFileFailuresAreToolErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "agents", "support.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	agentFile := filepath.Join(dir, "support.agent.yaml")
	if err := os.WriteFile(agentFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{AgentFile: agentFile, Open: func(context.Context, bool) (store.Store, error) {
		return nil, fmt.Errorf("open memory.db: %w", store.ErrLocked)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{ToolSave, map[string]any{"kind": "fact", "content": "x"}},
		{ToolSearch, map[string]any{"query": "x"}},
		{ToolList, map[string]any{}},
		{ToolInvalidate, map[string]any{"id": "mem_x", "reason": "r"}},
		{ToolLearnings, map[string]any{"since": "7d"}},
		{ToolCompose, map[string]any{}},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", c.tool, err)
		}
		if !res.IsError || !strings.Contains(text(res), "store locked") {
			t.Errorf("%s: isError=%v %q, want a tool error saying the store is locked", c.tool, res.IsError, text(res))
		}
	}
	// Renaming the agent under a running server is refused, not silently rebound.
	renamed := strings.Replace(string(data), "name: support-bot", "name: other-bot", 1)
	if err := os.WriteFile(agentFile, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.cfg.Open = func(context.Context, bool) (store.Store, error) {
		return bolt.Open(filepath.Join(dir, "m.db"), store.Options{})
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolSave, Arguments: map[string]any{"kind": "fact", "content": "x"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "restart") {
		t.Fatalf("save after rename: %v %v %q", err, res.IsError, text(res))
	}
}
