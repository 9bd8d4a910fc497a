package lsp

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// oversizeAllocBound is the most a 100 MB frame may make the process
// allocate: 16 MiB. Reading the frame whole allocates its 100 MB (and
// decoding it more); skipping it allocates the 64 KiB probe and the
// bufio buffer's reuse.
const oversizeAllocBound = 16 << 20

// sendStreamed writes one frame whose body is prefix, n filler bytes and
// suffix, from a reused 1 MiB buffer (the test allocates almost nothing).
func sendStreamed(w io.Writer, prefix string, n int, suffix string) error {
	if _, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(prefix)+n+len(suffix), prefix); err != nil {
		return err
	}
	buf := bytes.Repeat([]byte("a"), 1<<20)
	for sent := 0; sent < n; sent += len(buf) {
		if _, err := w.Write(buf[:min(len(buf), n-sent)]); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, suffix)
	return err
}

// TestWireOversizeFrame: a 100 MB didOpen (a literal 100 MB line) and a
// 100 MB request are over the 64 MiB frame limit. The didOpen, a
// notification, is refused with one window/showMessage error naming the
// method and the size; the request gets InvalidRequest with its id; the
// server keeps serving (shutdown answers) and the whole exchange allocates
// less than oversizeAllocBound (runtime.MemStats.TotalAlloc).
func TestWireOversizeFrame(t *testing.T) {
	env := newTestEnv(t)
	r := startRaw(t, Options{NoWatch: true})
	rawInit(r, env.root)
	uri := string(pathToURI(filepath.Join(env.root, "huge.agent.yaml")))
	const filler = 100_000_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)

	frames := []struct{ prefix, suffix string }{
		{`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"` + uri + `","languageId":"yaml","version":1,"text":"k: `, `"}}}`},
		{`{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"` + uri + `"},"position":{"line":0,"character":0},"pad":"`, `"}}`},
	}
	sent := make(chan error, 1)
	_ = r.c.SetWriteDeadline(time.Now().Add(failsafe))
	go func() {
		for _, f := range frames {
			if err := sendStreamed(r.c, f.prefix, filler, f.suffix); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	var shown string
	for shown == "" {
		m := r.recv()
		if m["method"] == "window/showMessage" {
			shown, _ = m["params"].(map[string]any)["message"].(string)
		} else if m["method"] == nil {
			t.Fatalf("a response before the didOpen's refusal: %v", m)
		}
	}
	wantShown := fmt.Sprintf("agent-ls refused a textDocument/didOpen message of %d bytes: over the 64 MiB message limit", len(frames[0].prefix)+filler+len(frames[0].suffix))
	if shown != wantShown {
		t.Errorf("showMessage %q, want %q", shown, wantShown)
	}
	m := r.recvResponse()
	if m["id"] != float64(7) || errCode(m) != -32600 {
		t.Fatalf("oversized request answered %v, want InvalidRequest for id 7", m)
	}
	if msg, _ := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "over the 64 MiB limit") {
		t.Errorf("error message %q does not name the limit", msg)
	}
	if err := <-sent; err != nil {
		t.Fatalf("send: %v", err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("two %d-byte frames refused: allocated %.1f MiB", filler, float64(alloc)/(1<<20))
	if alloc > oversizeAllocBound {
		t.Errorf("allocated %d bytes, over the %d bound", alloc, oversizeAllocBound)
	}
	r.send(`{"jsonrpc":"2.0","id":8,"method":"shutdown"}`)
	if m := r.recvResponse(); m["id"] != float64(8) || m["error"] != nil {
		t.Fatalf("shutdown after the refusals: %v", m)
	}
}
