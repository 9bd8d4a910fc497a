package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// compWorkspace is a workspace with the deploy agent and a bolt store that
// tests seed in-process (then close) before running the built binary.
type compWorkspace struct {
	t     *testing.T
	dir   string
	db    string
	clock time.Time
}

func newCompWorkspace(t *testing.T) *compWorkspace {
	t.Helper()
	dir := t.TempDir()
	agent, err := os.ReadFile("../../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy.agent.yaml"), agent, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agent-ls.yaml"), []byte("scope:\n  user: u1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &compWorkspace{t: t, dir: dir, db: filepath.Join(dir, schema.DefaultStorePath), clock: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)}
}

func (w *compWorkspace) now() time.Time { w.clock = w.clock.Add(time.Minute); return w.clock }

// mark returns a time between the last and the next store operation.
func (w *compWorkspace) mark() string { return schema.FormatTime(w.now()) }

// seed opens the store, runs f and closes it.
func (w *compWorkspace) seed(f func(ctx context.Context, s store.Store)) {
	w.t.Helper()
	s, err := bolt.Open(w.db, store.Options{Now: w.now})
	if err != nil {
		w.t.Fatal(err)
	}
	f(context.Background(), s)
	if err := s.Close(); err != nil {
		w.t.Fatal(err)
	}
}

func (w *compWorkspace) save(ctx context.Context, s store.Store, target, content, conv, supersedes string, promote bool) schema.MemoryRecord {
	w.t.Helper()
	tg, err := schema.ParseTarget(target)
	if err != nil {
		w.t.Fatal(err)
	}
	recs, err := s.Write(ctx, []store.WriteRequest{{
		Scope: map[string]string{"user": "u1", "agent": "deploy-ops"}, Kind: schema.KindFact, Content: content,
		Target: &tg, Supersedes: supersedes, Provenance: schema.Provenance{ConversationID: conv},
	}}, store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"})
	if err != nil {
		w.t.Fatal(err)
	}
	if promote {
		if _, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierOf(tg), Actor: store.Actor{Kind: store.ActorSystem, Name: "test"}}); err != nil {
			w.t.Fatal(err)
		}
	}
	return recs[0]
}

func (w *compWorkspace) run(args ...string) binResult {
	w.t.Helper()
	return runBin(w.t, w.dir, "", []string{"USER=tester"}, args...)
}

func (w *compWorkspace) ok(args ...string) string {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("agent-ls %v: exit %d\nstderr: %s", args, r.code, r.stderr)
	}
	return r.stdout
}

