// Package location says what a store location is — a file path or a
// database URL — and how to show it without its secrets. It is pure (no
// I/O, no backend), so the workspace, the engine and every surface can ask
// it without linking bbolt or pgx.
package location

import (
	"net/url"
	"path/filepath"
	"strings"
)

// IsURL reports whether loc names a database server rather than a file.
func IsURL(loc string) bool {
	l := strings.ToLower(strings.TrimSpace(loc))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Resolve resolves an explicit store location given on a command line or
// in a client's options: a database URL as is, a relative file path against
// dir.
func Resolve(dir, loc string) string {
	if IsURL(loc) || filepath.IsAbs(loc) {
		return loc
	}
	return filepath.Join(dir, loc)
}

// Withheld is what Redact shows for a URL it cannot parse: such a URL may
// hold a password anywhere, so none of it is shown.
const Withheld = "postgres://(unparseable URL withheld)"

// secretParams are the query parameters of a libpq URL that carry secrets.
var secretParams = []string{"password", "sslpassword"}

// Redact returns loc fit for messages and logs: a URL's userinfo password
// and its password= and sslpassword= query parameters replaced by "xxxxx",
// an unparseable URL withheld whole (Withheld); a file path as is.
func Redact(loc string) string {
	if !IsURL(loc) {
		return loc
	}
	u, err := url.Parse(loc)
	if err != nil {
		return Withheld
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return Withheld
		}
		changed := false
		for k := range q {
			for _, s := range secretParams {
				if strings.EqualFold(k, s) {
					q[k] = []string{"xxxxx"}
					changed = true
				}
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

// Secrets returns the secret values loc carries (its userinfo password and
// secret query parameters), for scrubbing them out of error text that
// quotes the URL or parts of it. A file path has none.
func Secrets(loc string) []string {
	if !IsURL(loc) {
		return nil
	}
	var out []string
	u, err := url.Parse(loc)
	if err != nil {
		return nil
	}
	if u.User != nil {
		if p, has := u.User.Password(); has && p != "" {
			out = append(out, p)
		}
	}
	if q, err := url.ParseQuery(u.RawQuery); err == nil {
		for k, vs := range q {
			for _, s := range secretParams {
				if strings.EqualFold(k, s) {
					for _, v := range vs {
						if v != "" {
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	return out
}

// Scrub returns text with every secret of loc, and loc itself when it is
// an unparseable URL, replaced, so an error that quotes the location does
// not leak it.
func Scrub(text, loc string) string {
	if !IsURL(loc) {
		return text
	}
	if _, err := url.Parse(loc); err != nil {
		return strings.ReplaceAll(text, loc, Withheld)
	}
	for _, s := range Secrets(loc) {
		text = strings.ReplaceAll(text, s, "xxxxx")
	}
	return text
}
