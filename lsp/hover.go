package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
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

// Bounds of one hover's Markdown: a section with hundreds of learned lines
// lists the first ones and points to the composed view for the rest.
const (
	maxHoverLines    = 20 // memory lines told in full
	maxComposedItems = 50 // items of the composed section
	maxCachedHovers  = 256
)

// hoverKey is what a hover depends on besides its view (whose key holds the
// parsed text, workspace and store): the node, key or value, and the line.
type hoverKey struct {
	ptr   string
	onKey bool
	line  uint32
}

// cachedHover returns the rendered hover of key, if this view has one.
func (v *memoryView) cachedHover(key hoverKey) (*protocol.Hover, bool) {
	v.hoverMu.Lock()
	defer v.hoverMu.Unlock()
	h, ok := v.hovers[key]
	return h, ok
}

// putHover keeps a rendered hover (shared: never modified after).
func (v *memoryView) putHover(key hoverKey, h *protocol.Hover) {
	v.hoverMu.Lock()
	defer v.hoverMu.Unlock()
	if v.hovers == nil || len(v.hovers) >= maxCachedHovers {
		v.hovers = map[hoverKey]*protocol.Hover{}
	}
	v.hovers[key] = h
}

// configJSON is the composed config in its JSON shape (built once).
func (v *memoryView) configJSON() any {
	v.cfgOnce.Do(func() {
		if v.res == nil || v.res.Config == nil {
			return
		}
		data, err := json.Marshal(v.res.Config)
		if err != nil {
			return
		}
		_ = json.Unmarshal(data, &v.cfgJSON)
	})
	return v.cfgJSON
}

// Hover answers: on a section with memory-derived lines, those lines with
// their record → conversation/run → ledger history and the composed text of
// the section; on any other authored line, its source (role or instance).
// Long sections are bounded (maxHoverLines, maxComposedItems); a rendered
// hover is kept with its view, so hovering again on an unchanged file and
// store renders nothing.
func (s *server) Hover(ctx context.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	pin := s.pin(p.TextDocument.URI)
	releaseQueue(ctx)
	f, err := s.loadPinned(p.TextDocument.URI, pin)
	if unparsed(err) {
		return nil, nil // the parse error is a diagnostic
	}
	if err != nil {
		return nil, err
	}
	ptr, onKey := f.doc.Locate(fromPosition(f.text, p.Position))
	var v *memoryView
	if f.agent != nil {
		if mv, err := s.memoryView(ctx, f); err == nil {
			v = mv
		}
	}
	key := hoverKey{ptr: ptr, onKey: onKey, line: p.Position.Line}
	if v != nil {
		if h, ok := v.cachedHover(key); ok {
			return h, nil
		}
	}
	h, complete := renderHover(ctx, f, v, key)
	if v != nil && complete {
		v.putHover(key, h)
	}
	return h, nil
}

