// Package lens is the evolution lens: a local web page for the people who
// review what agents learn (ADR-0008). It serves the pending-review queue
// with each proposal's composition diff, the conflicts panel, each agent's
// composed prompt with its learned lines attributed, its sizes against
// budget and ceiling, its health report, learnings and ledger timeline, and
// pushes changes to the page as Server-Sent Events. It reads and changes
// the store only through a Backend (the engine and gates the CLI uses); it
// binds loopback only and asks a per-start token of every request.
//
// The README's picture of the lens (docs/images/lens.png) is the agent page
// over `make demo`'s workspace; scripts/lens-screenshot.sh retakes it.
package lens

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/events"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

//go:embed assets
var assets embed.FS

// staticFiles are the files of assets/ the lens serves under /assets/.
var staticFiles = []string{"lens.css", "lens.js"}

// Options configure a Server.
type Options struct {
	Backend Backend
	// Events feeds the live page; nil serves no live updates.
	Events Events
	// ReadOnly hides and refuses every action (an agent actor is configured).
	ReadOnly bool
	// Token is the access token; "" draws a random one.
	Token string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Timeouts bound the lens's connections (zero fields: DefaultTimeouts').
	Timeouts Timeouts
	// MaxStreams caps the live pages' event streams open at once (0:
	// DefaultMaxStreams); one more is answered 503.
	MaxStreams int
	// MaxPages caps the pages and actions computed at once (0:
	// DefaultMaxPages); more wait their turn. A page over a big store
	// holds hundreds of MB while it computes.
	MaxPages int
}

// Timeouts are the lens's connection bounds: reading a request's headers,
// keeping an idle keep-alive connection, and writing one response (an
// event stream's deadline is renewed for each event it writes).
type Timeouts struct {
	ReadHeader time.Duration
	Idle       time.Duration
	Write      time.Duration
}

// DefaultTimeouts are the bounds of a lens whose Options set none.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Idle: 60 * time.Second, Write: 30 * time.Second}

func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts
	if t.ReadHeader > 0 {
		d.ReadHeader = t.ReadHeader
	}
	if t.Idle > 0 {
		d.Idle = t.Idle
	}
	if t.Write > 0 {
		d.Write = t.Write
	}
	return d
}

// DefaultMaxStreams is how many live pages may follow the store at once.
const DefaultMaxStreams = 32

// DefaultMaxPages is how many pages and actions are computed at once by
// default: the processors, and at least two, so a page is never waiting
// behind a single slow one (the first landing over a big store).
func DefaultMaxPages() int { return max(2, runtime.GOMAXPROCS(0)) }

// Server serves the lens.
type Server struct {
	b        Backend
	events   Events
	readOnly bool
	token    string
	now      func() time.Time
	tmpl     *template.Template
	static   fs.FS // assets/, of which staticFiles are served

	mu   sync.Mutex
	subs map[chan events.Event]struct{}
	// timeouts and maxStreams bound connections and event streams.
	timeouts   Timeouts
	maxStreams int
	pages      chan struct{}                  // a slot per page or action being computed (MaxPages)
	health     map[string]engine.HealthReport // the last garden run per agent
}

// New builds a Server.
func New(o Options) (*Server, error) {
	if o.Backend == nil {
		return nil, errors.New("lens: no backend")
	}
	tok := o.Token
	if tok == "" {
		var err error
		if tok, err = newToken(); err != nil {
			return nil, err
		}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	maxStreams := o.MaxStreams
	if maxStreams <= 0 {
		maxStreams = DefaultMaxStreams
	}
	maxPages := o.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages()
	}
	clock := template.FuncMap{"when": func(s string) whenView { return whenOf(s, now()) }}
	tmpl, err := template.New("lens").Funcs(funcs).Funcs(clock).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("lens templates: %w", err)
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	return &Server{b: o.Backend, events: o.Events, readOnly: o.ReadOnly || o.Backend.Actor().Kind != store.ActorHuman,
		token: tok, now: now, tmpl: tmpl, static: sub,
		subs: map[chan events.Event]struct{}{}, health: map[string]engine.HealthReport{},
		timeouts: o.Timeouts.withDefaults(), maxStreams: maxStreams, pages: make(chan struct{}, maxPages)}, nil
}

