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
#   INPUT_PROMETHEUS_HEADERS  one `Name: value` per line: --prometheus-header each (they win
#                          over the repository config's headers of the same name)
#   INPUT_PROMETHEUS_TOKEN bearer token: handed to gpulint as GPULINT_PROMETHEUS_TOKEN in its
#                          environment only; never on a command line, never printed
#   INPUT_FAIL_ON          error | warning (default) | info
#   INPUT_FORMAT           github (default: annotations) | sarif (writes INPUT_SARIF_FILE)
#   INPUT_SARIF_FILE       default gpulint.sarif
#   INPUT_HTML_FILE        also write the HTML report there (relative to the workspace)
#   INPUT_CHANGED_ONLY     auto (default: true on pull_request events) | true | false
#   INPUT_FIX              none (default) | commit: `gpulint --fix --commit`, then git push
#                          | pull-request: the measured fixes on the branch gpulint/rightsize,
#                          pushed, and one pull request opened or updated with `gh`
#   INPUT_GITHUB_TOKEN     the token `gh` uses in pull-request mode (GH_TOKEN for gh only)
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
# Outputs (GITHUB_OUTPUT, each as `name<<DELIMITER` with a random delimiter): exit-code, findings, errors, warnings, notices, input-errors,
# sarif-file (sarif mode), html-file (with INPUT_HTML_FILE), changed-since (the commit compared with), fixed-commit (fix: commit),
# pull-request (fix: pull-request: the URL of the pull request opened or updated).
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
github_token="${INPUT_GITHUB_TOKEN:-}"
# Keep the tokens out of the environment of everything but the one program that uses each
# (first, before any other program starts).
unset INPUT_PROMETHEUS_TOKEN GPULINT_PROMETHEUS_TOKEN INPUT_GITHUB_TOKEN
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

config="${INPUT_CONFIG:-}"
metrics="${INPUT_METRICS:-}"
prometheus_url="${INPUT_PROMETHEUS_URL:-}"
fail_on="${INPUT_FAIL_ON:-warning}"
format="${INPUT_FORMAT:-github}"
sarif_file="${INPUT_SARIF_FILE:-gpulint.sarif}"
[[ "$sarif_file" != -* ]] || die "sarif-file: '$sarif_file' looks like an option"
html_file="${INPUT_HTML_FILE:-}"
changed_only="${INPUT_CHANGED_ONLY:-auto}"
fix="${INPUT_FIX:-none}"
version="${INPUT_VERSION:-}"
bin="${GPULINT_BIN:-gpulint}"

case "$fail_on" in error | warning | info) ;; *) die "fail-on must be error, warning or info, not '$fail_on'" ;; esac
case "$format" in github | sarif) ;; *) die "format must be github or sarif, not '$format'" ;; esac
case "$fix" in none | commit | pull-request) ;; *) die "fix must be none, commit or pull-request, not '$fix'" ;; esac
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

# A step output, in GitHub's multi-line form (`key<<DELIMITER`, the value, DELIMITER) with a
# random delimiter: a value holding a line break (a path under a folder the repository named
# `x<LF>sarif-file=/etc/passwd`) cannot add an output line of its own. Paths with a line
# break are refused before they get here (`one_line`); this is the second wall.
output() {
    [[ -n "${GITHUB_OUTPUT:-}" ]] || return 0
    local delimiter
    delimiter="gpulint_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    [[ ${#delimiter} -gt 30 && "$2" != *"$delimiter"* ]] || die "cannot write the output $1"
    printf '%s<<%s\n%s\n%s\n' "$1" "$delimiter" "$2" "$delimiter" >>"$GITHUB_OUTPUT"
}

# one_line WHAT VALUE: dies when VALUE has a line break (LF or CR): no path the action writes
# or reports may have one.
one_line() {
    [[ "$2" != *$'\n'* && "$2" != *$'\r'* ]] ||
        die "$1: a path with a line break is refused: $(printf '%q' "$2")"
}

