#!/usr/bin/env bash
# make demo: build agent-ls (the Makefile does), create a throwaway workspace
# from testdata/demo/ (an agent file and a scripted history of saves,
# corrections, corroborations and an approval run through the real bbolt
# store), then print the composed prompt with every learned line annotated
# by record and conversation, and the overlay report.
#
# AGENT_LS overrides the binary (default bin/agent-ls). It ends by saying
# how to open the lens on the demo's workspace: KEEP_DEMO=1 keeps the
# workspace and prints its path and the lens command to run there;
# DEMO_LENS=1 (make demo-lens) keeps it and serves the lens on it
# (loopback; Ctrl-C stops it, the workspace stays).
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
if [[ ${DEMO_LENS:-} == 1 ]]; then
	KEEP_DEMO=1
fi
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

step "Which learning broke the agent? An eval (the team ships on Tuesdays), then bisect over the ledger"
mkdir -p evals
cat > evals/deploy-window.sh <<'EVAL'
#!/bin/sh
# The team ships on Tuesdays: a prompt that says Thursdays fails the case.
if grep -q "Thursdays" "$AGENT_LS_PROMPT_FILE"; then echo '{"score": 0, "passed": 0, "failed": 1}'; else echo '{"score": 1, "passed": 1, "failed": 0}'; fi
EVAL
printf 'eval:\n  command: [sh, evals/deploy-window.sh]\n' >> .agent-ls.yaml
"$AGENT_LS" bisect deploy.agent.yaml

step "Roll it back: restore the Tuesday version (a new record supersedes Thursday; the past is unchanged), and bisect again"
"$AGENT_LS" memory restore "$TUE"
"$AGENT_LS" bisect deploy.agent.yaml || echo "(exit $?: no regression any more)"

step "The evolution lens on this workspace (a local web page: the review queue, the composed prompt with its learned lines, the timeline)"
if [[ ${DEMO_LENS:-} == 1 ]]; then
	echo "demo workspace (kept): $ws"
	echo "serving the lens; open the URL below, Ctrl-C stops it"
	exec "$AGENT_LS" lens
elif [[ ${KEEP_DEMO:-} == 1 ]]; then
	echo "demo workspace (kept): $ws"
	printf 'open the lens on it (it prints the URL to open):  cd %q && %q lens\n' "$ws" "$AGENT_LS"
else
	echo "make demo-lens runs the demo and serves the lens on its workspace;"
	echo "KEEP_DEMO=1 make demo keeps the workspace and prints the lens command to run there."
fi
