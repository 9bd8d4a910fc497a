package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/agent-ls/agent-ls/engine"
)

// Where the store lives (docs/STORE.md, "Where the store lives"): --store when
// given (relative to the working directory; a file path or a postgres://
// URL); otherwise the workspace's store. The workspace is found from the
// agent file for commands given one, else from the working directory: the
// nearest .agent-ls.yaml above it names the store (`store:`, default
// .agent-memory/memory.db beside it); with no .agent-ls.yaml anywhere above,
// the start directory itself is the workspace root. Writes create the store
// file; reads never do, and say so on stderr when there is none.

// storeMissing reports whether location names a store file that does not
// exist yet (a database URL is never missing here).
func storeMissing(location string) bool {
	if engine.IsURL(location) {
		return false
	}
	// Lstat: a symbolic link, dangling or not, is there (and refused when
	// opened), never a missing store.
	_, err := os.Lstat(location)
	return errors.Is(err, fs.ErrNotExist)
}

// noteNoStore tells a read that found no store what it is reading instead:
// "agent-ls render: no memory store at PATH: the authored agent only".
func noteNoStore(e *env, cmd, location, instead string) {
	fmt.Fprintf(e.stderr, "agent-ls %s: no memory store at %s: %s\n", cmd, engine.Redact(location), instead)
}
