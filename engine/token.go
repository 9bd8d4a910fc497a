package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// Service tokens (issue 33): a token binds a caller of a served surface
// (MCP over HTTP) to one agent file of the workspace. The secret is shown
// once, when it is created; the store keeps its SHA-256 (store.TokenHash),
// the agent's name, the file's workspace-relative path, extra scope pairs,
// who created it and when it expires. Only a human creates or revokes
// tokens; Authenticate is what a server asks on every request.

// TokenSpec is what a new token is for.
type TokenSpec struct {
	// AgentFile is the agent file: absolute, or relative to the workspace
	// root. It must lie inside the workspace and be a valid agent file.
	AgentFile string
	// Scope holds extra scope pairs the token's sessions use, added to the
	// workspace scope (engine.Scope's rule; the key agent is refused).
	Scope map[string]string
	// Expires is how long the token lives; 0 is forever.
	Expires time.Duration
	// Name is an optional label.
	Name string
}

// The fields of a TokenSpec, as a *TokenSpecError names them.
const (
	TokenFieldAgentFile = "agent file"
	TokenFieldScope     = "scope"
	TokenFieldExpires   = "expires"
	TokenFieldName      = "name"
)

// TokenSpecError is a TokenSpec field CreateToken refuses (a scope pair
// that contradicts the workspace scope is a *ScopeError instead). It is
// worded with the field's neutral name (TokenField*); a surface words it
// with its own parameter's name, schema.Named(param, e.Err), as the CLI's
// --agent, --scope, --expires and --name.
type TokenSpecError struct {
	Field string
	Err   error
}

func (e *TokenSpecError) Error() string { return schema.Named(e.Field, e.Err).Error() }

// Unwrap is the cause.
func (e *TokenSpecError) Unwrap() error { return e.Err }

// ErrTokenInvalid is Authenticate's one answer for a secret that does not
// authenticate: unknown, malformed, revoked or expired. The error wraps
// the reason for logs; it never holds the secret.
var ErrTokenInvalid = errors.New("invalid token")

// TokenPrefix starts every token secret: "als_", then 43 base64url
// characters (32 random bytes). The fixed prefix lets secret scanners
// recognize a leaked token.
const TokenPrefix = "als_"

// tokenSecretLen is the length of a secret: the prefix and the unpadded
// base64url of 32 bytes.
var tokenSecretLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(32)

// tokenEntropy is where secrets come from (a test may replace it).
var tokenEntropy io.Reader = rand.Reader

