#!/bin/sh
# garbage.sh CONFIG — a test eval command that prints something that is not a result.
echo "All tests passed! Great job."
