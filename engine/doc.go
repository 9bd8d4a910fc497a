// Package engine is the one place every surface of agent-ls (the CLI, the
// language server, the MCP server and the web lens) goes through: it owns
// how a session resolves its workspace, opens its store (a file path or a
// postgres:// URL, through one Opener), who acts and what that actor sees
// (the view), the gates (package evolve), composition (package compose) and
// their typed results.
//
// Surfaces decode their protocol, call the engine and encode its result;
// they import none of evolve, compose, overlay or trust, and (but for
// cmd/agent-ls, which wires the real Opener) no store backend. A rule that a
// surface needs — the confinement of an agent actor, the evaluator a
// workspace configures, the damage policy before a write — is written here
// once. test/repo's TestSurfaceImports fails when a surface imports one of
// the engine's parts.
//
// The result types of the engine's verbs are declared where the verbs are
// implemented (evolve, compose, overlay, trust) and named here (types.go),
// so a surface names engine.Outcome, engine.SaveResult, engine.View, and
// never the package behind them.
package engine
