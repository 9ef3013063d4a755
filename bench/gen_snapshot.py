#!/usr/bin/env python3
"""Writes a valid version-1 metrics snapshot of about SIZE_MB megabytes to OUT.

    bench/gen_snapshot.py OUT SIZE_MB [--small]

--small: many small containers (memory and CPU only, as a cluster's CPU sidecars are), so the
per-container cost of the reader dominates rather than the text of each figure.

Deterministic (a fixed seed), pretty-printed like `gpulint snapshot` writes (two-space
indent), every container with memory, CPU and GPU series, so every field is parsed.
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


def small(i, rng):
    mem = sorted(rng.randint(1, 64) * 2**24 for _ in range(3))
    cpu = sorted(round(rng.uniform(0.01, 2), 3) for _ in range(3))
    return {
        "namespace": f"team-{i % 97}",
        "kind": "Deployment",
        "name": f"w-{i}",
        "container": "app",
        "samples": 20160,
        "memory_bytes": {"p50": mem[0], "p99": mem[1], "max": mem[2]},
        "cpu_cores": {"p50": cpu[0], "p99": cpu[1], "max": cpu[2]},
    }


def main():
    out, size_mb = sys.argv[1], float(sys.argv[2])
    make = small if "--small" in sys.argv[3:] else container
    rng = random.Random(7)
    target = int(size_mb * 1_000_000)
    with open(out, "w") as f:
        f.write('{\n  "version": 1,\n  "window": "7d",\n  "collected_at": "2026-12-01T00:00:00Z",\n')
        f.write('  "source": "bench/gen_snapshot.py",\n  "containers": [\n')
        written, i = 0, 0
        while written < target:
            text = json.dumps(make(i, rng), indent=2)
            text = "\n".join("    " + line for line in text.splitlines())
            if i:
                f.write(",\n")
            f.write(text)
            written += len(text) + 2
            i += 1
        f.write("\n  ]\n}\n")


if __name__ == "__main__":
    main()
