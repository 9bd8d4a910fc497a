package lens

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
	"github.com/agent-ls/agent-ls/store/storetest"
)

const evil = `<script>alert("lens")</script>`

// fakeBackend records the actions it is asked for; its data holds a
// proposal and a conflict whose content is markup.
type fakeBackend struct {
	actor store.Actor
	mu    sync.Mutex
	calls []string
}

func (f *fakeBackend) Actor() store.Actor { return f.actor }

func (f *fakeBackend) Overview(context.Context) (Overview, error) {
	t, _ := schema.ParseTarget("judgment.deploy.constraints")
	rec := schema.MemoryRecord{ID: "r1", Content: evil + " never on Fridays", Target: &t}
	other := schema.MemoryRecord{ID: "r2", Content: "always on Fridays"}
	return Overview{Agents: []string{"", "deploy-ops", "orphan", "triage"},
		Files: map[string]string{"deploy-ops": "deploy.agent.yaml", "triage": "agents/triage.agent.json"},
		Proposals: []Proposal{{Proposal: store.Proposal{ID: "p1", Kind: store.ProposePromote, RecordID: "r1", Tier: schema.TierGuarded,
			RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}}, Agent: "deploy-ops", Content: rec.Content,
			Target: t.String(), Diff: "--- current\n+++ after\n@@ -1 +1,2 @@\n a\n+- " + evil + "\n"},
			{Proposal: store.Proposal{ID: longProposal, Kind: store.ProposePromote, RecordID: longRecord, Tier: schema.TierGuarded,
				RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}, CreatedAt: "2026-01-02T03:04:05.000Z", ExpiresAt: "2026-01-09T03:04:05.000Z"},
				Agent: "deploy-ops", Content: "Page the on-call when a canary fails", Target: t.String()}},
		Conflicts: []Conflict{{Agent: "deploy-ops", Conflict: engine.Conflict{Kind: engine.ConflictContradiction, RecordID: rec.ID, With: other.ID, Text: other.Content, Why: "opposite polarity",
			Target: t.String(), Record: &engine.ConflictSide{RecordID: rec.ID, State: "candidate", Content: rec.Content, Target: t.String()},
			Other: &engine.ConflictSide{RecordID: other.ID, State: "promoted", Content: other.Content}}}},
	}, nil
}

func (f *fakeBackend) Agent(_ context.Context, name, at string, _ time.Time) (AgentView, error) {
	if name != "deploy-ops" {
		return AgentView{}, fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
	}
	return AgentView{Name: name, At: at, Sections: []engine.Section{{Title: "Boundaries", Fragments: []engine.Fragment{
		{Text: "- " + evil, MemoryIDs: []string{"r1"}}}}}, Sizes: []Size{{Primitive: "judgment", Chars: 30, Budget: 20}}, Chars: 30, Ceiling: 100,
		Records: map[string]schema.MemoryRecord{"r1": {ID: "r1", Content: evil}}}, nil
}

func (f *fakeBackend) Timeline(_ context.Context, _ string, before uint64) (engine.TimelinePage, error) {
	if before != 0 {
		return engine.TimelinePage{Entries: []store.LedgerEntry{{Seq: 0, At: "2026-01-01T00:00:00.000Z", Op: store.OpWrite, RecordID: "r0"}}}, nil
	}
	return engine.TimelinePage{Entries: []store.LedgerEntry{
		{Seq: 3, At: "2026-01-02T06:04:00.000Z", Op: store.OpPropose, RecordID: longRecord, ProposalID: longProposal},
		{Seq: 2, At: "2026-01-02T03:04:06.000Z", Op: store.OpConflict, RecordID: "r1", Reason: evil,
			Conflict: &store.ConflictInfo{Records: []string{"r1", "r2"}, Target: "judgment.deploy.heuristics"}},
		{Seq: 1, At: "2026-01-02T03:04:05.000Z", Op: store.OpPromote, RecordID: "r1"}}, Older: 1}, nil
}

// longRecord and longProposal are ids as the stores draw them.
const (
	longRecord   = "01JABCDEFGHJKMNPQRSTVWXYZ0"
	longProposal = "01JPROPOSAL0KMNPQRSTVWXYZ1"
)

