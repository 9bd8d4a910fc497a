package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agent-ls/agent-ls/schema"
)

// The tools' schemas as tools/list shows them. The SDK infers them from the
// Go types; these functions make them say what a model needs the first time
// (issue 32): kind is an enum, target enumerates the bound agent's targets,
// payload has a schema per primitive, and no property is typed
// ["null", ...] (an optional array is a plain array, omitted when empty).

// toolSchemas is the input and output schema of a tool with arguments In
// and answer Out, without nullable types.
func toolSchemas[In, Out any]() (in, out *jsonschema.Schema) {
	return mustFor[In](), mustFor[Out]()
}

func mustFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", *new(T), err))
	}
	fixSchema(s)
	return s
}

// fixSchema makes every ["null", T] type a plain T (the fields are omitted
// when empty, or always set) and gives a free-form payload (a bare true
// schema, from a field of type any) an object type, recursively.
func fixSchema(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for name, p := range s.Properties {
		if name == "payload" && isTrue(p) {
			s.Properties[name] = &jsonschema.Schema{Type: "object",
				Description: "the record's structured payload: {scenario, good, bad?, reasoning?} for an example target, {name, description, accessMethod} for an awareness target"}
			continue
		}
		fixSchema(p)
	}
	fixSchema(s.Items)
	fixSchema(s.AdditionalProperties)
	for _, d := range s.Defs {
		fixSchema(d)
	}
	for _, l := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, c := range l {
			fixSchema(c)
		}
	}
}

// isTrue reports whether s is the empty (accept anything) schema.
func isTrue(s *jsonschema.Schema) bool {
	data, err := json.Marshal(s)
	return err == nil && (string(data) == "true" || string(data) == "{}")
}

// saveSchemas is memory_save's advertised input schema for the agent cfg
// and its output schema.
func saveSchemas(cfg *schema.AgentConfig) (in, out *jsonschema.Schema, err error) {
	in, out = toolSchemas[SaveInput, SaveOutput]()
	kinds := make([]any, len(schema.Kinds))
	for i, k := range schema.Kinds {
		kinds[i] = string(k)
	}
	in.Properties["kind"].Enum = kinds
	in.Properties["kind"].Default = json.RawMessage(`"fact"`)
	in.Properties["target"] = targetSchema(cfg)
	if in.Properties["payload"], err = payloadSchema(); err != nil {
		return nil, nil, err
	}
	return in, out, nil
}

// advertisedTargets lists the targets a memory of the agent cfg may name in compact
// form, in render order: each judgment domain's slots and its example
// target, then awareness and recovery. Background targets are free keys
// under a section (backgroundTargetPattern); locked targets (persona, tone,
// methodology, mission, manuals, a new judgment domain) are not listed: a
// save naming one is refused.
func advertisedTargets(cfg *schema.AgentConfig) []string {
	var out []string
	for _, j := range cfg.RoleTemplate.Judgments {
		for _, slot := range schema.JudgmentSlots {
			out = append(out, schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: j.Domain, Slot: slot}.String())
		}
		out = append(out, schema.MemoryTarget{Primitive: schema.PrimitiveExample, JudgmentDomain: j.Domain}.String())
	}
	return append(out, string(schema.PrimitiveAwareness), string(schema.PrimitiveRecovery))
}

// backgroundTargetPattern matches a background target in compact form.
func backgroundTargetPattern() string {
	sections := make([]string, len(schema.BackgroundSections))
	for i, s := range schema.BackgroundSections {
		sections[i] = regexp.QuoteMeta(s)
	}
	return `^background\.(` + strings.Join(sections, "|") + `)\.[^.\s][^\s]*$`
}

func tierNote(t schema.MemoryTarget) string {
	switch schema.TierOf(t) {
	case schema.TierAuto:
		return "auto: in the prompt at once"
	case schema.TierEarned:
		return "earned: a candidate until it recurs in enough distinct conversations"
	case schema.TierGuarded:
		return "guarded: a human reviews it"
	}
	return "locked"
}

