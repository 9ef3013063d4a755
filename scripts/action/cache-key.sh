#!/usr/bin/env bash
# scripts/action/cache-key.sh - cache keys for the gpulint build of action.yml.
#
# Writes to $GITHUB_OUTPUT (stdout when unset):
#   bin-key        key of the cached binary ~/.cargo/bin/gpulint
#   target-key     key of the cached cargo target dir (incremental rebuilds)
#   target-prefix  restore-keys prefix of the target dir (an older build of another version)
#   target-dir     the target dir `cargo install` builds in
#   bin            the path the binary is installed to
#
# Why not `hashFiles()` in action.yml: it only hashes files under GITHUB_WORKSPACE, and the
# action's own checkout ($GITHUB_ACTION_PATH, under _actions/) is outside it, so the hash
# would be empty and every version of the action would share one key - an upgraded action
# would keep running the old cached binary. With `uses: ./` the path contains `/./`, which
# hashFiles rejects outright (actions/runner#3765). So the source is hashed here instead:
# every file the build reads (Cargo.lock, Cargo.toml, src/, rules/ - the rule docs and the
# workload catalogue are compiled in with include_str!), path and content.
set -euo pipefail

root="${GITHUB_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$root"

hash_tool=(sha256sum)
command -v sha256sum >/dev/null 2>&1 || hash_tool=(shasum -a 256) # macOS runners

source_hash="$(
    {
        printf '%s\n' Cargo.lock Cargo.toml
        find src rules -type f
    } | LC_ALL=C sort | while IFS= read -r f; do
        # Path and content both count: a renamed file changes the build too.
        printf '%s %s\n' "$f" "$("${hash_tool[@]}" <"$f" | cut -c1-64)"
    done | "${hash_tool[@]}" | cut -c1-32
)"

os="${RUNNER_OS:-$(uname -s)}"
arch="${RUNNER_ARCH:-$(uname -m)}"
# ImageOS (ubuntu22, ubuntu24, macos14...) is set on GitHub-hosted runners: a binary built on
# one image's glibc is not reused on another.
image="${ImageOS:-local}"
rustc_version="$(rustc --version 2>/dev/null | tr -c 'A-Za-z0-9.\n' '-' || true)"
: "${rustc_version:=no-rustc}"

platform="${os}-${arch}-${image}"
target_dir="${HOME}/.cache/gpulint-action/target"

keys() {
    printf 'bin-key=gpulint-bin-%s-%s\n' "$platform" "$source_hash"
    printf 'target-key=gpulint-target-%s-%s-%s\n' "$platform" "$rustc_version" "$source_hash"
    printf 'target-prefix=gpulint-target-%s-%s-\n' "$platform" "$rustc_version"
    printf 'target-dir=%s\n' "$target_dir"
    printf 'bin=%s\n' "${HOME}/.cargo/bin/gpulint"
}
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    keys >>"$GITHUB_OUTPUT"
else
    keys
fi
