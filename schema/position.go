package schema

import (
	"bytes"
	"fmt"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// Position is a place in a source file: Line is 0-based, Character counts
// UTF-16 code units from the start of the line (as LSP does), and Offset is
// the byte offset into the source.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
	Offset    int `json:"offset"`
}

// Range is the half-open span [Start, End) of a node or token.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Contains reports whether p lies within r, end inclusive (a cursor just
// after a token still touches it).
func (r Range) Contains(p Position) bool {
	return !p.before(r.Start) && !r.End.before(p)
}

func (p Position) before(q Position) bool {
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Character < q.Character
}

// ParseError is malformed input at a place in a file. Line and Col are
// 1-based; Col is the UTF-16 character plus one, which equals the byte
// column on ASCII lines.
type ParseError struct {
	File string
	Line int
	Col  int
	Msg  string
}

// Error prints "file:line:col: msg".
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Range returns the zero-width range at the error's place.
func (e *ParseError) Range() Range {
	p := Position{Line: e.Line - 1, Character: e.Col - 1}
	return Range{Start: p, End: p}
}

// lineIndex converts between byte offsets and positions of one source. It
// is used while parsing only (its cursors make sequential lookups on long
// non-ASCII lines linear); it is not safe for concurrent use.
//
// Its lines are LSP's (and the editor's): they end at "\n", "\r\n" or
// "\r". yaml.v3 also ends a line at U+0085 (NEL), U+2028 and U+2029 and
// never counts a byte order mark: the lines and columns it reports are
// read in its own line table (yamlStarts), which offsetOfRune converts.
type lineIndex struct {
	src      []byte
	starts   []int  // byte offset of each line's first character
	nonASCII []bool // lines holding a multi-byte character
	// ystarts and ynonASCII are yaml.v3's lines when they are not the
	// above (a Unicode line break in the text, or a byte order mark
	// counted as text); nil otherwise.
	ystarts   []int
	ynonASCII []bool
	// cursors remember the last conversion on a non-ASCII line.
	posCur  struct{ line, off, char int }
	runeCur struct{ line, col, off int }
	// lastLine is the line of the last offset pos converted: parsers
	// convert in document order, so the next one is mostly on it or the
	// line after.
	lastLine int
}

// bom is the UTF-8 byte order mark.
const bom = "\ufeff"

func hasBOM(src []byte) bool { return bytes.HasPrefix(src, []byte(bom)) }

// newLineIndex indexes src's lines. A byte order mark at its start is not
// part of line 0 unless bomIsText (BOMIsText).
func newLineIndex(src []byte, bomIsText bool) *lineIndex {
	first := 0
	if hasBOM(src) && !bomIsText {
		first = len(bom) // the byte order mark is not part of line 0's text
	}
	li := &lineIndex{src: src}
	var unicodeBreak bool
	li.starts, li.nonASCII, unicodeBreak = indexLines(src, first, false)
	if unicodeBreak || first == 0 && hasBOM(src) {
		yfirst := 0
		if hasBOM(src) {
			yfirst = len(bom)
		}
		li.ystarts, li.ynonASCII, _ = indexLines(src, yfirst, true)
	}
	li.posCur.line, li.runeCur.line = -1, -1
	return li
}

// indexLines is the start of each line of src from first, and whether each
// holds a multi-byte character. Lines end at "\n", "\r\n" and "\r", and
// when yaml also at U+0085, U+2028 and U+2029; unicodeBreak reports
// whether src holds one of those.
func indexLines(src []byte, first int, yaml bool) (starts []int, nonASCII []bool, unicodeBreak bool) {
	n := bytes.Count(src, []byte{'\n'}) + 1 // the lines, but for lone CRs and Unicode breaks
	starts, nonASCII = make([]int, 1, n), make([]bool, 1, n)
	starts[0] = first
	for i := first; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\n':
			starts = append(starts, i+1)
			nonASCII = append(nonASCII, false)
		case c == '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
			nonASCII = append(nonASCII, false)
		case c >= 0x80:
			if w := unicodeBreakLen(src[i:]); w > 0 {
				unicodeBreak = true
				if yaml {
					i += w - 1
					starts = append(starts, i+1)
					nonASCII = append(nonASCII, false)
					continue
				}
			}
			nonASCII[len(nonASCII)-1] = true
		}
	}
	return starts, nonASCII, unicodeBreak
}

// unicodeBreakLen is the length of the line break YAML has and LSP has not
// (U+0085, U+2028, U+2029) at the start of b, 0 when there is none.
func unicodeBreakLen(b []byte) int {
	switch {
	case len(b) >= 2 && b[0] == 0xC2 && b[1] == 0x85:
		return 2
	case len(b) >= 3 && b[0] == 0xE2 && b[1] == 0x80 && (b[2] == 0xA8 || b[2] == 0xA9):
		return 3
	}
	return 0
}

