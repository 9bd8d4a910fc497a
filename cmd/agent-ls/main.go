// Command agent-ls is the language server, command-line tool and MCP server
// for compositional memory of LLM agents. Run `agent-ls help` for commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"
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
}

// command is one `agent-ls NAME` subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

// commands lists every subcommand in the order `help` shows them.
func commands() []command {
	return []command{
		{"validate", "check agent files against the schema", runValidate},
		{"lint", "lint agent files against the memory store: composition health as findings (text, json, sarif)", runLint},
		{"render", "print an agent's system prompt composed with its promoted memories", runRender},
		{"overlay", "print config′ (the agent with its memories applied) and the overlay report", runOverlay},
		{"diff", "diff the composed prompt with/without a record or between two times", runDiff},
		{"memory", "read and change the memory store (save, list, show, search, ledger, ...)", runMemory},
		{"promote", "promote a candidate memory through its tier's gate", runPromote},
		{"demote", "demote a promoted memory (agents open a proposal for gated tiers)", runDemote},
		{"proposals", "list pending promotions/demotions with their composition diff", runProposals},
		{"approve", "approve a pending proposal (humans only)", runApprove},
		{"reject", "reject a pending proposal (humans only)", runReject},
		{"garden", "curate memory: duplicates, conflicts, staleness, evals; health report", runGarden},
		{"learnings", "what the agent learned and unlearned since a time", runLearnings},
		{"lens", "serve the evolution lens: a local web page to review what agents learn", runLens},
		{"serve", "run the language server over stdio (LSP)", runServe},
		{"mcp", "serve an agent's memory toolbox over the Model Context Protocol (stdio)", runMCP},
		{"version", "print the version", runVersion},
		{"help", "show help for a command", runHelp},
	}
}

func main() {
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
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help":
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
	fmt.Fprintf(e.stderr, "agent-ls: unknown command %q (run 'agent-ls help')\n", name)
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
	fmt.Fprintln(w, "Run 'agent-ls COMMAND --help' for a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 success, 1 findings or refused, 2 usage, I/O or store error.")
}

func runHelp(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "help" {
			return c.run(ctx, e, []string{"--help"})
		}
	}
	fmt.Fprintf(e.stderr, "agent-ls help: unknown command %q\n", args[0])
	return exitUsage
}

// version is set by the linker (-X main.version=...); otherwise it comes
// from the module build info.
var version = ""

func runVersion(_ context.Context, e *env, args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(e.stdout, "Usage: agent-ls version\n\nPrints the agent-ls version and Go version.")
		return exitOK
	}
	v := version
	goVersion := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v == "" {
			v = bi.Main.Version
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	fmt.Fprintf(e.stdout, "agent-ls %s %s\n", v, strings.TrimSpace(goVersion))
	return exitOK
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
