package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and a reader after it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// answers maps each answer's id to its line.
func answers(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for line := range strings.Lines(out) {
		var a struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		m[string(a.ID)] = line
	}
	return m
}

const (
	initLine        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// TestServeStdioAnswersBeforeEOF: input that ends right after its requests
// (a tools/list, saves, a search, garbage between them) gets every answer
// before ServeStdio returns, run after run, in process under the race
// detector; the saves of one server queue for the store.
func TestServeStdioAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const runs, saves = 10, 8
	for run := range runs {
		lines := []string{initLine, initializedLine, "garbage", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}
		for i := range saves {
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_save","arguments":{"content":"run %d lesson %d zq%dq%d"}}}`, 10+i, run, i, run, i))
		}
		lines = append(lines, `{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"memory_search","arguments":{"query":"lesson"}}}`)
		var out syncBuffer
		err := f.srv.ServeStdio(context.Background(), strings.NewReader(strings.Join(lines, "\n")), &out, FrameOptions{Max: 1 << 20})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		got := answers(t, out.String())
		want := []string{"1", "2", `"last"`, "null"}
		for i := range saves {
			want = append(want, fmt.Sprint(10+i))
		}
		for _, id := range want {
			line, ok := got[id]
			if !ok || (id != "null" && strings.Contains(line, `"error"`)) || strings.Contains(line, "store locked") {
				t.Fatalf("run %d: id %s answered %q; all:\n%s", run, id, line, out.String())
			}
		}
	}
}

// frameSetup is GuardFrames over input with its answers in out.
func frameSetup(input string, o FrameOptions) (io.ReadCloser, io.WriteCloser, *syncBuffer) {
	if o.Max == 0 {
		o.Max = 1 << 20
	}
	out := &syncBuffer{}
	r, w := GuardFrames(strings.NewReader(input), out, o)
	return r, w, out
}

// readOne is one Read of r: one message.
func readOne(t *testing.T, r io.Reader) string {
	t.Helper()
	p := make([]byte, 1<<20)
	n, err := r.Read(p)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(p[:n])
}

// readAll reads r to its end in a goroutine; the channel gets what it read.
func readAll(r io.Reader) <-chan string {
	ch := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(r)
		ch <- string(data)
	}()
	return ch
}

// TestGuardFramesHoldsEOFUntilAnswered: the end of input reaches the reader
// only after the answer of every request passed on went out through the
// writer (an id 1.0 is answered as 1, as the SDK numbers it); notifications
// and refused lines are not waited for.
func TestGuardFramesHoldsEOFUntilAnswered(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}` + "\n" + initializedLine + "\n" + `{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\n" + "garbage"
	r, w, out := frameSetup(in, FrameOptions{Drain: time.Hour})
	var passed []string
	for range 3 {
		passed = append(passed, readOne(t, r))
	}
	var answered atomic.Int32
	done := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(r)
		if n := answered.Load(); n != 2 {
			data = fmt.Appendf(data, "EOF after %d answers", n)
		}
		done <- string(data)
	}()
	// The first answer alone does not release the end of input; the
	// answer's id is the SDK's number 1.
	answered.Add(1)
	if _, err := w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	answered.Add(1)
	if _, err := w.Write([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "" {
		t.Errorf("after the answers the SDK read %q", got)
	}
	if len(passed) != 3 || strings.Contains(strings.Join(passed, ""), "garbage") {
		t.Errorf("the SDK read %q", passed)
	}
	if !strings.Contains(out.String(), `"code":-32700`) {
		t.Errorf("garbage was not answered: %s", out.String())
	}
}

// TestGuardFramesDrainIsBounded: a request never answered holds the end of
// input for Drain at most; closing the reader ends the wait at once.
func TestGuardFramesDrainIsBounded(t *testing.T) {
	t.Parallel()
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	r, _, _ := frameSetup(req, FrameOptions{Drain: 10 * time.Millisecond})
	if got := <-readAll(r); got != req+"\n" {
		t.Errorf("read %q", got)
	}
	r, _, _ = frameSetup(req, FrameOptions{Drain: time.Hour})
	p := make([]byte, 1024)
	if n, err := r.Read(p); err != nil || string(p[:n]) != req+"\n" {
		t.Fatalf("first read: %q, %v", p[:n], err)
	}
	ch := readAll(r)
	r.Close()
	if got := <-ch; got != "" {
		t.Errorf("after close: %q", got)
	}
}

// TestGuardFramesRefusals: what is refused never reaches the SDK, and an
// id in use by a request not yet answered is refused until it is answered.
func TestGuardFramesRefusals(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7.0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
		`[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","id":"x","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		"",
		"   ",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"payload":` + strings.Repeat(`{"a":`, 97) + "1" + strings.Repeat("}", 97) + `}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"payload":` + strings.Repeat(`{"a":`, 98) + "1" + strings.Repeat("}", 98) + `}}}`,
	}
	r, w, out := frameSetup(strings.Join(lines, "\n"), FrameOptions{Drain: time.Hour})
	var passed []string
	for range 3 {
		passed = append(passed, readOne(t, r))
	}
	ch := readAll(r)
	// The end of input waits for ids 7 and 2.
	for _, id := range []string{"7", "2"} {
		if _, err := w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}` + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	if rest := <-ch; rest != "" {
		t.Errorf("after the last message: %q", rest)
	}
	want := []string{lines[0] + "\n", lines[4] + "\n", lines[9] + "\n"}
	if !slices.Equal(passed, want) {
		t.Errorf("passed on:\n%q\nwant:\n%q", passed, want)
	}
	got := out.String()
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: id 7 is in use`,
		`{"jsonrpc":"2.0","id":7.0,"error":{"code":-32600,"message":"invalid request: id 7.0 is in use`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"id\" must be a string or a number`,
		`[{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"invalid request: JSON-RPC batches are not supported`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32600`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"message nests deeper than 100 levels`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("answers lack %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 5+2 {
		t.Errorf("%d lines out, want 5 refusals and the test's 2 answers (the notification-only batch and blank lines get none):\n%s", n, got)
	}
}
