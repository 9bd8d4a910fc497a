// Package schema holds agent-ls's data model: authored agent files
// (AgentConfig), memory records and their typed targets, the tier of each
// target, the fixed-width timestamp format, and parsing of agent files with
// source positions and validation against the embedded JSON Schemas.
//
// # Documents and positions
//
// ParseDocument reads an agent file (YAML, or JSON for *.json) into a
// Document that maps every JSON Pointer to the Range of its key and of its
// value. A Position has a 0-based Line, a Character counted in UTF-16 code
// units (as LSP counts them) and a byte Offset; a byte order mark is not part
// of line 0 (unless BOMIsText: an editor's text that keeps it) and CR, LF
// and CRLF all end a line, as in LSP and editors: U+0085, U+2028 and U+2029,
// which YAML also counts, do not. A ParseError prints 1-based
// "file:line:col" with col = Character+1.
//
// Hostile input is refused with a clear error: files over MaxDocumentSize,
// nesting deeper than MaxDepth, YAML aliases expanding past MaxAliasNodes
// nodes or MaxDocumentSize bytes, multiple YAML documents, duplicate keys and
// invalid UTF-8.
//
// # Validation
//
// ValidateAgent, ValidateRecord and ParseWorkspaceConfig report Problems at
// precise ranges: a missing required property on its parent's key, an
// unknown property on its own key, a wrong value on the value (or on its key
// when the value is a multi-line collection), never the whole document.
//
// The package is pure: it does no I/O beyond what callers hand it as bytes.
package schema
