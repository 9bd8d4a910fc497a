package overlay

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/agent-ls/agent-ls/schema"
)

// targetPool mixes targets that apply, collide, and drop against baseJSON.
var targetPool = []string{
	"background.projectContext.deploy_window", "background.projectContext.product", "background.teamContext.lead",
	"background.conventions.style", "background.currentState.oncall",
	"judgment.refunds.heuristics", "judgment.refunds.constraints", "judgment.refunds.escalationTriggers",
	"judgment.billing-disputes.heuristics", "judgment.shipping.heuristics",
	"example.refunds", "example.billing-disputes", "example.shipping",
	"awareness", "recovery", "manual.deploy.workflows", "manual.search.workflows", "manual.nope.workflows",
	"",
}

var contentPool = []string{"Check order age first", "Tuesdays after 14:00 ET", "Thursdays", "Ask first", "é", "a longer line of learned text"}

func genRecord(t *rapid.T, i int) schema.MemoryRecord {
	id := fmt.Sprintf("R%02d", rapid.IntRange(0, 40).Draw(t, "id"))
	day := rapid.IntRange(1, 3).Draw(t, "day")
	target := rapid.SampledFrom(targetPool).Draw(t, "target")
	content := rapid.SampledFrom(contentPool).Draw(t, "content")
	r := schema.MemoryRecord{
		ID: id, Kind: schema.KindFact, Content: content,
		Provenance: schema.Provenance{ConversationID: fmt.Sprintf("c%d", i%3)},
		CreatedAt:  ts(day, 9), UpdatedAt: ts(day, 9),
	}
	if target != "" {
		tg, err := schema.ParseTarget(target)
		if err != nil {
			t.Fatalf("pool target %q: %v", target, err)
		}
		r.Target = &tg
	}
	switch rapid.IntRange(0, 3).Draw(t, "payload") {
	case 1:
		r.Payload = json.RawMessage(`{"scenario":"s` + content + `","good":"g","name":"n` + content + `","description":"d","accessMethod":"m"}`)
	case 2:
		r.Payload = json.RawMessage(`{"scenario":"only"}`)
	}
	for range rapid.IntRange(0, 2).Draw(t, "supports") {
		r.Supports = append(r.Supports, schema.Support{ConversationID: fmt.Sprintf("s%d", rapid.IntRange(0, 3).Draw(t, "conv")), At: r.CreatedAt})
	}
	return r
}

func genRecords(t *rapid.T) []schema.MemoryRecord {
	n := rapid.IntRange(0, 25).Draw(t, "n")
	recs := make([]schema.MemoryRecord, n)
	for i := range recs {
		recs[i] = genRecord(t, i)
	}
	return recs
}

func genPolicy(t *rapid.T) Policy {
	b := func(name string) int { return rapid.SampledFrom([]int{0, 5, 20, 60}).Draw(t, name) }
	return Policy{
		Budgets: schema.Budgets{Background: b("bg"), Judgment: b("j"), Example: b("ex"), Awareness: b("aw"), Recovery: b("rc"), Manual: b("m")},
		Ceiling: rapid.IntRange(0, 100).Draw(t, "ceiling"),
	}
}

// snapshot is everything Apply and Render produce, as bytes.
func snapshot(t *rapid.T, cfg *schema.AgentConfig, recs []schema.MemoryRecord, p Policy) string {
	c, rep := Apply(cfg, recs, p)
	pr := Render(c, rep.Attribution)
	out, err := json.Marshal(struct {
		Config *schema.AgentConfig
		Report Report
		Attr   Attribution
		Prompt Prompt
		Text   string
	}{c, rep, rep.Attribution, pr, pr.Annotated()})
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(out)
}

func TestPropPermutationInvariant(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	rapid.Check(t, func(t *rapid.T) {
		recs := genRecords(t)
		p := genPolicy(t)
		want := snapshot(t, cfg, recs, p)
		perm := rapid.Permutation(recs).Draw(t, "perm")
		if got := snapshot(t, cfg, perm, p); got != want {
			t.Fatalf("permutation changed the output:\n%s\n%s", got, want)
		}
	})
}

func TestPropNoMutation(t *testing.T) {
	t.Parallel()
	tt := t
	rapid.Check(t, func(t *rapid.T) {
		cfg := base(tt)
		recs := genRecords(t)
		before, _ := json.Marshal(cfg)
		recsBefore, _ := json.Marshal(recs)
		c, _ := Apply(cfg, recs, genPolicy(t))
		// Scribble over everything the composed config holds: none of it
		// may be shared with the authored config.
		scribble(c)
		after, _ := json.Marshal(cfg)
		recsAfter, _ := json.Marshal(recs)
		if string(before) != string(after) {
			t.Fatalf("authored config changed:\n%s\n%s", before, after)
		}
		if string(recsBefore) != string(recsAfter) {
			t.Fatalf("records changed")
		}
	})
}

func scribble(c *schema.AgentConfig) {
	rt := &c.RoleTemplate
	for i := range rt.Judgments {
		j := &rt.Judgments[i]
		for _, l := range []*[]string{&j.Heuristics, &j.Constraints, &j.EscalationTriggers} {
			for k := range *l {
				(*l)[k] = "X"
			}
			*l = append(*l, "X")
		}
		for k := range j.Examples {
			j.Examples[k].Good = "X"
		}
	}
	for i := range rt.Persona.Priorities {
		rt.Persona.Priorities[i] = "X"
	}
	if rt.Recovery != nil {
		rt.Recovery.Prompt = "X"
	}
	if rt.Methodology != nil {
		rt.Methodology.Prompt = "X"
		for i := range rt.Methodology.Checklist {
			rt.Methodology.Checklist[i] = "X"
		}
	}
	for _, name := range schema.BackgroundSections {
		sec := c.Background.Section(name)
		for i := range *sec {
			(*sec)[i].Value = "X"
		}
	}
	for i := range c.Awareness.Domains {
		c.Awareness.Domains[i].Name = "X"
	}
	for k, m := range c.Manuals {
		for i := range m.Workflows {
			m.Workflows[i] = "X"
		}
		c.Manuals[k] = m
	}
	for i := range c.Capabilities {
		c.Capabilities[i] = "X"
	}
}

