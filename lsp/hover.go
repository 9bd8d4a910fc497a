package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// sourceOf says whether an authored pointer belongs to the role or the
// instance (the reference framework's section sources).
func sourceOf(ptr string) string {
	switch {
	case strings.HasPrefix(ptr, "/roleTemplate"), strings.HasPrefix(ptr, "/capabilities"), strings.HasPrefix(ptr, "/manuals"):
		return "role"
	case ptr == "":
		return ""
	}
	return "instance"
}

// Hover answers: on a section with memory-derived lines, those lines with
// their record → conversation/run → ledger history and the composed text of
// the section; on any other authored line, its source (role or instance).
func (s *server) Hover(ctx context.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	releaseQueue(ctx)
	f, err := s.loadAgentFile(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	ptr, onKey := f.doc.Locate(fromPosition(p.Position))
	var b strings.Builder
	var lines []memoryLine
	var composed any
	var history map[string][]store.LedgerEntry
	if f.agent != nil {
		v, err := s.memoryView(ctx, f)
		if err == nil {
			history = v.history
			anchorLines := map[string]int{}
			for _, ml := range v.lines {
				line, ok := anchorLines[ml.container]
				if !ok {
					line = anchorLine(f.doc, ml.container)
					anchorLines[ml.container] = line
				}
				// On the section, or on the line its hints are anchored to.
				onSection := ptr != "" && (ml.container == ptr || strings.HasPrefix(ptr, ml.container+"/") && !f.doc.Has(ptr))
				if onSection || line == int(p.Position.Line) {
					lines = append(lines, ml)
				}
			}
			if onKey && v.res != nil && v.res.Config != nil {
				composed = valueAt(v.res.Config, ptr)
			}
		}
	}
	if ptr == "" && len(lines) == 0 {
		return nil, nil
	}
	r, _ := f.doc.KeyRange(ptr)
	if !onKey {
		r, _ = f.doc.ValueRange(ptr)
	}
	if ptr != "" {
		fmt.Fprintf(&b, "`%s` · authored (%s)\n", ptr, sourceOf(ptr))
		if onKey {
			b.WriteString(keyDescription(ptr))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(&b, "\n**%d memory-derived line%s here**\n", len(lines), plural(len(lines)))
		for _, ml := range lines {
			b.WriteString("\n---\n\n")
			b.WriteString(provenanceMarkdown(ml, history[ml.rec.ID]))
		}
	}
	if composed != nil {
		fmt.Fprintf(&b, "\n**Composed** (authored + memory)\n\n%s", composedText(composed))
	}
	rng := toRange(r)
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.Markdown, Value: b.String()}, Range: &rng}, nil
}

// valueAt reads a JSON pointer out of a typed config (via its JSON shape).
func valueAt(cfg *schema.AgentConfig, ptr string) any {
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil
	}
	for _, tok := range schema.SplitPointer(ptr) {
		switch n := v.(type) {
		case map[string]any:
			v = n[tok]
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(n) {
				return nil
			}
			v = n[i]
		default:
			return nil
		}
	}
	return v
}

// composedText renders a composed section: a list as bullets, a map as
// `- **key**: value` lines (as the prompt renders background), anything
// else as JSON.
func composedText(v any) string {
	var b strings.Builder
	switch n := v.(type) {
	case []any:
		for _, item := range n {
			if str, ok := item.(string); ok {
				fmt.Fprintf(&b, "- %s\n", str)
				continue
			}
			data, _ := json.Marshal(item)
			fmt.Fprintf(&b, "- `%s`\n", data)
		}
		return b.String()
	case map[string]any:
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- **%s**: %s\n", k, overlay.FormatValue(n[k]))
		}
		return b.String()
	case string:
		return n + "\n"
	}
	data, _ := json.MarshalIndent(v, "", "  ")
	return "```json\n" + string(data) + "\n```\n"
}
