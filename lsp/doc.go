// Package lsp is agent-ls's language server (`agent-ls serve`): LSP 3.17 over
// a stream on go.lsp.dev/protocol v0.12.0 and jsonrpc2 v0.10.0, with the
// library's defects routed around (see /docs/LSP-PROTOCOL.md for the custom
// methods and commands).
//
// Serve wires the pieces, one file per feature:
//
//	stream.go       Content-Length framing that answers malformed bodies and keeps reading
//	handler.go      $/cancelRequest by numeric or string id; ordered per-message goroutines
//	                with panic recovery and an early queue release for slow work
//	server.go       lifecycle, routing in front of protocol.ServerHandler, client calls
//	config.go       initializationOptions over .agent-ls.yaml, per agent file
//	documents.go    open documents, incremental sync (textsync.go applies ranged changes
//	                in UTF-16 positions, refusing any that does not apply)
//	diagnostics.go  parse + schema pass, then the Linter seam, published per version
//	stores.go       one store operation at a time, agent-ls/status, one warning
//	watch.go        fsnotify on directories: config reloads, store changes re-run and refresh
//	hints.go        inlay hints for memory-derived, spilled, shadowed and candidate lines
//	                (10 a line, then a summary); tooltips by inlayHint/resolve when the
//	                client resolves them, inline otherwise
//	hover.go        provenance, composed text and the schema's key descriptions;
//	                codeactions.go, commands.go, requests.go
//	symbols.go      the document outline (textDocument/documentSymbol)
//	completion.go   schema keys, enum values, judgment domains and snippets,
//	                found from the typed line so unparsable YAML completes
//	quickfix.go     quick fixes: nearest key, missing required property, a
//	                judgment for a memory's missing domain
//	codelens.go     per-section counts of learned, candidate and pending lines
//	budget.go       one bound on the records the caches hold together, per agent
//	turns.go        one lint pass, one composition and one candidates decode at a
//	                time; a lint pass and a composition of a big agent share a turn
//
// Dependencies (store opener, clock, logger, linter) come in through Options;
// the server never holds the store open between operations.
package lsp
