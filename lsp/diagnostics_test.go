package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"golang.org/x/tools/txtar"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// formatDiagnostics prints diagnostics like `agent-ls validate` and the
// .want files: "line:col-line:col: severity: message [rule]", 1-based.
func formatDiagnostics(ds []protocol.Diagnostic) string {
	lines := make([]string, 0, len(ds))
	for _, d := range ds {
		sev := map[protocol.DiagnosticSeverity]string{
			protocol.DiagnosticSeverityError: "error", protocol.DiagnosticSeverityWarning: "warning",
			protocol.DiagnosticSeverityInformation: "info", protocol.DiagnosticSeverityHint: "hint",
		}[d.Severity]
		lines = append(lines, fmt.Sprintf("%d:%d-%d:%d: %s: %s [%v]",
			d.Range.Start.Line+1, d.Range.Start.Character+1, d.Range.End.Line+1, d.Range.End.Character+1, sev, d.Message, d.Code))
	}
	return strings.Join(lines, "\n")
}

func openAndAwait(t *testing.T, c *testClient, path string, text string) rawDiagnostics {
	t.Helper()
	uri := c.open(path, text, 1)
	return c.awaitDiagnostics(uri, 1)
}

// TestDiagnosticsFixtures publishes, for every invalid fixture of the schema
// package, exactly the diagnostics its .want file lists (the same lines
// `agent-ls validate` prints), and [] for every valid agent.
func TestDiagnosticsFixtures(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)

	wants, _ := filepath.Glob("../testdata/invalid/*.agent.*.want")
	if len(wants) < 5 {
		t.Fatalf("found %d invalid fixtures, want at least 5", len(wants))
	}
	for _, want := range wants {
		src := strings.TrimSuffix(want, ".want")
		if strings.Contains(src, "invalid-utf8") {
			continue // JSON-RPC carries text as valid UTF-8: the client never sends such bytes
		}
		t.Run(filepath.Base(src), func(t *testing.T) {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(env.root, filepath.Base(src))
			got := openAndAwait(t, c, path, string(data))
			if strings.TrimSpace(string(got.Raw)) == "null" {
				t.Fatal("diagnostics: null")
			}
			var wantLines []string
			for _, l := range strings.Split(strings.TrimSpace(string(exp)), "\n") {
				// .want lines may carry a "file:" prefix.
				if i := strings.Index(l, ".agent."); i >= 0 {
					l = l[strings.Index(l[i:], ":")+i+1:]
				}
				wantLines = append(wantLines, l)
			}
			if g, w := formatDiagnostics(got.Diagnostics), strings.Join(wantLines, "\n"); g != w {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", g, w)
			}
		})
	}
	valid, _ := filepath.Glob("../testdata/agents/*.agent.*")
	for _, src := range valid {
		t.Run(filepath.Base(src), func(t *testing.T) {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			got := openAndAwait(t, c, filepath.Join(env.root, "valid-"+filepath.Base(src)), string(data))
			if string(got.Raw) != "[]" {
				t.Errorf("clean file: diagnostics %s, want []", got.Raw)
			}
		})
	}
}

