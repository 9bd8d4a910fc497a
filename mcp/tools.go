package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Tool names.
const (
	ToolSave       = "memory_save"
	ToolSearch     = "memory_search"
	ToolList       = "memory_list"
	ToolInvalidate = "memory_invalidate"
	ToolLearnings  = "memory_learnings"
	ToolCompose    = "compose"
)

// Answer statuses beyond evolve's save statuses.
const (
	// StatusProposed: the change waits for a human (the record keeps rendering).
	StatusProposed    = "proposed"
	StatusInvalidated = string(engine.StatusInvalidated)
	StatusDemoted     = string(engine.StatusDemoted)
	StatusRefused     = string(engine.StatusRefused)
	StatusNotFound    = string(engine.SaveNotFound)
)

// maxLimit bounds search and list answers.
const maxLimit = 200

// SaveInput is memory_save's arguments.
type SaveInput struct {
	Kind    string   `json:"kind,omitempty" jsonschema:"record kind: fact (the default), preference, episode or profile"`
	Content string   `json:"content" jsonschema:"the memory, one self-contained statement"`
	Tags    []string `json:"tags,omitempty" jsonschema:"labels for search"`
	Target  any      `json:"target,omitempty" jsonschema:"the prompt slot this memory belongs in: the union object such as {\"primitive\":\"judgment\",\"domain\":\"billing\",\"slot\":\"heuristics\"} or the compact string such as judgment.billing.heuristics or background.projectContext.deploy_window; omit to keep it in recall"`
	Payload any      `json:"payload,omitempty" jsonschema:"structured payload (examples and awareness domains)"`
	// Supersedes is the id of a record this one replaces.
	Supersedes string `json:"supersedes,omitempty" jsonschema:"id of a record this one replaces (it is retired, or proposed for retirement when gated)"`
	// No conversation or run: provenance comes from the runtime (the
	// server's flags or the request's _meta, Server.provenance), never from
	// arguments the model writes; an argument naming one is refused as
	// unknown.
}

// Record is a memory record as the tools show it.
type Record struct {
	ID             string            `json:"id"`
	Kind           string            `json:"kind"`
	Content        string            `json:"content"`
	Tags           []string          `json:"tags,omitempty"`
	Target         string            `json:"target,omitempty" jsonschema:"compact target form"`
	Tier           string            `json:"tier,omitempty"`
	Scope          map[string]string `json:"scope,omitempty"`
	ConversationID string            `json:"conversationId,omitempty"`
	RunID          string            `json:"runId,omitempty"`
	Conversations  int               `json:"conversations" jsonschema:"distinct conversations supporting it"`
	CreatedAt      string            `json:"createdAt"`
	InvalidAt      string            `json:"invalidAt,omitempty"`
	ExpiresAt      string            `json:"expiresAt,omitempty" jsonschema:"when the record expires (it is retired then)"`
	InvalidReason  string            `json:"invalidReason,omitempty"`
	SupersededBy   string            `json:"supersededBy,omitempty"`
	Payload        any               `json:"payload,omitempty"`
}

func toRecord(r *schema.MemoryRecord) *Record {
	if r == nil {
		return nil
	}
	out := &Record{ID: r.ID, Kind: string(r.Kind), Content: r.Content, Tags: r.Tags, Scope: r.Scope,
		ConversationID: r.Provenance.ConversationID, RunID: r.Provenance.RunID, Conversations: r.DistinctConversations(),
		CreatedAt: r.CreatedAt, InvalidAt: r.InvalidAt, ExpiresAt: r.ExpiresAt, InvalidReason: r.InvalidReason, SupersededBy: r.SupersededBy}
	if r.Target != nil {
		out.Target = r.Target.String()
		out.Tier = string(schema.TierOf(*r.Target))
	}
	if len(r.Payload) > 0 {
		var p any
		if json.Unmarshal(r.Payload, &p) == nil {
			out.Payload = p
		}
	}
	return out
}

