package schema

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// SchemaProperty documents one property an object may have, for editor
// completion.
type SchemaProperty struct {
	Name        string
	Description string
	Required    bool
}

// SchemaDoc reads one of the embedded JSON Schemas for editors: the
// description, properties and enum values of the node at a JSON Pointer
// into a document the schema describes. The same walk serves agent files
// and the workspace config.
type SchemaDoc struct {
	root map[string]any
}

func loadSchemaDoc(src []byte) func() *SchemaDoc {
	return sync.OnceValue(func() *SchemaDoc {
		var m map[string]any
		if err := json.Unmarshal(src, &m); err != nil {
			m = map[string]any{}
		}
		return &SchemaDoc{root: m}
	})
}

var (
	agentSchemaDoc     = loadSchemaDoc(AgentSchema)
	workspaceSchemaDoc = loadSchemaDoc(WorkspaceSchema)
	recordSchemaDoc    = loadSchemaDoc(RecordSchema)
)

// SchemaDocFor is the schema of a file of kind k: the agent schema, the
// workspace config's (.agent-ls.yaml) or the memory record's.
func SchemaDocFor(k FileKind) *SchemaDoc {
	switch k {
	case FileWorkspace:
		return workspaceSchemaDoc()
	case FileRecords:
		return recordSchemaDoc()
	}
	return agentSchemaDoc()
}

// DescribeAgent returns the agent schema's description of the node at ptr
// (e.g. "/roleTemplate/judgments/0/heuristics"): what it means and how it
// renders in the prompt. Array indexes and map keys are followed as the
// schema allows.
func DescribeAgent(ptr string) (string, bool) { return agentSchemaDoc().Describe(ptr) }

// AgentProperties lists the properties the agent schema allows on the object
// at ptr, sorted by name; none when ptr is not a fixed-shape object.
func AgentProperties(ptr string) []SchemaProperty { return agentSchemaDoc().Properties(ptr) }

// Describe returns the schema's description of the node at ptr.
func (sd *SchemaDoc) Describe(ptr string) (string, bool) {
	s, ok := sd.at(ptr)
	if !ok {
		return "", false
	}
	if d, ok := s["description"].(string); ok {
		return d, true
	}
	for _, r := range sd.expand(s) {
		if d, ok := r["description"].(string); ok {
			return d, true
		}
	}
	return "", false
}

// Properties lists the properties the schema allows on the object at ptr,
// sorted by name; none when ptr is not a fixed-shape object.
func (sd *SchemaDoc) Properties(ptr string) []SchemaProperty {
	s, ok := sd.at(ptr)
	if !ok {
		return nil
	}
	var out []SchemaProperty
	for _, r := range sd.expand(s) {
		props, _ := r["properties"].(map[string]any)
		req := map[string]bool{}
		if list, ok := r["required"].([]any); ok {
			for _, n := range list {
				if n, ok := n.(string); ok {
					req[n] = true
				}
			}
		}
		for name, p := range props {
			pm, _ := p.(map[string]any)
			desc, _ := pm["description"].(string)
			if desc == "" {
				for _, e := range sd.expand(pm) {
					if d, ok := e["description"].(string); ok {
						desc = d
						break
					}
				}
			}
			out = append(out, SchemaProperty{Name: name, Description: desc, Required: req[name]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Enum lists the string values the schema allows at ptr (its enum, or the
// enum of an array's items when ptr is an array), in the schema's order;
// none when the node is not an enumeration.
func (sd *SchemaDoc) Enum(ptr string) []string {
	s, ok := sd.at(ptr)
	if !ok {
		return nil
	}
	var out []string
	for _, r := range sd.expand(s) {
		list, _ := r["enum"].([]any)
		if len(list) == 0 {
			if it, ok := r["items"].(map[string]any); ok {
				list, _ = it["enum"].([]any)
			}
		}
		for _, e := range list {
			if v, ok := e.(string); ok {
				out = append(out, v)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// Type is the JSON type the schema gives the node at ptr (the first
// non-null one of a type list: "object", "array", "string", "integer",
// ...); "" when it names none.
func (sd *SchemaDoc) Type(ptr string) string {
	s, ok := sd.at(ptr)
	if !ok {
		return ""
	}
	for _, r := range sd.expand(s) {
		switch t := r["type"].(type) {
		case string:
			if t != "null" {
				return t
			}
		case []any:
			for _, e := range t {
				if e, ok := e.(string); ok && e != "null" {
					return e
				}
			}
		}
	}
	return ""
}

// at walks the schema along ptr.
func (sd *SchemaDoc) at(ptr string) (map[string]any, bool) {
	s := sd.root
	for _, tok := range SplitPointer(ptr) {
		next, ok := sd.child(s, tok)
		if !ok {
			return nil, false
		}
		s = next
	}
	return s, true
}

// expand returns s and the schemas it stands for: its $ref target and the
// "then" of a nullable object, each resolved in turn.
func (sd *SchemaDoc) expand(s map[string]any) []map[string]any {
	out := []map[string]any{s}
	for i := 0; i < len(out) && i < 8; i++ {
		cur := out[i]
		if ref, ok := cur["$ref"].(string); ok {
			if t, ok := sd.resolveRef(ref); ok {
				out = append(out, t)
			}
		}
		if then, ok := cur["then"].(map[string]any); ok {
			out = append(out, then)
		}
	}
	return out
}

func (sd *SchemaDoc) resolveRef(ref string) (map[string]any, bool) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return nil, false
	}
	defs, _ := sd.root["$defs"].(map[string]any)
	t, ok := defs[UnescapePointer(name)].(map[string]any)
	return t, ok
}

func (sd *SchemaDoc) child(s map[string]any, tok string) (map[string]any, bool) {
	for _, r := range sd.expand(s) {
		if props, ok := r["properties"].(map[string]any); ok {
			if p, ok := props[tok].(map[string]any); ok {
				return p, true
			}
		}
		if idx, err := strconv.Atoi(tok); err == nil && idx >= 0 {
			if pre, ok := r["prefixItems"].([]any); ok && idx < len(pre) {
				if p, ok := pre[idx].(map[string]any); ok {
					return p, true
				}
			}
			if it, ok := r["items"].(map[string]any); ok {
				return it, true
			}
		}
		if ap, ok := r["additionalProperties"].(map[string]any); ok {
			return ap, true
		}
	}
	return nil, false
}