# no_symlink_on_the_way WHAT PATH: dies when PATH, or a folder on the way to it inside the
# workspace (the working directory), is a symlink: a pull request may commit
# `gpulint.sarif -> ~/.bash_profile` or `reports -> /elsewhere`, and the action must not write
# through it. An absolute path outside the workspace comes from the workflow, not the
# repository, and is taken as it is.
no_symlink_on_the_way() {
    local what="$1" path="$2" prefix="" part
    local -a parts
    if [[ "$path" == /* ]]; then
        [[ "$path" == "$workspace/"* ]] || return 0
        path="${path#"$workspace/"}"
    fi
    IFS=/ read -r -a parts <<<"$path"
    for part in "${parts[@]}"; do
        [[ -z "$part" || "$part" == . ]] && continue
        prefix="${prefix:+$prefix/}$part"
        if [[ -L "$prefix" ]]; then
            die "$what: $prefix is a symlink; the action does not write through it (remove it from the repository)"
        fi
    done
}

# place WHAT SRC DEST: puts the file SRC (written in the action's private folder) at DEST
# without following a symlink: none on the way (checked), a fresh file created beside DEST by
# mktemp (O_EXCL), then renamed over DEST (a rename replaces a name, it never writes through
# one; DEST is neither a symlink nor a folder, so `mv` renames onto it, on GNU and BSD alike).
place() {
    local what="$1" src="$2" dest="$3" dir tmp
    one_line "$what" "$dest"
    no_symlink_on_the_way "$what" "$dest"
    [[ ! -d "$dest" ]] || die "$what: $dest is a folder"
    dir="$(dirname -- "$dest")"
    mkdir -p -- "$dir" || die "$what: cannot create $dir"
    tmp="$(mktemp "$dir/.gpulint.XXXXXX")" || die "$what: cannot write in $dir"
    if ! { cat -- "$src" >"$tmp" && chmod 0644 -- "$tmp" && mv -f -- "$tmp" "$dest"; }; then
        rm -f -- "$tmp"
        die "$what: cannot write $dest"
    fi
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
# The headers the workflow names (the tenant): each line one --prometheus-header.
prometheus_headers=()
while IFS= read -r line; do
    line="${line%$'\r'}"
    [[ -n "${line//[[:space:]]/}" ]] && prometheus_headers+=(--prometheus-header "$line")
done <<<"${INPUT_PROMETHEUS_HEADERS:-}"
[[ -n "$prometheus_url" ]] && common+=("${prometheus_headers[@]}")

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

# The HTML report, from the run that reports the findings (one run, one query).
html_args=()
if [[ -n "$html_file" ]]; then
    [[ "$html_file" != -* ]] || die "html-file: '$html_file' looks like an option"
    one_line html-file "$html_file"
    mkdir -p "$(dirname "$html_file")"
    html_args=(--output-format "html=$html_file")
fi
# Sets the html-file output when the report was written.
html_output() {
    [[ -n "$html_file" && -f "$html_file" ]] || return 0
    local abs
    abs="$(cd "$(dirname "$html_file")" && pwd -P)/$(basename "$html_file")"
    one_line html-file "$abs"
    output html-file "$abs"
}

# ---------------------------------------------------------------------------------------
# fix: pull-request - a right-sizing pull request, for schedule and workflow_dispatch runs

rightsize_branch="gpulint/rightsize"
# The pull request changes what was measured only: `--measured-only` keeps the findings of
# the rules judged against usage and those whose fix writes a measured value (QOS001, QOS002,
# RES001 with a snapshot: `Finding::is_measured`).

# gh with the token in its environment only.
gh_cli() { GH_TOKEN="$github_token" gh "$@" </dev/null; }

# Measures once (a snapshot both runs read, so the report and the fixes agree), reports what
# was measured, commits the fixes on a fresh gpulint/rightsize from the base branch, and
# pushes and opens (or updates) one pull request when that differs from what the branch
# upstream holds. Nothing to change: no branch, no pull request. Exits: 0, or 2 for errors.
rightsize_pull_request() {
    in_git_repo || die "fix: pull-request needs a git checkout"
    [[ -n "$metrics" || -n "$prometheus_url" ]] ||
        die "fix: pull-request needs measurements: give metrics or prometheus-url"
    command -v gh >/dev/null 2>&1 || die "fix: pull-request needs the GitHub CLI (gh), as on GitHub-hosted runners"
    local base current
    current="$(git symbolic-ref --quiet --short HEAD || true)"
    base="${GITHUB_REF_NAME:-$current}"
    if [[ -z "$current" || "$current" != "$base" || "$base" == "$rightsize_branch" ]]; then
        die "fix: pull-request: HEAD is ${current:-detached}; run it on the base branch (a schedule or workflow_dispatch run of the default branch)"
    fi
    if [[ -n "${GITHUB_ACTIONS:-}" ]]; then
        git config user.name >/dev/null || git config user.name 'github-actions[bot]'
        git config user.email >/dev/null ||
            git config user.email '41898282+github-actions[bot]@users.noreply.github.com'
    fi

    local args=(--fail-on "$fail_on" --measured-only)
    [[ -n "$config" ]] && args+=(--config "$config")
    if [[ -n "$prometheus_url" ]]; then
        local snapshot_args=(snapshot --prometheus "$prometheus_url" "${prometheus_headers[@]}"
            --output "$work/usage.json")
        [[ -n "$config" ]] && snapshot_args+=(--config "$config")
        run_gpulint "$work/snapshot.out" "$work/snapshot.stderr" "${snapshot_args[@]}" -- "${paths[@]}"
        if [[ $rc -ne 0 ]]; then
            report --json /dev/null --stderr "$work/snapshot.stderr" --rc 2 --format "$format" \
                --fail-on "$fail_on" --workspace "$workspace" --paths "${paths[*]}" \
                ${GITHUB_STEP_SUMMARY:+--summary "$GITHUB_STEP_SUMMARY"} || true
            output exit-code 2
            exit 2
        fi
        args+=(--metrics "$work/usage.json")
    else
        args+=(--metrics "$metrics")
    fi

    # What was measured and what should change: the summary and the pull request's body.
    run_gpulint "$work/lint.json" "$work/lint.stderr" "${args[@]}" --format json \
        --output-format "markdown=$work/sizing.md" ${html_args[@]+"${html_args[@]}"} -- "${paths[@]}"
    local lint_rc=$rc
    html_output

    local head_before head_after fix_rc
    head_before="$(git rev-parse HEAD)"
    git checkout -q -B "$rightsize_branch"
    run_gpulint "$work/fix.json" "$work/fix.stderr" "${args[@]}" --format json --fix --commit \
        --message "gpulint: right-size requests and limits from measurements" -- "${paths[@]}"
    fix_rc=$rc
    head_after="$(git rev-parse HEAD)"
    git checkout -q "$base"
    git branch -q -D "$rightsize_branch"

    local note="" url="" failed=""
    if [[ "$head_after" == "$head_before" ]]; then
        note="Nothing to right-size: no branch pushed, no pull request."
    else
        # The branch upstream holds this very change already (an earlier run): nothing new.
        local remote_tree=""
        if git fetch --quiet origin "+refs/heads/$rightsize_branch:refs/remotes/origin/$rightsize_branch" 2>/dev/null; then
            remote_tree="$(git rev-parse --verify --quiet "refs/remotes/origin/$rightsize_branch^{tree}" || true)"
        fi
        if [[ -n "$remote_tree" && "$remote_tree" == "$(git rev-parse "$head_after^{tree}")" ]]; then
            note="The branch $rightsize_branch already has these changes: nothing pushed, the pull request is as it was."
        elif ! git push --quiet --force origin "$head_after:refs/heads/$rightsize_branch"; then
            failed="the push of $rightsize_branch failed (contents: write permission?)"
        else
            printf 'gpulint action: pushed %s to %s\n' "${head_after:0:12}" "$rightsize_branch"
            report --json "$work/lint.json" --rc "$lint_rc" --workspace "$workspace" \
                --sizing "$work/sizing.md" --changes "$work/fix.stderr" --pr-body "$work/body.md" >/dev/null
            local number
            if ! number="$(gh_cli pr list --head "$rightsize_branch" --base "$base" --state open \
                --json number --jq '.[0].number // empty')"; then
                failed="gh pr list failed (pull-requests: write permission?)"
            elif [[ -n "$number" ]]; then
                if gh_cli pr edit "$number" --body-file "$work/body.md" >/dev/null; then
                    url="$(gh_cli pr view "$number" --json url --jq .url || true)"
                    note="Pull request #$number updated: ${url:-$rightsize_branch}"
                else
                    failed="gh pr edit $number failed"
                fi
            elif url="$(gh_cli pr create --base "$base" --head "$rightsize_branch" \
                --title "gpulint: right-size GPU workloads from measurements" \
                --body-file "$work/body.md")"; then
                note="Pull request opened: $url"
            else
                failed="gh pr create failed (pull-requests: write permission?)"
            fi
        fi
    fi
    [[ -n "$failed" ]] && note="Right-sizing pull request not made: $failed."
    printf 'gpulint action: %s\n' "$note"
    [[ -n "$url" ]] && output pull-request "$url"

    cat "$work/fix.stderr" >>"$work/lint.stderr"
    # The findings go to the pull request: the step fails on errors only (exit 2).
    local code=0
    [[ $lint_rc -le 1 && $fix_rc -le 1 && -z "$failed" ]] || code=2
    local report_args=(
        --json "$work/lint.json" --stderr "$work/lint.stderr" --rc "$code"
        --format "$format" --fail-on "$fail_on" --workspace "$workspace"
        --paths "${paths[*]}" --note "$note" --sizing "$work/sizing.md"
    )
    [[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && report_args+=(--summary "$GITHUB_STEP_SUMMARY")
    [[ -n "${GITHUB_OUTPUT:-}" ]] && report_args+=(--output "$GITHUB_OUTPUT")
    local report_rc=0
    report "${report_args[@]}" || report_rc=$?
    [[ $report_rc -eq 0 ]] || code=2
    [[ -z "$failed" ]] || printf '::error title=gpulint fix::%s\n' "$(command_data "$failed")"
    output exit-code "$code"
    exit "$code"
}

[[ "$fix" == pull-request ]] && rightsize_pull_request

# The sizing report (GPUs by namespace, the memory chart) from the same run: one query.
primary=("${common[@]}" --format json --output-format "markdown=$work/sizing.md" ${html_args[@]+"${html_args[@]}"})
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
html_output

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
    # gpulint writes the SARIF into the action's private folder; it is then placed at
    # sarif-file with no symlink followed (see `place`).
    run_gpulint "$work/sarif" "$work/sarif.stderr" "${common[@]}" --format sarif -- "${paths[@]}"
    sarif_rc=$rc
    # With input errors (exit 2) the SARIF still holds every other file's findings.
    if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/sarif" 2>/dev/null; then
        place sarif-file "$work/sarif" "$sarif_file"
        sarif_abs="$(cd "$(dirname "$sarif_file")" && pwd -P)/$(basename "$sarif_file")"
        one_line sarif-file "$sarif_abs"
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
