package lint

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/textkernel"
)

// runCtx is one Run's shared, derived state.
type runCtx struct {
	in      Input
	doc     *schema.Document
	cfg     *schema.AgentConfig
	rep     overlay.Report
	ws      schema.WorkspaceConfig // defaults filled
	records map[string]*schema.MemoryRecord
	isCand  map[string]bool
	// conflictList is conflicts(), once computed (conflictsDone).
	conflictList  []Conflict
	conflictsDone bool
}

// analyze is Input.Analyze, else lexical.Analyze.
func (c *runCtx) analyze(t string) *lexical.Text {
	if c.in.Analyze != nil {
		return c.in.Analyze(t)
	}
	return lexical.Analyze(t)
}

// stopped reports whether the caller stopped the run (Input.Done closed).
func (c *runCtx) stopped() bool {
	select {
	case <-c.in.Done:
		return true
	default:
		return false
	}
}

func newRunCtx(in Input) *runCtx {
	c := &runCtx{in: in, doc: in.Doc, cfg: in.Config, ws: in.Settings.WithDefaults(),
		records: map[string]*schema.MemoryRecord{}, isCand: map[string]bool{}}
	for i := range in.Facts.Promoted {
		c.records[in.Facts.Promoted[i].ID] = &in.Facts.Promoted[i]
	}
	for i := range in.Facts.Candidates {
		c.records[in.Facts.Candidates[i].ID] = &in.Facts.Candidates[i]
		c.isCand[in.Facts.Candidates[i].ID] = true
	}
	switch {
	case in.Report != nil:
		c.rep = *in.Report
	case in.Config != nil:
		p := overlay.PolicyFrom(in.Settings)
		rep, ok := in.Memo.getReport(in.Config, p)
		if !ok {
			_, rep = overlay.Apply(in.Config, in.Facts.Promoted, p)
			in.Memo.setReport(in.Config, p, rep)
		}
		c.rep = rep
	}
	return c
}

// at maps a pointer to a file range: the node itself, else its nearest
// existing ancestor's key. An array item gives its value's range.
func (c *runCtx) at(ptr string) schema.Range {
	if c.doc == nil {
		return schema.Range{}
	}
	p, r := c.doc.Nearest(ptr)
	if p != "" && c.doc.IsArray(schema.ParentPointer(p)) {
		if vr, ok := c.doc.ValueRange(p); ok {
			return vr
		}
	}
	return r
}

// finding builds a finding at ptr.
func (c *runCtx) finding(ptr, msg string) Finding {
	return Finding{Message: msg, Pointer: ptr, Range: c.at(ptr)}
}

// recordPointer is where a record landed in config′ (applied) or would
// land: its slot in the authored shape, so the nearest existing key shows.
func (c *runCtx) recordPointer(r *schema.MemoryRecord) string {
	if o, ok := c.rep.Outcome(r.ID); ok && o.Pointer != "" {
		return o.Pointer
	}
	if r.Target == nil {
		return ""
	}
	return c.targetPointer(*r.Target)
}

// targetOf is a copy of o's target, the zero target when it has none.
func targetOf(o overlay.RecordOutcome) schema.MemoryTarget {
	if o.Target == nil {
		return schema.MemoryTarget{}
	}
	return *o.Target
}

// targetPointer is the authored place a target names (overlay.TargetPointer).
func (c *runCtx) targetPointer(t schema.MemoryTarget) string { return overlay.TargetPointer(c.cfg, t) }

