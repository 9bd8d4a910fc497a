package lint

import (
	"encoding/json"
	"fmt"
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
// it contradicts (package contradiction), each pair once.
func (c *runCtx) contradictions() []Conflict {
	// Every text is analysed once (lexical.Analyze), not once per pair: a
	// store with thousands of candidates meets hundreds of authored lines.
	type domainLines struct {
		lines []contradiction.AuthoredLine
		texts []*lexical.Text
		index *lexical.ContradictionIndex
	}
	authored := map[string]*domainLines{}                       // judgment domain -> its authored lines
	promoted := make([]*lexical.Text, len(c.in.Facts.Promoted)) // by index in Facts.Promoted, analysed once
	promotedText := func(k int) *lexical.Text {
		if promoted[k] == nil {
			promoted[k] = c.analyze(c.in.Facts.Promoted[k].Content)
		}
		return promoted[k]
	}
	seen := map[[2]string]bool{}
	var out []Conflict
	live := make([]*schema.MemoryRecord, 0, len(c.in.Facts.Promoted)+len(c.in.Facts.Candidates))
	for i := range c.in.Facts.Promoted {
		live = append(live, &c.in.Facts.Promoted[i])
	}
	for i := range c.in.Facts.Candidates {
		live = append(live, &c.in.Facts.Candidates[i])
	}
	// The promoted records each record is checked against, by domain (the
	// only ones contradiction.Opposes can accept).
	byDomain := map[string][]int{}
	for k := range c.in.Facts.Promoted {
		if t := c.in.Facts.Promoted[k].Target; contradiction.Applies(t) {
			byDomain[t.Domain] = append(byDomain[t.Domain], k)
		}
	}
	nPromoted := len(c.in.Facts.Promoted)
	// Each domain's promoted texts, indexed by core word the first time a
	// record of the domain asks (lexical.ContradictionIndex): a record is
	// compared only with the promoted lines it shares enough words with.
	type domainPromoted struct {
		ks    []int // indexes in Facts.Promoted
		index *lexical.ContradictionIndex
	}
	pindex := map[string]*domainPromoted{}
	promotedIndex := func(domain string) *domainPromoted {
		if pd, ok := pindex[domain]; ok {
			return pd
		}
		pd := &domainPromoted{ks: byDomain[domain]}
		texts := make([]*lexical.Text, len(pd.ks))
		for j, k := range pd.ks {
			texts[j] = promotedText(k)
		}
		pd.index = lexical.NewContradictionIndex(texts)
		pindex[domain] = pd
		return pd
	}
	for i, r := range live {
		if !contradiction.Applies(r.Target) {
			continue
		}
		if c.stopped() {
			break
		}
		var rt *lexical.Text
		if i < nPromoted {
			rt = promotedText(i)
		} else {
			rt = c.analyze(r.Content)
		}
		d, ok := authored[r.Target.Domain]
		if !ok {
			d = &domainLines{lines: contradiction.Authored(c.cfg, r.Target)}
			for _, l := range d.lines {
				d.texts = append(d.texts, c.analyze(l.Text))
			}
			d.index = lexical.NewContradictionIndex(d.texts)
			authored[r.Target.Domain] = d
		}
		d.index.Candidates(rt, func(k int) {
			l := d.lines[k]
			if ok, why := contradiction.Contradicts(rt, d.texts[k]); ok {
				out = append(out, Conflict{Kind: ConflictContradiction, RecordID: r.ID, Authored: l.Pointer, Text: l.Text, Why: why,
					Target: r.Target.String(), Record: c.side(r, r.ID), Other: &ConflictSide{Pointer: l.Pointer, State: SideAuthored, Content: l.Text}})
			}
		})
		pd := promotedIndex(r.Target.Domain)
		pd.index.Candidates(rt, func(j int) {
			k := pd.ks[j]
			if i < nPromoted && k <= i {
				return // a promoted pair is checked once, from its first record
			}
			p := &c.in.Facts.Promoted[k]
			if !contradiction.Opposes(r.Target, r.ID, p) {
				return
			}
			if ok, why := contradiction.Contradicts(rt, promotedText(k)); ok {
				// Each pair is visited once (promoted pairs from their first
				// record); seen guards a record listed twice.
				key := [2]string{min(r.ID, p.ID), max(r.ID, p.ID)}
				if seen[key] {
					return
				}
				seen[key] = true
				out = append(out, Conflict{Kind: ConflictContradiction, RecordID: r.ID, With: p.ID, Text: p.Content, Why: why,
					Target: r.Target.String(), Record: c.side(r, r.ID), Other: c.side(p, p.ID)})
			}
		})
	}
	return out
}

// authoredPlace is the JSON pointer of the authored key or name a dropped
// record's target collides with, and how to name it.
func (c *runCtx) authoredPlace(o overlay.RecordOutcome) (ptr, what string) {
	switch o.Target.Primitive {
	case schema.PrimitiveBackground:
		t := o.Target
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
		return c.targetPointer(o.Target), o.Target.String()
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