// targetSchema is the target argument's schema for the agent cfg: one of
// the compact strings it accepts, a background target, or the union object,
// one branch per primitive.
func targetSchema(cfg *schema.AgentConfig) *jsonschema.Schema {
	var domains []any
	for _, j := range cfg.RoleTemplate.Judgments {
		domains = append(domains, j.Domain)
	}
	targets := advertisedTargets(cfg)
	enum := make([]any, len(targets))
	for i, t := range targets {
		enum[i] = t
	}
	sections := make([]any, len(schema.BackgroundSections))
	for i, s := range schema.BackgroundSections {
		sections[i] = s
	}
	slots := make([]any, len(schema.JudgmentSlots))
	for i, s := range schema.JudgmentSlots {
		slots[i] = s
	}
	prim := func(p schema.Primitive) *jsonschema.Schema {
		var c any = string(p)
		return &jsonschema.Schema{Type: "string", Const: &c}
	}
	str := func(desc string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "string", MinLength: ptr(1), Description: desc}
	}
	domain := func(desc string) *jsonschema.Schema {
		s := str(desc)
		if len(domains) > 0 {
			s.Enum = domains
		}
		return s
	}
	obj := func(desc string, props map[string]*jsonschema.Schema, req ...string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Description: desc, Properties: props,
			Required: append([]string{"primitive"}, req...), AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	}
	judgment := schema.MemoryTarget{Primitive: schema.PrimitiveJudgment}
	var tiers []string
	for _, slot := range schema.JudgmentSlots {
		judgment.Slot = slot
		tiers = append(tiers, slot+" is "+tierNote(judgment))
	}
	branches := []*jsonschema.Schema{
		{Type: "string", Enum: enum, Description: "a judgment rule (judgment.DOMAIN.SLOT: " + strings.Join(tiers, "; ") +
			"), a few-shot example of a domain (example.DOMAIN, " + tierNote(schema.MemoryTarget{Primitive: schema.PrimitiveExample}) +
			"; needs an example payload), an information source (awareness, " + tierNote(schema.MemoryTarget{Primitive: schema.PrimitiveAwareness}) +
			"; needs an awareness payload) or failure lore (recovery, " + tierNote(schema.MemoryTarget{Primitive: schema.PrimitiveRecovery}) + ")"},
		{Type: "string", Pattern: backgroundTargetPattern(), Description: "a background fact: background.SECTION.KEY, SECTION one of " +
			strings.Join(schema.BackgroundSections, ", ") + ", KEY the fact's own key (e.g. background.projectContext.deploy_window; " +
			tierNote(schema.MemoryTarget{Primitive: schema.PrimitiveBackground}) + "; a key held by another record is a conflict until the save supersedes it)"},
		obj("a background fact", map[string]*jsonschema.Schema{"primitive": prim(schema.PrimitiveBackground),
			"section": {Type: "string", Enum: sections}, "key": str("the fact's key within its section")}, "section", "key"),
		obj("a judgment rule", map[string]*jsonschema.Schema{"primitive": prim(schema.PrimitiveJudgment),
			"domain": domain("one of the agent's judgment domains"), "slot": {Type: "string", Enum: slots}}, "domain", "slot"),
		obj("a few-shot example of a judgment domain (needs an example payload)", map[string]*jsonschema.Schema{"primitive": prim(schema.PrimitiveExample),
			"judgmentDomain": domain("one of the agent's judgment domains")}, "judgmentDomain"),
		obj("an information source (needs an awareness payload)", map[string]*jsonschema.Schema{"primitive": prim(schema.PrimitiveAwareness)}),
		obj("failure lore", map[string]*jsonschema.Schema{"primitive": prim(schema.PrimitiveRecovery)}),
	}
	return &jsonschema.Schema{
		Description: "the prompt slot this memory belongs in, as a compact string or the union object; omit it to keep the memory in " +
			"recall. A locked target is refused: " + schema.LockedReason + ".",
		OneOf: branches,
	}
}

// payloadSchema is the payload argument's schema: the memory-record
// schema's example and awareness payloads (schema.RecordSchema).
func payloadSchema() (*jsonschema.Schema, error) {
	var rec struct {
		Defs map[string]*jsonschema.Schema `json:"$defs"`
	}
	if err := json.Unmarshal(schema.RecordSchema, &rec); err != nil {
		return nil, fmt.Errorf("memory-record schema: %w", err)
	}
	ex, aw := rec.Defs["examplePayload"], rec.Defs["awarenessPayload"]
	if ex == nil || aw == nil {
		return nil, fmt.Errorf("memory-record schema: no examplePayload or awarenessPayload")
	}
	ex.Description = "for an example target (example.DOMAIN): " + ex.Description
	aw.Description = "for an awareness target: " + aw.Description
	return &jsonschema.Schema{Description: "the structured form of an example or awareness memory (required for those " +
		"targets, omitted otherwise); content stays the prose line", OneOf: []*jsonschema.Schema{ex, aw}}, nil
}

func ptr[T any](v T) *T { return &v }
