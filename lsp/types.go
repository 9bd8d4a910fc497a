package lsp

import (
	"encoding/json"

	"go.lsp.dev/protocol"
)

// LSP 3.17 and agent-ls wire types that go.lsp.dev/protocol v0.12.0 lacks or
// gets wrong (see docs/LSP-PROTOCOL.md for the custom ones).

// Method names the server handles outside protocol.ServerHandler.
const (
	methodInlayHint        = "textDocument/inlayHint"
	methodInlayHintResolve = "inlayHint/resolve"
	methodInlayHintRefresh = "workspace/inlayHint/refresh"
	methodApplyEdit        = "workspace/applyEdit"
	methodStatus           = "agent-ls/status"
	methodComposedPrompt   = "agent-ls/composedPrompt"
	methodProposals        = "agent-ls/proposals"
	methodLearnings        = "agent-ls/learnings"
)

// Commands the server executes (workspace/executeCommand).
const (
	CommandPromote            = "agent-ls.promote"
	CommandDemote             = "agent-ls.demote"
	CommandInvalidate         = "agent-ls.invalidate"
	CommandSupersede          = "agent-ls.supersede"
	CommandApprove            = "agent-ls.approve"
	CommandReject             = "agent-ls.reject"
	CommandAdopt              = "agent-ls.adopt"
	CommandRetarget           = "agent-ls.retarget"
	CommandShowComposedPrompt = "agent-ls.showComposedPrompt"
)

// Commands lists every command in docs/LSP-PROTOCOL.md, advertised in
// executeCommandProvider.
var Commands = []string{
	CommandPromote, CommandDemote, CommandInvalidate, CommandSupersede,
	CommandApprove, CommandReject, CommandAdopt, CommandRetarget, CommandShowComposedPrompt,
}

// initializeParams is the part of initialize's params read raw: 3.17 client
// capabilities the library does not model.
type initializeParams struct {
	Capabilities struct {
		Workspace struct {
			InlayHint struct {
				RefreshSupport bool `json:"refreshSupport"`
			} `json:"inlayHint"`
			WorkspaceEdit struct {
				DocumentChanges bool `json:"documentChanges"`
			} `json:"workspaceEdit"`
			ApplyEdit bool `json:"applyEdit"`
		} `json:"workspace"`
		TextDocument struct {
			InlayHint  *inlayHintClientCapabilities `json:"inlayHint"`
			CodeAction struct {
				DisabledSupport bool `json:"disabledSupport"`
			} `json:"codeAction"`
		} `json:"textDocument"`
	} `json:"capabilities"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
}

// inlayHintClientCapabilities is textDocument.inlayHint of the client's
// capabilities.
type inlayHintClientCapabilities struct {
	ResolveSupport *struct {
		Properties []string `json:"properties"`
	} `json:"resolveSupport"`
}

// UnmarshalJSON reads the capability; an empty array (an empty Lua table
// as Neovim encodes it) is the capability without options.
func (c *inlayHintClientCapabilities) UnmarshalJSON(data []byte) error {
	var items []json.RawMessage
	if json.Unmarshal(data, &items) == nil && len(items) == 0 {
		*c = inlayHintClientCapabilities{}
		return nil
	}
	type plain inlayHintClientCapabilities
	return json.Unmarshal(data, (*plain)(c))
}

// resolves reports whether the client resolves the hint property prop
// lazily (inlayHint/resolve); false for a nil c.
func (c *inlayHintClientCapabilities) resolves(prop string) bool {
	if c == nil || c.ResolveSupport == nil {
		return false
	}
	for _, p := range c.ResolveSupport.Properties {
		if p == prop {
			return true
		}
	}
	return false
}

// serverCapabilities adds the 3.17 inlayHintProvider to the library's
// capabilities.
type serverCapabilities struct {
	protocol.ServerCapabilities
	InlayHintProvider *inlayHintOptions `json:"inlayHintProvider,omitempty"`
}

type inlayHintOptions struct {
	ResolveProvider bool `json:"resolveProvider"`
}

type initializeResult struct {
	Capabilities serverCapabilities   `json:"capabilities"`
	ServerInfo   *protocol.ServerInfo `json:"serverInfo,omitempty"`
}

// publishDiagnosticsParams always carries a diagnostics array (never null)
// and a version that is not dropped when zero.
type publishDiagnosticsParams struct {
	URI         protocol.DocumentURI  `json:"uri"`
	Version     int32                 `json:"version"`
	Diagnostics []protocol.Diagnostic `json:"diagnostics"`
}

// applyWorkspaceEditParams is workspace/applyEdit's request.
type applyWorkspaceEditParams struct {
	Label string                 `json:"label,omitempty"`
	Edit  protocol.WorkspaceEdit `json:"edit"`
}

// ApplyEditResult is workspace/applyEdit's real result (the library types it
// as bool).
type ApplyEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
	FailedChange  *int   `json:"failedChange,omitempty"`
}

// Status is the agent-ls/status notification.
type Status struct {
	URI            protocol.DocumentURI `json:"uri,omitempty"`
	Store          StoreState           `json:"store"`
	StorePath      string               `json:"storePath"`
	PendingReviews int                  `json:"pendingReviews"`
	Message        string               `json:"message,omitempty"`
}

// StoreState is the store's condition as the server last saw it.
type StoreState string

// The store states of agent-ls/status.
const (
	StoreConnected StoreState = "connected"
	StoreLocked    StoreState = "locked"
	StoreMissing   StoreState = "missing"
	StoreCorrupt   StoreState = "corrupt"
	// StoreUnreachable: a database store's server cannot be reached; the
	// server keeps serving the schema and retries at the next change.
	StoreUnreachable StoreState = "unreachable"
	// StoreUnverified: the store reads, but its ledger does not verify
	// (message says at which entry); the workspace is read-only.
	StoreUnverified StoreState = "unverified"
)

// InlayHint is an LSP 3.17 inlay hint.
type InlayHint struct {
	Position     protocol.Position   `json:"position"`
	Label        string              `json:"label"`
	Kind         int                 `json:"kind,omitempty"`
	Tooltip      *MarkupContent      `json:"tooltip,omitempty"`
	PaddingLeft  bool                `json:"paddingLeft,omitempty"`
	PaddingRight bool                `json:"paddingRight,omitempty"`
	Data         json.RawMessage     `json:"data,omitempty"`
	TextEdits    []protocol.TextEdit `json:"textEdits,omitempty"`
}

// MarkupContent is markdown or plain text.
type MarkupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// inlayHintParams is textDocument/inlayHint's request.
type inlayHintParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Range        protocol.Range                  `json:"range"`
}
