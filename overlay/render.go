package overlay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/schema"
)

// Fragment sources. Sections are "role" or "instance"; a fragment is its
// section's source unless it is memory-derived.
const (
	SourceRole     = "role"
	SourceInstance = "instance"
	SourceMemory   = "memory"
)

// Fragment is one line (or one multi-line element, such as an example) of a
// rendered section. Memory-derived fragments carry their record ids.
type Fragment struct {
	Source    string   `json:"source"`
	Text      string   `json:"text"`
	MemoryIDs []string `json:"memoryIds,omitempty"`
}

// Section is one top-level part of the system prompt.
type Section struct {
	Title     string     `json:"title"`
	Source    string     `json:"source"`
	Fragments []Fragment `json:"fragments"`
}

// Prompt is a rendered system prompt with attribution.
type Prompt struct {
	Sections []Section `json:"sections"`
}

// Section titles, in render order.
const (
	TitleIdentity     = "Identity"
	TitleBoundaries   = "Boundaries"
	TitleCapabilities = "Capabilities"
	TitleContext      = "Context"
	TitleMission      = "Mission"
	TitleMethodology  = "Methodology"
)

// DefaultMaxAttempts is the reference framework's recovery maxAttempts
// default, rendered when a recovery block leaves it unset.
const DefaultMaxAttempts = 3

// Render renders a (composed) config as the reference framework's system
// prompt: Identity, Boundaries, Capabilities, Context, Mission, Methodology,
// empty sections dropped. Elements named in attr render as memory fragments;
// containers with spilled records get a marker line. With a zero
// Attribution every fragment is authored.
//
// Rendering the config Apply returned, with its report's Attribution,
// returns the rendering Apply made to measure the composition (the same
// Prompt, not rendered twice); the config must not have changed since.
func Render(cfg *schema.AgentConfig, attr Attribution) Prompt {
	if attr.prompt != nil && attr.of == cfg && cfg != nil {
		p := *attr.prompt
		p.Sections = p.Sections[:len(p.Sections):len(p.Sections)] // an append copies
		return p
	}
	return render(cfg, attr)
}

func render(cfg *schema.AgentConfig, attr Attribution) Prompt {
	if cfg == nil {
		cfg = &schema.AgentConfig{}
	}
	attr.prompt, attr.of = nil, nil
	r := renderer{attr: attr, cfg: cfg}
	var p Prompt
	for _, f := range []func() Section{r.identity, r.boundaries, r.capabilities, r.context, r.mission, r.methodology} {
		if s := f(); len(s.Fragments) > 1 {
			p.Sections = append(p.Sections, s)
		}
	}
	return p
}

type renderer struct {
	attr Attribution
	cfg  *schema.AgentConfig
	sec  *Section
	// ptr is where the pointers of the elements a section lists are built
	// to look them up in attr (lineAt), one after another.
	ptr []byte
}

// grow makes room for n more fragments in the current section: the big
// sections (context, methodology) list one per background entry or
// heuristic, and growing the slice as they come allocated about twice
// what they hold.
func (r *renderer) grow(n int) {
	r.sec.Fragments = slices.Grow(r.sec.Fragments, n)
}

// indexPtr is indexPtr(list, i) in r.ptr, valid until the next.
func (r *renderer) indexPtr(list string, i int) []byte {
	r.ptr = appendIndexPtr(r.ptr[:0], list, i)
	return r.ptr
}

func (r *renderer) begin(title, source, heading string) *Section {
	r.sec = &Section{Title: title, Source: source}
	r.text(heading)
	return r.sec
}

// text adds an authored fragment.
func (r *renderer) text(s string) {
	r.sec.Fragments = append(r.sec.Fragments, Fragment{Source: r.sec.Source, Text: s})
}

// line adds a fragment for the element at ptr: memory-derived when attr
// names it.
func (r *renderer) line(s, ptr string) { r.lineOf(s, r.attr.Lines[ptr]) }

// lineAt is line with the element's pointer as bytes (looked up without
// a string of its own).
func (r *renderer) lineAt(s string, ptr []byte) { r.lineOf(s, r.attr.Lines[string(ptr)]) }

// lineOf adds a fragment for an element attr names with ids: memory-derived
// when there are any.
func (r *renderer) lineOf(s string, ids []string) {
	if len(ids) > 0 {
		r.sec.Fragments = append(r.sec.Fragments, Fragment{Source: SourceMemory, Text: s, MemoryIDs: slices.Clone(ids)})
		return
	}
	r.text(s)
}

