package lens

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveLens runs the lens's own Serve (its http.Server and bounds) on a
// loopback port with o; it returns the base URL.
func serveLens(t *testing.T, o Options) string {
	t.Helper()
	o.Backend = &fakeBackend{actor: human}
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
