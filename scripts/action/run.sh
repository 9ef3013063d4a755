#!/usr/bin/env bash
# scripts/action/run.sh - the lint step of the gpulint GitHub Action (action.yml).
#
# Runs locally too: every input is an environment variable, none is interpolated into code.
#
#   INPUT_PATHS            whitespace-separated files/folders (default `.`), relative to the
#                          workspace; no glob expansion, nothing that starts with `-`
#   INPUT_CONFIG           --config FILE
#   INPUT_METRICS          --metrics FILE (a snapshot)
#   INPUT_PROMETHEUS_URL   --prometheus URL
#   INPUT_PROMETHEUS_TOKEN bearer token: handed to gpulint as GPULINT_PROMETHEUS_TOKEN in its
#                          environment only; never on a command line, never printed
#   INPUT_FAIL_ON          error | warning (default) | info
#   INPUT_FORMAT           github (default: annotations) | sarif (writes INPUT_SARIF_FILE)
#   INPUT_SARIF_FILE       default gpulint.sarif
#   INPUT_CHANGED_ONLY     auto (default: true on pull_request events) | true | false
#   INPUT_FIX              none (default) | commit: `gpulint --fix --commit`, then git push
#   INPUT_VERSION          informational: a warning when the built gpulint differs
#   GPULINT_BIN            the gpulint binary (default: `gpulint` on PATH)
#
# GitHub's variables used: GITHUB_WORKSPACE (the working directory; default: the current
# one), GITHUB_EVENT_NAME, GITHUB_BASE_REF, GITHUB_HEAD_REF, GITHUB_REF_NAME,
# GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP. Each is optional.
#
# gpulint runs once with --format json; scripts/action/report.py renders the annotations
# and the step summary from that one result (see its header for why). In sarif mode a
# second run writes the SARIF file.
#
# Outputs (GITHUB_OUTPUT): exit-code, findings, errors, warnings, notices, input-errors,
# sarif-file (sarif mode), changed-since (the commit compared with), fixed-commit (fix: commit).
#
# Exit code: gpulint's - 0 nothing at or above fail-on, 1 findings at or above it, 2 usage,
# config, input or action errors (a failed push included).
#
# Never add `set -x` here: it would trace the token.
set -Eeuo pipefail
# An unexpected failure is an action error (2), never mistaken for "findings" (1).
trap 'printf "::error title=gpulint action::unexpected failure (line %s of run.sh)\n" "$LINENO"; exit 2' ERR

# Workflow commands (annotations on GitHub, readable in a terminal), the message escaped as
# GitHub documents: an input with a newline cannot start a command of its own.
command_data() {
    local s="${1//%/%25}"
    s="${s//$'\r'/%0D}"
    printf '%s' "${s//$'\n'/%0A}"
}
die() {
    printf '::error title=gpulint action::%s\n' "$(command_data "$*")"
    exit 2
}
warn() { printf '::warning title=gpulint action::%s\n' "$(command_data "$*")"; }

# ---------------------------------------------------------------------------------------
# Inputs

token="${INPUT_PROMETHEUS_TOKEN:-}"
# Keep the token out of the environment of everything but gpulint and report.py (first,
# before any other program starts).
unset INPUT_PROMETHEUS_TOKEN GPULINT_PROMETHEUS_TOKEN
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

config="${INPUT_CONFIG:-}"
metrics="${INPUT_METRICS:-}"
prometheus_url="${INPUT_PROMETHEUS_URL:-}"
fail_on="${INPUT_FAIL_ON:-warning}"
format="${INPUT_FORMAT:-github}"
sarif_file="${INPUT_SARIF_FILE:-gpulint.sarif}"
changed_only="${INPUT_CHANGED_ONLY:-auto}"
fix="${INPUT_FIX:-none}"
version="${INPUT_VERSION:-}"
bin="${GPULINT_BIN:-gpulint}"

case "$fail_on" in error | warning | info) ;; *) die "fail-on must be error, warning or info, not '$fail_on'" ;; esac
case "$format" in github | sarif) ;; *) die "format must be github or sarif, not '$format'" ;; esac
case "$fix" in none | commit) ;; *) die "fix must be none or commit, not '$fix'" ;; esac
case "$changed_only" in
    auto | '')
        case "${GITHUB_EVENT_NAME:-}" in
            pull_request | pull_request_target) changed_only=true ;;
            *) changed_only=false ;;
        esac
        ;;
    true | false) ;;
    *) die "changed-only must be auto, true or false, not '$changed_only'" ;;
esac
if [[ -n "$metrics" && -n "$prometheus_url" ]]; then
    die "metrics and prometheus-url are exclusive: give a snapshot or a live Prometheus"
