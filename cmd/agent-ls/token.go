package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// tokenSub is one `agent-ls token NAME` subcommand.
type tokenSub struct {
	name, args, summary, example string
	run                          func(ctx context.Context, c *tokenCmd, args []string) int
}

// tokenSubs is the `agent-ls token` table, in the order help lists it.
func tokenSubs() []tokenSub {
	return []tokenSub{
		{"create", "--agent FILE [--scope k=v,...] [--expires DUR] [--name LABEL] [flags]",
			"create a service token for an agent file; the token is printed once, alone on stdout's first line",
			"agent-ls token create --agent support.agent.yaml --expires 90d --name support-runtime", tokenCreate},
		{"list", "[--format text|json] [flags]", "list the service tokens (never a secret)",
			"agent-ls token list --format json", tokenList},
		{"revoke", "ID|TOKEN [flags]", "revoke a service token by its id or by the token itself",
			`agent-ls token revoke "$(agent-ls token create --agent support.agent.yaml --name laptop)"`, tokenRevoke},
	}
}

// tokenCmd is what every token subcommand shares.
type tokenCmd struct {
	e     *env
	name  string // "token SUB", for messages
	sub   tokenSub
	store storeFlags
	actor string
	usage func()
}

func (c *tokenCmd) errorf(format string, args ...any) {
	fmt.Fprintf(c.e.stderr, "agent-ls %s: %s\n", c.name, fmt.Sprintf(format, args...))
}

// fail reports err on one line and returns its exit code (storeExitCode:
// forbidden, not found and conflict are refusals, 1; the rest 2).
func (c *tokenCmd) fail(err error) int {
	c.errorf("%v", err)
	return storeExitCode(err)
}

// flags returns the subcommand's FlagSet with --store, --lock-timeout and
// --actor.
func (c *tokenCmd) flags() *flag.FlagSet {
	sub := c.sub
	fs := flag.NewFlagSet("agent-ls token "+sub.name, flag.ContinueOnError)
	c.store.register(fs, c.store)
	fs.StringVar(&c.actor, "actor", "", "who acts, `kind:name` (default: the workspace actor or human:$USER); only a human creates or revokes tokens")
	c.usage = func() {
		printHelp(c.e.stdout, help{path: "token " + sub.name, usage: sub.args, body: tokenHelpBody(sub.name)}, fs)
	}
	return fs
}

func tokenHelpBody(sub string) string {
	switch sub {
	case "create":
		return `Creates a service token for an agent file of the workspace: a caller presenting it (agent-ls mcp --http)
acts as that agent, with the workspace scope plus --scope. The token (als_...) is printed alone on stdout's
first line and never again; the store keeps only its SHA-256, the agent, the file, the scope, who created it and
when it expires, so every server on a shared store accepts it. A note with its id goes to stderr.
Only a human actor creates tokens. The creation is ledgered (token-create).`
	case "list":
		return `Lists the service tokens, oldest first: id, name, agent, scope, creator and time, expiry and revocation.
Never a secret or its hash. An agent actor sees only its own agent's tokens.`
	case "revoke":
		return `Revokes a service token, named by its id (tok_..., from token list) or by the token itself (als_...).
Every server on the store refuses it from its next request. Revoking a revoked token changes nothing.
Only a human actor revokes tokens. The revocation is ledgered (token-revoke).`
	}
	return ""
}

// parse parses args; ok false means return code.
func (c *tokenCmd) parse(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		c.usage()
		return nil, exitOK, false
	}
	if err != nil {
		return nil, usageFail(c.e.stderr, c.name, err), false
	}
	return pos, 0, true
}

// session resolves the workspace, the store location and the actor
// (engine.ResolveActor) without opening the store.
func (c *tokenCmd) session() (*engine.Session, int, bool) {
	loc, err := locateStore(c.e, c.store)
	if err != nil {
		c.errorf("%v", err)
		return nil, exitUsage, false
	}
	a, src, err := engine.ResolveActor(c.actor, loc.Workspace, c.e.getenv)
	if err != nil {
		c.errorf("%v", err)
		return nil, exitUsage, false
	}
	return &engine.Session{Workspace: loc.Workspace, Location: loc.Path, Actor: a, ActorSource: src, View: viewOf(a, loc),
		Opener: c.e.opener(), StoreOptions: store.Options{Now: c.e.now, LockTimeout: c.store.lockTimeout}}, 0, true
}

