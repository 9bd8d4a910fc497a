//go:build tools

// Package deps pins the project's fixed dependencies in go.mod while the
// packages that use them are being written. Remove an import once real code uses it.
package deps

import (
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/santhosh-tekuri/jsonschema/v5"
	_ "go.etcd.io/bbolt"
	_ "go.lsp.dev/jsonrpc2"
	_ "go.lsp.dev/protocol"
	_ "github.com/fsnotify/fsnotify"
	_ "gopkg.in/yaml.v3"
	_ "golang.org/x/tools/txtar"
	_ "pgregory.net/rapid"
)

