package overlay

import (
	"bytes"
	"cmp"
	"encoding/json"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/textkernel"
)

// LearnedRecoveryName names the recovery block Apply creates when a recovery
// memory is promoted for an agent whose authored config has none.
const LearnedRecoveryName = "Learned recovery"

// item is one record on its way through Apply.
type item struct {
	rec      *schema.MemoryRecord
	out      *RecordOutcome // holds the target
	chars    int
	bytes    int // UTF-8 bytes of the same text
	supports int
	judgment int // index of the target judgment, -1 when none
	// age ranks the record's createdAt among the records (equal createdAt,
	// equal age; later, higher) and pos is its place in canonical order
	// (createdAt, then id): the spill and collision orders compare these
	// instead of the records' strings.
	age, pos int32
	spill    int32 // the spillIndex group of a spilled record
	group    groupKey
	ex       *schema.ExamplePayload
	aw       *schema.AwarenessDomain
}

// groupKey names a collision group. Background keys and awareness names are
// slots: their records conflict. Judgment and manual lines are lists: records
// with the same line in the same list are duplicates. The zero key is no
// group.
type groupKey struct {
	prim schema.Primitive
	a, b string // section+key, domain+slot, capability, or awareness name
	text string // the line, for list groups
}

func (g groupKey) line() bool {
	return g.prim == schema.PrimitiveJudgment || g.prim == schema.PrimitiveManual
}

// slot names a conflict group in the report: background.SECTION.KEY or
// awareness.NAME.
func (g groupKey) slot() string {
	if g.prim == schema.PrimitiveAwareness {
		return "awareness." + g.a
	}
	return "background." + g.a + "." + g.b
}

// Apply folds records into a copy of cfg under the ADR-0008 merge rules and
// the policy's budgets, and reports what happened to every record. It never
// mutates cfg or records, and any permutation of records gives identical
// results. The caller passes valid, promoted records; untargeted ones are
// reported and ignored.
//
// The rules, per target primitive:
//   - background: inserts section[key] = content after the authored entries;
//     a key the authored section holds is dropped (authored-wins); keys
//     compare by textkernel.Key (AuthoredKey), so "Pipeline", "pip\u0435line"
//     or "pipe\u200bline" is the authored "pipeline", and two records on keys
//     that read alike collide.
//   - judgment: appends content to that slot of the authored judgment with
//     the domain (unknown-domain when there is none; a memory never creates
//     a domain).
//   - example: appends the payload as an Example of that judgment.
//   - awareness: appends the payload as a domain; an authored domain name
//     wins (authored-wins).
//   - recovery: appends content as new lines of the recovery prompt; with no
//     authored recovery a block named LearnedRecoveryName is created.
//   - manual: appends content to Manuals[capability].Workflows when the
//     capability is listed or its manual exists (else unknown-capability).
//
// Examples and awareness need a complete payload (missing-payload). A line
// identical to an authored line of the same list, or to another record's, is
// dropped as duplicate (identical as textkernel.Canon compares). Two records on one background key (or one awareness
// name) collide: the newest createdAt renders, on equal createdAt the smaller
// id; the other is shadowed and listed in Report.Conflicts. Learned elements
// are appended in canonical order (createdAt, then id).
//
// Budgets count runes of memory-derived text per primitive: a background
// entry counts key plus content; examples and awareness domains count their
// payload fields; the rest count content. Records are admitted whole, in
// spill order — most distinct conversations (MemoryRecord.DistinctConversations)
// first, then newest createdAt, then smaller id — first fit: a record that
// does not fit the remaining budget spills and later, smaller ones may still
// fit. Spilled records are reported (reason budget) and marked in the
// composition; they belong to the recall tier.
func Apply(cfg *schema.AgentConfig, records []schema.MemoryRecord, p Policy) (*schema.AgentConfig, Report) {
	return apply(cfg, records, p, groupHasher())
}

