package lsp

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/workspace"
)

// didChangeParams is textDocument/didChange's params with each change's
// range optional: protocol.TextDocumentContentChangeEvent has a Range that
// is not a pointer, so a whole-text change (no range) could not be told from
// an insertion at 0:0.
type didChangeParams struct {
	TextDocument   protocol.VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                          `json:"contentChanges"`
}

// contentChange is one change: Text replaces Range, or the whole text when
// Range is nil. rangeLength (deprecated in LSP 3.17) is ignored.
type contentChange struct {
	Range *protocol.Range `json:"range,omitempty"`
	Text  string          `json:"text"`
}

// applyChanges returns text with changes applied in order, each range read
// in the text the changes before it produced (LSP 3.17); a change without
// a range replaces the whole text, so the changes before the last such one
// change nothing and are not read. text itself is never changed: the
// result is a new slice whenever a change applies (open documents' texts
// are shared with analysis runs). On an error nothing is applied.
//
// Positions are in UTF-16 code units, the encoding every client supports
// and the only one the server offers (it advertises no positionEncoding).
// Lines end at "\n", "\r\n" or "\r". As the protocol says, a character past
// the end of its line means the end of the line; a line past the last one,
// a range that ends before it starts, or a character between the two
// halves of a surrogate pair is refused.
func applyChanges(text []byte, changes []contentChange) ([]byte, error) {
	from := max(wholeTextFrom(changes), 0)
	for i, c := range changes[from:] {
		i += from
		if c.Range == nil {
			text = []byte(c.Text)
			continue
		}
		start, err := offsetAt(text, c.Range.Start)
		if err != nil {
			return nil, fmt.Errorf("change %d: range start: %w", i, err)
		}
		end, err := offsetAt(text, c.Range.End)
		if err != nil {
			return nil, fmt.Errorf("change %d: range end: %w", i, err)
		}
		if end < start {
			return nil, fmt.Errorf("change %d: range end %d:%d is before its start %d:%d",
				i, c.Range.End.Line, c.Range.End.Character, c.Range.Start.Line, c.Range.Start.Character)
		}
		next := make([]byte, 0, len(text)-(end-start)+len(c.Text))
		next = append(next, text[:start]...)
		next = append(next, c.Text...)
		text = append(next, text[end:]...)
	}
	return text, nil
}

// offsetAt is the byte offset in text of an LSP position (UTF-16 code
// units, lines ending at "\n", "\r\n" or "\r").
func offsetAt(text []byte, p protocol.Position) (int, error) {
	start, last := lineStart(text, int(p.Line))
	if last < int(p.Line) {
		return 0, fmt.Errorf("line %d is past the last line, %d", p.Line, last)
	}
	units := uint32(0)
	for off := start; off < len(text); {
		if units == p.Character {
			return off, nil
		}
		c := text[off]
		if c == '\n' || c == '\r' {
			return off, nil // past the end of the line: its end
		}
		r, size := utf8.DecodeRune(text[off:])
		n := uint32(1)
		if r >= 0x10000 {
			n = 2
		}
		if units+n > p.Character {
			return 0, fmt.Errorf("character %d of line %d is inside a surrogate pair (U+%04X)", p.Character, p.Line, r)
		}
		units += n
		off += size
	}
	return len(text), nil
}

// nextBreak is the offset just past the first line break at or after from,
// or -1 when there is none.
func nextBreak(text []byte, from int) int {
	for i := from; i < len(text); i++ {
		switch text[i] {
		case '\n':
			return i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				return i + 2
			}
			return i + 1
		}
	}
	return -1
}

// wholeTextFrom is the index of the last change without a range (the
// whole text), or -1 when every change has one.
func wholeTextFrom(changes []contentChange) int {
	for i := len(changes) - 1; i >= 0; i-- {
		if changes[i].Range == nil {
			return i
		}
	}
	return -1
}

// The lines of a text as the protocol counts them: a line ends at "\n",
// "\r\n" or "\r", each one break. Every position the server reads or
// writes goes through these.

// lineStart is the offset of the first byte of a 0-based line and line;
// past the last line, the last line's start and number.
func lineStart(text []byte, line int) (start, reached int) {
	cr := bytes.IndexByte(text, '\r') >= 0
	for reached < line {
		i := -1
		if cr {
			i = nextBreak(text, start)
		} else if j := bytes.IndexByte(text[start:], '\n'); j >= 0 {
			i = start + j + 1
		}
		if i < 0 {
			return start, reached
		}
		start = i
		reached++
	}
	return start, reached
}

// lineContentEnd is the offset of the end of the line that holds offset
// from, before its line break.
func lineContentEnd(text []byte, from int) int {
	if i := bytes.IndexAny(text[from:], "\r\n"); i >= 0 {
		return from + i
	}
	return len(text)
}

// splitLines is text's lines without their line breaks.
func splitLines(text string) []string {
	var out []string
	for {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			return append(out, text)
		}
		out = append(out, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
}

// lineBreak is the line break an edit of text writes: the text's own (its
// first), "\n" when it has none.
func lineBreak(text []byte) string {
	i := bytes.IndexAny(text, "\r\n")
	switch {
	case i < 0 || text[i] == '\n':
		return "\n"
	case i+1 < len(text) && text[i+1] == '\n':
		return "\r\n"
	}
	return "\r"
}

// readEditorText reads a file as an editor shows it: without a byte order
// mark at its start, which VS Code and Neovim drop from a document's text.
// Positions in a file never opened are then those of the file once opened.
func readEditorText(path string) ([]byte, error) {
	data, err := workspace.ReadFile(path)
	return bytes.TrimPrefix(data, []byte("\ufeff")), err
}