// SaveOutput is memory_save's answer.
type SaveOutput struct {
	// Status is saved, conflict, not_found or refused.
	Status       string   `json:"status" jsonschema:"saved, conflict, not_found or refused"`
	ID           string   `json:"id,omitempty" jsonschema:"the record written, or the existing one corroborated"`
	SupersededID string   `json:"supersededId,omitempty"`
	Corroborated bool     `json:"corroborated" jsonschema:"true when an existing record teaching the same lesson gained this conversation as support"`
	Tier         string   `json:"tier,omitempty" jsonschema:"auto, earned, guarded or locked"`
	State        string   `json:"state,omitempty" jsonschema:"promoted, candidate, pending (a human reviews it) or recall (untargeted)"`
	ProposalID   string   `json:"proposalId,omitempty"`
	Record       *Record  `json:"record,omitempty"`
	Existing     *Record  `json:"existing,omitempty" jsonschema:"the live record a conflict collided with"`
	Conflicts    []string `json:"conflicts,omitempty" jsonschema:"contradictions with authored or promoted lines"`
	Guidance     string   `json:"guidance,omitempty" jsonschema:"what to do next"`
}

// SearchInput is memory_search's arguments.
type SearchInput struct {
	Query string   `json:"query" jsonschema:"keywords; records matching more of them rank first"`
	Kinds []string `json:"kinds,omitempty" jsonschema:"only these kinds"`
	Tags  []string `json:"tags,omitempty" jsonschema:"only records carrying every tag"`
	Limit *int     `json:"limit,omitempty" jsonschema:"at most this many records: omitted, 10; 0 or -1 for no limit (every match, up to 200 an answer, the bound of any larger number); another negative number is an error"`
}

// ListInput is memory_list's arguments.
type ListInput struct {
	Kinds              []string `json:"kinds,omitempty" jsonschema:"only these kinds"`
	Tags               []string `json:"tags,omitempty" jsonschema:"only records carrying every tag"`
	Limit              *int     `json:"limit,omitempty" jsonschema:"at most this many records: omitted, 50; 0 or -1 for no limit (every match, up to 200 an answer, the bound of any larger number); another negative number is an error"`
	IncludeInvalidated bool     `json:"includeInvalidated,omitempty" jsonschema:"include retired records: invalidated, superseded and expired (see invalidAt and expiresAt)"`
}

// RecordsOutput is the answer of memory_search and memory_list.
type RecordsOutput struct {
	Records []Record `json:"records"`
}

// InvalidateInput is memory_invalidate's arguments.
type InvalidateInput struct {
	ID     string `json:"id" jsonschema:"the record to retire"`
	Reason string `json:"reason" jsonschema:"why it is no longer true"`
}

// InvalidateOutput is memory_invalidate's answer.
type InvalidateOutput struct {
	// Status is invalidated, demoted, proposed, refused or not_found.
	Status     string `json:"status" jsonschema:"invalidated, proposed (a human reviews it; the record keeps rendering), refused or not_found"`
	ID         string `json:"id"`
	Tier       string `json:"tier,omitempty"`
	Message    string `json:"message"`
	ProposalID string `json:"proposalId,omitempty"`
}

// LearningsInput is memory_learnings' arguments.
type LearningsInput struct {
	Since string `json:"since" jsonschema:"a duration back from now (7d, 1h) or an RFC 3339 time"`
}

// Learning is one thing the agent learned (promote) or unlearned (demote).
type Learning struct {
	Op             string `json:"op" jsonschema:"promote or demote"`
	At             string `json:"at"`
	RecordID       string `json:"recordId"`
	Content        string `json:"content"`
	Target         string `json:"target,omitempty"`
	Tier           string `json:"tier,omitempty"`
	Actor          string `json:"actor" jsonschema:"who decided"`
	ConversationID string `json:"conversationId,omitempty"`
	RunID          string `json:"runId,omitempty"`
	Reason         string `json:"reason,omitempty"`
	ProposalID     string `json:"proposalId,omitempty"`
}

