#!/bin/sh
# crash.sh CONFIG — a test eval command that crashes.
echo "suite exploded: cannot load model" >&2
exit 3
