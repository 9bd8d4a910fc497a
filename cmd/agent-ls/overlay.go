package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
)

// runOverlay prints config′ (the authored config with the overlay applied)
// and the overlay report.
func runOverlay(ctx context.Context, e *env, args []string) int {
	c := newCompCmd(e, "overlay", "AGENT_FILE [--scope k=v,...] [--at T] [--format yaml|json] [flags]",
		"Prints config′, the agent's config with its promoted memories applied, and the overlay\n"+
			"report: per record applied (where), dropped (why), spilled or shadowed; conflicts;\n"+
			"characters per primitive against the budgets and the ceiling. The agent file is not changed.",
		[]string{"yaml", "json"})
	c.fs.StringVar(&c.at, "at", "", "compose the agent as it was at `time` T (RFC 3339), from the ledger")
	reportOnly := c.fs.Bool("report", false, "print the overlay report alone, without config′")
	file, code, ok := c.parse(args)
	if !ok {
		return code
	}
	k, err := c.open(file, false)
	if err != nil {
		return c.fail(err)
	}
	defer k.st.Close()
	var res *engine.ComposeResult
	err = k.consistent(ctx, false, func() error {
		var err error
		res, err = k.instantiate(ctx, e, c.at, "--at", false)
		return err
	})
	if err != nil {
		return c.fail(err)
	}
	c.noteStore(k)
	out := struct {
		Agent  string              `json:"agent"`
		At     string              `json:"at,omitempty"`
		Config *schema.AgentConfig `json:"config,omitempty"`
		Report engine.Report       `json:"report"`
	}{res.Agent, res.At, res.Config, res.Report}
	if *reportOnly {
		out.Config = nil
	}
	if c.format == "json" {
		return writeJSONTo(e, c.name, out)
	}
	y, err := jsonToYAML(out)
	if err != nil {
		c.errorf("encode yaml: %v", err)
		return exitUsage
	}
	fmt.Fprint(e.stdout, y)
	return exitOK
}

// jsonToYAML encodes v as JSON, then re-encodes that document as YAML, so
// YAML output has the JSON field names and key order.
func jsonToYAML(v any) (string, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(js, &n); err != nil {
		return "", err
	}
	unflow(&n)
	var buf strings.Builder
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// unflow turns JSON's flow style into YAML's block style and plain scalars.
func unflow(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 {
		n.Style &^= yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		unflow(c)
	}
}
