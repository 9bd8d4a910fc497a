package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Primitive names a part of the agent's anatomy a memory can target.
type Primitive string

// The primitives of MemoryTarget's discriminated union.
const (
	PrimitiveBackground Primitive = "background"
	PrimitiveJudgment   Primitive = "judgment"
	PrimitiveExample    Primitive = "example"
	PrimitiveAwareness  Primitive = "awareness"
	PrimitiveRecovery   Primitive = "recovery"
	PrimitiveManual     Primitive = "manual"
)

// Primitives lists the primitives in canonical order.
var Primitives = []Primitive{PrimitiveBackground, PrimitiveJudgment, PrimitiveExample, PrimitiveAwareness, PrimitiveRecovery, PrimitiveManual}

// Judgment slots a memory may target.
const (
	SlotHeuristics         = "heuristics"
	SlotConstraints        = "constraints"
	SlotEscalationTriggers = "escalationTriggers"
)

// JudgmentSlots lists the judgment slots in render order.
var JudgmentSlots = []string{SlotHeuristics, SlotConstraints, SlotEscalationTriggers}

// ManualSectionWorkflows is the one manual section a memory may target.
const ManualSectionWorkflows = "workflows"

// MemoryTarget is ADR-0008's discriminated union naming the slot a record
// compiles into. Which fields are set depends on Primitive:
//
//	background{section, key} | judgment{domain, slot} | example{judgmentDomain}
//	| awareness | recovery | manual{capability, section: "workflows"}
type MemoryTarget struct {
	Primitive      Primitive `json:"primitive"`
	Section        string    `json:"section,omitempty"`
	Key            string    `json:"key,omitempty"`
	Domain         string    `json:"domain,omitempty"`
	Slot           string    `json:"slot,omitempty"`
	JudgmentDomain string    `json:"judgmentDomain,omitempty"`
	Capability     string    `json:"capability,omitempty"`
}

