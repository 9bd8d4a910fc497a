//go:build !unix

package main

import "io"

// pollableStdin returns r unchanged where stdin cannot be made pollable.
func pollableStdin(r io.Reader) io.Reader { return r }
