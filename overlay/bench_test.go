package overlay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// benchRecords makes n promoted records spread over the primitives.
func benchRecords(b *testing.B, n int) []schema.MemoryRecord {
	recs := make([]schema.MemoryRecord, n)
	for i := range recs {
		var target string
		switch i % 4 {
		case 0, 1:
			target = fmt.Sprintf("background.%s.fact_%d", schema.BackgroundSections[i%4], i)
		case 2:
			target = "judgment.refunds.heuristics"
		case 3:
			target = "manual.search.workflows"
		}
		recs[i] = rec(b, fmt.Sprintf("01J%023d", i), schema.FormatTime(timeAt(1, 0).Add(timeMinute(i))), target, fmt.Sprintf("learned line number %d about the project", i))
	}
	return recs
}

func timeMinute(i int) time.Duration { return time.Duration(i) * time.Minute }

func benchApplyRender(b *testing.B, n int) {
	cfg := base(b)
	recs := benchRecords(b, n)
	p := DefaultPolicy()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c, rep := Apply(cfg, recs, p)
		_ = Render(c, rep.Attribution).Text()
	}
}

// benchConcatFloor is the floor: concatenating the same records' content.
func benchConcatFloor(b *testing.B, n int) {
	recs := benchRecords(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var s strings.Builder
		for i := range recs {
			s.WriteString(recs[i].Content)
			s.WriteByte('\n')
		}
		_ = s.String()
	}
}

func BenchmarkApplyRender1k(b *testing.B)   { benchApplyRender(b, 1_000) }
func BenchmarkApplyRender100k(b *testing.B) { benchApplyRender(b, 100_000) }
func BenchmarkConcatFloor1k(b *testing.B)   { benchConcatFloor(b, 1_000) }
func BenchmarkConcatFloor100k(b *testing.B) { benchConcatFloor(b, 100_000) }
