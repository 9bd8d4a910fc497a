package compose

import (
	"fmt"

	"github.com/agent-ls/agent-ls/schema"
)

// LoadAgent parses, validates and decodes an agent file (schema.LoadAgent).
// A malformed file or one with schema errors is an error naming the first
// problem as file:line:col; warnings do not stop composition.
func LoadAgent(filename string, data []byte) (*schema.AgentConfig, error) {
	return loadAgentEarly(filename, data, nil)
}

// loadAgentEarly is LoadAgent calling parsed as schema.LoadAgentEarly does.
func loadAgentEarly(filename string, data []byte, parsed func(name string)) (*schema.AgentConfig, error) {
	_, cfg, ps, err := schema.LoadAgentEarly(filename, data, parsed)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		var errs []schema.Problem
		for _, p := range ps {
			if p.Severity == schema.SeverityError {
				errs = append(errs, p)
			}
		}
		if len(errs) == 0 {
			return nil, fmt.Errorf("%s: invalid agent file", filename)
		}
		p := errs[0]
		msg := fmt.Sprintf("%s:%d:%d: %s", filename, p.Range.Start.Line+1, p.Range.Start.Character+1, p.Message)
		if n := len(errs) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more; run agent-ls validate)", n)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return cfg, nil
}
