package store

// AgentKey is the reserved scope key naming the agent a record belongs to.
const AgentKey = "agent"

// AgentFilter applies ADR-0008 Decision 8: it drops the agent key from scope
// (so the store's pure subset match also returns records of other agents and
// shared ones) and returns the post-filter keeping records whose agent is
// unset or is me. The returned map is a copy; scope is not modified.
func AgentFilter(scope map[string]string, me string) (map[string]string, func(recScope map[string]string) bool) {
	filter := make(map[string]string, len(scope))
	for k, v := range scope {
		if k != AgentKey {
			filter[k] = v
		}
	}
	keep := func(recScope map[string]string) bool {
		a, ok := recScope[AgentKey]
		return !ok || a == "" || a == me
	}
	return filter, keep
}

// MatchScope reports whether recScope holds every pair of filter.
func MatchScope(recScope, filter map[string]string) bool {
	for k, v := range filter {
		if rv, ok := recScope[k]; !ok || rv != v {
			return false
		}
	}
	return true
}
