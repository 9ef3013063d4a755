#!/usr/bin/env bash
# Benchmark: gpulint end to end against the bare parse floor and against checkov, on N manifests
# made from the corpus.
#
#   bench/run.sh [N]          N manifests (default 3000); see bench/README.md
#
# Environment (all optional):
#   CARGO_TARGET_DIR   cargo's target dir (default ${GPULINT_CACHE:-$HOME/.cache/gpulint}/target)
#   BENCH_RUNS         timed runs per tool (default 10)
#   BENCH_WARMUP       warmup runs per tool (default 2)
#   BENCH_RSS_RUNS     /usr/bin/time -v runs per tool for peak RSS and CPU% (default 3)
#   BENCH_TOOLS        comma-separated subset of tool names to run (default: all registered)
#   BENCH_SLOW_RUNS / BENCH_SLOW_WARMUP / BENCH_SLOW_RSS_RUNS / BENCH_SLOW_RETRIES
#                      the same for the slow peers (checkov): default 2 / 0 / 1 / 1
#   BENCH_MAX_RATIO    budget for gpulint / bare-parse-tree (default 3)
#   BENCH_MAX_SERIAL_RATIO  budget for gpulint / bare-parse-events-1t (default 1.5)
#   BENCH_MIN_PEER_SPEEDUP  gpulint must be this many times faster than each peer (default 100)
#   BENCH_MAX_RSS_MIB  budget for gpulint's peak RSS in MiB (default 300)
#   BENCH_CHECKOV_VERSION   checkov version installed from PyPI (default 3.3.30)
#   BENCH_NO_CHECKOV=1 leave checkov out (no install, no runs)
#   BENCH_STRICT=1     exit 3 when a verdict fails (default: report only, exit 0)
#   BENCH_KEEP=1       keep the generated manifests (their folder is printed)
#   BENCH_NO_INSTALL=1 never apt-get install hyperfine / time, never pip install checkov
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
# Tools. A tool is a name, a role, the exit codes that count as a successful run, and a command
# line (a string, run with `eval` by the fallback loop and /usr/bin/time, and word-split with
# shell quoting by `hyperfine -N`). @DATA@ is replaced by the generated manifest folder.
# Roles: "subject" (gpulint), "floor" (the first one is the baseline of the ratio column) and
# "peer" (another linter; gpulint must be BENCH_MIN_PEER_SPEEDUP times faster).
# An optional fifth argument "RUNS WARMUP RSS_RUNS RETRIES" gives a slow tool its own counts: it
# is then timed in a hyperfine run of its own. The check run is under /usr/bin/time and counts
# as one of the RSS_RUNS.
# To compare another linter (kube-linter, ...) add a register_tool line (and, if it has to be
# installed, an install step guarded so a missing tool is skipped with a note).
# ---------------------------------------------------------------------------------------------
TOOL_NAMES=() TOOL_OK=() TOOL_CMDS=() TOOL_ROLES=() TOOL_COUNTS=()
register_tool() { # NAME ROLE OK_CODES COMMAND [COUNTS]
    TOOL_NAMES+=("$1") TOOL_ROLES+=("$2") TOOL_OK+=("$3") TOOL_CMDS+=("$4") TOOL_COUNTS+=("${5:-}")
}

# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------
: "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE="${GPULINT_CACHE:-$HOME/.cache/gpulint}"
if [[ -z "${CARGO_TARGET_DIR:-}" ]]; then
    export CARGO_TARGET_DIR="$CACHE/target"
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
# Issue 15's floor: the event parse on one thread (rayon's pool of one), what a plain
# single-threaded parser does; gpulint on every core is held to BENCH_MAX_SERIAL_RATIO of it.
register_tool bare-parse-events-1t floor "0"  "env RAYON_NUM_THREADS=1 $(q "$BARE") --events-only @DATA@"

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
# checkov (the most used open-source peer), from PyPI into a venv under $CACHE, pinned
# ---------------------------------------------------------------------------------------------
selected() { [[ -z "${BENCH_TOOLS:-}" || ",$BENCH_TOOLS," == *",$1,"* ]]; }
CHECKOV_VERSION="${BENCH_CHECKOV_VERSION:-3.3.30}"
CHECKOV_VENV="$CACHE/venv-checkov"
CHECKOV="$CHECKOV_VENV/bin/checkov"
checkov_ok() { [[ -x "$CHECKOV" ]] && [[ "$("$CHECKOV" --version 2>/dev/null)" == "$CHECKOV_VERSION" ]]; }
install_checkov() {
    [[ "${BENCH_NO_INSTALL:-0}" == 1 ]] && return 1
    log "pip install checkov==$CHECKOV_VERSION into $CHECKOV_VENV (once; a few minutes)"
    mkdir -p "$CACHE"
    if ! "$PYTHON" -m venv --clear "$CHECKOV_VENV" >"$CACHE/venv-checkov.log" 2>&1; then
        apt_install python3-venv && "$PYTHON" -m venv --clear "$CHECKOV_VENV" >"$CACHE/venv-checkov.log" 2>&1 || return 1
    fi
    "$CHECKOV_VENV/bin/pip" install --quiet --disable-pip-version-check "checkov==$CHECKOV_VERSION" \
        >>"$CACHE/venv-checkov.log" 2>&1 || return 1
    checkov_ok
}
if [[ "${BENCH_NO_CHECKOV:-0}" != 1 ]] && selected checkov; then
    if checkov_ok || install_checkov; then
        # Scan locally only: no platform API key, no download of policy metadata or mappings,
        # no PyPI update check at start-up, no SCA package scan (needs the platform anyway).
        unset BC_API_KEY PRISMA_API_URL
        export CKV_SKIP_PACKAGE_UPDATE_CHECK=true BC_SKIP_MAPPING=TRUE CHECKOV_RUN_SCA_PACKAGE_SCAN_V2=false
        # The same files as gpulint: checkov's kubernetes framework reads *.yaml, *.yml (and
        # *.json: the generated tree has none). --compact leaves the code blocks out of the JSON
        # as gpulint's JSON has none; exit 1 = failed checks, 2 = crash.
        register_tool checkov peer "0 1" \
            "$(q "$CHECKOV") --framework kubernetes -d @DATA@ --quiet --compact -o json --skip-download --skip-results-upload" \
            "${BENCH_SLOW_RUNS:-2} ${BENCH_SLOW_WARMUP:-0} ${BENCH_SLOW_RSS_RUNS:-1} ${BENCH_SLOW_RETRIES:-1}"
    else
        log "WARNING: checkov $CHECKOV_VERSION could not be installed (see $CACHE/venv-checkov.log): left out"
    fi
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

# Select tools, substitute the data folder, read each tool's counts.
declare -a SEL=() T_RUNS=() T_WARMUP=() T_RSS=() T_RETRIES=()
for i in "${!TOOL_NAMES[@]}"; do
    selected "${TOOL_NAMES[$i]}" || continue
    TOOL_CMDS[i]="${TOOL_CMDS[$i]//@DATA@/$(q "$DATA")}"
    # shellcheck disable=SC2206  # "RUNS WARMUP RSS_RUNS RETRIES", word-split on purpose
    c=(${TOOL_COUNTS[$i]})
    T_RUNS[i]="${c[0]:-$RUNS}" T_WARMUP[i]="${c[1]:-$WARMUP}" T_RSS[i]="${c[2]:-$RSS_RUNS}"
    T_RETRIES[i]="${c[3]:-${BENCH_RETRIES:-2}}"
    SEL+=("$i")
