package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"
)

// ParseCache keeps the parsed pieces of one file's latest version, so that
// parsing the next version parses again only the pieces whose text changed
// (the others are reused, moved to their new lines), and parses those pieces
// on several cores. The result is always the one a full parse gives: a file
// that cannot be split safely, or any piece that fails to parse, is parsed
// whole. It is safe for concurrent use.
//
// A YAML file is split along its block mappings and sequences: a top-level
// key with everything under it, and inside a long one, runs of its members
// or items, each parsed alone by gopkg.in/yaml.v3 and joined into the tree
// the whole file parses to.
type ParseCache struct {
	chunkLines int // the lines a piece aims for

	mu     sync.Mutex
	pieces map[string]cachedPiece // by text
	// last is what the latest version's value gave (nil: none yet).
	last *validated
}

// validated is what one value of the agent file gave: the agent schema's
// answer (invalid, nil when it passed) and, when it decoded, the agent
// config. Both are functions of the value alone, so a later version whose
// value is equal (an edit of a comment, of blank lines, of layout) reuses
// them; its problems are placed in its own document (problemsOf). Shared
// between versions: never changed.
type validated struct {
	value   any
	invalid error
	cfg     *AgentConfig
}

// lookup is what a value equal to v gave, or nil.
func (c *ParseCache) lookup(v any) *validated {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if last == nil || !equalValue(last.value, v) {
		return nil
	}
	return last
}

// keep records what v gave.
func (c *ParseCache) keep(r *validated) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.last = r
	c.mu.Unlock()
}

