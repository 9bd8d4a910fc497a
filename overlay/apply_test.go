package overlay

import (
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/schema"
)

type want struct {
	status Status
	reason Reason
	ptr    string
}

func applied(ptr string) want         { return want{status: StatusApplied, ptr: ptr} }
func dropped(r Reason) want           { return want{status: StatusDropped, reason: r} }
func spilledW() want                  { return want{status: StatusSpilled, reason: ReasonBudget} }
func shadowedW() want                 { return want{status: StatusShadowed, reason: ReasonConflict} }
func budgets(b schema.Budgets) Policy { return Policy{Budgets: b} }

func TestApplyRules(t *testing.T) {
	t.Parallel()
	noRecovery := `{"roleTemplate": {"name": "x", "persona": {"identity": "x"}, "judgments": [{"domain": "d"}]}, "mission": {"objective": "o"}}`
	tests := []struct {
		name      string
		cfg       string // "" is baseJSON
		records   func(t *testing.T) []schema.MemoryRecord
		policy    Policy
		want      map[string]want
		conflicts []Conflict
		check     func(t *testing.T, c *schema.AgentConfig, rep Report)
	}{
		{
			name: "background inserts after authored entries",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{rec(t, "A", ts(3, 9), "background.projectContext.deploy_window", "Tuesdays after 14:00 ET")}
			},
			want: map[string]want{"A": applied("/background/projectContext/deploy_window")},
			check: func(t *testing.T, c *schema.AgentConfig, _ Report) {
				got := c.Background.ProjectContext
				wantE := schema.Entries{{Key: "product", Value: "Acme Cloud"}, {Key: "deploy_window", Value: "Tuesdays after 14:00 ET"}}
				if !reflect.DeepEqual(got, wantE) {
					t.Errorf("projectContext = %#v, want %#v", got, wantE)
				}
			},
		},
		{
			name: "background authored key wins",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{rec(t, "A", ts(3, 9), "background.projectContext.product", "Acme Edge")}
			},
			want: map[string]want{"A": dropped(ReasonAuthoredWins)},
			check: func(t *testing.T, c *schema.AgentConfig, _ Report) {
				if v, _ := c.Background.ProjectContext.Get("product"); v != "Acme Cloud" || len(c.Background.ProjectContext) != 1 {
					t.Errorf("authored entry changed: %#v", c.Background.ProjectContext)
				}
			},
		},
		{
			name: "background key escaped in pointer",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{rec(t, "A", ts(3, 9), "background.conventions.a/b~c", "v")}
			},
			want: map[string]want{"A": applied("/background/conventions/a~1b~0c")},
		},
		{
			name: "memory collision: newest createdAt renders",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					rec(t, "B", ts(4, 9), "background.currentState.oncall", "Ana"),
					rec(t, "A", ts(5, 9), "background.currentState.oncall", "Bo"),
				}
			},
			want:      map[string]want{"A": applied("/background/currentState/oncall"), "B": shadowedW()},
			conflicts: []Conflict{{Slot: "background.currentState.oncall", Winner: "A", Shadowed: "B"}},
			check: func(t *testing.T, c *schema.AgentConfig, _ Report) {
				if v, _ := c.Background.CurrentState.Get("oncall"); v != "Bo" {
					t.Errorf("oncall = %v, want Bo", v)
				}
			},
		},
		{
			name: "memory collision: equal createdAt, smaller id renders",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					rec(t, "B", ts(4, 9), "background.currentState.oncall", "Bo"),
					rec(t, "A", ts(4, 9), "background.currentState.oncall", "Ana"),
					rec(t, "C", ts(4, 9), "background.currentState.oncall", "Cy"),
				}
			},
			want: map[string]want{"A": applied("/background/currentState/oncall"), "B": shadowedW(), "C": shadowedW()},
			conflicts: []Conflict{
				{Slot: "background.currentState.oncall", Winner: "A", Shadowed: "B"},
				{Slot: "background.currentState.oncall", Winner: "A", Shadowed: "C"},
			},
		},
		{
			name: "judgment slots append to the existing domain",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					rec(t, "H", ts(3, 9), "judgment.refunds.heuristics", "Ask for the order id"),
					rec(t, "C", ts(3, 10), "judgment.refunds.constraints", "Never refund gift cards"),
					rec(t, "E", ts(3, 11), "judgment.refunds.escalationTriggers", "Refund over $1000"),
					rec(t, "H2", ts(3, 12), "judgment.billing-disputes.heuristics", "Check the invoice"),
				}
			},
			want: map[string]want{
				"H":  applied("/roleTemplate/judgments/0/heuristics/1"),
				"C":  applied("/roleTemplate/judgments/0/constraints/1"),
				"E":  applied("/roleTemplate/judgments/0/escalationTriggers/1"),
				"H2": applied("/roleTemplate/judgments/1/heuristics/0"),
			},
			check: func(t *testing.T, c *schema.AgentConfig, _ Report) {
				j := c.RoleTemplate.Judgments[0]
				if !slices.Equal(j.Heuristics, []string{"Check order age first", "Ask for the order id"}) {
					t.Errorf("heuristics = %q", j.Heuristics)
				}
				if !slices.Equal(j.EscalationTriggers, []string{"Customer mentions legal action", "Refund over $1000"}) {
					t.Errorf("escalationTriggers = %q", j.EscalationTriggers)
				}
			},
		},
		{
			name: "judgment: a memory never creates a domain",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{rec(t, "A", ts(3, 9), "judgment.shipping.heuristics", "x")}
			},
			want: map[string]want{"A": dropped(ReasonUnknownDomain)},
			check: func(t *testing.T, c *schema.AgentConfig, _ Report) {
				if len(c.RoleTemplate.Judgments) != 2 {
					t.Errorf("judgments = %d, want 2", len(c.RoleTemplate.Judgments))
				}
			},
		},
		{
			name: "judgment: line equal to an authored line, and to another record",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					rec(t, "A", ts(3, 9), "judgment.refunds.heuristics", "Check order age first"),
					rec(t, "B", ts(3, 9), "judgment.refunds.heuristics", "Same lesson"),
					rec(t, "C", ts(4, 9), "judgment.refunds.heuristics", "Same lesson"),
					rec(t, "D", ts(4, 9), "judgment.refunds.constraints", "Same lesson"),
				}
			},
			want: map[string]want{
				"A": dropped(ReasonDuplicate),
				"B": dropped(ReasonDuplicate),
				"C": applied("/roleTemplate/judgments/0/heuristics/1"),
				"D": applied("/roleTemplate/judgments/0/constraints/1"),
			},
		},
		{
			name: "examples need a complete payload and an existing domain",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					withPayload(rec(t, "A", ts(3, 9), "example.refunds", "refund story"), `{"scenario": "Double charge", "good": "Refund the duplicate", "reasoning": "It is our error"}`),
					rec(t, "B", ts(3, 10), "example.refunds", "no payload"),
					withPayload(rec(t, "C", ts(3, 11), "example.refunds", "no good"), `{"scenario": "s"}`),
					withPayload(rec(t, "D", ts(3, 12), "example.refunds", "bad json"), `{"scenario": `),
					withPayload(rec(t, "E", ts(3, 13), "example.shipping", "unknown"), `{"scenario": "s", "good": "g"}`),
				}
			},
			want: map[string]want{
				"A": applied("/roleTemplate/judgments/0/examples/1"),
				"B": dropped(ReasonMissingPayload),
				"C": dropped(ReasonMissingPayload),
				"D": dropped(ReasonMissingPayload),
				"E": dropped(ReasonUnknownDomain),
			},
			check: func(t *testing.T, c *schema.AgentConfig, _ Report) {
				got := c.RoleTemplate.Judgments[0].Examples[1]
				if got != (schema.Example{Scenario: "Double charge", Good: "Refund the duplicate", Reasoning: "It is our error"}) {
					t.Errorf("example = %#v", got)
				}
			},
		},
		{
			name: "awareness domains append; authored name wins; payload required",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					withPayload(rec(t, "A", ts(3, 9), "awareness", "status page"), `{"name": "status", "description": "the status page", "accessMethod": "http"}`),
					withPayload(rec(t, "B", ts(3, 10), "awareness", "orders again"), `{"name": "orders", "description": "d", "accessMethod": "m"}`),
					withPayload(rec(t, "C", ts(3, 11), "awareness", "no method"), `{"name": "n", "description": "d"}`),
					withPayload(rec(t, "D", ts(3, 12), "awareness", "status again"), `{"name": "status", "description": "newer status page", "accessMethod": "http"}`),
				}
			},
			want: map[string]want{
				"A": shadowedW(),
				"B": dropped(ReasonAuthoredWins),
				"C": dropped(ReasonMissingPayload),
				"D": applied("/awareness/domains/1"),
			},
			conflicts: []Conflict{{Slot: "awareness.status", Winner: "D", Shadowed: "A"}},
		},
		{
			name: "recovery appends lines to the authored prompt",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					rec(t, "A", ts(3, 9), "recovery", "Escalate to tier 2 after a failed retry."),
					rec(t, "B", ts(3, 10), "recovery", "Line one\nline two"),
					rec(t, "C", ts(3, 11), "recovery", "Last."),
				}
			},
			want: map[string]want{
				"A": applied("/roleTemplate/recovery/prompt/1"),
				"B": applied("/roleTemplate/recovery/prompt/2"),
				"C": applied("/roleTemplate/recovery/prompt/3"),
			},
			check: func(t *testing.T, c *schema.AgentConfig, rep Report) {
				r := c.RoleTemplate.Recovery
				// A record's line breaks fold: it is one line of the prompt.
				if want := "Retry once, then hand over.\nEscalate to tier 2 after a failed retry.\nLine one line two\nLast."; r.Prompt != want || r.Name != "retry" || r.MaxAttempts != 2 {
					t.Errorf("recovery = %#v", r)
				}
				if ids := rep.Attribution.Lines["/roleTemplate/recovery/prompt/2"]; !slices.Equal(ids, []string{"B"}) {
					t.Errorf("line 2 attributed to %v, want [B]", ids)
				}
				if _, ok := rep.Attribution.Lines[recoveryPtr]; ok {
					t.Errorf("authored recovery block attributed to memory")
				}
			},
		},
		{
			name: "recovery without an authored block creates one",
			cfg:  noRecovery,
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{rec(t, "A", ts(3, 9), "recovery", "Stop and ask.")}
			},
			want: map[string]want{"A": applied("/roleTemplate/recovery/prompt/0")},
			check: func(t *testing.T, c *schema.AgentConfig, rep Report) {
				if r := c.RoleTemplate.Recovery; r == nil || r.Name != LearnedRecoveryName || r.Prompt != "Stop and ask." {
					t.Errorf("recovery = %#v", r)
				}
				if ids := rep.Attribution.Lines[recoveryPtr]; !slices.Equal(ids, []string{"A"}) {
					t.Errorf("block attributed to %v, want [A]", ids)
				}
			},
		},
		{
			name: "manual workflows need a capability or manual",
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					rec(t, "A", ts(3, 9), "manual.deploy.workflows", "Run the smoke test"),
					rec(t, "B", ts(3, 10), "manual.search.workflows", "Then search tickets"),
					rec(t, "C", ts(3, 11), "manual.billing.workflows", "x"),
					rec(t, "D", ts(3, 12), "manual.search.workflows", "Search the KB first"),
				}
			},
			want: map[string]want{
				"A": applied("/manuals/deploy/workflows/0"),
				"B": applied("/manuals/search/workflows/1"),
				"C": dropped(ReasonUnknownCapability),
				"D": dropped(ReasonDuplicate),
			},
			check: func(t *testing.T, c *schema.AgentConfig, _ Report) {
				if _, ok := c.Manuals["billing"]; ok {
					t.Errorf("manual created for an unknown capability")
				}
			},
		},
		{
			name: "untargeted, invalid target and duplicate id",
			records: func(t *testing.T) []schema.MemoryRecord {
				bad := rec(t, "B", ts(3, 9), "", "x")
				bad.Target = &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: "nowhere", Key: "k"}
				return []schema.MemoryRecord{
					rec(t, "A", ts(3, 9), "", "plain fact"),
					bad,
					rec(t, "C", ts(3, 9), "background.conventions.tabs", "no"),
					rec(t, "C", ts(3, 9), "background.conventions.tabs", "yes"),
				}
			},
			want: map[string]want{
				"A": dropped(ReasonUntargeted),
				"B": dropped(ReasonInvalidTarget),
				"C": applied("/background/conventions/tabs"),
			},
			check: func(t *testing.T, c *schema.AgentConfig, rep Report) {
				if v, _ := c.Background.Conventions.Get("tabs"); v != "no" {
					t.Errorf("duplicate id: kept %v, want the canonical first (no)", v)
				}
				if rep.Totals.Dropped != 3 || rep.Totals.Records != 4 {
					t.Errorf("totals = %+v", rep.Totals)
				}
			},
		},
		{
			name:   "budget: whole entries first fit in spill order",
			policy: budgets(schema.Budgets{Background: 30}),
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					// chars = len(key) + len(content)
					withSupports(rec(t, "A", ts(1, 9), "background.conventions.a", "123456789"), "x", "y"), // 10, 3 convs
					rec(t, "B", ts(5, 9), "background.conventions.b", "1234567890123456789"),               // 20, newest
					rec(t, "C", ts(4, 9), "background.conventions.c", "123456789"),                         // 10: does not fit after A+B
					rec(t, "D", ts(3, 9), "background.conventions.d", ""),                                  // 1: still fits? no, 30 used
					rec(t, "E", ts(2, 9), "judgment.refunds.heuristics", "unbudgeted primitive"),
				}
			},
			want: map[string]want{
				"A": applied("/background/conventions/a"),
				"B": applied("/background/conventions/b"),
				"C": spilledW(),
				"D": spilledW(),
				"E": applied("/roleTemplate/judgments/0/heuristics/1"),
			},
			check: func(t *testing.T, c *schema.AgentConfig, rep Report) {
				if got := rep.Attribution.Spilled["/background/conventions"]; !slices.Equal(got, []string{"D", "C"}) {
					t.Errorf("spilled attribution = %v, want [D C] (canonical order)", got)
				}
				if rep.Totals.CharsPerPrimitive["background"] != 30 || rep.Totals.Spilled != 2 {
					t.Errorf("totals = %+v", rep.Totals)
				}
			},
		},
		{
			name:   "budget: a later smaller record still fits",
			policy: budgets(schema.Budgets{Judgment: 10}),
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{
					rec(t, "A", ts(5, 9), "judgment.refunds.heuristics", "this one is far too long"),
					rec(t, "B", ts(4, 9), "judgment.refunds.heuristics", "short"),
					rec(t, "C", ts(3, 9), "judgment.refunds.heuristics", "tiny"),
					rec(t, "D", ts(2, 9), "judgment.refunds.heuristics", "no"),
				}
			},
			want: map[string]want{
				"A": spilledW(),
				"B": applied("/roleTemplate/judgments/0/heuristics/2"),
				"C": applied("/roleTemplate/judgments/0/heuristics/1"),
				"D": spilledW(),
			},
		},
		{
			name:   "runes, not bytes, count against budgets",
			policy: budgets(schema.Budgets{Judgment: 5}),
			records: func(t *testing.T) []schema.MemoryRecord {
				return []schema.MemoryRecord{rec(t, "A", ts(3, 9), "judgment.refunds.heuristics", "ééééé")}
			},
			want: map[string]want{"A": applied("/roleTemplate/judgments/0/heuristics/1")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfgJSON := tt.cfg
			if cfgJSON == "" {
				cfgJSON = baseJSON
			}
			cfg := mustConfig(t, cfgJSON)
			recs := tt.records(t)
			c, rep := Apply(cfg, recs, tt.policy)
			got := map[string]want{}
			for _, o := range rep.Records {
				if _, dup := got[o.ID]; dup {
					continue
				}
				got[o.ID] = want{status: o.Status, reason: o.Reason, ptr: o.Pointer}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("outcomes:\n got %+v\nwant %+v", got, tt.want)
			}
			wantConf := tt.conflicts
			if wantConf == nil {
				wantConf = []Conflict{}
			}
			if !reflect.DeepEqual(rep.Conflicts, wantConf) {
				t.Errorf("conflicts = %+v, want %+v", rep.Conflicts, wantConf)
			}
			if rep.Totals.Conflicts != len(wantConf) {
				t.Errorf("totals.conflicts = %d, want %d", rep.Totals.Conflicts, len(wantConf))
			}
			for _, o := range rep.Records {
				if o.Status == StatusApplied && !slices.Contains(rep.Attribution.Lines[o.Pointer], o.ID) {
					t.Errorf("%s applied at %s but not attributed there", o.ID, o.Pointer)
				}
			}
			if tt.check != nil {
				tt.check(t, c, rep)
			}
		})
	}
}

