package lint

import (
	"fmt"
	"sort"

	"github.com/agent-ls/agent-ls/schema"
)

// RuleOrphanRecords flags stored records whose agent key names no agent
// file of the workspace (a misspelt --scope agent=..., or a renamed agent):
// they reach no composition.
const RuleOrphanRecords = schema.RuleOrphanRecords

// Orphans returns one finding per agent key of the store's records (counts:
// agent name to record count) that none of the workspace's agents (names,
// their roleTemplate.name) has, naming the nearest agent when one is near,
// with the rule's severity under settings (none when it is off). The
// findings carry no range: the caller places them on the workspace config.
func Orphans(counts map[string]int, names []string, settings schema.WorkspaceConfig) []Finding {
	sev := Severity(settings, RuleOrphanRecords)
	if sev == SeverityOff {
		return nil
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	agents := make([]string, 0, len(counts))
	for a := range counts {
		if a != "" && !known[a] {
			agents = append(agents, a)
		}
	}
	sort.Strings(agents)
	var out []Finding
	for _, a := range agents {
		msg := fmt.Sprintf("%s of agent %q: no agent file in the workspace names that agent, so no composition shows them", schema.Count(counts[a], "record"), a)
		if best, ok := schema.NearestName(a, names); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		out = append(out, Finding{Rule: RuleOrphanRecords, Severity: sev, Message: msg})
	}
	return out
}
