# Shared by the "where a user waits" benchmarks (issue 15): monorepo.sh, diamond.sh, snapshot.sh,
# fix.sh, helm.sh; bench/all.sh runs them all and prints their rows as one table.
# Sourced after BENCH_DIR and ROOT are set.

: "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${GPULINT_CACHE:-$HOME/.cache/gpulint}/target}"
# BENCH_GPULINT: another build to time (an earlier commit's, to compare); default the one built here.
GPULINT="${BENCH_GPULINT:-$CARGO_TARGET_DIR/release/gpulint}"

bench_build() {
    (cd "$ROOT" && cargo build --release --quiet --bin gpulint)
}

# median: the median of the numbers on stdin, one per line.
median() {
    sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# bench_row CASE COMMAND GPULINT BASELINE RATIO TARGET VERDICT: one row of bench/all.sh's table,
# appended (tab-separated) to the file $BENCH_ROWS names, when it names one.
bench_row() {
    [[ -n "${BENCH_ROWS:-}" ]] || return 0
    local IFS=$'\t'
    printf '%s\n' "$*" >> "$BENCH_ROWS"
}
