package overlay

import "github.com/agent-ls/agent-ls/schema"

// cloneConfig deep-copies an AgentConfig so the composed config shares no
// mutable memory with the authored one.
func cloneConfig(c *schema.AgentConfig) *schema.AgentConfig {
	out := *c
	rt := &out.RoleTemplate
	rt.Persona.Priorities = cloneStrings(c.RoleTemplate.Persona.Priorities)
	rt.Persona.Principles = cloneStrings(c.RoleTemplate.Persona.Principles)
	if c.RoleTemplate.Judgments != nil {
		rt.Judgments = make([]schema.Judgment, len(c.RoleTemplate.Judgments))
		for i, j := range c.RoleTemplate.Judgments {
			j.Heuristics = cloneStrings(j.Heuristics)
			j.Constraints = cloneStrings(j.Constraints)
			j.EscalationTriggers = cloneStrings(j.EscalationTriggers)
			j.Examples = cloneSlice(j.Examples)
			rt.Judgments[i] = j
		}
	}
	if c.RoleTemplate.Responsibilities != nil {
		rt.Responsibilities = make([]schema.Responsibility, len(c.RoleTemplate.Responsibilities))
		for i, r := range c.RoleTemplate.Responsibilities {
			r.Examples = cloneStrings(r.Examples)
			rt.Responsibilities[i] = r
		}
	}
	if t := c.RoleTemplate.Tone; t != nil {
		tc := *t
		tc.Examples = cloneSlice(t.Examples)
		tc.AntiPatterns = cloneStrings(t.AntiPatterns)
		rt.Tone = &tc
	}
	if m := c.RoleTemplate.Methodology; m != nil {
		mc := *m
		mc.Checklist = cloneStrings(m.Checklist)
		rt.Methodology = &mc
	}
	if r := c.RoleTemplate.Recovery; r != nil {
		rc := *r
		rt.Recovery = &rc
	}
	if a := c.RoleTemplate.Archetype; a != nil {
		ac := *a
		rt.Archetype = &ac
	}
	out.Mission.SuccessCriteria = cloneStrings(c.Mission.SuccessCriteria)
	out.Mission.Constraints = cloneStrings(c.Mission.Constraints)
	out.Mission.OutputSchema = cloneValue(c.Mission.OutputSchema)
	out.Background = schema.Background{
		TeamContext:    cloneEntries(c.Background.TeamContext),
		ProjectContext: cloneEntries(c.Background.ProjectContext),
		Conventions:    cloneEntries(c.Background.Conventions),
		CurrentState:   cloneEntries(c.Background.CurrentState),
	}
	out.Awareness.Domains = cloneSlice(c.Awareness.Domains)
	out.Awareness.ExplorationCapabilities = cloneStrings(c.Awareness.ExplorationCapabilities)
	if c.Model != nil {
		m := *c.Model
		out.Model = &m
	}
	out.Capabilities = cloneStrings(c.Capabilities)
	if c.Manuals != nil {
		out.Manuals = make(map[string]schema.Manual, len(c.Manuals))
		for k, m := range c.Manuals {
			out.Manuals[k] = schema.Manual{Workflows: cloneStrings(m.Workflows)}
		}
	}
	return &out
}

func cloneStrings(s []string) []string { return cloneSlice(s) }

// cloneSlice copies a slice of values, keeping nil as nil.
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func cloneEntries(e schema.Entries) schema.Entries {
	if e == nil {
		return nil
	}
	out := make(schema.Entries, len(e))
	for i, en := range e {
		out[i] = schema.Entry{Key: en.Key, Value: cloneValue(en.Value)}
	}
	return out
}

// cloneValue deep-copies a decoded JSON value.
func cloneValue(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	}
	return v
}