fi
if [[ -n "$token" && -z "$prometheus_url" ]]; then
    warn "prometheus-token is set but prometheus-url is not: the token is not used"
fi

# Paths: split on whitespace (`read` expands no globs), then passed after `--`.
paths=()
read -r -d '' -a paths <<<"${INPUT_PATHS:-.}" || true
[[ ${#paths[@]} -gt 0 ]] || paths=(.)
for p in "${paths[@]}"; do
    [[ "$p" != -* ]] || die "paths: '$p' looks like an option; give files or folders only"
done

command -v python3 >/dev/null 2>&1 || die "python3 is needed (it is on every GitHub-hosted runner)"
if [[ "$bin" == */* ]]; then
    [[ -x "$bin" ]] || die "GPULINT_BIN=$bin is not an executable file"
else
    command -v "$bin" >/dev/null 2>&1 || die "gpulint not found on PATH (set GPULINT_BIN)"
fi

workspace="${GITHUB_WORKSPACE:-$PWD}"
cd "$workspace" || die "cannot enter GITHUB_WORKSPACE=$workspace"
workspace="$(pwd -P)"

tmp_root="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
work="$(mktemp -d "$tmp_root/gpulint-action.XXXXXX")" || die "cannot create a temporary folder in $tmp_root"
trap 'rm -rf "$work"' EXIT

built_version="$("$bin" --version 2>/dev/null || true)"
printf 'gpulint action: %s (%s)\n' "${built_version:-gpulint, version unknown}" "$bin"
if [[ -n "$version" && "$built_version" != *"${version#v}"* ]]; then
    warn "version '$version' was asked for, but the action built '${built_version}' (the action's own source at its ref is what runs)"
fi

output() {
    [[ -n "${GITHUB_OUTPUT:-}" ]] || return 0
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
}

# ---------------------------------------------------------------------------------------
# The base of a pull request, for changed-only

in_git_repo() { git rev-parse --is-inside-work-tree >/dev/null 2>&1; }

changed_since=""
scope_note=""
if [[ "$changed_only" == true ]]; then
    base="${GITHUB_BASE_REF:-}"
    base_commit=""
    if [[ -z "$base" ]]; then
        warn "changed-only: no base branch (GITHUB_BASE_REF is set on pull_request events only); linting every manifest"
    elif ! in_git_repo; then
        warn "changed-only: $workspace is not a git checkout; linting every manifest"
    else
        # The remote-tracking branch first (actions/checkout fetches it with fetch-depth: 0),
        # then a local branch of that name.
        for ref in "refs/remotes/origin/$base" "refs/heads/$base"; do
            if base_commit="$(git rev-parse --verify --quiet "$ref^{commit}")"; then
                base_label="${ref#refs/remotes/}"
                base_label="${base_label#refs/heads/}"
                break
            fi
            base_commit=""
        done
        if [[ -z "$base_commit" ]]; then
            warn "changed-only: base branch '$base' is not in the checkout (use actions/checkout with fetch-depth: 0); linting every manifest"
        elif ! changed_since="$(git merge-base "$base_commit" HEAD 2>/dev/null)"; then
            # A shallow clone has no common ancestor to compare with.
            changed_since=""
            warn "changed-only: no merge base of '$base_label' and HEAD (a shallow clone? use actions/checkout with fetch-depth: 0); linting every manifest"
        else
            # The merge base, not the branch tip: a PR head checkout must not be charged with
            # what landed on the base branch after it forked (for the default merge-commit
            # checkout both are the same commit).
            scope_note="objects changed since ${changed_since:0:12} (merge base with ${base_label})"
            printf 'gpulint action: changed-only: comparing with %s\n' "$scope_note"
            output changed-since "$changed_since"
        fi
    fi
fi

# ---------------------------------------------------------------------------------------
# gpulint

common=(--fail-on "$fail_on")
[[ -n "$config" ]] && common+=(--config "$config")
[[ -n "$metrics" ]] && common+=(--metrics "$metrics")
[[ -n "$prometheus_url" ]] && common+=(--prometheus "$prometheus_url")

# run_gpulint STDOUT_FILE STDERR_FILE ARGS...: sets rc. The token reaches gpulint through
# its environment only (a prefix assignment: not in any argv, not exported to this shell).
run_gpulint() {
    local out="$1" err="$2"
    shift 2
    rc=0
    if [[ -n "$prometheus_url" && -n "$token" ]]; then
        GPULINT_PROMETHEUS_TOKEN="$token" "$bin" "$@" >"$out" 2>"$err" </dev/null || rc=$?
    else
        "$bin" "$@" >"$out" 2>"$err" </dev/null || rc=$?
    fi
}

# report.py ARGS...: the token is passed for redaction only, in the environment.
report() { GPULINT_ACTION_REDACT="$token" python3 "$here/report.py" "$@"; }

# The sizing report (GPUs by namespace, the memory chart) from the same run: one query.
primary=("${common[@]}" --format json --output-format "markdown=$work/sizing.md")
[[ -n "$changed_since" ]] && primary+=(--changed-since "$changed_since")

fixed_commit=""
push_failed=""
if [[ "$fix" == commit ]]; then
    in_git_repo || die "fix: commit needs a git checkout"
    branch="${GITHUB_HEAD_REF:-${GITHUB_REF_NAME:-}}"
    current="$(git symbolic-ref --quiet --short HEAD || true)"
    [[ -n "$branch" ]] || branch="$current"
    [[ -n "$branch" ]] || die "fix: commit: no branch to push to (a detached HEAD outside a pull request)"
    if [[ "$current" != "$branch" ]]; then
        # The default pull_request checkout is a detached merge commit: a commit on top of it
        # would push the base branch into the PR branch.
        die "fix: commit: HEAD is ${current:-detached}, not the branch '$branch'; check out the PR branch (actions/checkout with ref: \${{ github.head_ref }})"
    fi
    # gpulint commits with git's user.name/user.email (libgit2 reads the config, not
    # GIT_AUTHOR_*): give the checkout the Actions bot identity when it has none.
    if [[ -n "${GITHUB_ACTIONS:-}" ]]; then
        git config user.name >/dev/null || git config user.name 'github-actions[bot]'
        git config user.email >/dev/null ||
            git config user.email '41898282+github-actions[bot]@users.noreply.github.com'
    fi
    head_before="$(git rev-parse HEAD)"
    primary+=(--fix --commit --message "gpulint: apply safe fixes")
fi

run_gpulint "$work/lint.json" "$work/lint.stderr" "${primary[@]}" -- "${paths[@]}"
lint_rc=$rc

if [[ "$fix" == commit ]]; then
    head_after="$(git rev-parse HEAD)"
    if [[ "$head_after" != "$head_before" ]]; then
        fixed_commit="$head_after"
        printf 'gpulint action: pushing %s to %s\n' "${fixed_commit:0:12}" "$branch"
        if git push --quiet origin "HEAD:refs/heads/$branch"; then
            output fixed-commit "$fixed_commit"
        else
            push_failed=yes
        fi
    fi
fi

sarif_abs=""
sarif_rc=0
if [[ "$format" == sarif ]]; then
    # Always the whole repo: code scanning compares a PR's analysis with the base branch's,
    # and alerts missing from a changed-only analysis would count as fixed by the PR.
    mkdir -p "$(dirname "$sarif_file")"
    run_gpulint "$work/sarif" "$work/sarif.stderr" "${common[@]}" --format sarif -- "${paths[@]}"
    sarif_rc=$rc
    # With input errors (exit 2) the SARIF still holds every other file's findings.
    if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/sarif" 2>/dev/null; then
        cp "$work/sarif" "$sarif_file"
        sarif_abs="$(cd "$(dirname "$sarif_file")" && pwd -P)/$(basename "$sarif_file")"
        output sarif-file "$sarif_abs"
    fi
fi

report_args=(
    --json "$work/lint.json" --stderr "$work/lint.stderr" --rc "$lint_rc"
    --format "$format" --fail-on "$fail_on" --workspace "$workspace"
    --paths "${paths[*]}"
)
[[ -n "$scope_note" ]] && report_args+=(--scope "$scope_note")
[[ -n "$fixed_commit" ]] && report_args+=(--fixed-commit "$fixed_commit" --fixed-branch "$branch")
[[ -n "$push_failed" ]] && report_args+=(--push-failed)
[[ -n "$sarif_abs" ]] && report_args+=(--sarif-file "$sarif_file")
[[ "$format" == sarif && -z "$sarif_abs" ]] && report_args+=(--sarif-stderr "$work/sarif.stderr")
[[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && report_args+=(--summary "$GITHUB_STEP_SUMMARY")
[[ -f "$work/sizing.md" ]] && report_args+=(--sizing "$work/sizing.md")
[[ -n "${GITHUB_OUTPUT:-}" ]] && report_args+=(--output "$GITHUB_OUTPUT")
report_rc=0
report "${report_args[@]}" || report_rc=$?

code=$lint_rc
[[ $report_rc -eq 0 ]] || code=2
[[ "$format" != sarif || -n "$sarif_abs" ]] || code=2
[[ $sarif_rc -le 1 ]] || code=2
[[ -z "$push_failed" ]] || code=2
output exit-code "$code"
exit "$code"
