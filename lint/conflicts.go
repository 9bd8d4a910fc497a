package lint

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agent-ls/agent-ls/evolve/contradiction"
	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
)

// ConflictKind names what kind of conflict a Conflict is.
type ConflictKind string

// The conflict kinds.
const (
	// ConflictContradiction: a live record (candidate or promoted)
	// contradicts an authored or promoted heuristic or constraint of its
	// judgment domain (package contradiction). Record is the lesson; Other
	// the promoted record or the authored line.
	ConflictContradiction ConflictKind = "contradiction"
	// ConflictKeyCollision: two promoted records hold one slot (a
	// background key, an awareness name) in the composition — a residual
	// collision save could not refuse (two users' scopes, two processes).
	// Record renders (the newest); Other is shadowed.
	ConflictKeyCollision ConflictKind = "key-collision"
	// ConflictAuthoredWins: a promoted record targets a key or name the
	// authored config holds; the authored value wins and Record is
	// dropped. Other is the authored line.
	ConflictAuthoredWins ConflictKind = "authored-wins"
)

// Conflict is the one conflict of agent-ls: two sides that cannot both
// hold, of one Kind. Every surface that lists conflicts (lint's rules and
// so the language server's diagnostics, lint --report, garden, the lens,
// the engine's Conflicts) lists Conflicts(in) or its findings; the save and
// promote gates return contradictions in this shape as well.
//
// RecordID, With, Authored and Text name the two sides in brief (the
// shape the gates always had); Record and Other carry each side in full
// with its provenance (set by Conflicts).
type Conflict struct {
	Kind ConflictKind `json:"kind,omitempty"`
	// RecordID is the memory side: the contradicting lesson, the record
	// that renders on a collided key, the record the authored value drops.
	RecordID string `json:"recordId"`
	// With is the other side when it is a record ("" for an authored line).
	With string `json:"with,omitempty"`
	// Authored is the JSON pointer of the authored line, when With is "".
	Authored string `json:"authored,omitempty"`
	// Text is the other side's text.
	Text string `json:"text"`
	// Why says what conflicts, in one sentence.
	Why string `json:"why"`
	// Target is the slot or key the sides share (compact target form).
	Target string `json:"target,omitempty"`
	// Record and Other are the two sides with their provenance.
	Record *ConflictSide `json:"record,omitempty"`
	Other  *ConflictSide `json:"other,omitempty"`
}

// Pair is the conflict's identity: its kind and its two sides (record ids
// or an authored pointer), the memory side first.
func (c Conflict) Pair() [2]string { return [2]string{c.RecordID, c.With + c.Authored} }

// ConflictSide is one side of a conflict: a record with its state and
// provenance, or an authored line (Pointer set, RecordID "").
type ConflictSide struct {
	RecordID string `json:"recordId,omitempty"`
	// Pointer is the authored line's JSON pointer in the agent file.
	Pointer string `json:"pointer,omitempty"`
	// State is "promoted", "candidate" or "authored".
	State   string `json:"state"`
	Content string `json:"content"`
	Target  string `json:"target,omitempty"`
	// ConversationID is where the record was learned, Conversations how
	// many distinct conversations support it.
	ConversationID string `json:"conversationId,omitempty"`
	Conversations  int    `json:"conversations,omitempty"`
	// Author is who wrote the record (its provenance's actor).
	Author    string `json:"author,omitempty"`
	CreatedAt string `json:"createdAt,omitempty"`
}

// The side states.
const (
	SidePromoted  = "promoted"
	SideCandidate = "candidate"
	SideAuthored  = "authored"
)

// Conflicts lists every conflict of an input — contradictions, residual
// key collisions and authored-wins drops — in that order, each pair once,
// with both sides' provenance. It is pure; lint's contradiction,
// memory-conflict and authored-wins rules are its findings.
func Conflicts(in Input) []Conflict {
	if in.Config == nil {
		in.Config = &schema.AgentConfig{}
	}
	return newRunCtx(in).conflicts()
}

