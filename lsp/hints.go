package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// memoryLine is one memory-derived (or would-be) line of an agent file.
type memoryLine struct {
	rec       schema.MemoryRecord
	kind      string // "promoted", "spilled" or "candidate"
	pointer   string // where it lands (or would land) in config′
	container string // the authored section it belongs to
	promotion *store.Promotion
}

// memoryView is the composition of one agent file with its store.
type memoryView struct {
	res   *compose.Result
	lines []memoryLine
}

// memoryView composes f and lists its memory lines: applied records,
// spilled ones and candidates. A missing, locked or corrupt store gives an
// empty view (schema-only service).
func (s *server) memoryView(ctx context.Context, f *agentFile) (*memoryView, error) {
	v := &memoryView{}
	err := s.withStore(ctx, f, false, func(st store.Store) error {
		res, err := compose.Instantiate(ctx, compose.Request{
			AgentFile: f.path, Store: st, Scope: f.ws.Config.Scope, Policy: overlay.PolicyFrom(f.ws.Config),
			Now: s.opts.Now, ReadFile: func(string) ([]byte, error) { return f.text, nil },
		})
		if err != nil {
			return err
		}
		v.res = res
		byID := map[string]schema.MemoryRecord{}
		for _, r := range res.Records {
			byID[r.ID] = r
		}
		// One ledger scan instead of a Promotion lookup (one store
		// operation) per record.
		promos := map[string]*store.Promotion{}
		if len(res.Records) > 0 {
			entries, err := st.Ledger(ctx, store.LedgerFilter{Ops: []store.Op{store.OpPromote, store.OpApprove}})
			if err != nil {
				return err
			}
			for _, e := range entries {
				if _, ok := byID[e.RecordID]; !ok {
					continue
				}
				p := &store.Promotion{RecordID: e.RecordID, Tier: e.Tier, PromotedAt: e.At, Actor: e.Actor}
				if e.Evidence != nil {
					p.Evidence = *e.Evidence
					p.Approver = e.Evidence.ApprovedBy
				}
				if e.Op == store.OpApprove {
					p.Approver = e.Actor.String()
				}
				promos[e.RecordID] = p
			}
		}
		for _, o := range res.Report.Records {
			rec, ok := byID[o.ID]
			if !ok {
				continue
			}
			var kind string
			switch o.Status {
			case overlay.StatusApplied:
				kind = "promoted"
			case overlay.StatusSpilled:
				kind = "spilled"
			case overlay.StatusShadowed:
				kind = "shadowed"
			default:
				continue
			}
			ml := memoryLine{rec: rec, kind: kind, pointer: o.Pointer, container: containerOf(f.doc, o.Pointer, rec.Target)}
			ml.promotion = promos[rec.ID]
			v.lines = append(v.lines, ml)
		}
		cands, err := st.Candidates(ctx, f.ws.Config.Scope, res.Agent)
		if err != nil {
			return err
		}
		for _, c := range cands {
			v.lines = append(v.lines, memoryLine{rec: c, kind: "candidate", container: containerOf(f.doc, "", c.Target)})
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoStore) {
		return v, err
	}
	return v, nil
}

// containerOf is the authored section a memory line belongs to: the parent
// of its pointer in config′, or the section its target names.
func containerOf(d *schema.Document, ptr string, t *schema.MemoryTarget) string {
	if ptr != "" {
		c := schema.ParentPointer(ptr)
		if strings.HasPrefix(ptr, "/roleTemplate/recovery/prompt/") {
			c = "/roleTemplate/recovery"
		}
		return c
	}
	if t == nil {
		return ""
	}
	switch t.Primitive {
	case schema.PrimitiveBackground:
		return "/background/" + schema.EscapePointer(t.Section)
	case schema.PrimitiveJudgment, schema.PrimitiveExample:
		domain := t.Domain
		slot := t.Slot
		if t.Primitive == schema.PrimitiveExample {
			domain, slot = t.JudgmentDomain, "examples"
		}
		for _, j := range d.Children("/roleTemplate/judgments") {
			if v, ok := d.ValueAt(j + "/domain"); ok && v == domain {
				return j + "/" + slot
			}
		}
		return "/roleTemplate/judgments"
	case schema.PrimitiveAwareness:
		return "/awareness/domains"
	case schema.PrimitiveRecovery:
		return "/roleTemplate/recovery"
	case schema.PrimitiveManual:
		return "/manuals/" + schema.EscapePointer(t.Capability) + "/workflows"
	}
	return ""
}

// anchor is where a container's hints go: the end of its key's line, or of
// the nearest existing parent key's line when the section is not authored.
func anchor(d *schema.Document, container string) protocol.Position {
	_, r := d.Nearest(container)
	return protocol.Position{Line: uint32(r.Start.Line), Character: uint32(lineLengthUTF16(d.Source(), r.Start.Line))}
}

// lineLengthUTF16 is the length of a 0-based line in UTF-16 units.
func lineLengthUTF16(src []byte, line int) int {
	for i := 0; i < line; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return 0
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	src = bytes.TrimSuffix(src, []byte("\r"))
	n := 0
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		src = src[size:]
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

// inlayHint answers textDocument/inlayHint: one hint per memory-derived
// line at its section, candidates and spilled records marked as such.
func (s *server) inlayHint(ctx context.Context, p *inlayHintParams) ([]InlayHint, error) {
	releaseQueue(ctx)
	f, err := s.loadAgentFile(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	out := []InlayHint{}
	if f.agent == nil {
		return out, nil // schema errors: no composition to show
	}
	v, err := s.memoryView(ctx, f)
	if err != nil {
		s.log.Debug("inlay hints without store", "err", err)
		return out, nil
	}
	for _, ml := range v.lines {
		pos := anchor(f.doc, ml.container)
		if pos.Line < p.Range.Start.Line || pos.Line > p.Range.End.Line {
			continue
		}
		data, _ := json.Marshal(map[string]string{"recordId": ml.rec.ID, "kind": ml.kind})
		out = append(out, InlayHint{
			Position: pos, Label: hintLabel(ml), PaddingLeft: true, Data: data,
			Tooltip: &MarkupContent{Kind: "markdown", Value: provenanceMarkdown(ml, nil)},
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Position, out[j].Position
		return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
	})
	return out, nil
}

// hintLabel is "+ text · tier · learned DATE · conv C · N supports".
func hintLabel(ml memoryLine) string {
	prefix := map[string]string{"promoted": "+ ", "spilled": "(spilled to recall) ", "candidate": "(candidate) ", "shadowed": "(shadowed by a newer memory) "}[ml.kind]
	return prefix + truncate(ml.rec.Content, 80) + " · " + shortProvenance(ml)
}

func shortProvenance(ml memoryLine) string {
	var parts []string
	if ml.rec.Target != nil {
		parts = append(parts, string(schema.TierOf(*ml.rec.Target)))
	}
	at := ml.rec.CreatedAt
	if ml.rec.Provenance.At != "" {
		at = ml.rec.Provenance.At
	}
	if len(at) >= 10 {
		parts = append(parts, "learned "+at[:10])
	}
	if c := ml.rec.Provenance.ConversationID; c != "" {
		parts = append(parts, "conv "+c)
	}
	if n := len(ml.rec.Supports); n > 0 {
		parts = append(parts, fmt.Sprintf("%d support%s", n, plural(n)))
	}
	return strings.Join(parts, " · ")
}

// provenanceMarkdown is a memory line's full story: record, provenance,
// supports, promotion evidence and approver, then ledger history.
func provenanceMarkdown(ml memoryLine, history []store.LedgerEntry) string {
	var b strings.Builder
	r := ml.rec
	fmt.Fprintf(&b, "**%s memory** `%s`\n\n%s\n\n", title(ml.kind), r.ID, r.Content)
	if r.Target != nil {
		fmt.Fprintf(&b, "- target: `%s` (tier %s)\n", r.Target.String(), schema.TierOf(*r.Target))
	}
	fmt.Fprintf(&b, "- kind: %s; created %s\n", r.Kind, r.CreatedAt)
	pv := r.Provenance
	if pv.ConversationID != "" || pv.RunID != "" || pv.Author != "" {
		fmt.Fprintf(&b, "- learned from conversation `%s`", orDash(pv.ConversationID))
		if pv.RunID != "" {
			fmt.Fprintf(&b, ", run `%s`", pv.RunID)
		}
		if pv.Author != "" {
			fmt.Fprintf(&b, ", by %s", pv.Author)
		}
		b.WriteString("\n")
	}
	for _, sp := range r.Supports {
		fmt.Fprintf(&b, "- supported by conversation `%s` at %s\n", sp.ConversationID, sp.At)
	}
	if p := ml.promotion; p != nil {
		fmt.Fprintf(&b, "- promoted %s by %s (tier %s)", p.PromotedAt, p.Actor, p.Tier)
		if p.Approver != "" {
			fmt.Fprintf(&b, ", approved by %s", p.Approver)
		}
		b.WriteString("\n")
		ev := p.Evidence
		if len(ev.Conversations) > 0 {
			fmt.Fprintf(&b, "- evidence: %d conversations (%s)\n", len(ev.Conversations), strings.Join(ev.Conversations, ", "))
		}
		if ev.Eval != nil {
			fmt.Fprintf(&b, "- evidence: eval %d/%d → %d/%d\n", ev.Eval.BasePassed, ev.Eval.BasePassed+ev.Eval.BaseFailed, ev.Eval.Passed, ev.Eval.Passed+ev.Eval.Failed)
		}
	}
	switch ml.kind {
	case "candidate":
		b.WriteString("\n_Candidate: not part of the agent yet (recall only)._\n")
	case "spilled":
		b.WriteString("\n_Over budget: spilled to the recall block, not part of the composed prompt._\n")
	case "shadowed":
		b.WriteString("\n_Shadowed: a newer memory holds the same slot; resolve the conflict with a supersede._\n")
	}
	if len(history) > 0 {
		b.WriteString("\n**History**\n\n")
		for _, e := range history {
			fmt.Fprintf(&b, "- %s %s by %s", e.At, e.Op, e.Actor)
			if e.Reason != "" {
				fmt.Fprintf(&b, ": %s", e.Reason)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