// apply is Apply with the hash of collision-group keys given (tests pass
// colliding ones).
func apply(cfg *schema.AgentConfig, records []schema.MemoryRecord, p Policy, hash func(*groupKey) uint64) (*schema.AgentConfig, Report) {
	if cfg == nil {
		cfg = &schema.AgentConfig{}
	}
	recs := make([]*schema.MemoryRecord, len(records))
	for i := range records {
		recs[i] = &records[i]
	}
	slices.SortFunc(recs, canonicalCmp)

	rep := Report{
		Records:   make([]RecordOutcome, len(recs)),
		Conflicts: []Conflict{},
	}
	items := make([]item, 0, len(recs))
	var authored authoredKeys
	lastID := ""
	var age int32
	for i, r := range recs {
		if i > 0 && r.CreatedAt != recs[i-1].CreatedAt {
			age++
		}
		out := &rep.Records[i]
		out.ID = r.ID
		if i > 0 && r.ID == lastID {
			drop(out, ReasonDuplicate)
			continue
		}
		lastID = r.ID
		if r.Target == nil {
			drop(out, ReasonUntargeted)
			continue
		}
		if r.Target.Validate() != nil {
			drop(out, ReasonInvalidTarget)
			continue
		}
		out.Primitive, out.Target = r.Target.Primitive, r.Target
		// The item is built in its place (items has room for every
		// record) and kept by extending the slice over it.
		n := len(items)
		it := &items[:n+1][n]
		*it = item{rec: r, out: out, judgment: -1, supports: distinctConversations(r), age: age, pos: int32(n)}
		if reason := classify(cfg, &authored, it); reason != "" {
			drop(out, reason)
			continue
		}
		out.Chars, out.Bytes = it.chars, it.bytes
		items = items[:n+1]
	}

	resolveGroups(items, &rep, hash)
	admitWithinBudgets(items, p)

	c := cloneConfig(cfg)
	attr := Attribution{}
	learnedRecovery := c.RoleTemplate.Recovery == nil
	var spills spillIndex
	for i := range items {
		it := &items[i]
		switch it.out.Status {
		case "":
			it.out.Status = StatusApplied
			it.out.Pointer = place(c, it, &attr, learnedRecovery)
			it.out.Container = parentContainer(it.out.Pointer)
		case StatusSpilled:
			it.out.Container = spills.count(it)
		}
	}
	attr.Spilled = spills.lists(items)
	rep.Totals = totals(&rep, p)
	// The whole composition counts against the ceiling: render it once
	// (Render hands this rendering back for c) and measure it.
	prompt := render(c, attr)
	measure(&rep.Totals, prompt)
	attr.prompt, attr.of = &prompt, c
	rep.Attribution = attr
	return c, rep
}

func drop(out *RecordOutcome, r Reason) { out.Status, out.Reason = StatusDropped, r }

// canonicalCmp orders records by createdAt, then id; the remaining fields
// only make the order total when the same id is passed twice.
func canonicalCmp(a, b *schema.MemoryRecord) int {
	if c := strings.Compare(a.CreatedAt, b.CreatedAt); c != 0 {
		return c
	}
	if c := strings.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	if c := cmp.Or(
		strings.Compare(a.UpdatedAt, b.UpdatedAt),
		strings.Compare(a.Content, b.Content),
		strings.Compare(string(a.Payload), string(b.Payload)),
	); c != 0 {
		return c
	}
	// Same id, same text: fall back to the whole encoding (rare).
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Compare(ja, jb)
}

// newer reports whether a beats b in a collision: newest createdAt, then the
// smaller id.
func newer(a, b *item) bool {
	if a.age != b.age {
		return a.age > b.age
	}
	return a.pos < b.pos
}

