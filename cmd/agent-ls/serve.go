package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/lsp"
	"github.com/agent-ls/agent-ls/store"
)

// serveMemoryLimit is serve's soft memory limit (runtime/debug.SetMemoryLimit)
// when GOMEMLIMIT is unset: the garbage collector then runs before the heap
// reaches twice the live data (GOGC's default), which for a long-lived
// editor process is what its resident memory shows. A live heap above two
// thirds of it (a store much bigger than 100k records) raises it to one and
// a half times that heap (followLiveHeap): under a limit below the live
// heap the collector ran back to back, half the CPU. GOMEMLIMIT (also
// "off") overrides it.
const serveMemoryLimit = 64 << 20

// runServe runs the language server on stdin/stdout. Stdout carries protocol
// messages only; logs go to stderr (and warnings to the client).
func runServe(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Bool("stdio", true, "speak LSP over stdin/stdout (the only transport; accepted for editors that pass it)")
	logLevel := fs.String("log-level", "info", "stderr log level: debug, info, warn or error")
	var lockTimeout time.Duration
	durationVar(fs, &lockTimeout, "lock-timeout", time.Second, "how long one store operation waits for another process's lock")
	noWatch := fs.Bool("no-watch", false, "do not watch the workspace and the store for changes")
	memProfile := fs.String("memprofile", "", "write a heap profile (pprof, as of the last collection while serving) to `FILE` when the server exits (a new or empty file: an existing one is refused, never overwritten)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the whole session to `FILE` when the server exits (a new or empty file, as --memprofile)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "serve", usage: "[--stdio] [--log-level LEVEL] [--lock-timeout D] [--no-watch] [--memprofile FILE] [--cpuprofile FILE]",
			body: "Runs the agent-ls language server over stdio (LSP 3.17): diagnostics, inlay hints,\nhover provenance, code actions and the agent-ls/* requests of docs/LSP-PROTOCOL.md.\nConfiguration comes from initializationOptions and .agent-ls.yaml."}, fs)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "serve", err)
	}
	if len(pos) > 0 {
		return usageFail(e.stderr, "serve", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(*logLevel))); err != nil {
		fmt.Fprintf(e.stderr, "agent-ls serve: --log-level %q: want debug, info, warn or error\n", *logLevel)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	source := "GOMEMLIMIT"
	if e.getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit)
		defer followLiveHeap(serveMemoryLimit, nil)()
		source = "serve default"
	}
	logger.Debug("soft memory limit", "bytes", debug.SetMemoryLimit(-1), "source", source)
	if *memProfile != "" && *cpuProfile != "" && filepath.Clean(resolve(e.cwd, *memProfile)) == filepath.Clean(resolve(e.cwd, *cpuProfile)) {
		return usageFail(e.stderr, "serve", fmt.Errorf("--memprofile and --cpuprofile name one file, %s: give each its own", *memProfile))
	}
	// Both profile files are opened before serving: a path that exists
	// with data in it, or cannot be created, is refused now, not after a
	// session (createProfile).
	var heap *os.File
	if *memProfile != "" {
		f, created, err := createProfile("--memprofile", *memProfile)
		if err != nil {
			fmt.Fprintf(e.stderr, "agent-ls serve: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		heap = f
		if *cpuProfile != "" && created {
			// Refused below: leave no empty file behind.
			defer func() {
				if heap == nil {
					_ = os.Remove(*memProfile)
				}
			}()
		}
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			heap = nil
			fmt.Fprintf(e.stderr, "agent-ls serve: %v\n", err)
			return exitUsage
		}
		defer stop()
	}
	opener, done := e.longLivedOpener()
	defer done()
	open := func(readOnly bool) func(ctx context.Context, path string) (store.Store, error) {
		return func(ctx context.Context, path string) (store.Store, error) {
			return engine.OpenStore(ctx, opener, path, store.Options{Now: e.now, LockTimeout: lockTimeout, ReadOnly: readOnly, Logger: logger})
		}
	}
	err = lsp.Serve(ctx, stdio{pollableStdin(e.stdin), e.stdout}, lsp.Options{
		OpenStore:         open(false),
		OpenStoreReadOnly: open(true),
		Follow:            opener.Source,
		Now:               e.now,
		Logger:            logger,
		Lint:              lsp.LintEngine(),
		Getenv:            e.getenv,
		NoWatch:           *noWatch,
		Version:           versionString(),
		Idle:              releaseFreeHeap,
		IdleAfter:         serveIdleAfter,
	})
	if heap != nil {
		// No collection first: the profile shows what the last one found
		// live while the server still held its documents and views.
		if perr := writeHeapProfile(heap); perr != nil {
			fmt.Fprintf(e.stderr, "agent-ls serve: %v\n", perr)
		}
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, lsp.ErrExitWithoutShutdown):
		return exitFindings // LSP: exit without shutdown exits with 1
	}
	fmt.Fprintf(e.stderr, "agent-ls serve: %v\n", err)
	return exitUsage
}

// startCPUProfile starts a CPU profile written to path (createProfile);
// stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, created, err := createProfile("--cpuprofile", path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		if created {
			_ = os.Remove(path)
		}
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// createProfile opens the file a profile goes to, named by flag: a new
// file, or an existing empty one (made by mktemp, say). A file that exists
// and is not empty — an earlier profile included — is refused, never
// overwritten: a mistyped path must not destroy a file. created reports
// whether the file is new.
func createProfile(flag, path string) (f *os.File, created bool, err error) {
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, fmt.Errorf("%s: %w", flag, err)
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		return nil, false, fmt.Errorf("%s %s: exists and is not empty; give a new file (a profile never overwrites one)", flag, path)
	}
	f, err = os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", flag, err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != 0 {
		_ = f.Close()
		return nil, false, fmt.Errorf("%s %s: exists and is not empty; give a new file (a profile never overwrites one)", flag, path)
	}
	return f, false, nil
}

// writeHeapProfile writes the heap profile to f, the file createProfile
// opened.
func writeHeapProfile(f *os.File) error {
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("--memprofile %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--memprofile %s: %w", f.Name(), err)
	}
	return nil
}

// stdio joins stdin and stdout into the server's connection.
type stdio struct {
	r io.Reader
	w io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.w.Write(p) }

// Close closes stdin when it can be closed, so a blocked read ends.
func (s stdio) Close() error {
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
