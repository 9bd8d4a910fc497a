package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/lens"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// lensFixture is a workspace whose store (written by the CLI as child
// processes) holds a pending guarded proposal whose content is markup, and
// a promoted heuristic contradicted by a candidate.
type lensFixture struct {
	*evoWorkspace
	trigger, promoted, candidate, proposal string
}

func newLensFixture(t *testing.T, extraYAML string) *lensFixture {
	t.Helper()
	w := newEvoWorkspace(t, extraYAML)
	f := &lensFixture{evoWorkspace: w}
	save := func(actor, target, conv, content string) string {
		var out struct {
			Record struct{ ID string } `json:"record"`
		}
		r := w.cliJSON(&out, "memory", "save", "--scope", "project=atlas,agent=deploy-ops", "--actor", actor,
			"--target", target, "--conversation", conv, "--run", "run-"+conv, "--content", content)
		wantCode(t, r, exitOK, "save "+content)
		return out.Record.ID
	}
	f.trigger = save("agent:deploy-ops", "judgment.deploy.escalationTriggers", "c1", `<script>alert("x")</script> Page the on-call when a canary fails`)
	f.promoted = save("human:ana", "judgment.deploy.heuristics", "c2", "Always deploy on Fridays after the freeze")
	wantCode(t, w.cli("promote", f.promoted, "--actor", "human:ana"), exitOK, "promote")
	f.candidate = save("agent:deploy-ops", "judgment.deploy.heuristics", "c3", "Never deploy on Fridays after the freeze")
	var ps struct {
		Proposals []struct{ ID, RecordID string } `json:"proposals"`
	}
	w.cliJSON(&ps, "proposals", "--actor", "human:ana")
	if len(ps.Proposals) != 1 || ps.Proposals[0].RecordID != f.trigger {
		t.Fatalf("fixture proposals %+v", ps)
	}
	f.proposal = ps.Proposals[0].ID
	return f
}

// lens serves the fixture's lens in-process (the same backend agent-ls
// lens builds) with a client holding its cookie.
func (f *lensFixture) lens(t *testing.T) (*httptest.Server, *http.Client, string) {
	t.Helper()
	return lensOver(t, f.dir, storeFlags{lockTimeout: 5 * time.Second})
}

