#!/usr/bin/env python3
"""Independent count of GPU resource blocks in testdata/corpus/raw.

This is the reference that gpulint's Rust tests compare against. It does NOT use
rules/workloads.yaml and knows nothing about Kubernetes kinds: it walks every
mapping of every YAML document and records

  * every mapping under a key `resources` that has a `requests` or `limits`
    mapping with at least one key naming a GPU resource, and
  * every Spark-operator-style `gpu: {name: <GPU resource>, quantity: N}` mapping.

GPU resource names: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*,
amd.com/gpu, gpu.intel.com/*.

Output (testdata/corpus/gpu_resource_blocks.json):
  {"generated_by": "scripts/count_gpu_blocks.py",
   "blocks": [{"file": <path relative to testdata/corpus/raw>,
               "line": <1-based line of the `resources` (or `gpu`) key>,
               "names": [<GPU resource names in the block, sorted>]}, ...],
   "unparsable": [{"file": ..., "error": <PyYAML error class>, "line": N}, ...]}
`blocks` is sorted by (file, line). A file that PyYAML cannot load (safe_load_all
raises) is listed under `unparsable` and contributes no blocks, even from the
documents before the error. These match the `yaml_error` entries of
testdata/corpus/MANIFEST.json (8 files).

Files are found with os.walk, so hidden folders (e.g. `.github/`) are included;
every *.yaml / *.yml file is read.

How to rerun (from the repository root; the venv is not part of the repo):
    python3 -m venv /tmp/gpulint-venv
    /tmp/gpulint-venv/bin/pip install pyyaml
    /tmp/gpulint-venv/bin/python scripts/count_gpu_blocks.py          # rewrite the JSON
    /tmp/gpulint-venv/bin/python scripts/count_gpu_blocks.py --check  # exit 1 if it is stale
"""

import argparse
import json
import os
import re
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW = os.path.join(REPO, "testdata", "corpus", "raw")
OUT = os.path.join(REPO, "testdata", "corpus", "gpu_resource_blocks.json")

GPU_NAME = re.compile(
    r"^(nvidia\.com/gpu|nvidia\.com/gpu\.shared|nvidia\.com/mig-.+|amd\.com/gpu|gpu\.intel\.com/.+)$"
)


def is_gpu_name(s):
    return isinstance(s, str) and GPU_NAME.match(s) is not None


def scalar(node):
    return node.value if isinstance(node, yaml.ScalarNode) else None


def mapping_get(node, key):
    """Values of `key` in a MappingNode (all of them, if the key is duplicated)."""
    return [v for k, v in node.value if scalar(k) == key]


def gpu_names_in_resources(node):
    names = set()
    for part in ("requests", "limits"):
        for sub in mapping_get(node, part):
            if isinstance(sub, yaml.MappingNode):
                for k, _ in sub.value:
                    if is_gpu_name(scalar(k)):
                        names.add(scalar(k))
    return names


def spark_gpu_name(node):
    for v in mapping_get(node, "name"):
        if is_gpu_name(scalar(v)):
            return scalar(v)
    return None


def walk(node, found):
    """Depth-first walk over a composed node graph, collecting blocks."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = scalar(k)
            if isinstance(v, yaml.MappingNode):
                if key == "resources":
                    names = gpu_names_in_resources(v)
                    if names:
                        found[k.start_mark.line + 1] = sorted(names)
                elif key == "gpu":
                    name = spark_gpu_name(v)
                    if name:
                        found[k.start_mark.line + 1] = [name]
            walk(k, found)
            walk(v, found)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            walk(item, found)


def yaml_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith((".yaml", ".yml")):
                full = os.path.join(dirpath, name)
                yield os.path.relpath(full, root).replace(os.sep, "/"), full


def count(root):
    blocks, unparsable = [], []
    for rel, full in yaml_files(root):
        with open(full, encoding="utf-8") as f:
            text = f.read()
        try:
            # Loading (not just composing) decides parseability, as in MANIFEST.json:
            # e.g. `key: {{VAR}}` composes but cannot be constructed (unhashable key).
            for _ in yaml.safe_load_all(text):
                pass
            docs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
            unparsable.append(
                {"file": rel, "error": type(e).__name__, "line": mark.line + 1 if mark else None}
            )
            continue
        found = {}
        for doc in docs:
            if doc is not None:
                walk(doc, found)
        for line in sorted(found):
            blocks.append({"file": rel, "line": line, "names": found[line]})
    blocks.sort(key=lambda b: (b["file"], b["line"]))
    unparsable.sort(key=lambda u: u["file"])
    return {"generated_by": "scripts/count_gpu_blocks.py", "blocks": blocks, "unparsable": unparsable}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the JSON file differs from a fresh count")
    args = ap.parse_args()

    result = count(RAW)
    text = json.dumps(result, indent=2) + "\n"
    files = len({b["file"] for b in result["blocks"]})
    print(f"{len(result['blocks'])} GPU resource blocks in {files} files; "
          f"{len(result['unparsable'])} unparsable files")
    if args.check:
        try:
            with open(OUT, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print(f"{os.path.relpath(OUT, REPO)} is out of date; rerun without --check", file=sys.stderr)
            return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUT, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