func TestCompositionCommands(t *testing.T) {
	t.Parallel()
	w := newCompWorkspace(t)
	// No store yet: the authored prompt, and nothing is created.
	authored, err := os.ReadFile("../../testdata/overlay/golden/deploy.authored.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.ok("render", "deploy.agent.yaml"); got != string(authored) {
		t.Fatalf("render without a store:\n%s\nwant the authored golden", got)
	}
	if _, err := os.Stat(w.db); !os.IsNotExist(err) {
		t.Fatalf("render created the store: %v", err)
	}

	var tue, thu, cand schema.MemoryRecord
	w.seed(func(ctx context.Context, s store.Store) {
		tue = w.save(ctx, s, "background.projectContext.deploy_window", "Tuesdays after 14:00 ET", "conv-tue", "", true)
	})
	p1 := w.ok("render", "deploy.agent.yaml")
	tTue := w.mark()
	w.seed(func(ctx context.Context, s store.Store) {
		thu = w.save(ctx, s, "background.projectContext.deploy_window", "Thursdays after 14:00 ET", "conv-thu", tue.ID, true)
		cand = w.save(ctx, s, "judgment.deploy.escalationTriggers", "Ask before deleting any resource in prod", "conv-del", "", false)
	})

	t.Run("render", func(t *testing.T) {
		if !strings.Contains(p1, "- **deploy_window**: Tuesdays after 14:00 ET\n") {
			t.Fatalf("Tuesday not rendered:\n%s", p1)
		}
		now := w.ok("render", "deploy.agent.yaml")
		if !strings.Contains(now, "- **deploy_window**: Thursdays after 14:00 ET\n") || strings.Contains(now, "Tuesdays") || strings.Contains(now, "Ask before deleting") {
			t.Fatalf("current render:\n%s", now)
		}
		if got := w.ok("render", "deploy.agent.yaml", "--at", tTue); got != p1 {
			t.Fatalf("--at %s is not the earlier prompt byte for byte:\n%s", tTue, got)
		}
		ann := w.ok("render", "deploy.agent.yaml", "--annotate")
		if want := "- **deploy_window**: Thursdays after 14:00 ET  ⟵ memory " + thu.ID + " (conv conv-thu)\n"; !strings.Contains(ann, want) {
			t.Fatalf("--annotate lacks %q:\n%s", want, ann)
		}
		if md := w.ok("render", "deploy.agent.yaml", "--format", "markdown"); !strings.Contains(md, "_(memory: "+thu.ID+")_") {
			t.Fatalf("markdown:\n%s", md)
		}
		rec := w.ok("render", "deploy.agent.yaml", "--recall", "--query", "deleting resources")
		if !strings.HasPrefix(rec, now) || !strings.Contains(rec, "\n## Recalled Memory\n- Ask before deleting any resource in prod\n") {
			t.Fatalf("--recall:\n%s", rec)
		}
	})

	t.Run("render json", func(t *testing.T) {
		var out struct {
			Agent    string `json:"agent"`
			Text     string `json:"text"`
			Sections []struct {
				Title     string `json:"title"`
				Source    string `json:"source"`
				Fragments []struct {
					Source    string   `json:"source"`
					Text      string   `json:"text"`
					MemoryIDs []string `json:"memoryIds"`
				} `json:"fragments"`
			} `json:"sections"`
		}
		if err := json.Unmarshal([]byte(w.ok("render", "deploy.agent.yaml", "--format", "json")), &out); err != nil {
			t.Fatal(err)
		}
		var memory []string
		for _, s := range out.Sections {
			for _, f := range s.Fragments {
				if f.Source == "memory" {
					memory = append(memory, s.Title+": "+f.Text+" "+strings.Join(f.MemoryIDs, ","))
				}
			}
		}
		want := "Context: - **deploy_window**: Thursdays after 14:00 ET " + thu.ID
		if out.Agent != "deploy-ops" || len(memory) != 1 || memory[0] != want || !strings.Contains(out.Text, "Thursdays") {
			t.Fatalf("json: agent %q memory fragments %q, want [%q]", out.Agent, memory, want)
		}
	})

	t.Run("overlay", func(t *testing.T) {
		var out struct {
			Config schema.AgentConfig `json:"config"`
			Report struct {
				Records []struct {
					ID, Status, Pointer, Target string
				} `json:"records"`
				Totals struct{ Applied int } `json:"totals"`
			} `json:"report"`
		}
		if err := json.Unmarshal([]byte(w.ok("overlay", "deploy.agent.yaml", "--format", "json")), &out); err != nil {
			t.Fatal(err)
		}
		v, _ := out.Config.Background.ProjectContext.Get("deploy_window")
		if v != "Thursdays after 14:00 ET" || len(out.Report.Records) != 1 || out.Report.Records[0].ID != thu.ID ||
			out.Report.Records[0].Pointer != "/background/projectContext/deploy_window" || out.Report.Records[0].Target != "background.projectContext.deploy_window" {
			t.Fatalf("overlay json: deploy_window %v, report %+v", v, out.Report)
		}
		var y struct {
			Agent  string `yaml:"agent"`
			Report struct {
				Totals struct {
					Applied int `yaml:"applied"`
				} `yaml:"totals"`
			} `yaml:"report"`
		}
		if err := yaml.Unmarshal([]byte(w.ok("overlay", "deploy.agent.yaml")), &y); err != nil {
			t.Fatal(err)
		}
		if y.Agent != "deploy-ops" || y.Report.Totals.Applied != 1 {
			t.Fatalf("overlay yaml: %+v", y)
		}
		if r := w.ok("overlay", "deploy.agent.yaml", "--report"); strings.Contains(r, "config:") || !strings.Contains(r, "report:\n  records:\n") {
			t.Fatalf("overlay --report:\n%s", r)
		}
		// The authored file is never touched.
		after, _ := os.ReadFile(filepath.Join(w.dir, "deploy.agent.yaml"))
		orig, _ := os.ReadFile("../../testdata/agents/deploy.agent.yaml")
		if string(after) != string(orig) {
			t.Fatalf("agent file changed")
		}
	})

	t.Run("diff", func(t *testing.T) {
		d := w.ok("diff", "deploy.agent.yaml", "--without", thu.ID)
		if !strings.HasPrefix(d, "--- current\n+++ without "+thu.ID+"\n@@ ") || !strings.Contains(d, "\n-- **deploy_window**: Thursdays after 14:00 ET\n") || changed(d, '+') != 0 {
			t.Fatalf("--without:\n%s", d)
		}
		d = w.ok("diff", "deploy.agent.yaml", "--with", cand.ID)
		if !strings.Contains(d, "\n+- Ask before deleting any resource in prod\n") || changed(d, '-') != 0 || changed(d, '+') != 1 {
			t.Fatalf("--with:\n%s", d)
		}
		d = w.ok("diff", "deploy.agent.yaml", "--from", tTue)
		if !strings.Contains(d, "\n-- **deploy_window**: Tuesdays after 14:00 ET\n+- **deploy_window**: Thursdays after 14:00 ET\n") {
			t.Fatalf("--from:\n%s", d)
		}
		if d := w.ok("diff", "deploy.agent.yaml", "--with", thu.ID); d != "" {
			t.Fatalf("--with an applied record should be no change, got:\n%s", d)
		}
		var js struct {
			Diff           string
			Added, Removed []string
		}
		if err := json.Unmarshal([]byte(w.ok("diff", "deploy.agent.yaml", "--from", tTue, "--format", "json")), &js); err != nil {
			t.Fatal(err)
		}
		if len(js.Added) != 1 || js.Added[0] != thu.ID || len(js.Removed) != 1 || js.Removed[0] != tue.ID || js.Diff == "" {
			t.Fatalf("diff json: %+v", js)
		}
	})

	t.Run("summarize", func(t *testing.T) {
		w.ok("render", "deploy.agent.yaml", "--summarize")
		s, err := bolt.Open(w.db, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sums, err := s.OverlaySummaries(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(sums) != 1 || sums[0].Agent != "deploy-ops" || len(sums[0].RecordIDs) != 1 || sums[0].RecordIDs[0] != thu.ID {
			t.Fatalf("summaries = %+v", sums)
		}
	})
}

func TestCompositionCommandErrors(t *testing.T) {
	t.Parallel()
	w := newCompWorkspace(t)
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string // prefix of the first line ("" checks stdout has usage)
	}{
		{[]string{"render", "--help"}, exitOK, ""},
		{[]string{"overlay", "--help"}, exitOK, ""},
		{[]string{"diff", "--help"}, exitOK, ""},
		{[]string{"render"}, exitUsage, "agent-ls render: want one AGENT_FILE"},
		{[]string{"render", "a", "b"}, exitUsage, "agent-ls render: want one AGENT_FILE"},
		{[]string{"render", "deploy.agent.yaml", "--format", "yaml"}, exitUsage, `agent-ls render: --format "yaml"`},
		{[]string{"overlay", "deploy.agent.yaml", "--format", "text"}, exitUsage, `agent-ls overlay: --format "text"`},
		{[]string{"render", "deploy.agent.yaml", "--query", "x"}, exitUsage, "agent-ls render: --query needs --recall"},
		{[]string{"render", "deploy.agent.yaml", "--bogus"}, exitUsage, "agent-ls render: unknown flag --bogus (run 'agent-ls render --help')"},
		{[]string{"render", "missing.agent.yaml"}, exitUsage, "agent-ls render: agent file:"},
		{[]string{"render", "deploy.agent.yaml", "--at", "yesterday"}, exitUsage, `agent-ls render: --at "yesterday": want RFC 3339`},
		{[]string{"overlay", "deploy.agent.yaml", "--at", "yesterday"}, exitUsage, `agent-ls overlay: --at "yesterday": want RFC 3339`},
		// diff's times are --from and --to: it named --at, a flag diff has not.
		{[]string{"diff", "deploy.agent.yaml", "--from", "yesterday"}, exitUsage, `agent-ls diff: --from "yesterday": want RFC 3339`},
		{[]string{"diff", "deploy.agent.yaml", "--from", "2026-11-01T00:00:00Z", "--to", "soon"}, exitUsage, `agent-ls diff: --to "soon": want RFC 3339`},
		{[]string{"render", "deploy.agent.yaml", "--scope", "novalue"}, exitUsage, "agent-ls render: --scope"},
		{[]string{"diff", "deploy.agent.yaml"}, exitUsage, "agent-ls diff: want exactly one of"},
		{[]string{"diff", "deploy.agent.yaml", "--with", "A", "--without", "B"}, exitUsage, "agent-ls diff: want exactly one of"},
		{[]string{"diff", "deploy.agent.yaml", "--to", "2026-11-01T00:00:00Z"}, exitUsage, "agent-ls diff: want exactly one of"},
		{[]string{"diff", "deploy.agent.yaml", "--with", "01JXXXXXXXXXXXXXXXXXXXXXXX"}, exitFindings, "agent-ls diff: no record 01JXXXXXXXXXXXXXXXXXXXXXXX"},
	} {
		r := w.run(tt.args...)
		if r.code != tt.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, r.code, tt.code, r.stderr)
			continue
		}
		if tt.stderr == "" {
			if !strings.HasPrefix(r.stdout, "Usage: agent-ls "+tt.args[0]+" ") || r.stderr != "" {
				t.Errorf("%v: stdout %q stderr %q, want usage on stdout", tt.args, r.stdout, r.stderr)
			}
			continue
		}
		// The note that there is no store (this workspace has none) comes first.
		stderr := r.stderr
		if note, rest, ok := strings.Cut(stderr, "\n"); ok && strings.Contains(note, ": no memory store at ") {
			stderr = rest
		}
		if !strings.Contains(strings.SplitN(stderr, "\n", 2)[0], tt.stderr) {
			t.Errorf("%v: stderr %q, want first line with %q", tt.args, r.stderr, tt.stderr)
		}
	}
}

