package overlay_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/overlay/golden")

// fixture is a record set of testdata/overlay: the agent it belongs to, the
// workspace budgets to apply it with, and its promoted records.
type fixture struct {
	Agent   string                 `json:"agent"`
	Policy  schema.WorkspaceConfig `json:"policy"`
	Records []schema.MemoryRecord  `json:"records"`
}

func TestGolden(t *testing.T) {
	t.Parallel()
	agents, err := filepath.Glob("../testdata/agents/*.agent.*")
	if err != nil || len(agents) == 0 {
		t.Fatalf("no testdata agents (%v)", err)
	}
	for _, file := range agents {
		stem := strings.Split(filepath.Base(file), ".")[0]
		t.Run(stem, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := compose.LoadAgent(file, data)
			if err != nil {
				t.Fatal(err)
			}
			authored := overlay.Render(cfg, overlay.Attribution{})
			golden(t, stem+".authored.txt", []byte(authored.Text()))
			overlay.AssertNoEmptyHeadings(t, authored.Text())

			raw, err := os.ReadFile(filepath.Join("../testdata/overlay", stem+".records.json"))
			if os.IsNotExist(err) {
				t.Fatalf("no record set testdata/overlay/%s.records.json", stem)
			}
			if err != nil {
				t.Fatal(err)
			}
			var fx fixture
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatalf("%s.records.json: %v", stem, err)
			}
			if fx.Agent != cfg.RoleTemplate.Name {
				t.Fatalf("record set is for %q, agent is %q", fx.Agent, cfg.RoleTemplate.Name)
			}
			c, rep := overlay.Apply(cfg, fx.Records, overlay.PolicyFrom(fx.Policy))
			p := overlay.Render(c, rep.Attribution)
			golden(t, stem+".composed.txt", []byte(p.Annotated()))
			overlay.AssertNoEmptyHeadings(t, p.Text())
			if !strings.Contains(p.Text(), strings.TrimSuffix(authored.Text(), "\n")[:20]) {
				t.Errorf("composed prompt lost the authored opening")
			}
			out, err := json.MarshalIndent(struct {
				Report overlay.Report `json:"report"`
				Prompt overlay.Prompt `json:"prompt"`
			}{rep, p}, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, stem+".composed.json", append(out, '\n'))
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("../testdata/overlay/golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./overlay -run TestGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