done
[[ ${#SEL[@]} -gt 0 ]] || die "BENCH_TOOLS=$BENCH_TOOLS selects no tool (have: ${TOOL_NAMES[*]})"

# ---------------------------------------------------------------------------------------------
# Check run: every tool once, exit code checked, its output summarised (so the work is real).
# Under GNU time when there is one: the run is also the first peak-RSS sample.
# ---------------------------------------------------------------------------------------------
: >"$WORK/rss.tsv"
# Appends one /usr/bin/time -v report ($WORK/time.txt) as a line of rss.tsv.
record_time() { # NAME
    awk -v name="$1" -F': ' '
        /Maximum resident set size/ {rss=$2}
        /User time \(seconds\)/ {u=$2}
        /System time \(seconds\)/ {s=$2}
        /Elapsed \(wall clock\) time/ {w=$2}
        /Percent of CPU this job got/ {p=$2}
        /Exit status/ {x=$2}
        END {printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, rss, u, s, w, p, x}
    ' "$WORK/time.txt" >>"$WORK/rss.tsv"
}
ok_code() { [[ " $1 " == *" $2 "* ]]; }
for i in "${SEL[@]}"; do
    name="${TOOL_NAMES[$i]}"
    log "check run: $name"
    rc=0
    if [[ -n "$GNU_TIME" ]]; then
        eval "$GNU_TIME -v -o $(q "$WORK/time.txt") ${TOOL_CMDS[$i]}" >"$WORK/check-$name.out" 2>"$WORK/check-$name.err" || rc=$?
        record_time "$name"
    else
        eval "${TOOL_CMDS[$i]}" >"$WORK/check-$name.out" 2>"$WORK/check-$name.err" || rc=$?
    fi
    ok_code "${TOOL_OK[$i]}" "$rc" || { tail -n 50 "$WORK/check-$name.err" >&2; die "$name exited $rc (expected ${TOOL_OK[$i]})"; }
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
if [[ -f "$WORK/check-checkov.out" ]]; then
    "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
reports = d if isinstance(d, list) else [d]
resources = sum(r.get("summary", {}).get("resource_count", 0) for r in reports)
if resources == 0:
    sys.exit("checkov scanned no Kubernetes resource")
' "$WORK/check-checkov.out" || die "checkov did not scan the generated manifests"
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

# Times the tools IDX... with WARMUP warmup and RUNS timed runs each into OUT (hyperfine's JSON
# export format, also from the fallback loop); sets PHASE_WALL, PHASE_BUSY and MEASURED_WITH.
measure_once() { # WARMUP RUNS OUT IDX...
    local warm="$1" runs="$2" out="$3" i r name rc
    shift 3
    PHASE_T0="$(now_s)" PHASE_B0="$(busy_ticks)"
    if [[ "$HAVE_HYPERFINE" == 1 ]]; then
        local args=()
        for i in "$@"; do args+=(-n "${TOOL_NAMES[$i]}" "${TOOL_CMDS[$i]}"); done
        # -i: gpulint exits 1 when it has findings; exit codes are checked from the export below.
        hyperfine -N -i --style basic --warmup "$warm" --runs "$runs" --export-json "$out" "${args[@]}" >&2
        MEASURED_WITH="hyperfine $(hyperfine --version | awk '{print $2}') (-N)"
    else
        : >"$WORK/loop.tsv"
        TIMEFORMAT='%3R %3U %3S'
        for i in "$@"; do
            name="${TOOL_NAMES[$i]}"
            for ((r = 0; r < warm; r++)); do eval "${TOOL_CMDS[$i]}" >/dev/null 2>&1 || true; done
            for ((r = 0; r < runs; r++)); do
                rc=0
                { time eval "${TOOL_CMDS[$i]}" >/dev/null 2>&1; } 2>"$WORK/t" || rc=$?
                printf '%s\t%s\t%s\n' "$name" "$(tail -n 1 "$WORK/t")" "$rc" >>"$WORK/loop.tsv"
            done
        done
        "$PYTHON" - "$WORK/loop.tsv" "$out" <<'PY'
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
        MEASURED_WITH="bash timing loop (TIMEFORMAT real/user/sys)"
    fi
    PHASE_T1="$(now_s)" PHASE_B1="$(busy_ticks)"
    PHASE_WALL="$(awk -v a="$PHASE_T0" -v b="$PHASE_T1" 'BEGIN {printf "%.3f", b - a}')"
    PHASE_BUSY="$(awk -v d="$((PHASE_B1 - PHASE_B0))" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", d / hz}')"
}

# CPU cores used by other processes during a timed phase: the machine's busy time less the
# tools' own (mean user+sys per run times the runs, warmups included).
background_cores() { # TIMINGS WARMUP
    "$PYTHON" -c '
import json, sys
res = json.load(open(sys.argv[1]))["results"]
warm, busy, wall = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
own = sum((r["user"] + r["system"]) * (len(r["times"]) + warm) for r in res)
print("%.2f" % (max(0.0, busy - own) / wall if wall > 0 else 0.0))
' "$1" "$2" "$PHASE_BUSY" "$PHASE_WALL"
}

# Groups: the tools with the default counts are timed together in one hyperfine run; a tool with
# counts of its own (a slow peer) in a run of its own. Each group: up to 1 + RETRIES attempts,
# the one with the least interference is kept; its results get "warmup", "background_cores"
# and "attempt" fields, and all groups are merged into $TIMINGS in the order of SEL.
TIMINGS="$WORK/timings.json"
GROUP_KEYS=() GROUP_FILES=() METHOD_PARTS=()
for i in "${SEL[@]}"; do
    key="${TOOL_COUNTS[$i]:+$i}"
    key="${key:-default}"
    [[ " ${GROUP_KEYS[*]} " == *" $key "* ]] || GROUP_KEYS+=("$key")
done
for key in "${GROUP_KEYS[@]}"; do
    members=()
    for i in "${SEL[@]}"; do
        k="${TOOL_COUNTS[$i]:+$i}"
        [[ "${k:-default}" == "$key" ]] && members+=("$i")
    done
    first="${members[0]}"
    g_warm="${T_WARMUP[$first]}" g_runs="${T_RUNS[$first]}" g_retries="${T_RETRIES[$first]}"
    names="$(for i in "${members[@]}"; do printf '%s, ' "${TOOL_NAMES[$i]}"; done)"
    names="${names%, }"
    attempts=$((g_retries + 1)) best="" best_bg="" tried=0
    for ((attempt = 1; attempt <= attempts; attempt++)); do
        wait_quiet
        log "timing $names: $g_warm warmup + $g_runs runs each"
        measure_once "$g_warm" "$g_runs" "$WORK/timings.$key.$attempt.json" "${members[@]}"
        tried="$attempt"
        bg="$(background_cores "$WORK/timings.$key.$attempt.json" "$g_warm")"
        if [[ -z "$best" ]] || awk -v b="$bg" -v m="$best_bg" 'BEGIN {exit !(b < m)}'; then
            best="$attempt" best_bg="$bg"
        fi
        if awk -v b="$bg" 'BEGIN {exit !(b < 0.10)}'; then break; fi
        if ((attempt < attempts)); then
            log "other processes used ${bg} cores while timing $names: measuring again ($attempt/$((attempts - 1)) retries)"
        else
            log "WARNING: other processes used ${bg} cores during every attempt at $names (least: ${best_bg}, attempt $best); figures are skewed"
        fi
    done
    "$PYTHON" - "$WORK/timings.$key.$best.json" "$g_warm" "$best_bg" "$best" "$tried" <<'PY'
import json, sys
path, warm, bg, best, tried = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
d = json.load(open(path))
for r in d["results"]:
    r.update(warmup=warm, background_cores=bg, attempt=best, attempts=tried)
json.dump(d, open(path, "w"), indent=2)
PY
    GROUP_FILES+=("$WORK/timings.$key.$best.json")
    part="$names: $g_warm warmup + $g_runs runs"
    ((tried == 1)) || part="$part, attempt $best of $tried (least interference)"
    METHOD_PARTS+=("$part")
done
"$PYTHON" - "$TIMINGS" "${GROUP_FILES[@]}" <<'PY'
import json, sys
results = []
for path in sys.argv[2:]:
    results += json.load(open(path))["results"]
json.dump({"results": results}, open(sys.argv[1], "w"), indent=2)
PY
METHOD="$MEASURED_WITH; $(printf '%s; ' "${METHOD_PARTS[@]}")"
METHOD="${METHOD%; }"

# ---------------------------------------------------------------------------------------------
# Peak RSS and CPU with GNU time: RSS_RUNS runs per tool, the check run included
# ---------------------------------------------------------------------------------------------
if [[ -n "$GNU_TIME" ]]; then
    for i in "${SEL[@]}"; do
        name="${TOOL_NAMES[$i]}"
        ((T_RSS[i] > 1)) || continue
        wait_quiet # peak RSS does not depend on load, the CPU% column does
        log "/usr/bin/time -v: $name, $((T_RSS[i] - 1)) more run(s)"
        for ((r = 1; r < T_RSS[i]; r++)); do
            eval "$GNU_TIME -v -o $(q "$WORK/time.txt") ${TOOL_CMDS[$i]}" >/dev/null 2>&1 || true
            record_time "$name"
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
    --n "$N" --method "$METHOD" --max-ratio "$MAX_RATIO" --git "$GIT_REV" \
    --max-serial-ratio "${BENCH_MAX_SERIAL_RATIO:-1.5}" \
    --min-peer-speedup "${BENCH_MIN_PEER_SPEEDUP:-100}" --max-rss-mib "${BENCH_MAX_RSS_MIB:-300}" \
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