func targetString(r *schema.MemoryRecord) string {
	if r == nil || r.Target == nil {
		return "(untargeted)"
	}
	return r.Target.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func ruleCeiling(c *runCtx) []Finding {
	t := c.rep.Totals
	if !t.CeilingExceeded {
		return nil
	}
	f := c.finding("", t.CeilingMessage()+" (.agent-ls.yaml ceiling)")
	f.Related = append(f.Related, Related{Message: fmt.Sprintf("authored: %d characters", t.AuthoredChars)})
	for _, p := range schema.Primitives {
		if n := t.CharsPerPrimitive[string(p)]; n > 0 {
			f.Related = append(f.Related, Related{Message: fmt.Sprintf("learned %s: %d characters", p, n)})
		}
	}
	return []Finding{f}
}

func ruleBudgetSpill(c *runCtx) []Finding {
	covered := map[string]bool{}
	groups := map[string][]string{}
	for ptr, ids := range c.rep.Attribution.Spilled {
		groups[ptr] = append(groups[ptr], ids...)
		for _, id := range ids {
			covered[id] = true
		}
	}
	for _, o := range c.rep.Records {
		if o.Status == overlay.StatusSpilled && !covered[o.ID] {
			ptr := ""
			if r := c.records[o.ID]; r != nil {
				ptr = c.recordPointer(r)
			}
			groups[ptr] = append(groups[ptr], o.ID)
		}
	}
	ptrs := make([]string, 0, len(groups))
	for p := range groups {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	var out []Finding
	for _, ptr := range ptrs {
		ids := groups[ptr]
		prim := schema.Primitive("")
		if o, ok := c.rep.Outcome(ids[0]); ok {
			prim = o.Primitive
		}
		f := c.finding(ptr, fmt.Sprintf("%s over the %d-character %s budget %s to recall: %s",
			plural(len(ids), "memory", "memories"), c.ws.Budgets.For(prim), prim, map[bool]string{true: "spills", false: "spill"}[len(ids) == 1], listIDs(ids)))
		for _, id := range ids {
			f.Related = append(f.Related, Related{RecordID: id, Message: "spilled: " + targetString(c.records[id])})
		}
		out = append(out, f)
	}
	return out
}

// dropped returns the dropped outcomes with one of the reasons.
func (c *runCtx) dropped(reasons ...overlay.Reason) []overlay.RecordOutcome {
	var out []overlay.RecordOutcome
	for _, o := range c.rep.Records {
		if o.Status != overlay.StatusDropped {
			continue
		}
		for _, r := range reasons {
			if o.Reason == r {
				out = append(out, o)
			}
		}
	}
	return out
}

// conflictsOf returns the run's conflicts of one kind (Conflicts).
func (c *runCtx) conflictsOf(k ConflictKind) []Conflict {
	var out []Conflict
	for _, cf := range c.conflicts() {
		if cf.Kind == k {
			out = append(out, cf)
		}
	}
	return out
}

func ruleAuthoredWins(c *runCtx) []Finding {
	var out []Finding
	for _, cf := range c.conflictsOf(ConflictAuthoredWins) {
		f := c.finding(cf.Authored, cf.Why)
		f.Related = []Related{{RecordID: cf.RecordID, Message: "dropped: authored wins"}}
		out = append(out, f)
	}
	return out
}

func ruleMemoryConflict(c *runCtx) []Finding {
	var out []Finding
	for _, cf := range c.conflictsOf(ConflictKeyCollision) {
		winner, shadowed := cf.RecordID, cf.With
		ptr := ""
		if o, ok := c.rep.Outcome(winner); ok {
			ptr = o.Pointer
			if ptr == "" {
				ptr = c.targetPointer(targetOf(o))
			}
		}
		f := c.finding(ptr, fmt.Sprintf("memories %s and %s collide on %s: %s renders (newer), %s is shadowed", winner, shadowed, cf.Target, winner, shadowed))
		f.Related = []Related{{RecordID: winner, Message: "renders"}, {RecordID: shadowed, Message: "shadowed"}}
		f.Fixes = []Fix{
			{Title: fmt.Sprintf("Keep %s (supersede %s)", winner, shadowed), Command: CommandSupersede, Args: SupersedeArgs{KeepID: winner, DropID: shadowed}},
			{Title: fmt.Sprintf("Keep %s (supersede %s)", shadowed, winner), Command: CommandSupersede, Args: SupersedeArgs{KeepID: shadowed, DropID: winner}},
		}
		out = append(out, f)
	}
	return out
}

// candidateProblem is the overlay's verdict on a candidate's target: the
// same domain, capability and payload checks Apply makes.
func (c *runCtx) candidateProblem(r *schema.MemoryRecord) overlay.Reason {
	if r.Target == nil {
		return ""
	}
	t := *r.Target
	switch t.Primitive {
	case schema.PrimitiveJudgment:
		if c.cfg.JudgmentByDomain(t.Domain) < 0 {
			return overlay.ReasonUnknownDomain
		}
	case schema.PrimitiveExample:
		var ex schema.ExamplePayload
		if json.Unmarshal(r.Payload, &ex) != nil || ex.Scenario == "" || ex.Good == "" {
			return overlay.ReasonMissingPayload
		}
		if c.cfg.JudgmentByDomain(t.JudgmentDomain) < 0 {
			return overlay.ReasonUnknownDomain
		}
	case schema.PrimitiveAwareness:
		var aw schema.AwarenessDomain
		if json.Unmarshal(r.Payload, &aw) != nil || aw.Name == "" || aw.Description == "" || aw.AccessMethod == "" {
			return overlay.ReasonMissingPayload
		}
	case schema.PrimitiveManual:
		_, ok := c.cfg.Manuals[t.Capability]
		if !ok && !contains(c.cfg.Capabilities, t.Capability) {
			return overlay.ReasonUnknownCapability
		}
	}
	return ""
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// unapplicable lists promoted records the overlay dropped and candidates
// that would be dropped, for one of the reasons.
func (c *runCtx) unapplicable(reasons ...overlay.Reason) []struct {
	rec    *schema.MemoryRecord
	target schema.MemoryTarget
	id     string
	reason overlay.Reason
	cand   bool
} {
	type item = struct {
		rec    *schema.MemoryRecord
		target schema.MemoryTarget
		id     string
		reason overlay.Reason
		cand   bool
	}
	var out []item
	for _, o := range c.dropped(reasons...) {
		out = append(out, item{c.records[o.ID], targetOf(o), o.ID, o.Reason, false})
	}
	for i := range c.in.Facts.Candidates {
		r := &c.in.Facts.Candidates[i]
		why := c.candidateProblem(r)
		for _, want := range reasons {
			if why != "" && why == want {
				out = append(out, item{r, *r.Target, r.ID, why, true})
			}
		}
	}
	return out
}

func kindOf(cand bool) string {
	if cand {
		return "candidate"
	}
	return "memory"
}

func ruleUnknownDomain(c *runCtx) []Finding {
	var out []Finding
	for _, u := range c.unapplicable(overlay.ReasonUnknownDomain, overlay.ReasonUnknownCapability) {
		var msg string
		switch u.target.Primitive {
		case schema.PrimitiveManual:
			msg = fmt.Sprintf("%s %s targets capability %q, which the agent does not define: it cannot apply", kindOf(u.cand), u.id, u.target.Capability)
		default:
			d := u.target.Domain
			if u.target.Primitive == schema.PrimitiveExample {
				d = u.target.JudgmentDomain
			}
			msg = fmt.Sprintf("%s %s targets judgment domain %q, which the agent does not define: it cannot apply", kindOf(u.cand), u.id, d)
			if ds := c.domains(); len(ds) > 0 {
				msg += " (domains: " + strings.Join(ds, ", ") + ")"
			}
		}
		f := c.finding(c.targetPointer(u.target), msg)
		f.Related = []Related{{RecordID: u.id, Message: u.target.String()}}
		out = append(out, f)
	}
	return out
}

func (c *runCtx) domains() []string {
	var ds []string
	for _, j := range c.cfg.RoleTemplate.Judgments {
		ds = append(ds, j.Domain)
	}
	return ds
}

func ruleMissingPayload(c *runCtx) []Finding {
	var out []Finding
	for _, u := range c.unapplicable(overlay.ReasonMissingPayload) {
		need := "scenario and good"
		if u.target.Primitive == schema.PrimitiveAwareness {
			need = "name, description and accessMethod"
		}
		f := c.finding(c.targetPointer(u.target), fmt.Sprintf("%s %s (%s) lacks a complete %s payload (%s required): it cannot apply",
			kindOf(u.cand), u.id, u.target, u.target.Primitive, need))
		f.Related = []Related{{RecordID: u.id, Message: u.target.String()}}
		out = append(out, f)
	}
	return out
}

func ruleContradiction(c *runCtx) []Finding {
	var out []Finding
	for _, cf := range c.conflictsOf(ConflictContradiction) {
		r := c.records[cf.RecordID]
		what := kindOf(c.isCand[cf.RecordID])
		if cf.With == "" {
			slot := schema.ParentPointer(cf.Authored)
			slot = slot[strings.LastIndex(slot, "/")+1:]
			f := c.finding(cf.Authored, fmt.Sprintf("%s %s %q contradicts this authored %s line: %s", what, cf.RecordID, r.Content, strings.TrimSuffix(slot, "s"), cf.Why))
			f.Related = []Related{{RecordID: cf.RecordID, Message: r.Target.String()}}
			out = append(out, f)
			continue
		}
		p := c.records[cf.With]
		f := c.finding(c.recordPointer(p), fmt.Sprintf("%s %s %q contradicts promoted memory %s %q: %s", what, cf.RecordID, r.Content, p.ID, p.Content, cf.Why))
		f.Related = []Related{{RecordID: cf.RecordID, Message: cf.Record.State}, {RecordID: p.ID, Message: "promoted"}}
		out = append(out, f)
	}
	return out
}

// analyzeAll is analyze of each line.
func (c *runCtx) analyzeAll(lines []string) []*lexical.Text {
	out := make([]*lexical.Text, len(lines))
	for i, l := range lines {
		out[i] = c.analyze(l)
	}
	return out
}

func rulePendingReview(c *runCtx) []Finding {
	var out []Finding
	now := c.in.Facts.Now
	for _, p := range c.in.Facts.Proposals {
		if state := store.ProposalStateAt(p, now); state != store.ProposalPending && state != "" {
			continue
		}
		ptr := ""
		what := "memory " + p.RecordID
		if r := c.records[p.RecordID]; r != nil {
			ptr = c.recordPointer(r)
			what += " (" + targetString(r) + ")"
		}
		msg := fmt.Sprintf("pending %s of %s to the %s tier awaits a human (proposal %s", p.Kind, what, p.Tier, p.ID)
		if p.ExpiresAt != "" {
			msg += ", expires " + p.ExpiresAt
		}
		msg += ")"
		if p.Reason != "" {
			msg += ": " + p.Reason
		}
		f := c.finding(ptr, msg)
		f.Related = []Related{{RecordID: p.RecordID, Message: string(p.Kind) + " proposal " + p.ID}}
		f.Fixes = []Fix{
			{Title: fmt.Sprintf("Approve %s of %s", p.Kind, p.RecordID), Command: CommandApprove, Args: ProposalArgs{ProposalID: p.ID}},
			{Title: fmt.Sprintf("Reject %s of %s", p.Kind, p.RecordID), Command: CommandReject, Args: ProposalArgs{ProposalID: p.ID}},
		}
		out = append(out, f)
	}
	return out
}

// staleCutoff is Now minus staleAfter, or "" when either is unusable.
func (c *runCtx) staleCutoff() string {
	if c.in.Facts.Now == "" {
		return ""
	}
	now, err := schema.ParseTime(c.in.Facts.Now)
	if err != nil {
		return ""
	}
	d, err := schema.ParseDuration(c.ws.StaleAfter)
	if err != nil || d <= 0 {
		d = schema.DefaultStaleAfter
	}
	return schema.FormatTime(now.Add(-d))
}

// staleAfter is the configured staleAfter for messages.
func (c *runCtx) staleAfter() string {
	if c.ws.StaleAfter != "" {
		return c.ws.StaleAfter
	}
	return "30d"
}

func (c *runCtx) isStale(r *schema.MemoryRecord, cutoff string) bool {
	if cutoff == "" || r.Target == nil || r.Target.Primitive != schema.PrimitiveBackground || r.Target.Section != schema.SectionCurrentState {
		return false
	}
	if o, ok := c.rep.Outcome(r.ID); ok && o.Status == overlay.StatusDropped {
		return false
	}
	last := r.UpdatedAt
	if last == "" {
		last = r.CreatedAt
	}
	return last < cutoff
}

func ruleStaleState(c *runCtx) []Finding {
	cutoff := c.staleCutoff()
	var out []Finding
	for i := range c.in.Facts.Promoted {
		r := &c.in.Facts.Promoted[i]
		if !c.isStale(r, cutoff) {
			continue
		}
		last := r.UpdatedAt
		if last == "" {
			last = r.CreatedAt
		}
		f := c.finding(c.recordPointer(r), fmt.Sprintf("currentState %q (memory %s) was last updated %s, longer ago than staleAfter (%s): confirm or retire it",
			r.Target.Key, r.ID, last, c.staleAfter()))
		f.Related = []Related{{RecordID: r.ID, Message: r.Target.String()}}
		out = append(out, f)
	}
	return out
}

// MaxPairwise bounds the records of one target compared pairwise for
// near-duplicates: a larger group compares only its MaxPairwise newest, so
// linting stays fast on every keystroke.
const MaxPairwise = 200

func ruleNearDuplicate(c *runCtx) []Finding {
	groups, ok := c.in.Memo.getDupGroups()
	if !ok {
		groups, ok = c.nearDuplicateGroups()
		if !ok {
			return nil // stopped: the run's findings are dropped
		}
		c.in.Memo.setDupGroups(groups)
	}
	var out []Finding
	for _, d := range groups {
		out = append(out, c.nearDuplicateFinding(d.target, d.g, d.members, d.best))
	}
	// Candidates restating an authored line of their slot; each text
	// analysed once.
	type slotKey struct {
		judgment int
		slot     string
	}
	type slotTexts struct {
		texts []*lexical.Text
		index *lexical.SimIndex // the lines a candidate may restate (lexical.SimIndex)
	}
	authored := map[slotKey]slotTexts{}
	for i := range c.in.Facts.Candidates {
		r := &c.in.Facts.Candidates[i]
		if r.Target == nil || r.Target.Primitive != schema.PrimitiveJudgment {
			continue
		}
		if c.stopped() {
			break
		}
		j := c.cfg.JudgmentByDomain(r.Target.Domain)
		if j < 0 {
			continue
		}
		jd := &c.cfg.RoleTemplate.Judgments[j]
		var lines []string
		switch r.Target.Slot {
		case schema.SlotHeuristics:
			lines = jd.Heuristics
		case schema.SlotConstraints:
			lines = jd.Constraints
		case schema.SlotEscalationTriggers:
			lines = jd.EscalationTriggers
		}
		key := slotKey{j, r.Target.Slot}
		st, ok := authored[key]
		if !ok {
			st.texts = c.analyzeAll(lines)
			st.index = lexical.NewSimIndex(st.texts, lexical.NearDuplicateThreshold)
			authored[key] = st
		}
		texts := st.texts
		rt := c.analyze(r.Content)
		for _, k := range st.index.Probe(rt, 0) {
			if lexical.TextNearDuplicate(rt, texts[k]) {
				ptr := fmt.Sprintf("/roleTemplate/judgments/%d/%s/%d", j, r.Target.Slot, k)
				f := c.finding(ptr, fmt.Sprintf("candidate %s %q restates this authored line (similarity %.2f)", r.ID, r.Content, lexical.TextSimilarity(rt, texts[k])))
				f.Related = []Related{{RecordID: r.ID, Message: r.Target.String()}}
				out = append(out, f)
			}
		}
	}
	return out
}

// dupGroup is a group of near-duplicate live records on one target: g the
// target's records (oldest first), members the group's indexes in g, best
// its closest link's similarity.
type dupGroup struct {
	target  string
	g       []*schema.MemoryRecord
	members []int
	best    float64
}

// nearDuplicateGroups finds the groups of near-duplicate live records of
// each target; they depend on the facts alone (Memo keeps them). ok is
// false when the run stopped before the end.
func (c *runCtx) nearDuplicateGroups() (_ []dupGroup, ok bool) {
	var live []*schema.MemoryRecord
	for i := range c.in.Facts.Promoted {
		live = append(live, &c.in.Facts.Promoted[i])
	}
	for i := range c.in.Facts.Candidates {
		live = append(live, &c.in.Facts.Candidates[i])
	}
	byTarget := map[string][]*schema.MemoryRecord{}
	var targets []string
	for _, r := range live {
		if r.Target == nil || strings.TrimSpace(r.Content) == "" {
			continue
		}
		k := r.Target.String()
		if _, ok := byTarget[k]; !ok {
			targets = append(targets, k)
		}
		byTarget[k] = append(byTarget[k], r)
	}
	sort.Strings(targets)
	var out []dupGroup
	for _, k := range targets {
		if c.stopped() {
			return out, false
		}
		g := byTarget[k]
		sort.Slice(g, func(i, j int) bool {
			if g[i].CreatedAt != g[j].CreatedAt {
				return g[i].CreatedAt < g[j].CreatedAt
			}
			return g[i].ID < g[j].ID
		})
		if len(g) > MaxPairwise {
			g = g[len(g)-MaxPairwise:]
		}
		texts := make([]*lexical.Text, len(g))
		// Examples and awareness domains are one lesson by payload, never
		// by prose (schema.LessonKeys, as save matches them): an awareness
		// domain repeats another when the whole payload is the same.
		byPayload := g[0].Target.NeedsPayload()
		wholes := make([]string, len(g))
		for i, r := range g {
			if byPayload {
				_, wholes[i] = schema.LessonKeys(r.Target, r.Payload)
				continue
			}
			texts[i] = c.analyze(r.Content)
		}
		same := func(i, j int) bool {
			if byPayload {
				return wholes[i] != "" && wholes[i] == wholes[j]
			}
			return lexical.TextNearDuplicate(texts[i], texts[j])
		}
		similarity := func(i, j int) float64 {
			if byPayload {
				return 1
			}
			return lexical.TextSimilarity(texts[i], texts[j])
		}
		// Near-duplicate pairs joined into groups (union-find): a slot
		// holding n restatements of one lesson is one finding, not
		// n(n-1)/2.
		parent := make([]int, len(g))
		for i := range parent {
			parent[i] = i
		}
		find := func(i int) int {
			for parent[i] != i {
				parent[i] = parent[parent[i]]
				i = parent[i]
			}
			return i
		}
		// Two records already in one group are not compared again, so a
		// slot of n restatements costs n comparisons, not n(n-1)/2.
		best := make([]float64, len(g)) // the closest link of each group root
		// Prose compares only the pairs that may reach the near-duplicate
		// threshold (lexical.SimIndex); a pair below it joins nothing.
		var index *lexical.SimIndex
		if !byPayload {
			index = lexical.NewSimIndex(texts, lexical.NearDuplicateThreshold)
		}
		for i := 0; i < len(g) && !c.stopped(); i++ {
			var js []int
			if byPayload {
				for j := i + 1; j < len(g); j++ {
					js = append(js, j)
				}
			} else {
				js = index.Probe(texts[i], i+1)
			}
			for _, j := range js {
				ri, rj := find(i), find(j)
				if ri == rj || !same(i, j) {
					continue
				}
				parent[rj] = ri
				best[ri] = max(best[ri], best[rj], similarity(i, j))
			}
		}
		groups := map[int][]int{}
		var roots []int
		for i := range g {
			r := find(i)
			if _, ok := groups[r]; !ok {
				roots = append(roots, r)
			}
			groups[r] = append(groups[r], i)
		}
		for _, r := range roots {
			if m := groups[r]; len(m) > 1 {
				out = append(out, dupGroup{target: k, g: g, members: m, best: best[r]})
			}
		}
	}
	return out, !c.stopped()
}

// maxListed bounds the record ids a finding's message names; its related
// information lists them all.
const maxListed = 10

// listIDs joins ids for a message, the first maxListed of them and a count
// of the rest.
func listIDs(ids []string) string {
	if len(ids) <= maxListed {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:maxListed], ", "), len(ids)-maxListed)
}

// nearDuplicateFinding reports the group m (indexes into g, oldest first)
// of near-duplicate memories on target k at the newest one's place: a pair
// as "B near-duplicates A", a larger group with its size and members.
func (c *runCtx) nearDuplicateFinding(k string, g []*schema.MemoryRecord, m []int, sim float64) Finding {
	newest := g[m[len(m)-1]]
	if len(m) == 2 {
		a := g[m[0]]
		f := c.finding(c.recordPointer(newest), fmt.Sprintf("%s %s near-duplicates %s %s on %s (similarity %.2f): keep one",
			kindOf(c.isCand[newest.ID]), newest.ID, kindOf(c.isCand[a.ID]), a.ID, k, sim))
		f.Related = []Related{{RecordID: a.ID, Message: "older"}, {RecordID: newest.ID, Message: "newer"}}
		return f
	}
	ids := make([]string, 0, len(m))
	for i := len(m) - 1; i >= 0; i-- {
		ids = append(ids, g[m[i]].ID)
	}
	f := c.finding(c.recordPointer(newest), fmt.Sprintf("%d memories on %s restate one lesson (near-duplicates, each similar to another, up to %.2f): keep one; newest first: %s",
		len(m), k, sim, listIDs(ids)))
	for i, id := range ids {
		msg := "older"
		if i == 0 {
			msg = "newest"
		}
		f.Related = append(f.Related, Related{RecordID: id, Message: msg})
	}
	return f
}

// progress is a candidate's progress: the caller's, else computed.
func (c *runCtx) progress(r *schema.MemoryRecord) Progress {
	if p, ok := c.in.Facts.Progress[r.ID]; ok {
		return p
	}
	p := Progress{Have: r.DistinctConversations()}
	if r.Target != nil && schema.TierOf(*r.Target) == schema.TierEarned {
		p.Need = c.ws.Promotion.Recurrence
	}
	return p
}

func ruleCandidateProgress(c *runCtx) []Finding {
	type cand struct {
		r     *schema.MemoryRecord
		state string
	}
	byTarget := map[string][]cand{}
	var targets []string
	// One string per progress: a target's finding lists its candidates'
	// states (100k candidates with a big store), most of them equal.
	toward := map[[2]int]string{}
	// One key per target value: compactRecords shares them.
	keys := map[*schema.MemoryTarget]string{}
	for i := range c.in.Facts.Candidates {
		r := &c.in.Facts.Candidates[i]
		if r.Target == nil {
			continue
		}
		tier := schema.TierOf(*r.Target)
		p := c.progress(r)
		var state string
		switch {
		case p.Need > 0:
			var ok bool
			if state, ok = toward[[2]int{p.Have, p.Need}]; !ok {
				state = schema.ConversationsOf(p.Have, p.Need) + " toward promotion"
				toward[[2]int{p.Have, p.Need}] = state
			}
		case tier == schema.TierGuarded:
			state = "promotion needs a human's approval"
		case tier == schema.TierLocked:
			state = "its target is locked: it stays in recall"
		default:
			state = "not yet promoted"
		}
		k, ok := keys[r.Target]
		if !ok {
			k = r.Target.String()
			keys[r.Target] = k
		}
		if _, ok := byTarget[k]; !ok {
			targets = append(targets, k)
		}
		byTarget[k] = append(byTarget[k], cand{r, state})
	}
	var out []Finding
	for _, k := range targets {
		cs := byTarget[k]
		if len(cs) <= maxListed {
			for _, x := range cs {
				f := c.finding(c.targetPointer(*x.r.Target), fmt.Sprintf("candidate %s (%s, %s tier): %s: %q",
					x.r.ID, x.r.Target, schema.TierOf(*x.r.Target), x.state, textkernel.Clip(x.r.Content, 80)))
				f.Related = []Related{{RecordID: x.r.ID, Message: x.r.Target.String()}}
				out = append(out, f)
			}
			continue
		}
		// Many candidates of one target: one finding that counts them by
		// state (the related information lists each).
		counts := map[string]int{}
		var states []string
		ids := make([]string, 0, len(cs))
		for _, x := range cs {
			if counts[x.state] == 0 {
				states = append(states, x.state)
			}
			counts[x.state]++
			ids = append(ids, x.r.ID)
		}
		parts := make([]string, len(states))
		for i, st := range states {
			parts[i] = fmt.Sprintf("%d %s", counts[st], st)
		}
		f := c.finding(c.targetPointer(*cs[0].r.Target), fmt.Sprintf("%d candidates on %s (%s tier): %s: %s",
			len(cs), k, schema.TierOf(*cs[0].r.Target), strings.Join(parts, "; "), listIDs(ids)))
		f.Related = make([]Related, 0, len(cs)) // 100k candidates with a big store
		for _, x := range cs {
			f.Related = append(f.Related, Related{RecordID: x.r.ID, Message: x.state})
		}
		out = append(out, f)
	}
	return out
}

// ruleStructuredContent flags promoted and candidate memories whose content
// the prompt does not show as written: line breaks or a leading Markdown
// block marker (a heading, list item, quote, fence, rule). Content is data:
// overlay.Inline folds it into one line of its slot, so the finding asks for
// one plain line instead of structure that will not render.
func ruleStructuredContent(c *runCtx) []Finding {
	var out []Finding
	for _, recs := range [][]schema.MemoryRecord{c.in.Facts.Promoted, c.in.Facts.Candidates} {
		for i := range recs {
			r := &recs[i]
			if r.Target == nil || overlay.Inline(r.Content) == r.Content {
				continue
			}
			f := c.finding(c.recordPointer(r), fmt.Sprintf("memory %s (%s) has line breaks or starts with Markdown structure: it renders folded into one line of its slot as %q; save it as one plain line",
				r.ID, r.Target, textkernel.Clip(overlay.Inline(r.Content), 80)))
			f.Related = []Related{{RecordID: r.ID, Message: r.Target.String()}}
			out = append(out, f)
		}
	}
	return out
}
