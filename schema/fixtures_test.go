package schema

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .want files of testdata/invalid")

// FormatProblem prints a problem as the .want files hold it:
// "line:col-endLine:endCol: severity: message [rule]", 1-based.
func formatProblem(p Problem) string {
	r := p.Range
	return fmt.Sprintf("%d:%d-%d:%d: %s: %s [%s]", r.Start.Line+1, r.Start.Character+1, r.End.Line+1, r.End.Character+1, p.Severity, p.Message, p.Rule)
}

// TestInvalidFixtures checks every file of testdata/invalid against its
// golden NAME.want: the exact problems with their exact ranges.
func TestInvalidFixtures(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir("../testdata/invalid", func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := de.Name()
		if de.IsDir() || strings.HasSuffix(name, ".want") || name == ".gitattributes" {
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d invalid fixtures", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimPrefix(filepath.ToSlash(f), "../testdata/invalid/"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ps := Check(f, data)
			if len(ps) == 0 {
				t.Fatal("no problems reported for an invalid fixture")
			}
			var b strings.Builder
			for _, p := range ps {
				b.WriteString(formatProblem(p))
				b.WriteByte('\n')
			}
			got := b.String()
			wantFile := f + ".want"
			if *update {
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("%v (run go test ./schema -run TestInvalidFixtures -update)", err)
			}
			if got != string(want) {
				t.Errorf("problems differ\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