func TestPropNoRecordsIsAuthored(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	rapid.Check(t, func(t *rapid.T) {
		// Only records that can never apply: the composition must not move.
		var recs []schema.MemoryRecord
		for _, r := range genRecords(t) {
			if r.Target == nil || r.Target.Primitive == schema.PrimitiveJudgment && r.Target.Domain == "shipping" {
				recs = append(recs, r)
			}
		}
		c, rep := Apply(cfg, recs, genPolicy(t))
		if !reflect.DeepEqual(c, cfg) {
			t.Fatalf("config′ differs from the authored config")
		}
		if got, want := Render(c, rep.Attribution).Text(), Render(cfg, Attribution{}).Text(); got != want {
			t.Fatalf("prompt differs:\n%s\n%s", got, want)
		}
		if rep.Totals.Applied != 0 || rep.Totals.Chars != 0 {
			t.Fatalf("totals = %+v", rep.Totals)
		}
	})
}

func TestNoRecordsRendersAuthoredExactly(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	c, rep := Apply(cfg, nil, DefaultPolicy())
	if !reflect.DeepEqual(c, cfg) || len(rep.Records) != 0 {
		t.Fatalf("Apply(nil records) changed the config or reported records")
	}
	got, want := Render(c, rep.Attribution), Render(cfg, Attribution{})
	if !reflect.DeepEqual(got, want) || got.Annotated() != want.Text() {
		t.Fatalf("no-records render differs from the authored render")
	}
}

func TestPropAuthoredAlwaysPresent(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	authored := Render(cfg, Attribution{})
	rapid.Check(t, func(t *rapid.T) {
		c, rep := Apply(cfg, genRecords(t), genPolicy(t))
		composed := Render(c, rep.Attribution)
		if len(composed.Sections) != len(authored.Sections) {
			t.Fatalf("sections %d, want %d", len(composed.Sections), len(authored.Sections))
		}
		for si, as := range authored.Sections {
			cs := composed.Sections[si]
			k := 0
			for _, f := range cs.Fragments {
				if k < len(as.Fragments) && f.Source != SourceMemory && f.Text == as.Fragments[k].Text {
					k++
				}
			}
			if k != len(as.Fragments) {
				t.Fatalf("section %s: authored fragment %q missing or out of order", as.Title, as.Fragments[k].Text)
			}
		}
	})
}

func TestPropReportAccounts(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	rapid.Check(t, func(t *rapid.T) {
		recs := genRecords(t)
		p := genPolicy(t)
		c, rep := Apply(cfg, recs, p)
		if len(rep.Records) != len(recs) {
			t.Fatalf("report has %d records, want %d", len(rep.Records), len(recs))
		}
		tot := rep.Totals
		if tot.Applied+tot.Dropped+tot.Spilled+tot.Shadowed != tot.Records {
			t.Fatalf("totals do not add up: %+v", tot)
		}
		for _, prim := range schema.Primitives {
			if b := p.Budgets.For(prim); b > 0 && tot.CharsPerPrimitive[string(prim)] > b {
				t.Fatalf("%s: %d chars over budget %d", prim, tot.CharsPerPrimitive[string(prim)], b)
			}
		}
		if tot.CeilingExceeded != (p.Ceiling > 0 && tot.ComposedChars > p.Ceiling) {
			t.Fatalf("ceiling flag wrong: %+v", tot)
		}
		if n := utf8.RuneCountInString(Render(c, rep.Attribution).Text()); tot.ComposedChars != n || tot.AuthoredChars > n || (tot.Applied+tot.Spilled == 0 && tot.AuthoredChars != n) {
			t.Fatalf("composed %d, authored %d: the rendered prompt has %d characters, %d records applied", tot.ComposedChars, tot.AuthoredChars, n, tot.Applied)
		}
		nSpilled := 0
		for _, ids := range rep.Attribution.Spilled {
			nSpilled += len(ids)
		}
		if nSpilled != tot.Spilled {
			t.Fatalf("spill markers name %d records, report %d", nSpilled, tot.Spilled)
		}
	})
}

// TestPropAuthoredWinsIsApplysRule: AuthoredWins answers what Apply
// reports for the record applied alone, for every record of the pool
// (authored keys and awareness names, other targets, none).
func TestPropAuthoredWinsIsApplysRule(t *testing.T) {
	t.Parallel()
	cfg := base(t)
	rapid.Check(t, func(t *rapid.T) {
		r := genRecord(t, 0)
		if rapid.Bool().Draw(t, "authored awareness") {
			r.Payload = json.RawMessage(`{"name":"ORDERS","description":"d","accessMethod":"m"}`) // baseJSON's domain
		}
		_, rep := Apply(cfg, []schema.MemoryRecord{r}, genPolicy(t))
		o, _ := rep.Outcome(r.ID)
		want := o.Status == StatusDropped && o.Reason == ReasonAuthoredWins
		if got := AuthoredWins(cfg, &r); got != want {
			t.Fatalf("AuthoredWins = %v, Apply alone: %+v", got, o)
		}
	})
	if AuthoredWins(nil, &schema.MemoryRecord{}) {
		t.Error("no config: authored wins")
	}
}
