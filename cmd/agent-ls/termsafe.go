package main

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// termSafe is a writer for a terminal: every control character but newline
// and tab (C0 with carriage return, DEL, C1) and every bidirectional
// override or isolate is written as a Go escape (\x1b, \u202e) instead of
// itself. A file name, an agent file's double-quoted string or a store
// path chosen by someone else then cannot move the cursor, clear the
// screen, set the window title or reorder what the reader sees. A UTF-8
// sequence split across writes is held until the write that completes it.
type termSafe struct {
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence ending the last write
}

// Write writes p with its unsafe characters escaped; it reports len(p)
// when everything was written. Safe runs are copied whole, and only the
// lead bytes of C1 characters and bidi controls (0xc2, 0xe2) are decoded:
// a rendered prompt goes through at about the speed of a copy.
func (t *termSafe) Write(p []byte) (int, error) {
	buf := p
	if len(t.pending) > 0 {
		buf = append(t.pending, p...)
		t.pending = nil
	}
	var out []byte // nil while nothing was escaped
	from, end := 0, len(buf)
	escape := func(i, n int, r rune) {
		out = append(out, buf[from:i]...)
		out = append(out, escapeRune(r)...)
		from = i + n
	}
scan:
	for i := 0; i < end; {
		switch c := buf[i]; {
		case c < 0x20 && c != '\n' && c != '\t' || c == 0x7f:
			escape(i, 1, rune(c))
			i++
		case c == 0xc2 || c == 0xe2:
			if !utf8.FullRune(buf[i:]) {
				t.pending = append([]byte(nil), buf[i:]...)
				end = i
				break scan
			}
			r, n := utf8.DecodeRune(buf[i:])
			if n > 1 && unsafeRune(r) {
				escape(i, n, r)
			}
			i += n
		default:
			i++
		}
	}
	if out == nil {
		out = buf[:end]
	} else {
		out = append(out, buf[from:end]...)
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// unsafeRune reports whether r may not reach a terminal as itself.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// escapeRune is r as Go writes it in a quoted string (\x1b, \u202e).
func escapeRune(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// terminal reports whether w is a terminal (a character device).
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