// spilled returns the ids spilled from the containers.
func (r *renderer) spilled(ptrs ...string) []string {
	var ids []string
	for _, p := range ptrs {
		ids = append(ids, r.attr.Spilled[p]...)
	}
	return ids
}

// marker adds the budget marker line for spilled ids.
func (r *renderer) marker(ids []string) {
	if len(ids) == 0 {
		return
	}
	r.sec.Fragments = append(r.sec.Fragments, Fragment{Source: SourceMemory, Text: MarkerText(len(ids)), MemoryIDs: slices.Clone(ids)})
}

// MarkerText is the line marking where a budget cut the composition.
func MarkerText(n int) string {
	noun := "entries"
	if n == 1 {
		noun = "entry"
	}
	return fmt.Sprintf(markerPrefix+"%d learned %s moved to recall]", n, noun)
}

func (r *renderer) bullets(heading string, items []string, listPtr string, spilled []string) {
	if len(items) == 0 && len(spilled) == 0 {
		return
	}
	if heading != "" {
		r.text(heading)
	}
	for i, s := range items {
		r.lineAt("- "+s, r.indexPtr(listPtr, i))
	}
	r.marker(spilled)
}

func (r *renderer) identity() Section {
	rt := &r.cfg.RoleTemplate
	s := r.begin(TitleIdentity, SourceRole, "## Identity")
	if id := strings.TrimSpace(rt.Persona.Identity); id != "" {
		r.text("You are " + strings.TrimSuffix(id, ".") + ".")
	}
	var tone []string
	if rt.Persona.Tone != "" {
		tone = append(tone, rt.Persona.Tone)
	}
	if t := rt.Tone; t != nil {
		if t.Prompt != "" {
			tone = append(tone, t.Prompt)
		}
		for _, ex := range t.Examples {
			tone = append(tone, "- "+ex[0]+": "+ex[1])
		}
		for _, a := range t.AntiPatterns {
			tone = append(tone, "- Avoid: "+a)
		}
	}
	if len(tone) > 0 {
		r.text("### Tone")
		for _, t := range tone {
			r.text(t)
		}
	}
	r.bullets("### Priorities", rt.Persona.Priorities, "/roleTemplate/persona/priorities", nil)
	r.bullets("### Principles", rt.Persona.Principles, "/roleTemplate/persona/principles", nil)
	if len(rt.Responsibilities) > 0 {
		r.text("### Responsibilities")
		for _, resp := range rt.Responsibilities {
			line := "- **" + resp.Name + "**"
			if resp.Description != "" {
				line += ": " + resp.Description
			}
			r.text(line)
			for _, ex := range resp.Examples {
				r.text("  - " + ex)
			}
		}
	}
	return *s
}

func (r *renderer) boundaries() Section {
	rt := &r.cfg.RoleTemplate
	s := r.begin(TitleBoundaries, SourceRole, "## Boundaries")
	for _, slot := range []struct{ name, heading string }{
		{schema.SlotConstraints, "### Constraints"},
		{schema.SlotEscalationTriggers, "### Escalate When"},
	} {
		var spilled []string
		has := false
		for j := range rt.Judgments {
			spilled = append(spilled, r.spilled(judgmentSlotPtr(j, slot.name))...)
			has = has || len(judgmentSlot(&rt.Judgments[j], slot.name)) > 0
		}
		if !has && len(spilled) == 0 {
			continue
		}
		r.text(slot.heading)
		for j := range rt.Judgments {
			list := judgmentSlotPtr(j, slot.name)
			for i, c := range judgmentSlot(&rt.Judgments[j], slot.name) {
				r.lineAt("- "+c, r.indexPtr(list, i))
			}
		}
		r.marker(spilled)
	}
	rec := rt.Recovery
	spilled := r.spilled(recoveryPtr)
	if rec == nil && len(spilled) == 0 {
		return *s
	}
	r.line("### Recovery", recoveryPtr)
	if rec != nil {
		if rec.Prompt != "" {
			var authored []string
			flush := func() {
				if len(authored) > 0 {
					r.text(strings.Join(authored, "\n"))
					authored = authored[:0]
				}
			}
			for i, l := range strings.Split(rec.Prompt, "\n") {
				ptr := recoveryPromptPtr + "/" + strconv.Itoa(i)
				if len(r.attr.Lines[ptr]) > 0 {
					flush()
					r.line(l, ptr)
					continue
				}
				authored = append(authored, l)
			}
			flush()
		}
		n := rec.MaxAttempts
		if n <= 0 {
			n = DefaultMaxAttempts
		}
		r.line("Max attempts before escalating: "+strconv.Itoa(n), recoveryPtr)
	}
	r.marker(spilled)
	return *s
}