// changed counts the diff lines starting with sign, headers excluded.
func changed(diff string, sign byte) int {
	n := 0
	for _, l := range strings.Split(diff, "\n") {
		if len(l) > 0 && l[0] == sign && !strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "--- ") {
			n++
		}
	}
	return n
}

// TestDemo runs `make demo`'s script against the built binary: the scripted
// history must compose into the annotated prompt and the report.
func TestDemo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	cmd := exec.Command("bash", "../../scripts/demo.sh")
	cmd.Env = append(os.Environ(), "AGENT_LS="+agentLSBin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\n- \*\*deploy_window\*\*: Thursdays after 14:00 ET  ⟵ memory [0-9A-Z]{26} \(conv conv-102, 2 conversations\)\n`),
		regexp.MustCompile(`\n- Pause the rollout when the worker queue depth doubles  ⟵ memory [0-9A-Z]{26} \(conv conv-103, 2 conversations\)\n`),
		regexp.MustCompile(`\n- Ask before deleting any resource in prod  ⟵ memory [0-9A-Z]{26} \(conv conv-105\)\n`),
		regexp.MustCompile(`\n… \[memory budget reached — 1 learned entry moved to recall\]  ⟵ spilled to recall: [0-9A-Z]{26}\n`),
		regexp.MustCompile(`\n## Recalled Memory\n(- .*\n)*- No deploys from Dec 20 to Jan 3\n`),
		regexp.MustCompile(`\n-- \*\*deploy_window\*\*: Thursdays after 14:00 ET\n`),
		regexp.MustCompile(`\n    applied: 4\n    dropped: 0\n    spilled: 1\n`),
		// It ends with a bisect: the Thursday learning found, rolled back by
		// restoring Tuesday, and no regression after.
		regexp.MustCompile(`\nfirst regression: ledger entry \d+ \(promote by agent:deploy-ops at [^)]*\)\n  record      [0-9A-Z]{26}\n  content     Thursdays after 14:00 ET\n`),
		regexp.MustCompile(`\nrollback: agent-ls memory restore [0-9A-Z]{26}\n`),
		regexp.MustCompile(`\nrestored [0-9A-Z]{26} as [0-9A-Z]{26}, superseding [0-9A-Z]{26}`),
		regexp.MustCompile(`\nno regression: .*\n(.*\n)?\(exit 1: no regression any more\)\n`),
	} {
		if !want.MatchString(s) {
			t.Errorf("demo output lacks %s:\n%s", want, s)
		}
	}
	// The composed prompt (the first step's output) holds Thursday, not the
	// Tuesday it superseded (the demo restores Tuesday only at its end).
	prompt := s
	if i := strings.Index(prompt, "## Identity"); i >= 0 {
		prompt = prompt[i:]
	}
	if i := strings.Index(prompt, "\n# What a runtime delivers"); i >= 0 {
		prompt = prompt[:i]
	}
	if !strings.Contains(prompt, "## Identity") || strings.Contains(prompt, "Tuesdays") {
		t.Errorf("the superseded Tuesday fact is still composed:\n%s", prompt)
	}
}
