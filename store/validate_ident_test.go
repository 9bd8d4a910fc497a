package store

import (
	"strings"
	"testing"
)

// TestParseActorIdentifier: an actor's name passes the identifier rule.
func TestParseActorIdentifier(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"agent:deploy\nops", "agent:deploy\u202eops", "human:ana ", "agent:" + strings.Repeat("a", 300)} {
		if _, err := ParseActor(s); err == nil || !strings.Contains(err.Error(), "actor name: ") {
			t.Errorf("ParseActor(%q) = %v, want an error naming the actor name", s, err)
		}
	}
	if a, err := ParseActor("agent:deploy-ops"); err != nil || a.Name != "deploy-ops" {
		t.Errorf("ParseActor(agent:deploy-ops) = %v, %v", a, err)
	}
}
