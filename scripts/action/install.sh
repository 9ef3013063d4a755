#!/usr/bin/env bash
# scripts/action/install.sh - the download step of the gpulint GitHub Action (action.yml).
#
# Installs the released gpulint binary of the action's own version when that release was
# built from exactly the action's source, after checking its SHA-256 against the release's
# SHA256SUMS. Otherwise (an unreleased ref: a branch, a commit after the tag, a fork) it
# installs nothing and says so, and action.yml builds gpulint from the action's source.
#
#   GITHUB_ACTION_PATH   the action's checkout (default: this checkout)
#   GPULINT_RELEASE_URL  where releases are downloaded from (default
#                        https://github.com/gpulint/gpulint/releases/download); the files of a
#                        release are $GPULINT_RELEASE_URL/v$VERSION/FILE. Only the workflow's
#                        environment names it, never the linted repository. https only, or
#                        http to this machine (127.0.0.1, ::1, localhost) for tests and mirrors
#                        on the runner itself.
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP  as GitHub sets them (else uname and a temp dir)
#
# A release v$VERSION has, for each target, gpulint-$VERSION-$TARGET.tar.gz (.zip on Windows)
# holding gpulint-$VERSION-$TARGET/gpulint, plus SHA256SUMS (`sha256sum` lines for every
# archive) and source-tree.sha256 (scripts/action/source-hash.sh of the tagged tree).
#
# Outputs (GITHUB_OUTPUT, else stdout): installed (true|false), bin (the binary, when
# installed), version, reason (why not, when not installed).
# Exit code: 0 installed or not released (then build from source), 2 the release exists but
# its download failed or its checksum does not match: the step fails and nothing runs.
set -Eeuo pipefail
trap 'printf "::error title=gpulint action::unexpected failure (line %s of install.sh)\n" "$LINENO"; exit 2' ERR

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${GITHUB_ACTION_PATH:-$(cd "$here/../.." && pwd)}"
base="${GPULINT_RELEASE_URL:-https://github.com/gpulint/gpulint/releases/download}"
base="${base%/}"

die() {
    printf '::error title=gpulint action::%s\n' "$*"
    exit 2
}
output() {
    if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
        printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
    else
        printf '%s=%s\n' "$1" "$2"
    fi
}
not_installed() {
    printf '::notice title=gpulint action::%s: building gpulint from the action source\n' "$1"
    output installed false
    output reason "$1"
    exit 0
}

version="$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$root/Cargo.toml" | head -n1)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || die "no version in $root/Cargo.toml"
output version "$version"

# The host comes from the environment only; anything but https to another machine is refused
# (no redirect may leave https either).
case "$base" in
    https://*) proto='=https' ;;
    http://127.0.0.1[:/]* | http://127.0.0.1 | http://localhost[:/]* | http://localhost | "http://[::1]"*) proto='=http,https' ;;
    *) die "GPULINT_RELEASE_URL must be an https URL (or http to 127.0.0.1, ::1 or localhost), not '$base'" ;;
esac

os="${RUNNER_OS:-$(uname -s)}"
arch="${RUNNER_ARCH:-$(uname -m)}"
case "$os/$arch" in
    Linux/X64 | Linux/x86_64) target=x86_64-unknown-linux-musl ;;
    Linux/ARM64 | Linux/aarch64) target=aarch64-unknown-linux-musl ;;
    macOS/X64 | Darwin/x86_64) target=x86_64-apple-darwin ;;
    macOS/ARM64 | Darwin/arm64) target=aarch64-apple-darwin ;;
    Windows/X64) target=x86_64-pc-windows-msvc ;;
    *) not_installed "no release binary for $os/$arch" ;;
esac
ext=tar.gz exe=gpulint
[[ "$target" == *windows* ]] && ext=zip exe=gpulint.exe
name="gpulint-$version-$target"
archive="$name.$ext"

tmp="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gpulint-download.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# fetch URL FILE: the HTTP status on stdout ("000" when no answer came).
fetch() {
    curl --silent --show-error --location --proto "$proto" --proto-redir "$proto" \
        --retry 3 --retry-connrefused --connect-timeout 20 --max-time 300 \
        --output "$2" --write-out '%{http_code}' "$1" 2>"$tmp/curl.err" || true
}
require() {
    local status
    status="$(fetch "$1" "$2")"
    [[ "$status" == 200 ]] || die "download of $1 failed (HTTP $status): $(head -c 300 "$tmp/curl.err")"
}

release="$base/v$version"
status="$(fetch "$release/source-tree.sha256" "$tmp/source-tree.sha256")"
case "$status" in
    200) ;;
    404) not_installed "gpulint $version has no release at $release" ;;
    *) die "could not ask $release for its source hash (HTTP $status): $(head -c 300 "$tmp/curl.err")" ;;
esac
released_source="$(head -c 64 "$tmp/source-tree.sha256")"
[[ "$released_source" =~ ^[0-9a-f]{64}$ ]] || die "$release/source-tree.sha256 is not a SHA-256"
if [[ "$(bash "$here/source-hash.sh" "$root")" != "$released_source" ]]; then
    not_installed "the action's source is not the source of release v$version (an unreleased ref)"
fi

require "$release/SHA256SUMS" "$tmp/SHA256SUMS"
# The line whose file name is exactly the archive's (`HASH  NAME` or `HASH *NAME`).
expected="$(awk -v f="$archive" '($2 == f || $2 == "*" f) && $1 ~ /^[0-9a-f]+$/ { print $1; exit }' "$tmp/SHA256SUMS")"
[[ "$expected" =~ ^[0-9a-f]{64}$ ]] || not_installed "release v$version has no $archive in its SHA256SUMS"

started=$SECONDS
require "$release/$archive" "$tmp/$archive"
if command -v sha256sum >/dev/null 2>&1; then
    actual="$(sha256sum <"$tmp/$archive" | cut -c1-64)"
else
    actual="$(shasum -a 256 <"$tmp/$archive" | cut -c1-64)"
fi
if [[ "$actual" != "$expected" ]]; then
    rm -f "$tmp/$archive"
    die "checksum mismatch for $archive from $release: SHA256SUMS says $expected, the download is $actual. Nothing was installed."
fi

# Only the binary is taken out of the archive, by its exact name.
mkdir "$tmp/x"
if [[ "$ext" == zip ]]; then
    unzip -q "$tmp/$archive" "$name/$exe" -d "$tmp/x" || die "$archive has no $name/$exe"
else
    tar -xzf "$tmp/$archive" -C "$tmp/x" "$name/$exe" || die "$archive has no $name/$exe"
fi
dest="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gpulint-$version-$target"
mkdir -p "$dest"
mv -f "$tmp/x/$name/$exe" "$dest/$exe"
chmod 0755 "$dest/$exe"
got="$("$dest/$exe" --version 2>&1 </dev/null || true)"
[[ "$got" == "gpulint $version" ]] || die "the downloaded binary says '$got', not 'gpulint $version'"

printf 'gpulint action: installed gpulint %s (%s, SHA-256 %s) in %ss\n' "$version" "$target" "$actual" "$((SECONDS - started))"
output installed true
output bin "$dest/$exe"