func TestApplyNilConfig(t *testing.T) {
	t.Parallel()
	c, rep := Apply(nil, []schema.MemoryRecord{rec(t, "A", ts(1, 1), "background.teamContext.k", "v")}, Policy{})
	if c == nil || rep.Records[0].Status != StatusApplied {
		t.Fatalf("nil config: %+v", rep)
	}
}

func TestPolicyFrom(t *testing.T) {
	t.Parallel()
	p := PolicyFrom(schema.WorkspaceConfig{Budgets: schema.Budgets{Background: 1000}, Recall: 10})
	if p.Budgets.Background != 1000 || p.Budgets.Judgment != schema.DefaultBudgets.Judgment ||
		p.Ceiling != schema.DefaultCeiling || p.RecallBudget != 10 || p.CandidateSlice != schema.DefaultCandidateSlice {
		t.Errorf("PolicyFrom = %+v", p)
	}
	if d := DefaultPolicy(); d.Ceiling != schema.DefaultCeiling || d.Ceiling <= d.Budgets.Sum() {
		t.Errorf("default ceiling %d: want %d, above the budgets' sum %d (the authored text counts too)", d.Ceiling, schema.DefaultCeiling, d.Budgets.Sum())
	}
}

// TestCeilingCountsTheWholeComposition: the ceiling is measured on the
// whole rendered prompt, authored and learned (ADR-0008: a
// composition-wide ceiling), not on memory-derived text alone; equal to
// it is not over it; an authored file over it is over it with no memory
// at all; the totals say how much is authored and how much learned, in
// characters and (learned) bytes.
func TestCeilingCountsTheWholeComposition(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	recs := []schema.MemoryRecord{rec(t, "A", ts(3, 9), "judgment.refunds.heuristics", "Prüfe die Rückerstattung zuerst")}
	c, rep := Apply(cfg, recs, Policy{})
	text := Render(c, rep.Attribution).Text()
	n := utf8.RuneCountInString(text)
	tot := rep.Totals
	_, alone := Apply(cfg, nil, Policy{})
	authored := alone.Totals.ComposedChars
	if tot.ComposedChars != n || tot.Chars != utf8.RuneCountInString(recs[0].Content) || tot.AuthoredChars != authored || alone.Totals.AuthoredChars != authored {
		t.Fatalf("totals %+v: want composed %d (the rendered prompt), learned %d, authored the rest", tot, n, utf8.RuneCountInString(recs[0].Content))
	}
	if tot.Bytes != len(recs[0].Content) || tot.BytesPerPrimitive["judgment"] != len(recs[0].Content) || tot.Bytes == tot.Chars {
		t.Fatalf("bytes %d (%v): want the UTF-8 length %d", tot.Bytes, tot.BytesPerPrimitive, len(recs[0].Content))
	}
	for _, tt := range []struct {
		name    string
		recs    []schema.MemoryRecord
		ceiling int
		over    bool
	}{
		{"equal to the composition", recs, n, false},
		{"one below the composition", recs, n - 1, true},
		{"above the learned text alone, below the whole", recs, n - authored/2, true},
		{"no ceiling", recs, 0, false},
		{"authored alone over it", nil, authored - 1, true},
		{"authored alone at it", nil, authored, false},
	} {
		_, r := Apply(cfg, tt.recs, Policy{Ceiling: tt.ceiling})
		if r.Totals.CeilingExceeded != tt.over || r.Totals.Ceiling != tt.ceiling {
			t.Errorf("%s: ceiling %d, composed %d: exceeded %v, want %v", tt.name, tt.ceiling, r.Totals.ComposedChars, r.Totals.CeilingExceeded, tt.over)
		}
	}
}