// LearningsOutput is memory_learnings' answer.
type LearningsOutput struct {
	Since     string     `json:"since"`
	Learnings []Learning `json:"learnings"`
}

// ComposeInput is compose's arguments.
type ComposeInput struct {
	At    string `json:"at,omitempty" jsonschema:"compose the agent as it was at this RFC 3339 time (default: now)"`
	Query string `json:"query,omitempty" jsonschema:"keywords of the conversation: the recall block adds the memories matching them"`
}

// Fragment is one line of the composed prompt; memory-derived ones name their records.
type Fragment struct {
	Source    string   `json:"source"`
	Text      string   `json:"text"`
	MemoryIDs []string `json:"memoryIds,omitempty"`
}

// Section is one top-level part of the composed prompt.
type Section struct {
	Title     string     `json:"title"`
	Source    string     `json:"source"`
	Fragments []Fragment `json:"fragments"`
}

// ComposeOutput is compose's answer: the prompt with attribution.
type ComposeOutput struct {
	Agent    string    `json:"agent"`
	At       string    `json:"at,omitempty"`
	Text     string    `json:"text" jsonschema:"the composed system prompt"`
	Sections []Section `json:"sections"`
	// Recall is the recall block delivered with the prompt: the rotating
	// slice of candidates, spilled records and query hits.
	Recall RecallOutput `json:"recall" jsonschema:"memories delivered beside the prompt: candidates, spilled records and query hits"`
}

// RecallOutput is the recall block: its entries, how many the budget left
// out, and its text as delivered.
type RecallOutput struct {
	Entries []RecallEntry `json:"entries"`
	Omitted int           `json:"omitted"`
	Text    string        `json:"text" jsonschema:"the recall block as delivered (empty when it holds nothing)"`
}

// RecallEntry is one memory of the recall block and why it is there.
type RecallEntry struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Content string `json:"content"`
	Reason  string `json:"reason" jsonschema:"candidate, spilled or hit"`
}

func (s *Server) register(cfg *schema.AgentConfig) error {
	if err := s.addSaveTool(cfg); err != nil {
		return err
	}
	// tools/list shows the agent file as it is now: memory_save's target
	// enumeration follows an edit of the file without a restart.
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				if cfg, err := s.loadAgent(); err == nil {
					if err := s.addSaveTool(cfg); err != nil {
						s.cfg.Logger.Warn("memory_save schema", "err", err)
					}
				}
			}
			return next(ctx, method, req)
		}
	})
	in, out := toolSchemas[SearchInput, RecordsOutput]()
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolSearch, Title: "Search memories",
		Description: "Search this agent's and shared memories by keywords.", InputSchema: withKinds(in), OutputSchema: out,
		Annotations: readOnly()}, s.search)
	in, out = toolSchemas[ListInput, RecordsOutput]()
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolList, Title: "List memories",
		Description: "List this agent's and shared memories, newest first.", InputSchema: withKinds(in), OutputSchema: out,
		Annotations: readOnly()}, s.list)
	in, out = toolSchemas[InvalidateInput, InvalidateOutput]()
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolInvalidate, Title: "Invalidate a memory",
		Description: "Retire a memory that is no longer true. A promoted guarded (or earned) learning is not retired by an " +
			"agent: it is proposed for human review and keeps rendering until a human decides.",
		InputSchema: in, OutputSchema: out,
		// It retires a record (it leaves the prompt and recall); retiring
		// it again changes nothing ("already invalidated", or the one
		// pending proposal).
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), IdempotentHint: true, OpenWorldHint: boolPtr(false)}}, s.invalidate)
	in, out = toolSchemas[LearningsInput, LearningsOutput]()
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolLearnings, Title: "What I learned",
		Description: "What this agent learned (promotions) and unlearned (demotions) since a time, with provenance, " +
			"for telling the user how it changed.", InputSchema: in, OutputSchema: out, Annotations: readOnly()}, s.learnings)
	in, out = toolSchemas[ComposeInput, ComposeOutput]()
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolCompose, Title: "Composed prompt",
		Description: "This agent's current system prompt composed from its authored file and promoted memories, " +
			"with the memory ids behind every learned line, and the recall block delivered beside it (candidate " +
			"lessons in rotation, spilled records, and memories matching query). Composing now records what it showed " +
			"(the recall rotation moves on), so it is not read-only; with at it replays a past composition and records nothing.",
		InputSchema: in, OutputSchema: out,
		// It writes the overlay summary of an instantiate (additive: no
		// record changes), and each call rotates the recall block.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: false, OpenWorldHint: boolPtr(false)}}, s.compose)
	s.srv.AddResource(&mcp.Resource{URI: ResourceURI(s.name), Name: "composed-prompt", Title: "Composed prompt of " + s.name,
		Description: "The agent's current composed system prompt (markdown), followed by its recall block.", MIMEType: "text/markdown"}, s.readPrompt)
	return nil
}