// runToken dispatches `agent-ls token SUB ...`.
func runToken(ctx context.Context, e *env, args []string) int {
	c := &tokenCmd{e: e, name: "token", store: storeFlags{lockTimeout: bolt.DefaultLockTimeout}}
	if len(args) == 0 {
		tokenUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help":
		tokenUsage(e.stdout)
		return exitOK
	case "help":
		if len(args) == 1 {
			tokenUsage(e.stdout)
			return exitOK
		}
		args = []string{args[1], "--help"}
	}
	for _, sub := range tokenSubs() {
		if sub.name == args[0] {
			c.name, c.sub = "token "+sub.name, sub
			return sub.run(ctx, c, args[1:])
		}
	}
	names := make([]string, 0, len(tokenSubs()))
	for _, sub := range tokenSubs() {
		names = append(names, sub.name)
	}
	if strings.HasPrefix(args[0], "-") {
		name, _, _ := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		return usageFail(e.stderr, "token", fmt.Errorf("unknown flag --%s", name))
	}
	fmt.Fprintf(e.stderr, "agent-ls token: unknown subcommand %q%s (run 'agent-ls token --help')\n", args[0], didYouMean(args[0], names))
	return exitUsage
}

func tokenUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: agent-ls token SUBCOMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Creates, lists and revokes the service tokens that bind a caller of a served surface (agent-ls mcp --http)")
	fmt.Fprintln(w, "to one agent file of the workspace. The store keeps a token's hash, never the token; only a human actor")
	fmt.Fprintln(w, "creates or revokes tokens, and both are ledgered.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Subcommands:")
	for _, s := range tokenSubs() {
		fmt.Fprintf(w, "  %-8s %s\n", s.name, s.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Example:")
	fmt.Fprintf(w, "  %s\n", exampleOf("token"))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'agent-ls token SUBCOMMAND --help' (or 'agent-ls help token SUBCOMMAND') for its flags.")
	fmt.Fprintln(w, "Exit codes: 0 success; 1 refused (not a human actor, no such token); 2 usage, bad agent file, locked or")
	fmt.Fprintln(w, "corrupt store, I/O.")
}

func tokenCreate(ctx context.Context, c *tokenCmd, args []string) int {
	fs := c.flags()
	var agentFile, scope, expires, name string
	fs.StringVar(&agentFile, "agent", "", "the agent `file` the token acts as (inside the workspace)")
	fs.StringVar(&scope, "scope", "", "extra scope pairs of the token's sessions: "+scopeUsage)
	fs.StringVar(&expires, "expires", "", "how long the token lives, a `duration` (90d, 2w, 36h; default: it never expires)")
	fs.StringVar(&name, "name", "", "a `label` for token list")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageFail(c.e.stderr, c.name, fmt.Errorf("unexpected arguments %q (the agent file is given by --agent)", pos))
	}
	if agentFile == "" {
		return usageFail(c.e.stderr, c.name, errors.New("--agent FILE is required: the agent file the token acts as"))
	}
	spec := engine.TokenSpec{AgentFile: resolve(c.e.cwd, agentFile), Name: name}
	if expires != "" {
		d, err := schema.ParseDuration(expires)
		if err != nil || d <= 0 {
			return usageFail(c.e.stderr, c.name, fmt.Errorf("--expires %q: want a positive duration such as 90d, 2w or 36h (omit it for a token that never expires)", expires))
		}
		spec.Expires = d
	}
	sc, err := parseScope(scope)
	if err != nil {
		return usageFail(c.e.stderr, c.name, fmt.Errorf("--scope: %w", err))
	}
	spec.Scope = sc
	s, code, ok := c.session()
	if !ok {
		return code
	}
	missing := storeMissing(s.Location)
	secret, t, err := engine.CreateToken(ctx, s, spec)
	if err != nil {
		c.errorf("%v", tokenSpecError(err))
		return storeExitCode(err)
	}
	if missing {
		fmt.Fprintf(c.e.stderr, "agent-ls %s: created memory store %s\n", c.name, engine.Redact(s.Location))
	}
	fmt.Fprintln(c.e.stdout, secret)
	expiry := "never expires"
	if t.ExpiresAt != "" {
		expiry = "expires " + t.ExpiresAt
	}
	fmt.Fprintf(c.e.stderr, "agent-ls %s: token %s for agent %s (%s), %s; it is shown once: keep it now (the store keeps only its hash)\n",
		c.name, t.ID, t.Agent, t.AgentFile, expiry)
	return exitOK
}

// tokenSpecFlags are token create's flags for the fields of an
// engine.TokenSpec.
var tokenSpecFlags = map[string]string{
	engine.TokenFieldAgentFile: "--agent",
	engine.TokenFieldScope:     "--scope",
	engine.TokenFieldExpires:   "--expires",
	engine.TokenFieldName:      "--name",
}

