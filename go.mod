module github.com/agent-ls/agent-ls

go 1.26
