package store

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// Token is a service token's stored record: never its secret, only its hash.
type Token struct {
	ID        string            `json:"id"`                  // public id, "tok_" + 26-char ULID-like
	Name      string            `json:"name,omitempty"`      // the --name label
	Agent     string            `json:"agent"`               // the agent's roleTemplate.name
	AgentFile string            `json:"agentFile"`           // the agent file, slash path relative to the workspace root
	Scope     map[string]string `json:"scope,omitempty"`     // extra scope pairs the token's sessions use (added to the workspace scope)
	CreatedBy string            `json:"createdBy"`           // the actor, e.g. "human:ana"
	CreatedAt string            `json:"createdAt"`           // schema.FormatTime
	ExpiresAt string            `json:"expiresAt,omitempty"` // "" never
	RevokedAt string            `json:"revokedAt,omitempty"`
	RevokedBy string            `json:"revokedBy,omitempty"`
}

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return t.RevokedAt != "" }

// Expired reports whether the token's expiry has passed at now (a
// schema.FormatTime string).
func (t Token) Expired(now string) bool { return t.ExpiresAt != "" && t.ExpiresAt <= now }

// StoredToken is a token as a store keeps it and as its ledger entries
// carry it: the public record and Hash, the SHA-256 hex of its secret
// (TokenHash).
//
// The hash is ledgered on purpose: replay (Verify, a migration's Load)
// rebuilds the tokens from the ledger alone, so a store whose token rows
// were edited behind the ledger does not verify, and a copied store
// accepts the same secrets. The secret itself is 256 random bits: its
// SHA-256 gives nothing to authenticate with and cannot be inverted, so a
// reader of the ledger learns no usable credential. Surfaces still never
// print it (token list shows the public record only).
type StoredToken struct {
	Token
	Hash string `json:"secretHash"`
}

// TokenIDPrefix starts every token id.
const TokenIDPrefix = "tok_"

// TokenHash is the hash a store keeps of a token's secret: SHA-256, hex.
func TokenHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// TokenHashEqual compares two token hashes in constant time.
func TokenHashEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// CheckTokenHash refuses anything but 64 lowercase hex digits (ErrInvalid).
func CheckTokenHash(hash string) error {
	ok := len(hash) == 2*sha256.Size
	for i := 0; ok && i < len(hash); i++ {
		c := hash[i]
		ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
	}
	if !ok {
		return fmt.Errorf("token: %w: the secret's hash must be 64 lowercase hex digits (SHA-256)", ErrInvalid)
	}
	return nil
}

// CheckTokenID refuses an id that is not "tok_" and 26 Crockford base32
// characters (ErrInvalid).
func CheckTokenID(id string) error {
	rest, ok := strings.CutPrefix(id, TokenIDPrefix)
	ok = ok && len(rest) == 26
	for i := 0; ok && i < len(rest); i++ {
		ok = strings.IndexByte("0123456789ABCDEFGHJKMNPQRSTVWXYZ", rest[i]) >= 0
	}
	if !ok {
		return fmt.Errorf("token id %.40q: %w: want %s and 26 base32 characters", id, ErrInvalid, TokenIDPrefix)
	}
	return nil
}

// CheckTokenActor refuses a token write (op "create token" or "revoke
// token") by anyone but a human: agents and everyone else get
// ErrForbidden. Tokens say which agent a service session acts as; an
// agent that could mint or revoke them could act as another.
func CheckTokenActor(op string, actor Actor) error {
	if actor.Kind != ActorHuman || actor.Name == "" {
		return fmt.Errorf("%s: %w: only a human actor creates or revokes tokens (actor %s)", op, ErrForbidden, actor)
	}
	return nil
}

// CheckAgentFilePath refuses an agent file path that is not a clean,
// relative slash path inside the workspace ("a/b.agent.yaml", never
// "/x", "../x", "a/../b" or "a\\b").
func CheckAgentFilePath(p string) error {
	if err := schema.CheckIdentifier("token agent file", p); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("token agent file %.80q: %w: want a clean slash path relative to the workspace root", p, ErrInvalid)
	}
	return nil
}

