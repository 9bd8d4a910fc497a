package lens

import (
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// funcs are the templates' helpers; none of them marks text as safe HTML.
var funcs = template.FuncMap{
	"diffLines":       diffLines,
	"agentLabel":      agentLabel,
	"opLabel":         opLabel,
	"target":          targetOf,
	"provenance":      provenanceOf,
	"conversations":   schema.Conversations,
	"conversationsOf": schema.ConversationsOf,
	"conversationsIn": func(r schema.MemoryRecord) string { return schema.Conversations(r.DistinctConversations()) },
	"learned":         func(f engine.Fragment) bool { return len(f.MemoryIDs) > 0 && !engine.IsMarker(f) },
	"marker":          engine.IsMarker,
	"join":            strings.Join,
	"add":             func(a, b int) int { return a + b },
	"dict":            func(p page, back string) formData { return formData{Token: p.Token, Back: back} },
	"short":           shortID,
	"prompt":          formatPrompt,
	// when is bound to the server's clock in New.
	"when": func(s string) whenView { return whenOf(s, time.Now()) },
}

// formData is what the "form" template writes into every POST form: the
// token and the page to come back to.
type formData struct {
	Token string
	Back  string
}

// diffLine is one line of a unified diff with its class: add, del, hunk,
// head or ctx.
type diffLine struct {
	Class string
	Text  string
}

func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if l == "" && diff == "" {
			continue
		}
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = "head"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		out = append(out, diffLine{c, l})
	}
	return out
}

func agentLabel(name string) string {
	if name == "" {
		return "(shared records)"
	}
	return name
}

// opLabel names a ledger operation as the timeline shows it.
func opLabel(op store.Op) string {
	switch op {
	case store.OpPromote:
		return "learned"
	case store.OpDemote:
		return "unlearned"
	case store.OpApprove:
		return "approved"
	case store.OpReject:
		return "rejected"
	case store.OpExpire:
		return "expired"
	case store.OpPropose:
		return "proposed"
	case store.OpWrite:
		return "written"
	case store.OpInvalidate:
		return "invalidated"
	case store.OpSupersede:
		return "superseded"
	case store.OpCorroborate:
		return "corroborated"
	case store.OpConflict:
		return "conflict seen"
	case store.OpImport:
		return "imported"
	case store.OpDelete:
		return "deleted"
	case store.OpTokenCreate:
		return "token created"
	case store.OpTokenRevoke:
		return "token revoked"
	}
	return string(op)
}

func targetOf(r schema.MemoryRecord) string {
	if r.Target == nil {
		return "(untargeted)"
	}
	return fmt.Sprintf("%s (%s tier)", r.Target, schema.TierOf(*r.Target))
}

func provenanceOf(r schema.MemoryRecord) string {
	var parts []string
	if c := r.Provenance.ConversationID; c != "" {
		parts = append(parts, "conversation "+c)
	}
	if n := r.DistinctConversations(); n > 1 {
		parts = append(parts, schema.Conversations(n))
	}
	if run := r.Provenance.RunID; run != "" {
		parts = append(parts, "run "+run)
	}
	if len(parts) == 0 {
		return "no provenance"
	}
	return strings.Join(parts, ", ")
}

// chart is the geometry of the sizes chart: one bar per primitive against
// its budget, and the total against the ceiling. Each row is scaled to the
// larger of its size and its limit.
type chart struct {
	Width, Height int
	Rows          []chartRow
}

type chartRow struct {
	Label        string
	Chars, Limit int
	Y, TextY     int
	BarW, LimitX int
	Over         bool
}

const (
	chartLabelW = 110
	chartBarW   = 320
	chartRowH   = 24
)

func newChart(v AgentView) chart {
	var c chart
	sizes := append([]Size(nil), v.Sizes...)
	sort.SliceStable(sizes, func(i, j int) bool { return primitiveOrder(sizes[i].Primitive) < primitiveOrder(sizes[j].Primitive) })
	add := func(label string, chars, limit int) {
		y := len(c.Rows) * chartRowH
		scale := max(chars, limit, 1)
		row := chartRow{Label: label, Chars: chars, Limit: limit, Y: y + 4, TextY: y + 17,
			BarW: chars * chartBarW / scale, LimitX: chartLabelW + limit*chartBarW/scale, Over: limit > 0 && chars > limit}
		c.Rows = append(c.Rows, row)
	}
	for _, s := range sizes {
		add(s.Primitive, s.Chars, s.Budget)
	}
	add("composition", v.Chars, v.Ceiling) // the whole prompt, authored and learned, against the ceiling
	c.Width = chartLabelW + chartBarW + 150
	c.Height = len(c.Rows)*chartRowH + 4
	return c
}

func primitiveOrder(p string) int {
	for i, q := range schema.Primitives {
		if string(q) == p {
			return i
		}
	}
	return len(schema.Primitives)
}