func (f *fakeBackend) Record(_ context.Context, id string) (RecordView, error) {
	v := RecordView{Record: schema.MemoryRecord{ID: id, Content: evil, CreatedAt: "2025-12-31T06:04:05.000Z"}}
	if strings.HasPrefix(id, "old") {
		// A superseded version: restoring it is offered with its diff.
		v.Record.InvalidAt, v.Record.SupersededBy = "2026-01-01T00:00:00.000Z", "r9"
		v.Restore = &engine.RestorePreview{Diff: "--- current\n+++ after restoring " + id + "\n@@ -1 +1 @@\n-- new line\n+- " + evil + "\n"}
		if id == "old-current" {
			v.Restore = &engine.RestorePreview{Why: "record old-current is already the current version on its slot, as r9: nothing to restore"}
		}
	}
	return v, nil
}

func (f *fakeBackend) Restore(_ context.Context, id string) (engine.Outcome, error) {
	f.call("restore " + id)
	return engine.Outcome{Status: engine.StatusApproved, RecordID: "r10", Reason: "restored " + id + " as r10, superseding r9"}, nil
}

func (f *fakeBackend) call(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeBackend) Garden(_ context.Context, name string) (engine.HealthReport, error) {
	f.call("garden " + name)
	return engine.HealthReport{Agent: name}, nil
}

func (f *fakeBackend) Approve(_ context.Context, id, content string) (engine.Outcome, error) {
	if content != "" {
		f.call("approve " + id + " content " + content)
		return engine.Outcome{Status: engine.StatusApproved, ProposalID: id}, nil
	}
	f.call("approve " + id)
	return engine.Outcome{Status: engine.StatusApproved, ProposalID: id}, nil
}

func (f *fakeBackend) Reject(_ context.Context, id, reason string) (engine.Outcome, error) {
	f.call("reject " + id + " " + reason)
	return engine.Outcome{Status: engine.StatusRejected, ProposalID: id}, nil
}

func (f *fakeBackend) Supersede(_ context.Context, keep, drop string) (engine.Outcome, error) {
	f.call("supersede " + keep + " " + drop)
	return engine.Outcome{}, fmt.Errorf("%w: not in this test", engine.ErrRefused)
}

// lensServer starts a lens over a fake backend; the client carries no
// cookie and follows no redirects.
func lensServer(t *testing.T, actor store.Actor, ev Events) (*httptest.Server, *Server, *fakeBackend) {
	t.Helper()
	fb := &fakeBackend{actor: actor}
	s, err := New(Options{Backend: fb, Events: ev, Token: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if ev != nil {
		go ev.Follow(ctx, s.publish) //nolint:errcheck
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { cancel(); ts.Close() })
	ts.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return ts, s, fb
}

var human = store.Actor{Kind: store.ActorHuman, Name: "ana"}

func cookieFor(t *testing.T, ts *httptest.Server) *http.Cookie {
	t.Helper()
	res, err := ts.Client().Get(ts.URL + "/?token=secret-token")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("first load: %d to %q, want 303 to /", res.StatusCode, res.Header.Get("Location"))
	}
	cs := res.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Value != "secret-token" {
		t.Fatalf("cookie %+v: want one HttpOnly SameSite=Strict cookie with the token", cs)
	}
	return cs[0]
}

func do(t *testing.T, ts *httptest.Server, req *http.Request) (int, string, http.Header) {
	t.Helper()
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Header
}

func TestTokenRequired(t *testing.T) {
	t.Parallel()
	ts, _, _ := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	for _, tc := range []struct {
		name   string
		path   string
		cookie *http.Cookie
		host   string
		want   int
	}{
		{"no token", "/", nil, "", http.StatusUnauthorized},
		{"no token, agent page", "/agent?name=deploy-ops", nil, "", http.StatusUnauthorized},
		{"no token, record", "/record/r1", nil, "", http.StatusUnauthorized},
		{"no token, events", "/events", nil, "", http.StatusUnauthorized},
		{"no token, assets", "/assets/lens.js", nil, "", http.StatusUnauthorized},
		{"wrong token in the URL", "/?token=guess", nil, "", http.StatusUnauthorized},
		{"wrong cookie", "/", &http.Cookie{Name: c.Name, Value: "guess"}, "", http.StatusUnauthorized},
		{"cookie", "/", c, "", http.StatusOK},
		{"cookie, other host name (rebinding)", "/", c, "evil.example:80", http.StatusForbidden},
		{"cookie, localhost", "/", c, "localhost", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL+tc.path, nil)
			if tc.cookie != nil {
				req.AddCookie(tc.cookie)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			code, body, h := do(t, ts, req)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %s", code, tc.want, body)
			}
			if code != http.StatusOK && (strings.Contains(body, "Fridays") || strings.Contains(body, "deploy-ops")) {
				t.Fatalf("a refused request got data: %s", body)
			}
			if h.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("CORS header set: %v", h)
			}
			if code == http.StatusOK && !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
				t.Fatalf("no CSP: %v", h)
			}
		})
	}
}

