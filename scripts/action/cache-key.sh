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
# hashFiles rejects outright (actions/runner#3765). So the source is hashed by
# source-hash.sh instead: every file the build reads, path and content.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${GITHUB_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$root"

source_hash="$(bash "$here/source-hash.sh" "$root" | cut -c1-32)"

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