// classify checks a targeted record against the authored config, fills the
// item's derived fields and returns a drop reason, or "".
func classify(cfg *schema.AgentConfig, authored *authoredKeys, it *item) Reason {
	t, r := it.out.Target, it.rec
	switch t.Primitive {
	case schema.PrimitiveBackground:
		k := textkernel.Key(t.Key)
		if authored.has(cfg, t.Section, t.Key, k) {
			return ReasonAuthoredWins
		}
		it.chars, it.bytes = runes(t.Key)+runes(r.Content), len(t.Key)+len(r.Content)
		// Keys that read alike are one key (textkernel.Key).
		it.group = groupKey{prim: t.Primitive, a: t.Section, b: k}
	case schema.PrimitiveJudgment:
		it.judgment = cfg.JudgmentByDomain(t.Domain)
		if it.judgment < 0 {
			return ReasonUnknownDomain
		}
		c := textkernel.Canon(r.Content)
		if authored.hasLine(lineSetKey{it.judgment, t.Slot}, judgmentSlot(&cfg.RoleTemplate.Judgments[it.judgment], t.Slot), r.Content, c) {
			return ReasonDuplicate
		}
		it.chars, it.bytes = runes(r.Content), len(r.Content)
		it.group = groupKey{prim: t.Primitive, a: t.Domain, b: t.Slot, text: c}
	case schema.PrimitiveExample:
		it.ex = new(schema.ExamplePayload)
		if json.Unmarshal(r.Payload, it.ex) != nil || it.ex.Scenario == "" || it.ex.Good == "" {
			return ReasonMissingPayload
		}
		it.judgment = cfg.JudgmentByDomain(t.JudgmentDomain)
		if it.judgment < 0 {
			return ReasonUnknownDomain
		}
		it.chars, it.bytes = runes(it.ex.Scenario)+runes(it.ex.Good)+runes(it.ex.Bad)+runes(it.ex.Reasoning), len(it.ex.Scenario)+len(it.ex.Good)+len(it.ex.Bad)+len(it.ex.Reasoning)
	case schema.PrimitiveAwareness:
		it.aw = new(schema.AwarenessDomain)
		if json.Unmarshal(r.Payload, it.aw) != nil || it.aw.Name == "" || it.aw.Description == "" || it.aw.AccessMethod == "" {
			return ReasonMissingPayload
		}
		// Domain names compare as save compares them (schema.AwarenessKey:
		// case and accents folded).
		key := schema.AwarenessKey(it.aw.Name)
		for _, d := range cfg.Awareness.Domains {
			if schema.AwarenessKey(d.Name) == key {
				return ReasonAuthoredWins
			}
		}
		it.chars, it.bytes = runes(it.aw.Name)+runes(it.aw.Description)+runes(it.aw.AccessMethod), len(it.aw.Name)+len(it.aw.Description)+len(it.aw.AccessMethod)
		it.group = groupKey{prim: t.Primitive, a: key}
	case schema.PrimitiveRecovery:
		it.chars, it.bytes = runes(r.Content), len(r.Content)
	case schema.PrimitiveManual:
		m, hasManual := cfg.Manuals[t.Capability]
		if !hasManual && !slices.Contains(cfg.Capabilities, t.Capability) {
			return ReasonUnknownCapability
		}
		c := textkernel.Canon(r.Content)
		if authored.hasLine(lineSetKey{-1, t.Capability}, m.Workflows, r.Content, c) {
			return ReasonDuplicate
		}
		it.chars, it.bytes = runes(r.Content), len(r.Content)
		it.group = groupKey{prim: t.Primitive, a: t.Capability, text: c}
	}
	return ""
}

// AuthoredWins reports whether Apply, given rec alone, drops it because
// cfg's authored config holds its background key or awareness name
// (ReasonAuthoredWins). It runs Apply's per-record rule without composing.
func AuthoredWins(cfg *schema.AgentConfig, rec *schema.MemoryRecord) bool {
	if cfg == nil || rec == nil || rec.Target == nil || rec.Target.Validate() != nil {
		return false
	}
	out := RecordOutcome{ID: rec.ID, Primitive: rec.Target.Primitive, Target: rec.Target}
	it := item{rec: rec, out: &out, judgment: -1}
	var authored authoredKeys
	return classify(cfg, &authored, &it) == ReasonAuthoredWins
}

// AuthoredKey returns the key of cfg's authored background section that
// key is (textkernel.Key: case, width, format characters, confusable
// letters and surrounding white space do not matter), and whether there is
// one. It is the one authored-wins rule for background keys: Apply drops a
// record on such a key, save answers "authored wins", lint reports it.
func AuthoredKey(cfg *schema.AgentConfig, section, key string) (string, bool) {
	if cfg == nil {
		return "", false
	}
	sec := cfg.Background.Section(section)
	if sec == nil {
		return "", false
	}
	if sec.Has(key) {
		return key, true
	}
	k := textkernel.Key(key)
	for _, e := range *sec {
		if textkernel.Key(e.Key) == k {
			return e.Key, true
		}
	}
	return "", false
}

// authoredLinear is the size up to which an authored background section is
// searched linearly for a key.
const authoredLinear = 16

// authoredKeys answers AuthoredKey for Apply, indexing a large section by
// textkernel.Key the first time it is asked about (a 1,400-entry section
// searched once per record was most of Apply on such a file).
type authoredKeys struct {
	// sections holds each asked-about background section's keys in their
	// textkernel.Key form; lines the textkernel.Canon of each authored line
	// of a judgment slot or a manual's workflows. Each is built the first
	// time a record of it is asked about.
	sections map[string]*kernelSet
	lines    map[lineSetKey]*kernelSet
	// judgment is lines for judgment slots, by judgment index and slot
	// (heuristics, constraints, escalation triggers): no hashing per record.
	judgment [][3]*kernelSet
}

