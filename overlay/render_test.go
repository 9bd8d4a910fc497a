package overlay

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

const smallJSON = `{
 "roleTemplate": {"name": "r", "persona": {"identity": "a reviewer.", "tone": ""},
  "judgments": [{"domain": "code-review", "heuristics": ["Read the tests first"]}]},
 "mission": {"objective": "Review pull requests"},
 "background": {"conventions": {"style": "gofmt", "limits": {"b": 2, "a": [1, "x<y"]}, "strict": true}}
}`

func TestRenderExact(t *testing.T) {
	t.Parallel()
	recs := []schema.MemoryRecord{
		rec(t, "M1", ts(2, 9), "judgment.code-review.heuristics", "Check error wrapping"),
		rec(t, "M2", ts(2, 10), "background.currentState.freeze", "Release freeze until Friday"),
		rec(t, "M3", ts(2, 11), "judgment.code-review.escalationTriggers", "A change touches auth"),
		rec(t, "M4", ts(2, 12), "recovery", "Ask the author."),
		rec(t, "M5", ts(2, 13), "background.currentState.huge", strings.Repeat("x", 50)),
	}
	c, rep := Apply(mustConfig(t, smallJSON), recs, budgets(schema.Budgets{Background: 40}))
	p := Render(c, rep.Attribution)
	wantText := `## Identity
You are a reviewer.

## Boundaries

### Escalate When
- A change touches auth

### Recovery
Ask the author.
Max attempts before escalating: 3

## Context

### Conventions
- **style**: gofmt
- **limits**: {"a":[1,"x<y"],"b":2}
- **strict**: true

### Current State
- **freeze**: Release freeze until Friday
… [memory budget reached — 1 learned entry moved to recall]

### Available Information Sources
You have no external information sources available.

## Mission
Review pull requests

## Methodology

### Code Review
- Read the tests first
- Check error wrapping
`
	if got := p.Text(); got != wantText {
		t.Errorf("Text():\n%s\nwant:\n%s", got, wantText)
	}
	ann := p.Annotated()
	for _, want := range []string{
		"- Check error wrapping  ⟵ memory M1\n",
		"### Recovery  ⟵ memory M4\nAsk the author.  ⟵ memory M4\nMax attempts before escalating: 3  ⟵ memory M4\n",
		"moved to recall]  ⟵ spilled M5\n",
		"- Read the tests first\n",
	} {
		if !strings.Contains(ann, want) {
			t.Errorf("Annotated() lacks %q:\n%s", want, ann)
		}
	}
	if md := p.Markdown(); !strings.Contains(md, "- **freeze**: Release freeze until Friday _(memory: M2)_\n") {
		t.Errorf("Markdown() lacks the memory note:\n%s", md)
	}
	var titles []string
	for _, s := range p.Sections {
		titles = append(titles, s.Title+"/"+s.Source)
	}
	if want := []string{"Identity/role", "Boundaries/role", "Context/instance", "Mission/instance", "Methodology/role"}; !slices.Equal(titles, want) {
		t.Errorf("sections = %v, want %v (Capabilities is empty and dropped)", titles, want)
	}
	// Every memory fragment carries ids; every authored one carries none
	// and its section's source.
	memory := 0
	for _, s := range p.Sections {
		for _, f := range s.Fragments {
			switch f.Source {
			case SourceMemory:
				memory++
				if len(f.MemoryIDs) == 0 {
					t.Errorf("memory fragment %q without ids", f.Text)
				}
			case s.Source:
				if f.MemoryIDs != nil {
					t.Errorf("authored fragment %q with ids", f.Text)
				}
			default:
				t.Errorf("fragment %q: source %q in a %s section", f.Text, f.Source, s.Source)
			}
		}
	}
	if memory != 7 { // M1, M2, M3, M4 x3 (heading, line, max attempts), M5's marker
		t.Errorf("memory fragments = %d, want 7", memory)
	}
}

