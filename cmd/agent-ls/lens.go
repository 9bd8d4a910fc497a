package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"runtime"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/lens"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

const lensUsage = `Serves the evolution lens for the workspace's store: the pending-review queue with each proposal's
composition diff (Approve, Reject with a reason), the conflicts panel (keep this one), and per agent the
composed prompt with learned lines attributed, sizes against budget and ceiling, the health report,
learnings and the ledger timeline, updated live. Prints the page's URL, with its access token, as the
first line and runs until interrupted (exit 0). Loopback only. Actions go through the same gates as the CLI, as
the workspace's actor; with an agent actor configured the lens is read-only.`

// runLens serves the evolution lens for the workspace's store until
// interrupted.
func runLens(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("lens", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs, storeFlags{lockTimeout: bolt.DefaultLockTimeout})
	addr := fs.String("addr", "127.0.0.1:0", "loopback `address` to serve on (port 0 picks a free one)")
	open := fs.Bool("open", false, "open the page in the default browser")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "lens", usage: "[--addr 127.0.0.1:0] [--open] [flags]", body: lensUsage}, fs)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "lens", err)
	}
	if len(pos) > 0 {
		return usageFail(e.stderr, "lens", fmt.Errorf("unexpected arguments %q", pos))
	}
	opener, done := e.longLivedOpener()
	defer done()
	v, err := lensVerbs(e, opener, sf)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	actor := v.S.Actor
	evs, closeEvents, err := lens.SessionEvents(ctx, v)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	defer closeEvents()
	srv, err := lens.New(lens.Options{Backend: lens.EngineBackend(v), Events: evs, ReadOnly: actor.Kind != store.ActorHuman, Now: e.now})
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	ln, err := lens.Listen(*addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	u := srv.URL(ln.Addr())
	fmt.Fprintln(e.stdout, u)
	if actor.Kind != store.ActorHuman {
		fmt.Fprintf(e.stderr, "agent-ls lens: read-only: the workspace's actor is %s (only a human decides)\n", actor)
	}
	if *open {
		if err := openBrowser(u); err != nil {
			fmt.Fprintf(e.stderr, "agent-ls lens: open a browser: %v (open the URL above)\n", err)
		}
	}
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(e.stderr, "agent-ls lens: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// openBrowser hands url to the desktop's opener.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the opener's exit does not matter
	return nil
}

// lensVerbs resolves the lens's session (the workspace around the working
// directory, --store, the workspace's actor) and returns its review verbs:
// the lens is an adapter over them (lens.EngineBackend).
func lensVerbs(e *env, opener engine.Opener, sf storeFlags) (*engine.Verbs, error) {
	s, err := engine.Resolve(opener, engine.Request{Start: e.cwd, Dir: e.cwd, Store: sf.path, Getenv: e.getenv})
	if err != nil {
		// No actor is no access: nothing falls back to a human.
		return nil, fmt.Errorf("workspace actor: %w", err)
	}
	return s.Verbs(store.Options{LockTimeout: sf.lockTimeout, Now: e.now}), nil
}
