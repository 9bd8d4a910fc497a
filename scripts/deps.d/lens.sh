# Sourced by scripts/deps.sh (from the repository root, with need_fail):
# what the lens's browser test (lens/e2e_test.go) needs. Debian's chromium
# from apt-get (as root) and playwright-core from the committed lockfile in
# lens/testdata/e2e (npm ci; it downloads no browser). Under CI=true a
# prerequisite that cannot be installed fails; elsewhere the test skips.
if [ ! -x /usr/bin/chromium ]; then
	if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || need_fail "cannot install chromium with apt-get"
	else
		need_fail "/usr/bin/chromium is missing and apt-get (as root) is not available to install it"
	fi
fi
if ! command -v npm >/dev/null 2>&1; then
	need_fail "node and npm are needed for the lens browser test"
elif [ ! -f lens/testdata/e2e/node_modules/playwright-core/package.json ] \
	|| [ lens/testdata/e2e/package-lock.json -nt lens/testdata/e2e/node_modules/.package-lock.json ]; then
	(cd lens/testdata/e2e && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) || need_fail "npm ci in lens/testdata/e2e failed"
fi
