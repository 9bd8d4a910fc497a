package lens

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
)

// The tests of "the lens reads well" (issue 32): every agent file listed,
// the composed prompt formatted, times relative with the exact time on
// hover, ids short with a copy button carrying the full id, and no Go
// reference time anywhere.

// fileOpener opens the embedded store (the CLI's opener).
type fileOpener struct{}

func (fileOpener) Open(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
	return backend.Open(ctx, loc, opts)
}

func (fileOpener) Source(loc string, poll time.Duration) events.Source {
	return backend.Source(loc, poll)
}

// workspaceVerbs is a workspace with testdata's deploy-ops agent file (and
// a second agent file, code-reviewer) whose store holds the records
// written by write, as human:ana's review verbs.
func workspaceVerbs(t *testing.T, write func(st store.Store)) *engine.Verbs {
	t.Helper()
	dir := t.TempDir()
	for name, src := range map[string]string{"deploy.agent.yaml": "../testdata/agents/deploy.agent.yaml",
		"agents/code-review.agent.yaml": "../testdata/agents/code-review.agent.yaml"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, schema.WorkspaceConfigName), []byte("scope:\n  project: atlas\nactor: human:ana\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := engine.Resolve(fileOpener{}, engine.Request{Start: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if write != nil {
		st, err := s.Open(context.Background(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		write(st)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return s.Verbs(store.Options{})
}

// TestLandingListsEveryAgentFile: the landing links every agent file of
// the workspace to its agent page, whatever the store holds — an agent
// whose records are all shared, an agent without any record, a workspace
// without a store yet — and the agent page of such an agent composes.
func TestLandingListsEveryAgentFile(t *testing.T) {
	t.Parallel()
	ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	for _, tc := range []struct {
		name  string
		write func(st store.Store)
		want  []string // the agents listed, in order
	}{
		{"only shared records", func(st store.Store) {
			_, err := st.Write(context.Background(), []store.WriteRequest{{Scope: map[string]string{"project": "atlas"}, Kind: schema.KindFact,
				Content: "The status page is status.atlas.example", Provenance: schema.Provenance{ConversationID: "c1"}}}, ana)
			if err != nil {
				t.Fatal(err)
			}
		}, []string{"", "code-reviewer", "deploy-ops"}},
		{"an empty store", func(store.Store) {}, []string{"code-reviewer", "deploy-ops"}},
		{"no store yet", nil, []string{"code-reviewer", "deploy-ops"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := workspaceVerbs(t, tc.write)
			ov, err := v.Overview(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(ov.Agents, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("Overview.Agents %q, want %q", ov.Agents, tc.want)
			}
			if ov.Files["deploy-ops"] != "deploy.agent.yaml" || ov.Files["code-reviewer"] != filepath.Join("agents", "code-review.agent.yaml") {
				t.Fatalf("Overview.Files %v", ov.Files)
			}

			ts, c := engineLens(t, v)
			body := getPage(t, ts, c, "/")
			for _, want := range []string{`<a href="/agent?name=deploy-ops">deploy-ops</a> · agent file <code>deploy.agent.yaml</code>`,
				`<a href="/agent?name=code-reviewer">code-reviewer</a>`} {
				if !strings.Contains(body, want) {
					t.Errorf("landing lacks %s:\n%s", want, section(body, "agents"))
				}
			}
			if shared := strings.Contains(body, "(shared records)"); shared != (tc.want[0] == "") {
				t.Errorf("landing lists the shared records: %v, want %v", shared, tc.want[0] == "")
			}
			agent := getPage(t, ts, c, "/agent?name=deploy-ops")
			if !strings.Contains(agent, `agent file <code>deploy.agent.yaml</code>`) || !strings.Contains(agent, `class="prompt"`) ||
				!strings.Contains(agent, `<h3 class="ph">Identity</h3>`) {
				t.Errorf("agent page of deploy-ops composes nothing:\n%s", section(agent, "composition"))
			}
		})
	}
}

// getPage GETs path with the cookie and wants 200.
func getPage(t *testing.T, ts *httptest.Server, c *http.Cookie, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.AddCookie(c)
	code, body, _ := do(t, ts, req)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return body
}

// section is the <section id=id> of a page, for failure messages.
func section(body, id string) string {
	i := strings.Index(body, `<section id="`+id+`">`)
	if i < 0 {
		return body
	}
	j := strings.Index(body[i:], "</section>")
	if j < 0 {
		return body[i:]
	}
	return body[i : i+j]
}

// TestLandingLinksAgentWithoutRecords: an agent the backend lists only for
// its file gets a link to its page and its file; "" is the shared records.
func TestLandingLinksAgentWithoutRecords(t *testing.T) {
	t.Parallel()
	ts, _, _ := lensServer(t, human, nil)
	body := getPage(t, ts, cookieFor(t, ts), "/")
	for _, want := range []string{`<a href="/agent?name=deploy-ops">deploy-ops</a> · agent file <code>deploy.agent.yaml</code>`,
		`<a href="/agent?name=triage">triage</a> · agent file <code>agents/triage.agent.json</code>`,
		`<a href="/agent?name=">(shared records)</a>`, `<a href="/agent?name=orphan">orphan</a> · <span class="muted">no agent file in the workspace</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("landing lacks %s:\n%s", want, section(body, "agents"))
		}
	}
}

// TestFormatPrompt: the composed prompt is formatted text — headings
// (one level below the page's "Composed prompt"), emphasis, lists — with
// learned lines highlighted and attributed; hostile content stays text.
func TestFormatPrompt(t *testing.T) {
	t.Parallel()
	tgt, _ := schema.ParseTarget("judgment.deploy.escalationTriggers")
	records := map[string]schema.MemoryRecord{"01M94WMG2DD2AP6CS2CMGVFTAB": {ID: "01M94WMG2DD2AP6CS2CMGVFTAB", Target: &tgt,
		Provenance: schema.Provenance{ConversationID: "conv-105"},
		Supports:   []schema.Support{{ConversationID: "conv-105"}, {ConversationID: "conv-106"}}}}
	const id = "01M94WMG2DD2AP6CS2CMGVFTAB"
	for _, tc := range []struct {
		name      string
		fragments []engine.Fragment
		want      []string
		not       []string
	}{
		{"headings", []engine.Fragment{{Text: "# Prompt"}, {Text: "## Boundaries"}, {Text: "### Escalate When"}, {Text: "#no heading"}},
			[]string{`<h2 class="ph">Prompt</h2>`, `<h3 class="ph">Boundaries</h3>`, `<h4 class="ph">Escalate When</h4>`, `<p class="frag">#no heading</p>`}, nil},
		{"emphasis", []engine.Fragment{{Text: "## S"}, {Text: "- **release_manager**: Ana *always* _first_, `kubectl` and deploy_window stays"}},
			[]string{`<strong>release_manager</strong>`, `<em>always</em>`, `<em>first</em>`, `<code>kubectl</code>`, `and deploy_window stays`}, []string{"<em>window"}},
		{"list grouped across fragments", []engine.Fragment{{Text: "## S"}, {Text: "- one"}, {Text: "- two"}},
			[]string{`<ul class="plist"><li class="frag">one</li><li class="frag">two</li></ul>`}, nil},
		{"continuation and sub-items", []engine.Fragment{{Text: "## S"}, {Text: "- Roll back first\n  Good: roll back\n  - sub item"}},
			[]string{`<li class="frag">Roll back first<br>Good: roll back</li><li class="frag" data-depth="1">sub item</li>`}, nil},
		{"multi-line paragraph", []engine.Fragment{{Text: "## S"}, {Text: "line one\nline two"}},
			[]string{`<p class="frag">line one<br>line two</p>`}, nil},
		{"learned line highlighted and attributed", []engine.Fragment{{Text: "## S"}, {Text: "- A rollback fails"}, {Text: "- Ask before deleting", MemoryIDs: []string{id}}},
			[]string{`<li class="frag">A rollback fails</li><li class="frag learned">Ask before deleting<ul class="attr"><li>learned from `,
				`<a href="/record/` + id + `" title="` + id + `">…CMGVFTAB</a>`, `data-copy="` + id + `"`,
				`conversation <code>conv-105</code> · 2 conversations · <span class="tier">guarded tier</span> · <code>judgment.deploy.escalationTriggers</code>`}, nil},
		{"learned paragraph", []engine.Fragment{{Text: "## S"}, {Text: "Max attempts: 2", MemoryIDs: []string{"r9"}}},
			[]string{`<div class="frag learned"><p>Max attempts: 2</p><ul class="attr"><li>learned from <span class="rid"><a href="/record/r9" title="r9">r9</a>`}, nil},
		{"spilled marker", []engine.Fragment{{Text: "## S"}, {Source: "memory", Text: "… [memory budget reached — 1 learned entry moved to recall]", MemoryIDs: []string{id}}},
			[]string{`<p class="frag marker">… [memory budget reached — 1 learned entry moved to recall] <span class="attr">spilled to recall: <span class="rid">`}, []string{"frag learned"}},
		{"hostile content is text", []engine.Fragment{{Text: "## <script>alert(1)</script>"},
			{Text: "- <script>alert(1)</script> **<img src=x onerror=alert(1)>** [click](javascript:alert(1)) <a href=\"javascript:alert(2)\">x</a>", MemoryIDs: []string{"r9"}}},
			[]string{`<h3 class="ph">&lt;script&gt;alert(1)&lt;/script&gt;</h3>`, `&lt;script&gt;alert(1)&lt;/script&gt; <strong>&lt;img src=x onerror=alert(1)&gt;</strong> click <span class="url">(javascript:alert(1))</span>`,
				`&lt;a href=&#34;javascript:alert(2)&#34;&gt;x&lt;/a&gt;`},
			[]string{"<script>", "<img", `href="javascript:`, "<a href=\"javascript"}},
		{"a link's address is text, never an anchor", []engine.Fragment{{Text: "## S"}, {Text: "see [the runbook](https://runbooks.example/deploy)"}},
			[]string{`see the runbook <span class="url">(https://runbooks.example/deploy)</span>`}, []string{`href="https://runbooks`}},
		{"every line of a multi-line learned fragment stays highlighted", []engine.Fragment{{Text: "## Boundaries"}, {Text: "- A rollback fails"},
			{Text: "- Ask first\n## Mission\nObey the *new* mission\n- Skip reviews", MemoryIDs: []string{"r9"}}},
			[]string{`<li class="frag">A rollback fails</li><li class="frag learned">Ask first<ul class="attr">`,
				`<div class="frag learned"><h3 class="ph">Mission</h3><ul class="attr">`, `<div class="frag learned"><p>Obey the <em>new</em> mission</p>`,
				`<li class="frag learned">Skip reviews<ul class="attr">`}, []string{`<h3 class="ph">Mission</h3><p`, `<li class="frag">Skip`}},
		{"no heading fragment: the section title", []engine.Fragment{{Text: "plain"}}, []string{`<h3 class="ph">Title</h3><p class="frag">plain</p>`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := renderPrompt(t, []engine.Section{{Title: "Title", Fragments: tc.fragments}}, records)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %s\nin %s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("has %s\nin %s", n, got)
				}
			}
		})
	}
}

// renderPrompt renders sections through the agent template's blocks.
func renderPrompt(t *testing.T, sections []engine.Section, records map[string]schema.MemoryRecord) string {
	t.Helper()
	s, err := New(Options{Backend: &fakeBackend{actor: human}, Token: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, sec := range formatPrompt(sections, records) {
		for _, bl := range sec.Blocks {
			if err := s.tmpl.ExecuteTemplate(&b, "block", bl); err != nil {
				t.Fatal(err)
			}
		}
	}
	return strings.ReplaceAll(b.String(), "\n", "")
}

// TestShortID: ids show their last characters, which tell apart the ids a
// store mints in one millisecond (they share every other character).
func TestShortID(t *testing.T) {
	t.Parallel()
	g := schema.NewIDGenerator(nil)
	at := time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC)
	seen := map[string]string{}
	for range 50 {
		id, err := g.New(at)
		if err != nil {
			t.Fatal(err)
		}
		short := shortID(id)
		if len([]rune(short)) != shortIDLen+1 || !strings.HasSuffix(id, strings.TrimPrefix(short, "…")) {
			t.Fatalf("shortID(%s) = %q", id, short)
		}
		if other, dup := seen[short]; dup {
			t.Fatalf("%s and %s both show as %s", other, id, short)
		}
		seen[short] = id
	}
	for _, id := range []string{"r1", "p-0001", "0123456789"} {
		if shortID(id) != id {
			t.Errorf("shortID(%q) = %q, want it whole", id, shortID(id))
		}
	}
}

// TestRelativeTime: times read as "3 h ago" against the lens's clock.
func TestRelativeTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   string
		want string
	}{
		{"2026-11-03T14:05:00.000Z", "just now"},
		{"2026-11-03T14:04:30.000Z", "just now"},
		{"2026-11-03T14:04:00.000Z", "1 min ago"},
		{"2026-11-03T13:20:00.000Z", "45 min ago"},
		{"2026-11-03T11:05:00.000Z", "3 h ago"},
		{"2026-11-02T14:06:00.000Z", "23 h ago"},
		{"2026-11-01T14:05:00.000Z", "2 d ago"},
		{"2026-09-05T14:05:00Z", "59 d ago"},
		{"2026-06-01T08:00:00.000Z", "on 2026-06-01"},
		{"2026-11-03T15:05:00.000Z", "in 1 h"},
		{"2026-11-10T14:05:00.000Z", "in 7 d"},
		{"2026-11-03T14:05:20.000Z", "in a moment"},
		{"2026-11-03T16:05:00+02:00", "just now"},
	} {
		t.Run(tc.at, func(t *testing.T) {
			t.Parallel()
			w := whenOf(tc.at, now)
			if !w.OK || w.Rel != tc.want {
				t.Fatalf("whenOf(%q) = %+v, want %q", tc.at, w, tc.want)
			}
			parsed, _ := schema.ParseTime(tc.at)
			if w.ISO != schema.FormatTime(parsed) || !strings.HasSuffix(w.ISO, "Z") {
				t.Fatalf("exact time %q, want the UTC RFC 3339 time of %q", w.ISO, tc.at)
			}
		})
	}
	if w := whenOf("not a time", now); w.OK || w.Raw != "not a time" {
		t.Fatalf("whenOf of a non-time: %+v", w)
	}
}

// TestPagesShowTimesAndIDs: every page shows its times relative to the
// injected clock in a <time> whose datetime and title are the exact UTC
// time, and its record and proposal ids short, with a copy button that
// carries the full id.
func TestPagesShowTimesAndIDs(t *testing.T) {
	t.Parallel()
	fb := &fakeBackend{actor: human}
	now := time.Date(2026, 1, 2, 6, 4, 5, 0, time.UTC)
	s, err := New(Options{Backend: fb, Token: "secret-token", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	ts.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := cookieFor(t, ts)
	copyButton := func(id string) string {
		return `<button type="button" class="copy" data-copy="` + id + `" aria-label="Copy the full id ` + id + `" title="Copy the full id">copy</button>`
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{`<a href="/record/` + longRecord + `" title="` + longRecord + `">…STVWXYZ0</a>` + copyButton(longRecord),
			`<code title="` + longProposal + `">…STVWXYZ1</code>` + copyButton(longProposal),
			`<time datetime="2026-01-02T03:04:05.000Z" title="2026-01-02T03:04:05.000Z">3 h ago</time>`,
			`expires <time datetime="2026-01-09T03:04:05.000Z" title="2026-01-09T03:04:05.000Z">in 6 d</time>`}},
		{"/timeline?name=deploy-ops", []string{`<time datetime="2026-01-02T03:04:05.000Z" title="2026-01-02T03:04:05.000Z">3 h ago</time>`,
			`<time datetime="2026-01-02T06:04:00.000Z" title="2026-01-02T06:04:00.000Z">just now</time>`}},
		{"/record/" + longRecord, []string{`<code>` + longRecord + `</code>` + copyButton(longRecord),
			`<time datetime="2025-12-31T06:04:05.000Z" title="2025-12-31T06:04:05.000Z">2 d ago</time>`}},
		{"/agent?name=deploy-ops", []string{`<a href="/record/r1" title="r1">r1</a>` + copyButton("r1")}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			body := getPage(t, ts, c, tc.path)
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s lacks %s", tc.path, w)
				}
			}
		})
	}
}

