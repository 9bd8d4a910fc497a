package store

// AgentKey is the reserved scope key naming the agent a record belongs to.
const AgentKey = "agent"

// InView is the one visibility rule of agent-ls (ADR-0008 Decision 8): a
// record whose scope is recScope is in the view of agent within base when
// recScope holds every pair of base (base's own agent key aside) and its
// agent key is unset or agent. agent "" sees shared records only. Every
// surface reaches it through trust.View; store backends through
// AgentFilter.
func InView(recScope, base map[string]string, agent string) bool {
	for k, v := range base {
		if k == AgentKey {
			continue
		}
		if rv, ok := recScope[k]; !ok || rv != v {
			return false
		}
	}
	a, ok := recScope[AgentKey]
	return !ok || a == "" || a == agent
}

// AgentFilter splits InView for a backend's query: it drops the agent key
// from scope (so the store's pure subset match also returns records of other
// agents and shared ones) and returns the post-filter keeping records whose
// agent is unset or is me. The returned map is a copy; scope is not
// modified.
func AgentFilter(scope map[string]string, me string) (map[string]string, func(recScope map[string]string) bool) {
	filter := make(map[string]string, len(scope))
	for k, v := range scope {
		if k != AgentKey {
			filter[k] = v
		}
	}
	keep := func(recScope map[string]string) bool { return InView(recScope, nil, me) }
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
