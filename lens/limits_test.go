package lens

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"
)

// serveLens runs the lens's own Serve (its http.Server and bounds) on a
// loopback port with o; it returns the base URL.
func serveLens(t *testing.T, o Options) string {
	t.Helper()
	if o.Backend == nil {
		o.Backend = &fakeBackend{actor: human}
	}
	o.Token = "secret-token"
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// TestLensStreamCap: issue 31, reproduction 10 — event streams are capped;
// one past the cap gets a clear 503, and a closed stream frees its place.
func TestLensStreamCap(t *testing.T) {
	t.Parallel()
	base := serveLens(t, Options{Events: make(chanEvents), MaxStreams: 3})
	open := func() *http.Response {
		req, _ := http.NewRequest("GET", base+"/events", nil)
		req.AddCookie(&http.Cookie{Name: cookieName("secret-token"), Value: "secret-token"})
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var streams []*http.Response
	for i := 0; i < 3; i++ {
		res := open()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %d", i, res.StatusCode)
		}
		// The preamble arrives once the stream is subscribed.
		if line, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
			t.Fatalf("stream %d preamble %q, %v", i, line, err)
		}
		streams = append(streams, res)
	}
	over := open()
	body, _ := io.ReadAll(over.Body)
	over.Body.Close()
	if over.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "at most 3") || over.Header.Get("Retry-After") == "" {
		t.Fatalf("stream past the cap: %d %q (Retry-After %q), want 503 naming the cap", over.StatusCode, body, over.Header.Get("Retry-After"))
	}
	streams[0].Body.Close()
	// The closed stream's place frees once the server sees it gone; poll
	// (bounded) for it, since the server learns of the close on its side.
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := open()
		if res.StatusCode == http.StatusOK {
			res.Body.Close()
			break
		}
		res.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("a closed stream never freed its place")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range streams[1:] {
		r.Body.Close()
	}
}

// TestLensIdleConnectionsClose: issue 31, reproduction 10 — an idle
// keep-alive connection is closed by the server after the idle timeout,
// and a client that never finishes its headers is cut off.
func TestLensIdleConnectionsClose(t *testing.T) {
	t.Parallel()
	base := serveLens(t, Options{Timeouts: Timeouts{ReadHeader: 300 * time.Millisecond, Idle: 300 * time.Millisecond}})
	addr := strings.TrimPrefix(base, "http://")
	for _, tc := range []struct{ name, send string }{
		{"idle keep-alive", "GET /?token=secret-token HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"},
		{"unfinished headers", "GET / HTTP/1.1\r\nHost: " + addr + "\r\n"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(conn, tc.send)
		// The server must close the connection by itself; the read's own
		// deadline only bounds the test.
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.Copy(io.Discard, conn)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the server kept the connection open", tc.name)
		}
		conn.Close()
	}
}

// slowOverview is fakeBackend with a landing that takes d to compute, as
// a landing over a store of a million records does.
type slowOverview struct {
	*fakeBackend
	d time.Duration
}

func (b slowOverview) Overview(ctx context.Context) (Overview, error) {
	select {
	case <-time.After(b.d):
	case <-ctx.Done():
		return Overview{}, ctx.Err()
	}
	return b.fakeBackend.Overview(ctx)
}

