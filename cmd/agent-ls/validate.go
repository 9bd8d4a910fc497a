package main

import (
	"context"
	"fmt"
)

// runValidate checks agent files against the schema. (Placeholder until the
// schema validator lands; replaced in the foundation work.)
func runValidate(_ context.Context, e *env, args []string) int {
	fmt.Fprintln(e.stderr, "agent-ls validate: not built yet")
	return exitUsage
}