func TestContentIsEscaped(t *testing.T) {
	t.Parallel()
	ts, _, _ := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	for _, path := range []string{"/", "/agent?name=deploy-ops", "/record/r1", "/timeline?name=deploy-ops"} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.AddCookie(c)
		code, body, _ := do(t, ts, req)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s: memory content rendered as markup", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(&#34;lens&#34;)&lt;/script&gt;") {
			t.Errorf("%s: escaped content missing", path)
		}
	}
}

// TestTimeline: entries newest first, each linking to the composition at
// its time; a conflict entry names both records and the slot.
func TestTimeline(t *testing.T) {
	t.Parallel()
	ts, _, _ := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	req, _ := http.NewRequest("GET", ts.URL+"/timeline?name=deploy-ops", nil)
	req.AddCookie(c)
	code, body, _ := do(t, ts, req)
	if code != http.StatusOK {
		t.Fatalf("timeline: %d %s", code, body)
	}
	conflict, learned := strings.Index(body, "conflict seen"), strings.Index(body, "<b>learned</b>")
	if conflict < 0 || learned < 0 || conflict > learned {
		t.Errorf("timeline order or labels wrong (conflict at %d, learned at %d)", conflict, learned)
	}
	for _, want := range []string{`href="/agent?name=deploy-ops&amp;at=2026-01-02T03%3a04%3a05.000Z"`, `href="/record/r2"`, "<code>judgment.deploy.heuristics</code>",
		`href="/timeline?name=deploy-ops&amp;before=1">older entries`} {
		if !strings.Contains(body, want) {
			t.Errorf("timeline lacks %s", want)
		}
	}
	if strings.Contains(body, "newest entries") {
		t.Error("the newest page links to the newest entries")
	}
	// The older page, and a before that is not a sequence.
	req, _ = http.NewRequest("GET", ts.URL+"/timeline?name=deploy-ops&before=1", nil)
	req.AddCookie(c)
	if code, body, _ = do(t, ts, req); code != http.StatusOK || !strings.Contains(body, `href="/record/r0"`) ||
		!strings.Contains(body, `href="/timeline?name=deploy-ops">newest entries`) || strings.Contains(body, "older entries") {
		t.Errorf("older page: %d\n%s", code, body)
	}
	for _, bad := range []string{"x", "-1", "0", "99999999999999999999999"} {
		req, _ = http.NewRequest("GET", ts.URL+"/timeline?name=deploy-ops&before="+bad, nil)
		req.AddCookie(c)
		if code, body, _ = do(t, ts, req); code != http.StatusBadRequest || !strings.Contains(body, "before") {
			t.Errorf("before=%s: %d %s, want 400 naming before", bad, code, body)
		}
	}
}

