package lsp

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/workspace"
)

// Workspace confinement (docs/LSP-PROTOCOL.md, "Workspace confinement"):
// the server reads agent files and resolves workspaces only under the
// workspace folders of initialize (rootUri when the client sends no
// folders); a client that names neither gets no confinement, one that
// names only folders that are not file:// ones gets nothing served.

// setFolders records the workspace folders' paths, cleaned (paths that are
// not absolute, from URIs that are not file://, dropped). Unconfined (a
// client that named no workspace) is no confinement (nil); confined with
// no usable folder (all removed, or none on disk) is an empty list, which
// serves nothing.
func (s *server) setFolders(paths []string, confined bool) {
	var out []string
	if confined {
		out = []string{}
	}
	for _, p := range paths {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	s.mu.Lock()
	s.folders = out
	s.mu.Unlock()
}

// folderOf returns the workspace folder holding path ("" when none does, or
// when there are no folders: ok reports whether path is allowed).
func (s *server) folderOf(path string) (folder string, ok bool) {
	s.mu.Lock()
	folders := s.folders
	s.mu.Unlock()
	if folders == nil {
		return "", true
	}
	// The longest folder holding path (nested folders).
	for _, f := range folders {
		if within(path, f) && len(f) > len(folder) {
			folder = f
		}
	}
	if folder == "" {
		return "", false
	}
	// A symlink inside the folder must not lead outside it, nor a ..:
	// workspace.Within is the one rule, the command line's too.
	if !workspace.Within(folder, path) {
		return "", false
	}
	return folder, true
}

// within reports whether path is dir or lies under it (both clean),
// lexically: which folder holds a path (workspace.Within then follows its
// symbolic links).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// confinedPath checks a client's document URI: a file:// URI of an absolute
// path without NUL bytes or a host, inside a workspace folder. The error is
// InvalidParams saying which.
func (s *server) confinedPath(uri protocol.DocumentURI) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("uri %q: ", string(uri))+fmt.Sprintf(format, args...))
	}
	raw := string(uri)
	if raw == "" {
		return bad("is empty")
	}
	if strings.ContainsRune(raw, 0) || strings.Contains(strings.ToLower(raw), "%00") {
		return bad("contains a NUL byte")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("%v", err)
	}
	if u.Scheme != "file" {
		return bad("want a file:// URI")
	}
	if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return bad("not an absolute file path")
	}
	if u.Host != "" && u.Host != "localhost" {
		return bad("names the host %q; only local files are served", u.Host)
	}
	path := uriToPath(uri)
	if path == "" || !filepath.IsAbs(path) {
		return bad("not an absolute file path")
	}
	path = filepath.Clean(path)
	if _, ok := s.folderOf(path); !ok {
		s.mu.Lock()
		folders := strings.Join(s.folders, ", ")
		s.mu.Unlock()
		return bad("%s is outside the workspace folders (%s)", path, folders)
	}
	return path, nil
}

// checkID refuses an id argument that is not an id (schema.CheckIDArg, the
// one rule every surface applies) as InvalidParams naming the argument.
func checkID(command, name, v string) error {
	if err := schema.CheckIDArg(name, v); err != nil {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s: argument %v", command, err))
	}
	return nil
}

// DidChangeWorkspaceFolders takes the client's new workspace folders: an
// added folder's files are served from now on, the open ones at once from
// the editor's text; an open document no folder holds any more is not
// served (its diagnostics cleared, its requests refused as outside the
// folders), its text still followed.
func (s *server) DidChangeWorkspaceFolders(_ context.Context, p *protocol.DidChangeWorkspaceFoldersParams) error {
	served := map[protocol.DocumentURI]bool{}
	for _, uri := range s.openURIs() {
		_, err := s.confinedPath(uri)
		served[uri] = err == nil
	}
	removed := map[string]bool{}
	for _, f := range p.Event.Removed {
		if path := uriToPath(protocol.DocumentURI(f.URI)); path != "" {
			removed[filepath.Clean(path)] = true
		}
	}
	s.mu.Lock()
	var folders []string
	for _, f := range s.folders {
		if !removed[f] {
			folders = append(folders, f)
		}
	}
	confined := s.folders != nil
	s.mu.Unlock()
	for _, f := range p.Event.Added {
		folders = append(folders, uriToPath(protocol.DocumentURI(f.URI)))
	}
	s.setFolders(folders, confined || len(p.Event.Added) > 0)
	s.forgetWorkspaces()
	for _, f := range p.Event.Added {
		if path := uriToPath(protocol.DocumentURI(f.URI)); path != "" {
			s.watchDir(path)
		}
	}
	for _, uri := range s.openURIs() {
		_, err := s.confinedPath(uri)
		switch {
		case err == nil && !served[uri]:
			s.watchDir(uriToPath(uri))
			s.diagnose(uri)
		case err != nil && served[uri]:
			s.unserve(uri)
		}
	}
	return nil
}

// unserve stops serving an open document a workspace folder no longer
// holds: its analysis stops and its diagnostics are cleared.
func (s *server) unserve(uri protocol.DocumentURI) {
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil {
		s.mu.Unlock()
		return
	}
	if d.cancel != nil {
		d.cancel()
	}
	s.gen++
	d.gen, d.parsed = s.gen, nil
	version := d.version
	s.mu.Unlock()
	s.pubMu.Lock()
	s.notify(protocol.MethodTextDocumentPublishDiagnostics, &publishDiagnosticsParams{URI: uri, Version: version, Diagnostics: []protocol.Diagnostic{}})
	s.pubMu.Unlock()
	s.stores.forget(uri)
}
