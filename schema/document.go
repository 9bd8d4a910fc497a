package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Limits on parsed documents. They keep hostile input (huge files, alias
// bombs, deep nesting) from exhausting time, memory or the stack.
const (
	// MaxDocumentSize is the largest agent or config file accepted, in bytes.
	MaxDocumentSize = 8 << 20
	// MaxDepth is the deepest nesting of objects and arrays accepted.
	MaxDepth = 512
	// MaxAliasNodes bounds the nodes YAML alias expansion may create.
	MaxAliasNodes = 100_000
)

// Document is a parsed agent file (YAML or JSON, or any other file parsed by
// ParseDocument) with the source range of every node's key and value,
// addressed by JSON Pointer.
type Document struct {
	filename string
	src      []byte
	lines    *lineIndex
	root     *node
	nodes    map[string]*node
	supps    []Suppression
	rootRng  Range
	// nodeLines are the sorted, distinct lines on which a node starts.
	nodeLines []int
	// extent is the largest end offset of any node's key or value: the
	// text after it holds no node (SameLayout).
	extent int
	// unicodeBreaks are the ranges of a YAML file's U+0085, U+2028 and
	// U+2029 (lineBreakProblems), the first MaxLineBreakProblems;
	// moreBreaks counts the others.
	unicodeBreaks []Range
	moreBreaks    int
}

type nodeKind int

const (
	kindScalar nodeKind = iota
	kindObject
	kindArray
)

// node is one value of the document tree.
type node struct {
	ptr      string
	kind     nodeKind
	key      Range // the member's key; for array items, the "-" or the item itself
	val      Range
	value    any
	children []*node // document order
	// aliased marks a node reached through a YAML alias: its ranges are the
	// anchor's text, so PointerAt does not descend into it.
	aliased bool
}

// ParseDocument parses an agent file: JSON when the name ends in ".json",
// YAML otherwise. Malformed input gives a *ParseError with file:line:col.
func ParseDocument(filename string, data []byte, opts ...ParseOption) (*Document, error) {
	d, err := parseTreeWith(filename, data, nil, parseOptions(opts))
	if err != nil {
		return nil, err
	}
	d.finish()
	return d, nil
}

// ParseOption changes how a parse counts positions.
type ParseOption int

// BOMIsText counts a byte order mark at the start of the text as the text's
// first character (U+FEFF, one UTF-16 code unit of line 0), as an editor
// that keeps it in the text it sends counts it. Without it the mark is not
// part of line 0, as editors show a file they read (VS Code and Neovim drop
// it). It changes positions only: the mark is never part of a value.
const BOMIsText ParseOption = 1

type parseOpts struct{ bomIsText bool }

func parseOptions(opts []ParseOption) parseOpts {
	var o parseOpts
	for _, opt := range opts {
		if opt == BOMIsText {
			o.bomIsText = true
		}
	}
	return o
}

// parseTreeWith is the first half of ParseDocument: the node tree and its
// values, not yet indexed, parsing YAML through cache (when not nil). Only
// d.root may be read until finish returns.
func parseTreeWith(filename string, data []byte, cache *ParseCache, o parseOpts) (*Document, error) {
	if len(data) > MaxDocumentSize {
		return nil, sizeError(filename, int64(len(data)))
	}
	d := &Document{filename: filename, src: data, lines: newLineIndex(data, o.bomIsText)}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return nil, d.errAt(off, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", data[off]))
	}
	var err error
	if strings.EqualFold(filepath.Ext(filename), ".json") {
		d.root, err = parseJSON(d)
	} else if root, ok := cache.parse(d); ok {
		d.root = root
	} else {
		d.root, err = parseYAML(d)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// finish is the second half of ParseDocument: the pointer index, the root
// range, the node lines and the suppression comments. It does not touch
// the nodes' values, which may be read meanwhile.
func (d *Document) finish() {
	d.nodes = make(map[string]*node, countNodes(d.root))
	d.index(d.root)
	d.rootRng = d.computeRootRange()
	d.collectLines()
	d.supps = d.scanSuppressions()
	d.unicodeBreaks, d.moreBreaks = d.scanUnicodeBreaks()
}

// errAt is a *ParseError at a byte offset.
func (d *Document) errAt(off int, msg string) *ParseError {
	p := d.lines.pos(off)
	return &ParseError{File: d.filename, Line: p.Line + 1, Col: p.Character + 1, Msg: msg}
}

// countNodes is the number of nodes of the tree under n, n included.
func countNodes(n *node) int {
	c := 1
	for _, ch := range n.children {
		c += countNodes(ch)
	}
	return c
}

func (d *Document) index(n *node) {
	d.nodes[n.ptr] = n
	d.extent = max(d.extent, n.key.End.Offset, n.val.End.Offset)
	for _, c := range n.children {
		d.index(c)
	}
}

func (d *Document) collectLines() {
	seen := make([]bool, d.lines.lines())
	mark := func(l int) {
		if l >= 0 && l < len(seen) {
			seen[l] = true
		}
	}
	var walk func(n *node)
	walk = func(n *node) {
		if n.aliased {
			return
		}
		mark(n.key.Start.Line)
		mark(n.val.Start.Line)
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, c := range d.root.children {
		walk(c)
	}
	if len(d.root.children) == 0 {
		mark(d.root.val.Start.Line)
	}
	d.nodeLines = make([]int, 0, len(seen))
	for l, ok := range seen {
		if ok {
			d.nodeLines = append(d.nodeLines, l)
		}
	}
}

// Filename is the name the document was parsed under.
func (d *Document) Filename() string { return d.filename }

// Source is the document's text as given to ParseDocument.
func (d *Document) Source() []byte { return d.src }

// Value is the document as a generic JSON value: map[string]any, []any,
// string, float64, bool or nil. YAML aliases are expanded.
func (d *Document) Value() any { return d.root.value }

// Has reports whether a node exists at ptr.
func (d *Document) Has(ptr string) bool { _, ok := d.nodes[ptr]; return ok }

// KeyRange is the range of the key of the node at ptr. An array item's "key"
// is its "-" indicator in block YAML, else its opening bracket or the item
// itself; the root's is its first line.
func (d *Document) KeyRange(ptr string) (Range, bool) {
	n, ok := d.nodes[ptr]
	if !ok {
		return Range{}, false
	}
	if n == d.root {
		return d.rootRange(), true
	}
	return n.key, true
}

// ValueRange is the range of the value of the node at ptr: a scalar token
// (quotes and block scalars included) or a whole collection.
func (d *Document) ValueRange(ptr string) (Range, bool) {
	n, ok := d.nodes[ptr]
	if !ok {
		return Range{}, false
	}
	return n.val, true
}

// Nearest returns the nearest existing ancestor of ptr (ptr itself when it
// exists) and its key range; for the root, the range is its first line.
func (d *Document) Nearest(ptr string) (string, Range) {
	for {
		if n, ok := d.nodes[ptr]; ok {
			if n == d.root {
				return "", d.rootRange()
			}
			return ptr, n.key
		}
		if ptr == "" {
			return "", d.rootRange()
		}
		ptr = ParentPointer(ptr)
	}
}

// rootRange is the text of the root value's first line, never the whole
// document.
func (d *Document) rootRange() Range { return d.rootRng }

func (d *Document) computeRootRange() Range {
	l := d.root.val.Start.Line
	start := d.lines.firstNonBlank(l)
	return d.lines.rng(start, d.lines.lineEnd(l))
}

// PointerAt returns the innermost node whose key or value contains p ("" for
// the root).
func (d *Document) PointerAt(p Position) string {
	ptr, _ := d.Locate(p)
	return ptr
}

// Locate is PointerAt that also reports whether p is on the node's key
// rather than its value (for completion of property names). It does not
// descend into YAML alias expansions.
func (d *Document) Locate(p Position) (ptr string, onKey bool) {
	n := d.root
	for {
		var next *node
		for _, c := range n.children {
			if c.aliased {
				// An alias's expansion, or the members a "<<" merge key
				// brought in: their ranges are the anchor's text. The
				// mapping's own members may follow them.
				continue
			}
			if n.kind == kindObject && c.key.Contains(p) {
				return c.ptr, true
			}
			if c.val.Contains(p) {
				next = c
				break
			}
		}
		if next == nil {
			return n.ptr, false
		}
		n = next
	}
}

// Children returns the pointers of the node's children in document order
// (none for scalars and unknown pointers).
func (d *Document) Children(ptr string) []string {
	n, ok := d.nodes[ptr]
	if !ok {
		return nil
	}
	out := make([]string, len(n.children))
	for i, c := range n.children {
		out[i] = c.ptr
	}
	return out
}

// IsObject reports whether the node at ptr is an object (a mapping).
func (d *Document) IsObject(ptr string) bool {
	n, ok := d.nodes[ptr]
	return ok && n.kind == kindObject
}

// IsArray reports whether the node at ptr is an array (a sequence).
func (d *Document) IsArray(ptr string) bool {
	n, ok := d.nodes[ptr]
	return ok && n.kind == kindArray
}

// ValueAt returns the generic value of the node at ptr.
func (d *Document) ValueAt(ptr string) (any, bool) {
	n, ok := d.nodes[ptr]
	if !ok {
		return nil, false
	}
	return n.value, true
}

// Suppression is a `# agent-ls: ignore RULE-ID reason` comment. Line is
// 0-based; it applies to diagnostics on that line and on NextLine, the next
// line holding a node (-1 when there is none).
type Suppression struct {
	Line     int
	NextLine int
	Rule     string
	Reason   string
}

// Suppressions returns the document's suppression comments in order (none
// for JSON, which has no comments). A comment may name several rules
// separated by commas; each gets its own Suppression.
func (d *Document) Suppressions() []Suppression { return d.supps }

// Suppressed reports whether a suppression comment for rule covers a
// diagnostic starting on line (0-based).
func (d *Document) Suppressed(rule string, line int) bool {
	for _, s := range d.supps {
		if s.Rule == rule && (s.Line == line || s.NextLine == line) {
			return true
		}
	}
	return false
}

var suppressionRE = regexp.MustCompile(`(?:^|[ \t])#[ \t]*agent-ls:[ \t]*ignore[ \t]+([A-Za-z0-9_.,-]+)[ \t]*(.*)$`)

func (d *Document) scanSuppressions() []Suppression {
	if strings.EqualFold(filepath.Ext(d.filename), ".json") {
		return nil
	}
	var out []Suppression
	for l := 0; l < d.lines.lines(); l++ {
		start, end := d.lines.starts[l], d.lines.lineEnd(l)
		line := d.src[start:end]
		if !bytes.Contains(line, []byte("agent-ls:")) {
			continue
		}
		m := suppressionRE.FindSubmatchIndex(line)
		if m == nil {
			continue
		}
		hash := start + strings.IndexByte(string(line[m[0]:]), '#') + m[0]
		if d.insideScalar(hash) {
			continue
		}
		next := -1
		i := sort.SearchInts(d.nodeLines, l+1)
		if i < len(d.nodeLines) {
			next = d.nodeLines[i]
		}
		reason := strings.TrimSpace(string(line[m[4]:m[5]]))
		for _, rule := range strings.Split(string(line[m[2]:m[3]]), ",") {
			if rule = strings.TrimSpace(rule); rule != "" {
				out = append(out, Suppression{Line: l, NextLine: next, Rule: rule, Reason: reason})
			}
		}
	}
	return out
}

// insideScalar reports whether a byte offset falls inside a scalar token or
// a key (so a "#" there is text, not a comment).
func (d *Document) insideScalar(off int) bool {
	inside := func(r Range) bool { return r.Start.Offset < off && off < r.End.Offset }
	for _, n := range d.nodes {
		if n.aliased {
			continue
		}
		if (n.kind == kindScalar && inside(n.val)) || inside(n.key) {
			return true
		}
	}
	return false
}

// JSON encodes the node at ptr ("" for the whole document) as JSON with
// object keys in document order, so decoding it keeps authored order (as
// Entries do for background sections).
func (d *Document) JSON(ptr string) ([]byte, bool) {
	n, ok := d.nodes[ptr]
	if !ok {
		return nil, false
	}
	var buf bytes.Buffer
	if err := n.writeJSON(&buf); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

func (n *node) writeJSON(buf *bytes.Buffer) error {
	switch n.kind {
	case kindObject:
		buf.WriteByte('{')
		for i, c := range n.children {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, err := json.Marshal(UnescapePointer(n.childToken(c)))
			if err != nil {
				return err
			}
			buf.Write(k)
			buf.WriteByte(':')
			if err := c.writeJSON(buf); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case kindArray:
		buf.WriteByte('[')
		for i, c := range n.children {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := c.writeJSON(buf); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		b, err := json.Marshal(n.value)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// childToken is the (escaped) last pointer token of child c of n.
func (n *node) childToken(c *node) string {
	return c.ptr[len(n.ptr)+1:]
}

// scanUnicodeBreaks is the range of each of the first MaxLineBreakProblems
// U+0085, U+2028 and U+2029 of a YAML file (none in JSON, where they are
// text), and how many more there are.
func (d *Document) scanUnicodeBreaks() (out []Range, more int) {
	if d.lines.ystarts == nil || strings.EqualFold(filepath.Ext(d.filename), ".json") {
		return nil, 0
	}
	for off := 0; off < len(d.src); off++ {
		if w := unicodeBreakLen(d.src[off:]); w > 0 {
			if len(out) < MaxLineBreakProblems {
				out = append(out, d.lines.rng(off, off+w))
			} else {
				more++
			}
			off += w - 1
		}
	}
	return out, more
}
