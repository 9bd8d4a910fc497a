package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestReadFileSizes: ReadFile returns a file's bytes exactly whatever its
// size next to its read buffer (empty, small, around 512, large, exactly
// the limit) and refuses one byte over the limit.
func TestReadFileSizes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	limit := int(schema.SizeLimit(filepath.Join(dir, "x.agent.yaml")))
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 200_000, limit, limit + 1} {
		path := filepath.Join(dir, "x.agent.yaml")
		want := bytes.Repeat([]byte("ab\n"), n/3+1)[:n]
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if n > limit {
			if err == nil || !strings.Contains(err.Error(), "more than the limit") {
				t.Errorf("%d bytes: err %v, want the limit's error", n, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d bytes, err %v", n, len(got), err)
		}
	}
}