// saveTool is memory_save as registered: its advertised schema (from the
// agent file) and the arguments' validation schema.
type saveTool struct {
	mu  sync.Mutex
	sig string // the advertised input schema, as JSON
}

// saveArgs validates memory_save's arguments as the SDK would from
// SaveInput (an unknown argument, such as conversationId, is refused). The
// advertised schema is stricter on target, kind and payload, but the
// handler stays their judge: it answers a locked target or a new judgment
// domain with status refused and guidance, and reads the agent file of
// the call (an edit applies before a client lists the tools again).
var saveArgs = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	s, err := jsonschema.For[SaveInput](nil)
	if err != nil {
		return nil, err
	}
	return s.Resolve(nil)
})

// addSaveTool registers memory_save with the schema of the agent cfg, or
// replaces it when the schema changed.
func (s *Server) addSaveTool(cfg *schema.AgentConfig) error {
	in, out, err := saveSchemas(cfg)
	if err != nil {
		return err
	}
	sig, err := json.Marshal(in)
	if err != nil {
		return err
	}
	s.saveTool.mu.Lock()
	defer s.saveTool.mu.Unlock()
	if string(sig) == s.saveTool.sig {
		return nil
	}
	s.saveTool.sig = string(sig)
	s.srv.AddTool(&mcp.Tool{Name: ToolSave, Title: "Save a memory",
		Description: "Save what you learned. Near-duplicates of a live record corroborate it instead of writing a copy; " +
			"a keyed background slot held by another record is a conflict (supersede it). The answer says the record's " +
			"tier and whether it is promoted into your prompt, a candidate earning its way, or pending human review.",
		InputSchema: in, OutputSchema: out,
		// Not read-only; destructive: a save that supersedes retires the
		// record it replaces. Not idempotent: a repeated save corroborates.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), IdempotentHint: false, OpenWorldHint: boolPtr(false)}},
		s.saveCall)
	return nil
}

// saveCall is memory_save's handler over raw arguments: validated as
// SaveInput, then save.
func (s *Server) saveCall(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	fail := func(err error) (*mcp.CallToolResult, error) {
		var res mcp.CallToolResult
		res.SetError(err)
		return &res, nil
	}
	resolved, err := saveArgs()
	if err != nil {
		return nil, err
	}
	raw := req.Params.Arguments
	args := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return fail(fmt.Errorf("unmarshaling arguments: %w", err))
		}
	}
	if err := resolved.Validate(args); err != nil {
		return fail(fmt.Errorf("validating \"arguments\": %v", err))
	}
	var in SaveInput
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return fail(err)
		}
	}
	res, out, err := s.save(ctx, req, in)
	if err != nil {
		return fail(err)
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("marshaling output: %w", err)
	}
	res.StructuredContent = json.RawMessage(data)
	if res.Content == nil {
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(data)}}
	}
	return res, nil
}