// slotIndex is a judgment slot's index in authoredKeys.judgment, -1 for
// another name.
func slotIndex(slot string) int {
	switch slot {
	case schema.SlotHeuristics:
		return 0
	case schema.SlotConstraints:
		return 1
	case schema.SlotEscalationTriggers:
		return 2
	}
	return -1
}

// kernelSet is a set of kernel forms: a slice searched linearly up to
// authoredLinear entries (cheaper than hashing each record's text), a map
// above.
type kernelSet struct {
	small []string
	large map[string]struct{}
}

func newKernelSet(n int, each func(add func(string))) *kernelSet {
	ks := &kernelSet{}
	if n > authoredLinear {
		ks.large = make(map[string]struct{}, n)
		each(func(s string) { ks.large[s] = struct{}{} })
	} else {
		ks.small = make([]string, 0, n)
		each(func(s string) { ks.small = append(ks.small, s) })
	}
	return ks
}

func (ks *kernelSet) has(s string) bool {
	if ks.large != nil {
		_, ok := ks.large[s]
		return ok
	}
	return slices.Contains(ks.small, s)
}

// lineSetKey names an authored list of lines: a judgment's slot, or a
// manual's workflows (judgment -1).
type lineSetKey struct {
	judgment int
	name     string
}

// has reports whether key (whose textkernel.Key is k) is an authored key of
// section: AuthoredKey's rule, with the section's keys in kernel form
// computed once per Apply.
func (a *authoredKeys) has(cfg *schema.AgentConfig, section, key, k string) bool {
	sec := cfg.Background.Section(section)
	if sec == nil || len(*sec) == 0 {
		return false
	}
	keys, ok := a.sections[section]
	if !ok {
		keys = newKernelSet(len(*sec), func(add func(string)) {
			for _, e := range *sec {
				add(textkernel.Key(e.Key))
			}
		})
		if a.sections == nil {
			a.sections = map[string]*kernelSet{}
		}
		a.sections[section] = keys
	}
	return keys.has(k)
}

