package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

func env(user string) func(string) string {
	return func(k string) string {
		if k == "USER" {
			return user
		}
		return ""
	}
}

// TestResolveActor: flag > config > human:$USER, the last only when no
// config names an actor; a bad config or actor fails closed.
func TestResolveActor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, config, flag, user string
		want                     string
		src                      ActorSource
		wantErr                  bool
	}{
		{name: "user", user: "ana", want: "human:ana", src: FromUser},
		{name: "user unset", want: "human:unknown", src: FromUser},
		{name: "user blank", user: "  ", want: "human:unknown", src: FromUser},
		{name: "config", config: "actor: agent:alpha\n", user: "ana", want: "agent:alpha", src: FromConfig},
		{name: "flag wins", config: "actor: agent:alpha\n", flag: "human:bo", want: "human:bo", src: FromExplicit},
		{name: "bad flag", flag: "Agent:alpha", user: "ana", wantErr: true},
		{name: "bad config actor", config: "actor: Agent:alpha\n", user: "ana", wantErr: true},
		{name: "config actor without kind", config: "actor: agent-alpha\n", user: "ana", wantErr: true},
		{name: "config syntax error", config: "actor: agent:alpha\nscope: [\n", user: "ana", wantErr: true},
		{name: "bad config, flag given", config: "actor: Agent:alpha\n", flag: "human:bo", wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.config != "" {
				if err := os.WriteFile(filepath.Join(dir, schema.WorkspaceConfigName), []byte(tt.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Resolve(nil, Request{Start: dir, Actor: tt.flag, Getenv: env(tt.user)})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Resolve = %v, want an error", s.Actor)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Actor.String() != tt.want || s.ActorSource != tt.src {
				t.Errorf("actor %s from %d, want %s from %d", s.Actor, s.ActorSource, tt.want, tt.src)
			}
		})
	}
}
