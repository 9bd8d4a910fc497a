package store

import (
	"context"
	"fmt"
	"sort"
)

// AgentLister is a Reader that lists the agents of its records itself,
// without decoding every record (Agents uses it when r has it).
type AgentLister interface {
	// Agents is Agents over this Reader.
	Agents(ctx context.Context, base map[string]string) ([]string, error)
}

// Agents lists the agent keys of r's records that a Search of base scope
// with IncludeInvalidated returns (so not the expired ones), each once
// and sorted, with "" for the records that carry no agent key: the agents
// a report covers. A backend answers it itself when it is an AgentLister;
// otherwise it is that Search.
func Agents(ctx context.Context, r Reader, base map[string]string) ([]string, error) {
	var names []string
	if l, ok := r.(AgentLister); ok {
		var err error
		if names, err = l.Agents(ctx, base); err != nil {
			return nil, err
		}
	} else {
		res, err := r.Search(ctx, Query{Scope: base, Limit: Limit(Unlimited), IncludeInvalidated: true})
		if err != nil {
			return nil, fmt.Errorf("list agents: %w", err)
		}
		seen := map[string]bool{}
		for _, rec := range res.Records {
			if n := rec.Scope[AgentKey]; !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	if names == nil {
		names = []string{}
	}
	sort.Strings(names)
	return names, nil
}

// Agents implements AgentLister over the wrapped Reader.
func (r readOnly) Agents(ctx context.Context, base map[string]string) ([]string, error) {
	return Agents(ctx, r.Reader, base)
}