// Token is the access token every request must carry.
func (s *Server) Token() string { return s.token }

// URL is the address to open: the listener's with the token.
func (s *Server) URL(addr net.Addr) string {
	return "http://" + addr.String() + "/?token=" + url.QueryEscape(s.token)
}

// Handler is the lens's HTTP handler, guarded (see guard).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.armed(s.landing))
	mux.HandleFunc("GET /agent", s.armed(s.agent))
	mux.HandleFunc("GET /timeline", s.armed(s.timeline))
	mux.HandleFunc("GET /record/{id}", s.armed(s.record))
	mux.HandleFunc("GET /events", s.sse)
	// The stylesheet and the script only: not the page templates beside
	// them, nor a listing of the directory.
	for _, name := range staticFiles {
		mux.HandleFunc("GET /assets/"+name, func(w http.ResponseWriter, r *http.Request) { http.ServeFileFS(w, r, s.static, name) })
	}
	mux.HandleFunc("POST /approve", s.armed(s.act(s.approve)))
	mux.HandleFunc("POST /reject", s.armed(s.act(s.reject)))
	mux.HandleFunc("POST /supersede", s.armed(s.act(s.supersede)))
	mux.HandleFunc("POST /restore", s.armed(s.act(s.restore)))
	mux.HandleFunc("POST /garden", s.armed(s.act(s.garden)))
	return s.guard(mux)
}

// armed runs a store-touching request with the server's write timeout
// counted from h's first write, not from the request (nor its wait for
// the store): a page that takes long to compute (the landing over a store
// of a million records) still reaches its reader, while a reader too slow
// to take it is cut off as before. Requests run concurrently, at most
// MaxPages at once (a request whose client leaves while it waits is
// dropped): the Backend orders them (pages read together, an action runs
// alone).
func (s *Server) armed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{})
		select {
		case s.pages <- struct{}{}:
			defer func() { <-s.pages }()
		case <-r.Context().Done():
			return
		}
		h(&armedWriter{ResponseWriter: w, rc: rc, d: s.timeouts.Write}, r)
	}
}

// armedWriter sets its response's write deadline d ahead at the first
// write (of the header or the body).
type armedWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	d     time.Duration
	armed bool
}

func (a *armedWriter) arm() {
	if !a.armed {
		a.armed = true
		_ = a.rc.SetWriteDeadline(time.Now().Add(a.d))
	}
}

func (a *armedWriter) WriteHeader(code int) {
	a.arm()
	a.ResponseWriter.WriteHeader(code)
}

func (a *armedWriter) Write(p []byte) (int, error) {
	a.arm()
	return a.ResponseWriter.Write(p)
}

// Unwrap is the ResponseWriter underneath (http.ResponseController).
func (a *armedWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// Serve serves on ln until ctx ends, then shuts down (in-flight requests
// get a few seconds) and returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	t := s.timeouts
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: t.ReadHeader, WriteTimeout: t.Write,
		IdleTimeout: t.Idle, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	if s.events != nil {
		go s.follow(ctx)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// followRetry is how long the lens waits before following the store again
// after the event stream stopped (a store directory that does not exist
// yet, a database connection lost for good).
const followRetry = time.Second

// follow feeds the live pages until ctx ends; a stream that stops is
// started again (the pages stay usable meanwhile, without live updates).
func (s *Server) follow(ctx context.Context) {
	for {
		_ = s.events.Follow(ctx, s.publish)
		select {
		case <-ctx.Done():
			return
		case <-time.After(followRetry):
		}
	}
}

// publish hands an event to every live page; a page that is behind gets
// the next one (each event only says "reload").
func (s *Server) publish(ev events.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		select {
		case c <- ev:
		default:
		}
	}
}

// subscribe adds a live page's channel; ok is false when maxStreams pages
// already follow the store.
func (s *Server) subscribe() (c chan events.Event, done func(), ok bool) {
	c = make(chan events.Event, 1)
	s.mu.Lock()
	if len(s.subs) >= s.maxStreams {
		s.mu.Unlock()
		return nil, nil, false
	}
	s.subs[c] = struct{}{}
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}, true
}

