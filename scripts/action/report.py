#!/usr/bin/env python3
"""scripts/action/report.py - render one gpulint JSON result for GitHub Actions.

Called by scripts/action/run.sh after its single `gpulint --format json` run. From that one
result it prints the annotations (workflow commands, in `--format github`'s exact form) and
writes the step summary (a Markdown table of every finding) and the step outputs.

Why render the annotations here rather than run `gpulint --format github` a second time:
one gpulint run means one Prometheus query (a second run would query again, and live data
could differ between the two), one `--changed-since` comparison, and `--fix --commit` fixing
and reporting in the same run; the annotations and the table then come from the same
findings and cannot disagree. The github format is small and documented (docs/reports.md, "Output
contracts"); tests/integration/action.rs checks these annotations are byte for byte what
`gpulint --format github` prints. Doing it here also lets every line be redacted.

Untrusted text (messages and paths come from the linted manifests) is escaped everywhere:
workflow-command escaping in annotations, Markdown/HTML escaping in the summary, and
gpulint's own stderr is replayed between `::stop-commands::` markers so that a line of it
cannot be taken for a workflow command. The Prometheus token (GPULINT_ACTION_REDACT, in the
environment) is replaced by `***` in everything written, although gpulint never prints it:
the runner masks the log but not the summary file.

Exit status: 0, or 1 when the arguments or the files are unusable.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import uuid

# GitHub's limit for one step's summary is 1 MiB; stay clearly under it.
SUMMARY_BUDGET = 900 * 1024


class Redactor:
    def __init__(self, secret: str):
        parts = {secret} if secret else set()
        # A multi-line secret is masked line by line by the runner; do the same.
        parts |= {line for line in secret.splitlines() if len(line.strip()) >= 4}
        self.parts = sorted((p for p in parts if p), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for p in self.parts:
            text = text.replace(p, "***")
        return text


def escape_data(s: str) -> str:
    """The message part of a workflow command (as gpulint's report/github.rs)."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    """A property value of a workflow command: the data escapes plus `:` and `,`."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


# Characters that would start Markdown in a table cell; `|` would end the cell. Outside code
# spans each is backslash-escaped (CommonMark allows that for any ASCII punctuation), and `<`,
# `>`, `&` are written as entities: GitHub's extended autolink takes `http://a\` with the
# backslash meant for the `<` after it, and `<img ...>` would then be raw HTML (a beacon per
# view of the summary or the pull request). Autolinks are broken too: the `:` of `://` as
# `&#58;` and the `.` of `www.` as `&#46;` render as the same text, but GitHub's autolink
# extension looks for `://` and `www.` in the source, so no text of the repository becomes a
# link. gpulint's messages quote names in backticks: a `code span` on one line (one backtick
# each side, nothing inside a code span is markup or a link) is kept, with only `|` escaped
# inside it (GFM splits table cells before it reads code spans, and takes `\|` as a literal
# pipe in both). src/report/markdown.rs does the same for `--format markdown`.
MARKDOWN_SPECIAL = set("\\`*_[]|~#!")
ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
CODE_SPAN = re.compile(r"((?<!`)`[^`\r\n]+`(?!`))")
AUTOLINK = re.compile(r"://|(?i:www)\.")


def break_autolinks(text: str) -> str:
    return AUTOLINK.sub(lambda m: "&#58;//" if m.group(0) == "://" else m.group(0)[:3] + "&#46;", text)


def cell(value: object, own: bool = False) -> str:
    """A table cell or a line of the summary. `own`: the action's own sentence (the pull
    request `gh` opened), whose URL stays a link and `#7` a reference; never for text from the
    repository."""
    special = MARKDOWN_SPECIAL - {"#"} if own else MARKDOWN_SPECIAL
    out = []
    for i, part in enumerate(CODE_SPAN.split(str(value))):
        if i % 2:
            out.append(part.replace("|", "\\|"))
        else:
            part = "".join(
                ENTITIES.get(c) or ("\\" + c if c in special else c) for c in part
            )
            if not own:
                part = break_autolinks(part)
            out.append(part.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>"))
    return "".join(out).strip() or "-"


def repo_path(name: str, workspace: str) -> str:
    """A path as GitHub wants it in an annotation: relative to the workspace, `/`-separated."""
    if not name:
        return name
    if os.path.isabs(name):
        rel = os.path.relpath(name, workspace)
        if rel != ".." and not rel.startswith(".." + os.sep):
            name = rel
    elif name.startswith("./"):
        name = os.path.normpath(name)
    return name.replace(os.sep, "/")


def load_result(path: str):
    """gpulint's JSON document, or None. `--fix --commit` prints the commit id on a line of
    its own before the document, so the document starts at the first line opening with `{`."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    start = 0 if text.startswith("{") else text.find("\n{") + 1
    if start == 0 and not text.startswith("{"):
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        return None
    return doc


def read_text(path: str | None) -> str:
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def suggested(finding: dict) -> str:
    rec = finding.get("recommended")
    if not isinstance(rec, dict) or not rec:
        return "-"
    order = ["memory", "cpu"] + sorted(k for k in rec if k not in ("memory", "cpu"))
    return ", ".join(f"{k}: {rec[k]}" for k in order if k in rec and rec[k] not in (None, ""))


COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def annotation(finding: dict, workspace: str) -> str:
    command = COMMAND.get(finding.get("severity"), "warning")
    return "::{} file={},line={},endLine={},col={},endColumn={},title={}::{}".format(
        command,
        escape_property(repo_path(str(finding.get("file", "")), workspace)),
        finding.get("line", 1),
        finding.get("end_line", finding.get("line", 1)),
        finding.get("column", 1),
        finding.get("end_column", finding.get("column", 1)),
        escape_property(f"{finding.get('rule', '')} {finding.get('name', '')}".strip()),
        escape_data(str(finding.get("message", ""))),
    )


def error_annotation(error: dict, workspace: str) -> str:
    message = escape_data(str(error.get("message", "")))
    name = str(error.get("file") or "")
    if not name:
        return f"::error::{message}"
    return "::error file={},line={},col={},title=gpulint input error::{}".format(
        escape_property(repo_path(name, workspace)),
        max(int(error.get("line") or 1), 1),
        max(int(error.get("column") or 1), 1),
        message,
    )


def step_output(key: str, value: str) -> str:
    """One GITHUB_OUTPUT entry in GitHub's multi-line form with a random delimiter (as run.sh's
    `output`): no value can add an output line of its own."""
    delimiter = "gpulint_" + uuid.uuid4().hex
    if delimiter in value:
        raise ValueError("output value holds the delimiter")
    return f"{key}<<{delimiter}\n{value}\n{delimiter}\n"


def one_line(value: object) -> str:
    return " ".join(str(value).splitlines())


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("error")]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True, help="gpulint --format json stdout")
    ap.add_argument("--stderr", help="gpulint's stderr, replayed into the log")
    ap.add_argument("--rc", type=int, required=True, help="gpulint's exit code")
    ap.add_argument("--format", choices=["github", "sarif"], default="github")
    ap.add_argument("--fail-on", default="warning")
    ap.add_argument("--workspace", default=os.getcwd())
    ap.add_argument("--paths", default=".")
    ap.add_argument("--scope", help="what changed-only compared with")
    ap.add_argument("--sarif-file")
    ap.add_argument("--sarif-stderr", help="stderr of a SARIF run that wrote no file")
    ap.add_argument("--fixed-commit")
    ap.add_argument("--fixed-branch")
    ap.add_argument("--push-failed", action="store_true")
    ap.add_argument("--summary", help="file to append the Markdown summary to")
    ap.add_argument("--note", help="a sentence for the summary (fix: pull-request's outcome)")
    ap.add_argument("--changes", help="stderr of a `gpulint --fix` run: its `fixed` lines")
    ap.add_argument("--pr-body", help="write a right-sizing pull request's body to this file")
    ap.add_argument(
        "--sizing",
        help="gpulint --format markdown of the same run: its GPU and memory sections are "
        "added to the summary",
    )
    ap.add_argument("--output", help="GITHUB_OUTPUT file")
    args = ap.parse_args()

    redact = Redactor(os.environ.get("GPULINT_ACTION_REDACT", ""))
    out = sys.stdout

    def emit(line: str) -> None:
        out.write(redact(line) + "\n")

    doc = load_result(args.json)
    stderr_text = read_text(args.stderr)

    # gpulint's own messages (summary lines, `fixed ...`, errors): into the log, where no
    # line of them can act as a workflow command.
    replay = stderr_text
    if args.sarif_stderr:
        replay += read_text(args.sarif_stderr)
    if replay.strip():
        stop = uuid.uuid4().hex
        emit(f"::stop-commands::{stop}")
        for line in replay.splitlines():
            emit(line)
        emit(f"::{stop}::")

    findings = doc["findings"] if doc else []
    errors = doc.get("errors", []) if doc else []
    errors = [e for e in errors if isinstance(e, dict)]
    counts = {"error": 0, "warning": 0, "info": 0}
    for f in findings:
        counts[f.get("severity", "warning")] = counts.get(f.get("severity", "warning"), 0) + 1

    # Annotations (github format), or plain lines when code scanning shows the SARIF.
    if args.format == "github":
        for f in findings:
            emit(annotation(f, args.workspace))
        for e in errors:
            emit(error_annotation(e, args.workspace))
    elif findings or errors:
        stop = uuid.uuid4().hex
        emit(f"::stop-commands::{stop}")
        for f in findings:
            emit(
                "{}:{}:{}: {} {} {}".format(
                    repo_path(str(f.get("file", "")), args.workspace),
                    f.get("line"),
                    f.get("column"),
                    f.get("severity"),
                    f.get("rule"),
                    one_line(f.get("message", "")),
                )
            )
        for e in errors:
            emit(
                "{}:{}:{}: input error: {}".format(
                    e.get("file"), e.get("line"), e.get("column"), one_line(e.get("message", ""))
                )
            )
        emit(f"::{stop}::")
    if doc is None:
        # No result at all (config error, Prometheus unreachable...): say why in an annotation.
        for reason in error_lines(stderr_text) or [
            f"gpulint exited with code {args.rc} and reported nothing"
        ]:
            emit(f"::error title=gpulint::{escape_data(reason)}")
    if args.sarif_stderr:
        for reason in error_lines(read_text(args.sarif_stderr)) or ["no SARIF output"]:
            emit(f"::error title=gpulint SARIF run::{escape_data(reason)}")
    if args.push_failed:
        emit(
            "::error title=gpulint fix::the fix commit {} could not be pushed to {} "
            "(a pull request from a fork, or no contents: write permission?)".format(
                args.fixed_commit or "", escape_data(args.fixed_branch or "the branch")
            )
        )

    out.flush()

    if args.output:
        with open(args.output, "a", encoding="utf-8") as f:
            for key, value in [
                ("findings", len(findings)),
                ("errors", counts["error"]),
                ("warnings", counts["warning"]),
                ("notices", counts["info"]),
                ("input-errors", len(errors)),
            ]:
                f.write(step_output(key, str(value)))

    if args.pr_body:
        with open(args.pr_body, "w", encoding="utf-8") as f:
            f.write(redact(pr_body(read_text(args.sizing), read_text(args.changes))))

    if args.summary:
        with open(args.summary, "a", encoding="utf-8") as f:
            f.write(redact(summary(args, doc, findings, errors, counts, stderr_text)))
    return 0


def summary(args, doc, findings, errors, counts, stderr_text) -> str:
    lines = ["## gpulint", ""]
    if doc is None:
        lines.append(f"**gpulint stopped with exit code {args.rc} before reporting any finding.**")
        lines.append("")
        for line in stderr_text.splitlines():
            if line.strip():
                lines.append(f"- {cell(line)}")
        lines.append("")
        return "\n".join(lines) + "\n"

    verdict = {0: "passed", 1: "failed", 2: "errors"}.get(args.rc, "failed")
    lines.append(
        "**{}**: {}, {}, {} · {} · fail-on `{}` · exit code {} ({})".format(
            plural(len(findings), "finding"),
            plural(counts["error"], "error"),
            plural(counts["warning"], "warning"),
            plural(counts["info"], "notice"),
            plural(len(errors), "input error"),
            cell(args.fail_on),
            args.rc,
            verdict,
        )
    )
    lines.append("")
    if args.scope:
        scope = cell(args.scope)
    else:
        scope = "every manifest in " + " ".join(
            cell(f"`{p}`" if "`" not in p else p) for p in args.paths.split()
        )
    lines += [f"Scope: {scope}.", ""]
    if args.note:
        # The action's own sentence (run.sh): the pull request's URL stays a link.
        lines += [cell(args.note, own=True), ""]
    if args.fixed_commit:
        state = "could not be pushed" if args.push_failed else "pushed"
        lines += [
            f"Fixes committed as {args.fixed_commit[:12]} and {state} to "
            f"{cell(args.fixed_branch or '')}; the table lists what remains.",
            "",
        ]
    if args.sarif_file:
        lines += [
            f"SARIF for code scanning, not narrowed to changed objects: {cell(args.sarif_file)}.",
            "",
        ]
    if args.format == "github" and len(findings) > 10:
        lines += [
            "GitHub shows at most 10 annotations of each type per step: "
            "every finding is in this table.",
            "",
        ]

    if findings:
        lines.append("| file:line | rule | message | suggested value |")
        lines.append("|---|---|---|---|")
        used = sum(len(line.encode()) + 1 for line in lines)
        shown = 0
        for f in findings:
            where = "{}:{}".format(repo_path(str(f.get("file", "")), args.workspace), f.get("line"))
            rule = "{} ({})".format(f.get("rule", ""), f.get("severity", ""))
            row = "| {} | {} | {} | {} |".format(
                cell(where), cell(rule), cell(f.get("message", "")), cell(suggested(f))
            )
            if used + len(row.encode()) + 1 > SUMMARY_BUDGET:
                break
            lines.append(row)
            used += len(row.encode()) + 1
            shown += 1
        if shown < len(findings):
            lines.append("")
            lines.append(
                f"{len(findings) - shown} more finding(s) not shown: the summary would pass "
                "GitHub's 1 MiB limit. Run gpulint locally or use the SARIF output."
            )
        lines.append("")
    if errors:
        lines.append("| file:line | input error |")
        lines.append("|---|---|")
        for e in errors:
            where = "{}:{}".format(
                repo_path(str(e.get("file") or "-"), args.workspace), e.get("line")
            )
            lines.append(f"| {cell(where)} | {cell(e.get('message', ''))} |")
        lines.append("")
    sizing = sizing_sections(read_text(args.sizing))
    used = sum(len(line.encode()) + 1 for line in lines)
    if sizing and used + len(sizing.encode()) <= SUMMARY_BUDGET:
        lines += [sizing, ""]
    return "\n".join(lines) + "\n"


# GitHub refuses a pull request body over 65,536 characters.
PR_BODY_BUDGET = 60_000


def pr_body(sizing: str, fix_stderr: str) -> str:
    """A right-sizing pull request's body: every change gpulint made (its `fixed` lines), then
    gpulint's Markdown report of what was measured (GPU table, memory chart, the findings with
    their measured basis and suggested values)."""
    changes = [line[len("fixed ") :] for line in fix_stderr.splitlines() if line.startswith("fixed ") and ": " in line]
    lines = [
        "Requests and limits set from measured usage by the gpulint Action (`fix: pull-request`).",
        "A later run updates this pull request; it is not opened again while it is open.",
        "",
        f"### Changes ({len(changes)})",
        "",
        "| file:line | change |",
        "|---|---|",
    ]
    for change in changes:
        where, _, what = change.partition(": ")
        lines.append(f"| {cell(where)} | {cell(what)} |")
    lines.append("")
    body = "\n".join(lines)
    report = sizing.strip()
    if report:
        body += "\n" + report + "\n"
    if len(body) > PR_BODY_BUDGET:
        body = body[:PR_BODY_BUDGET].rsplit("\n", 1)[0]
        body += "\n\n(cut here: GitHub limits a pull request body to 65,536 characters; the step summary has every finding.)\n"
    return body


def sizing_sections(text: str) -> str:
    """The sections of gpulint's Markdown report between its header and its findings (GPUs by
    namespace, the memory chart and table), headings included. gpulint escapes every cell of
    them; they are written as they are."""
    start = text.find("\n### GPUs by namespace\n")
    if start < 0:
        return ""
    end = text.find("\n### Findings", start)
    return text[start + 1 : end if end >= 0 else len(text)].strip()


if __name__ == "__main__":
    sys.exit(main())
