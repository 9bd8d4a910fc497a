package overlay

import (
	"encoding/json"
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
)

// Status is what Apply did with one record.
type Status string

// The record statuses.
const (
	// StatusApplied: the record is part of the composition at Pointer.
	StatusApplied Status = "applied"
	// StatusDropped: the record cannot apply (Reason says why).
	StatusDropped Status = "dropped"
	// StatusSpilled: over budget; the record falls back to the recall tier.
	StatusSpilled Status = "spilled"
	// StatusShadowed: another record won the same slot (see Report.Conflicts).
	StatusShadowed Status = "shadowed"
)

// Reason explains a status other than applied.
type Reason string

// The reasons.
const (
	ReasonAuthoredWins      Reason = "authored-wins"      // the authored config holds that key or name
	ReasonUnknownDomain     Reason = "unknown-domain"     // no authored judgment with that domain
	ReasonUnknownCapability Reason = "unknown-capability" // no such capability or manual
	ReasonMissingPayload    Reason = "missing-payload"    // example/awareness without a complete payload
	ReasonUntargeted        Reason = "untargeted"         // no target: recall only
	ReasonInvalidTarget     Reason = "invalid-target"     // the target is not a well-formed MemoryTarget
	ReasonDuplicate         Reason = "duplicate"          // same id twice, or the same line as another
	ReasonBudget            Reason = "budget"             // spilled: over the primitive's budget
	ReasonConflict          Reason = "conflict"           // shadowed by a newer record in the same slot
)

// RecordOutcome is the report line of one record: ids only, no content.
type RecordOutcome struct {
	ID        string           `json:"id"`
	Primitive schema.Primitive `json:"primitive,omitempty"`
	// Target is the record's target (it points at the record's own target:
	// read it, do not change it), nil when the record has none or an invalid
	// one; JSON gives its compact form, e.g.
	// "background.projectContext.deploy_window".
	Target *schema.MemoryTarget `json:"-"`
	Status Status               `json:"status"`
	Reason Reason               `json:"reason,omitempty"`
	// Pointer is where an applied record landed in config′ (see pointer.go).
	Pointer string `json:"pointer,omitempty"`
	// Container is the authored list or block the record's line joins
	// (Container), set for applied and spilled records.
	Container string `json:"container,omitempty"`
	// Chars is the record's memory-derived text in runes (what budgets
	// count); Bytes the same text in UTF-8 bytes.
	Chars int `json:"chars"`
	Bytes int `json:"bytes"`
}

// MarshalJSON encodes the outcome with the target in its compact form.
func (o RecordOutcome) MarshalJSON() ([]byte, error) {
	type plain RecordOutcome
	var target string
	if o.Target != nil && o.Target.Primitive != "" {
		target = o.Target.String()
	}
	return json.Marshal(struct {
		plain
		Target string `json:"target,omitempty"`
	}{plain(o), target})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (o *RecordOutcome) UnmarshalJSON(data []byte) error {
	type plain RecordOutcome
	var v struct {
		plain
		Target string `json:"target,omitempty"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*o = RecordOutcome(v.plain)
	if v.Target != "" {
		t, err := schema.ParseTarget(v.Target)
		if err != nil {
			return fmt.Errorf("record %s: %w", o.ID, err)
		}
		o.Target = &t
	}
	return nil
}

// Conflict is a memory-vs-memory collision on one slot: Winner renders,
// Shadowed stays valid but out of the composition.
type Conflict struct {
	Slot     string `json:"slot"`
	Winner   string `json:"winner"`
	Shadowed string `json:"shadowed"`
}

// Totals sums a report.
type Totals struct {
	Records  int `json:"records"`
	Applied  int `json:"applied"`
	Dropped  int `json:"dropped"`
	Spilled  int `json:"spilled"`
	Shadowed int `json:"shadowed"`
	// CharsPerPrimitive counts applied memory-derived runes (what budgets
	// count), every primitive listed; Chars is their sum.
	CharsPerPrimitive map[string]int `json:"charsPerPrimitive"`
	Chars             int            `json:"chars"`
	// BytesPerPrimitive counts the same text in UTF-8 bytes (the overlay
	// event's sizes), every primitive listed; Bytes is their sum.
	BytesPerPrimitive map[string]int `json:"bytesPerPrimitive"`
	Bytes             int            `json:"bytes"`
	Conflicts         int            `json:"conflicts"`
	// ComposedChars is the rendered composition's size in characters, the
	// whole prompt: AuthoredChars of it authored (the rest learned, Chars).
	ComposedChars int `json:"composedChars"`
	AuthoredChars int `json:"authoredChars"`
	// Ceiling is the composition-wide limit; CeilingExceeded reports that
	// the whole composition (ComposedChars) is over it.
	Ceiling         int  `json:"ceiling"`
	CeilingExceeded bool `json:"ceilingExceeded"`
}

// CeilingMessage says how the composition measures against the ceiling:
// its size, how much of it is authored and how much learned, and the
// ceiling (the one wording lint, garden and the CLI use).
func (t Totals) CeilingMessage() string {
	over := "within"
	if t.CeilingExceeded {
		over = "over"
	}
	return fmt.Sprintf("the composition is %d characters (%d authored, %d learned), %s the composition ceiling of %d", t.ComposedChars, t.AuthoredChars, t.ComposedChars-t.AuthoredChars, over, t.Ceiling)
}

// Report says what Apply did with every record, in canonical record order
// (createdAt, then id).
type Report struct {
	Records   []RecordOutcome `json:"records"`
	Conflicts []Conflict      `json:"conflicts"`
	Totals    Totals          `json:"totals"`
	// Attribution maps composed lines to the records behind them; Render
	// uses it. It is derived data, left out of the JSON report.
	Attribution Attribution `json:"-"`
}

// IDs returns the ids of the records with status s, in report order.
func (r *Report) IDs(s Status) []string {
	var ids []string
	for _, o := range r.Records {
		if o.Status == s {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// Outcome returns the outcome of a record id.
func (r *Report) Outcome(id string) (RecordOutcome, bool) {
	for _, o := range r.Records {
		if o.ID == id {
			return o, true
		}
	}
	return RecordOutcome{}, false
}

// Attribution ties the composed config to memory: Lines maps the pointer of
// each memory-derived element to its record ids; Spilled maps the pointer of
// a container (a background section, a judgment slot list, the examples of a
// judgment, /awareness/domains, /roleTemplate/recovery, a manual's workflows)
// to the ids that spilled from it, where Render puts a marker line.
type Attribution struct {
	Lines   map[string][]string `json:"lines,omitempty"`
	Spilled map[string][]string `json:"spilled,omitempty"`
	// prompt is Apply's rendering of the config of, which Render returns
	// for that config instead of rendering it again.
	prompt *Prompt
	of     *schema.AgentConfig
}

func (a *Attribution) addLine(ptr, id string) {
	if a.Lines == nil {
		a.Lines = map[string][]string{}
	}
	a.Lines[ptr] = append(a.Lines[ptr], id)
}