// lensOver serves the lens of the workspace at dir over sf's store.
func lensOver(t *testing.T, dir string, sf storeFlags) (*httptest.Server, *http.Client, string) {
	t.Helper()
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
		if k == "USER" {
			return "ana"
		}
		return ""
	}, cwd: dir, now: time.Now}
	v, err := lensVerbs(e, e.opener(), sf)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := lens.New(lens.Options{Backend: lens.EngineBackend(v), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Get(ts.URL + "/?token=" + srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	c.Jar = &oneJar{cookies: res.Cookies()}
	return ts, c, srv.Token()
}

// oneJar sends the lens's cookie back.
type oneJar struct{ cookies []*http.Cookie }

func (j *oneJar) SetCookies(*url.URL, []*http.Cookie) {}
func (j *oneJar) Cookies(*url.URL) []*http.Cookie     { return j.cookies }

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func postForm(t *testing.T, c *http.Client, u string, form url.Values) (int, string) {
	t.Helper()
	res, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return res.StatusCode, res.Header.Get("Location")
}

type shownOut struct {
	Record struct {
		ID, InvalidAt, SupersededBy string
	} `json:"record"`
	Promotion *store.Promotion    `json:"promotion"`
	Ledger    []store.LedgerEntry `json:"ledger"`
}

func TestLensLandingAndDecisions(t *testing.T) {
	t.Parallel()
	f := newLensFixture(t, "")
	ts, c, token := f.lens(t)

	code, body := get(t, c, ts.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("landing %d: %s", code, body)
	}
	for _, want := range []string{`data-id="` + f.proposal + `"`, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Page the on-call",
		"Always deploy on Fridays after the freeze", "Never deploy on Fridays after the freeze", "agent:deploy-ops",
		"&#43;- &lt;script&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("landing lacks %q", want)
		}
	}
	if strings.Contains(body, `<script>alert`) {
		t.Error("memory content rendered as markup")
	}

	// Approve through the lens; the CLI sees the promotion.
	code, loc := postForm(t, c, ts.URL+"/approve", url.Values{"token": {token}, "id": {f.proposal}, "back": {"/"}})
	if code != http.StatusSeeOther || !strings.Contains(loc, "msg=approved") {
		t.Fatalf("approve: %d %s", code, loc)
	}
	var sh shownOut
	f.cliJSON(&sh, "memory", "show", f.trigger)
	if sh.Promotion == nil || sh.Ledger[len(sh.Ledger)-1].Op != store.OpApprove || sh.Ledger[len(sh.Ledger)-1].Actor.String() != "human:ana" {
		t.Fatalf("after approve, memory show: %+v", sh)
	}
	// Approving it again is refused, not an error page.
	code, loc = postForm(t, c, ts.URL+"/approve", url.Values{"token": {token}, "id": {f.proposal}})
	if code != http.StatusSeeOther || !strings.Contains(loc, "err=") {
		t.Fatalf("second approve: %d %s", code, loc)
	}

	// Reject a second proposal with a reason.
	var saved struct {
		Record struct{ ID string } `json:"record"`
	}
	f.cliJSON(&saved, "memory", "save", "--scope", "project=atlas,agent=deploy-ops", "--actor", "agent:deploy-ops",
		"--target", "judgment.deploy.constraints", "--conversation", "c4", "--content", "Never deploy during an incident")
	var ps struct {
		Proposals []struct{ ID string } `json:"proposals"`
	}
	f.cliJSON(&ps, "proposals")
	if len(ps.Proposals) != 1 {
		t.Fatalf("proposals %+v", ps)
	}
	code, loc = postForm(t, c, ts.URL+"/reject", url.Values{"token": {token}, "id": {ps.Proposals[0].ID}, "reason": {"covered by the incident runbook"}})
	if code != http.StatusSeeOther || !strings.Contains(loc, "msg=rejected") {
		t.Fatalf("reject: %d %s", code, loc)
	}
	f.cliJSON(&sh, "memory", "show", saved.Record.ID)
	rejected := false
	for _, e := range sh.Ledger {
		rejected = rejected || e.Op == store.OpReject && strings.Contains(e.Reason, "covered by the incident runbook") && e.Actor.String() == "human:ana"
	}
	if !rejected || sh.Promotion != nil {
		t.Fatalf("after reject: %+v", sh)
	}

	// Keep this one: the candidate supersedes the promoted heuristic.
	code, loc = postForm(t, c, ts.URL+"/supersede", url.Values{"token": {token}, "keep": {f.candidate}, "drop": {f.promoted}})
	if code != http.StatusSeeOther || strings.Contains(loc, "err=") {
		t.Fatalf("supersede: %d %s", code, loc)
	}
	f.cliJSON(&sh, "memory", "show", f.promoted)
	if sh.Record.InvalidAt == "" || sh.Record.SupersededBy != f.candidate {
		t.Fatalf("after keep this one, the dropped record: %+v", sh.Record)
	}

	// The agent page, the timeline and the record page answer.
	for _, p := range []string{"/agent?name=deploy-ops", "/agent?name=deploy-ops&since=1h", "/timeline?name=deploy-ops", "/record/" + f.trigger,
		"/agent?name=deploy-ops&at=" + url.QueryEscape(sh.Ledger[0].At)} {
		code, body := get(t, c, ts.URL+p)
		if code != http.StatusOK || strings.Contains(body, "<script>alert") {
			t.Errorf("%s: %d", p, code)
		}
	}
	_, body = get(t, c, ts.URL+"/agent?name=deploy-ops")
	if !strings.Contains(body, `class="frag learned"`) || !strings.Contains(body, `href="/record/`+f.trigger+`"`) {
		t.Error("agent page: the approved line is not highlighted and attributed")
	}
	if !strings.Contains(body, `class="totals"`) {
		t.Error("agent page: no composition health")
	}
	// Run garden: the health report appears on the agent page.
	code, loc = postForm(t, c, ts.URL+"/garden", url.Values{"token": {token}, "name": {"deploy-ops"}, "back": {"/agent?name=deploy-ops"}})
	if code != http.StatusSeeOther || !strings.Contains(loc, "msg=garden+ran") || !strings.HasPrefix(loc, "/agent?") {
		t.Fatalf("garden: %d %s", code, loc)
	}
	if _, body = get(t, c, ts.URL+loc); !strings.Contains(body, `<ul class="findings">`) || !strings.Contains(body, "garden ran at") {
		t.Error("agent page after Run garden: no health report")
	}
	if code, _ := get(t, c, ts.URL+"/record/NOPE"); code != http.StatusNotFound {
		t.Errorf("unknown record: %d", code)
	}
}

func TestLensReadOnlyForAgentActor(t *testing.T) {
	t.Parallel()
	f := newLensFixture(t, "actor: agent:deploy-ops\n")
	// Another agent's record and proposal: not in deploy-ops's view.
	var other struct {
		Record struct{ ID string } `json:"record"`
	}
	const secret = "Reviewer secret: block PRs from the intern"
	f.cliJSON(&other, "memory", "save", "--scope", "project=atlas,agent=code-reviewer", "--actor", "agent:code-reviewer",
		"--target", "judgment.code-review.constraints", "--conversation", "c9", "--content", secret)
	ts, c, token := f.lens(t)
	code, body := get(t, c, ts.URL+"/")
	if code != http.StatusOK || strings.Contains(body, `action="/approve"`) {
		t.Fatalf("landing for an agent actor: %d, actions shown", code)
	}
	if !strings.Contains(body, "Page the on-call") || strings.Contains(body, secret) || strings.Contains(body, "code-reviewer") {
		t.Fatalf("an agent actor's landing shows another agent, or not its own proposal")
	}
	for _, p := range []string{"/record/" + other.Record.ID, "/agent?name=code-reviewer", "/timeline?name=code-reviewer"} {
		code, body := get(t, c, ts.URL+p)
		if code != http.StatusNotFound || strings.Contains(body, secret) {
			t.Errorf("%s as agent:deploy-ops: %d, want 404 without content", p, code)
		}
	}
	for _, p := range []string{"/timeline?name=deploy-ops", "/timeline?name=", "/agent?name=deploy-ops&since=30d"} {
		if code, body := get(t, c, ts.URL+p); code != http.StatusOK || strings.Contains(body, secret) || strings.Contains(body, other.Record.ID) {
			t.Errorf("%s as agent:deploy-ops: %d or another agent's record shown", p, code)
		}
	}
	if code, _ := postForm(t, c, ts.URL+"/approve", url.Values{"token": {token}, "id": {f.proposal}}); code != http.StatusForbidden {
		t.Fatalf("approve as agent actor: %d, want 403", code)
	}
	var sh shownOut
	f.cliJSON(&sh, "memory", "show", f.trigger, "--actor", "human:ana")
	if sh.Promotion != nil {
		t.Fatal("a read-only lens promoted")
	}
}

// TestLensCommand runs agent-ls lens as a child: the URL is the first line,
// a non-loopback --addr is refused (exit 2), SIGTERM ends it with exit 0.
func TestLensCommand(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	r := w.cli("lens", "--addr", "0.0.0.0:0")
	wantCode(t, r, exitUsage, "lens --addr 0.0.0.0:0")
	if !strings.Contains(r.stderr, "loopback") {
		t.Fatalf("stderr %q", r.stderr)
	}
	cmd := exec.Command(agentLSBin, "lens")
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "USER=ana")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && !strings.HasPrefix(line, "http://127.0.0.1:") || !strings.Contains(line, "/?token=") {
			t.Errorf("first line %q (%v)", line, err)
		}
		u := strings.TrimSpace(line)
		if res, err := http.Get(strings.Split(u, "?")[0]); err == nil {
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("without the token: %d", res.StatusCode)
			}
			res.Body.Close()
		} else {
			t.Errorf("get: %v", err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("lens after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("lens did not start or stop")
	}
}

// TestLensPostgres: the lens over a PostgreSQL store (--store URL) shows a
// proposal the CLI opened there and approves it through the gates.
func TestLensPostgres(t *testing.T) {
	t.Parallel()
	u := pgtest.Fresh(t)
	w := newEvoWorkspace(t, "")
	var saved struct {
		Record struct{ ID string } `json:"record"`
	}
	w.cliJSON(&saved, "memory", "save", "--store", u, "--scope", "project=atlas,agent=deploy-ops", "--actor", "agent:deploy-ops",
		"--target", "judgment.deploy.escalationTriggers", "--conversation", "c1", "--content", "Page the on-call when a canary fails")
	var ps struct {
		Proposals []struct{ ID string } `json:"proposals"`
	}
	w.cliJSON(&ps, "proposals", "--store", u)
	if len(ps.Proposals) != 1 {
		t.Fatalf("proposals %+v", ps)
	}
	ts, c, token := lensOver(t, w.dir, storeFlags{path: u, lockTimeout: 5 * time.Second})
	if code, body := get(t, c, ts.URL+"/"); code != http.StatusOK || !strings.Contains(body, `data-id="`+ps.Proposals[0].ID+`"`) {
		t.Fatalf("landing over PostgreSQL: %d, proposal %s not shown", code, ps.Proposals[0].ID)
	}
	if code, loc := postForm(t, c, ts.URL+"/approve", url.Values{"token": {token}, "id": {ps.Proposals[0].ID}}); code != http.StatusSeeOther || !strings.Contains(loc, "msg=approved") {
		t.Fatalf("approve: %d %s", code, loc)
	}
	var sh shownOut
	w.cliJSON(&sh, "memory", "show", "--store", u, saved.Record.ID)
	if sh.Promotion == nil {
		t.Fatalf("not promoted after the lens approved: %+v", sh)
	}
}

// liveLens serves the lens of the workspace at dir over sf's store as
// agent-ls lens does (with its event stream) and opens its event stream
// with the token's cookie; it returns the stream's lines.
func liveLens(t *testing.T, dir string, sf storeFlags) <-chan string {
	t.Helper()
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "ana" }, cwd: dir, now: time.Now}
	v, err := lensVerbs(e, e.opener(), sf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	evs, closeEvents, err := lens.SessionEvents(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := lens.New(lens.Options{Backend: lens.EngineBackend(v), Events: evs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := lens.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(srv.URL(ln.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	c.Jar = &oneJar{cookies: res.Cookies()}
	res, err = c.Get("http://" + ln.Addr().String() + "/events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		res.Body.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		closeEvents()
	})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l := <-lines; l != "retry: 1000" {
		t.Fatalf("event stream starts %q", l)
	}
	return lines
}

// waitEvent waits for an event of type typ on the stream.
func waitEvent(t *testing.T, lines <-chan string, typ string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("event stream ended")
			}
			if strings.HasPrefix(l, "data: ") && strings.Contains(l, `"type":"`+typ+`"`) {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event", typ)
		}
	}
}

// TestLensLiveBeforeStoreExists: a lens started before anything was saved
// (no store, no store directory) still pushes the first save another
// process makes to an open page.
func TestLensLiveBeforeStoreExists(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	lines := liveLens(t, w.dir, storeFlags{lockTimeout: 5 * time.Second})
	wantCode(t, w.cli("memory", "save", "--scope", "project=atlas,agent=deploy-ops", "--actor", "agent:deploy-ops",
		"--target", "judgment.deploy.escalationTriggers", "--conversation", "c1", "--content", "Page the on-call"), exitOK, "save")
	waitEvent(t, lines, "agent.memory.write")
}

// TestLensLivePostgres: over a PostgreSQL store the page learns of another
// process's save through LISTEN/NOTIFY (backend.Source).
func TestLensLivePostgres(t *testing.T) {
	t.Parallel()
	u := pgtest.Fresh(t)
	w := newEvoWorkspace(t, "")
	wantCode(t, w.cli("memory", "save", "--store", u, "--scope", "project=atlas,agent=deploy-ops", "--content", "first"), exitOK, "save")
	lines := liveLens(t, w.dir, storeFlags{path: u, lockTimeout: 5 * time.Second})
	wantCode(t, w.cli("memory", "save", "--store", u, "--scope", "project=atlas,agent=deploy-ops", "--actor", "agent:deploy-ops",
		"--target", "judgment.deploy.escalationTriggers", "--conversation", "c1", "--content", "Page the on-call"), exitOK, "save")
	waitEvent(t, lines, "agent.memory.propose")
}
