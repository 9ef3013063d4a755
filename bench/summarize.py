#!/usr/bin/env python3
"""Summarise a bench/run.sh run: timings (hyperfine's JSON export format), GNU time figures and
the check-run outputs -> a Markdown report, a JSON summary, and the table on stdout.

Exit 0 when every verdict holds, 3 when one fails (run.sh decides whether that fails the run).
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def parse_wall(text):
    """GNU time's elapsed time: [h:]m:ss[.cc]."""
    parts = [float(p) for p in text.strip().split(":")]
    seconds = 0.0
    for p in parts:
        seconds = seconds * 60 + p
    return seconds


def describe_output(name, role, path):
    """A short description of what a tool's check run produced (proof the work was done)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return {}, ""
    if text.lstrip().startswith(("{", "[")):
        try:
            d = json.loads(text)
        except ValueError:
            return {}, text[:200]
        checkov = [r for r in (d if isinstance(d, list) else [d]) if isinstance(r, dict) and "check_type" in r]
        if checkov:
            info = {k: sum(int(r.get("summary", {}).get(k) or 0) for r in checkov)
                    for k in ("failed", "passed", "skipped", "parsing_errors", "resource_count")}
            info["check_types"] = [r["check_type"] for r in checkov]
            return info, "%d failed and %d passed checks on %d resources, %d parsing errors" % (
                info["failed"], info["passed"], info["resource_count"], info["parsing_errors"])
        if isinstance(d, dict) and "findings" in d:
            findings = d.get("findings") or []
            by_rule = {}
            for f in findings:
                by_rule[f.get("rule", "?")] = by_rule.get(f.get("rule", "?"), 0) + 1
            info = {"findings": len(findings), "input_errors": len(d.get("errors") or []), "by_rule": by_rule}
            return info, "%d findings, %d input errors" % (info["findings"], info["input_errors"])
        return {}, "JSON output"
    line = text.strip().splitlines()[-1] if text.strip() else ""
    info = {k: (int(v) if v.isdigit() else v) for k, v in re.findall(r"(\w+)=(\S+)", line)}
    return info, line


def fmt_time(s):
    return "%.1f ms" % (s * 1000) if s < 10 else "%.2f s" % s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timings", required=True)
    ap.add_argument("--rss", required=True)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--generated", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--method", required=True)
    ap.add_argument("--max-ratio", type=float, default=3.0)
    ap.add_argument("--max-serial-ratio", type=float, default=1.5)
    ap.add_argument("--min-core-share", type=float, default=float(os.environ.get("BENCH_MIN_CORE_SHARE", "0.75")))
    ap.add_argument("--min-peer-speedup", type=float, default=100.0,
                    help="gpulint must be this many times faster than each tool of role peer")
    ap.add_argument("--max-rss-mib", type=float, default=300.0, help="budget for gpulint's peak RSS")
    # Without per-result "background_cores" (older timings files): the whole timing phase.
    ap.add_argument("--phase-wall", type=float, default=0.0, help="wall seconds of the timing phase")
    ap.add_argument("--phase-busy", type=float, default=0.0, help="CPU seconds the whole machine used then")
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--rustc", default="unknown")
    ap.add_argument("--out-md", required=True)
    ap.add_argument("--out-json", required=True)
    args = ap.parse_args()

    nproc = os.cpu_count() or 1
    with open(args.generated) as f:
        generated = json.load(f)
    with open(args.timings) as f:
        timings = {r["command"]: r for r in json.load(f)["results"]}

    tools = []
    with open(args.tools) as f:
        for line in f:
            if not line.strip():
                continue
            name, role, ok, check_rc, out_path, command = line.rstrip("\n").split("\t", 5)
            info, brief = describe_output(name, role, out_path)
            tools.append({"name": name, "role": role, "ok_codes": [int(c) for c in ok.split()],
                          "check_rc": int(check_rc), "command": command, "output": info, "output_brief": brief})

    gnu = {}
    with open(args.rss) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 7 or not cols[1]:
                continue
            name, rss_kb, user, sys_, wall, pct, code = cols[:7]
            gnu.setdefault(name, []).append({
                "rss_kb": int(rss_kb), "user": float(user), "system": float(sys_),
                "wall": parse_wall(wall), "cpu_percent": float(pct.rstrip("%") or 0), "exit": int(code or 0),
            })

    floors = [t for t in tools if t["role"] == "floor" and t["name"] in timings]
    baseline = floors[0]["name"] if floors else None
    events_floor = next((t["name"] for t in floors[1:]), None)

    rows = []
    for t in tools:
        r = timings.get(t["name"])
        if r is None:
            continue
        codes = r.get("exit_codes") or []
        bad_codes = sorted({c for c in codes if c not in t["ok_codes"]})
        user, system = r.get("user", 0.0), r.get("system", 0.0)
        cpu_pct = 100.0 * (user + system) / r["mean"] if r["mean"] else 0.0
        g = gnu.get(t["name"], [])
        row = {
            "tool": t["name"], "role": t["role"], "command": t["command"],
            "mean_s": r["mean"], "stddev_s": r.get("stddev") or 0.0, "median_s": r.get("median", r["mean"]),
            "min_s": r.get("min", r["mean"]), "max_s": r.get("max", r["mean"]), "runs": len(r.get("times") or []),
            "user_s": user, "system_s": system, "cpu_percent": cpu_pct, "cores_busy": cpu_pct / 100.0,
            "ratio_to_floor": r["mean"] / timings[baseline]["mean"] if baseline else None,
            "ratio_to_events_floor": r["mean"] / timings[events_floor]["mean"] if events_floor else None,
            "peak_rss_mib": max(x["rss_kb"] for x in g) / 1024.0 if g else None,
            "gnu_time_cpu_percent": statistics.median(x["cpu_percent"] for x in g) if g else None,
            "gnu_time_runs": len(g),
            "exit_codes": sorted(set(codes)), "unexpected_exit_codes": bad_codes,
            "warmup": r.get("warmup", args.warmup), "background_cores": r.get("background_cores"),
            "output": t["output"], "output_brief": t["output_brief"],
        }
        rows.append(row)

    by = {r["tool"]: r for r in rows}
    verdicts = []
    subject = by.get("gpulint")
    for r in rows:
        r["ratio_to_gpulint"] = r["mean_s"] / subject["mean_s"] if subject and subject["mean_s"] else None
    if subject and baseline:
        ratio = subject["ratio_to_floor"]
        verdicts.append({
            "check": "gpulint end to end within %gx of the bare tree parse (%s)" % (args.max_ratio, baseline),
            "value": "%.2fx" % ratio, "ok": ratio <= args.max_ratio})
    serial = by.get("bare-parse-events-1t")
    if subject and serial:
        ratio = subject["mean_s"] / serial["mean_s"]
        verdicts.append({
            "check": "gpulint end to end within %gx of a single-threaded event parse (bare-parse-events-1t)"
                     % args.max_serial_ratio,
            "value": "%.2fx" % ratio, "ok": ratio <= args.max_serial_ratio})
    if subject:
        need = args.min_core_share * nproc
        verdicts.append({
            "check": "gpulint keeps all %d cores busy (>= %.0f%% of %d cores on average over the run)" % (
                nproc, 100 * args.min_core_share, nproc),
            "value": "%.2f cores (%.0f%% CPU)" % (subject["cores_busy"], subject["cpu_percent"]),
            "ok": subject["cores_busy"] >= need})
    for r in rows:
        if subject and r["role"] == "peer":
            speedup = r["ratio_to_gpulint"]
            verdicts.append({
                "check": "gpulint at least %gx faster than %s" % (args.min_peer_speedup, r["tool"]),
                "value": "%.0fx (%s vs %s)" % (speedup, fmt_time(subject["mean_s"]), fmt_time(r["mean_s"])),
                "ok": speedup >= args.min_peer_speedup})
    if subject and subject["peak_rss_mib"] is not None:
        verdicts.append({
            "check": "gpulint peak RSS under %g MiB" % args.max_rss_mib,
            "value": "%.1f MiB" % subject["peak_rss_mib"], "ok": subject["peak_rss_mib"] < args.max_rss_mib})
    for r in rows:
        if r["unexpected_exit_codes"]:
            verdicts.append({"check": "%s exits with an expected code" % r["tool"],
                             "value": str(r["unexpected_exit_codes"]), "ok": False})

    # CPU used by others while timing: measured by run.sh per group of tools timed together
    # (the worst group counts); else over the whole phase, the machine's busy time less the
    # tools' own (per-run user+sys times the runs, warmups included).
    if all(r["background_cores"] is not None for r in rows) and rows:
        background = max(r["background_cores"] for r in rows)
    else:
        own = sum((r["user_s"] + r["system_s"]) * (r["runs"] + r["warmup"]) for r in rows)
        background = max(0.0, (args.phase_busy - own) / args.phase_wall) if args.phase_wall > 0 else None
    if background is not None:
        verdicts.append({
            "check": "machine otherwise idle while timing (other processes < 0.10 cores)",
            "value": "%.2f cores used by other processes" % background, "ok": background < 0.10})
    all_ok = all(v["ok"] for v in verdicts)

    floor_doc = by.get(baseline, {}).get("output", {}) if baseline else {}
    meta = {
        "manifests": args.n,
        "bytes": generated.get("bytes"),
        "documents": floor_doc.get("documents"),
        "corpus_files_used": generated.get("corpus_files_used"),
        "corpus_files_excluded": generated.get("corpus_files_excluded"),
        "renamed_names": generated.get("renamed_names"),
        "cores": nproc,
        "cpu": cpu_model(),
        "kernel": platform.release(),
        "method": args.method,
        "git": args.git,
        "rustc": args.rustc,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "baseline": baseline,
        "max_ratio": args.max_ratio,
        "max_serial_ratio": args.max_serial_ratio,
        "min_peer_speedup": args.min_peer_speedup,
        "max_rss_mib": args.max_rss_mib,
        "background_cores": background,
    }

    # ---- table ----
    header = ["tool", "mean wall", "± stddev", "× bare parse", "× events", "× gpulint", "peak RSS", "CPU%",
              "cores busy"]
    table = []

    def ratio(x):
        return "-" if x is None else "%.2f" % x if x < 100 else "%.0f" % x

    for r in rows:
        table.append([
            r["tool"], fmt_time(r["mean_s"]), fmt_time(r["stddev_s"]),
            ratio(r["ratio_to_floor"]), ratio(r["ratio_to_events_floor"]), ratio(r["ratio_to_gpulint"]),
            "%.1f MiB" % r["peak_rss_mib"] if r["peak_rss_mib"] is not None else "-",
            "%.0f%%" % r["cpu_percent"], "%.2f / %d" % (r["cores_busy"], nproc),
        ])

    def md_table(head, body):
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        out += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(out)

    widths = [max(len(str(x)) for x in col) for col in zip(header, *table)]
    plain = "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in [header] + table)

    mib = (meta["bytes"] or 0) / (1024 * 1024)
    md = []
    md.append("# gpulint benchmark: %d manifests\n" % args.n)
    md.append("Generated by `bench/run.sh %d` on %s. See bench/README.md for what is measured and how "
              "to read it.\n" % (args.n, meta["date"]))
    md.append("## Setup\n")
    md.append("| | |\n|---|---|")
    md.append("| manifests | %d files, %s YAML documents, %.1f MiB (from %s parseable corpus files, round-robin; "
              "%s left out as unparseable) |" % (args.n, meta["documents"] if meta["documents"] is not None else "?",
                                                 mib, meta["corpus_files_used"], meta["corpus_files_excluded"]))
    md.append("| machine | %d cores, %s, Linux %s |" % (nproc, meta["cpu"], meta["kernel"]))
    md.append("| timing | %s; page cache warm |" % meta["method"])
    md.append("| peak RSS | GNU `/usr/bin/time -v` (the largest single process of the run: checkov's forked "
              "workers are not added up), max over the check run and the RSS runs: %s |" % (
                  ", ".join("%s %d" % (r["tool"], r["gnu_time_runs"]) for r in rows) or "none"))
    md.append("| build | `cargo build --release` (%s), gpulint at %s |" % (meta["rustc"], meta["git"]))
    md.append("")
    md.append("## Results\n")
    md.append(md_table(header, table))
    md.append("")
    md.append("CPU%% = (user + sys) / wall, averaged over the timed runs; %d cores = %d%% at most.\n" % (nproc, 100 * nproc))
    md.append("## Verdict\n")
    for v in verdicts:
        md.append("- **%s** %s: %s" % ("PASS" if v["ok"] else "FAIL", v["check"], v["value"]))
    md.append("")
    md.append("## Details\n")
    md.append("| tool | median | min | max | warmup + runs | user | sys | CPU% (GNU time) | others' CPU | exit codes "
              "| output of the check run |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        md.append("| %s | %s | %s | %s | %d + %d | %s | %s | %s | %s | %s | %s |" % (
            r["tool"], fmt_time(r["median_s"]), fmt_time(r["min_s"]), fmt_time(r["max_s"]), r["warmup"], r["runs"],
            fmt_time(r["user_s"]), fmt_time(r["system_s"]),
            "%.0f%%" % r["gnu_time_cpu_percent"] if r["gnu_time_cpu_percent"] is not None else "-",
            "%.2f cores" % r["background_cores"] if r["background_cores"] is not None else "-",
            ",".join(str(c) for c in r["exit_codes"]), r["output_brief"].replace("|", "\\|")))
    md.append("")
    md.append("Commands (DATA = the generated folder):\n")
    for r in rows:
        md.append("- `%s`: `%s`" % (r["tool"], r["command"]))
    md.append("")

    os.makedirs(os.path.dirname(os.path.abspath(args.out_md)), exist_ok=True)
    with open(args.out_md, "w") as f:
        f.write("\n".join(md))
    with open(args.out_json, "w") as f:
        json.dump({"meta": meta, "results": rows, "verdicts": verdicts}, f, indent=2)
        f.write("\n")

    print()
    print("%d manifests, %s documents, %.1f MiB, %d cores — %s" % (
        args.n, meta["documents"], mib, nproc, meta["method"]))
    print(plain)
    for v in verdicts:
        print("%s  %s: %s" % ("PASS" if v["ok"] else "FAIL", v["check"], v["value"]))
    return 0 if all_ok else 3


if __name__ == "__main__":
    sys.exit(main())
