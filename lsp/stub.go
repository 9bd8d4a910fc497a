// This file was written from the Server interface of go.lsp.dev/protocol
// v0.12.0; update it with the pinned version.

package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// notImplemented answers every protocol.Server method with MethodNotFound, so
// the server embeds it and writes only the handlers it really has.
type notImplemented struct{}

var _ protocol.Server = notImplemented{}

func errNotImplemented(method string) error {
	return fmt.Errorf("%s: %w", method, jsonrpc2.ErrMethodNotFound)
}

func (notImplemented) Initialize(_ context.Context, _ *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	return nil, errNotImplemented("Initialize")
}

func (notImplemented) Initialized(_ context.Context, _ *protocol.InitializedParams) error {
	return errNotImplemented("Initialized")
}

func (notImplemented) Shutdown(_ context.Context) error { return errNotImplemented("Shutdown") }

func (notImplemented) Exit(_ context.Context) error { return errNotImplemented("Exit") }

func (notImplemented) WorkDoneProgressCancel(_ context.Context, _ *protocol.WorkDoneProgressCancelParams) error {
	return errNotImplemented("WorkDoneProgressCancel")
}

func (notImplemented) LogTrace(_ context.Context, _ *protocol.LogTraceParams) error {
	return errNotImplemented("LogTrace")
}

func (notImplemented) SetTrace(_ context.Context, _ *protocol.SetTraceParams) error {
	return errNotImplemented("SetTrace")
}

func (notImplemented) CodeAction(_ context.Context, _ *protocol.CodeActionParams) ([]protocol.CodeAction, error) {
	return nil, errNotImplemented("CodeAction")
}

func (notImplemented) CodeLens(_ context.Context, _ *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	return nil, errNotImplemented("CodeLens")
}

func (notImplemented) CodeLensResolve(_ context.Context, _ *protocol.CodeLens) (*protocol.CodeLens, error) {
	return nil, errNotImplemented("CodeLensResolve")
}

func (notImplemented) ColorPresentation(_ context.Context, _ *protocol.ColorPresentationParams) ([]protocol.ColorPresentation, error) {
	return nil, errNotImplemented("ColorPresentation")
}

func (notImplemented) Completion(_ context.Context, _ *protocol.CompletionParams) (*protocol.CompletionList, error) {
	return nil, errNotImplemented("Completion")
}

func (notImplemented) CompletionResolve(_ context.Context, _ *protocol.CompletionItem) (*protocol.CompletionItem, error) {
	return nil, errNotImplemented("CompletionResolve")
}

func (notImplemented) Declaration(_ context.Context, _ *protocol.DeclarationParams) ([]protocol.Location, error) {
	return nil, errNotImplemented("Declaration")
}

func (notImplemented) Definition(_ context.Context, _ *protocol.DefinitionParams) ([]protocol.Location, error) {
	return nil, errNotImplemented("Definition")
}

func (notImplemented) DidChange(_ context.Context, _ *protocol.DidChangeTextDocumentParams) error {
	return errNotImplemented("DidChange")
}

func (notImplemented) DidChangeConfiguration(_ context.Context, _ *protocol.DidChangeConfigurationParams) error {
	return errNotImplemented("DidChangeConfiguration")
}

func (notImplemented) DidChangeWatchedFiles(_ context.Context, _ *protocol.DidChangeWatchedFilesParams) error {
	return errNotImplemented("DidChangeWatchedFiles")
}

func (notImplemented) DidChangeWorkspaceFolders(_ context.Context, _ *protocol.DidChangeWorkspaceFoldersParams) error {
	return errNotImplemented("DidChangeWorkspaceFolders")
}

func (notImplemented) DidClose(_ context.Context, _ *protocol.DidCloseTextDocumentParams) error {
	return errNotImplemented("DidClose")
}