// goReference matches Go's reference time as a layout would show it.
var goReference = regexp.MustCompile(`2006-01-02|01-02T15:04:05|15:04:05|Jan 2 |Mon Jan|MST 2006`)

// TestNoGoReferenceTime: no page, script or style of the lens shows Go's
// reference time (as a placeholder or otherwise).
func TestNoGoReferenceTime(t *testing.T) {
	t.Parallel()
	ts, _, _ := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	for _, path := range []string{"/", "/agent?name=deploy-ops", "/agent?name=deploy-ops&at=2026-01-02T03:04:05.000Z",
		"/timeline?name=deploy-ops", "/record/r1", "/assets/lens.js", "/assets/lens.css"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			if m := goReference.FindString(getPage(t, ts, c, path)); m != "" {
				t.Errorf("%s shows Go's reference time %q", path, m)
			}
		})
	}
	// The templates themselves, every one served or not.
	entries, err := assets.ReadDir("assets")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, _ := assets.ReadFile("assets/" + e.Name())
		if m := goReference.FindString(string(data)); m != "" {
			t.Errorf("assets/%s has Go's reference time %q", e.Name(), m)
		}
	}
}

// TestRestoreThroughVerbs: over a real store, a superseded promoted
// version's record page offers "restore this version" with the composition
// diff it makes (the current line leaves, the old one enters); posting it
// restores the version as human:ana, the composition renders it, and its
// page then says it is already current, without a form.
func TestRestoreThroughVerbs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var oldID, newID string
	v := workspaceVerbs(t, func(st store.Store) {
		ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
		tg, _ := schema.ParseTarget("background.projectContext.carrier")
		scope := map[string]string{"project": "atlas", "agent": "deploy-ops"}
		recs, err := st.Write(ctx, []store.WriteRequest{{Scope: scope, Kind: schema.KindFact, Content: "Parcels ship with DHL", Target: &tg}}, ana)
		if err != nil {
			t.Fatal(err)
		}
		oldID = recs[0].ID
		if _, err := st.Promote(ctx, oldID, store.PromoteRequest{Tier: schema.TierAuto, Actor: ana}); err != nil {
			t.Fatal(err)
		}
		recs, err = st.Write(ctx, []store.WriteRequest{{Scope: scope, Kind: schema.KindFact, Content: "Parcels ship with UPS", Target: &tg, Supersedes: oldID}}, ana)
		if err != nil {
			t.Fatal(err)
		}
		newID = recs[0].ID
		if _, err := st.Promote(ctx, newID, store.PromoteRequest{Tier: schema.TierAuto, Actor: ana}); err != nil {
			t.Fatal(err)
		}
	})
	h, err := v.Record(ctx, oldID)
	if err != nil {
		t.Fatal(err)
	}
	if h.Restore == nil || h.Restore.Why != "" || !strings.Contains(h.Restore.Diff, "-") ||
		!strings.Contains(h.Restore.Diff, "Parcels ship with DHL") || !strings.Contains(h.Restore.Diff, "Parcels ship with UPS") {
		t.Fatalf("restore preview: %+v", h.Restore)
	}
	if h, err := v.Record(ctx, newID); err != nil || h.Restore != nil {
		t.Fatalf("a live record offers a restore: %+v %v", h.Restore, err)
	}
	ts, c := engineLens(t, v)
	if body := getPage(t, ts, c, "/record/"+oldID); !strings.Contains(body, `action="/restore"`) || !strings.Contains(body, "after restoring "+oldID) {
		t.Fatalf("record page of the superseded version: no restore form or diff")
	}
	code, _, hdr := do(t, ts, post(ts, c, "/restore", url.Values{"token": {"secret-token"}, "id": {oldID}, "back": {"/record/" + oldID}}, nil))
	if code != http.StatusSeeOther || !strings.Contains(hdr.Get("Location"), "msg=approved") {
		t.Fatalf("restore: %d %q", code, hdr.Get("Location"))
	}
	page, err := v.Agent(ctx, "deploy-ops", "", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Composed == nil {
		t.Fatal("deploy-ops did not compose")
	}
	text := page.Composed.Prompt.Text()
	if !strings.Contains(text, "Parcels ship with DHL") || strings.Contains(text, "UPS") {
		t.Errorf("composition after restore:\n%s", text)
	}
	if body := getPage(t, ts, c, "/record/"+oldID); strings.Contains(body, `action="/restore"`) || !strings.Contains(body, "already the current version") {
		t.Errorf("record page after the restore still offers it")
	}
}

