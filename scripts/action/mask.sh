#!/usr/bin/env bash
# scripts/action/mask.sh - register the Prometheus token with the runner's log masking.
#
# The first step of action.yml, before anything that could print the token. Reads the token
# from INPUT_PROMETHEUS_TOKEN (never from the command line) and prints one `::add-mask::`
# workflow command per non-empty line of it (GitHub masks a multi-line value line by line).
# The runner consumes these commands: they are not shown in the log.
#
# This is the only place where the token is written to stdout. scripts/action/run.sh never
# prints it, so the lint step's output is clean even where the masking did not happen.
set -euo pipefail

token="${INPUT_PROMETHEUS_TOKEN:-}"
[[ -n "$token" ]] || exit 0

while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line%$'\r'}"
    [[ -n "$line" ]] || continue
    # printf, not echo: a token starting with `-n` or holding backslashes stays as is.
    printf '::add-mask::%s\n' "$line"
done <<<"$token"
