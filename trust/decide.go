package trust

import (
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Op is a state change an actor asks for on a record.
type Op string

// The operations Decide rules on.
const (
	OpInvalidate  Op = "invalidate"
	OpSupersede   Op = "supersede"
	OpDemote      Op = "demote"
	OpRetarget    Op = "retarget"
	OpPromote     Op = "promote"
	OpCorroborate Op = "corroborate"
	OpApprove     Op = "approve"
	OpReject      Op = "reject"
	OpImport      Op = "import"
)

// Decision is what may happen to a request.
type Decision int

// The decisions, from most to least permissive.
const (
	// Direct: the change may take effect, subject to the tier gates
	// (evolve).
	Direct Decision = iota + 1
	// Propose: the change becomes a pending human proposal; nothing changes
	// until a human approves it.
	Propose
	// Evidence: a corroboration is recorded and counts towards recurrence,
	// but it cannot promote the record by itself.
	Evidence
	// Refuse: the actor may never do this (exit 1 on the CLI).
	Refuse
)

// String names the decision.
func (d Decision) String() string {
	switch d {
	case Direct:
		return "direct"
	case Propose:
		return "propose"
	case Evidence:
		return "evidence"
	case Refuse:
		return "refuse"
	}
	return "unknown"
}

// Shared reports whether a record is shared by every agent of its scope
// (no agent key).
func Shared(rec *schema.MemoryRecord) bool { return rec.Scope[store.AgentKey] == "" }

// Decide is the one place that says what actor a may do with op to rec
// (nil for operations on no record, such as import). Humans may do
// everything the tier gates allow; only humans approve, reject and import.
// An agent changes its own records directly (gates still apply); a change
// to a shared record becomes a proposal, and its corroboration of a shared
// record is evidence only. A record of another agent is refused (surfaces
// answer it as missing, View.Get). System actors (curation) never decide
// proposals.
func Decide(a store.Actor, op Op, rec *schema.MemoryRecord) Decision {
	switch op {
	case OpApprove, OpReject, OpImport:
		if a.Kind == store.ActorHuman {
			return Direct
		}
		return Refuse
	}
	if a.Kind != store.ActorAgent || rec == nil {
		return Direct
	}
	switch owner := rec.Scope[store.AgentKey]; {
	case owner == a.Name:
		return Direct
	case owner != "":
		return Refuse
	}
	if op == OpCorroborate {
		return Evidence
	}
	return Propose
}
