#!/usr/bin/env bash
# scripts/action/source-hash.sh [ROOT] - the SHA-256 of gpulint's build sources, on stdout.
#
# Every file the build reads (Cargo.lock, Cargo.toml, src/, rules/ - the rule docs and the
# workload catalogue are compiled in with include_str!), path and content. ROOT defaults to
# $GITHUB_ACTION_PATH, else this checkout.
#
# One definition for two uses: the cache keys of a source build (cache-key.sh), and whether a
# release was built from exactly the action's source (install.sh compares it with the
# release's source-tree.sha256, which the release workflow writes with this script).
set -euo pipefail

root="${1:-${GITHUB_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}}"
cd "$root"

hash_tool=(sha256sum)
command -v sha256sum >/dev/null 2>&1 || hash_tool=(shasum -a 256) # macOS runners

{
    printf '%s\n' Cargo.lock Cargo.toml
    find src rules -type f
} | LC_ALL=C sort | while IFS= read -r f; do
    # Path and content both count: a renamed file changes the build too.
    printf '%s %s\n' "$f" "$("${hash_tool[@]}" <"$f" | cut -c1-64)"
done | "${hash_tool[@]}" | cut -c1-64
