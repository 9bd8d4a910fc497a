#!/usr/bin/env bash
# The main job: compose a demo agent from a scripted memory history.
set -euo pipefail
echo "demo: not built yet (see issue 4)" >&2
exit 2
