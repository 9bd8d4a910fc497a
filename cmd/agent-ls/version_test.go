package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersionOf(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	rev := "0179bf4ec5443a6e01563b250237a786da81b828"
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "(devel)"},
		{"go install @version", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.4.1"}}, "v0.4.1 (go1.26.0)"},
		{"clean checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", rev, "vcs.time", "2026-12-04T18:09:07Z", "vcs.modified", "false")},
			"(devel) (rev 0179bf4ec544, 2026-12-04T18:09:07Z, go1.26.0)"},
		{"dirty checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", rev, "vcs.modified", "true")},
			"(devel) (rev 0179bf4ec544+dirty, go1.26.0)"},
		{"pseudo-version with revision", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20261204180907-0179bf4ec544"},
			Settings: settings("vcs.revision", rev)},
			"v0.0.0-20261204180907-0179bf4ec544 (rev 0179bf4ec544, go1.26.0)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := buildVersionOf(tc.bi).String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionRevision runs the built binary: in a git checkout (a .git
// directory at the module root, as a CI clone has) it names the checkout's
// revision, +dirty when the tree has changes.
func TestVersionRevision(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		t.Skip("not a git clone with a .git directory (Go stamps no revision in worktrees or archives)")
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git rev-parse: %v", err)
	}
	r := runBin(t, "", "", nil, "version")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "rev " + strings.TrimSpace(string(head))[:12]
	if !strings.Contains(r.stdout, want) {
		t.Errorf("version = %q, want it to name %q", r.stdout, want)
	}
}

// TestVersionRejectsArguments: version takes no flags or arguments. It
// printed its text line with exit 0 for anything given, so `agent-ls
// version --format json` handed a script prose where it asked for JSON.
func TestVersionRejectsArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "--format", "json"}, "agent-ls version: unknown flag --format (run 'agent-ls version --help')\n"},
		{[]string{"version", "extra"}, "agent-ls version: unexpected argument \"extra\" (run 'agent-ls version --help')\n"},
		{[]string{"--version", "--short"}, "agent-ls version: unknown flag --short (run 'agent-ls version --help')\n"},
	} {
		r := runBin(t, dir, "", nil, tc.args...)
		if r.code != exitUsage || r.stdout != "" || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, no output, %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}, {"version", "--"}} {
		r := runBin(t, dir, "", nil, args...)
		if r.code != exitOK || !strings.HasPrefix(r.stdout, "agent-ls ") || r.stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0 and the version line", args, r.code, r.stdout, r.stderr)
		}
	}
}
