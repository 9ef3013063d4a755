#!/usr/bin/env bash
# Benchmark: gpulint end to end against the bare parse floor, on N manifests made from the corpus.
#
#   bench/run.sh [N]          N manifests (default 3000); see bench/README.md
#
# Environment (all optional):
#   CARGO_TARGET_DIR   cargo's target dir (default ${GPULINT_CACHE:-$HOME/.cache/gpulint}/target)
#   BENCH_RUNS         timed runs per tool (default 10)
#   BENCH_WARMUP       warmup runs per tool (default 2)
#   BENCH_RSS_RUNS     /usr/bin/time -v runs per tool for peak RSS and CPU% (default 3)
#   BENCH_TOOLS        comma-separated subset of tool names to run (default: all registered)
#   BENCH_MAX_RATIO    budget for gpulint / bare-parse-tree (default 3)
#   BENCH_STRICT=1     exit 3 when a verdict fails (default: report only, exit 0)
#   BENCH_KEEP=1       keep the generated manifests (their folder is printed)
#   BENCH_NO_INSTALL=1 never apt-get install hyperfine / time
#   BENCH_NO_HYPERFINE=1  use the bash timing loop even if hyperfine is there
#   BENCH_RESULTS      results folder (default bench/results)
#
# Writes $BENCH_RESULTS/latest.md, latest.json (the raw timings, hyperfine's export format),
# latest-summary.json, and the same three as n<N>.* so runs of several sizes are kept side by side.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
N="${1:-3000}"
[[ "$N" =~ ^[0-9]+$ && "$N" -gt 0 ]] || { echo "usage: bench/run.sh [N]  (N = number of manifests, default 3000)" >&2; exit 2; }

RUNS="${BENCH_RUNS:-10}"
WARMUP="${BENCH_WARMUP:-2}"
RSS_RUNS="${BENCH_RSS_RUNS:-3}"
MAX_RATIO="${BENCH_MAX_RATIO:-3}"
RESULTS="${BENCH_RESULTS:-$BENCH_DIR/results}"
PYTHON="${PYTHON:-python3}"