// sse streams the store's events to a page as Server-Sent Events
// ("event: change", data the event as JSON).
func (s *Server) sse(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	c, done, ok := s.subscribe()
	if !ok {
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("too many live pages follow the store (at most %d): close one and reload", s.maxStreams), http.StatusServiceUnavailable)
		return
	}
	defer done()
	// A stream outlives the server's write timeout: each write gets its own.
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.timeouts.Write)) }
	deadline()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	fmt.Fprint(w, "retry: 1000\n: live\n\n")
	if err := rc.Flush(); err != nil {
		return
	}
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
		case ev := <-c:
			fmt.Fprintf(w, "event: change\ndata: %s\n\n", ev.JSON())
		}
		deadline()
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// page is what every template gets.
type page struct {
	Title    string
	Token    string
	ReadOnly bool
	Actor    string
	Msg      string
	Err      string
	Back     string // this page, for forms to return to
	Data     any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, name, title string, data any) {
	p := page{Title: title, Token: s.token, ReadOnly: s.readOnly, Actor: s.b.Actor().String(),
		Msg: r.URL.Query().Get("msg"), Err: r.URL.Query().Get("err"), Back: backOf(r), Data: data}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	if err := s.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprint(w, b.String())
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, store.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, store.ErrForbidden), errors.Is(err, engine.ErrRefused):
		code = http.StatusForbidden
	case errors.Is(err, store.ErrInvalid):
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}

// landingData is the landing page's data.
type landingData struct {
	Overview
}

func (s *Server) landing(w http.ResponseWriter, r *http.Request) {
	ov, err := s.b.Overview(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, r, "landing.html", "Needs a human", landingData{ov})
}

// agentData is the agent page's data.
type agentData struct {
	AgentView
	Since  string
	Chart  chart
	Health *engine.HealthReport
}

func (s *Server) agent(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	since := q.Get("since")
	if since == "" {
		since = "7d"
	}
	from, err := schema.ParseSince(since, s.now())
	if err != nil {
		http.Error(w, "since: "+err.Error(), http.StatusBadRequest)
		return
	}
	v, err := s.b.Agent(r.Context(), name, q.Get("at"), from)
	if ae, ok := errors.AsType[*engine.AtError](err); ok {
		http.Error(w, schema.Named("at", ae.Err).Error(), http.StatusBadRequest)
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	d := agentData{AgentView: v, Since: since, Chart: newChart(v)}
	s.mu.Lock()
	if h, ok := s.health[name]; ok {
		d.Health = &h
	}
	s.mu.Unlock()
	s.render(w, r, "agent.html", agentTitle(name), d)
}

func agentTitle(name string) string {
	if name == "" {
		return "Shared records"
	}
	return "Agent " + name
}

// timelineData is the timeline page's data: a page of entries, newest
// first; Before is the page's start (0: the newest), Older the next's.
type timelineData struct {
	Name    string
	Entries []store.LedgerEntry
	Before  uint64
	Older   uint64
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	var before uint64
	if b := q.Get("before"); b != "" {
		var err error
		if before, err = strconv.ParseUint(b, 10, 64); err != nil || before == 0 {
			http.Error(w, fmt.Sprintf("before: %q is not a ledger sequence (a positive integer)", b), http.StatusBadRequest)
			return
		}
	}
	p, err := s.b.Timeline(r.Context(), name, before)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, r, "timeline.html", "Timeline of "+strings.ToLower(agentTitle(name)[:1])+agentTitle(name)[1:],
		timelineData{Name: name, Entries: p.Entries, Before: before, Older: p.Older})
}

