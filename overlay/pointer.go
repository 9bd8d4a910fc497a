package overlay

import (
	"strconv"

	"github.com/agent-ls/agent-ls/schema"
)

// Pointers name places in a composed config: RFC 6901 JSON Pointers into its
// camelCase JSON shape, e.g. /background/projectContext/deploy_window or
// /roleTemplate/judgments/0/heuristics/3. Lines of the recovery prompt (a
// string) extend the pointer with the 0-based line number:
// /roleTemplate/recovery/prompt/2.

// escapeToken escapes one reference token per RFC 6901.
func escapeToken(s string) string { return schema.EscapePointer(s) }

func backgroundPtr(section string) string { return "/background/" + escapeToken(section) }

func backgroundKeyPtr(section, key string) string {
	return string(appendBackgroundKeyPtr(nil, section, key))
}

// appendBackgroundKeyPtr appends backgroundKeyPtr(section, key) to b.
func appendBackgroundKeyPtr(b []byte, section, key string) []byte {
	b = append(b, "/background/"...)
	b = append(b, section...)
	b = append(b, '/')
	return append(b, escapeToken(key)...)
}

func judgmentSlotPtr(j int, slot string) string {
	return "/roleTemplate/judgments/" + strconv.Itoa(j) + "/" + slot
}

func indexPtr(list string, i int) string { return string(appendIndexPtr(nil, list, i)) }

// appendIndexPtr appends indexPtr(list, i) to b.
func appendIndexPtr(b []byte, list string, i int) []byte {
	b = append(b, list...)
	b = append(b, '/')
	return strconv.AppendInt(b, int64(i), 10)
}

func manualPtr(capability string) string {
	return "/manuals/" + escapeToken(capability) + "/workflows"
}

const (
	judgmentsPtr      = "/roleTemplate/judgments"
	awarenessPtr      = "/awareness/domains"
	recoveryPtr       = "/roleTemplate/recovery"
	recoveryPromptPtr = "/roleTemplate/recovery/prompt"
)

// containerPtr is the pointer of the list or block a target's lines join
// in a config whose judgment for the target's domain is at index j (-1:
// none): a background section, a judgment slot or its examples, the
// awareness domains, the recovery block, a manual's workflows. A judgment
// or example target without its domain is the judgments list.
func containerPtr(t schema.MemoryTarget, j int) string {
	switch t.Primitive {
	case schema.PrimitiveBackground:
		return backgroundPtr(t.Section)
	case schema.PrimitiveJudgment:
		if j < 0 {
			return judgmentsPtr
		}
		return judgmentSlotPtr(j, escapeToken(t.Slot))
	case schema.PrimitiveExample:
		if j < 0 {
			return judgmentsPtr
		}
		return judgmentSlotPtr(j, "examples")
	case schema.PrimitiveAwareness:
		return awarenessPtr
	case schema.PrimitiveRecovery:
		return recoveryPtr
	case schema.PrimitiveManual:
		return manualPtr(t.Capability)
	}
	return ""
}

// Container is the one rule for where a target's learned lines belong in
// an authored config: the pointer of the authored list or block they join
// (the section a hint anchors to, a spill marker renders in, an adopt edit
// appends to). The report carries it for every record it places
// (RecordOutcome.Container); a candidate not in a report asks here.
func Container(cfg *schema.AgentConfig, t schema.MemoryTarget) string {
	j := -1
	if cfg != nil {
		switch t.Primitive {
		case schema.PrimitiveJudgment:
			j = cfg.JudgmentByDomain(t.Domain)
		case schema.PrimitiveExample:
			j = cfg.JudgmentByDomain(t.JudgmentDomain)
		}
	}
	return containerPtr(t, j)
}

// TargetPointer is the authored place a target names, for a finding's
// range: a background target's key, else its Container; a manual target
// whose capability has no manual falls back to the capability (or the
// capabilities list).
func TargetPointer(cfg *schema.AgentConfig, t schema.MemoryTarget) string {
	switch t.Primitive {
	case schema.PrimitiveBackground:
		return backgroundKeyPtr(t.Section, t.Key)
	case schema.PrimitiveManual:
		if cfg == nil {
			return manualPtr(t.Capability)
		}
		if _, ok := cfg.Manuals[t.Capability]; ok {
			return manualPtr(t.Capability)
		}
		for i, cp := range cfg.Capabilities {
			if cp == t.Capability {
				return indexPtr("/capabilities", i)
			}
		}
		return "/capabilities"
	}
	return Container(cfg, t)
}