// TestDiagnosticsTxtar runs lsp/testdata/diagnostics/*.txtar: each archive
// holds versions of one agent file (sent as didOpen then didChange, in name
// order) and a want-N section with the diagnostics expected at version N.
func TestDiagnosticsTxtar(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/diagnostics/*.txtar")
	if len(files) == 0 {
		t.Fatal("no txtar fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			env := newTestEnv(t)
			c := startServer(t, Options{NoWatch: true})
			c.initialize(env.root, nil, false)
			var uri protocol.DocumentURI
			wants := map[int]string{}
			for _, af := range ar.Files {
				if n, ok := strings.CutPrefix(af.Name, "want-"); ok {
					var v int
					if _, err := fmt.Sscan(n, &v); err != nil {
						t.Fatalf("section %s: %v", af.Name, err)
					}
					wants[v] = strings.TrimSpace(string(af.Data))
				}
			}
			version := 0
			for _, af := range ar.Files {
				if strings.HasPrefix(af.Name, "want-") {
					continue
				}
				version++
				if version == 1 {
					uri = c.open(filepath.Join(env.root, af.Name), string(af.Data), version)
				} else {
					c.change(uri, string(af.Data), version)
				}
				w, ok := wants[version]
				if !ok {
					continue
				}
				got := c.awaitDiagnostics(uri, int32(version))
				if g := formatDiagnostics(got.Diagnostics); g != w {
					t.Errorf("v%d diagnostics:\n%s\nwant:\n%s", version, g, w)
				}
			}
			for v := range wants {
				if v > version {
					t.Errorf("want-%d names a version that was never sent", v)
				}
			}
		})
	}
}

// TestDiagnosticsNeverStale holds the lint run of version 1 until version 2
// is diagnosed: v1's slow findings must never be published after v2, and
// its run is cancelled.
func TestDiagnosticsNeverStale(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	release := make(chan struct{})
	started := make(chan struct{}) // v1's lint is running
	var mu sync.Mutex
	cancelled := map[string]bool{}
	lint := func(ctx context.Context, in LintInput) ([]schema.Problem, error) {
		name := in.Agent.RoleTemplate.Name
		if name == "slow" {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
				mu.Lock()
				cancelled[name] = true
				mu.Unlock()
				close(release)
				return nil, ctx.Err()
			}
		}
		r, _ := in.Doc.KeyRange("/roleTemplate/name")
		return []schema.Problem{{Rule: "test-rule", Severity: schema.SeverityWarning, Message: "lint saw " + name, Range: r}}, nil
	}
	c := startServer(t, Options{NoWatch: true, Lint: lint})
	c.initialize(env.root, nil, false)
	text := func(name string) string {
		return "roleTemplate:\n  name: " + name + "\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z\n"
	}
	uri := c.open(filepath.Join(env.root, "a.agent.yaml"), text("slow"), 1)
	c.awaitDiagnostics(uri, 1) // the quick pass of v1
	// v2 arrives while v1's lint runs (sent earlier, it may cancel v1's run
	// before its lint starts, and the lint would never return).
	select {
	case <-started:
	case <-time.After(failsafe):
		t.Fatal("v1's lint never started")
	}
	c.change(uri, text("fast"), 2)
	// v2's full pass (with its lint finding) arrives.
	c.waitFor("v2 lint finding", func(ns, _ []note) bool {
		for _, d := range diagsOf(ns, uri) {
			if d.Version == 2 && len(d.Diagnostics) == 1 {
				return true
			}
		}
		return false
	})
	<-release // v1's lint returned (cancelled)
	mu.Lock()
	if !cancelled["slow"] {
		t.Error("the stale v1 lint run was not cancelled")
	}
	mu.Unlock()
	// Version order: nothing of v1 after the first v2 publish.
	ds := c.diagnostics(uri)
	seen2 := false
	for _, d := range ds {
		if d.Version == 2 {
			seen2 = true
		}
		if seen2 && d.Version == 1 {
			t.Fatalf("v1 published after v2: %+v", ds)
		}
		for _, dg := range d.Diagnostics {
			if dg.Message == "lint saw slow" {
				t.Fatalf("stale lint finding published: %+v", ds)
			}
		}
	}
	if got := c.diagnostics(uri); got[len(got)-1].Diagnostics[0].Message != "lint saw fast" {
		t.Errorf("last publish %+v, want the v2 lint finding", got[len(got)-1])
	}
}

// TestLintSeam merges lint findings with schema problems, drops findings on
// suppressed lines, and reports lint errors without losing the schema pass.
func TestLintSeam(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		lint Linter
		want string
	}{
		{
			name: "finding and suppression",
			text: "roleTemplate:\n  name: a # agent-ls: ignore hidden-rule reason\n  persona:\n    identity: x\n    tone: y\nmission:\n  objective: z\n",
			lint: func(_ context.Context, in LintInput) ([]schema.Problem, error) {
				r, _ := in.Doc.ValueRange("/mission/objective")
				n, _ := in.Doc.KeyRange("/roleTemplate/name")
				return []schema.Problem{
					{Rule: "short-objective", Severity: schema.SeverityInfo, Message: "objective is short", Range: r},
					{Rule: "hidden-rule", Severity: schema.SeverityError, Message: "suppressed", Range: n},
				}, nil
			},
			want: "7:14-7:15: info: objective is short [short-objective]",
		},
		{
			name: "lint error keeps schema diagnostics",
			text: "roleTemplate:\n  name: a\nmission:\n  objective: z\n",
			lint: func(context.Context, LintInput) ([]schema.Problem, error) { return nil, errors.New("boom") },
			want: "1:1-1:13: error: missing required property \"persona\" [schema]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			c := startServer(t, Options{NoWatch: true, Lint: tt.lint})
			c.initialize(env.root, nil, false)
			uri := c.open(filepath.Join(env.root, "a.agent.yaml"), tt.text, 1)
			c.awaitDiagnostics(uri, 1)
			// The lint pass, if it publishes, is the second publish of v1;
			// wait for the status notification that ends every run.
			c.waitFor("status", func(ns, _ []note) bool {
				for _, n := range ns {
					if n.method == methodStatus && strings.Contains(string(n.params), string(uri)) {
						return true
					}
				}
				return false
			})
			ds := c.diagnostics(uri)
			last := ds[len(ds)-1]
			got := formatDiagnostics(last.Diagnostics)
			gotLines := strings.Split(got, "\n")
			sort.Strings(gotLines)
			if strings.Join(gotLines, "\n") != tt.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestEarlyLintOnlyForValidatedAgent: over an unchanged store file the
// server lints the agent decoded before its schema validation is done; it
// publishes that lint only for an agent that passed validation. A version
// with a schema error that still decodes is linted again as before (no
// agent), and the early lint of it is never published.
func TestEarlyLintOnlyForValidatedAgent(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	withBolt(t, env, func(store.Store) {})
	time.Sleep(engine.RacyWindow) // the store file must be stable for the cached path
	var mu sync.Mutex
	linted := map[string]bool{}
	lint := func(_ context.Context, in LintInput) ([]schema.Problem, error) {
		name := "no agent"
		if in.Agent != nil {
			name = in.Agent.Mission.Objective
		}
		mu.Lock()
		linted[name] = true
		mu.Unlock()
		r, _ := in.Doc.KeyRange("/mission")
		return []schema.Problem{{Rule: "test-rule", Severity: schema.SeverityWarning, Message: "lint saw " + name, Range: r}}, nil
	}
	c := startServer(t, Options{NoWatch: true, Lint: lint, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, false)
	text := func(objective, identity string) string {
		return "roleTemplate:\n  name: a\n  persona:\n    identity: '" + identity + "'\n    tone: y\nmission:\n  objective: " + objective + "\n"
	}
	path := filepath.Join(env.root, "a.agent.yaml")
	uri := c.open(path, text("one", "x"), 1)
	settled := func(version int32, want ...string) {
		t.Helper()
		c.waitFor(fmt.Sprintf("v%d lint", version), func(ns, _ []note) bool {
			for _, d := range diagsOf(ns, uri) {
				if d.Version == version && strings.Contains(string(d.Raw), "lint saw") {
					return true
				}
			}
			return false
		})
		for _, d := range c.diagnostics(uri) {
			if d.Version != version || !strings.Contains(string(d.Raw), "lint saw") {
				continue
			}
			var msgs []string
			for _, dg := range d.Diagnostics {
				msgs = append(msgs, dg.Message)
			}
			if !reflect.DeepEqual(msgs, want) {
				t.Fatalf("v%d: settled diagnostics %q, want %q", version, msgs, want)
			}
		}
	}
	settled(1, "lint saw one")
	c.change(uri, text("two", "x"), 2) // the store is cached now: the early lint
	settled(2, "lint saw two")
	c.change(uri, text("three", ""), 3) // decodes, but identity must not be empty
	settled(3, "must not be empty", "lint saw no agent")
	c.change(uri, text("four", "x"), 4)
	settled(4, "lint saw four")
	for _, d := range c.diagnostics(uri) {
		if strings.Contains(string(d.Raw), "lint saw three") {
			t.Fatalf("the early lint of an agent with schema errors was published: %s", d.Raw)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !linted["three"] {
		t.Error("v3 was not linted early: the test no longer covers the early lint")
	}
}
