package main

import (
	"io"
	"strings"
	"testing"
)

// TestPrintTextCopiesNothing: render writes the prompt it composed as it
// is: a 2,000-line agent's 120 KB prompt was copied whole into fmt's
// buffer on its way to stdout. Not parallel: testing.AllocsPerRun.
func TestPrintTextCopiesNothing(t *testing.T) {
	text := strings.Repeat("- **fact_0001**: authored value 1 of the project context\n", 2000)
	if n := testing.AllocsPerRun(5, func() { printText(io.Discard, text) }); n != 0 {
		t.Errorf("printText allocated %.0f times, want none", n)
	}
}