func (r *renderer) capabilities() Section {
	s := r.begin(TitleCapabilities, SourceRole, "## Capabilities")
	caps := slices.Clone(r.cfg.Capabilities)
	var extra []string
	for name := range r.cfg.Manuals {
		if !slices.Contains(caps, name) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	// A heading renders only with something under it: a capability without
	// workflows (learned or spilled) has no heading. Its tool is the host's
	// to give; the prompt carries its guidance only.
	seen := map[string]bool{}
	for _, name := range append(caps, extra...) {
		if seen[name] {
			continue
		}
		seen[name] = true
		list := manualPtr(name)
		workflows, spilled := r.cfg.Manuals[name].Workflows, r.spilled(list)
		if len(workflows) == 0 && len(spilled) == 0 {
			continue
		}
		r.text("### " + name)
		for i, w := range workflows {
			r.lineAt("- "+w, r.indexPtr(list, i))
		}
		r.marker(spilled)
	}
	return *s
}

var backgroundHeadings = map[string]string{
	schema.SectionTeamContext:    "### Team Context",
	schema.SectionProjectContext: "### Project Context",
	schema.SectionConventions:    "### Conventions",
	schema.SectionCurrentState:   "### Current State",
}

func (r *renderer) context() Section {
	s := r.begin(TitleContext, SourceInstance, "## Context")
	n := 4 + len(r.cfg.Awareness.Domains)
	for _, name := range schema.BackgroundSections {
		n += 2 + len(*r.cfg.Background.Section(name))
	}
	r.grow(n)
	for _, name := range schema.BackgroundSections {
		entries := *r.cfg.Background.Section(name)
		spilled := r.spilled(backgroundPtr(name))
		if len(entries) == 0 && len(spilled) == 0 {
			continue
		}
		r.text(backgroundHeadings[name])
		for _, e := range entries {
			r.ptr = appendBackgroundKeyPtr(r.ptr[:0], name, e.Key)
			r.lineAt("- **"+e.Key+"**: "+FormatValue(e.Value), r.ptr)
		}
		r.marker(spilled)
	}
	aw := &r.cfg.Awareness
	r.text("### Available Information Sources")
	if len(aw.Domains) == 0 {
		r.text("You have no external information sources available.")
	} else {
		r.text("You can access:")
		for i, d := range aw.Domains {
			r.lineAt("- **"+d.Name+"**: "+d.Description+" (via "+d.AccessMethod+")", r.indexPtr(awarenessPtr, i))
		}
	}
	r.marker(r.spilled(awarenessPtr))
	if len(aw.ExplorationCapabilities) > 0 {
		r.text("You can also explore: " + strings.Join(aw.ExplorationCapabilities, ", ") + ".")
	}
	return *s
}

func (r *renderer) mission() Section {
	m := &r.cfg.Mission
	s := r.begin(TitleMission, SourceInstance, "## Mission")
	if m.Objective != "" {
		r.text(m.Objective)
	}
	r.bullets("### Success Criteria", m.SuccessCriteria, "/mission/successCriteria", nil)
	r.bullets("### Constraints", m.Constraints, "/mission/constraints", nil)
	if m.Rationale != "" {
		r.text("### Rationale")
		r.text(m.Rationale)
	}
	return *s
}

func (r *renderer) methodology() Section {
	rt := &r.cfg.RoleTemplate
	s := r.begin(TitleMethodology, SourceRole, "## Methodology")
	n := 0
	if m := rt.Methodology; m != nil {
		n += 1 + len(m.Checklist)
	}
	for j := range rt.Judgments {
		n += 4 + len(rt.Judgments[j].Heuristics) + len(rt.Judgments[j].Examples)
	}
	r.grow(n)
	if m := rt.Methodology; m != nil {
		if m.Prompt != "" {
			r.text(m.Prompt)
		}
		for _, c := range m.Checklist {
			r.text("- " + c)
		}
	}
	for j := range rt.Judgments {
		jd := &rt.Judgments[j]
		hPtr, exPtr := judgmentSlotPtr(j, schema.SlotHeuristics), judgmentSlotPtr(j, "examples")
		hSpilled, exSpilled := r.spilled(hPtr), r.spilled(exPtr)
		if len(jd.Heuristics) == 0 && len(jd.Examples) == 0 && len(hSpilled) == 0 && len(exSpilled) == 0 {
			continue
		}
		r.text("### " + TitleCase(jd.Domain))
		r.bullets("", jd.Heuristics, hPtr, hSpilled)
		if len(jd.Examples) == 0 && len(exSpilled) == 0 {
			continue
		}
		r.text("**Examples:**")
		for i, ex := range jd.Examples {
			r.lineAt(exampleText(ex), r.indexPtr(exPtr, i))
		}
		r.marker(exSpilled)
	}
	return *s
}

func exampleText(ex schema.Example) string {
	var b strings.Builder
	b.WriteString("- Scenario: " + ex.Scenario)
	b.WriteString("\n  Good: " + ex.Good)
	if ex.Bad != "" {
		b.WriteString("\n  Bad: " + ex.Bad)
	}
	if ex.Reasoning != "" {
		b.WriteString("\n  Why: " + ex.Reasoning)
	}
	return b.String()
}

// TitleCase turns a judgment domain such as "code-review" into "Code Review".
func TitleCase(s string) string {
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || unicode.IsSpace(r) })
	for i, w := range words {
		r, n := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(words, " ")
}