// PrepareToken validates a token for CreateToken and returns the row to
// store: the id is t.ID or, when empty, TokenIDPrefix and newID(now);
// CreatedAt is now and CreatedBy the actor. The name (optional) and agent
// pass the identifier rule, the agent file CheckAgentFilePath, each scope
// pair schema.CheckScopePart (the key "agent" is refused: the token's
// agent is its agent file's); an expiry must be a time after now; a token
// cannot be created revoked. Errors are ErrInvalid, or ErrForbidden for an
// actor that is not human.
func PrepareToken(t Token, hash string, actor Actor, now time.Time, newID func(time.Time) (string, error)) (StoredToken, error) {
	if err := CheckTokenActor("create token", actor); err != nil {
		return StoredToken{}, err
	}
	if err := CheckTokenHash(hash); err != nil {
		return StoredToken{}, err
	}
	invalid := func(err error) (StoredToken, error) {
		return StoredToken{}, fmt.Errorf("create token: %w: %v", ErrInvalid, err)
	}
	if t.ID == "" {
		id, err := newID(now)
		if err != nil {
			return StoredToken{}, fmt.Errorf("create token: %w", err)
		}
		t.ID = TokenIDPrefix + id
	}
	if err := CheckTokenID(t.ID); err != nil {
		return StoredToken{}, fmt.Errorf("create token: %w", err)
	}
	if t.Name != "" {
		if err := schema.CheckIdentifier("token name", t.Name); err != nil {
			return invalid(err)
		}
	}
	if err := schema.CheckIdentifier("token agent", t.Agent); err != nil {
		return invalid(err)
	}
	if err := CheckAgentFilePath(t.AgentFile); err != nil {
		return StoredToken{}, fmt.Errorf("create token: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Scope)) {
		if err := schema.CheckScopePart("scope key", k); err != nil {
			return invalid(err)
		}
		if err := schema.CheckScopePart("scope value", t.Scope[k]); err != nil {
			return invalid(err)
		}
		if k == "agent" {
			return invalid(fmt.Errorf("scope key agent: the token's agent is its agent file's"))
		}
	}
	nowS := schema.FormatTime(now)
	if t.ExpiresAt != "" {
		exp, err := CanonicalTime(t.ExpiresAt)
		if err != nil {
			return invalid(fmt.Errorf("expiresAt: %v", err))
		}
		if exp <= nowS {
			return invalid(fmt.Errorf("expiresAt %s is not after now (%s)", exp, nowS))
		}
		t.ExpiresAt = exp
	}
	if t.RevokedAt != "" || t.RevokedBy != "" {
		return invalid(fmt.Errorf("a token cannot be created revoked"))
	}
	t.CreatedAt, t.CreatedBy = nowS, actor.String()
	if len(t.Scope) == 0 {
		t.Scope = nil
	} else {
		t.Scope = maps.Clone(t.Scope)
	}
	return StoredToken{Token: t, Hash: hash}, nil
}

// ApplyRevoke marks t revoked by actor at now, unless it already is
// (revoking twice changes nothing); it reports whether it changed t.
func ApplyRevoke(t *Token, actor Actor, now string) bool {
	if t.Revoked() {
		return false
	}
	t.RevokedAt, t.RevokedBy = now, actor.String()
	return true
}

// TokenCreateEntry is the ledger entry CreateToken appends.
func TokenCreateEntry(t StoredToken, actor Actor) LedgerEntry {
	c := CloneStoredToken(t)
	return LedgerEntry{At: t.CreatedAt, Op: OpTokenCreate, Actor: actor, Token: &c}
}

// TokenRevokeEntry is the ledger entry RevokeToken appends, carrying the
// token as revoked.
func TokenRevokeEntry(t StoredToken, actor Actor) LedgerEntry {
	c := CloneStoredToken(t)
	return LedgerEntry{At: t.RevokedAt, Op: OpTokenRevoke, Actor: actor, Token: &c}
}

// CloneToken returns a deep copy of t.
func CloneToken(t Token) Token {
	t.Scope = maps.Clone(t.Scope)
	return t
}

// CloneStoredToken returns a deep copy of t.
func CloneStoredToken(t StoredToken) StoredToken {
	t.Token = CloneToken(t.Token)
	return t
}

// SortTokens orders tokens oldest first (creation time, then id).
func SortTokens(ts []Token) {
	slices.SortFunc(ts, func(a, b Token) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
}

// ReplayTokens rebuilds from ledger entries alone the tokens as they
// stand after the last one, oldest first (what a Load stores).
func ReplayTokens(entries []LedgerEntry) []StoredToken {
	st := NewState()
	for _, e := range entries {
		if e.Token != nil {
			ApplyEntry(&st, e)
		}
	}
	out := make([]StoredToken, 0, len(st.Tokens))
	for _, t := range st.Tokens {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b StoredToken) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// FindTokenHash returns the token of ts whose hash is hash, comparing each
// in constant time; ok is false when none is.
func FindTokenHash(ts []StoredToken, hash string) (Token, bool) {
	var found Token
	ok := false
	for _, t := range ts {
		if TokenHashEqual(t.Hash, hash) && !ok {
			found, ok = CloneToken(t.Token), true
		}
	}
	return found, ok
}
