package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/workspace"
)

// writeHugeLine writes a file of one line of size bytes ("k: aaaa…") with a
// reused 1 MiB buffer, so the test itself allocates almost nothing.
func writeHugeLine(t *testing.T, path string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.Repeat([]byte("a"), 1<<20)
	copy(buf, "k: ")
	for n := 0; n < size; n += len(buf) {
		if _, err := f.Write(buf[:min(len(buf), size-n)]); err != nil {
			t.Fatal(err)
		}
		copy(buf, "aaa")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// hugeLineAllocBound is the most the in-process commands may allocate
// checking a 100 MB file: 16 MiB, twice the 8 MiB agent-file limit. A
// command that reads the file whole (os.ReadFile) allocates its 100 MB and
// more; one that reads at most limit+1 bytes, or refuses it from its size,
// stays far below.
const hugeLineAllocBound = 16 << 20

// TestHugeLine: a literal 100 MB line (agent file, workspace config) through
// `agent-ls validate` and `agent-ls lint`, in process and as the real binary:
// a clear "file is 95.4 MiB, over the 8 MiB limit" at file:1:1, exit 1,
// and the in-process run's allocation (runtime.MemStats.TotalAlloc) stays
// under hugeLineAllocBound.
func TestHugeLine(t *testing.T) {
	dir := t.TempDir()
	const size = 100_000_000
	for _, name := range []string{"huge.agent.yaml", ".agent-ls.yaml"} {
		sub := filepath.Join(dir, strings.TrimPrefix(name, "."))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		writeHugeLine(t, filepath.Join(sub, name), size)
		want := name + ":1:1: error: file is 95.4 MiB, over the 8 MiB limit [parse]"
		for _, tc := range []struct {
			cmd string
			run func(ctx context.Context, e *env, args []string) int
		}{{"validate", runValidate}, {"lint", runLint}} {
			t.Run(tc.cmd+"/"+name, func(t *testing.T) {
				var out, errb bytes.Buffer
				e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, cwd: sub, now: time.Now}
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				code := tc.run(context.Background(), e, []string{name})
				runtime.ReadMemStats(&after)
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("%s of a %d-byte line: allocated %.1f MiB", tc.cmd, size, float64(alloc)/(1<<20))
				if alloc > hugeLineAllocBound {
					t.Errorf("allocated %d bytes, over the %d bound", alloc, hugeLineAllocBound)
				}
				if code != exitFindings || !strings.Contains(out.String(), want) {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out.String(), errb.String(), want)
				}
				r := runBin(t, sub, "", nil, tc.cmd, name)
				if r.code != exitFindings || !strings.Contains(r.stdout, want) || strings.Contains(r.stderr, "panic") {
					t.Errorf("binary: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.stdout, r.stderr, want)
				}
			})
		}
	}
}

// TestReadCheckedUnsized: a file of unknown size (a character device that
// never ends) is refused on open as not a regular file (workspace.Open),
// never read, with nothing allocated for it.
func TestReadCheckedUnsized(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	data, size, err := readChecked("/dev/zero", "zero.agent.yaml")
	if !errors.Is(err, workspace.ErrNotRegular) || data != nil || size != 0 {
		t.Fatalf("readChecked(/dev/zero) = %d bytes, size %d, %v; want not a regular file", len(data), size, err)
	}
}
