package lens

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
)

// The composed prompt is shown as formatted text: a small markdown subset
// (headings, paragraphs, "-" lists, **strong**, *emphasis*, `code`) parsed
// here into blocks of typed spans, which the agent template writes with
// html/template's escaping. Nothing of the prompt becomes markup of its
// own: learned lines are written by agents, so a tag is text, and a link is
// its text followed by its address as text (no anchor, whatever its
// scheme).

// span is a run of inline text: Kind "" (plain), "strong", "em", "code" or
// "url" (a link's address, shown as text).
type span struct {
	Kind string
	Text string
}

// promptLine is one line of a block.
type promptLine []span

// promptBlock is one block of a section: a heading (Level is the HTML
// level), a paragraph, a list, or the marker of learned lines spilled to
// recall. Learned names the records a heading's or a paragraph's lines
// were learned from.
type promptBlock struct {
	Kind    string // "heading", "para", "list", "marker"
	Level   int
	Lines   []promptLine
	Items   []promptItem
	Learned []learnedRef
}

// promptItem is one list item (Depth 0 or 1) with its continuation lines.
type promptItem struct {
	Depth   int
	Lines   []promptLine
	Learned []learnedRef
}

// promptSection is one section of the composed prompt.
type promptSection struct {
	Title  string
	Blocks []promptBlock
}

// learnedRef is what the page says of one record a line was learned from:
// its id, the conversation it came from, in how many conversations it was
// seen, its target and tier (Known is false when the composition did not
// carry the record).
type learnedRef struct {
	ID            string
	Known         bool
	Conversation  string
	Conversations int
	Target        string
	Tier          string
}

func learnedRefs(ids []string, records map[string]schema.MemoryRecord) []learnedRef {
	out := make([]learnedRef, 0, len(ids))
	for _, id := range ids {
		ref := learnedRef{ID: id}
		if r, ok := records[id]; ok {
			ref.Known = true
			ref.Conversation = r.Provenance.ConversationID
			ref.Conversations = r.DistinctConversations()
			if r.Target != nil {
				ref.Target = r.Target.String()
				ref.Tier = string(schema.TierOf(*r.Target))
			}
		}
		out = append(out, ref)
	}
	return out
}

// formatPrompt turns the composition's sections into formatted blocks.
func formatPrompt(sections []engine.Section, records map[string]schema.MemoryRecord) []promptSection {
	out := make([]promptSection, 0, len(sections))
	for _, s := range sections {
		var b blockBuilder
		for _, f := range s.Fragments {
			switch {
			case engine.IsMarker(f):
				b.flush()
				b.blocks = append(b.blocks, promptBlock{Kind: "marker", Lines: []promptLine{{{Text: f.Text}}},
					Learned: learnedRefs(f.MemoryIDs, records)})
			case len(f.MemoryIDs) > 0:
				b.fragment(f.Text, learnedRefs(f.MemoryIDs, records))
			default:
				b.fragment(f.Text, nil)
			}
		}
		b.flush()
		blocks := b.blocks
		if len(blocks) == 0 || blocks[0].Kind != "heading" {
			blocks = append([]promptBlock{{Kind: "heading", Level: 3, Lines: []promptLine{{{Text: s.Title}}}}}, blocks...)
		}
		out = append(out, promptSection{Title: s.Title, Blocks: blocks})
	}
	return out
}

// blockBuilder gathers a section's blocks: consecutive list items (of
// consecutive fragments) make one list; a paragraph does not run across
// fragments.
type blockBuilder struct {
	blocks []promptBlock
	para   *promptBlock // the open paragraph of the current fragment
	list   *promptBlock // the open list
}

func (b *blockBuilder) flushPara() {
	if b.para != nil {
		b.blocks = append(b.blocks, *b.para)
		b.para = nil
	}
}

func (b *blockBuilder) flush() {
	b.flushPara()
	if b.list != nil {
		b.blocks = append(b.blocks, *b.list)
		b.list = nil
	}
}