// equalValue reports whether two parsed values (nil, bool, float64,
// string, []any, map[string]any) are the same value; numbers compare by
// their bits, so -0 is not 0. Any other type compares with reflect.
func equalValue(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !equalValue(av, bv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

type cachedPiece struct {
	text string
	from int        // the piece's first line (0-based)
	root *yaml.Node // read-only, lines counted from the whole source
}

// NewParseCache returns an empty cache for one file.
func NewParseCache() *ParseCache { return newParseCache(defaultChunkLines) }

// defaultChunkLines is the size a piece aims for: large enough that a
// piece's own overhead (a decoder) is small beside its text, small enough
// that an edit re-parses little.
const defaultChunkLines = 64

func newParseCache(chunkLines int) *ParseCache {
	return &ParseCache{chunkLines: max(chunkLines, 1), pieces: map[string]cachedPiece{}}
}

// LoadAgent is LoadAgent that parses YAML through the cache.
func (c *ParseCache) LoadAgent(filename string, data []byte, opts ...ParseOption) (*Document, *AgentConfig, []Problem, error) {
	return loadAgent(filename, data, nil, c, parseOptions(opts))
}

// ParseDocument is ParseDocument that parses YAML through the cache.
func (c *ParseCache) ParseDocument(filename string, data []byte, opts ...ParseOption) (*Document, error) {
	d, err := parseTreeWith(filename, data, c, parseOptions(opts))
	if err != nil {
		return nil, err
	}
	d.finish()
	return d, nil
}

// parse is parseYAML through the cache. ok is false when the file cannot
// be split or a piece did not parse: the caller parses it whole.
func (c *ParseCache) parse(d *Document) (root *node, ok bool) {
	if c == nil {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			root, ok = nil, false
		}
	}()
	p := newPlanner(d.src, c.chunkLines)
	if p == nil {
		return nil, false
	}
	plan, ok := p.body(0, len(p.lines), 0)
	if !ok || len(p.pieces) < 2 {
		return nil, false
	}
	c.mu.Lock()
	old := c.pieces
	c.mu.Unlock()
	var misses []*piece
	for _, pc := range p.pieces {
		if cp, hit := old[string(p.text(pc))]; hit {
			pc.key, pc.root = cp.text, cp.root
			if cp.from != pc.from {
				pc.root = shiftedCopy(cp.root, pc.from-cp.from)
			}
			continue
		}
		misses = append(misses, pc)
	}
	if !parsePieces(p, misses) {
		return nil, false
	}
	for _, pc := range p.pieces {
		if !pc.fits() {
			return nil, false
		}
	}
	next := make(map[string]cachedPiece, len(p.pieces))
	for _, pc := range p.pieces {
		if pc.key == "" {
			pc.key = string(p.text(pc))
		}
		next[pc.key] = cachedPiece{text: pc.key, from: pc.from, root: pc.root}
	}
	c.mu.Lock()
	c.pieces = next
	c.mu.Unlock()

	b := &yamlBuilder{d: d, src: d.src, expanding: map[*yaml.Node]bool{}, ranges: map[*yaml.Node]Range{}, itemKeys: map[*yaml.Node]Range{}}
	n, err := b.build(p.join(plan), "", 0, false, -1)
	if err != nil {
		return nil, false // the full parse reports it, with its own wording
	}
	return n, true
}

// parsePieces parses the pieces on up to GOMAXPROCS goroutines; it reports
// whether all of them parsed.
func parsePieces(p *planner, pieces []*piece) bool {
	workers := min(runtime.GOMAXPROCS(0), len(pieces))
	if workers <= 1 {
		for _, pc := range pieces {
			if !pc.parse(p.text(pc)) {
				return false
			}
		}
		return true
	}
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(pieces) {
					return
				}
				if !pieces[i].parse(p.text(pieces[i])) {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return !failed.Load()
}

// line is what the planner knows of one source line.
type line struct {
	start  int // byte offset
	indent int // leading spaces
	kind   lineKind
	// empty marks a key line whose value is not on the line ("key:" with
	// at most a comment after it).
	empty bool
	// itemKey marks an item line whose item is a mapping starting on it
	// ("- key: ...", "- key:").
	itemKey bool
}

type lineKind uint8

const (
	lineBlank   lineKind = iota // spaces only
	lineComment                 // spaces, then '#'
	lineKey                     // spaces, then a plain key, ':' and a blank or the end
	lineItem                    // spaces, then '-' and a blank or the end
	lineOther                   // anything else
)

// planner splits a source into pieces.
type planner struct {
	src    []byte
	lines  []line
	size   int
	pieces []*piece
}

// piece is a run of lines parsed alone: the members of a block mapping (or
// the items of a block sequence) starting on the lines at entries, at
// column col; or, for a header, one "key:" line whose value is the block
// below it.
type piece struct {
	from, to int // lines [from, to)
	col      int
	seq      bool
	header   bool
	// item marks a piece holding one item of a sequence at col, a mapping
	// of which the piece holds the first member only.
	item    bool
	entries []int
	root    *yaml.Node // parsed, lines counted in the whole source
	key     string     // the text, once it is a string
}

// plan is a block collection made of parts, in order: a piece's members or
// items, or one member whose key is a header piece and whose value is
// itself a plan.
type plan struct {
	parts []part
}

type part struct {
	piece *piece
	body  *plan // with piece a header or an item: the rest of its value
}

// newPlanner classifies the lines of src, or returns nil when src has
// anything that makes line-based splitting unsafe: a byte order mark, a
// carriage return or a Unicode line break (yaml.v3 counts lines
// differently), a tab in the indentation.
func newPlanner(src []byte, size int) *planner {
	if bytes.HasPrefix(src, []byte("\ufeff")) || bytes.IndexByte(src, '\r') >= 0 ||
		bytes.Contains(src, []byte("\u0085")) || bytes.Contains(src, []byte("\u2028")) || bytes.Contains(src, []byte("\u2029")) {
		return nil
	}
	p := &planner{src: src, size: size, lines: make([]line, 0, bytes.Count(src, []byte("\n"))+1)}
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		l, ok := classify(src[off:end])
		if !ok {
			return nil
		}
		l.start = off
		p.lines = append(p.lines, l)
		off = end + 1
	}
	return p
}

// classify reads one line (without its line break).
func classify(s []byte) (line, bool) {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	l := line{indent: i}
	switch {
	case i == len(s):
		l.kind = lineBlank
	case s[i] == '\t':
		return l, false
	case s[i] == '#':
		l.kind = lineComment
	case s[i] == '-' && (i+1 == len(s) || s[i+1] == ' '):
		l.kind = lineItem
		if i+2 < len(s) && isKeyStart(s[i+2]) {
			k, _ := classify(s[i+2:])
			l.itemKey = k.kind == lineKey
		}
	case isKeyStart(s[i]):
		l.kind = lineOther
		j := i + 1
		for j < len(s) && isKeyChar(s[j]) {
			j++
		}
		if j < len(s) && s[j] == ':' && (j+1 == len(s) || s[j+1] == ' ') {
			l.kind = lineKey
			rest := bytes.TrimLeft(s[j+1:], " ")
			l.empty = len(rest) == 0 || rest[0] == '#'
		}
	default:
		l.kind = lineOther
	}
	return l, true
}

func isKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

func isKeyChar(c byte) bool { return isKeyStart(c) || c == '-' || c == '.' || c == '/' }

// text is a piece's source text.
func (p *planner) text(pc *piece) []byte {
	end := len(p.src)
	if pc.to < len(p.lines) {
		end = p.lines[pc.to].start
	}
	return p.src[p.lines[pc.from].start:end]
}

func (p *planner) add(pc *piece) *piece {
	p.pieces = append(p.pieces, pc)
	return pc
}

// body plans lines [from, to): a block mapping or sequence whose members
// or items start at column col, after any blank and comment lines. ok is
// false when the lines are anything else.
func (p *planner) body(from, to, col int) (*plan, bool) {
	var starts []int
	seq := false
	for i := from; i < to; i++ {
		l := p.lines[i]
		if l.kind == lineBlank || l.kind == lineComment {
			continue
		}
		if l.indent < col {
			return nil, false
		}
		if l.indent > col {
			if len(starts) == 0 {
				return nil, false
			}
			continue
		}
		switch {
		case l.kind == lineKey && (len(starts) == 0 || !seq):
		case l.kind == lineItem && (len(starts) == 0 || seq):
			seq = true
		default:
			return nil, false
		}
		starts = append(starts, i)
	}
	if len(starts) == 0 {
		return nil, false
	}
	pl := &plan{}
	groupFrom := from
	var group []int
	flush := func(to int) {
		if len(group) > 0 {
			pl.parts = append(pl.parts, part{piece: p.add(&piece{from: groupFrom, to: to, col: col, seq: seq, entries: group})})
			group, groupFrom = nil, to
		}
	}
	for k, s := range starts {
		end := to
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		if seq && end-s > p.size && p.lines[s].itemKey {
			if rest, at, ok := p.itemRest(s, end, col+2); ok {
				flush(s)
				h := p.add(&piece{from: groupFrom, to: at, col: col, seq: true, item: true, entries: []int{s}})
				pl.parts = append(pl.parts, part{piece: h, body: rest})
				groupFrom = end
				continue
			}
		}
		if !seq && end-s > p.size && p.lines[s].empty {
			if sub, ok := p.member(s, end); ok {
				flush(s)
				h := p.add(&piece{from: groupFrom, to: s + 1, col: col, header: true, entries: []int{s}})
				pl.parts = append(pl.parts, part{piece: h, body: sub})
				groupFrom = end
				continue
			}
		}
		group = append(group, s)
		if end-groupFrom >= p.size {
			flush(end)
		}
	}
	flush(to)
	return pl, true
}

// member plans the value of the mapping member whose "key:" line is at,
// spanning lines [at, to): a block collection indented more than the key.
func (p *planner) member(at, to int) (*plan, bool) {
	for i := at + 1; i < to; i++ {
		if l := p.lines[i]; l.kind != lineBlank && l.kind != lineComment {
			if l.indent <= p.lines[at].indent {
				return nil, false
			}
			return p.body(at+1, to, l.indent)
		}
	}
	return nil, false
}

// itemRest plans the members after the first of the mapping that starts
// on the item line at (lines [at, to)), whose keys are at column col: from
// the line of the second member on. ok is false when the mapping has one
// member or those lines are not its members.
func (p *planner) itemRest(at, to, col int) (rest *plan, from int, ok bool) {
	for i := at + 1; i < to; i++ {
		if l := p.lines[i]; l.kind != lineBlank && l.kind != lineComment && l.indent <= col {
			if l.indent < col || l.kind != lineKey {
				return nil, 0, false
			}
			rest, ok := p.body(i, to, col)
			return rest, i, ok
		}
	}
	return nil, 0, false
}

// parse parses the piece's text alone; it reports whether that gave one
// document without aliases or anchors. Lines are made to count from the
// start of the whole source.
func (pc *piece) parse(text []byte) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil || len(doc.Content) != 1 {
		return false
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		return false
	}
	if !shift(doc.Content[0], pc.from) {
		return false
	}
	pc.root = doc.Content[0]
	return true
}