// conflicts is Conflicts of c, computed once per run.
func (c *runCtx) conflicts() []Conflict {
	if c.conflictsDone {
		return c.conflictList
	}
	c.conflictsDone = true
	out := c.contradictions()
	for _, k := range c.rep.Conflicts {
		w, s := c.records[k.Winner], c.records[k.Shadowed]
		cf := Conflict{Kind: ConflictKeyCollision, RecordID: k.Winner, With: k.Shadowed, Target: k.Slot,
			Why:    fmt.Sprintf("two promoted memories hold %s: %s renders (newer), %s is shadowed", k.Slot, k.Winner, k.Shadowed),
			Record: c.side(w, k.Winner), Other: c.side(s, k.Shadowed)}
		cf.Text = cf.Other.Content
		out = append(out, cf)
	}
	for _, o := range c.dropped(overlay.ReasonAuthoredWins) {
		ptr, what := c.authoredPlace(o)
		text := c.authoredText(ptr)
		out = append(out, Conflict{Kind: ConflictAuthoredWins, RecordID: o.ID, Authored: ptr, Text: text, Target: o.Target.String(),
			Why:    fmt.Sprintf("the authored %s wins over memory %s (%s), which is dropped", what, o.ID, o.Target),
			Record: c.side(c.records[o.ID], o.ID), Other: &ConflictSide{Pointer: ptr, State: SideAuthored, Content: text}})
	}
	c.conflictList = out
	return out
}

// side is a record's side of a conflict (id alone when the record is not
// among the input's facts).
func (c *runCtx) side(r *schema.MemoryRecord, id string) *ConflictSide {
	s := &ConflictSide{RecordID: id, State: SidePromoted}
	if r == nil {
		return s
	}
	if c.isCand[id] {
		s.State = SideCandidate
	}
	s.Content, s.ConversationID, s.Author, s.CreatedAt = r.Content, r.Provenance.ConversationID, r.Provenance.Author, r.CreatedAt
	s.Conversations = r.DistinctConversations()
	if r.Target != nil {
		s.Target = r.Target.String()
	}
	return s
}

// contradictions finds, for every live record (promoted, then
// candidates), the authored lines and other promoted records of its domain
// it contradicts (package contradiction), each pair once. With a Memo
// (Input.Memo), the contradictions among records are computed once per
// facts and a domain's contradictions with its authored lines once per
// version of those lines.
func (c *runCtx) contradictions() []Conflict {
	live := make([]*schema.MemoryRecord, 0, len(c.in.Facts.Promoted)+len(c.in.Facts.Candidates))
	for i := range c.in.Facts.Promoted {
		live = append(live, &c.in.Facts.Promoted[i])
	}
	for i := range c.in.Facts.Candidates {
		live = append(live, &c.in.Facts.Candidates[i])
	}
	// Every text is analysed once (lexical.Analyze), not once per pair: a
	// store with thousands of candidates meets hundreds of authored lines.
	texts := make([]*lexical.Text, len(live))
	text := func(i int) *lexical.Text {
		if texts[i] == nil {
			texts[i] = c.analyze(live[i].Content)
		}
		return texts[i]
	}
	var found []liveConflict
	complete := true
	// The authored side, domain by domain, in the order records name them.
	var domains []string
	byDomain := map[string][]int{} // judgment domain -> indexes in live
	for i, r := range live {
		if !contradiction.Applies(r.Target) {
			continue
		}
		if _, ok := byDomain[r.Target.Domain]; !ok {
			domains = append(domains, r.Target.Domain)
		}
		byDomain[r.Target.Domain] = append(byDomain[r.Target.Domain], i)
	}
	for _, domain := range domains {
		is := byDomain[domain]
		lines := contradiction.Authored(c.cfg, live[is[0]].Target)
		sig := authoredSignature(lines)
		if got, ok := c.in.Memo.getAuthored(domain, sig); ok {
			found = append(found, got...)
			continue
		}
		var out []liveConflict
		if len(lines) > 0 {
			ltexts := make([]*lexical.Text, len(lines))
			for k, l := range lines {
				ltexts[k] = c.analyze(l.Text)
			}
			index := lexical.NewContradictionIndex(ltexts)
			for _, i := range is {
				if c.stopped() {
					complete = false
					break
				}
				r, rt := live[i], text(i)
				index.Candidates(rt, func(k int) {
					l := lines[k]
					if ok, why := contradiction.Contradicts(rt, ltexts[k]); ok {
						out = append(out, liveConflict{i: i, cf: Conflict{Kind: ConflictContradiction, RecordID: r.ID, Authored: l.Pointer, Text: l.Text, Why: why,
							Target: r.Target.String(), Record: c.side(r, r.ID), Other: &ConflictSide{Pointer: l.Pointer, State: SideAuthored, Content: l.Text}}})
					}
				})
			}
		}
		if complete {
			c.in.Memo.setAuthored(domain, sig, out)
		}
		found = append(found, out...)
	}
	// The records' side: it depends on the facts alone.
	if got, ok := c.in.Memo.getRecords(); ok {
		found = append(found, got...)
	} else if complete {
		out, ok := c.recordContradictions(live, text, byDomain)
		if ok {
			c.in.Memo.setRecords(out)
		}
		found = append(found, out...)
	}
	// One order whatever was reused: by record, its authored conflicts
	// first (they were listed first), then those with other records.
	sort.SliceStable(found, func(a, b int) bool { return found[a].i < found[b].i })
	out := make([]Conflict, len(found))
	for k, f := range found {
		out[k] = f.cf
	}
	return out
}