// untrustedMarkdown is text an agent or a runtime may have written (a
// record's content, a reason) as Markdown text that makes no structure in
// a hover or a tooltip: one line (engine.Inline, the rule of the prompt)
// with every ASCII punctuation character backslash-escaped, so no list
// item, heading, emphasis, code, link, image or HTML comes out of it.
func untrustedMarkdown(s string) string {
	s = engine.Inline(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if r < utf8.RuneSelf && (unicode.IsPunct(r) || unicode.IsSymbol(r)) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codeSpan is s (an id, a target, an actor, a key: text an agent, a
// runtime or a file may have chosen) as one Markdown code span, which makes
// no structure whatever it holds: one line, fenced by more backticks than
// its longest run of them, and padded with a space when it starts or ends
// with a backtick. A span between single backticks ended at the first
// backtick of s, and the rest (an image, a link, HTML) was Markdown.
func codeSpan(s string) string {
	s = strings.Map(func(r rune) rune {
		if schema.IsLineBreak(r) {
			return ' '
		}
		return r
	}, s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 && (strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`")) {
		s = " " + s + " "
	}
	return fence + s + fence
}

// renderHover is the hover of key in f with its view v (nil: none);
// complete is false when a memory line's history could not be read (the
// hover says so, and is not kept).
func renderHover(ctx context.Context, f *agentFile, v *memoryView, key hoverKey) (h *protocol.Hover, complete bool) {
	complete = true
	ptr, onKey := key.ptr, key.onKey
	var lines []memoryLine
	var composed any
	if v != nil {
		anchorLines := map[string]int{}
		for _, ml := range v.lines {
			line, ok := anchorLines[ml.container]
			if !ok {
				line = anchorLine(f.doc, ml.container)
				anchorLines[ml.container] = line
			}
			// On the section, or on the line its hints are anchored to.
			onSection := ptr != "" && (ml.container == ptr || strings.HasPrefix(ptr, ml.container+"/") && !f.doc.Has(ptr))
			if onSection || line == int(key.line) {
				lines = append(lines, ml)
			}
		}
		if onKey && ptr != "" {
			composed = jsonAt(v.configJSON(), ptr)
		}
	}
	if ptr == "" && len(lines) == 0 {
		return nil, true
	}
	r, _ := f.doc.KeyRange(ptr)
	if !onKey {
		r, _ = f.doc.ValueRange(ptr)
	}
	var b strings.Builder
	if ptr != "" {
		if isWorkspaceConfig(f.path) {
			fmt.Fprintf(&b, "%s · workspace config (%s)\n", codeSpan(ptr), schema.WorkspaceConfigName)
		} else {
			fmt.Fprintf(&b, "%s · authored (%s)\n", codeSpan(ptr), sourceOf(ptr))
		}
		if onKey {
			b.WriteString(keyDescription(f.path, ptr))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(&b, "\n**%d memory-derived line%s here**\n", len(lines), plural(len(lines)))
		shown := lines
		if len(shown) > maxHoverLines {
			// Lines that wait for a decision first, then what the agent uses.
			sort.SliceStable(shown, func(i, j int) bool { return hoverRank(shown[i].kind()) < hoverRank(shown[j].kind()) })
			shown = shown[:maxHoverLines]
		}
		for _, ml := range shown {
			b.WriteString("\n---\n\n")
			text, ok := v.provenanceOf(ctx, ml, shown...)
			b.WriteString(text)
			complete = complete && ok
		}
		if k := len(lines) - len(shown); k > 0 {
			fmt.Fprintf(&b, "\n---\n\n_… and %d more memory-derived line%s here: the composed view (agent-ls.showComposedPrompt) lists them all._\n", k, plural(k))
		}
	}
	if composed != nil {
		fmt.Fprintf(&b, "\n**Composed** (authored + memory)\n\n%s", composedText(composed, maxComposedItems))
	}
	rng := toRange(r)
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.Markdown, Value: b.String()}, Range: &rng}, complete
}

// hoverRank orders memory lines in a bounded hover.
func hoverRank(kind string) int {
	switch kind {
	case "candidate":
		return 0
	case "shadowed":
		return 1
	case "promoted":
		return 2
	}
	return 3
}

// jsonAt reads a JSON pointer out of a decoded JSON value.
func jsonAt(v any, ptr string) any {
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
// else as JSON. Lists and maps show at most max entries and say how many
// more there are.
func composedText(v any, max int) string {
	var b strings.Builder
	more := func(k int) {
		if k > 0 {
			fmt.Fprintf(&b, "- _… and %d more (the composed view lists them all)_\n", k)
		}
	}
	switch n := v.(type) {
	case []any:
		all := n
		if len(n) > max {
			n = n[:max]
		}
		for _, item := range n {
			if str, ok := item.(string); ok {
				fmt.Fprintf(&b, "- %s\n", untrustedMarkdown(str))
				continue
			}
			data, _ := json.Marshal(item)
			fmt.Fprintf(&b, "- %s\n", codeSpan(string(data)))
		}
		more(len(all) - len(n))
		return b.String()
	case map[string]any:
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		shown := keys
		if len(shown) > max {
			shown = shown[:max]
		}
		for _, k := range shown {
			fmt.Fprintf(&b, "- **%s**: %s\n", untrustedMarkdown(k), untrustedMarkdown(engine.FormatValue(n[k])))
		}
		more(len(keys) - len(shown))
		return b.String()
	case string:
		return untrustedMarkdown(n) + "\n"
	}
	data, _ := json.MarshalIndent(v, "", "  ")
	return "```json\n" + string(data) + "\n```\n"
}