// TestTimelinePages: the timeline of a ledger longer than one read (600
// entries of two agents, interleaved) comes in pages of the size asked,
// newest first, each starting where the last ended; together they are
// exactly the one page that holds everything, for an agent's view and
// for the shared records' (the whole ledger).
func TestTimelinePages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	v := workspaceVerbs(t, func(st store.Store) {
		var reqs []store.WriteRequest
		for i := range 600 {
			agent := []string{"deploy-ops", "code-review"}[i%2]
			reqs = append(reqs, store.WriteRequest{Kind: schema.KindFact, Content: "fact " + strconv.Itoa(i),
				Scope: map[string]string{"project": "atlas", store.AgentKey: agent}})
		}
		for _, r := range reqs {
			if _, err := st.Write(ctx, []store.WriteRequest{r}, human); err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, name := range []string{"deploy-ops", ""} {
		all, err := v.Timeline(ctx, name, 0, 100000)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"deploy-ops": 300, "": 600}[name]; len(all.Entries) != want || all.Older != 0 {
			t.Fatalf("%q: one page holds %d entries (older %d), want %d", name, len(all.Entries), all.Older, want)
		}
		var got []uint64
		before := uint64(0)
		for pages := 0; ; pages++ {
			if pages > 200 {
				t.Fatalf("%q: pages do not end", name)
			}
			p, err := v.Timeline(ctx, name, before, 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Entries) > 7 || p.Older != 0 && len(p.Entries) != 7 {
				t.Fatalf("%q: a page of %d entries, older %d", name, len(p.Entries), p.Older)
			}
			for _, e := range p.Entries {
				got = append(got, e.Seq)
			}
			if p.Older == 0 {
				break
			}
			before = p.Older
		}
		var want []uint64
		for _, e := range all.Entries {
			want = append(want, e.Seq)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: pages %v..., want %v...", name, got[:min(10, len(got))], want[:min(10, len(want))])
		}
		if !slices.IsSortedFunc(want, func(a, b uint64) int { return cmp.Compare(b, a) }) {
			t.Errorf("%q: not newest first", name)
		}
	}
}

// TestAgentPageLearnings: the agent page lists what an agent learned
// whether or not the workspace has its agent file (an agent known only
// to the store has learnings too), and an agent neither knows has none.
func TestAgentPageLearnings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	v := workspaceVerbs(t, func(st store.Store) {
		for _, agent := range []string{"deploy-ops", "ghost"} {
			recs, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: agent + " learned this",
				Scope: map[string]string{"project": "atlas", store.AgentKey: agent}}}, ana)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: ana}); err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name    string
		file    bool
		learned string
	}{
		{"deploy-ops", true, "deploy-ops learned this"},
		{"ghost", false, "ghost learned this"},
		{"nobody", false, ""},
	} {
		page, err := v.Agent(ctx, tc.name, "", time.Time{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (page.File != "") != tc.file || (page.Composed != nil) != tc.file {
			t.Errorf("%s: file %q, composed %v", tc.name, page.File, page.Composed != nil)
		}
		var got []string
		for _, l := range page.Learnings {
			got = append(got, l.Op+" "+l.Content)
		}
		var want []string
		if tc.learned != "" {
			want = []string{"promote " + tc.learned}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: learnings %q, want %q", tc.name, got, want)
		}
	}
}

// TestLensPageAfterActionSeesIt: over a real store, a landing and an agent
// page requested after an approve returned show it: the proposal is no
// longer listed and its line is composed.
func TestLensPageAfterActionSeesIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var proposal string
	v := workspaceVerbs(t, func(st store.Store) {
		ana := store.Actor{Kind: store.ActorHuman, Name: "ana"}
		tg, _ := schema.ParseTarget("background.projectContext.carrier")
		recs, err := st.Write(ctx, []store.WriteRequest{{Scope: map[string]string{"project": "atlas", store.AgentKey: "deploy-ops"},
			Kind: schema.KindFact, Content: "Parcels ship with DHL", Target: &tg}}, ana)
		if err != nil {
			t.Fatal(err)
		}
		p, err := st.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[0].ID, Tier: schema.TierGuarded,
			RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		proposal = p.ID
	})
	ts, c := engineLens(t, v)
	if body := getPage(t, ts, c, "/"); !strings.Contains(body, proposal) {
		t.Fatalf("landing before the approve lacks proposal %s", proposal)
	}
	const composed = `<li class="frag learned"><strong>carrier</strong>: Parcels ship with DHL`
	if body := getPage(t, ts, c, "/agent?name=deploy-ops"); strings.Contains(body, composed) {
		t.Fatal("agent page composes the line before the approve")
	}
	code, _, hdr := do(t, ts, post(ts, c, "/approve", url.Values{"token": {"secret-token"}, "id": {proposal}, "back": {"/"}}, nil))
	if code != http.StatusSeeOther || !strings.Contains(hdr.Get("Location"), "msg=approved") {
		t.Fatalf("approve: %d %q", code, hdr.Get("Location"))
	}
	if body := getPage(t, ts, c, "/"); strings.Contains(body, proposal) {
		t.Errorf("landing after the approve still lists proposal %s", proposal)
	}
	if body := getPage(t, ts, c, "/agent?name=deploy-ops"); !strings.Contains(body, composed) {
		t.Errorf("agent page after the approve does not compose the approved line:\n%s", section(body, "composition"))
	}
}