// TestLensSlowPageArrives: the write timeout bounds writing a page, not
// computing it: a landing that takes three times the timeout to compute
// still reaches its reader whole (it was cut off with no response).
func TestLensSlowPageArrives(t *testing.T) {
	t.Parallel()
	const write = 300 * time.Millisecond
	base := serveLens(t, Options{Backend: slowOverview{&fakeBackend{actor: human}, 3 * write}, Timeouts: Timeouts{Write: write}})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Jar: jar}).Get(base + "/?token=secret-token")
	if err != nil {
		t.Fatalf("landing: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "deploy-ops") || !strings.Contains(string(body), "</html>") {
		t.Fatalf("landing: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
}

// blockedOverview is fakeBackend with a landing that, once entered (a
// value on entered), computes until release is closed: a first landing
// over a store of a million records, held for as long as the test needs.
type blockedOverview struct {
	*fakeBackend
	entered chan struct{}
	release chan struct{}
}

func (b blockedOverview) Overview(ctx context.Context) (Overview, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return Overview{}, ctx.Err()
	}
	return b.fakeBackend.Overview(ctx)
}

// getLens GETs base+path with the lens's cookie within ctx; it returns
// the status and body.
func getLens(ctx context.Context, base, path string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.AddCookie(&http.Cookie{Name: cookieName("secret-token"), Value: "secret-token"})
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, string(body), err
}

// TestLensReadsRunTogether: while a landing is being computed (the first
// load over a large store), the other read-only pages — an agent, its
// timeline, a record, another landing — are served; they waited behind
// it, one page at a time.
func TestLensReadsRunTogether(t *testing.T) {
	t.Parallel()
	b := blockedOverview{fakeBackend: &fakeBackend{actor: human}, entered: make(chan struct{}, 2), release: make(chan struct{})}
	base := serveLens(t, Options{Backend: b})
	landing := make(chan error, 1)
	go func() {
		code, body, err := getLens(context.Background(), base, "/")
		if err == nil && (code != http.StatusOK || !strings.Contains(body, "deploy-ops")) {
			err = fmt.Errorf("%d %s", code, body)
		}
		landing <- err
	}()
	<-b.entered
	// The deadline only bounds a failing run: the pages are due at once.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct{ path, want string }{
		{"/agent?name=deploy-ops", "Agent deploy-ops"},
		{"/timeline?name=deploy-ops", "Timeline of agent deploy-ops"},
		{"/record/r1", "Record r1"},
	} {
		code, body, err := getLens(ctx, base, tc.path)
		if err != nil || code != http.StatusOK || !strings.Contains(body, tc.want) {
			t.Errorf("%s during a landing: %d, %v; want it served at once (%q)", tc.path, code, err, tc.want)
		}
	}
	// A second landing starts computing beside the first.
	second := make(chan error, 1)
	go func() {
		_, _, err := getLens(ctx, base, "/")
		second <- err
	}()
	select {
	case <-b.entered:
	case <-ctx.Done():
		t.Error("a second landing waited for the first")
	}
	close(b.release)
	if err := <-landing; err != nil {
		t.Errorf("the first landing: %v", err)
	}
	if err := <-second; err != nil {
		t.Errorf("the second landing: %v", err)
	}
}

// TestLensMaxPages: pages are computed at most MaxPages at once; one more
// waits for a slot (here, for the held landing) and is served once it
// frees; a request whose client leaves while it waits takes no slot.
func TestLensMaxPages(t *testing.T) {
	t.Parallel()
	b := blockedOverview{fakeBackend: &fakeBackend{actor: human}, entered: make(chan struct{}, 2), release: make(chan struct{})}
	base := serveLens(t, Options{Backend: b, MaxPages: 1})
	landing := make(chan error, 1)
	go func() {
		_, _, err := getLens(context.Background(), base, "/")
		landing <- err
	}()
	<-b.entered
	// While the one slot is held, an agent page waits: its client gives up.
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if code, _, err := getLens(short, base, "/agent?name=deploy-ops"); err == nil {
		t.Errorf("an agent page beside a held landing with MaxPages 1 was served (%d)", code)
	}
	close(b.release)
	if err := <-landing; err != nil {
		t.Fatalf("the landing: %v", err)
	}
	// The slot is free again, and the abandoned request did not keep one.
	ctx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second) // a failsafe
	defer cancel2()
	if code, body, err := getLens(ctx, base, "/agent?name=deploy-ops"); err != nil || code != http.StatusOK || !strings.Contains(body, "Agent deploy-ops") {
		t.Errorf("the agent page after the landing: %d, %v", code, err)
	}
}
