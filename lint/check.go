package lint

import "github.com/agent-ls/agent-ls/schema"

// Check runs the named rules over in whatever lint.rules says (it is the
// rule engine other passes build on: gardening turns these findings into
// proposals) and returns their findings, each with its rule and default
// severity, in Sort order. in.Doc may be nil: findings then have no file
// range. in.Config nil is an empty agent. It is pure.
func Check(in Input, ids ...string) []Finding {
	if in.Config == nil {
		in.Config = &schema.AgentConfig{}
	}
	c := newRunCtx(in)
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []Finding
	for _, r := range rules() {
		if r.run == nil || !want[r.info.ID] || c.stopped() {
			continue
		}
		for _, f := range r.run(c) {
			f.Rule, f.Severity = r.info.ID, r.info.DefaultSeverity
			out = append(out, f)
		}
	}
	Sort(out)
	return out
}

// RecordIDs returns the ids of the records a finding involves (its related
// records), in order.
func (f Finding) RecordIDs() []string {
	var ids []string
	for _, r := range f.Related {
		if r.RecordID != "" {
			ids = append(ids, r.RecordID)
		}
	}
	return ids
}
