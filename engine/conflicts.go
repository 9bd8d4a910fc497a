package engine

import "github.com/agent-ls/agent-ls/lint"

// The one conflict (lint.Conflict, named engine.Conflict in types.go): its
// kinds and its sides. Every surface lists conflicts from Agent.Conflicts
// (and Verbs.Overview, which calls it): lint's rules, the language
// server's diagnostics, lint --report, garden and the lens all derive
// from lint.Conflicts over the same facts.
type (
	// ConflictKind is a Conflict's kind.
	ConflictKind = lint.ConflictKind
	// ConflictSide is one side of a Conflict with its provenance.
	ConflictSide = lint.ConflictSide
)

// The conflict kinds.
const (
	ConflictContradiction = lint.ConflictContradiction
	ConflictKeyCollision  = lint.ConflictKeyCollision
	ConflictAuthoredWins  = lint.ConflictAuthoredWins
)