// withKinds makes a kinds argument's items the record kinds.
func withKinds(in *jsonschema.Schema) *jsonschema.Schema {
	kinds := make([]any, len(schema.Kinds))
	for i, k := range schema.Kinds {
		kinds[i] = string(k)
	}
	in.Properties["kinds"].Items.Enum = kinds
	return in
}

func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)}
}

func boolPtr(b bool) *bool { return &b }

// parseTarget accepts the union object or the compact string.
func parseTarget(v any) (*schema.MemoryTarget, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(t) == "" {
			return nil, nil
		}
		mt, err := schema.ParseTarget(t)
		if err != nil {
			return nil, schema.Named("target", err)
		}
		return &mt, nil
	case map[string]any:
		data, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		// A key the union does not have is a mistake, never ignored (the
		// plain type decodes without MemoryTarget's own UnmarshalJSON,
		// which would not pass the setting on).
		dec.DisallowUnknownFields()
		type plain schema.MemoryTarget
		var p plain
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
		mt := schema.MemoryTarget(p)
		if err := mt.Validate(); err != nil {
			return nil, fmt.Errorf("target: %w", schema.TargetPart(err))
		}
		return &mt, nil
	default:
		return nil, fmt.Errorf("target: want an object such as {\"primitive\":\"judgment\",\"domain\":\"billing\",\"slot\":\"heuristics\"} or a string such as judgment.billing.heuristics, got %T", v)
	}
}

func (s *Server) save(ctx context.Context, call *mcp.CallToolRequest, in SaveInput) (*mcp.CallToolResult, SaveOutput, error) {
	kind := schema.Kind(in.Kind)
	if in.Kind == "" {
		kind = schema.KindFact
	}
	if !kind.Valid() {
		return nil, SaveOutput{}, fmt.Errorf("kind %q: want fact, preference, episode or profile", in.Kind)
	}
	if strings.TrimSpace(in.Content) == "" {
		return nil, SaveOutput{}, errors.New("content is empty")
	}
	target, err := parseTarget(in.Target)
	if errors.Is(err, schema.ErrLockedTarget) {
		return nil, SaveOutput{Status: string(engine.SaveRefused), Tier: string(schema.TierLocked),
			Guidance: fmt.Sprintf("%v is locked: %s", in.Target, schema.LockedReason)}, nil
	}
	if err != nil {
		return nil, SaveOutput{}, err
	}
	prov, err := s.provenance(call)
	if err != nil {
		return nil, SaveOutput{}, err
	}
	if in.Supersedes != "" {
		if err := schema.CheckIDArg("supersedes", in.Supersedes); err != nil {
			return nil, SaveOutput{}, err
		}
	}
	req := engine.SaveRequest{Kind: kind, Content: in.Content, Tags: in.Tags, Target: target,
		Supersedes: in.Supersedes, Provenance: prov, Actor: s.actor}
	if in.Payload != nil {
		if req.Payload, err = json.Marshal(in.Payload); err != nil {
			return nil, SaveOutput{}, fmt.Errorf("payload: %w", err)
		}
	}
	var res engine.SaveResult
	err = s.withStore(ctx, false, func(st store.Tx) error {
		sp, err := s.saveSpec(st)
		if err != nil {
			return err
		}
		res, err = engine.Save(ctx, sp, req)
		return err
	})
	if err != nil {
		return nil, SaveOutput{}, err
	}
	out := SaveOutput{Status: string(res.Status), SupersededID: res.SupersededID, Corroborated: res.Corroborated,
		Tier: string(res.Tier), State: string(res.State), ProposalID: res.ProposalID, Record: toRecord(res.Record),
		Existing: toRecord(res.Existing), Guidance: res.Guidance}
	if res.Record != nil {
		out.ID = res.Record.ID
	}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, fmt.Sprintf("%s: %s", conflictWith(c), c.Why))
	}
	if out.Guidance == "" && res.Status == engine.SaveSaved {
		out.Guidance = saveGuidance(res)
	}
	return nil, out, nil
}