// yamlLines is yaml.v3's line table: where each of its lines starts and
// which hold a multi-byte character.
func (li *lineIndex) yamlLines() ([]int, []bool) {
	if li.ystarts != nil {
		return li.ystarts, li.ynonASCII
	}
	return li.starts, li.nonASCII
}

// yamlLineEnd is lineEnd in yaml.v3's lines.
func (li *lineIndex) yamlLineEnd(l int) int {
	if li.ystarts == nil {
		return li.lineEnd(l)
	}
	if l+1 >= len(li.ystarts) {
		return len(li.src)
	}
	end := li.ystarts[l+1]
	switch {
	case end >= 2 && unicodeBreakLen(li.src[end-2:end]) == 2:
		end -= 2
	case end >= 3 && unicodeBreakLen(li.src[end-3:end]) == 3:
		end -= 3
	default:
		if end > 0 && li.src[end-1] == '\n' {
			end--
		}
		if end > 0 && li.src[end-1] == '\r' {
			end--
		}
	}
	return max(end, li.ystarts[l])
}

// lineOfYAML is the line (LSP's) where yaml.v3's 0-based line l starts.
func (li *lineIndex) lineOfYAML(l int) int {
	starts, _ := li.yamlLines()
	l = min(max(l, 0), len(starts)-1)
	if li.ystarts == nil {
		return l
	}
	return li.pos(starts[l]).Line
}

// lines is the number of lines (a trailing newline opens an empty last line).
func (li *lineIndex) lines() int { return len(li.starts) }

// lineEnd is the offset of the end of line l's text, before its line break.
func (li *lineIndex) lineEnd(l int) int {
	if l+1 >= len(li.starts) {
		return len(li.src)
	}
	end := li.starts[l+1]
	if end > 0 && li.src[end-1] == '\n' {
		end--
	}
	if end > 0 && li.src[end-1] == '\r' {
		end--
	}
	return max(end, li.starts[l])
}

// pos converts a byte offset to a Position.
func (li *lineIndex) pos(off int) Position {
	off = min(max(off, 0), len(li.src))
	l := -1
	for _, h := range [2]int{li.lastLine, li.lastLine + 1} {
		if h < len(li.starts) && li.starts[h] <= off && (h+1 == len(li.starts) || off < li.starts[h+1]) {
			l = h
			break
		}
	}
	if l < 0 {
		l = max(sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off })-1, 0)
	}
	li.lastLine = l
	start := li.starts[l]
	if off < start { // inside the byte order mark
		off = start
	}
	if !li.nonASCII[l] {
		return Position{Line: l, Character: off - start, Offset: off}
	}
	from, char := start, 0
	if c := li.posCur; c.line == l && c.off <= off {
		from, char = c.off, c.char
	}
	char += utf16Len(li.src[from:off])
	li.posCur.line, li.posCur.off, li.posCur.char = l, off, char
	return Position{Line: l, Character: char, Offset: off}
}

// lineRange is line l's range without its line break; unlike pos it
// changes nothing, so it is safe for concurrent use.
func (li *lineIndex) lineRange(l int) Range {
	start, end := li.starts[l], li.lineEnd(l)
	n := end - start
	if li.nonASCII[l] {
		n = utf16Len(li.src[start:end])
	}
	return Range{Start: Position{Line: l, Offset: start}, End: Position{Line: l, Character: n, Offset: end}}
}

// rng converts a byte span to a Range.
func (li *lineIndex) rng(start, end int) Range {
	return Range{Start: li.pos(start), End: li.pos(max(start, end))}
}

// offsetOfRune converts a 1-based line and a 1-based column counted in
// characters (runes), as gopkg.in/yaml.v3 reports them (in its own lines),
// to a byte offset.
func (li *lineIndex) offsetOfRune(line, col int) int {
	starts, nonASCII := li.yamlLines()
	if line < 1 {
		return 0
	}
	if line > len(starts) {
		return len(li.src)
	}
	off := starts[line-1]
	end := li.yamlLineEnd(line - 1)
	if !nonASCII[line-1] {
		return min(off+max(col-1, 0), end)
	}
	n := 1
	if c := li.runeCur; c.line == line && c.col <= col {
		n, off = c.col, c.off
	}
	for ; n < col && off < end; n++ {
		_, size := utf8.DecodeRune(li.src[off:end])
		off += size
	}
	li.runeCur.line, li.runeCur.col, li.runeCur.off = line, n, off
	return off
}

// firstNonBlank is the offset of line l's first non-blank byte (its end when
// it is blank), after a byte order mark counted as text (never content).
func (li *lineIndex) firstNonBlank(l int) int {
	l = min(max(l, 0), len(li.starts)-1)
	off, end := li.starts[l], li.lineEnd(l)
	if off == 0 && hasBOM(li.src) {
		off = len(bom)
	}
	for off < end && (li.src[off] == ' ' || li.src[off] == '\t') {
		off++
	}
	return off
}

func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n += utf16.RuneLen(r)
	}
	return n
}