// recordContradictions is the contradictions among live records: each
// live record with the promoted records of its domain, each pair once. ok
// is false when the run stopped before the end.
func (c *runCtx) recordContradictions(live []*schema.MemoryRecord, text func(int) *lexical.Text, byDomain map[string][]int) (out []liveConflict, ok bool) {
	nPromoted := len(c.in.Facts.Promoted)
	// Each domain's promoted texts, indexed by core word the first time a
	// record of the domain asks (lexical.ContradictionIndex): a record is
	// compared only with the promoted lines it shares enough words with.
	type domainPromoted struct {
		ks    []int // indexes in live (all < nPromoted)
		index *lexical.ContradictionIndex
	}
	pindex := map[string]*domainPromoted{}
	promotedIndex := func(domain string) *domainPromoted {
		if pd, ok := pindex[domain]; ok {
			return pd
		}
		pd := &domainPromoted{}
		for _, k := range byDomain[domain] {
			if k < nPromoted {
				pd.ks = append(pd.ks, k)
			}
		}
		texts := make([]*lexical.Text, len(pd.ks))
		for j, k := range pd.ks {
			texts[j] = text(k)
		}
		pd.index = lexical.NewContradictionIndex(texts)
		pindex[domain] = pd
		return pd
	}
	seen := map[[2]string]bool{}
	for i, r := range live {
		if !contradiction.Applies(r.Target) {
			continue
		}
		if c.stopped() {
			return out, false
		}
		rt := text(i)
		pd := promotedIndex(r.Target.Domain)
		pd.index.Candidates(rt, func(j int) {
			k := pd.ks[j]
			if i < nPromoted && k <= i {
				return // a promoted pair is checked once, from its first record
			}
			p := live[k]
			if !contradiction.Opposes(r.Target, r.ID, p) {
				return
			}
			if ok, why := contradiction.Contradicts(rt, text(k)); ok {
				// Each pair is visited once (promoted pairs from their first
				// record); seen guards a record listed twice.
				key := [2]string{min(r.ID, p.ID), max(r.ID, p.ID)}
				if seen[key] {
					return
				}
				seen[key] = true
				out = append(out, liveConflict{i: i, cf: Conflict{Kind: ConflictContradiction, RecordID: r.ID, With: p.ID, Text: p.Content, Why: why,
					Target: r.Target.String(), Record: c.side(r, r.ID), Other: c.side(p, p.ID)}})
			}
		})
	}
	return out, true
}

// authoredPlace is the JSON pointer of the authored key or name a dropped
// record's target collides with, and how to name it.
func (c *runCtx) authoredPlace(o overlay.RecordOutcome) (ptr, what string) {
	t := targetOf(o)
	switch t.Primitive {
	case schema.PrimitiveBackground:
		if k, ok := overlay.AuthoredKey(c.cfg, t.Section, t.Key); ok {
			t.Key = k // the authored spelling the lookalike collides with
		}
		return c.targetPointer(t), "key " + strconv.Quote(t.Key)
	case schema.PrimitiveAwareness:
		ptr = "/awareness/domains"
		var aw schema.AwarenessDomain
		if r := c.records[o.ID]; r != nil && json.Unmarshal(r.Payload, &aw) == nil {
			for i, d := range c.cfg.Awareness.Domains {
				if d.Name == aw.Name {
					ptr = "/awareness/domains/" + strconv.Itoa(i) + "/name"
				}
			}
			what = "awareness domain " + strconv.Quote(aw.Name)
		}
		return ptr, what
	default:
		return c.targetPointer(t), t.String()
	}
}

// authoredText is the authored value at ptr, as the prompt shows it ("" when
// there is none).
func (c *runCtx) authoredText(ptr string) string {
	data, err := json.Marshal(c.cfg)
	if err != nil {
		return ""
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := v.(type) {
		case map[string]any:
			v = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return ""
			}
			v = n[i]
		default:
			return ""
		}
	}
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return overlay.FormatValue(v)
}