func conflictWith(c engine.Conflict) string {
	if c.With != "" {
		return "record " + c.With
	}
	return "authored " + c.Authored
}

func saveGuidance(res engine.SaveResult) string {
	verb := "saved"
	if res.Corroborated {
		verb = "corroborated the existing record"
	}
	switch res.State {
	case engine.StatePromoted:
		return verb + "; it is part of your prompt now"
	case engine.StateCandidate:
		return verb + "; it is a candidate and joins your prompt once it recurs in other conversations"
	case engine.StatePending:
		return verb + "; a human reviews it before it joins your prompt"
	default:
		return verb + "; it stays in recall (untargeted)"
	}
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, RecordsOutput, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, RecordsOutput{}, errors.New("query is empty")
	}
	return s.query(ctx, store.Query{Text: in.Query, Tags: in.Tags}, in.Kinds, in.Limit, store.DefaultLimit)
}

func (s *Server) list(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, RecordsOutput, error) {
	return s.query(ctx, store.Query{Tags: in.Tags, IncludeInvalidated: in.IncludeInvalidated, IncludeExpired: in.IncludeInvalidated}, in.Kinds, in.Limit, 50)
}

// query runs q over the base scope and keeps this agent's view: at most
// the requested records (engine.Limit's rule; def when the limit is
// omitted) and never more than maxLimit.
func (s *Server) query(ctx context.Context, q store.Query, kinds []string, requested *int, def int) (*mcp.CallToolResult, RecordsOutput, error) {
	limit := def
	if requested != nil {
		n, err := engine.Limit(*requested)
		if err != nil {
			return nil, RecordsOutput{}, err
		}
		limit = n
	}
	if limit == 0 || limit > maxLimit {
		limit = maxLimit
	}
	for _, k := range kinds {
		if !schema.Kind(k).Valid() {
			return nil, RecordsOutput{}, fmt.Errorf("kind %q: want fact, preference, episode or profile", k)
		}
		q.Kinds = append(q.Kinds, schema.Kind(k))
	}
	// The agent filter is applied after the store's subset match, so the
	// store returns everything matching and the view is cut here.
	q.Scope, _ = store.AgentFilter(s.base, s.name)
	view := s.view()
	q.Limit = store.Limit(store.Unlimited)
	out := RecordsOutput{Records: []Record{}}
	err := s.withStore(ctx, true, func(st store.Tx) error {
		res, err := st.Search(ctx, q)
		if err != nil {
			return err
		}
		for i := range res.Records {
			if len(out.Records) == limit {
				break
			}
			if view.Visible(&res.Records[i]) {
				out.Records = append(out.Records, *toRecord(&res.Records[i]))
			}
		}
		return nil
	})
	if err != nil {
		return nil, RecordsOutput{}, err
	}
	return nil, out, nil
}

