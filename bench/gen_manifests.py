#!/usr/bin/env python3
"""Generate N benchmark manifests from the corpus (used by bench/run.sh).

Copies the parseable corpus files round-robin into OUT/gNN/bNNN/ (50 files per leaf folder,
20 leaf folders per group), as `NNNNNN-<original name>`, and gives every copy its own object
names: the top-level `metadata.name` (and `metadata.generateName`) of each document gets the
suffix `-bNNNNNN`. Only text is edited, so the files keep their formatting, comments and
multi-document layout.

    gen_manifests.py --corpus testdata/corpus/raw --out DIR --count 3000 [--exclude FILE]

--exclude names a file with one corpus path per line (absolute, or relative to the current
folder) to leave out: run.sh passes the files gpulint reports parse errors for, so the generated
tree parses cleanly and gpulint exits 1 (findings), not 2 (input errors).
Prints a JSON summary (files, bytes, renamed names, corpus files used) on stdout.
"""

import argparse
import json
import os
import re
import sys

FILES_PER_DIR = 50
DIRS_PER_GROUP = 20

NAME_RE = re.compile(
    r"""^(?P<indent>[ ]+)(?P<key>name|generateName):(?P<sp>[ \t]*)"""
    r"""(?:"(?P<dq>[^"\\]*)"|'(?P<sq>[^']*)'|(?P<plain>[^\s#'"{\[&*|>!%@`][^\s#]*))"""
    r"""(?P<rest>.*)$"""
)


def corpus_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            if name.lower().endswith((".yaml", ".yml")):
                out.append(os.path.join(dirpath, name))
    return out


def rename(text, suffix):
    """Appends `suffix` to each document's top-level metadata.name / generateName.

    Returns (new text, number of names changed)."""
    lines = text.split("\n")
    in_metadata = False
    child_indent = None
    changed = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            # A new top-level key (or a document marker) ends the metadata block.
            in_metadata = line.rstrip() == "metadata:" or re.match(r"^metadata:\s+#", line)
            child_indent = None
            continue
        if not in_metadata:
            continue
        if child_indent is None:
            child_indent = indent
        if indent != child_indent:
            continue
        m = NAME_RE.match(line)
        if not m:
            continue
        if m.group("dq") is not None:
            value = '"%s%s"' % (m.group("dq"), suffix)
        elif m.group("sq") is not None:
            value = "'%s%s'" % (m.group("sq"), suffix)
        else:
            plain = m.group("plain")
            # generateName values end in '-' already; keep them valid prefixes.
            value = plain + suffix.lstrip("-") + "-" if plain.endswith("-") else plain + suffix
        lines[i] = "%s%s:%s%s%s" % (m.group("indent"), m.group("key"), m.group("sp"), value, m.group("rest"))
        changed += 1
    return "\n".join(lines), changed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--exclude", help="file listing corpus paths to leave out")
    args = ap.parse_args()

    excluded = set()
    if args.exclude:
        with open(args.exclude, encoding="utf-8") as f:
            excluded = {os.path.realpath(line.strip()) for line in f if line.strip()}

    sources = [p for p in corpus_files(args.corpus) if os.path.realpath(p) not in excluded]
    if not sources:
        sys.exit("gen_manifests: no usable corpus files under %s" % args.corpus)
    texts = []
    for p in sources:
        with open(p, encoding="utf-8") as f:
            texts.append(f.read())

    os.makedirs(args.out, exist_ok=True)
    total_bytes = 0
    renamed = 0
    for i in range(args.count):
        k = i % len(sources)
        suffix = "-b%06d" % i
        text, changed = rename(texts[k], suffix)
        renamed += changed
        leaf = i // FILES_PER_DIR
        folder = os.path.join(args.out, "g%02d" % (leaf // DIRS_PER_GROUP), "b%03d" % leaf)
        os.makedirs(folder, exist_ok=True)
        name = "%06d-%s" % (i, os.path.basename(sources[k]))
        data = text.encode("utf-8")
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        total_bytes += len(data)

    json.dump(
        {
            "files": args.count,
            "bytes": total_bytes,
            "renamed_names": renamed,
            "corpus_files_used": len(sources),
            "corpus_files_excluded": len(excluded),
        },
        sys.stdout,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
