package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"strings"
)

// version is set by the linker (-X main.version=v1.2.3) for release builds;
// otherwise it comes from the module build info.
var version = ""

// revision is set by the linker (-X main.revision=SHA[+dirty], as `make
// build` does) for builds whose build info has no VCS revision: Go reads
// only .git directories, so a git worktree's build would have none.
var revision = ""

// buildVersion is what a binary knows about its own build.
type buildVersion struct {
	Module   string // module version: v1.2.3 after `go install ...@v1.2.3`, "(devel)" for a checkout build
	Revision string // VCS revision, "" when the build did not record one
	Time     string // VCS commit time (RFC 3339), "" when unknown
	Dirty    bool   // the working tree had uncommitted changes
	Go       string // Go toolchain version
}

// readBuildVersion reads the build info of the running binary.
func readBuildVersion() buildVersion {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersionOf(nil)
	}
	return buildVersionOf(bi)
}

// buildVersionOf extracts the version, VCS revision and modified flag
// (vcs.revision, vcs.time, vcs.modified) from bi; version wins over the
// module version when the linker set it.
func buildVersionOf(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Module: version}
	if bi == nil {
		bi = &debug.BuildInfo{}
	}
	v.Go = bi.GoVersion
	if v.Module == "" {
		v.Module = bi.Main.Version
	}
	if v.Module == "" {
		v.Module = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	if v.Revision == "" && revision != "" {
		v.Revision = strings.TrimSuffix(revision, "+dirty")
		v.Dirty = strings.HasSuffix(revision, "+dirty")
	}
	return v
}

// String is the one-line version: module version, short revision with
// +dirty, commit time and Go version, e.g.
// "v0.3.0 (rev 1a2b3c4d5e6f+dirty, 2026-12-04T18:00:00Z, go1.26.0)".
func (v buildVersion) String() string {
	s := v.Module
	var extra []string
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Dirty {
			rev += "+dirty"
		}
		extra = append(extra, "rev "+rev)
		if v.Time != "" {
			extra = append(extra, v.Time)
		}
	}
	if v.Go != "" {
		extra = append(extra, v.Go)
	}
	for i, x := range extra {
		if i == 0 {
			s += " ("
		} else {
			s += ", "
		}
		s += x
	}
	if len(extra) > 0 {
		s += ")"
	}
	return s
}

// versionString is the short version the language server, the MCP server
// and SARIF logs report: the module version, with the revision (+dirty)
// for a checkout build.
func versionString() string {
	v := readBuildVersion()
	if v.Module == "(devel)" && v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Dirty {
			rev += "+dirty"
		}
		return "devel-" + rev
	}
	if v.Module == "(devel)" {
		return "devel"
	}
	return v.Module
}

func runVersion(_ context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "version", body: "Prints the module version, the VCS revision the binary was built from (+dirty\nwhen the tree had uncommitted changes), its commit time and the Go version."}, nil)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "version", err)
	}
	if len(pos) > 0 {
		return usageFail(e.stderr, "version", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	fmt.Fprintf(e.stdout, "agent-ls %s\n", readBuildVersion())
	return exitOK
}
