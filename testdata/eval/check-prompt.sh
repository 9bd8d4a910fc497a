#!/bin/sh
# check-prompt.sh CASES CONFIG — a deterministic example eval suite for the
# agent-ls eval gate (.agent-ls.yaml: eval: {command: [sh, testdata/eval/check-prompt.sh, CASES]}).
#
# agent-ls runs the command once per config with the config's JSON file as
# the last argument, and sets AGENT_LS_PROMPT_FILE to the rendered system
# prompt of that config. Each non-empty line of CASES that does not start
# with '#' is one case: TEXT passes when the prompt contains TEXT (fixed
# string, case-sensitive); !TEXT passes when it does not. The result is one
# JSON line: {"score": passed/total, "passed": N, "failed": N}.
set -eu
if [ "$#" -ne 2 ]; then
	echo "usage: check-prompt.sh CASES CONFIG" >&2
	exit 2
fi
cases=$1
file=${AGENT_LS_PROMPT_FILE:-$2}
[ -r "$cases" ] || { echo "check-prompt.sh: cannot read cases $cases" >&2; exit 2; }
[ -r "$file" ] || { echo "check-prompt.sh: cannot read $file" >&2; exit 2; }
passed=0
failed=0
while IFS= read -r line || [ -n "$line" ]; do
	line=$(printf '%s' "$line" | tr -d '\r')
	case $line in
	'' | '#'*) continue ;;
	'!'*)
		if grep -qF -- "${line#!}" "$file"; then failed=$((failed + 1)); else passed=$((passed + 1)); fi
		;;
	*)
		if grep -qF -- "$line" "$file"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
		;;
	esac
done <"$cases"
total=$((passed + failed))
score=$(awk -v p="$passed" -v t="$total" 'BEGIN { if (t == 0) printf "0"; else printf "%.6g", p / t }')
printf '{"score": %s, "passed": %d, "failed": %d}\n' "$score" "$passed" "$failed"