// Validate checks that the target is a well-formed member of the union and
// that its free-text parts (key, domain, judgmentDomain, capability) pass
// the identifier rule (CheckIdentifier). Every door calls it: ParseTarget
// for the compact string form, the store's write and import checks for the
// object form.
func (t *MemoryTarget) Validate() error {
	if err := t.validateShape(); err != nil {
		return err
	}
	for _, f := range []struct{ field, v string }{
		{"target key", t.Key}, {"target domain", t.Domain}, {"target judgmentDomain", t.JudgmentDomain},
		{"target capability", t.Capability},
	} {
		if f.v != "" {
			if err := CheckIdentifier(f.field, f.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateShape is Validate without the identifier rule.
func (t *MemoryTarget) validateShape() error {
	switch t.Primitive {
	case PrimitiveBackground:
		if !contains(BackgroundSections, t.Section) {
			return targetErr(PrimitiveBackground, fmt.Sprintf("section %s is not one of %s", quoteShort(t.Section), strings.Join(BackgroundSections, ", ")))
		}
		if t.Key == "" {
			return targetErr(PrimitiveBackground, "key is required")
		}
		if t.Domain != "" || t.Slot != "" || t.JudgmentDomain != "" || t.Capability != "" {
			return targetErr(PrimitiveBackground, "only section and key are allowed")
		}
	case PrimitiveJudgment:
		if t.Domain == "" {
			return targetErr(PrimitiveJudgment, "domain is required")
		}
		if !contains(JudgmentSlots, t.Slot) {
			return targetErr(PrimitiveJudgment, fmt.Sprintf("slot %s is not one of %s", quoteShort(t.Slot), strings.Join(JudgmentSlots, ", ")))
		}
		if t.Section != "" || t.Key != "" || t.JudgmentDomain != "" || t.Capability != "" {
			return targetErr(PrimitiveJudgment, "only domain and slot are allowed")
		}
	case PrimitiveExample:
		if t.JudgmentDomain == "" {
			return targetErr(PrimitiveExample, "judgmentDomain is required")
		}
		if t.Section != "" || t.Key != "" || t.Domain != "" || t.Slot != "" || t.Capability != "" {
			return targetErr(PrimitiveExample, "only judgmentDomain is allowed")
		}
	case PrimitiveAwareness, PrimitiveRecovery:
		if *t != (MemoryTarget{Primitive: t.Primitive}) {
			return targetErr(t.Primitive, "takes no fields")
		}
	case PrimitiveManual:
		if t.Capability == "" {
			return targetErr(PrimitiveManual, "capability is required")
		}
		if t.Section != ManualSectionWorkflows {
			return targetErr(PrimitiveManual, fmt.Sprintf("section must be %q", ManualSectionWorkflows))
		}
		if t.Key != "" || t.Domain != "" || t.Slot != "" || t.JudgmentDomain != "" {
			return targetErr(PrimitiveManual, "only capability and section are allowed")
		}
	default:
		return targetErr("", fmt.Sprintf("primitive %s is not one of background, judgment, example, awareness, recovery, manual", quoteShort(string(t.Primitive))))
	}
	return nil
}

// String prints the compact text form, e.g. "background.projectContext.deploy_window",
// "judgment.refunds.heuristics", "example.refunds", "awareness", "recovery",
// "manual.deploy.workflows".
func (t MemoryTarget) String() string {
	switch t.Primitive {
	case PrimitiveBackground:
		return "background." + t.Section + "." + t.Key
	case PrimitiveJudgment:
		return "judgment." + t.Domain + "." + t.Slot
	case PrimitiveExample:
		return "example." + t.JudgmentDomain
	case PrimitiveManual:
		return "manual." + t.Capability + "." + t.Section
	}
	return string(t.Primitive)
}

// badTarget is ParseTarget's error for s.
func badTarget(s, why string) error { return &ValueError{Name: "target", Value: s, Why: why} }

// ParseTarget parses the compact text form printed by String. Keys, domains
// and capabilities may contain dots only where the form is unambiguous: a
// background key is everything after the section, a judgment domain and a
// manual capability are everything between the primitive and the last dot.
func ParseTarget(s string) (MemoryTarget, error) {
	if s == "" {
		return MemoryTarget{}, &ValueError{Name: "target"}
	}
	head, rest, _ := strings.Cut(s, ".")
	var t MemoryTarget
	switch Primitive(head) {
	case PrimitiveBackground:
		sec, key, ok := strings.Cut(rest, ".")
		if !ok {
			return t, badTarget(s, "want background.SECTION.KEY")
		}
		t = MemoryTarget{Primitive: PrimitiveBackground, Section: sec, Key: key}
	case PrimitiveJudgment:
		i := strings.LastIndex(rest, ".")
		if i < 0 {
			return t, badTarget(s, "want judgment.DOMAIN.SLOT")
		}
		t = MemoryTarget{Primitive: PrimitiveJudgment, Domain: rest[:i], Slot: rest[i+1:]}
	case PrimitiveExample:
		t = MemoryTarget{Primitive: PrimitiveExample, JudgmentDomain: rest}
	case PrimitiveAwareness, PrimitiveRecovery:
		if strings.Contains(s, ".") {
			return t, badTarget(s, fmt.Sprintf("%s takes no further parts", head))
		}
		t = MemoryTarget{Primitive: Primitive(head)}
	case PrimitiveManual:
		i := strings.LastIndex(rest, ".")
		if i < 0 {
			return t, badTarget(s, "want manual.CAPABILITY.workflows")
		}
		t = MemoryTarget{Primitive: PrimitiveManual, Capability: rest[:i], Section: rest[i+1:]}
	default:
		if contains(LockedNames, head) {
			return t, lockedTargetError(s)
		}
		return t, badTarget(s, fmt.Sprintf("unknown primitive %s (want background, judgment, example, awareness, recovery or manual)", quoteShort(head)))
	}
	if err := t.Validate(); err != nil {
		// The value names the target: its parts are worded without it
		// (`target "judgment.x.y": slot "y" is not one of ...`, not
		// `...: judgment target: slot ...` nor `...: target domain: ...`).
		return MemoryTarget{}, &ValueError{Name: "target", Value: s, Err: TargetPart(err)}
	}
	return t, nil
}

// UnmarshalJSON accepts the union object or the compact string form.
func (t *MemoryTarget) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		pt, err := ParseTarget(s)
		if err != nil {
			return err
		}
		*t = pt
		return nil
	}
	type plain MemoryTarget
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*t = MemoryTarget(p)
	return nil
}

// SlotKey identifies the slot a target writes: two live records with the same
// SlotKey collide. Background targets collide on section+key; list-valued
// slots (heuristics, examples, awareness, ...) never collide by slot alone and
// return "".
func (t MemoryTarget) SlotKey() string {
	if t.Primitive == PrimitiveBackground {
		return t.String()
	}
	return ""
}

// NeedsPayload reports whether records with this target must carry a
// structured payload (examples and awareness domains do).
func (t MemoryTarget) NeedsPayload() bool {
	return t.Primitive == PrimitiveExample || t.Primitive == PrimitiveAwareness
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TargetError is a target the union does not hold: Why says what is wrong
// with it, without naming the target ("slot "x" is not one of ...").
type TargetError struct {
	Primitive Primitive // "" when it is not one of the union's
	Why       string
}

func (e *TargetError) Error() string {
	if e.Primitive == "" { // the primitive is what is wrong
		return "target " + e.Why
	}
	return string(e.Primitive) + " target: " + e.Why
}

func targetErr(p Primitive, why string) error { return &TargetError{Primitive: p, Why: why} }

// TargetPart words an error of MemoryTarget.Validate for a surface that
// already names the target (its parameter, or the value it quotes): a
// TargetError is its Why, a part's identifier error names the part alone
// ("domain: ..."), without "target" again.
func TargetPart(err error) error {
	var te *TargetError
	if errors.As(err, &te) {
		return errors.New(te.Why)
	}
	var le *LimitError
	if errors.As(err, &le) && strings.HasPrefix(le.Field, "target ") {
		c := *le
		c.Field = strings.TrimPrefix(c.Field, "target ")
		return &c
	}
	return err
}
