#!/usr/bin/env bash
# Installs what `make test` needs on a fresh machine. Under CI=true a missing
# prerequisite that cannot be installed is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

go mod download
