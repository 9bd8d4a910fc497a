#!/usr/bin/env bash
# make demo: build agent-ls (the Makefile does), create a throwaway workspace
# from testdata/demo/ (an agent file and a scripted history of saves,
# corrections, corroborations and an approval run through the real bbolt
# store), then print the composed prompt with every learned line annotated
# by record and conversation, and the overlay report.
#
# AGENT_LS overrides the binary (default bin/agent-ls); KEEP_DEMO=1 keeps
# the workspace and prints where it is.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
AGENT_LS=${AGENT_LS:-$repo/bin/agent-ls}
if [[ ! -x $AGENT_LS ]]; then
	echo "demo: $AGENT_LS is missing; run 'make demo' (it builds it first)" >&2
	exit 2
fi
export AGENT_LS USER=${USER:-ana}

ws=$(mktemp -d "${TMPDIR:-/tmp}/agent-ls-demo.XXXXXX")
if [[ ${KEEP_DEMO:-} == 1 ]]; then
	echo "demo workspace: $ws"
else
	trap 'rm -rf "$ws"' EXIT
fi
cp testdata/demo/deploy.agent.yaml testdata/demo/.agent-ls.yaml "$ws"/
cd "$ws"

step() { printf '\n# %s\n' "$*"; }
# shellcheck source=../testdata/demo/history.sh
source "$repo/testdata/demo/history.sh"

step "The composed system prompt (learned lines annotated: ⟵ memory RECORD (conv CONVERSATION, N conversations))"
"$AGENT_LS" render deploy.agent.yaml --annotate

step "What a runtime delivers beside the composition at a conversation's first message: the recall block"
"$AGENT_LS" render deploy.agent.yaml --recall --query "freeze" | sed -n '/^## Recalled Memory/,$p'

step "What the agent would unlearn if the Thursday fact were invalidated (composition diff)"
"$AGENT_LS" diff deploy.agent.yaml --without "$THU"

step "The overlay report (ids only: what applied where, what spilled, totals against the budgets)"
"$AGENT_LS" overlay deploy.agent.yaml --report
