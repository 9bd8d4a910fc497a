# The lens browser test (lens/e2e_test.go): chromium and playwright-core.
bash scripts/lens-deps.sh
