// Package overlay compiles promoted memory records into an agent's
// composition (ADR-0008 Decisions 2, 3 and 6) and renders the resulting
// system prompt with line-level attribution.
//
// Apply folds records into a copy of an authored AgentConfig under the merge
// rules, collision rules and per-primitive budgets, and returns a Report and
// an Attribution; Render turns the composed config into a Prompt whose
// fragments say which lines are authored and which are learned; Recall builds
// the budgeted recall block for records that stay outside the composition.
//
// The package is pure: no I/O, no clock, no randomness. Every output is a
// function of the inputs' values only, so any permutation of the same records
// gives byte-identical results.
package overlay