func TestRenderJSONShape(t *testing.T) {
	t.Parallel()
	c, rep := Apply(base(t), []schema.MemoryRecord{rec(t, "A", ts(3, 9), "background.projectContext.k", "v")}, Policy{})
	b, err := json.Marshal(Render(c, rep.Attribution))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`{"sections":[{"title":"Identity","source":"role","fragments":[{"source":"role","text":"## Identity"}`,
		`{"source":"memory","text":"- **k**: v","memoryIds":["A"]}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("JSON lacks %s:\n%s", want, s)
		}
	}
}

func TestRenderRecoveryLinesKeepAuthoredBlocks(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	cfg.RoleTemplate.Recovery.Prompt = "Line A\nLine B"
	c, rep := Apply(cfg, []schema.MemoryRecord{rec(t, "R", ts(3, 9), "recovery", "Learned C")}, Policy{})
	p := Render(c, rep.Attribution)
	var frags []Fragment
	for _, s := range p.Sections {
		if s.Title == TitleBoundaries {
			frags = s.Fragments
		}
	}
	i := slices.IndexFunc(frags, func(f Fragment) bool { return f.Text == "### Recovery" })
	if i < 0 || len(frags) < i+4 {
		t.Fatalf("no recovery block in %+v", frags)
	}
	got := frags[i+1 : i+4]
	want := []Fragment{
		{Source: SourceRole, Text: "Line A\nLine B"},
		{Source: SourceMemory, Text: "Learned C", MemoryIDs: []string{"R"}},
		{Source: SourceRole, Text: "Max attempts before escalating: 2"},
	}
	for k := range want {
		if !slices.Equal(got[k].MemoryIDs, want[k].MemoryIDs) || got[k].Text != want[k].Text || got[k].Source != want[k].Source {
			t.Errorf("fragment %d = %+v, want %+v", k, got[k], want[k])
		}
	}
}

func TestTitleCaseAndFormatValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"code-review": "Code Review", "refunds": "Refunds", "deploy_ops now": "Deploy Ops Now", "": "", "élan": "Élan"} {
		if got := TitleCase(in); got != want {
			t.Errorf("TitleCase(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{"plain <text>", "plain <text>"},
		{3.5, "3.5"},
		{float64(4), "4"},
		{false, "false"},
		{nil, "null"},
		{[]any{"a", 1.0}, `["a",1]`},
		{map[string]any{"z": 1.0, "a": map[string]any{"y": "&"}}, `{"a":{"y":"&"},"z":1}`},
	} {
		if got := FormatValue(tt.v); got != tt.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestMarkerTexts(t *testing.T) {
	t.Parallel()
	if got := MarkerText(1); got != "… [memory budget reached — 1 learned entry moved to recall]" {
		t.Errorf("MarkerText(1) = %q", got)
	}
	if got := MarkerText(3); got != "… [memory budget reached — 3 learned entries moved to recall]" {
		t.Errorf("MarkerText(3) = %q", got)
	}
	if got := RecallMarker(2); got != "… [recall budget reached — 2 more record(s) omitted]" {
		t.Errorf("RecallMarker(2) = %q", got)
	}
}

func TestRenderSpillMarkers(t *testing.T) {
	t.Parallel()
	noRecovery := `{"roleTemplate": {"name": "x", "persona": {"identity": "x"}, "judgments": [{"domain": "d"}]},
	 "mission": {"objective": "o"}, "capabilities": ["ship"]}`
	big := strings.Repeat("y", 30)
	tests := []struct {
		name   string
		target string
		after  string // the line the marker follows
	}{
		{"constraints in Boundaries", "judgment.d.constraints", "### Constraints\n"},
		{"escalation triggers in Boundaries", "judgment.d.escalationTriggers", "### Escalate When\n"},
		{"recovery without an authored block", "recovery", "### Recovery\n"},
		{"heuristics in Methodology", "judgment.d.heuristics", "### D\n"},
		{"manual workflows under the capability", "manual.ship.workflows", "### ship\n"},
		{"background section created for the marker", "background.conventions.k", "### Conventions\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := rec(t, "S", ts(1, 1), tt.target, big)
			c, rep := Apply(mustConfig(t, noRecovery), []schema.MemoryRecord{r}, budgets(schema.Budgets{Background: 5, Judgment: 5, Recovery: 5, Manual: 5}))
			if got := rep.IDs(StatusSpilled); !slices.Equal(got, []string{"S"}) {
				t.Fatalf("spilled = %v", got)
			}
			text := Render(c, rep.Attribution).Annotated()
			if want := tt.after + MarkerText(1) + "  ⟵ spilled S\n"; !strings.Contains(text, want) {
				t.Fatalf("marker not after %q:\n%s", tt.after, text)
			}
			if strings.Contains(text, big) {
				t.Fatalf("spilled content rendered:\n%s", text)
			}
		})
	}
	// Examples and awareness need payloads.
	ex := withPayload(rec(t, "E", ts(1, 1), "example.d", "x"), `{"scenario": "`+big+`", "good": "g"}`)
	aw := withPayload(rec(t, "W", ts(1, 1), "awareness", "x"), `{"name": "n", "description": "`+big+`", "accessMethod": "m"}`)
	c, rep := Apply(mustConfig(t, noRecovery), []schema.MemoryRecord{ex, aw}, budgets(schema.Budgets{Example: 5, Awareness: 5}))
	text := Render(c, rep.Attribution).Text()
	for _, want := range []string{
		"### D\n**Examples:**\n" + MarkerText(1) + "\n",
		"You have no external information sources available.\n" + MarkerText(1) + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
}

// TestRenderNoEmptyHeadings: a heading renders only with something under it
// (a line, or a deeper heading with lines). A capability without workflows
// has no ### heading (a section of only those has no ## Capabilities); the
// background sections and information sources are ### headings under
// ## Context.
func TestRenderNoEmptyHeadings(t *testing.T) {
	t.Parallel()
	c := mustConfig(t, `{"roleTemplate": {"name": "r", "persona": {"identity": "a deployer"}},
 "capabilities": ["deploy", "ship", "rollback"],
 "manuals": {"ship": {"workflows": ["Tag the release first"]}, "audit": {}},
 "background": {"conventions": {"style": "gofmt"}}}`)
	got := Render(c, Attribution{}).Text()
	want := `## Identity
You are a deployer.

## Capabilities

### ship
- Tag the release first

## Context

### Conventions
- **style**: gofmt

### Available Information Sources
You have no external information sources available.
`
	if got != want {
		t.Errorf("Text():\n%s\nwant:\n%s", got, want)
	}
	assertNoEmptyHeadings(t, got)
	// Only workflows spilled: the heading stays, over the marker line.
	c2 := mustConfig(t, `{"roleTemplate": {"name": "r"}, "capabilities": ["ship", "deploy"]}`)
	p := Render(c2, Attribution{Spilled: map[string][]string{manualPtr("ship"): {"M1"}}}).Text()
	if !strings.Contains(p, "### ship\n"+MarkerText(1)) {
		t.Errorf("spilled workflows lost their heading:\n%s", p)
	}
	if strings.Contains(p, "deploy") {
		t.Errorf("a capability without workflows rendered:\n%s", p)
	}
	assertNoEmptyHeadings(t, p)
}

// assertNoEmptyHeadings fails when a heading is followed (after blank
// lines) by a heading of the same or a higher level, or ends the text.
func assertNoEmptyHeadings(t *testing.T, text string) {
	t.Helper()
	level := func(l string) int {
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if n == 0 || !strings.HasPrefix(l[n:], " ") {
			return 0
		}
		return n
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	for i, l := range lines {
		h := level(l)
		if h == 0 {
			continue
		}
		if i+1 == len(lines) || (level(lines[i+1]) != 0 && level(lines[i+1]) <= h) {
			t.Errorf("empty heading %q (line %d) in:\n%s", l, i+1, text)
		}
	}
}
