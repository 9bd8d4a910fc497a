// Package schema holds agent-ls's data model: authored agent files
// (AgentConfig), memory records and their typed targets, the tier of each
// target, the fixed-width timestamp format, and parsing of agent files with
// source positions and validation against the embedded JSON Schemas.
//
// The package is pure: it does no I/O beyond what callers hand it as bytes.
package schema