func post(ts *httptest.Server, c *http.Cookie, path string, form url.Values, header map[string]string) *http.Request {
	req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c != nil {
		req.AddCookie(c)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

func TestStateChangesNeedTokenAndSameOrigin(t *testing.T) {
	t.Parallel()
	ts, _, fb := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	good := url.Values{"token": {"secret-token"}, "id": {"p1"}, "back": {"/"}}
	for _, tc := range []struct {
		name   string
		method string
		cookie *http.Cookie
		form   url.Values
		header map[string]string
		want   int
	}{
		{"no cookie", "POST", nil, good, nil, http.StatusUnauthorized},
		{"no form token", "POST", c, url.Values{"id": {"p1"}}, nil, http.StatusForbidden},
		{"wrong form token", "POST", c, url.Values{"id": {"p1"}, "token": {"x"}}, nil, http.StatusForbidden},
		{"cross-site fetch", "POST", c, good, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"other origin", "POST", c, good, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"GET does not act", "GET", c, good, nil, http.StatusMethodNotAllowed},
		{"PUT", "PUT", c, good, nil, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := post(ts, tc.cookie, "/approve", tc.form, tc.header)
			req.Method = tc.method
			if tc.method == "GET" {
				req, _ = http.NewRequest("GET", ts.URL+"/approve?id=p1", nil)
				req.AddCookie(c)
			}
			if code, body, _ := do(t, ts, req); code != tc.want {
				t.Fatalf("status %d, want %d: %s", code, tc.want, body)
			}
		})
	}
	if len(fb.calls) != 0 {
		t.Fatalf("refused requests reached the backend: %v", fb.calls)
	}
	// Same origin, with the token: the action runs.
	code, _, h := do(t, ts, post(ts, c, "/approve", good, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": ts.URL}))
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/?msg=approved") {
		t.Fatalf("approve: %d %q", code, h.Get("Location"))
	}
	code, _, h = do(t, ts, post(ts, c, "/reject", url.Values{"token": {"secret-token"}, "id": {"p1"}, "reason": {"too broad"}, "back": {"//evil.example/"}}, nil))
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/?") {
		t.Fatalf("reject: %d %q (an off-site back must not be followed)", code, h.Get("Location"))
	}
	code, _, h = do(t, ts, post(ts, c, "/reject", url.Values{"token": {"secret-token"}, "id": {"p1"}}, nil))
	if code != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "err=") {
		t.Fatalf("reject without a reason: %d %q", code, h.Get("Location"))
	}
	code, _, h = do(t, ts, post(ts, c, "/supersede", url.Values{"token": {"secret-token"}, "keep": {"r1"}, "drop": {"r2"}}, nil))
	if code != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "err=refused") {
		t.Fatalf("refused supersede: %d %q", code, h.Get("Location"))
	}
	code, _, h = do(t, ts, post(ts, c, "/restore", url.Values{"token": {"secret-token"}, "id": {"old1"}, "back": {"/record/old1"}}, nil))
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/record/old1?msg=approved") {
		t.Fatalf("restore: %d %q", code, h.Get("Location"))
	}
	code, _, h = do(t, ts, post(ts, c, "/restore", url.Values{"token": {"secret-token"}}, nil))
	if code != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "err=") {
		t.Fatalf("restore without an id: %d %q", code, h.Get("Location"))
	}
	for _, form := range []url.Values{{"id": {"old1"}}, {"id": {"old1"}, "token": {"x"}}} {
		if code, _, _ := do(t, ts, post(ts, c, "/restore", form, nil)); code != http.StatusForbidden {
			t.Fatalf("restore without the form token: %d, want 403", code)
		}
	}
	if code, _, _ := do(t, ts, post(ts, c, "/restore", url.Values{"token": {"secret-token"}, "id": {"old1"}}, map[string]string{"Origin": "http://evil.example"})); code != http.StatusForbidden {
		t.Fatalf("cross-origin restore: %d, want 403", code)
	}
	want := []string{"approve p1", "reject p1 too broad", "supersede r1 r2", "restore old1"}
	if strings.Join(fb.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("backend calls %v, want %v", fb.calls, want)
	}
}

