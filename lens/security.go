package lens

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ErrNotLoopback refuses an address the lens would serve beyond this machine.
var ErrNotLoopback = errors.New("the lens serves loopback addresses only (127.0.0.1, ::1 or localhost)")

// Listen listens on addr, which must name a loopback host: 127.0.0.0/8,
// ::1 or localhost (served on 127.0.0.1). A missing host, 0.0.0.0 and any
// other address are ErrNotLoopback.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if !loopbackIP(host) {
		return nil, fmt.Errorf("--addr %q: %w", addr, ErrNotLoopback)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	return ln, nil
}

func loopbackIP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a request's Host names this machine, which
// refuses a page of another site whose name was rebound to 127.0.0.1.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.EqualFold(host, "localhost") || loopbackIP(host)
}

// newToken is 32 random bytes, hex.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// cookieName is per token, so lenses on two ports of one host (cookies do
// not tell ports apart) do not overwrite each other's cookie.
func cookieName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "agent-ls-lens-" + hex.EncodeToString(sum[:4])
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// guard is every request's check: a loopback Host, then the token (the
// cookie, or ?token= on a GET, which sets the cookie and redirects to the
// same page without it). Without the token the answer is 401 and no data.
// State changes are POSTs carrying the token as a form field, past
// net/http's CrossOriginProtection.
func (s *Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	protected := cop.Handler(next)
	name := cookieName(s.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !loopbackHost(r.Host) {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet {
			if !sameToken(t, s.token) {
				unauthorized(w)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: name, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(name)
		if err != nil || !sameToken(c.Value, s.token) {
			unauthorized(w)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Method != http.MethodPost {
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := r.ParseForm(); err != nil || !sameToken(r.PostForm.Get("token"), s.token) {
				http.Error(w, "forbidden: the form's token is missing or wrong", http.StatusForbidden)
				return
			}
		}
		protected.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintln(w, "401 unauthorized: open the lens from the URL agent-ls lens printed (it carries the access token)")
}
