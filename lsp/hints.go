package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/textkernel"
)

// memoryLine is one memory-derived (or would-be) line of an agent file.
type memoryLine struct {
	rec       *schema.MemoryRecord // shared with the view's inputs: never modify it
	container string               // the authored section it belongs to
	promotion *store.Promotion
	history   uint32   // its ledger history: memoryView.histories[history]
	k         lineKind // kind()
}

// lineKind is a memory line's kind as a number: a view of 100k candidates
// holds 100k lines.
type lineKind uint8

const (
	linePromoted lineKind = iota
	lineSpilled
	lineShadowed
	lineCandidate
)

var lineKinds = [...]string{linePromoted: "promoted", lineSpilled: "spilled", lineShadowed: "shadowed", lineCandidate: "candidate"}

// kind is "promoted", "spilled", "shadowed" or "candidate".
func (ml memoryLine) kind() string { return lineKinds[ml.k] }

// memoryView is the composition of one agent file with its store. It is
// shared between requests (see viewCache): read it, never modify it.
type memoryView struct {
	res   *engine.ComposeResult
	lines []memoryLine
	// histories are the memory lines' ledger histories, oldest first
	// (memoryLine.history; 0 is none); equal ones are shared.
	histories [][]historyEntry

	hintsOnce sync.Once
	hints     []InlayHint // every hint of the file, in position order, without tooltips
	hintLines []int       // the index in lines of each hint (-1: a summary)
	tipsOnce  sync.Once
	tipHints  []InlayHint // hints with their tooltips inline (clients without resolve)

	// readHist reads candidates' histories (server.readHistories) into
	// candHist, when historyOf first asks for them.
	readHist func(ctx context.Context, ids []string) (map[string][]historyEntry, error)
	histMu   sync.Mutex
	candHist map[string][]historyEntry

	hoverMu sync.Mutex
	hovers  map[hoverKey]*protocol.Hover // rendered hovers of this view
	cfgOnce sync.Once
	cfgJSON any // res.Config in its JSON shape, for composed sections
}

// memoryView composes f and lists its memory lines: applied records,
// spilled ones and candidates. A missing, locked or corrupt store gives an
// empty view (schema-only service). The composition is reused while the
// parsed text, the workspace and the store file are unchanged and no record
// has expired since (viewCache).
func (s *server) memoryView(ctx context.Context, f *agentFile) (*memoryView, error) {
	start := s.opts.Now()
	now := schema.FormatTime(start)
	// Cacheable: a stamped store not written within the racy window.
	stamp, cacheable := engine.SettledStamp(f.ws.StorePath, start)
	key := viewKey{doc: f.doc, ws: f.ws, stamp: stamp}
	agent := ""
	if f.agent != nil {
		agent = f.agent.RoleTemplate.Name
	}
	owner := recordOwner{path: f.ws.StorePath, agent: agent}
	if cacheable {
		if v := s.views.get(f.uri, key, now); v != nil {
			s.budget.claim(owner, len(v.lines))
			return v, nil
		}
	}
	// One composition read at a time (turns.go); the one ahead may have
	// cached this view meanwhile.
	done, err := s.turn(ctx, s.viewTurns, owner)
	if err != nil {
		return &memoryView{}, err
	}
	defer done()
	if cacheable {
		if v := s.views.get(f.uri, key, now); v != nil {
			s.budget.claim(owner, len(v.lines))
			return v, nil
		}
	}
	skey := storeKey{ws: f.ws, agent: agent, stamp: stamp}
	var sd *storeData
	if cacheable && agent != "" {
		if sd = s.views.getStore(skey, now); sd != nil {
			s.budget.claim(owner, len(sd.promoted)+len(sd.candidates))
		}
	}
	if sd == nil {
		var err error
		sd, err = s.readStoreData(ctx, f, agent)
		if errors.Is(err, errNoStore) {
			return &memoryView{}, nil
		}
		if err != nil {
			return &memoryView{}, err
		}
		// The store may have changed while it was read: cache only when
		// the stamp still holds afterwards.
		if after, _, ok := engine.StampOf(f.ws.StorePath); !ok || after != stamp {
			cacheable = false
		}
		if cacheable && agent != "" {
			s.views.putStore(skey, now, sd)
			s.budget.claim(owner, len(sd.promoted)+len(sd.candidates))
		}
	}
	v, err := s.composeView(ctx, f, sd)
	if err != nil {
		return &memoryView{}, err
	}
	if cacheable {
		s.views.put(f.uri, key, now, v, owner)
		s.budget.claim(owner, len(v.lines))
	}
	return v, nil
}