func TestReadOnlyForAgentActor(t *testing.T) {
	t.Parallel()
	ts, _, fb := lensServer(t, store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}, nil)
	c := cookieFor(t, ts)
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.AddCookie(c)
	_, body, _ := do(t, ts, req)
	if strings.Contains(body, `action="/approve"`) || !strings.Contains(body, "read-only") {
		t.Fatalf("read-only page shows actions")
	}
	req, _ = http.NewRequest("GET", ts.URL+"/record/old1", nil)
	req.AddCookie(c)
	if _, body, _ = do(t, ts, req); strings.Contains(body, `action="/restore"`) || !strings.Contains(body, "Restore this version") {
		t.Fatalf("read-only record page: want the restore diff without its form:\n%s", body)
	}
	for _, p := range []string{"/approve", "/reject", "/supersede", "/garden", "/restore"} {
		code, _, _ := do(t, ts, post(ts, c, p, url.Values{"token": {"secret-token"}, "id": {"p1"}, "reason": {"x"}, "keep": {"a"}, "drop": {"b"}}, nil))
		if code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", p, code)
		}
	}
	if len(fb.calls) != 0 {
		t.Fatalf("read-only lens acted: %v", fb.calls)
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
		{"[::]:0", false},
		{"192.0.2.1:0", false},
		{"example.com:0", false},
		{"127.0.0.1", false},
	} {
		ln, err := Listen(tc.addr)
		if ln != nil {
			ln.Close()
		}
		if tc.ok != (err == nil) {
			t.Errorf("Listen(%q): %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if !tc.ok && strings.Contains(tc.addr, ":0") && tc.addr != "127.0.0.1" && !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Listen(%q): %v, want ErrNotLoopback", tc.addr, err)
		}
	}
}

// chanEvents is an Events fed by the test.
type chanEvents chan events.Event

func (c chanEvents) Follow(ctx context.Context, fn func(events.Event)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-c:
			fn(ev)
		}
	}
}

func TestServerSentEvents(t *testing.T) {
	t.Parallel()
	ch := make(chanEvents)
	ts, s, _ := lensServer(t, human, ch)
	c := cookieFor(t, ts)
	req, _ := http.NewRequest("GET", ts.URL+"/events", nil)
	req.AddCookie(c)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	buf := make([]byte, 4096)
	n, _ := res.Body.Read(buf) // the preamble, sent once subscribed
	if !strings.Contains(string(buf[:n]), ": live") {
		t.Fatalf("preamble %q", buf[:n])
	}
	_ = s
	ch <- events.Event{Type: events.TypeOf(store.OpPropose), Seq: 7, ProposalID: "p9"}
	var got strings.Builder
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(got.String(), "\n\n") && time.Now().Before(deadline) {
		n, err := res.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(got.String(), "event: change\ndata: {\"type\":\"agent.memory.propose\",\"seq\":7,") {
		t.Fatalf("event stream %q", got.String())
	}
}

// wakeSource is an events.Source the test wakes.
type wakeSource struct {
	ch      chan struct{}
	started chan struct{}
}

func (w *wakeSource) Watch(ctx context.Context) (<-chan struct{}, error) {
	close(w.started)
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.ch:
				select {
				case out <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

func (w *wakeSource) Err() error { return nil }

// TestStoreEvents: the live page's events start when the lens does (what
// the store held before is no event), a wake-up without a new ledger entry
// is none either, and each new entry is one typed event.
func TestStoreEvents(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clockMu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	tick := func() { clockMu.Lock(); clock = clock.Add(time.Second); clockMu.Unlock() }
	st := memstore.New(store.Options{Now: now})
	agent := store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}
	write := func(content string) {
		t.Helper()
		if _, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: content,
			Scope: map[string]string{store.AgentKey: "deploy-ops"}}}, agent); err != nil {
			t.Fatal(err)
		}
	}
	write("before the lens started")
	tick()
	src := &wakeSource{ch: make(chan struct{}), started: make(chan struct{})}
	got := make(chan events.Event, 10)
	done := make(chan error, 1)
	go func() { done <- StoreEvents(st, src, now).Follow(ctx, func(e events.Event) { got <- e }) }()
	<-src.started
	src.ch <- struct{}{} // nothing new
	tick()
	write("after")
	src.ch <- struct{}{}
	select {
	case e := <-got:
		if e.Type != events.TypeOf(store.OpWrite) || e.Seq != 2 || e.Actor != "agent:deploy-ops" {
			t.Fatalf("first event %+v, want the write after the start (seq 2)", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for the new entry")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		t.Fatalf("extra event %+v", e)
	default:
	}
}

// TestStoreEventsReadNoBacklog: the lens's follower starts at the ledger's
// newest entry and never reads the ledger before it: its first read is
// one entry (the head), every later one starts past what it read, so a
// store with a long ledger costs the live page what is new, not the
// ledger.
func TestStoreEventsReadNoBacklog(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := memstore.New(store.Options{})
	write := func() {
		t.Helper()
		if _, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "fact"}}, human); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		write()
	}
	r := &storetest.LedgerReads{Reader: st}
	src := &wakeSource{ch: make(chan struct{}), started: make(chan struct{})}
	got := make(chan events.Event, 10)
	done := make(chan error, 1)
	go func() { done <- StoreEvents(r, src, time.Now).Follow(ctx, func(e events.Event) { got <- e }) }()
	<-src.started
	for want := uint64(6); want <= 7; want++ {
		write()
		src.ch <- struct{}{}
		if e := <-got; e.Seq != want {
			t.Fatalf("event %d, want %d", e.Seq, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	seen := r.Filters()
	if len(seen) < 3 || seen[0].Limit != 1 {
		t.Fatalf("ledger reads %+v: want the head's (one entry) first", seen)
	}
	for _, f := range seen[1:] {
		if f.After < 5 {
			t.Errorf("a read went back past the head (entry 5): %+v", f)
		}
	}
}

// flakySource is an events.Source whose watch the test wakes or fails.
type flakySource struct {
	mu      sync.Mutex
	cur     chan struct{}
	err     error
	watches chan struct{} // a value per Watch started
}

func (f *flakySource) Watch(ctx context.Context) (<-chan struct{}, error) {
	f.mu.Lock()
	f.cur, f.err = make(chan struct{}, 1), nil
	ch := f.cur
	f.mu.Unlock()
	f.watches <- struct{}{}
	return ch, nil
}

func (f *flakySource) Err() error { f.mu.Lock(); defer f.mu.Unlock(); return f.err }

func (f *flakySource) wake() { f.mu.Lock(); f.cur <- struct{}{}; f.mu.Unlock() }

func (f *flakySource) fail() {
	f.mu.Lock()
	f.err = errors.New("source lost")
	close(f.cur)
	f.mu.Unlock()
}

// TestStoreEventsResume: a Follow started again after its source failed
// delivers what was written in between, and nothing it delivered before.
func TestStoreEventsResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memstore.New(store.Options{})
	write := func(content string) {
		t.Helper()
		if _, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: content}}, human); err != nil {
			t.Fatal(err)
		}
	}
	src := &flakySource{watches: make(chan struct{}, 2)}
	ev := StoreEvents(st, src, func() time.Time { return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) })
	var got []uint64
	follow := func() chan error {
		done := make(chan error, 1)
		go func() { done <- ev.Follow(ctx, func(e events.Event) { got = append(got, e.Seq) }) }()
		<-src.watches
		return done
	}
	done := follow()
	write("one")
	src.wake()
	write("two") // written while the source is lost
	src.fail()
	if err := <-done; err == nil {
		t.Fatal("Follow returned nil after its source failed")
	}
	done = follow() // the first read catches up
	write("three")
	src.wake()
	src.fail()
	<-done
	if fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("events %v, want [1 2 3] (each once)", got)
	}
}

