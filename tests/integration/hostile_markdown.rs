//! Markdown injection (issue 24, item 12): names from the repository in the Markdown gpulint
//! writes (`--format markdown`, and the Action's step summary and pull request body written by
//! scripts/action/report.py) must render as text on GitHub: no raw HTML (an `<img>` is a
//! beacon per view) and no link. Checked by rendering with cmark-gfm, GitHub's own Markdown
//! implementation, with its GFM extensions and raw HTML let through (`--unsafe`, as GitHub
//! keeps `<img>`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::common::{gpulint, output};

/// A name that closes gpulint's code span around it, then a URL an autolink takes with the
/// backslash meant to escape the `<` after it: the `<img>` was raw HTML.
const HOSTILE: &str = "x` http://a<img src=http://host/b.png?> `y";

fn manifest() -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {HOSTILE:?}
  namespace: {HOSTILE:?}
spec:
  template:
    spec:
      containers:
        - name: {HOSTILE:?}
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits: {{nvidia.com/gpu: 1}}
        - name: \"```<img src=http://host/c.png>`\"
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits: {{nvidia.com/gpu: 1}}
"
    )
}

fn cmark_gfm() -> PathBuf {
    if let Some(p) = std::env::var_os("GPULINT_CMARK_GFM") {
        return PathBuf::from(p);
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("cmark-gfm"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "cmark-gfm is not installed: run scripts/test (it installs Debian's cmark-gfm), \
                 or set GPULINT_CMARK_GFM"
            )
        })
}

/// The HTML GitHub's Markdown implementation makes of `markdown`.
fn render(markdown: &str) -> String {
    let mut child = Command::new(cmark_gfm())
        .args([
            "--unsafe",
            "--extension",
            "table",
            "--extension",
            "autolink",
        ])
        .args(["--extension", "strikethrough", "--extension", "tasklist"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run cmark-gfm");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(markdown.as_bytes()).expect("write");
    }
    let out = child.wait_with_output().expect("cmark-gfm");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf-8")
}

/// No raw HTML from the repository and no link at all in the rendered page (gpulint's own
/// Markdown links nowhere either).
fn assert_inert(markdown: &str, what: &str) {
    assert!(
        markdown.contains("host/b.png"),
        "{what}: the name is missing:\n{markdown}"
    );
    let html = render(markdown);
    for bad in ["<img", "<a ", "href="] {
        assert!(
            !html.contains(bad),
            "{what}: {bad:?} in the rendered HTML:\n{html}\n--- markdown\n{markdown}"
        );
    }
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).expect("mkdir");
    std::fs::write(ws.join("app.yaml"), manifest()).expect("write");
    (tmp, ws)
}

fn lint(ws: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = output(gpulint().current_dir(ws).args(args));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    stdout
}

#[test]
fn markdown_format_renders_hostile_names_as_text() {
    let (_tmp, ws) = workspace();
    let md = lint(&ws, &["--format", "markdown", "app.yaml"]);
    assert_inert(&md, "--format markdown");
}

#[test]
fn the_actions_summary_renders_hostile_names_as_text() {
    let (_tmp, ws) = workspace();
    let json = lint(&ws, &["--format", "json", "app.yaml"]);
    std::fs::write(ws.join("lint.json"), json).expect("write");
    let sizing = lint(&ws, &["--format", "markdown", "app.yaml"]);
    std::fs::write(ws.join("sizing.md"), sizing).expect("write");
    let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action/report.py");
    let out = Command::new("python3")
        .arg(report)
        .current_dir(&ws)
        .args([
            "--json",
            "lint.json",
            "--rc",
            "1",
            "--summary",
            "summary.md",
        ])
        .args([
            "--sizing",
            "sizing.md",
            "--changes",
            "lint.json",
            "--pr-body",
            "body.md",
        ])
        .arg("--workspace")
        .arg(&ws)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = std::fs::read_to_string(ws.join("summary.md")).expect("summary");
    assert_inert(&summary, "step summary");
    let body = std::fs::read_to_string(ws.join("body.md")).expect("body");
    assert_inert(&body, "pull request body");
}