func (s *Server) invalidate(ctx context.Context, _ *mcp.CallToolRequest, in InvalidateInput) (*mcp.CallToolResult, InvalidateOutput, error) {
	if err := schema.CheckIDArg("id", in.ID); err != nil {
		return nil, InvalidateOutput{}, err
	}
	if strings.TrimSpace(in.Reason) == "" {
		return nil, InvalidateOutput{}, errors.New("reason is empty: say why the memory is no longer true")
	}
	out := InvalidateOutput{ID: in.ID}
	var o engine.Outcome
	err := s.withStore(ctx, false, func(st store.Tx) error {
		eng, err := s.engine(st)
		if err != nil {
			return err
		}
		o, err = eng.Invalidate(ctx, in.ID, in.Reason, s.actor)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		out.Status, out.Message = StatusNotFound, fmt.Sprintf("no record %s in this agent's memory", in.ID)
		return nil, out, nil
	case errors.Is(err, engine.ErrRefused):
		out.Status, out.Message, out.Tier = StatusRefused, o.Reason, string(o.Tier)
		return nil, out, nil
	case err != nil:
		return nil, InvalidateOutput{}, err
	}
	out.Tier, out.ProposalID = string(o.Tier), o.ProposalID
	switch o.Status {
	case engine.StatusPending:
		out.Status = StatusProposed
		out.Message = "proposed for human review: the record keeps rendering until a human approves its retirement"
		if o.Reason != "" {
			out.Message += " (" + o.Reason + ")"
		}
	default:
		out.Status, out.Message = string(o.Status), o.Reason
	}
	return nil, out, nil
}

func (s *Server) learnings(ctx context.Context, _ *mcp.CallToolRequest, in LearningsInput) (*mcp.CallToolResult, LearningsOutput, error) {
	if strings.TrimSpace(in.Since) == "" {
		return nil, LearningsOutput{}, errors.New("since is empty: give a duration such as 7d or an RFC 3339 time")
	}
	since, err := schema.ParseSince(in.Since, s.cfg.Now())
	if err != nil {
		return nil, LearningsOutput{}, schema.Named("since", err)
	}
	out := LearningsOutput{Since: schema.FormatTime(since), Learnings: []Learning{}}
	err = s.withStore(ctx, true, func(st store.Tx) error {
		eng, err := s.engine(st)
		if err != nil {
			return err
		}
		ls, err := eng.Learnings(ctx, since)
		if err != nil {
			return err
		}
		for _, l := range ls {
			out.Learnings = append(out.Learnings, Learning{Op: l.Op, At: l.At, RecordID: l.RecordID, Content: l.Content,
				Target: l.Target, Tier: string(l.Tier), Actor: l.Actor, ConversationID: l.ConversationID, RunID: l.RunID,
				Reason: l.Reason, ProposalID: l.ProposalID})
		}
		return nil
	})
	if err != nil {
		return nil, LearningsOutput{}, err
	}
	return nil, out, nil
}

func (s *Server) compose(ctx context.Context, _ *mcp.CallToolRequest, in ComposeInput) (*mcp.CallToolResult, ComposeOutput, error) {
	res, block, err := s.instantiate(ctx, in.At, in.Query)
	if ae, ok := errors.AsType[*engine.AtError](err); ok {
		return nil, ComposeOutput{}, schema.Named("at", ae.Err)
	}
	if err != nil {
		return nil, ComposeOutput{}, err
	}
	out := ComposeOutput{Agent: res.Agent, At: res.At, Text: res.Prompt.Text(), Sections: []Section{}}
	for _, sec := range res.Prompt.Sections {
		sc := Section{Title: sec.Title, Source: sec.Source, Fragments: []Fragment{}}
		for _, f := range sec.Fragments {
			sc.Fragments = append(sc.Fragments, Fragment{Source: f.Source, Text: f.Text, MemoryIDs: f.MemoryIDs})
		}
		out.Sections = append(out.Sections, sc)
	}
	out.Recall = RecallOutput{Entries: []RecallEntry{}, Omitted: block.Omitted, Text: block.Text()}
	for _, e := range block.Entries {
		out.Recall.Entries = append(out.Recall.Entries, RecallEntry{ID: e.ID, Kind: string(e.Kind), Content: e.Content, Reason: e.Reason})
	}
	return nil, out, nil
}

func (s *Server) readPrompt(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	if uri != ResourceURI(s.name) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	res, block, err := s.instantiate(ctx, "", "")
	if err != nil {
		return nil, err
	}
	text := res.Prompt.Markdown()
	if rt := block.Text(); rt != "" {
		text += "\n" + rt
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
}