func (notImplemented) DidOpen(_ context.Context, _ *protocol.DidOpenTextDocumentParams) error {
	return errNotImplemented("DidOpen")
}

func (notImplemented) DidSave(_ context.Context, _ *protocol.DidSaveTextDocumentParams) error {
	return errNotImplemented("DidSave")
}

func (notImplemented) DocumentColor(_ context.Context, _ *protocol.DocumentColorParams) ([]protocol.ColorInformation, error) {
	return nil, errNotImplemented("DocumentColor")
}

func (notImplemented) DocumentHighlight(_ context.Context, _ *protocol.DocumentHighlightParams) ([]protocol.DocumentHighlight, error) {
	return nil, errNotImplemented("DocumentHighlight")
}

func (notImplemented) DocumentLink(_ context.Context, _ *protocol.DocumentLinkParams) ([]protocol.DocumentLink, error) {
	return nil, errNotImplemented("DocumentLink")
}

func (notImplemented) DocumentLinkResolve(_ context.Context, _ *protocol.DocumentLink) (*protocol.DocumentLink, error) {
	return nil, errNotImplemented("DocumentLinkResolve")
}

func (notImplemented) DocumentSymbol(_ context.Context, _ *protocol.DocumentSymbolParams) ([]interface{}, error) {
	return nil, errNotImplemented("DocumentSymbol")
}

func (notImplemented) ExecuteCommand(_ context.Context, _ *protocol.ExecuteCommandParams) (interface{}, error) {
	return nil, errNotImplemented("ExecuteCommand")
}

func (notImplemented) FoldingRanges(_ context.Context, _ *protocol.FoldingRangeParams) ([]protocol.FoldingRange, error) {
	return nil, errNotImplemented("FoldingRanges")
}

func (notImplemented) Formatting(_ context.Context, _ *protocol.DocumentFormattingParams) ([]protocol.TextEdit, error) {
	return nil, errNotImplemented("Formatting")
}

func (notImplemented) Hover(_ context.Context, _ *protocol.HoverParams) (*protocol.Hover, error) {
	return nil, errNotImplemented("Hover")
}

func (notImplemented) Implementation(_ context.Context, _ *protocol.ImplementationParams) ([]protocol.Location, error) {
	return nil, errNotImplemented("Implementation")
}

func (notImplemented) OnTypeFormatting(_ context.Context, _ *protocol.DocumentOnTypeFormattingParams) ([]protocol.TextEdit, error) {
	return nil, errNotImplemented("OnTypeFormatting")
}

func (notImplemented) PrepareRename(_ context.Context, _ *protocol.PrepareRenameParams) (*protocol.Range, error) {
	return nil, errNotImplemented("PrepareRename")
}

func (notImplemented) RangeFormatting(_ context.Context, _ *protocol.DocumentRangeFormattingParams) ([]protocol.TextEdit, error) {
	return nil, errNotImplemented("RangeFormatting")
}

func (notImplemented) References(_ context.Context, _ *protocol.ReferenceParams) ([]protocol.Location, error) {
	return nil, errNotImplemented("References")
}

func (notImplemented) Rename(_ context.Context, _ *protocol.RenameParams) (*protocol.WorkspaceEdit, error) {
	return nil, errNotImplemented("Rename")
}

func (notImplemented) SignatureHelp(_ context.Context, _ *protocol.SignatureHelpParams) (*protocol.SignatureHelp, error) {
	return nil, errNotImplemented("SignatureHelp")
}

func (notImplemented) Symbols(_ context.Context, _ *protocol.WorkspaceSymbolParams) ([]protocol.SymbolInformation, error) {
	return nil, errNotImplemented("Symbols")
}

func (notImplemented) TypeDefinition(_ context.Context, _ *protocol.TypeDefinitionParams) ([]protocol.Location, error) {
	return nil, errNotImplemented("TypeDefinition")
}

func (notImplemented) WillSave(_ context.Context, _ *protocol.WillSaveTextDocumentParams) error {
	return errNotImplemented("WillSave")
}