// tokenSpecError words CreateToken's refusal of a spec field with the flag
// that gave it (the engine names the field neutrally).
func tokenSpecError(err error) error {
	if se, ok := errors.AsType[*engine.TokenSpecError](err); ok {
		if flag := tokenSpecFlags[se.Field]; flag != "" {
			return schema.Named(flag, se.Err)
		}
	}
	if se, ok := errors.AsType[*engine.ScopeError](err); ok {
		se.Source = "--scope"
	}
	return err
}

func tokenList(ctx context.Context, c *tokenCmd, args []string) int {
	fs := c.flags()
	format := "text"
	fs.StringVar(&format, "format", format, "output `format`: text or json")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageFail(c.e.stderr, c.name, fmt.Errorf("unexpected arguments %q", pos))
	}
	if format != "text" && format != "json" {
		return usageFail(c.e.stderr, c.name, fmt.Errorf("--format %q: want text or json", format))
	}
	s, code, ok := c.session()
	if !ok {
		return code
	}
	if storeMissing(s.Location) {
		noteNoStore(c.e, c.name, s.Location, "no tokens")
	}
	ts, err := engine.ListTokens(ctx, s)
	if err != nil {
		return c.fail(err)
	}
	if format == "json" {
		if ts == nil {
			ts = []store.Token{}
		}
		enc := json.NewEncoder(c.e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ts); err != nil {
			c.errorf("write output: %v", err)
			return exitUsage
		}
		return exitOK
	}
	if len(ts) == 0 {
		fmt.Fprintln(c.e.stderr, "agent-ls token list: no tokens")
		return exitOK
	}
	now := schema.FormatTime(c.e.now())
	tw := tabwriter.NewWriter(c.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tAGENT\tSCOPE\tCREATED BY\tCREATED\tEXPIRES\tREVOKED")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, orDash(t.Name), t.Agent+" ("+t.AgentFile+")", orDash(engine.FormatScope(t.Scope)),
			t.CreatedBy, t.CreatedAt, tokenExpiry(t, now), tokenRevocation(t))
	}
	if err := tw.Flush(); err != nil {
		c.errorf("write output: %v", err)
		return exitUsage
	}
	return exitOK
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func tokenExpiry(t store.Token, now string) string {
	switch {
	case t.ExpiresAt == "":
		return "never"
	case t.Expired(now):
		return t.ExpiresAt + " (expired)"
	}
	return t.ExpiresAt
}

func tokenRevocation(t store.Token) string {
	if !t.Revoked() {
		return "-"
	}
	return t.RevokedAt + " by " + t.RevokedBy
}

func tokenRevoke(ctx context.Context, c *tokenCmd, args []string) int {
	fs := c.flags()
	format := "text"
	fs.StringVar(&format, "format", format, "output `format`: text or json")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageFail(c.e.stderr, c.name, fmt.Errorf("want one token id (tok_...) or token (als_...), got %d arguments", len(pos)))
	}
	if format != "text" && format != "json" {
		return usageFail(c.e.stderr, c.name, fmt.Errorf("--format %q: want text or json", format))
	}
	arg := strings.TrimSpace(pos[0])
	switch {
	case strings.HasPrefix(arg, engine.TokenPrefix) && !engine.LooksLikeTokenSecret(arg):
		return usageFail(c.e.stderr, c.name, fmt.Errorf("the argument starts like a token (%s) but is not one: a token is %s and 43 base64url characters", engine.TokenPrefix, engine.TokenPrefix))
	case !strings.HasPrefix(arg, engine.TokenPrefix) && store.CheckTokenID(arg) != nil:
		return usageFail(c.e.stderr, c.name, fmt.Errorf("want a token id (%s..., from token list) or the token itself (%s...)", store.TokenIDPrefix, engine.TokenPrefix))
	}
	s, code, ok := c.session()
	if !ok {
		return code
	}
	if storeMissing(s.Location) {
		c.errorf("no memory store at %s: no tokens to revoke", engine.Redact(s.Location))
		return exitFindings
	}
	t, err := engine.RevokeToken(ctx, s, arg)
	if err != nil {
		return c.fail(err)
	}
	if format == "json" {
		enc := json.NewEncoder(c.e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(t); err != nil {
			c.errorf("write output: %v", err)
			return exitUsage
		}
		return exitOK
	}
	fmt.Fprintf(c.e.stdout, "token %s (agent %s) is revoked (since %s, by %s)\n", t.ID, t.Agent, t.RevokedAt, t.RevokedBy)
	return exitOK
}