// hasLine reports whether the authored lines named by at hold text (whose
// textkernel.Canon is c) as the text kernel compares it: a line spelled
// with format characters or confusable letters is the line. Each list's Canon
// computed once per Apply.
func (a *authoredKeys) hasLine(at lineSetKey, lines []string, text, c string) bool {
	if len(lines) == 0 {
		return false
	}
	build := func() *kernelSet {
		return newKernelSet(len(lines), func(add func(string)) {
			for _, l := range lines {
				add(textkernel.Canon(l))
			}
		})
	}
	if i := slotIndex(at.name); at.judgment >= 0 && i >= 0 {
		for len(a.judgment) <= at.judgment {
			a.judgment = append(a.judgment, [3]*kernelSet{})
		}
		set := a.judgment[at.judgment][i]
		if set == nil {
			set = build()
			a.judgment[at.judgment][i] = set
		}
		return set.has(c)
	}
	set, ok := a.lines[at]
	if !ok {
		set = build()
		if a.lines == nil {
			a.lines = map[lineSetKey]*kernelSet{}
		}
		a.lines[at] = set
	}
	return set.has(c)
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// distinctConversations is MemoryRecord.DistinctConversations without a map
// for the common short supports list.
func distinctConversations(r *schema.MemoryRecord) int {
	if len(r.Supports) > 16 {
		return r.DistinctConversations()
	}
	n := 0
	if r.Provenance.ConversationID != "" {
		n = 1
	}
	for i, s := range r.Supports {
		if s.ConversationID == "" || s.ConversationID == r.Provenance.ConversationID {
			continue
		}
		seen := false
		for _, p := range r.Supports[:i] {
			if p.ConversationID == s.ConversationID {
				seen = true
				break
			}
		}
		if !seen {
			n++
		}
	}
	return n
}

func judgmentSlot(j *schema.Judgment, slot string) []string {
	switch slot {
	case schema.SlotHeuristics:
		return j.Heuristics
	case schema.SlotConstraints:
		return j.Constraints
	case schema.SlotEscalationTriggers:
		return j.EscalationTriggers
	}
	return nil
}

func judgmentSlotRef(j *schema.Judgment, slot string) *[]string {
	switch slot {
	case schema.SlotConstraints:
		return &j.Constraints
	case schema.SlotEscalationTriggers:
		return &j.EscalationTriggers
	}
	return &j.Heuristics
}

// groupHasher returns a seeded hash of group keys.
func groupHasher() func(*groupKey) uint64 {
	seed := maphash.MakeSeed()
	return func(g *groupKey) uint64 { return maphash.Comparable(seed, *g) }
}

// resolveGroups settles collisions: in each group the newest record wins;
// the others are shadowed (slot groups) or dropped as duplicates (list
// groups). Winners are found by the keys' 64-bit hashes (a map of small entries
// stays in cache where one keyed by the strings does not); a group whose
// hash another group already holds is kept in an exact map, so a collision
// never merges two groups.
func resolveGroups(items []item, rep *Report, hash func(*groupKey) uint64) {
	winners := make(map[uint64]int32, len(items))
	var exact map[groupKey]int32
	var losers []int32
	// settle decides between item i and its group's winner so far (w, when
	// ok): it records the loser and reports whether i now wins.
	settle := func(i, w int32, ok bool) (winner bool) {
		switch {
		case !ok:
			return true
		case newer(&items[i], &items[w]):
			losers = append(losers, w)
			return true
		}
		losers = append(losers, i)
		return false
	}
	for i := range items {
		it := &items[i]
		if it.group == (groupKey{}) {
			continue
		}
		h := hash(&it.group)
		w, ok := winners[h]
		if !ok || items[w].group == it.group {
			if settle(int32(i), w, ok) {
				winners[h] = int32(i)
			}
			continue
		}
		// Another group holds this hash.
		if exact == nil {
			exact = map[groupKey]int32{}
		}
		w, ok = exact[it.group]
		if settle(int32(i), w, ok) {
			exact[it.group] = int32(i)
		}
	}
	winnerOf := func(g *groupKey) int32 {
		if w, ok := winners[hash(g)]; ok && items[w].group == *g {
			return w
		}
		return exact[*g]
	}
	for _, l := range losers {
		it := &items[l]
		if it.group.line() {
			drop(it.out, ReasonDuplicate)
			continue
		}
		w := winnerOf(&it.group)
		it.out.Status, it.out.Reason = StatusShadowed, ReasonConflict
		slot := it.group.slot()
		if it.group.prim == schema.PrimitiveBackground {
			// The group key is textkernel.Key; the report names the key
			// as the rendering record spells it.
			wt := items[w].out.Target
			slot = "background." + wt.Section + "." + wt.Key
		}
		rep.Conflicts = append(rep.Conflicts, Conflict{Slot: slot, Winner: items[w].rec.ID, Shadowed: it.rec.ID})
	}
	slices.SortFunc(rep.Conflicts, func(a, b Conflict) int {
		return cmp.Or(strings.Compare(a.Slot, b.Slot), strings.Compare(a.Shadowed, b.Shadowed))
	})
}

// admitWithinBudgets spills, per primitive, the records that do not fit the
// budget in spill order (first fit).
func admitWithinBudgets(items []item, p Policy) {
	byPrim := make(map[schema.Primitive][]*item, 6)
	for i := range items {
		it := &items[i]
		if it.out.Status == "" {
			byPrim[it.out.Target.Primitive] = append(byPrim[it.out.Target.Primitive], it)
		}
	}
	for prim, list := range byPrim {
		budget := p.Budgets.For(prim)
		if budget <= 0 {
			continue
		}
		slices.SortFunc(list, spillCmp)
		left := budget
		for _, it := range list {
			if it.chars <= left {
				left -= it.chars
				continue
			}
			it.out.Status, it.out.Reason = StatusSpilled, ReasonBudget
		}
	}
}

// spillCmp is the spill order: most distinct conversations, then newest
// createdAt, then smaller id.
func spillCmp(a, b *item) int {
	if a.supports != b.supports {
		return cmp.Compare(b.supports, a.supports)
	}
	if a.age != b.age {
		return cmp.Compare(b.age, a.age)
	}
	return cmp.Compare(a.pos, b.pos)
}

// containerKey identifies a container: the primitive, the one of section,
// slot or capability the primitive has, and the judgment index.
type containerKey struct {
	prim     schema.Primitive
	name     string
	judgment int
}

// container is the pointer of the list or block a record targets, where a
// spill marker renders (containerPtr, the rule Container states).
func container(it *item) string { return containerPtr(*it.out.Target, it.judgment) }

// parentContainer is the container of a placed line's pointer: its parent
// (a substring, no allocation), or the recovery block for a line of its
// prompt. It equals container(it) for every placed record.
func parentContainer(ptr string) string {
	if strings.HasPrefix(ptr, recoveryPromptPtr+"/") {
		return recoveryPtr
	}
	return schema.ParentPointer(ptr)
}

// place writes an admitted record into the composed config c, attributes it
// and returns its pointer. learnedRecovery says the authored config has no
// recovery block, so the whole block is memory-derived.
func place(c *schema.AgentConfig, it *item, attr *Attribution, learnedRecovery bool) string {
	r, t, id := it.rec, it.out.Target, it.rec.ID
	// Record content is data: it lands inside its slot as one line
	// (Inline), never as prompt structure.
	content := Inline(r.Content)
	var ptr string
	switch t.Primitive {
	case schema.PrimitiveBackground:
		sec := c.Background.Section(t.Section)
		*sec = append(*sec, schema.Entry{Key: t.Key, Value: content})
		ptr = backgroundKeyPtr(t.Section, t.Key)
	case schema.PrimitiveJudgment:
		list := judgmentSlotRef(&c.RoleTemplate.Judgments[it.judgment], t.Slot)
		*list = append(*list, content)
		ptr = indexPtr(judgmentSlotPtr(it.judgment, t.Slot), len(*list)-1)
	case schema.PrimitiveExample:
		j := &c.RoleTemplate.Judgments[it.judgment]
		ex := *it.ex
		ex.Scenario, ex.Good, ex.Bad, ex.Reasoning = Inline(ex.Scenario), Inline(ex.Good), Inline(ex.Bad), Inline(ex.Reasoning)
		j.Examples = append(j.Examples, schema.Example(ex))
		ptr = indexPtr(judgmentSlotPtr(it.judgment, "examples"), len(j.Examples)-1)
	case schema.PrimitiveAwareness:
		aw := *it.aw
		aw.Name, aw.Description, aw.AccessMethod = Inline(aw.Name), Inline(aw.Description), Inline(aw.AccessMethod)
		c.Awareness.Domains = append(c.Awareness.Domains, aw)
		ptr = indexPtr(awarenessPtr, len(c.Awareness.Domains)-1)
	case schema.PrimitiveRecovery:
		rec := c.RoleTemplate.Recovery
		if rec == nil {
			rec = &schema.Recovery{Name: LearnedRecoveryName}
			c.RoleTemplate.Recovery = rec
		}
		if learnedRecovery {
			attr.addLine(recoveryPtr, id)
		}
		start := 0
		if rec.Prompt != "" {
			start = strings.Count(rec.Prompt, "\n") + 1
			rec.Prompt += "\n"
		}
		rec.Prompt += content
		attr.addLine(recoveryPromptPtr+"/"+strconv.Itoa(start), id)
		return recoveryPromptPtr + "/" + strconv.Itoa(start)
	case schema.PrimitiveManual:
		if c.Manuals == nil {
			c.Manuals = map[string]schema.Manual{}
		}
		m := c.Manuals[t.Capability]
		m.Workflows = append(m.Workflows, content)
		c.Manuals[t.Capability] = m
		ptr = indexPtr(manualPtr(t.Capability), len(m.Workflows)-1)
	}
	attr.addLine(ptr, id)
	return ptr
}

func totals(rep *Report, p Policy) Totals {
	t := Totals{Records: len(rep.Records), CharsPerPrimitive: map[string]int{}, BytesPerPrimitive: map[string]int{}, Conflicts: len(rep.Conflicts), Ceiling: p.Ceiling}
	for _, prim := range schema.Primitives {
		t.CharsPerPrimitive[string(prim)] = 0
		t.BytesPerPrimitive[string(prim)] = 0
	}
	for _, o := range rep.Records {
		switch o.Status {
		case StatusApplied:
			t.Applied++
			t.CharsPerPrimitive[string(o.Primitive)] += o.Chars
			t.BytesPerPrimitive[string(o.Primitive)] += o.Bytes
			t.Chars += o.Chars
			t.Bytes += o.Bytes
		case StatusDropped:
			t.Dropped++
		case StatusSpilled:
			t.Spilled++
		case StatusShadowed:
			t.Shadowed++
		}
	}
	return t
}

// measure sets the totals the rendered composition gives: its size, how
// much of it is authored, and whether it is over the ceiling (the whole
// composition counts, not only what memory added).
func measure(t *Totals, p Prompt) {
	learned := 0
	t.ComposedChars = p.count(func(f Fragment, n int) {
		if f.Source == SourceMemory {
			learned += n + 1 // the memory fragment as rendered, with its line break
		}
	})
	t.AuthoredChars = max(t.ComposedChars-learned, 0)
	t.CeilingExceeded = t.Ceiling > 0 && t.ComposedChars > t.Ceiling
}
