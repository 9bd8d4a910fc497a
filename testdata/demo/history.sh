# The demo's scripted history, sourced by scripts/demo.sh with $AGENT_LS set
# and the demo workspace as the working directory. Each step is what an
# agent runtime (agent:deploy-ops) or a human (human:ana) would do through
# the real store; `step` prints the narration.

AGENT=(--actor agent:deploy-ops)
SCOPE=(--scope user=demo,agent=deploy-ops)

# save CONVERSATION TARGET CONTENT [flags...]: save a memory as the agent,
# show what the store answered (on stderr) and print the record id.
save() {
	local conv=$1 target=$2 content=$3 out
	shift 3
	out=$("$AGENT_LS" memory save "${AGENT[@]}" "${SCOPE[@]}" --conversation "$conv" \
		--target "$target" --content "$content" "$@")
	echo "$out" >&2
	echo "$out" | awk 'NR == 1 {print $2}' | tr -d :
}

step "conv-101: the agent learns when deploys go out (auto tier: promoted at once)"
TUE=$(save conv-101 background.projectContext.deploy_window "Tuesdays after 14:00 ET")

step "conv-102: a correction — Thursdays, not Tuesdays (supersedes the old fact)"
THU=$(save conv-102 background.projectContext.deploy_window "Thursdays after 14:00 ET" --supersedes "$TUE")

step "conv-103: a lesson from a slow rollout (earned tier: one conversation is not enough)"
LESSON=$(save conv-103 judgment.deploy.heuristics "Pause the rollout when the worker queue depth doubles")
"$AGENT_LS" promote "$LESSON" "${AGENT[@]}" --agent deploy.agent.yaml || true

step "conv-104: the same lesson again — corroborated by a second conversation, now it earns promotion"
"$AGENT_LS" memory corroborate "$LESSON" "${AGENT[@]}" --conversation conv-104

step "conv-105: a new escalation trigger (guarded tier: the agent can only propose it)"
TRIGGER=$(save conv-105 judgment.deploy.escalationTriggers "Ask before deleting any resource in prod")
"$AGENT_LS" promote "$TRIGGER" "${AGENT[@]}" --agent deploy.agent.yaml
PROPOSAL=$("$AGENT_LS" proposals --agent deploy.agent.yaml --format json | sed -n 's/.*"id": "\([0-9A-Z]*\)".*/\1/p' | head -1)

step "human:ana approves the proposal"
"$AGENT_LS" approve "$PROPOSAL" --actor human:ana

step "conv-106: the deploy window comes up again — a second conversation corroborates the Thursday fact"
"$AGENT_LS" memory corroborate "$THU" "${AGENT[@]}" --conversation conv-106

step "conv-107: two more facts — more than the background budget (140 characters) holds"
FREEZE=$(save conv-107 background.currentState.change_freeze "No deploys from Dec 20 to Jan 3")
STATUS=$(save conv-107 background.teamContext.status_page "Incidents are announced on status.atlas.example within 15 minutes")
