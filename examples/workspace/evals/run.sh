#!/bin/sh
# evals/run.sh CONFIG: the eval suite .agent-ls.yaml's eval.command names.
# agent-ls runs it in the workspace root, once for the base composition and
# once with the candidate memory, with AGENT_LS_PROMPT_FILE naming the
# rendered system prompt and the composition's JSON file as the last
# argument. Each line of evals/cases.txt (not blank, not '#') is a case:
# TEXT passes when the prompt contains it, !TEXT when it does not. The last
# line printed is the result the gate reads.
set -eu
prompt=${AGENT_LS_PROMPT_FILE:?agent-ls sets AGENT_LS_PROMPT_FILE}
passed=0
failed=0
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	'' | '#'*) continue ;;
	'!'*) if grep -qF -- "${line#!}" "$prompt"; then failed=$((failed + 1)); else passed=$((passed + 1)); fi ;;
	*) if grep -qF -- "$line" "$prompt"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
	esac
done <"$(dirname "$0")/cases.txt"
echo "{\"score\": $(awk "BEGIN {print $passed / ($passed + $failed)}"), \"passed\": $passed, \"failed\": $failed}"