func (notImplemented) WillSaveWaitUntil(_ context.Context, _ *protocol.WillSaveTextDocumentParams) ([]protocol.TextEdit, error) {
	return nil, errNotImplemented("WillSaveWaitUntil")
}

func (notImplemented) ShowDocument(_ context.Context, _ *protocol.ShowDocumentParams) (*protocol.ShowDocumentResult, error) {
	return nil, errNotImplemented("ShowDocument")
}

func (notImplemented) WillCreateFiles(_ context.Context, _ *protocol.CreateFilesParams) (*protocol.WorkspaceEdit, error) {
	return nil, errNotImplemented("WillCreateFiles")
}

func (notImplemented) DidCreateFiles(_ context.Context, _ *protocol.CreateFilesParams) error {
	return errNotImplemented("DidCreateFiles")
}

func (notImplemented) WillRenameFiles(_ context.Context, _ *protocol.RenameFilesParams) (*protocol.WorkspaceEdit, error) {
	return nil, errNotImplemented("WillRenameFiles")
}

func (notImplemented) DidRenameFiles(_ context.Context, _ *protocol.RenameFilesParams) error {
	return errNotImplemented("DidRenameFiles")
}

func (notImplemented) WillDeleteFiles(_ context.Context, _ *protocol.DeleteFilesParams) (*protocol.WorkspaceEdit, error) {
	return nil, errNotImplemented("WillDeleteFiles")
}

func (notImplemented) DidDeleteFiles(_ context.Context, _ *protocol.DeleteFilesParams) error {
	return errNotImplemented("DidDeleteFiles")
}

func (notImplemented) CodeLensRefresh(_ context.Context) error {
	return errNotImplemented("CodeLensRefresh")
}

func (notImplemented) PrepareCallHierarchy(_ context.Context, _ *protocol.CallHierarchyPrepareParams) ([]protocol.CallHierarchyItem, error) {
	return nil, errNotImplemented("PrepareCallHierarchy")
}

func (notImplemented) IncomingCalls(_ context.Context, _ *protocol.CallHierarchyIncomingCallsParams) ([]protocol.CallHierarchyIncomingCall, error) {
	return nil, errNotImplemented("IncomingCalls")
}

func (notImplemented) OutgoingCalls(_ context.Context, _ *protocol.CallHierarchyOutgoingCallsParams) ([]protocol.CallHierarchyOutgoingCall, error) {
	return nil, errNotImplemented("OutgoingCalls")
}

func (notImplemented) SemanticTokensFull(_ context.Context, _ *protocol.SemanticTokensParams) (*protocol.SemanticTokens, error) {
	return nil, errNotImplemented("SemanticTokensFull")
}

func (notImplemented) SemanticTokensFullDelta(_ context.Context, _ *protocol.SemanticTokensDeltaParams) (interface{}, error) {
	return nil, errNotImplemented("SemanticTokensFullDelta")
}

func (notImplemented) SemanticTokensRange(_ context.Context, _ *protocol.SemanticTokensRangeParams) (*protocol.SemanticTokens, error) {
	return nil, errNotImplemented("SemanticTokensRange")
}

func (notImplemented) SemanticTokensRefresh(_ context.Context) error {
	return errNotImplemented("SemanticTokensRefresh")
}

func (notImplemented) LinkedEditingRange(_ context.Context, _ *protocol.LinkedEditingRangeParams) (*protocol.LinkedEditingRanges, error) {
	return nil, errNotImplemented("LinkedEditingRange")
}

func (notImplemented) Moniker(_ context.Context, _ *protocol.MonikerParams) ([]protocol.Moniker, error) {
	return nil, errNotImplemented("Moniker")
}

func (notImplemented) Request(_ context.Context, method string, _ interface{}) (interface{}, error) {
	return nil, errNotImplemented(method)
}
