package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serveGarbageDeadline bounds one child run: a server that does not exit
// after the end of its input fails as a hang (not a timing assertion).
const serveGarbageDeadline = 30 * time.Second

func lspFrame(body []byte) []byte {
	return append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
}

// garbageMessages are the valid messages the generator mutates.
func garbageMessages(uri string) []string {
	doc := `{"uri":"` + uri + `/a.agent.yaml"}`
	return []string{
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"` + uri + `/a.agent.yaml","languageId":"yaml","version":1,"text":"roleTemplate:\n  name: x\n  persona: {identity: i, tone: t}\nmission: {objective: o}\n"}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"` + uri + `/a.agent.yaml","version":2},"contentChanges":[{"text":"a: [\n"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":` + doc + `,"position":{"line":1,"character":3}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{"textDocument":` + doc + `,"position":{"line":0,"character":0}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"textDocument/inlayHint","params":{"textDocument":` + doc + `,"range":{"start":{"line":0,"character":0},"end":{"line":5,"character":0}}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"textDocument/documentSymbol","params":{"textDocument":` + doc + `}}`,
		`{"jsonrpc":"2.0","id":7,"method":"agent-ls/composedPrompt","params":` + doc + `}`,
		`{"jsonrpc":"2.0","id":8,"method":"workspace/executeCommand","params":{"command":"agent-ls.approve","arguments":[{}]}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}`,
	}
}

// mutate damages a message: flipped, inserted or deleted bytes, or a cut.
func mutate(rng *rand.Rand, msg string) []byte {
	b := []byte(msg)
	for range rng.IntN(4) + 1 {
		switch i := rng.IntN(max(len(b), 1)); rng.IntN(4) {
		case 0:
			if len(b) > 0 {
				b[i] = byte(rng.IntN(256))
			}
		case 1:
			special := "{}[]\",:\\\x00\xff"
			b = append(b[:i], append([]byte{special[rng.IntN(len(special))]}, b[i:]...)...)
		case 2:
			if len(b) > 0 {
				b = append(b[:i], b[i+1:]...)
			}
		case 3:
			b = b[:i]
		}
	}
	return b
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// TestServeGarbage runs the real binary (`agent-ls serve`) as a child, 40
// seeded runs, with stdin: initialize, then 30 frames (mutated valid
// messages, random bytes and valid messages, each well framed), a shutdown
// request, and in every other run a broken tail (raw random bytes, a
// frame cut short, a bad header), then the end of input. The child must
// exit by itself within serveGarbageDeadline, print no panic or goroutine
// trace on stderr, exit 0 (a clean end on EOF; with a broken tail 0 or 2,
// and a frame cut short exactly 2 naming the connection failure), keep
// stdout well-formed frames, and, with the framing intact, answer the
// final shutdown.
func TestServeGarbage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	uri := (&url.URL{Scheme: "file", Path: dir}).String()
	msgs := garbageMessages(uri)
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 11))
			var in bytes.Buffer
			in.Write(lspFrame([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"rootUri":"` + uri + `","capabilities":{}}}`)))
			in.Write(lspFrame([]byte(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)))
			for range 30 {
				var body []byte
				switch rng.IntN(3) {
				case 0:
					body = mutate(rng, msgs[rng.IntN(len(msgs))])
				case 1:
					body = randomBytes(rng, rng.IntN(200))
				default:
					body = []byte(msgs[rng.IntN(len(msgs))])
				}
				if bytes.Contains(body, []byte("exit")) || bytes.Contains(body, []byte("shutdown")) {
					continue
				}
				in.Write(lspFrame(body))
			}
			in.Write(lspFrame([]byte(`{"jsonrpc":"2.0","id":"probe","method":"shutdown"}`)))
			broken := seed%2 == 0
			if broken {
				switch seed % 6 {
				case 0:
					in.Write(randomBytes(rng, 1+rng.IntN(300)))
				case 2:
					in.WriteString("Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":9,")
				case 4:
					in.WriteString("Content-Type: x\r\nno colon here\r\n\r\n")
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), serveGarbageDeadline)
			defer cancel()
			cmd := exec.CommandContext(ctx, agentLSBin, "serve", "--no-watch")
			cmd.Dir = dir
			cmd.Stdin = &in
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("serve did not exit within %v after the end of its input (hang); stderr:\n%s", serveGarbageDeadline, errb.String())
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if s := errb.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
				t.Fatalf("serve crashed (exit %d):\n%s", code, s)
			}
			if code != 0 && (!broken || code != 2) {
				t.Fatalf("serve exited %d; stderr:\n%s", code, errb.String())
			}
			frames, err := splitFrames(out.Bytes())
			if err != nil {
				t.Fatalf("stdout: %v", err)
			}
			t.Logf("exit %d, %d frames answered, broken tail %v", code, len(frames), broken)
			if seed%6 == 2 && (code != 2 || !strings.Contains(errb.String(), "agent-ls serve: language server connection: read body of 500 bytes")) {
				t.Errorf("a frame cut short: exit %d, stderr %q; want exit 2 naming the connection failure", code, errb.String())
			}
			if !broken && !bytes.Contains(bytes.Join(frames, nil), []byte(`"id":"probe"`)) {
				t.Fatalf("the final shutdown was not answered; %d frames, stderr:\n%s", len(frames), errb.String())
			}
		})
	}
}

// splitFrames splits LSP output into frame bodies, failing on anything
// that is not a frame.
func splitFrames(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		var n int
		if _, err := fmt.Sscanf(string(b), "Content-Length: %d\r\n\r\n", &n); err != nil {
			return out, fmt.Errorf("not a frame header at %q", b[:min(len(b), 40)])
		}
		i := bytes.Index(b, []byte("\r\n\r\n"))
		if i < 0 || i+4+n > len(b) {
			return out, fmt.Errorf("frame cut short")
		}
		out = append(out, b[i+4:i+4+n])
		b = b[i+4+n:]
	}
	return out, nil
}