// shift adds delta to the line of every node under n; it reports false
// on an alias or an anchor (those may refer across pieces).
func shift(n *yaml.Node, delta int) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return false
	}
	n.Line += delta
	for _, c := range n.Content {
		if !shift(c, delta) {
			return false
		}
	}
	return true
}

// shiftedCopy is a deep copy of n (without aliases) with delta added to
// every line.
func shiftedCopy(n *yaml.Node, delta int) *yaml.Node {
	c := *n
	c.Line += delta
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = shiftedCopy(ch, delta)
		}
	}
	return &c
}

// fits reports whether the parsed piece is what the planner expected: a
// mapping with a key on each entry line at column col (for a header, one
// key with no value), or a sequence with one item per entry line, starting
// at the first one.
func (pc *piece) fits() bool {
	r := pc.root
	if r == nil {
		return false
	}
	if pc.item {
		if r.Kind != yaml.SequenceNode || len(r.Content) != 1 || r.Line != pc.entries[0]+1 || r.Column != pc.col+1 {
			return false
		}
		m := r.Content[0]
		return m.Kind == yaml.MappingNode && len(m.Content) == 2 && m.Content[0].Kind == yaml.ScalarNode &&
			m.Content[0].Line == pc.entries[0]+1 && m.Content[0].Column == pc.col+3
	}
	if pc.seq {
		return r.Kind == yaml.SequenceNode && len(r.Content) == len(pc.entries) &&
			r.Line == pc.entries[0]+1 && r.Column == pc.col+1
	}
	if r.Kind != yaml.MappingNode || len(r.Content) != 2*len(pc.entries) {
		return false
	}
	for i, e := range pc.entries {
		k := r.Content[2*i]
		if k.Kind != yaml.ScalarNode || k.Line != e+1 || k.Column != pc.col+1 {
			return false
		}
	}
	if pc.header {
		v := r.Content[1]
		return v.Kind == yaml.ScalarNode && v.Value == "" && v.Style == 0 && v.ShortTag() == "!!null"
	}
	return true
}

// join assembles a plan's parsed pieces into the node the whole text parses
// to. Cached nodes are shared, never changed: every collection node made
// here is new.
func (p *planner) join(pl *plan) *yaml.Node {
	n := *pl.parts[0].piece.root
	n.Content = nil
	for _, pt := range pl.parts {
		switch {
		case pt.body == nil:
			n.Content = append(n.Content, pt.piece.root.Content...)
		case pt.piece.item:
			it := *pt.piece.root.Content[0]
			it.Content = append(slices.Clip(it.Content), p.join(pt.body).Content...)
			n.Content = append(n.Content, &it)
		default:
			n.Content = append(n.Content, pt.piece.root.Content[0], p.join(pt.body))
		}
	}
	return &n
}

// String describes a piece, for tests.
func (pc *piece) String() string {
	kind := "map"
	switch {
	case pc.item:
		kind = "item"
	case pc.header:
		kind = "header"
	case pc.seq:
		kind = "seq"
	}
	return fmt.Sprintf("%s[%d,%d)@%d", kind, pc.from, pc.to, pc.col)
}
