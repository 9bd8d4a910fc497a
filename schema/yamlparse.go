package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// parseYAML parses one YAML document into a node tree with positions.
// gopkg.in/yaml.v3 reports 1-based lines and columns counted in characters;
// end positions are computed here from the source text.
func parseYAML(d *Document) (root *node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, d.errAt(0, fmt.Sprintf("YAML parser failed: %v", r))
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(d.src))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return &node{kind: kindScalar, val: d.lines.rng(0, 0)}, nil // an empty document is null (at the start of its text, after a BOM)
	} else if err != nil {
		return nil, d.yamlError(err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		return nil, d.errAt(d.lines.offsetOfRune(second.Line, second.Column), "one agent per file: a second YAML document starts here")
	} else if !errors.Is(err, io.EOF) {
		return nil, d.yamlError(err)
	}
	if len(doc.Content) == 0 {
		return &node{kind: kindScalar, val: d.lines.rng(0, 0)}, nil
	}
	b := &yamlBuilder{d: d, src: d.src, expanding: map[*yaml.Node]bool{}, ranges: map[*yaml.Node]Range{}, itemKeys: map[*yaml.Node]Range{}}
	return b.build(doc.Content[0], "", 0, false, -1)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError turns a yaml.v3 error into a *ParseError. yaml.v3 reports only
// a line, often the line where the enclosing collection starts; so the error
// is placed where the parser stopped reading (found by parsing again one byte
// at a time), at that line's first non-blank character. For an unclosed
// bracket or quote, where the parser reads to the end, yaml.v3's own line
// (the opening one) is used.
func (d *Document) yamlError(err error) *ParseError {
	msg := err.Error()
	reported := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		reported, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	consumed := d.yamlConsumed()
	var line int // 0-based
	unclosed := strings.Contains(msg, "end of stream") || strings.HasPrefix(msg, "did not find expected ','")
	if consumed >= len(d.src) && reported > 0 && unclosed {
		// Scanner errors ("found ...") report 1-based lines, parser errors
		// 0-based ones.
		line = reported
		if strings.HasPrefix(msg, "found") {
			line--
		}
		// yaml.v3 omits an opening on the first line and reports the end of
		// input instead: past the last line of text means line 0.
		ystarts, _ := d.lines.yamlLines()
		if last := len(ystarts) - 1; line >= last && d.lines.yamlLineEnd(last) == ystarts[last] {
			line = 0
		}
		line = d.lines.lineOfYAML(line) // yaml.v3's lines count U+2028 and the like
	} else {
		line = d.lines.pos(max(consumed-1, 0)).Line
	}
	line = min(max(line, 0), d.lines.lines()-1)
	// A tab in the indentation (an editor's Tab key) is the error yaml.v3
	// words as a character that cannot start a token: say so, at the tab.
	if tab := d.indentTab(line); tab >= 0 && (strings.Contains(msg, "cannot start any token") || strings.Contains(msg, "tab character")) {
		return d.errAt(tab, "invalid YAML: a tab indents this line; YAML indents with spaces only ("+msg+")")
	}
	return d.errAt(d.lines.firstNonBlank(line), "invalid YAML: "+msg)
}

// indentTab is the offset of the first tab in line l's indentation, -1
// when there is none.
func (d *Document) indentTab(l int) int {
	for off := d.lines.starts[l]; off < d.lines.lineEnd(l) && (d.src[off] == ' ' || d.src[off] == '\t'); off++ {
		if d.src[off] == '\t' {
			return off
		}
	}
	return -1
}

// oneByteReader hands out its input one byte per Read, so the bytes read
// when a parser fails show how far it got.
type oneByteReader struct {
	b []byte
	n int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.n >= len(r.b) {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[r.n]
	r.n++
	return 1, nil
}

// yamlConsumed parses the source again (up to two documents) and returns how
// many bytes yaml.v3 had read when it failed.
func (d *Document) yamlConsumed() (n int) {
	r := &oneByteReader{b: d.src}
	defer func() {
		_ = recover() // a panicking parser still tells how far it read
		n = r.n
	}()
	dec := yaml.NewDecoder(r)
	for i := 0; i < 2; i++ {
		var y yaml.Node
		if err := dec.Decode(&y); err != nil {
			break
		}
	}
	return r.n
}

type yamlBuilder struct {
	d          *Document
	src        []byte
	aliasNodes int
	aliasBytes int
	expanding  map[*yaml.Node]bool
	// ranges and itemKeys memoize each YAML node's own ranges, so expanding
	// an alias many times does not rescan the anchor's text.
	ranges   map[*yaml.Node]Range
	itemKeys map[*yaml.Node]Range
	// outerAlias is the alias in the document's own text being expanded,
	// where an over-limit expansion is reported.
	outerAlias *yaml.Node
}

func (b *yamlBuilder) errNode(y *yaml.Node, msg string) *ParseError {
	return b.d.errAt(b.d.lines.offsetOfRune(y.Line, y.Column), msg)
}

// build converts y (at pointer ptr) to a node. aliased marks nodes reached
// through an alias; indent is the column of the owning key or "-" (for block
// scalars), -1 at the root.
func (b *yamlBuilder) build(y *yaml.Node, ptr string, depth int, aliased bool, indent int) (*node, error) {
	if depth > MaxDepth {
		return nil, b.errNode(y, fmt.Sprintf("nesting deeper than %d levels", MaxDepth))
	}
	if aliased {
		b.aliasNodes++
		if y.Kind == yaml.ScalarNode {
			b.aliasBytes += len(y.Value)
		}
		if b.aliasNodes > MaxAliasNodes || b.aliasBytes > MaxDocumentSize {
			at := y
			if b.outerAlias != nil {
				at = b.outerAlias
			}
			return nil, b.errNode(at, fmt.Sprintf("YAML aliases expand to more than %d nodes or %d MiB (a \"billion laughs\" document?)", MaxAliasNodes, MaxDocumentSize>>20))
		}
	}
	switch y.Kind {
	case yaml.AliasNode:
		target := y.Alias
		if target == nil {
			return nil, b.errNode(y, fmt.Sprintf("unknown alias *%s", y.Value))
		}
		if b.expanding[target] {
			return nil, b.errNode(y, fmt.Sprintf("alias *%s refers to a node that contains it", y.Value))
		}
		b.expanding[target] = true
		if !aliased {
			b.outerAlias = y
		}
		n, err := b.build(target, ptr, depth, true, indent)
		delete(b.expanding, target)
		if !aliased {
			b.outerAlias = nil
		}
		if err != nil {
			return nil, err
		}
		n.aliased = aliased
		n.val = b.memo(y, func() Range {
			start := b.start(y)
			return b.d.lines.rng(start, start+1+len(y.Value))
		})
		return n, nil
	case yaml.ScalarNode:
		v, err := b.scalarValue(y)
		if err != nil {
			return nil, err
		}
		return &node{ptr: ptr, kind: kindScalar, val: b.scalarRange(y, indent), value: v, aliased: aliased}, nil
	case yaml.MappingNode:
		return b.mapping(y, ptr, depth, aliased)
	case yaml.SequenceNode:
		return b.sequence(y, ptr, depth, aliased)
	}
	return nil, b.errNode(y, "unexpected YAML node")
}

// start is the offset of a node's content, after its anchor and tag.
func (b *yamlBuilder) start(y *yaml.Node) int {
	off := b.d.lines.offsetOfRune(y.Line, y.Column)
	if y.Kind == yaml.ScalarNode && y.Value == "" && y.Style&^yaml.TaggedStyle == 0 {
		// An empty value after an anchor or tag ("k: &a" then a line
		// break) is just after them: skipping the blanks that follow
		// would put it on the next line, over the next key.
		end := off
		for off < len(b.src) && (b.src[off] == '&' || b.src[off] == '!') {
			off = b.propEnd(off)
			end = off
			for off < len(b.src) && (b.src[off] == ' ' || b.src[off] == '\t') {
				off++
			}
		}
		return end
	}
	return b.skipProps(off)
}

// memo returns y's range from the cache, computing it once. Only nodes
// built inside an alias or merge expansion are cached: only those are built
// more than once, and the plain document pays no map per node.
func (b *yamlBuilder) memo(y *yaml.Node, f func() Range) Range {
	if len(b.expanding) == 0 {
		return f()
	}
	if r, ok := b.ranges[y]; ok {
		return r
	}
	r := f()
	b.ranges[y] = r
	return r
}

// scalarRange is a scalar token's range.
func (b *yamlBuilder) scalarRange(y *yaml.Node, indent int) Range {
	return b.memo(y, func() Range {
		start := b.start(y)
		return b.d.lines.rng(start, b.scalarEnd(y, start, indent))
	})
}

func (b *yamlBuilder) mapping(y *yaml.Node, ptr string, depth int, aliased bool) (*node, error) {
	members := len(y.Content) / 2
	n := &node{ptr: ptr, kind: kindObject, aliased: aliased, children: make([]*node, 0, members)}
	obj := make(map[string]any, members)
	explicit := make(map[string]*yaml.Node, members)
	for i := 0; i+1 < len(y.Content); i += 2 {
		k := y.Content[i]
		if isMergeKey(k) {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, b.errNode(k, "mapping keys must be strings")
		}
		if first, dup := explicit[k.Value]; dup {
			firstLine := b.d.lines.pos(b.d.lines.offsetOfRune(first.Line, first.Column)).Line + 1
			return nil, b.errNode(k, fmt.Sprintf("duplicate key %s (first on line %d)", quoteKey(k.Value), firstLine))
		}
		explicit[k.Value] = k
	}
	lastEnd := 0
	for i := 0; i+1 < len(y.Content); i += 2 {
		k, v := y.Content[i], y.Content[i+1]
		if isMergeKey(k) {
			if err := b.merge(n, obj, v, explicit, ptr, depth); err != nil {
				return nil, err
			}
			lastEnd = max(lastEnd, b.mergeEnd(v))
			continue
		}
		keyRange := b.scalarRange(k, -1)
		c, err := b.build(v, ptr+"/"+EscapePointer(k.Value), depth+1, aliased, k.Column-1)
		if err != nil {
			return nil, err
		}
		c.key = keyRange
		n.children = append(n.children, c)
		obj[k.Value] = c.value
		lastEnd = max(lastEnd, c.val.End.Offset)
	}
	n.value = obj
	n.val = b.memo(y, func() Range { return b.collectionRange(b.start(y), '{', lastEnd) })
	return n, nil
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// merge applies a "<<" merge key: the keys of the merged mapping(s) that the
// mapping does not set itself.
func (b *yamlBuilder) merge(n *node, obj map[string]any, v *yaml.Node, explicit map[string]*yaml.Node, ptr string, depth int) error {
	var sources []*yaml.Node
	switch {
	case v.Kind == yaml.SequenceNode:
		sources = v.Content
	default:
		sources = []*yaml.Node{v}
	}
	for _, s := range sources {
		m := s
		if m.Kind == yaml.AliasNode && m.Alias != nil {
			m = m.Alias
		}
		if m.Kind != yaml.MappingNode {
			return b.errNode(s, "merge key << needs a mapping or a list of mappings")
		}
		if b.expanding[m] {
			return b.errNode(s, "merge key << refers to a mapping that contains it")
		}
		b.expanding[m] = true
		sub, err := b.build(m, ptr, depth, true, -1)
		delete(b.expanding, m)
		if err != nil {
			return err
		}
		for _, c := range sub.children {
			key := SplitPointer(c.ptr)[len(SplitPointer(ptr))]
			if _, ok := explicit[key]; ok {
				continue
			}
			if _, ok := obj[key]; ok {
				continue // an earlier merge source wins
			}
			obj[key] = c.value
			n.children = append(n.children, c)
		}
	}
	return nil
}

func (b *yamlBuilder) sequence(y *yaml.Node, ptr string, depth int, aliased bool) (*node, error) {
	n := &node{ptr: ptr, kind: kindArray, aliased: aliased, children: make([]*node, 0, len(y.Content))}
	arr := make([]any, 0, len(y.Content))
	lastEnd := 0
	for i, item := range y.Content {
		c, err := b.build(item, ptr+"/"+strconv.Itoa(i), depth+1, aliased, y.Column-1)
		if err != nil {
			return nil, err
		}
		if len(b.expanding) == 0 {
			c.key = b.itemKey(c)
		} else if r, ok := b.itemKeys[item]; ok {
			c.key = r
		} else {
			c.key = b.itemKey(c)
			b.itemKeys[item] = c.key
		}
		n.children = append(n.children, c)
		arr = append(arr, c.value)
		lastEnd = max(lastEnd, c.val.End.Offset)
	}
	n.value = arr
	n.val = b.memo(y, func() Range { return b.collectionRange(b.start(y), '[', lastEnd) })
	return n, nil
}

// itemKey is the "key" of a sequence item: its "-" in block style, else its
// opening bracket when it is a bracketed collection, else the item itself
// (a scalar, or a single-pair mapping written bare in a flow sequence,
// "[a: 1]").
func (b *yamlBuilder) itemKey(c *node) Range {
	i := c.val.Start.Offset - 1
	for i >= 0 && (b.src[i] == ' ' || b.src[i] == '\t' || b.src[i] == '\n' || b.src[i] == '\r') {
		i--
	}
	if i >= 0 && b.src[i] == '-' {
		return b.d.lines.rng(i, i+1)
	}
	if s := c.val.Start.Offset; c.kind != kindScalar && s < len(b.src) && (b.src[s] == '[' || b.src[s] == '{') {
		return b.d.lines.rng(s, s+1)
	}
	return c.val
}

// collectionRange is a mapping's or sequence's range: from its first byte to
// its closing bracket (flow style) or to lastEnd, the end of its last child's
// text (block style).
func (b *yamlBuilder) collectionRange(start int, open byte, lastEnd int) Range {
	if start < len(b.src) && b.src[start] == open {
		close := byte('}')
		if open == '[' {
			close = ']'
		}
		return b.d.lines.rng(start, b.closeAfter(max(start+1, lastEnd), close))
	}
	return b.d.lines.rng(start, max(start, lastEnd))
}

// mergeEnd is the end of a merge key's value text: an alias or a list of
// aliases.
func (b *yamlBuilder) mergeEnd(v *yaml.Node) int {
	start := b.skipProps(b.d.lines.offsetOfRune(v.Line, v.Column))
	switch v.Kind {
	case yaml.AliasNode:
		return start + 1 + len(v.Value)
	case yaml.SequenceNode:
		end := start
		for _, c := range v.Content {
			end = max(end, b.mergeEnd(c))
		}
		if start < len(b.src) && b.src[start] == '[' {
			return b.closeAfter(max(start+1, end), ']')
		}
		return end
	}
	return start
}

// closeAfter finds the closing bracket at or after from, skipping blanks,
// commas and comments; it returns the offset just past it.
func (b *yamlBuilder) closeAfter(from int, close byte) int {
	for i := from; i < len(b.src); i++ {
		switch c := b.src[i]; {
		case c == close:
			return i + 1
		case c == '#' && (i == 0 || isBlank(b.src[i-1])):
			for i < len(b.src) && b.src[i] != '\n' {
				i++
			}
		case isBlank(c) || c == ',':
		default:
			return from
		}
	}
	return from
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipProps skips a node's anchor (&a) and tag (!t) and the blanks and
// comments after them.
func (b *yamlBuilder) skipProps(off int) int {
	for off < len(b.src) && (b.src[off] == '&' || b.src[off] == '!') {
		off = b.propEnd(off)
		for off < len(b.src) {
			if isBlank(b.src[off]) {
				off++
			} else if b.src[off] == '#' {
				for off < len(b.src) && b.src[off] != '\n' {
					off++
				}
			} else {
				break
			}
		}
	}
	return off
}

// propEnd is the end of the anchor or tag at off. An anchor's name is
// letters, digits, '_' and '-' (as yaml.v3 scans it: "&a:" or "&a," end
// before the indicator); a tag runs to the next blank.
func (b *yamlBuilder) propEnd(off int) int {
	if b.src[off] == '&' {
		off++
		for off < len(b.src) && isAnchorChar(b.src[off]) {
			off++
		}
		return off
	}
	for off < len(b.src) && !isBlank(b.src[off]) {
		off++
	}
	return off
}

func isAnchorChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
}

// scalarEnd is the offset just past a scalar token that starts at start:
// quotes included, a block scalar through its last content line.
func (b *yamlBuilder) scalarEnd(y *yaml.Node, start, indent int) int {
	src := b.src
	if start >= len(src) {
		return start
	}
	switch src[start] {
	case '"':
		for i := start + 1; i < len(src); i++ {
			if src[i] == '\\' {
				i++
			} else if src[i] == '"' {
				return i + 1
			}
		}
		return len(src)
	case '\'':
		for i := start + 1; i < len(src); i++ {
			if src[i] == '\'' {
				if i+1 < len(src) && src[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
		return len(src)
	case '|', '>':
		if y.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return b.blockEnd(start, indent)
		}
	}
	return b.plainEnd(y.Value, start)
}

// plainEnd matches a plain scalar's value against the source: a run of
// blanks and line breaks in the source stands for the single space or the
// line feeds that folding left in the value.
func (b *yamlBuilder) plainEnd(val string, start int) int {
	src := b.src
	i, j := start, 0
	for j < len(val) && i < len(src) {
		switch {
		// Blanks first: "0 \n0" is the value "0 0", whose space stands for
		// the whole run " \n" (matching it to the source's space alone
		// would end the range before the second line).
		case isBlank(src[i]) && (val[j] == ' ' || val[j] == '\t' || val[j] == '\n'):
			for i < len(src) && isBlank(src[i]) {
				i++
			}
			for j < len(val) && (val[j] == ' ' || val[j] == '\t' || val[j] == '\n') {
				j++
			}
		case src[i] == val[j]:
			i++
			j++
		default:
			return max(i, start)
		}
	}
	return i
}

// blockEnd is the end of a literal or folded block scalar whose header ("|",
// ">-", "|2" ...) is at start: the end of its last content line. Content
// lines are indented more than indent (the owning key's or "-"'s column).
func (b *yamlBuilder) blockEnd(start, indent int) int {
	li := b.d.lines
	src := b.src
	hl := li.pos(start).Line
	hend := start
	explicit := 0
	for hend < li.lineEnd(hl) && !isBlank(src[hend]) {
		if c := src[hend]; c >= '1' && c <= '9' {
			explicit = int(c - '0')
		}
		hend++
	}
	end := hend
	content := -1
	if explicit > 0 {
		content = max(indent, 0) + explicit
	}
	for l := hl + 1; l < li.lines(); l++ {
		s, e := li.starts[l], li.lineEnd(l)
		ind := 0
		for s+ind < e && src[s+ind] == ' ' {
			ind++
		}
		if s+ind == e {
			continue // blank lines belong to the scalar only if content follows
		}
		if content < 0 {
			if ind <= indent {
				break
			}
			content = ind
		}
		if ind < content {
			break
		}
		end = e
	}
	return end
}

// scalarValue is a scalar's JSON value by its resolved tag.
func (b *yamlBuilder) scalarValue(y *yaml.Node) (any, error) {
	switch tag := y.ShortTag(); tag {
	case "!!str", "!!binary", "!!timestamp":
		return y.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var v bool
		if err := y.Decode(&v); err != nil {
			return nil, b.errNode(y, fmt.Sprintf("invalid boolean %s", quoteKey(y.Value)))
		}
		return v, nil
	case "!!int", "!!float":
		var i int64
		if tag == "!!int" && y.Decode(&i) == nil {
			return float64(i), nil
		}
		var f float64
		if err := y.Decode(&f); err != nil {
			return nil, b.errNode(y, fmt.Sprintf("invalid number %s", quoteKey(y.Value)))
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, b.errNode(y, fmt.Sprintf("number %s has no JSON value", quoteKey(y.Value)))
		}
		return f, nil
	default:
		return nil, b.errNode(y, fmt.Sprintf("unsupported YAML tag %s", tag))
	}
}