log() { printf '==> [bench] %s\n' "$*" >&2; }
die() { printf '==> [bench] ERROR: %s\n' "$*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null || die "python3 is needed (manifest generation and the summary)"

# ---------------------------------------------------------------------------------------------
# Tools. A tool is a name, the exit codes that count as a successful run, and a command line
# (a string, run with `eval` by the fallback loop and /usr/bin/time, and word-split with shell
# quoting by `hyperfine -N`). @DATA@ is replaced by the generated manifest folder.
# The first tool registered with role "floor" is the baseline of the ratio column.
# To compare another linter (checkov, kube-linter, ...) add a register_tool line (and, if it has
# to be installed, an install step guarded so a missing tool is skipped with a note).
# ---------------------------------------------------------------------------------------------
TOOL_NAMES=() TOOL_OK=() TOOL_CMDS=() TOOL_ROLES=()
register_tool() { # NAME ROLE OK_CODES COMMAND
    TOOL_NAMES+=("$1") TOOL_ROLES+=("$2") TOOL_OK+=("$3") TOOL_CMDS+=("$4")
}

# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------
if [[ -z "${CARGO_TARGET_DIR:-}" ]]; then
    : "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
    export CARGO_TARGET_DIR="${GPULINT_CACHE:-$HOME/.cache/gpulint}/target"
fi
mkdir -p "$CARGO_TARGET_DIR"
log "cargo build --release --examples --bins (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
(cd "$ROOT" && cargo build --release --examples --bins --quiet) || die "release build failed"
BIN="$CARGO_TARGET_DIR/release"
GPULINT="$BIN/gpulint"
BARE="$BIN/examples/bare_parse"
[[ -x "$GPULINT" && -x "$BARE" ]] || die "built binaries not found under $BIN"

q() { printf '%q' "$1"; }
register_tool gpulint            subject "0 1" "$(q "$GPULINT") @DATA@ --format json"
register_tool bare-parse-tree    floor   "0"   "$(q "$BARE") @DATA@"
register_tool bare-parse-events  floor   "0"   "$(q "$BARE") --events-only @DATA@"

# ---------------------------------------------------------------------------------------------
# Measuring tools: hyperfine (preferred) and GNU time
# ---------------------------------------------------------------------------------------------
apt_install() {
    [[ "${BENCH_NO_INSTALL:-0}" == 1 ]] && return 1
    command -v apt-get >/dev/null || return 1
    local sudo=()
    [[ "$(id -u)" -eq 0 ]] || { command -v sudo >/dev/null && sudo=(sudo -n); } || return 1
    log "apt-get install -y $*"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
    "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || true
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
}

HAVE_HYPERFINE=0
if [[ "${BENCH_NO_HYPERFINE:-0}" != 1 ]]; then
    if command -v hyperfine >/dev/null || apt_install hyperfine; then
        command -v hyperfine >/dev/null && HAVE_HYPERFINE=1
    fi
    [[ "$HAVE_HYPERFINE" == 1 ]] || log "hyperfine unavailable: falling back to a bash timing loop"
fi
GNU_TIME=""
if [[ -x /usr/bin/time ]] && /usr/bin/time -v true >/dev/null 2>&1; then
    GNU_TIME=/usr/bin/time
elif apt_install time && /usr/bin/time -v true >/dev/null 2>&1; then
    GNU_TIME=/usr/bin/time
else
    log "GNU time unavailable: no peak RSS figures"
fi

# ---------------------------------------------------------------------------------------------
# Manifests
# ---------------------------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpulint-bench.XXXXXX")"
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() { if [[ "${BENCH_KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
DATA="$WORK/manifests"
CORPUS="$ROOT/testdata/corpus/raw"
[[ -d "$CORPUS" ]] || die "no corpus at $CORPUS"

# "Parseable" is what gpulint itself parses: leave out the files it reports input errors for.
"$GPULINT" "$CORPUS" --format json >"$WORK/corpus.json" || true
"$PYTHON" -c '
import json, sys
for e in json.load(open(sys.argv[1]))["errors"]:
    if e["file"]:
        print(e["file"])
' "$WORK/corpus.json" >"$WORK/exclude.txt"
log "generating $N manifests from $CORPUS ($(wc -l <"$WORK/exclude.txt") unparseable corpus files left out)"
"$PYTHON" "$BENCH_DIR/gen_manifests.py" --corpus "$CORPUS" --out "$DATA" --count "$N" \
    --exclude "$WORK/exclude.txt" >"$WORK/generated.json"

d="$DATA"
while [[ "$d" != / ]]; do
    [[ -f "$d/.gpulint.yaml" ]] && log "WARNING: $d/.gpulint.yaml will be picked up by gpulint"
    d="$(dirname "$d")"
done

# Select tools, substitute the data folder.
declare -a SEL=()
for i in "${!TOOL_NAMES[@]}"; do
    if [[ -n "${BENCH_TOOLS:-}" && ",$BENCH_TOOLS," != *",${TOOL_NAMES[$i]},"* ]]; then continue; fi
    TOOL_CMDS[i]="${TOOL_CMDS[$i]//@DATA@/$(q "$DATA")}"
    SEL+=("$i")
done
[[ ${#SEL[@]} -gt 0 ]] || die "BENCH_TOOLS=$BENCH_TOOLS selects no tool (have: ${TOOL_NAMES[*]})"

# ---------------------------------------------------------------------------------------------
# Check run: every tool once, exit code checked, its output summarised (so the work is real).
# ---------------------------------------------------------------------------------------------
ok_code() { [[ " $1 " == *" $2 "* ]]; }
for i in "${SEL[@]}"; do
    name="${TOOL_NAMES[$i]}"
    rc=0
    eval "${TOOL_CMDS[$i]}" >"$WORK/check-$name.out" 2>"$WORK/check-$name.err" || rc=$?
    ok_code "${TOOL_OK[$i]}" "$rc" || { cat "$WORK/check-$name.err" >&2; die "$name exited $rc (expected ${TOOL_OK[$i]})"; }
    echo "$rc" >"$WORK/check-$name.rc"
done
if [[ -f "$WORK/check-gpulint.out" ]]; then
    "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
if d["errors"]:
    sys.exit("gpulint reported %d input errors on the generated manifests, e.g. %s" % (len(d["errors"]), d["errors"][0]))
' "$WORK/check-gpulint.out" || die "generated manifests do not parse cleanly"
fi

# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------
# Other processes on the machine (a build, a test run) steal cores and skew every figure: wait
# up to BENCH_QUIET_WAIT seconds (default 120) for the machine to be idle, and measure how much
# CPU others used during the timed phase (reported, with a warning when it is significant).
busy_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9; exit}' /proc/stat 2>/dev/null || echo 0; }
now_s() { date +%s.%N; }
busy_share() { # fraction of all cores busy over ~1 s
    local b0 b1
    b0="$(busy_ticks)"; sleep 1; b1="$(busy_ticks)"
    awk -v d="$((b1 - b0))" -v hz="$(getconf CLK_TCK)" -v n="$(nproc)" 'BEGIN {printf "%.2f", d / hz / n}'
}
wait_quiet() {
    [[ -r /proc/stat ]] || return 0
    local waited=0 share
    while share="$(busy_share)"; awk -v s="$share" 'BEGIN {exit !(s > 0.10)}'; do
        if ((waited >= ${BENCH_QUIET_WAIT:-120})); then
            log "WARNING: machine still ${share} busy (other processes) after ${waited}s; measuring anyway"
            return 0
        fi
        ((waited == 0)) && log "machine ${share} busy with other processes; waiting up to ${BENCH_QUIET_WAIT:-120}s for it to go idle"
        sleep 4; waited=$((waited + 5))
    done
}

measure_once() {
    PHASE_T0="$(now_s)" PHASE_B0="$(busy_ticks)"
    if [[ "$HAVE_HYPERFINE" == 1 ]]; then
        log "hyperfine: $WARMUP warmup + $RUNS runs per tool"
        args=()
        for i in "${SEL[@]}"; do args+=(-n "${TOOL_NAMES[$i]}" "${TOOL_CMDS[$i]}"); done
        # -i: gpulint exits 1 when it has findings; exit codes are checked from the export below.
        hyperfine -N -i --style basic --warmup "$WARMUP" --runs "$RUNS" \
            --export-json "$TIMINGS" "${args[@]}" >&2
        METHOD="hyperfine $(hyperfine --version | awk '{print $2}') (-N, $WARMUP warmup, $RUNS runs)"
    else
        log "bash timing loop: $WARMUP warmup + $RUNS runs per tool"
        : >"$WORK/loop.tsv"
        TIMEFORMAT='%3R %3U %3S'
        for i in "${SEL[@]}"; do
            name="${TOOL_NAMES[$i]}"
            for ((r = 0; r < WARMUP; r++)); do eval "${TOOL_CMDS[$i]}" >/dev/null 2>&1 || true; done
            for ((r = 0; r < RUNS; r++)); do
                rc=0
                { time eval "${TOOL_CMDS[$i]}" >/dev/null 2>&1; } 2>"$WORK/t" || rc=$?
                printf '%s\t%s\t%s\n' "$name" "$(tail -n 1 "$WORK/t")" "$rc" >>"$WORK/loop.tsv"
            done
        done
        "$PYTHON" - "$WORK/loop.tsv" "$TIMINGS" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, t, rc = line.rstrip("\n").split("\t")
    real, user, sys_ = (float(x) for x in t.split())
    rows.setdefault(name, []).append((real, user, sys_, int(rc)))
results = []
for name, rs in rows.items():
    times = [r[0] for r in rs]
    results.append({
        "command": name, "mean": statistics.mean(times),
        "stddev": statistics.stdev(times) if len(times) > 1 else 0.0,
        "median": statistics.median(times), "min": min(times), "max": max(times),
        "user": statistics.mean(r[1] for r in rs), "system": statistics.mean(r[2] for r in rs),
        "times": times, "exit_codes": [r[3] for r in rs],
    })
json.dump({"results": results}, open(sys.argv[2], "w"), indent=2)
PY
        METHOD="bash timing loop (TIMEFORMAT real/user/sys, $WARMUP warmup, $RUNS runs)"
    fi
    PHASE_T1="$(now_s)" PHASE_B1="$(busy_ticks)"
    PHASE_WALL="$(awk -v a="$PHASE_T0" -v b="$PHASE_T1" 'BEGIN {printf "%.3f", b - a}')"
    PHASE_BUSY="$(awk -v d="$((PHASE_B1 - PHASE_B0))" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", d / hz}')"
}

# CPU cores used by other processes during the timed phase: the machine's busy time less the
# tools' own (mean user+sys per run times the runs, warmups included).
background_cores() {
    "$PYTHON" -c '
import json, sys
res = json.load(open(sys.argv[1]))["results"]
warm, busy, wall = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
own = sum((r["user"] + r["system"]) * (len(r["times"]) + warm) for r in res)
print("%.2f" % (max(0.0, busy - own) / wall if wall > 0 else 0.0))
' "$TIMINGS" "$WARMUP" "$PHASE_BUSY" "$PHASE_WALL"
}

# Up to 1 + BENCH_RETRIES attempts; the one with the least interference is reported.
TIMINGS="$WORK/timings.json"
ATTEMPTS=$((${BENCH_RETRIES:-2} + 1))
BEST="" BEST_BG=""
for ((attempt = 1; attempt <= ATTEMPTS; attempt++)); do
    wait_quiet
    measure_once
    TRIED="$attempt"
    BG="$(background_cores)"
    cp "$TIMINGS" "$WORK/timings.$attempt.json"
    printf '%s %s\n' "$PHASE_WALL" "$PHASE_BUSY" >"$WORK/phase.$attempt"
    if [[ -z "$BEST" ]] || awk -v b="$BG" -v m="$BEST_BG" 'BEGIN {exit !(b < m)}'; then
        BEST="$attempt" BEST_BG="$BG"
    fi
    if awk -v b="$BG" 'BEGIN {exit !(b < 0.10)}'; then break; fi
    if ((attempt < ATTEMPTS)); then
        log "other processes used ${BG} cores during the timing: measuring again ($attempt/$((ATTEMPTS - 1)) retries)"
    else
        log "WARNING: other processes used ${BG} cores during every attempt (least: ${BEST_BG}, attempt $BEST); figures are skewed"
    fi
done
cp "$WORK/timings.$BEST.json" "$TIMINGS"
read -r PHASE_WALL PHASE_BUSY <"$WORK/phase.$BEST"
((TRIED == 1)) || METHOD="$METHOD; attempt $BEST of $TRIED (least interference)"

# ---------------------------------------------------------------------------------------------
# Peak RSS and CPU with GNU time
# ---------------------------------------------------------------------------------------------
: >"$WORK/rss.tsv"
if [[ -n "$GNU_TIME" ]]; then
    log "/usr/bin/time -v: $RSS_RUNS runs per tool"
    for i in "${SEL[@]}"; do
        name="${TOOL_NAMES[$i]}"
        for ((r = 0; r < RSS_RUNS; r++)); do
            eval "$GNU_TIME -v -o $(q "$WORK/time.txt") ${TOOL_CMDS[$i]}" >/dev/null 2>&1 || true
            awk -v name="$name" -F': ' '
                /Maximum resident set size/ {rss=$2}
                /User time \(seconds\)/ {u=$2}
                /System time \(seconds\)/ {s=$2}
                /Elapsed \(wall clock\) time/ {w=$2}
                /Percent of CPU this job got/ {p=$2}
                /Exit status/ {x=$2}
                END {printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, rss, u, s, w, p, x}
            ' "$WORK/time.txt" >>"$WORK/rss.tsv"
        done
    done
fi

# ---------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------
TOOLS_TSV="$WORK/tools.tsv"
: >"$TOOLS_TSV"
for i in "${SEL[@]}"; do
    name="${TOOL_NAMES[$i]}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${TOOL_ROLES[$i]}" "${TOOL_OK[$i]}" \
        "$(cat "$WORK/check-$name.rc")" "$WORK/check-$name.out" "${TOOL_CMDS[$i]//"$DATA"/DATA}" >>"$TOOLS_TSV"
done

mkdir -p "$RESULTS"
GIT_REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git -C "$ROOT" status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null)" ]]; then GIT_REV="$GIT_REV (work tree modified)"; fi
status=0
"$PYTHON" "$BENCH_DIR/summarize.py" \
    --timings "$TIMINGS" --rss "$WORK/rss.tsv" --tools "$TOOLS_TSV" --generated "$WORK/generated.json" \
    --n "$N" --method "$METHOD" --phase-wall "$PHASE_WALL" --phase-busy "$PHASE_BUSY" --warmup "$WARMUP" --max-ratio "$MAX_RATIO" --git "$GIT_REV" \
    --rustc "$(rustc --version 2>/dev/null || echo unknown)" \
    --out-md "$RESULTS/n$N.md" --out-json "$RESULTS/n$N-summary.json" || status=$?
[[ "$status" -eq 0 || "$status" -eq 3 ]] || die "summary failed"
cp "$TIMINGS" "$RESULTS/n$N.json"
cp "$RESULTS/n$N.md" "$RESULTS/latest.md"
cp "$RESULTS/n$N.json" "$RESULTS/latest.json"
cp "$RESULTS/n$N-summary.json" "$RESULTS/latest-summary.json"
log "wrote $RESULTS/latest.md (and n$N.md, n$N.json, n$N-summary.json)"
if [[ "$status" -eq 3 && "${BENCH_STRICT:-0}" == 1 ]]; then exit 3; fi
exit 0