func (s *Server) record(w http.ResponseWriter, r *http.Request) {
	v, err := s.b.Record(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, r, "record.html", "Record "+v.Record.ID, v)
}

// act wraps a state change: refused in read-only mode; it answers with a
// redirect to the form's back page carrying the outcome (msg or err).
func (s *Server) act(fn func(r *http.Request) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.readOnly {
			http.Error(w, "forbidden: the lens is read-only for "+s.b.Actor().String()+" (only a human actor decides)", http.StatusForbidden)
			return
		}
		msg, err := fn(r)
		back := r.PostForm.Get("back")
		if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.HasPrefix(back, "/\\") {
			back = "/"
		}
		u, perr := url.Parse(back)
		if perr != nil {
			u = &url.URL{Path: "/"}
		}
		q := u.Query()
		q.Del("msg")
		q.Del("err")
		if err != nil {
			if !errors.Is(err, engine.ErrRefused) && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrForbidden) &&
				!errors.Is(err, store.ErrConflict) && !errors.Is(err, errBadForm) {
				s.fail(w, err)
				return
			}
			q.Set("err", err.Error())
		} else {
			q.Set("msg", msg)
		}
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
	}
}

var errBadForm = errors.New("incomplete form")

func outcomeText(o engine.Outcome) string {
	subject := o.RecordID
	if o.ProposalID != "" {
		subject = o.ProposalID
	}
	t := fmt.Sprintf("%s %s", o.Status, subject)
	if o.Reason != "" {
		t += ": " + o.Reason
	}
	return t
}

// outcome turns an engine answer into a message, or an error for refusals.
func outcome(o engine.Outcome, err error) (string, error) {
	if err != nil {
		if errors.Is(err, engine.ErrRefused) && o.Reason != "" {
			return "", fmt.Errorf("%w: %s", engine.ErrRefused, o.Reason)
		}
		return "", err
	}
	if o.Status == engine.StatusBlocked || o.Status == engine.StatusRefused {
		return "", fmt.Errorf("%w: %s", engine.ErrRefused, outcomeText(o))
	}
	return outcomeText(o), nil
}

func (s *Server) approve(r *http.Request) (string, error) {
	id := r.PostForm.Get("id")
	if id == "" {
		return "", fmt.Errorf("%w: approve: no proposal id", errBadForm)
	}
	return outcome(s.b.Approve(r.Context(), id, strings.TrimSpace(r.PostForm.Get("content"))))
}

func (s *Server) reject(r *http.Request) (string, error) {
	id, reason := r.PostForm.Get("id"), strings.TrimSpace(r.PostForm.Get("reason"))
	if id == "" || reason == "" {
		return "", fmt.Errorf("%w: reject needs a proposal id and a reason", errBadForm)
	}
	return outcome(s.b.Reject(r.Context(), id, reason))
}

func (s *Server) supersede(r *http.Request) (string, error) {
	keep, drop := r.PostForm.Get("keep"), r.PostForm.Get("drop")
	if keep == "" || drop == "" {
		return "", fmt.Errorf("%w: keep this one needs both records", errBadForm)
	}
	return outcome(s.b.Supersede(r.Context(), keep, drop))
}

func (s *Server) restore(r *http.Request) (string, error) {
	id := r.PostForm.Get("id")
	if id == "" {
		return "", fmt.Errorf("%w: restore: no record id", errBadForm)
	}
	return outcome(s.b.Restore(r.Context(), id))
}

func (s *Server) garden(r *http.Request) (string, error) {
	name := r.PostForm.Get("name")
	h, err := s.b.Garden(r.Context(), name)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.health[name] = h
	s.mu.Unlock()
	return fmt.Sprintf("garden ran at %s: %d finding(s), %d proposal(s) opened", h.At, len(h.Findings), len(h.Proposals)), nil
}

// backOf is the page a form returns to: the request's path and query
// without the previous outcome.
func backOf(r *http.Request) string {
	q := r.URL.Query()
	q.Del("msg")
	q.Del("err")
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	return u.RequestURI()
}