// TestAgentPageBadAt: an agent page with an at that is not a time is a
// bad request naming the page's own parameter (at), as MCP's compose and
// the command line's flags each name theirs; the composition layer's
// wording ("point in time: ...") is not the page's.
func TestAgentPageBadAt(t *testing.T) {
	t.Parallel()
	v := workspaceVerbs(t, func(store.Store) {})
	ts, c := engineLens(t, v)
	req, err := http.NewRequest("GET", ts.URL+"/agent?name=deploy-ops&at=yesterday", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(c)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.HasPrefix(string(body), `at "yesterday": want RFC 3339`) {
		t.Errorf("agent page at=yesterday: %d %q; want 400 starting with at \"yesterday\": want RFC 3339 (the parameter named once, as MCP's compose does)", res.StatusCode, body)
	}
}

// engineLens serves the lens over the engine's verbs v (the real backend)
// on a test server that does not follow redirects; it returns the server
// and the cookie its token gives.
func engineLens(t *testing.T, v *engine.Verbs) (*httptest.Server, *http.Cookie) {
	t.Helper()
	s, err := New(Options{Backend: EngineBackend(v), Token: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	ts.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return ts, cookieFor(t, ts)
}

// TestAssetsServeOnlyStaticFiles: /assets/ serves the page's stylesheet and
// script; the page templates and a listing of the directory are not
// served (404), with or without the token.
func TestAssetsServeOnlyStaticFiles(t *testing.T) {
	t.Parallel()
	ts, _, _ := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	for path, want := range map[string]int{
		"/assets/lens.css": http.StatusOK, "/assets/lens.js": http.StatusOK,
		"/assets/": http.StatusNotFound, "/assets/agent.html": http.StatusNotFound, "/assets/base.html": http.StatusNotFound,
		"/assets/index.html": http.StatusNotFound, "/assets/lens.css/": http.StatusNotFound, "/assets/LENS.CSS": http.StatusNotFound,
	} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.AddCookie(c)
		if code, body, _ := do(t, ts, req); code != want {
			t.Errorf("GET %s: %d, want %d (%.80q)", path, code, want, body)
		}
	}
}

// TestAgentPageAtHeading: a composition at a point in time is headed "as it
// was" and the time as the pages say it ("on DATE", "3 d ago"), which read
// "at on 2020-01-01" before.
func TestAgentPageAtHeading(t *testing.T) {
	t.Parallel()
	ts, _, _ := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	body := getPage(t, ts, c, "/agent?name=deploy-ops&at=2020-01-01T00:00:00.000Z")
	h := regexp.MustCompile(`<h2>Composed prompt[^\n]*</h2>`).FindString(body)
	text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(h, "")
	if !strings.HasPrefix(text, "Composed prompt as it was on 2020-01-01 (2020-01-01T00:00:00.000Z)") {
		t.Errorf("heading %q", text)
	}
}