// fragment adds one fragment (one or more lines) of the prompt; learned is
// non-nil for a learned fragment.
func (b *blockBuilder) fragment(text string, learned []learnedRef) {
	inItem := false // the fragment's last line was a list item
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \t")
		trimmed := strings.TrimLeft(line, " \t")
		indent := len(line) - len(trimmed)
		switch {
		case trimmed == "":
			b.flushPara()
			inItem = false
		case indent == 0 && headingLevel(trimmed) > 0:
			b.flush()
			n := headingLevel(trimmed)
			b.blocks = append(b.blocks, promptBlock{Kind: "heading", Level: min(n+1, 6),
				Lines: []promptLine{inline(strings.TrimSpace(trimmed[n:]))}, Learned: learned})
			inItem = false
		case isItem(trimmed):
			b.flushPara()
			if b.list == nil {
				b.list = &promptBlock{Kind: "list"}
			}
			depth := 0
			if indent > 0 {
				depth = 1
			}
			it := promptItem{Depth: depth, Lines: []promptLine{inline(trimmed[2:])}}
			if len(b.list.Items) == 0 || !inItem || depth == 0 {
				it.Learned = learned
			}
			b.list.Items = append(b.list.Items, it)
			inItem = true
		case inItem && indent > 0:
			// A continuation of the item above (an example's Good/Bad/Why).
			last := &b.list.Items[len(b.list.Items)-1]
			last.Lines = append(last.Lines, inline(trimmed))
		default:
			if b.list != nil {
				b.blocks = append(b.blocks, *b.list)
				b.list = nil
			}
			if b.para == nil {
				b.para = &promptBlock{Kind: "para", Learned: learned}
			}
			b.para.Lines = append(b.para.Lines, inline(trimmed))
			inItem = false
		}
	}
	// A paragraph never runs into the next fragment; a list may.
	b.flushPara()
}

// headingLevel is n for a line "#…# text" with n (1–6) hashes, else 0.
func headingLevel(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(s) || s[n] != ' ' {
		return 0
	}
	return n
}

func isItem(s string) bool {
	return len(s) > 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' '
}

// inline parses one line's spans: `code`, **strong**, *em* and _em_ (an
// underscore or asterisk inside a word, as in deploy_window, is text) and
// [text](address) links, whose address is kept as text.
func inline(s string) promptLine {
	var out promptLine
	var plain strings.Builder
	emit := func(kind, text string) {
		if plain.Len() > 0 {
			out = append(out, span{Text: plain.String()})
			plain.Reset()
		}
		out = append(out, span{Kind: kind, Text: text})
	}
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case rest[0] == '`':
			if j := strings.IndexByte(rest[1:], '`'); j > 0 {
				emit("code", rest[1:1+j])
				i += j + 2
				continue
			}
		case strings.HasPrefix(rest, "**"):
			if j := strings.Index(rest[2:], "**"); j > 0 && !unicode.IsSpace(rune(rest[2])) {
				emit("strong", rest[2:2+j])
				i += j + 4
				continue
			}
		case (rest[0] == '*' || rest[0] == '_') && opens(s, i):
			if j := closing(s, i); j > 0 {
				emit("em", s[i+1:j])
				i = j + 1
				continue
			}
		case rest[0] == '[':
			if text, addr, n, ok := link(rest); ok {
				emit("", text)
				emit("url", addr)
				i += n
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(rest)
		plain.WriteString(rest[:size])
		i += size
	}
	if plain.Len() > 0 {
		out = append(out, span{Text: plain.String()})
	}
	return out
}

// opens reports whether the * or _ at i may open emphasis: at the start of
// a word, followed by a non-space.
func opens(s string, i int) bool {
	if i+1 >= len(s) || unicode.IsSpace(rune(s[i+1])) || s[i+1] == s[i] {
		return false
	}
	if i == 0 {
		return true
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	return !unicode.IsLetter(prev) && !unicode.IsDigit(prev)
}

// closing is the index of the delimiter closing the emphasis opened at i
// (the same character, after a non-space, at the end of a word), or -1.
func closing(s string, i int) int {
	d := s[i]
	for j := i + 2; j < len(s); j++ {
		if s[j] != d || unicode.IsSpace(rune(s[j-1])) {
			continue
		}
		if j+1 < len(s) {
			next, _ := utf8.DecodeRuneInString(s[j+1:])
			if unicode.IsLetter(next) || unicode.IsDigit(next) || next == rune(d) {
				continue
			}
		}
		return j
	}
	return -1
}

// link parses "[text](address)" at the start of s: its text, address and
// length.
func link(s string) (text, addr string, n int, ok bool) {
	end := strings.Index(s, "](")
	if end <= 1 || strings.ContainsAny(s[1:end], "[]") {
		return "", "", 0, false
	}
	// The address ends at the parenthesis that balances the opening one.
	depth := 0
	for j := end + 2; j < len(s); j++ {
		switch s[j] {
		case ' ', '\t':
			return "", "", 0, false
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
				continue
			}
			if j == end+2 {
				return "", "", 0, false
			}
			return s[1:end], s[end+2 : j], j + 1, true
		}
	}
	return "", "", 0, false
}
