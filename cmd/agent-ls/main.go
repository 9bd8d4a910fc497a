// Command agent-ls is the language server, command-line tool and MCP server
// for compositional memory of LLM agents. Run `agent-ls help` for commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agent-ls/agent-ls/engine"
)

// Exit codes, stable for scripts.
const (
	exitOK       = 0 // success, no findings
	exitFindings = 1 // findings (lint/validate) or a refused operation
	exitUsage    = 2 // usage, I/O or store failure
)

// env is what a command receives from the process: its streams, the
// environment, the working directory and a clock. Tests build their own.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	cwd    string
	now    func() time.Time
	// ctx is the command's context (run sets it): SIGTERM and SIGINT end
	// it, and with it any wait for the store's lock.
	ctx context.Context
	// open reaches the stores (nil: the real backends, backendOpener).
	open engine.Opener
}

// context is the command's context, Background before run set one.
func (e *env) context() context.Context {
	if e.ctx == nil {
		return context.Background()
	}
	return e.ctx
}

// command is one `agent-ls NAME` subcommand: one line of the table below.
// Its run parses its own flags with parseArgs and prints its help with
// printHelp; example is the one example line its help shows.
type command struct {
	name    string
	summary string
	example string
	run     func(ctx context.Context, e *env, args []string) int
}

// commands lists every subcommand in the order `help` shows them. Adding a
// command is one line here.
func commands() []command {
	return []command{
		{"init", "start a workspace: a commented .agent-ls.yaml, an agent file and .gitignore's store line", "agent-ls init my-workspace --agent support-bot", runInit},
		{"validate", "check agent files against the schema", "agent-ls validate support.agent.yaml", runValidate},
		{"lint", "lint agent files against the memory store: composition health as findings (text, json, sarif)", "agent-ls lint . --format sarif > lint.sarif", runLint},
		{"render", "print an agent's system prompt composed with its promoted memories", "agent-ls render support.agent.yaml --recall --query \"refund policy\" --summarize --format json", runRender},
		{"overlay", "print config′ (the agent with its memories applied) and the overlay report", "agent-ls overlay support.agent.yaml --report", runOverlay},
		{"diff", "diff the composed prompt with/without a record or between two times", "agent-ls diff support.agent.yaml --without 01J9Z8K3V4M5N6P7Q8R9S0T1U2", runDiff},
		{"memory", "read and change the memory store (save, list, show, search, ledger, ...)", "agent-ls memory save --scope agent=support-bot \"refunds over 500 EUR need a manager\"", runMemory},
		{"promote", "promote a candidate memory through its tier's gate", "agent-ls promote 01J9Z8K3V4M5N6P7Q8R9S0T1U2", runPromote},
		{"demote", "demote a promoted memory (agents open a proposal for gated tiers)", "agent-ls demote 01J9Z8K3V4M5N6P7Q8R9S0T1U2 --reason \"policy changed\"", runDemote},
		{"proposals", "list pending promotions/demotions with their composition diff", "agent-ls proposals support.agent.yaml", runProposals},
		{"approve", "approve a pending proposal (humans only)", "agent-ls approve 01J9Z8M0A1B2C3D4E5F6G7H8J9 --reason \"checked the diff\"", runApprove},
		{"reject", "reject a pending proposal (humans only)", "agent-ls reject 01J9Z8M0A1B2C3D4E5F6G7H8J9 --reason \"one customer's request\"", runReject},
		{"garden", "curate memory: duplicates, conflicts, staleness, evals; health report", "agent-ls garden support.agent.yaml", runGarden},
		{"learnings", "what the agent learned and unlearned since a time", "agent-ls learnings support.agent.yaml --since 7d", runLearnings},
		{"bisect", "which learning broke my agent? the first ledger entry whose composition regresses on the eval", "agent-ls bisect support.agent.yaml --good 1 --format json", runBisect},
		{"lens", "serve the evolution lens: a local web page to review what agents learn", "agent-ls lens --open", runLens},
		{"serve", "run the language server over stdio (LSP)", "agent-ls serve --log-level debug", runServe},
		{"token", "create, list and revoke the service tokens that bind a served surface's callers to an agent file (humans only)", "agent-ls token list", runToken},
		{"mcp", "serve the memory toolbox over the Model Context Protocol (stdio, or streamable HTTP with --http)", "agent-ls mcp support.agent.yaml --conversation conv-42\n  agent-ls mcp --http 127.0.0.1:0", runMCP},
		{"version", "print the version", "agent-ls version", runVersion},
		{"help", "show help for a command", "agent-ls help memory save", runHelp},
	}
}

func main() {
	noAllocProfile(os.Args[1:])
	if batchGC(os.Args[1:], os.Getenv) {
		startBatchGC(batchMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent-ls: working directory: %v\n", err)
		os.Exit(exitUsage)
	}
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, cwd: cwd, now: time.Now}
	os.Exit(run(ctx, e, os.Args[1:]))
}

// run dispatches args to a subcommand and returns the exit code.
func run(ctx context.Context, e *env, args []string) int {
	e.ctx = ctx
	// What a command writes for a person is terminal-safe (termSafe): its
	// errors always, its output when it goes to a terminal. The servers'
	// streams carry protocols and structured logs, left as they are.
	if !longRunning(args) {
		e.stderr = &termSafe{w: e.stderr}
		if terminal(e.stdout) {
			e.stdout = &termSafe{w: e.stdout}
		}
	}
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		printUsage(e.stdout)
		return exitOK
	case "-v", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, e, args[1:])
		}
	}
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(e.stderr, "agent-ls: unknown command %q%s (run 'agent-ls help')\n", name, didYouMean(name, names))
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "agent-ls: compositional memory for LLM agents — language server, CLI and MCP server")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: agent-ls COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	cs := commands()
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Example:")
	fmt.Fprintln(w, "  agent-ls render support.agent.yaml --annotate")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'agent-ls help COMMAND...' (or 'agent-ls COMMAND... --help') for a command's flags.")
	fmt.Fprintln(w, "Flags go before or after arguments; '--' ends them.")
	fmt.Fprintln(w, "Exit codes: 0 success, 1 findings or refused, 2 usage, I/O or store error.")
}

// runHelp is `agent-ls help [COMMAND [SUBCOMMAND]]`: the same text as
// `agent-ls COMMAND [SUBCOMMAND] --help`.
func runHelp(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stdout)
		return exitOK
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || (len(args) == 1 && args[0] == "help") {
		printHelp(e.stdout, help{path: "help", usage: "[COMMAND [SUBCOMMAND]]",
			body: "Shows a command's help: 'agent-ls help memory save' prints what 'agent-ls memory save --help' prints.\nWithout a command, lists the commands."}, nil)
		return exitOK
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return usageFail(e.stderr, "help", fmt.Errorf("unexpected flag %s (give command names only)", a))
		}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, append(append([]string{}, args[1:]...), "--help"))
		}
	}
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(e.stderr, "agent-ls help: unknown command %q%s (run 'agent-ls help')\n", args[0], didYouMean(args[0], names))
	return exitUsage
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
