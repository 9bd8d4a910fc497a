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

var agentSchemaDoc = sync.OnceValue(func() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(AgentSchema, &m); err != nil {
		return map[string]any{}
	}
	return m
})

// DescribeAgent returns the agent schema's description of the node at ptr
// (e.g. "/roleTemplate/judgments/0/heuristics"): what it means and how it
// renders in the prompt. Array indexes and map keys are followed as the
// schema allows.
func DescribeAgent(ptr string) (string, bool) {
	s, ok := agentSchemaAt(ptr)
	if !ok {
		return "", false
	}
	if d, ok := s["description"].(string); ok {
		return d, true
	}
	for _, r := range expand(s) {
		if d, ok := r["description"].(string); ok {
			return d, true
		}
	}
	return "", false
}

// AgentProperties lists the properties the agent schema allows on the object
// at ptr, sorted by name; none when ptr is not a fixed-shape object.
func AgentProperties(ptr string) []SchemaProperty {
	s, ok := agentSchemaAt(ptr)
	if !ok {
		return nil
	}
	var out []SchemaProperty
	for _, r := range expand(s) {
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
				for _, e := range expand(pm) {
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

// agentSchemaAt walks the agent schema along ptr.
func agentSchemaAt(ptr string) (map[string]any, bool) {
	root := agentSchemaDoc()
	s := root
	for _, tok := range SplitPointer(ptr) {
		next, ok := childSchema(s, tok)
		if !ok {
			return nil, false
		}
		s = next
	}
	return s, true
}

// expand returns s and the schemas it stands for: its $ref target and the
// "then" of a nullable object, each resolved in turn.
func expand(s map[string]any) []map[string]any {
	out := []map[string]any{s}
	for i := 0; i < len(out) && i < 8; i++ {
		cur := out[i]
		if ref, ok := cur["$ref"].(string); ok {
			if t, ok := resolveRef(ref); ok {
				out = append(out, t)
			}
		}
		if then, ok := cur["then"].(map[string]any); ok {
			out = append(out, then)
		}
	}
	return out
}

func resolveRef(ref string) (map[string]any, bool) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return nil, false
	}
	defs, _ := agentSchemaDoc()["$defs"].(map[string]any)
	t, ok := defs[UnescapePointer(name)].(map[string]any)
	return t, ok
}

func childSchema(s map[string]any, tok string) (map[string]any, bool) {
	for _, r := range expand(s) {
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
