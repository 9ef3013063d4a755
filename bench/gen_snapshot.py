#!/usr/bin/env python3
"""Writes a valid version-1 metrics snapshot of about SIZE_MB megabytes to OUT.

    bench/gen_snapshot.py OUT SIZE_MB [--small]

Deterministic (a fixed seed). By default pretty-printed like `gpulint snapshot` writes (two-space
indent), every container with memory, CPU and GPU series, so every field is parsed: about 600
bytes a container. With --small, the shape that is hardest on memory (issue 28): many small
containers, compact JSON (one a line, no spaces, as other tools write it), each the four names
and one memory series only: about 150 bytes a container, so the per-container cost of what is
kept in memory weighs four times as much against the file's size.
"""
import json
import random
import sys


def container(i, rng):
    mem = [rng.randint(1, 64) * 2**28 for _ in range(3)]
    mem.sort()
    cpu = sorted(round(rng.uniform(0.05, 16), 6) for _ in range(3))
    gpu = sorted(rng.randint(1, 80) * 2**30 for _ in range(2))
    return {
        "namespace": f"team-{i % 97}",
        "kind": ["Deployment", "StatefulSet", "Job"][i % 3],
        "name": f"workload-{i}",
        "container": "main",
        "samples": rng.randint(100, 20000),
        "history_seconds": 604800,
        "memory_bytes": {"p50": mem[0], "p99": mem[1], "max": mem[2]},
        "cpu_cores": {"p50": cpu[0], "p99": cpu[1], "max": cpu[2]},
        "gpu_memory_bytes": {"p99": gpu[0], "max": gpu[1], "capacity": 85899345920},
        "gpu_utilization": {"avg": round(rng.random() / 2, 6), "p99": round(0.5 + rng.random() / 2, 6)},
        "oom_kills": 0,
        "memory_limit_bytes": mem[2] * 2,
    }


def small_container(i, rng):
    mem = sorted(rng.randint(1, 64) * 2**28 for _ in range(3))
    return {
        "namespace": f"team-{i % 97}",
        "kind": ["Deployment", "StatefulSet", "Job"][i % 3],
        "name": f"workload-{i}",
        "container": "main",
        "memory_bytes": {"p50": mem[0], "p99": mem[1], "max": mem[2]},
    }


def main():
    args = [a for a in sys.argv[1:] if a != "--small"]
    small = "--small" in sys.argv[1:]
    out, size_mb = args[0], float(args[1])
    rng = random.Random(7)
    target = int(size_mb * 1_000_000)
    with open(out, "w") as f:
        f.write('{\n  "version": 1,\n  "window": "7d",\n  "collected_at": "2026-12-01T00:00:00Z",\n')
        f.write('  "source": "bench/gen_snapshot.py",\n  "containers": [\n')
        written, i = 0, 0
        while written < target:
            if small:
                text = json.dumps(small_container(i, rng), separators=(",", ":"))
            else:
                text = json.dumps(container(i, rng), indent=2)
                text = "\n".join("    " + line for line in text.splitlines())
            if i:
                f.write(",\n")
            f.write(text)
            written += len(text) + 2
            i += 1
        f.write("\n  ]\n}\n")


if __name__ == "__main__":
    main()
