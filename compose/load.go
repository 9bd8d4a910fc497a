package compose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agent-ls/agent-ls/schema"
)

// maxAliasNodes bounds YAML alias expansion while decoding an agent file.
const maxAliasNodes = 100_000

// DecodeAgent decodes an agent file (JSON when the name ends in .json, YAML
// otherwise) into an AgentConfig, keeping background key order. It checks
// shape only; schema validation is the validator's job.
func DecodeAgent(filename string, data []byte) (*schema.AgentConfig, error) {
	js := data
	if !strings.EqualFold(filepath.Ext(filename), ".json") {
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", filename, err)
		}
		var buf bytes.Buffer
		budget := maxAliasNodes
		if len(doc.Content) == 0 {
			return nil, fmt.Errorf("%s: empty document", filename)
		}
		if err := yamlToJSON(&buf, doc.Content[0], &budget, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", filename, err)
		}
		js = buf.Bytes()
	}
	var cfg schema.AgentConfig
	if err := json.Unmarshal(js, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	if cfg.RoleTemplate.Name == "" {
		return nil, fmt.Errorf("%s: roleTemplate.name is required", filename)
	}
	return &cfg, nil
}

// yamlToJSON writes a YAML node as JSON, object keys in document order.
func yamlToJSON(buf *bytes.Buffer, n *yaml.Node, budget *int, depth int) error {
	if *budget--; *budget < 0 {
		return fmt.Errorf("document contains excessive aliasing")
	}
	if depth > 512 {
		return fmt.Errorf("line %d: nesting too deep", n.Line)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yamlToJSON(buf, n.Alias, budget, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return yamlToJSON(buf, n.Content[0], budget, depth+1)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			buf.Write(k)
			buf.WriteByte(':')
			if err := yamlToJSON(buf, n.Content[i+1], budget, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := yamlToJSON(buf, c, budget, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
	}
	return nil
}