// newTokenSecret returns a fresh secret.
func newTokenSecret() (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(tokenEntropy, b[:]); err != nil {
		return "", fmt.Errorf("token secret: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// wellFormedSecret reports whether secret has a token's shape.
func wellFormedSecret(secret string) bool {
	rest, ok := strings.CutPrefix(secret, TokenPrefix)
	if !ok || len(secret) != tokenSecretLen {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil && len(b) == 32
}

// LooksLikeTokenSecret reports whether s has the shape of a token secret
// (TokenPrefix and 43 base64url characters), without checking any store.
func LooksLikeTokenSecret(s string) bool { return wellFormedSecret(s) }

// mayManageTokens refuses every actor but a human (store.ErrForbidden).
func mayManageTokens(s *Session, verb string) error {
	if s == nil {
		return errors.New(verb + " token: no session")
	}
	if s.Actor.Kind != store.ActorHuman {
		return &forbidden{msg: fmt.Sprintf("%s may not %s tokens: only a human actor creates or revokes tokens (a token says which agent a caller acts as)", s.Actor, verb)}
	}
	return nil
}

func (s *Session) now() time.Time {
	if s.StoreOptions.Now != nil {
		return s.StoreOptions.Now()
	}
	return time.Now()
}

func (s *Session) open(ctx context.Context, readOnly bool) (store.Store, error) {
	o := s.StoreOptions
	o.ReadOnly = readOnly
	return s.Open(ctx, o)
}

// TokenAgent resolves a token spec's agent file in ws: the file must lie
// inside the workspace root (workspace.Confine: no symbolic link or ..
// leads out), be named as an agent file and load as a valid one. It
// returns the file's slash path relative to the root and the parsed agent.
func TokenAgent(ws *workspace.Workspace, file string) (rel string, cfg *schema.AgentConfig, err error) {
	bad := func(err error) (string, *schema.AgentConfig, error) {
		return "", nil, &TokenSpecError{Field: TokenFieldAgentFile, Err: err}
	}
	if ws == nil || ws.Root == "" {
		return bad(errors.New("no workspace"))
	}
	if file == "" {
		return bad(errors.New("is required"))
	}
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws.Root, abs)
	}
	abs = filepath.Clean(abs)
	if err := workspace.Confine(ws.Root, abs); err != nil {
		return bad(err)
	}
	r, err := filepath.Rel(ws.Root, abs)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return bad(fmt.Errorf("%s is not inside the workspace root %s", file, ws.Root))
	}
	if !schema.IsAgentFile(abs) {
		return bad(fmt.Errorf("%s is not an agent file (want NAME.agent.yaml, .agent.yml or .agent.json)", file))
	}
	data, err := workspace.ReadFile(abs)
	if err != nil {
		return bad(err)
	}
	cfg, err = LoadAgent(abs, data)
	if err != nil {
		return bad(err)
	}
	rel = filepath.ToSlash(r)
	if err := store.CheckAgentFilePath(rel); err != nil {
		return bad(err)
	}
	return rel, cfg, nil
}

// TokenAgentFile is the absolute path of a token's agent file in ws,
// confined to the workspace root as TokenAgent confines it.
func TokenAgentFile(ws *workspace.Workspace, t store.Token) (string, error) {
	if ws == nil || ws.Root == "" {
		return "", errors.New("token agent file: no workspace")
	}
	if err := store.CheckAgentFilePath(t.AgentFile); err != nil {
		return "", err
	}
	abs := filepath.Join(ws.Root, filepath.FromSlash(t.AgentFile))
	if err := workspace.Confine(ws.Root, abs); err != nil {
		return "", err
	}
	return abs, nil
}

// checkTokenScope checks a token's extra scope pairs: each key and value
// passes schema.CheckScopePart, the key agent is refused (the token's
// agent is its agent file's) and no pair changes a workspace value
// (Scope's rule, a *ScopeError).
func checkTokenScope(ws *workspace.Workspace, scope map[string]string) error {
	bad := func(err error) error { return &TokenSpecError{Field: TokenFieldScope, Err: err} }
	for _, k := range sortedKeys(scope) {
		if err := schema.CheckScopePart("scope key", k); err != nil {
			return bad(err)
		}
		if err := schema.CheckScopePart("scope value", scope[k]); err != nil {
			return bad(err)
		}
		if k == store.AgentKey {
			return bad(fmt.Errorf("the key %s is the token's agent file's: the token acts as the agent its file names", store.AgentKey))
		}
	}
	var base map[string]string
	if ws != nil {
		base = ws.Config.Scope
	}
	if _, err := Scope(base, scope); err != nil {
		if _, ok := errors.AsType[*ScopeError](err); ok {
			return err
		}
		return bad(err)
	}
	return nil
}

// CreateToken makes a token for an agent file of the session's workspace: the secret is returned once, the store keeps its hash.
//
// Only a human actor may (store.ErrForbidden otherwise). The spec is
// checked before the store is opened: the agent file (TokenAgent), the
// scope (engine.Scope's rule, no agent key) and the expiry (not
// negative). The creation is ledgered (store.OpTokenCreate).
func CreateToken(ctx context.Context, s *Session, spec TokenSpec) (secret string, t store.Token, err error) {
	if err := mayManageTokens(s, "create"); err != nil {
		return "", store.Token{}, err
	}
	if spec.Expires < 0 {
		return "", store.Token{}, &TokenSpecError{Field: TokenFieldExpires, Err: &schema.ValueError{Name: TokenFieldExpires, Value: spec.Expires.String(), Why: "want a positive duration (or 0 for a token that never expires)"}}
	}
	if spec.Name != "" {
		if err := schema.CheckIdentifier(TokenFieldName, spec.Name); err != nil {
			return "", store.Token{}, &TokenSpecError{Field: TokenFieldName, Err: err}
		}
	}
	if err := checkTokenScope(s.Workspace, spec.Scope); err != nil {
		return "", store.Token{}, err
	}
	rel, cfg, err := TokenAgent(s.Workspace, spec.AgentFile)
	if err != nil {
		return "", store.Token{}, err
	}
	tok := store.Token{Name: spec.Name, Agent: cfg.RoleTemplate.Name, AgentFile: rel}
	if len(spec.Scope) > 0 {
		tok.Scope = maps.Clone(spec.Scope)
	}
	if spec.Expires > 0 {
		tok.ExpiresAt = schema.FormatTime(s.now().Add(spec.Expires))
	}
	secret, err = newTokenSecret()
	if err != nil {
		return "", store.Token{}, err
	}
	st, err := s.open(ctx, false)
	if err != nil {
		return "", store.Token{}, err
	}
	defer st.Close()
	t, err = st.CreateToken(ctx, tok, store.TokenHash(secret), s.Actor)
	if err != nil {
		return "", store.Token{}, err
	}
	return secret, t, nil
}

// ListTokens lists the store's tokens, oldest first: never a secret or a
// hash. A human (or the system) sees every token; an agent actor only the
// tokens of its own agent.
func ListTokens(ctx context.Context, s *Session) ([]store.Token, error) {
	if s == nil {
		return nil, errors.New("list tokens: no session")
	}
	st, err := s.open(ctx, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ts, err := st.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	if !s.View.Confined() {
		return ts, nil
	}
	out := ts[:0]
	for _, t := range ts {
		if t.Agent == s.View.Agent {
			out = append(out, t)
		}
	}
	return out, nil
}

// RevokeToken revokes by id or by the secret itself.
//
// Only a human actor may (store.ErrForbidden otherwise). An id is
// "tok_..." (store.CheckTokenID), a secret "als_..." (looked up by its
// hash); anything else is an error that does not echo it, an unknown id
// or secret store.ErrNotFound. Revoking a revoked token changes nothing
// and returns it. The revocation is ledgered (store.OpTokenRevoke).
func RevokeToken(ctx context.Context, s *Session, idOrSecret string) (store.Token, error) {
	if err := mayManageTokens(s, "revoke"); err != nil {
		return store.Token{}, err
	}
	bySecret := strings.HasPrefix(idOrSecret, TokenPrefix)
	switch {
	case bySecret && !wellFormedSecret(idOrSecret):
		return store.Token{}, fmt.Errorf("revoke token: %w: the argument starts like a token (%s) but is not one", store.ErrInvalid, TokenPrefix)
	case !bySecret:
		if err := store.CheckTokenID(idOrSecret); err != nil {
			return store.Token{}, fmt.Errorf("revoke token: %w: want a token id (%s...) or the token itself (%s...)", store.ErrInvalid, store.TokenIDPrefix, TokenPrefix)
		}
	}
	st, err := s.open(ctx, false)
	if err != nil {
		return store.Token{}, err
	}
	defer st.Close()
	var out store.Token
	err = st.Update(ctx, func(tx store.Tx) error {
		id := idOrSecret
		if bySecret {
			t, err := tx.TokenByHash(ctx, store.TokenHash(idOrSecret))
			if errors.Is(err, store.ErrNotFound) {
				return notFound("no token has this secret")
			}
			if err != nil {
				return err
			}
			id = t.ID
		}
		t, err := tx.RevokeToken(ctx, id, s.Actor)
		if errors.Is(err, store.ErrNotFound) {
			return notFound("no token " + id)
		}
		out = t
		return err
	})
	if err != nil {
		return store.Token{}, err
	}
	return out, nil
}

// Authenticate returns the live token whose secret this is: unknown, malformed, revoked and expired secrets are all ErrTokenInvalid (wrapping the reason for logs, never echoing the secret).
//
// now is compared with the token's expiry (an expiry at or before now has
// passed). The lookup is by the secret's hash (store.TokenByHash, which
// compares hashes in constant time); a store error other than
// store.ErrNotFound is returned as it is (not ErrTokenInvalid), so a
// server can answer it as unavailable rather than unauthorized.
func Authenticate(ctx context.Context, r store.Reader, secret string, now time.Time) (store.Token, error) {
	if secret == "" {
		return store.Token{}, fmt.Errorf("%w: no token given", ErrTokenInvalid)
	}
	if !wellFormedSecret(secret) {
		return store.Token{}, fmt.Errorf("%w: malformed (want %s and 43 base64url characters)", ErrTokenInvalid, TokenPrefix)
	}
	t, err := r.TokenByHash(ctx, store.TokenHash(secret))
	if errors.Is(err, store.ErrNotFound) {
		return store.Token{}, fmt.Errorf("%w: unknown token", ErrTokenInvalid)
	}
	if err != nil {
		return store.Token{}, err
	}
	if t.Revoked() {
		return store.Token{}, fmt.Errorf("%w: token %s was revoked at %s by %s", ErrTokenInvalid, t.ID, t.RevokedAt, t.RevokedBy)
	}
	if t.Expired(schema.FormatTime(now)) {
		return store.Token{}, fmt.Errorf("%w: token %s expired at %s", ErrTokenInvalid, t.ID, t.ExpiresAt)
	}
	return t, nil
}

// notFoundError is store.ErrNotFound worded for a person once: the
// surface names the operation, the message what is missing ("no token
// tok_..."), without "revoke token: not found: " before it.
type notFoundError struct{ msg string }

func (e notFoundError) Error() string        { return e.msg }
func (e notFoundError) Is(target error) bool { return target == store.ErrNotFound }

func notFound(msg string) error { return notFoundError{msg} }