// FormatValue renders a background value: strings as they are, everything
// else as compact JSON (map keys sorted, no HTML escaping).
func FormatValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// Text is the system prompt as the model receives it: learned lines are
// indistinguishable from authored ones.
func (p Prompt) Text() string { return p.write(nil) }

// Annotated is Text with each memory-derived line followed by
// "  ⟵ memory ID, ID" (a budget marker by "  ⟵ spilled ID, ID").
func (p Prompt) Annotated() string {
	return p.AnnotatedWith(func(f Fragment) string {
		if IsMarker(f) {
			return "spilled " + strings.Join(f.MemoryIDs, ", ")
		}
		return "memory " + strings.Join(f.MemoryIDs, ", ")
	})
}

// IsMarker reports whether f is a budget marker line.
func IsMarker(f Fragment) bool {
	return f.Source == SourceMemory && strings.HasPrefix(f.Text, markerPrefix)
}

const markerPrefix = "… [memory budget reached — "

// textLen is the length of Text: write grows its builder once, to this
// (the text of a large prompt is a few hundred KB).
func (p Prompt) textLen() int {
	n := 0
	for _, s := range p.Sections {
		n += 2
		for _, f := range s.Fragments {
			n += 2 + len(f.Text)
		}
	}
	return n
}

// AnnotatedWith is Text with label(fragment) appended, after "  ⟵ ", to the
// first line of each memory-derived fragment.
func (p Prompt) AnnotatedWith(label func(Fragment) string) string {
	return p.write(func(f Fragment) string { return "  ⟵ " + label(f) })
}

// Markdown is Text for a Markdown viewer: memory-derived fragments end in an
// italic note naming their records.
func (p Prompt) Markdown() string {
	return p.write(func(f Fragment) string {
		return " _(memory: " + strings.Join(f.MemoryIDs, ", ") + ")_"
	})
}

// write joins fragments with newlines, a blank line before headings and
// between sections; note (when set) annotates memory fragments.
// Chars is the number of characters (runes) of Text, counted without
// building it.
func (p Prompt) Chars() int { return p.count(nil) }

// count is Chars, calling each (when set) with every fragment and its
// characters.
func (p Prompt) count(each func(f Fragment, n int)) int {
	n := 0
	for si, s := range p.Sections {
		if si > 0 {
			n += 2
		}
		for i, f := range s.Fragments {
			if i > 0 {
				if strings.HasPrefix(f.Text, "#") {
					n += 2
				} else {
					n++
				}
			}
			c := utf8.RuneCountInString(f.Text)
			n += c
			if each != nil {
				each(f, c)
			}
		}
	}
	if n > 0 {
		n++
	}
	return n
}

func (p Prompt) write(note func(Fragment) string) string {
	var b strings.Builder
	b.Grow(p.textLen())
	for si, s := range p.Sections {
		if si > 0 {
			b.WriteString("\n\n")
		}
		for i, f := range s.Fragments {
			if i > 0 {
				if strings.HasPrefix(f.Text, "#") {
					b.WriteString("\n\n")
				} else {
					b.WriteString("\n")
				}
			}
			text := f.Text
			if note != nil && f.Source == SourceMemory {
				first, rest, multi := strings.Cut(text, "\n")
				text = first + note(f)
				if multi {
					text += "\n" + rest
				}
			}
			b.WriteString(text)
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
