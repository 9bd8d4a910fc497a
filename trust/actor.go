package trust

import (
	"fmt"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// ActorSource says where a resolved actor came from.
type ActorSource int

// The sources of an actor, in precedence order.
const (
	// FromExplicit is the surface's own setting (--actor,
	// initializationOptions.actor).
	FromExplicit ActorSource = iota + 1
	// FromConfig is the workspace's `actor:`.
	FromConfig
	// FromUser is human:$USER (human:unknown when USER is unset), used only
	// when no config names an actor.
	FromUser
)

// ResolveActor decides who acts: explicit (a flag; "" when unset), else the
// workspace's `actor:`, else human:$USER. ws may be nil (no workspace). A
// workspace whose config could not be used (ws.Err), or an explicit or
// configured actor that does not parse, is an error; it never falls back to
// another actor.
func ResolveActor(explicit string, ws *workspace.Workspace, getenv func(string) string) (store.Actor, ActorSource, error) {
	if ws != nil && ws.Err != nil {
		// A config that could not be used may name an actor: none is chosen.
		return store.Actor{}, FromConfig, ws.Err
	}
	if explicit != "" {
		a, err := store.ParseActor(explicit)
		if err != nil {
			return store.Actor{}, FromExplicit, fmt.Errorf("--actor: %w", err)
		}
		return a, FromExplicit, nil
	}
	if ws != nil && ws.Config.Actor != "" {
		a, err := store.ParseActor(ws.Config.Actor)
		if err != nil {
			where := ws.ConfigPath
			if where == "" {
				where = "workspace config"
			}
			return store.Actor{}, FromConfig, fmt.Errorf("%s: actor: %w", where, err)
		}
		return a, FromConfig, nil
	}
	a := UserActor(getenv)
	// $USER is a name like --actor's, held to the same rule: one that would
	// not parse there (control or format characters, invalid UTF-8, too
	// long) is no actor, never written into the ledger as one.
	if _, err := store.ParseActor(a.String()); err != nil {
		return store.Actor{}, FromUser, fmt.Errorf("$USER: %w (give --actor kind:name, or actor: in %s)", err, schema.WorkspaceConfigName)
	}
	return a, FromUser, nil
}

// UserActor is human:$USER, or human:unknown when USER is unset: the actor
// of a workspace whose config names none.
func UserActor(getenv func(string) string) store.Actor {
	name := "unknown"
	if getenv != nil {
		if u := strings.TrimSpace(getenv("USER")); u != "" {
			name = u
		}
	}
	return store.Actor{Kind: store.ActorHuman, Name: name}
}