// readStoreData reads, in one store operation, what composing agent's file
// needs from its store: promoted records, candidates, their promotions,
// and the promoted records' histories.
func (s *server) readStoreData(ctx context.Context, f *agentFile, agent string) (*storeData, error) {
	sd := &storeData{promotions: map[string]*store.Promotion{}}
	err := s.withStore(ctx, f, false, func(st store.Tx) error {
		var err error
		if sd.promoted, err = st.Promoted(ctx, f.ws.Config.Scope, agent); err != nil {
			return fmt.Errorf("promoted records: %w", err)
		}
		// A record whose promotion a human rejected is no candidate. The
		// candidates are the ones the lint facts read (one decode).
		if sd.candidates, _, err = s.candidatesOf(f.ws.StorePath)(ctx, st, agent, f.ws.Config.Scope); err != nil {
			return err
		}
		if len(sd.promoted)+len(sd.candidates) == 0 {
			return nil
		}
		ids := make([]string, 0, len(sd.promoted)+len(sd.candidates))
		// wanted maps a promoted record's id to its place.
		wanted := make(map[string]int, len(sd.promoted))
		for i, r := range sd.promoted {
			ids = append(ids, r.ID)
			wanted[r.ID] = i
		}
		for _, r := range sd.candidates {
			ids = append(ids, r.ID)
		}
		rows, err := st.Promotions(ctx, ids)
		if err != nil {
			return fmt.Errorf("promotions: %w", err)
		}
		for id, p := range rows {
			sd.promotions[id] = &p
		}
		if len(sd.promoted) == 0 {
			return nil
		}
		// One history read for the promoted records instead of a store
		// operation per record; the backend reads only their entries.
		// Their whole entries are kept until they vouch for the records:
		// nothing shows bytes the ledger does not (as render). A
		// candidate's history is read when a hover or a hint's tooltip
		// shows it (memoryView.historyOf): with a big store an agent has
		// tens of thousands of candidates, and reading their entries for
		// every composition took seconds and held megabytes.
		ids = ids[:len(sd.promoted)]
		promoted := make(map[string][]store.LedgerEntry, len(sd.promoted))
		for _, r := range sd.promoted {
			promoted[r.ID] = nil
		}
		var in interner
		// Each record's history is a number in one table (a map by record
		// id was 8 MB for 100k candidates), and a history of one entry is
		// shared by the records with an equal one (a batch's writes; a
		// history each was 8 MB more). Adding an entry to a shared
		// history gives the record a history of its own.
		sd.histories = [][]historyEntry{nil}
		sd.hist = make([]uint32, len(sd.promoted))
		shared := []bool{false} // by table number: a one-entry history of several records
		list := func(hs []historyEntry, sh bool) uint32 {
			sd.histories = append(sd.histories, hs)
			shared = append(shared, sh)
			return uint32(len(sd.histories) - 1)
		}
		alone := map[historyEntry]uint32{}
		add := func(k int, h historyEntry) {
			n := sd.hist[k]
			switch {
			case n == 0:
				x, ok := alone[h]
				if !ok {
					x = list([]historyEntry{h}, true)
					alone[h] = x
				}
				sd.hist[k] = x
			case shared[n]:
				sd.hist[k] = list(append(slices.Clip(sd.histories[n]), h), false)
			default:
				sd.histories[n] = append(sd.histories[n], h)
			}
		}
		err = st.History(ctx, ids, func(e store.LedgerEntry) error {
			// A history line shows when, what, who and why
			// (provenanceMarkdown): the view keeps only that of an entry,
			// not the record, proposal and hashes it carries.
			h := in.history(e)
			entryRecords(e, func(id string) {
				if es, ok := promoted[id]; ok {
					promoted[id] = append(es, e)
				}
				if k, ok := wanted[id]; ok {
					add(k, h)
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
		for _, r := range sd.promoted {
			if err := store.VouchRecord(r, sd.promotions[r.ID], promoted[r.ID]); err != nil {
				return fmt.Errorf("promoted records: %w", err)
			}
		}
		return nil
	})
	return sd, err
}

// entryRecords calls fn with each record e is about, once each: its
// record and the record it carries (store.MatchLedger's rule).
func entryRecords(e store.LedgerEntry, fn func(id string)) {
	if e.RecordID != "" {
		fn(e.RecordID)
	}
	if id := recordOf(e); id != "" && id != e.RecordID {
		fn(id)
	}
}

// readHistories reads the ledger histories of the records ids (a hover's
// or a hint's candidates: readStoreData reads the promoted records' own),
// oldest first, in one store read.
func (s *server) readHistories(ctx context.Context, f *agentFile, ids []string) (map[string][]historyEntry, error) {
	out := make(map[string][]historyEntry, len(ids))
	for _, id := range ids {
		out[id] = nil
	}
	err := s.withStore(ctx, f, false, func(st store.Tx) error {
		var in interner
		return st.History(ctx, ids, func(e store.LedgerEntry) error {
			h := in.history(e)
			entryRecords(e, func(id string) {
				if hs, ok := out[id]; ok {
					out[id] = append(hs, h)
				}
			})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recordOf is the id of the record e carries, "" for none.
func recordOf(e store.LedgerEntry) string {
	if e.Record == nil {
		return ""
	}
	return e.Record.ID
}

// compactRecords trims what a cache keeps of each record read for a view
// or a lint pass: neither reads a record's scope (the store matched it),
// equal targets share one value and equal strings (the kind, the times of
// one batch) one copy. With thousands of candidates per agent the scope
// maps alone were most of what the caches held. Their readers never modify
// records.
func compactRecords(recs []schema.MemoryRecord) {
	var in interner
	targets := map[schema.MemoryTarget]*schema.MemoryTarget{}
	for i := range recs {
		r := &recs[i]
		r.Scope = nil
		r.Kind = schema.Kind(in.str(string(r.Kind)))
		r.CreatedAt, r.UpdatedAt = in.str(r.CreatedAt), in.str(r.UpdatedAt)
		r.Provenance.At, r.Provenance.RunID, r.Provenance.Author = in.str(r.Provenance.At), in.str(r.Provenance.RunID), in.str(r.Provenance.Author)
		if r.Target != nil {
			t, ok := targets[*r.Target]
			if !ok {
				t = r.Target
				targets[*t] = t
			}
			r.Target = t
		}
	}
	packTexts(recs)
}

// packTexts moves the contents and conversation ids of recs into one
// string each record's are slices of: decoded one by one, among the
// strings of the records the store read and dropped (another agent's,
// untargeted ones), they kept the heap's small-object spans in use long
// after those were garbage. A list this short is left as it is.
func packTexts(recs []schema.MemoryRecord) {
	if len(recs) < 256 {
		return
	}
	n := 0
	for i := range recs {
		n += len(recs[i].Content) + len(recs[i].Provenance.ConversationID)
	}
	var b strings.Builder
	b.Grow(n)
	for i := range recs {
		b.WriteString(recs[i].Content)
		b.WriteString(recs[i].Provenance.ConversationID)
	}
	all, at := b.String(), 0
	for i := range recs {
		r := &recs[i]
		r.Content, at = all[at:at+len(r.Content)], at+len(r.Content)
		r.Provenance.ConversationID, at = all[at:at+len(r.Provenance.ConversationID)], at+len(r.Provenance.ConversationID)
	}
}

// clipped is recs in an array of their length when the one they came in
// is bigger by more than a sixteenth (the store sizes it for every record
// it read, store.SplitRejected grows it by appending): a cache keeps the
// array whole.
func clipped(recs []schema.MemoryRecord) []schema.MemoryRecord {
	if cap(recs)-len(recs) <= len(recs)/16 {
		return recs
	}
	out := make([]schema.MemoryRecord, len(recs))
	copy(out, recs)
	return out
}

// historyEntry is what a history line shows of a ledger entry
// (provenanceMarkdown).
type historyEntry struct {
	At     string
	Op     store.Op
	Actor  store.Actor
	Reason string
}

// interner shares equal strings of the history entries of one read: the
// entries of a batch share their time, most share a few actors.
type interner map[string]string

func (in *interner) str(s string) string {
	if *in == nil {
		*in = interner{}
	}
	if t, ok := (*in)[s]; ok {
		return t
	}
	(*in)[s] = s
	return s
}

// history is the history entry of e, its strings shared through in.
func (in *interner) history(e store.LedgerEntry) historyEntry {
	return historyEntry{At: in.str(e.At), Op: store.Op(in.str(string(e.Op))),
		Actor: store.Actor{Kind: store.ActorKind(in.str(string(e.Actor.Kind))), Name: in.str(e.Actor.Name)}, Reason: in.str(e.Reason)}
}

// nonNil is recs, or an empty list for none: compose takes a nil list for
// "read the store".
func nonNil(recs []schema.MemoryRecord) []schema.MemoryRecord {
	if recs == nil {
		return []schema.MemoryRecord{}
	}
	return recs
}

// composeView composes f with the store data sd (no store operation).
func (s *server) composeView(ctx context.Context, f *agentFile, sd *storeData) (*memoryView, error) {
	res, err := engine.Compose(ctx, engine.ComposeRequest{
		AgentFile: f.path, Promoted: nonNil(sd.promoted), Scope: f.ws.Config.Scope, Policy: engine.PolicyFrom(f.ws.Config),
		Now: s.opts.Now, ReadFile: func(string) ([]byte, error) { return f.text, nil }, Agent: f.agent,
	})
	if err != nil {
		return nil, err
	}
	v := &memoryView{res: res, histories: sd.histories,
		lines: make([]memoryLine, 0, len(res.Report.Records)+len(sd.candidates))}
	if len(sd.candidates) > 0 {
		v.readHist = func(ctx context.Context, ids []string) (map[string][]historyEntry, error) {
			return s.readHistories(ctx, f, ids)
		}
	}
	histOf := func(k int) uint32 { // the history of record k of sd (hist's order)
		if k < len(sd.hist) {
			return sd.hist[k]
		}
		return 0
	}
	promoted := make(map[string]int, len(sd.promoted))
	for i := range sd.promoted {
		promoted[sd.promoted[i].ID] = i
	}
	byID := make(map[string]*schema.MemoryRecord, len(res.Records))
	for i := range res.Records {
		byID[res.Records[i].ID] = &res.Records[i]
	}
	for _, o := range res.Report.Records {
		rec, ok := byID[o.ID]
		if !ok {
			continue
		}
		var kind lineKind
		switch o.Status {
		case engine.PlacementApplied:
			kind = linePromoted
		case engine.PlacementSpilled:
			kind = lineSpilled
		case engine.PlacementShadowed:
			kind = lineShadowed
		default:
			continue
		}
		ml := memoryLine{rec: rec, k: kind,
			container: containerOf(f.agent, o.Container, rec.Target), promotion: sd.promotions[rec.ID]}
		if k, ok := promoted[rec.ID]; ok {
			ml.history = histOf(k)
		}
		v.lines = append(v.lines, ml)
	}
	containers := map[schema.MemoryTarget]string{} // one string per target
	for i := range sd.candidates {
		c := &sd.candidates[i]
		container := ""
		if c.Target != nil {
			var ok bool
			if container, ok = containers[*c.Target]; !ok {
				container = containerOf(f.agent, "", c.Target)
				containers[*c.Target] = container
			}
		}
		v.lines = append(v.lines, memoryLine{rec: c, k: lineCandidate, container: container})
	}
	return v, nil
}

// containerOf is the authored section a memory line belongs to: the
// container the overlay's report gives (ptr's, for a placed line) or the
// one its target names in cfg (engine.Container).
func containerOf(cfg *schema.AgentConfig, container string, t *schema.MemoryTarget) string {
	if container != "" || t == nil {
		return container
	}
	return engine.Container(cfg, *t)
}

// anchor is where a container's hints go: the end of its key's line, or of
// the nearest existing parent key's line when the section is not authored.
func anchor(d *schema.Document, container string) protocol.Position {
	line := anchorLine(d, container)
	return protocol.Position{Line: uint32(line), Character: uint32(lineLengthUTF16(d.Source(), line))}
}

// anchorLine is the 0-based line of anchor(d, container).
func anchorLine(d *schema.Document, container string) int {
	_, r := d.Nearest(container)
	return r.Start.Line
}

// lineLengthUTF16 is the length of a 0-based line in UTF-16 units (0 past
// the last line).
func lineLengthUTF16(src []byte, line int) int {
	start, reached := lineStart(src, line)
	if reached < line {
		return 0
	}
	return utf16Len(src[start:])
}

// utf16Len is the UTF-16 length of the first line of src (without its
// line break).
func utf16Len(src []byte) int {
	src = src[:lineContentEnd(src, 0)]
	n := 0
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		src = src[size:]
		n += utf16.RuneLen(r)
	}
	return n
}

// lineEnds answers line lengths of one source without rescanning it.
type lineEnds struct {
	src    []byte
	starts []int // byte offset of each line
	memo   map[int]int
}

func newLineEnds(src []byte) *lineEnds {
	le := &lineEnds{src: src, starts: []int{0}, memo: map[int]int{}}
	for i := nextBreak(src, 0); i >= 0; i = nextBreak(src, i) {
		le.starts = append(le.starts, i)
	}
	return le
}

// length is lineLengthUTF16(src, line).
func (le *lineEnds) length(line int) int {
	if line < 0 || line >= len(le.starts) {
		return 0
	}
	if n, ok := le.memo[line]; ok {
		return n
	}
	n := utf16Len(le.src[le.starts[line]:])
	le.memo[line] = n
	return n
}

// inlayHint answers textDocument/inlayHint: one hint per memory-derived
// line at its section (at most maxHintsPerAnchor per line, then a summary),
// candidates and spilled records marked as such, only those on the
// requested lines. A
// client that resolves tooltips (inlayHint/resolve) gets labels and data
// only; any other client gets each hint's tooltip inline (LSP 3.17).
func (s *server) inlayHint(ctx context.Context, p *inlayHintParams) ([]InlayHint, error) {
	pin := s.pin(p.TextDocument.URI)
	releaseQueue(ctx)
	out := []InlayHint{}
	f, err := s.loadPinned(p.TextDocument.URI, pin)
	if unparsed(err) {
		return out, nil // the parse error is a diagnostic
	}
	if err != nil {
		return nil, err
	}
	if f.agent == nil {
		return out, nil // schema errors: no composition to show
	}
	v, err := s.memoryView(ctx, f)
	if err != nil {
		s.log.Debug("inlay hints without store", "err", err)
		return out, nil
	}
	s.mu.Lock()
	resolves := s.resolveTooltip
	s.mu.Unlock()
	all := v.allHints(f.uri, f.doc)
	if !resolves {
		all = v.tooltipHints(f.uri, f.doc)
	}
	// all is in position order: the hints of the range are one run of it.
	lo := sort.Search(len(all), func(i int) bool { return all[i].Position.Line >= p.Range.Start.Line })
	hi := sort.Search(len(all), func(i int) bool { return all[i].Position.Line > p.Range.End.Line })
	if lo < hi {
		out = all[lo:hi:hi]
	}
	return out, nil
}

// hintData is the data of a memory hint: what inlayHint/resolve needs to
// find its memory line again.
type hintData struct {
	URI  protocol.DocumentURI `json:"uri"`
	ID   string               `json:"recordId"` // the record
	Kind string               `json:"kind"`     // promoted, spilled, shadowed or candidate
}

// maxHintsPerAnchor bounds the hints at one line: a section with hundreds
// of learned lines shows the first ones (those waiting for a decision
// first) and one "… and K more" hint; its hover and the composed view list
// them all.
const maxHintsPerAnchor = 10

// allHints builds (once per view) the hints of the memory lines of the file
// uri (parsed as d) that the view composed, in position order, with their
// data and without tooltips; at most maxHintsPerAnchor per line, then a
// summary hint (tooltip inline, no data).
func (v *memoryView) allHints(uri protocol.DocumentURI, d *schema.Document) []InlayHint {
	v.hintsOnce.Do(func() {
		le := newLineEnds(d.Source())
		anchors := map[string]protocol.Position{}
		groups := map[protocol.Position][]int{} // memory lines by anchor
		var order []protocol.Position
		for i, ml := range v.lines {
			pos, ok := anchors[ml.container]
			if !ok {
				line := anchorLine(d, ml.container)
				pos = protocol.Position{Line: uint32(line), Character: uint32(le.length(line))}
				anchors[ml.container] = pos
			}
			if _, ok := groups[pos]; !ok {
				order = append(order, pos)
			}
			groups[pos] = append(groups[pos], i)
		}
		sort.SliceStable(order, func(i, j int) bool {
			a, b := order[i], order[j]
			return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
		})
		var hs []InlayHint
		var lines []int // the memory line of each hint, -1 for a summary
		for _, pos := range order {
			g := groups[pos]
			if len(g) > maxHintsPerAnchor {
				sort.SliceStable(g, func(i, j int) bool { return hoverRank(v.lines[g[i]].kind()) < hoverRank(v.lines[g[j]].kind()) })
			}
			for n, i := range g {
				if n == maxHintsPerAnchor {
					hs = append(hs, moreHint(pos, v.lines, g[n:]))
					lines = append(lines, -1)
					break
				}
				ml := v.lines[i]
				data, _ := json.Marshal(hintData{URI: uri, ID: ml.rec.ID, Kind: ml.kind()})
				hs = append(hs, InlayHint{Position: pos, Label: hintLabel(ml), PaddingLeft: true, Data: data})
				lines = append(lines, i)
			}
		}
		v.hints, v.hintLines = hs, lines
	})
	return v.hints
}

// moreHint is the summary hint of the memory lines rest at pos.
func moreHint(pos protocol.Position, all []memoryLine, rest []int) InlayHint {
	counts := map[string]int{}
	for _, i := range rest {
		counts[all[i].kind()]++
	}
	var parts []string
	for _, k := range []string{"candidate", "shadowed", "promoted", "spilled"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	label := fmt.Sprintf("… and %d more memory line%s (%s)", len(rest), plural(len(rest)), strings.Join(parts, " · "))
	tip := fmt.Sprintf("%d more memory-derived line%s here: hover the section for their provenance, or open the composed view (agent-ls.showComposedPrompt) for all of them.", len(rest), plural(len(rest)))
	return InlayHint{Position: pos, Label: label, PaddingLeft: true, Tooltip: &MarkupContent{Kind: "markdown", Value: tip}}
}

// tooltipHints is allHints with each hint's provenance tooltip inline, for
// clients that do not resolve tooltips (built once per view).
func (v *memoryView) tooltipHints(uri protocol.DocumentURI, d *schema.Document) []InlayHint {
	v.tipsOnce.Do(func() {
		base := v.allHints(uri, d)
		hs := make([]InlayHint, len(base))
		for i, h := range base {
			hs[i] = h
			if n := v.hintLines[i]; n >= 0 {
				hs[i].Tooltip = &MarkupContent{Kind: "markdown", Value: provenanceMarkdown(v.lines[n], nil)}
			}
		}
		v.tipHints = hs
	})
	return v.tipHints
}

// line is the memory line of record id with the given kind, if the view
// has it.
func (v *memoryView) line(id, kind string) (memoryLine, bool) {
	for _, ml := range v.lines {
		if ml.rec.ID == id && ml.kind() == kind {
			return ml, true
		}
	}
	return memoryLine{}, false
}

// resolveInlayHint answers inlayHint/resolve: the hint as sent, with the
// provenance tooltip (and ledger history) of the memory line its data
// names. Data that is not an agent-ls hint's is InvalidParams; a record no
// longer composed the same way (the file or the store changed since the
// hints were sent) is ContentModified, so the client asks for hints again.
func (s *server) resolveInlayHint(ctx context.Context, h *InlayHint) (*InlayHint, error) {
	releaseQueue(ctx)
	if len(h.Data) == 0 && h.Tooltip != nil {
		return h, nil // a summary hint: complete as sent
	}
	if len(h.Data) == 0 {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "inlayHint/resolve: the hint has no data (not an agent-ls memory hint)")
	}
	var hd hintData
	if err := json.Unmarshal(h.Data, &hd); err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("inlayHint/resolve: hint data %s: %v", h.Data, err))
	}
	switch {
	case hd.URI == "":
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "inlayHint/resolve: hint data has no uri")
	case hd.ID == "":
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "inlayHint/resolve: hint data has no record id")
	case !validHintKind(hd.Kind):
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("inlayHint/resolve: hint data kind %q: want promoted, spilled, shadowed or candidate", hd.Kind))
	}
	stale := func(why string) error {
		return jsonrpc2.NewError(protocol.CodeContentModified, fmt.Sprintf("inlayHint/resolve: %s memory %s of %s: %s; request the hints again", hd.Kind, hd.ID, hd.URI, why))
	}
	f, err := s.loadAgentFile(hd.URI)
	if unparsed(err) {
		return nil, stale("the file does not parse now")
	}
	if err != nil {
		return nil, err
	}
	if f.agent == nil {
		return nil, stale("the file has schema errors now")
	}
	v, err := s.memoryView(ctx, f)
	if err != nil {
		return nil, rpcError(fmt.Errorf("inlayHint/resolve: compose %s: %w", f.path, err))
	}
	ml, ok := v.line(hd.ID, hd.Kind)
	if !ok {
		return nil, stale("not in the composition any more")
	}
	out := *h
	text, _ := v.provenanceOf(ctx, ml)
	out.Tooltip = &MarkupContent{Kind: "markdown", Value: text}
	return &out, nil
}

func validHintKind(k string) bool {
	switch k {
	case "promoted", "spilled", "shadowed", "candidate":
		return true
	}
	return false
}

// historyOf is ml's ledger history, oldest first. A candidate's is read
// from the store the first time it is asked for (readHistories; with the
// other candidates of lines, to read once for a hover) and kept with the
// view; the error is the store read's, nothing kept.
func (v *memoryView) historyOf(ctx context.Context, ml memoryLine, lines ...memoryLine) ([]historyEntry, error) {
	if ml.k != lineCandidate {
		if int(ml.history) < len(v.histories) {
			return v.histories[ml.history], nil
		}
		return nil, nil
	}
	v.histMu.Lock()
	defer v.histMu.Unlock()
	if h, ok := v.candHist[ml.rec.ID]; ok || v.readHist == nil {
		return h, nil
	}
	ids := []string{ml.rec.ID}
	for _, o := range lines {
		if _, ok := v.candHist[o.rec.ID]; !ok && o.k == lineCandidate && o.rec.ID != ml.rec.ID {
			ids = append(ids, o.rec.ID)
		}
	}
	got, err := v.readHist(ctx, ids)
	if err != nil {
		return nil, err
	}
	if v.candHist == nil {
		v.candHist = make(map[string][]historyEntry, len(got))
	}
	maps.Copy(v.candHist, got)
	return got[ml.rec.ID], nil
}

// provenanceOf is provenanceMarkdown of ml with its history (historyOf,
// lines read with it); ok is false when the history could not be read,
// which the text then says.
func (v *memoryView) provenanceOf(ctx context.Context, ml memoryLine, lines ...memoryLine) (text string, ok bool) {
	h, err := v.historyOf(ctx, ml, lines...)
	text = provenanceMarkdown(ml, h)
	if err != nil {
		return text + "\n_Its history could not be read: " + untrustedMarkdown(err.Error()) + "_\n", false
	}
	return text, true
}

// hintLabel is "+ “text” · tier · learned DATE · conv C · N conversations".
// The content, an agent's text, is quoted (its own curly quotes made
// straight), so it cannot pass for the provenance after it: a content of
// "x · guarded · approved by human:ana" stays inside its quotes.
func hintLabel(ml memoryLine) string {
	prefix := map[string]string{"promoted": "+ ", "spilled": "(spilled to recall) ", "candidate": "(candidate) ", "shadowed": "(shadowed by a newer memory) "}[ml.kind()]
	text := strings.NewReplacer("“", `"`, "”", `"`).Replace(textkernel.Clip(ml.rec.Content, 80))
	return prefix + "“" + text + "” · " + shortProvenance(ml)
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
	if n := ml.rec.DistinctConversations(); n > 1 {
		parts = append(parts, schema.Conversations(n))
	}
	return strings.Join(parts, " · ")
}

// provenanceMarkdown is a memory line's full story: record, provenance,
// supports, promotion evidence and approver, then ledger history.
func provenanceMarkdown(ml memoryLine, history []historyEntry) string {
	var b strings.Builder
	r := ml.rec
	fmt.Fprintf(&b, "**%s memory** %s\n\n%s\n\n", title(ml.kind()), codeSpan(r.ID), untrustedMarkdown(r.Content))
	if r.Target != nil {
		fmt.Fprintf(&b, "- target: %s (tier %s)\n", codeSpan(r.Target.String()), schema.TierOf(*r.Target))
	}
	fmt.Fprintf(&b, "- kind: %s; created %s\n", r.Kind, r.CreatedAt)
	pv := r.Provenance
	if pv.ConversationID != "" || pv.RunID != "" || pv.Author != "" {
		fmt.Fprintf(&b, "- learned from conversation %s", codeSpan(orDash(pv.ConversationID)))
		if pv.RunID != "" {
			fmt.Fprintf(&b, ", run %s", codeSpan(pv.RunID))
		}
		if pv.Author != "" {
			fmt.Fprintf(&b, ", by %s", codeSpan(pv.Author))
		}
		b.WriteString("\n")
	}
	for _, sp := range r.Supports {
		fmt.Fprintf(&b, "- supported by conversation %s at %s\n", codeSpan(sp.ConversationID), sp.At)
	}
	if n := r.DistinctConversations(); n > 0 {
		fmt.Fprintf(&b, "- learned in %s\n", schema.Conversations(n))
	}
	if p := ml.promotion; p != nil {
		fmt.Fprintf(&b, "- promoted %s by %s (tier %s)", p.PromotedAt, codeSpan(p.Actor.String()), p.Tier)
		if p.Approver != "" {
			fmt.Fprintf(&b, ", approved by %s", codeSpan(p.Approver))
		}
		b.WriteString("\n")
		ev := p.Evidence
		if len(ev.Conversations) > 0 {
			convs := make([]string, len(ev.Conversations))
			for i, c := range ev.Conversations {
				convs[i] = codeSpan(c)
			}
			fmt.Fprintf(&b, "- evidence: %s (%s)\n", schema.Conversations(len(ev.Conversations)), strings.Join(convs, ", "))
		}
		if ev.Eval != nil {
			fmt.Fprintf(&b, "- evidence: eval %d/%d → %d/%d\n", ev.Eval.BasePassed, ev.Eval.BasePassed+ev.Eval.BaseFailed, ev.Eval.Passed, ev.Eval.Passed+ev.Eval.Failed)
		}
	}
	switch ml.kind() {
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
			fmt.Fprintf(&b, "- %s %s by %s", e.At, e.Op, codeSpan(e.Actor.String()))
			if e.Reason != "" {
				fmt.Fprintf(&b, ": %s", untrustedMarkdown(e.Reason))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
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
