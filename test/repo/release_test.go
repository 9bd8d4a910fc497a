package repo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelease: make release's script cross-builds an archive per platform
// with the binary, LICENSE, README.md and CHANGELOG.md and the version
// stamped, and SHA256SUMS lists every archive with its digest (one platform
// and no vsix here, to stay fast; `make release` builds all five).
func TestRelease(t *testing.T) {
	t.Parallel()
	r := root(t)
	dist := t.TempDir()
	cmd := exec.Command("bash", "scripts/release.sh")
	cmd.Dir = r
	cmd.Env = append(os.Environ(), "PLATFORMS=linux/amd64", "DIST="+dist, "NO_VSIX=1", "VERSION=v9.9.9-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	archive := filepath.Join(dist, "agent-ls_v9.9.9-test_linux_amd64.tar.gz")
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if !strings.Contains(string(sums), hex.EncodeToString(sum[:])+"  agent-ls_v9.9.9-test_linux_amd64.tar.gz") {
		t.Errorf("SHA256SUMS does not list the archive's digest:\n%s", sums)
	}
	x := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", archive, "-C", x).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	dir := filepath.Join(x, "agent-ls_v9.9.9-test_linux_amd64")
	for _, f := range []string{"agent-ls", "LICENSE", "README.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the archive lacks %s", f)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "agent-ls"), "version").Output()
	if err != nil || !strings.Contains(string(out), "v9.9.9-test") {
		t.Errorf("agent-ls version = %q, %v; want the stamped version", out, err)
	}
}