// TestRenderReusesApplysRendering: Render of Apply's config with its
// attribution is what rendering it afresh gives, and an append to the
// returned sections does not reach the next caller's.
func TestRenderReusesApplysRendering(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	recs := []schema.MemoryRecord{rec(t, "A", ts(3, 9), "judgment.refunds.heuristics", "Check the order first")}
	c, rep := Apply(cfg, recs, Policy{})
	fresh := render(c, Attribution{Lines: rep.Attribution.Lines, Spilled: rep.Attribution.Spilled})
	got := Render(c, rep.Attribution)
	if got.Text() != fresh.Text() || got.Annotated() != fresh.Annotated() || got.Chars() != utf8.RuneCountInString(fresh.Text()) {
		t.Fatalf("reused rendering differs:\n%s\nfresh:\n%s", got.Annotated(), fresh.Annotated())
	}
	got.Sections = append(got.Sections, Section{Title: "extra"})
	if again := Render(c, rep.Attribution); len(again.Sections) != len(fresh.Sections) {
		t.Fatalf("an append to one rendering reached the next: %d sections, want %d", len(again.Sections), len(fresh.Sections))
	}
	other := cloneConfig(c)
	other.RoleTemplate.Persona.Identity = "someone else"
	if Render(other, rep.Attribution).Text() == got.Text() {
		t.Fatal("another config rendered as Apply's")
	}
}