// TestRecordRestore: a superseded version's record page offers "restore
// this version" with its composition diff (escaped) and a form carrying
// the token, posting to /restore; a version that may not be restored says
// why without a form; a live record offers nothing.
func TestRecordRestore(t *testing.T) {
	t.Parallel()
	ts, _, fb := lensServer(t, human, nil)
	c := cookieFor(t, ts)
	get := func(path string) string {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.AddCookie(c)
		code, body, _ := do(t, ts, req)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		return body
	}
	body := get("/record/old1")
	for _, want := range []string{"Restore this version", `action="/restore"`, `name="id" value="old1"`, `name="token" value="secret-token"`,
		`name="back" value="/record/old1"`, "after restoring old1", "&lt;script&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("record page lacks %q", want)
		}
	}
	if strings.Contains(body, evil) {
		t.Error("the restore diff is not escaped")
	}
	body = get("/record/old-current")
	if !strings.Contains(body, "already the current version") || strings.Contains(body, `action="/restore"`) {
		t.Errorf("a version that may not be restored: want why, no form")
	}
	if body = get("/record/r1"); strings.Contains(body, "Restore this version") {
		t.Errorf("a live record offers a restore")
	}
	if len(fb.calls) != 0 {
		t.Fatalf("pages acted: %v", fb.calls)
	}
}
