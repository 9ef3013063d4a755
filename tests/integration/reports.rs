//! The report formats for CI and for people: JUnit (validated by xmllint against the Jenkins
//! xUnit plugin's schema), GitLab Code Quality (validated against GitLab's documented format),
//! `inventory --format csv`, several outputs in one run, and the HTML report, opened in a real
//! headless Chromium. A missing tool fails these tests: scripts/test installs them.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::support::common::{gpulint, output};

const FIXTURES: &str = "testdata/fixtures/output";
const DEMO: &str = "testdata/demo";
/// 2026-12-01T00:00:00Z: the reports say this time, so their text is stable.
const EPOCH: &str = "1796083200";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `gpulint <args>` in the crate root, with a fixed report date.
fn run(args: &[&str]) -> (i32, String, String) {
    output(gpulint().env("SOURCE_DATE_EPOCH", EPOCH).args(args))
}

fn json_findings(path: &str) -> Vec<Value> {
    let (code_1, stdout, _) = run(&[path, "--format", "json"]);
    assert_eq!(code_1, 1);
    let v: Value = serde_json::from_str(&stdout).expect("JSON report");
    v["findings"].as_array().expect("findings").clone()
}

/// A tool the test needs: `$ENV` (scripts/test exports it), else NAME on PATH; missing fails.
fn tool(env: &str, name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env) {
        return PathBuf::from(p);
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!("{name} is not installed: run scripts/test (it installs it), or set {env}")
        })
}

fn python() -> PathBuf {
    tool("GPULINT_PYTHON", "python3")
}

// ---------------------------------------------------------------------------------------
// JUnit

fn xmllint_validates(xml: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpulint.xml");
    std::fs::write(&file, xml).unwrap();
    let out = Command::new(tool("GPULINT_XMLLINT", "xmllint"))
        .arg("--noout")
        .arg("--schema")
        .arg(root().join("testdata/schemas/junit-10.xsd"))
        .arg(&file)
        .output()
        .expect("xmllint runs");
    assert!(
        out.status.success(),
        "xmllint rejected the JUnit report:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn junit_output() {
    let (code, stdout, _) = run(&[FIXTURES, "--format", "junit"]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout);
    xmllint_validates(&stdout);
}

#[test]
fn junit_has_one_case_per_finding_and_fails_at_fail_on() {
    let findings = json_findings(DEMO);
    let errors = findings.iter().filter(|f| f["severity"] == "error").count();
    let rules: BTreeSet<&str> = findings.iter().filter_map(|f| f["rule"].as_str()).collect();
    for (fail_on, failing) in [
        ("error", errors),
        (
            "warning",
            findings.iter().filter(|f| f["severity"] != "info").count(),
        ),
        ("info", findings.len()),
    ] {
        let (code_2, xml, _) = run(&[DEMO, "--format", "junit", "--fail-on", fail_on]);
        assert_eq!(code_2, 1);
        xmllint_validates(&xml);
        assert_eq!(xml.matches("<testcase ").count(), findings.len());
        assert_eq!(xml.matches("<testsuite ").count(), rules.len());
        assert_eq!(
            xml.matches("<failure ").count(),
            failing,
            "fail-on {fail_on}"
        );
        assert!(xml.contains(&format!(
            "tests=\"{}\" failures=\"{failing}\" errors=\"0\"",
            findings.len()
        )));
    }
    assert!(errors > 0 && errors < findings.len());
}

#[test]
fn junit_of_a_clean_run_has_one_passing_case() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ok.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    )
    .unwrap();
    let (code, xml, _) = run(&[dir.path().to_str().unwrap(), "--format", "junit"]);
    assert_eq!(code, 0);
    xmllint_validates(&xml);
    assert_eq!(xml.matches("<testcase ").count(), 1);
    assert_eq!(xml.matches("<failure").count(), 0);
}

// ---------------------------------------------------------------------------------------
// GitLab Code Quality

fn validate_gitlab(report: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gl-code-quality-report.json");
    std::fs::write(&file, report).unwrap();
    let script = "import json,sys,jsonschema\n\
        schema=json.load(open(sys.argv[1]));report=json.load(open(sys.argv[2]))\n\
        jsonschema.Draft202012Validator.check_schema(schema)\n\
        errors=list(jsonschema.Draft202012Validator(schema).iter_errors(report))\n\
        [print(e.json_path, e.message) for e in errors]\n\
        sys.exit(1 if errors else 0)\n";
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(root().join("testdata/schemas/gitlab-codequality.schema.json"))
        .arg(&file)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "the GitLab report does not match the documented format:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn gitlab_output() {
    let (code, stdout, _) = run(&[FIXTURES, "--format", "gitlab"]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout);
    validate_gitlab(&stdout);
}

#[test]
fn gitlab_issues_match_the_findings_with_unique_fingerprints() {
    let findings = json_findings(DEMO);
    let (code_3, stdout, _) = run(&[DEMO, "--format", "gitlab"]);
    assert_eq!(code_3, 1);
    validate_gitlab(&stdout);
    let issues: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(issues.len(), findings.len());
    let fingerprints: BTreeSet<&str> = issues
        .iter()
        .filter_map(|i| i["fingerprint"].as_str())
        .collect();
    assert_eq!(fingerprints.len(), issues.len());
    for (issue, finding) in issues.iter().zip(&findings) {
        assert_eq!(issue["location"]["path"], finding["file"]);
        assert_eq!(issue["location"]["lines"]["begin"], finding["line"]);
        assert_eq!(
            issue["check_name"],
            format!("gpulint/{}", finding["rule"].as_str().unwrap())
        );
    }
    // Input errors are issues too: a broken file is not a clean report.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.yaml"), "a: [oops\n").unwrap();
    let (code, stdout, _) = run(&[dir.path().to_str().unwrap(), "--format", "gitlab"]);
    assert_eq!(code, 2);
    let issues: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0]["check_name"], "gpulint/input-error");
}

// ---------------------------------------------------------------------------------------
// inventory --format csv

#[test]
fn inventory_csv() {
    let (code, stdout, _) = run(&["inventory", FIXTURES, "--format", "csv"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(stdout);
    // Python's csv module reads it back: the same number of fields on every row, and one row
    // per container of the JSON inventory.
    let (code_4, json, _) = run(&["inventory", FIXTURES, "--format", "json"]);
    assert_eq!(code_4, 0);
    let inventory: Value = serde_json::from_str(&json).unwrap();
    let containers: usize = inventory["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["containers"].as_array().map_or(0, Vec::len))
        .sum();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("inventory.csv");
    std::fs::write(&file, &stdout).unwrap();
    let out = Command::new(python())
        .arg("-c")
        .arg("import csv,sys\nrows=list(csv.reader(open(sys.argv[1],newline='')))\nprint(len(rows), sorted({len(r) for r in rows}))")
        .arg(&file)
        .output()
        .expect("python runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("{} [15]", containers + 1)
    );
}

// ---------------------------------------------------------------------------------------
// Several outputs in one run

#[test]
fn one_run_writes_several_reports_equal_to_single_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (code, stdout, stderr) = run(&[
        FIXTURES,
        "--format",
        "json",
        "-o",
        &file("report.json"),
        "--output-format",
        &format!("sarif={}", file("gpulint.sarif")),
        "--output-format",
        &format!("junit={}", file("junit.xml")),
        "--output-format",
        &format!("gitlab={}", file("codequality.json")),
        "--output-format",
        &format!("html={}", file("report.html")),
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, "", "-o takes the --format output off stdout");
    for (format, name) in [
        ("json", "report.json"),
        ("sarif", "gpulint.sarif"),
        ("junit", "junit.xml"),
        ("gitlab", "codequality.json"),
        ("html", "report.html"),
    ] {
        let (code_5, single, _) = run(&[FIXTURES, "--format", format]);
        assert_eq!(code_5, 1);
        assert_eq!(
            std::fs::read_to_string(file(name)).unwrap(),
            single,
            "{format}"
        );
    }
    // A bad spec is a usage error that names the formats.
    let (code, _, stderr) = run(&[FIXTURES, "--output-format", "pdf=x.pdf"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("one of human, json, sarif, github, junit, gitlab, html, markdown"));
    // An unwritable file is an error (exit 2), after the other outputs.
    let (code, _, stderr) = run(&[
        FIXTURES,
        "--output-format",
        &format!("json={}", file("missing/dir/x.json")),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("missing/dir/x.json"), "{stderr}");
}

// ---------------------------------------------------------------------------------------
// HTML

fn demo_html() -> String {
    let (code, html, stderr) = run(&[DEMO, "--format", "html"]);
    assert_eq!(code, 1, "{stderr}");
    html
}

/// The text a reader sees: tags dropped (scripts and styles with their content), entities
/// decoded, blank runs folded; one line per block.
fn text_content(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        if let Some(skipped) = ["<script", "<style", "<title"]
            .into_iter()
            .find(|s| rest.starts_with(s))
        {
            let close = format!("</{}>", &skipped[1..]);
            let end = rest.find(&close).map_or(rest.len(), |i| i + close.len());
            rest = &rest[end..];
            continue;
        }
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..=end];
        let block = [
            "<tr", "</tr", "<h", "<p", "</p", "<div", "<table", "<svg", "</svg",
        ];
        out.push_str(if block.iter().any(|b| tag.starts_with(b)) {
            "\n"
        } else {
            " "
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    let decoded = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    decoded
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The report's title names the checkout's folder: replaced there only (a folder named like a
/// word of a message, `main` in `domain`, must not change the message).
fn redact_checkout(text: &str) -> String {
    text.replace(
        &format!(": {} (testdata/demo)", checkout_name()),
        ": <checkout> (testdata/demo)",
    )
}

fn checkout_name() -> String {
    root()
        .canonicalize()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn html_text_of_the_demo() {
    let html = demo_html();
    // The repository's folder name depends on the checkout.
    let text = redact_checkout(&text_content(&html));
    insta::assert_snapshot!(text);
}

#[test]
fn html_is_self_contained_and_escapes_repository_text() {
    let html = demo_html();
    // Nothing to fetch: no external reference of any kind, and a policy that forbids it.
    for needle in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "url(",
        "@import",
        "<link",
    ] {
        assert!(!html.contains(needle), "{needle}");
    }
    assert!(html.contains("default-src 'none'"));
    // A manifest whose names carry markup shows them as text.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: \"<img src=x onerror=alert(1)>\"}\nspec:\n  containers:\n  - name: \"</td><script>alert(2)</script>\"\n    resources:\n      requests: {nvidia.com/gpu: 2}\n      limits: {nvidia.com/gpu: 1}\n",
    )
    .unwrap();
    let (code, html, _) = run(&[dir.path().to_str().unwrap(), "--format", "html"]);
    assert_eq!(code, 1);
    assert!(!html.contains("<img"));
    assert_eq!(html.matches("<script>").count(), 1, "only gpulint's own");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

/// A local HTTP proxy that records the first line of every request sent through it.
struct Recorder {
    port: u16,
    lines: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Recorder {
    fn start() -> Recorder {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (l, s) = (lines.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut conn, _)) => {
                        let _ = conn.set_nonblocking(false);
                        let _ = conn.set_read_timeout(Some(std::time::Duration::from_millis(500)));
                        let mut buf = [0u8; 512];
                        let n = conn.read(&mut buf).unwrap_or(0);
                        let text = String::from_utf8_lossy(&buf[..n]);
                        l.lock()
                            .unwrap()
                            .push(text.lines().next().unwrap_or_default().to_string());
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
                }
            }
        });
        Recorder {
            port,
            lines,
            stop,
            thread: Some(thread),
        }
    }

    /// Requests for pages, not Chromium's own background services (time, updates, accounts),
    /// which it contacts whatever the page is.
    fn page_requests(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let lines = self.lines.lock().unwrap().clone();
        lines
            .into_iter()
            .filter(|l| {
                ![".google.com", ".googleapis.com", ".gvt1.com"]
                    .iter()
                    .any(|host| l.contains(host))
            })
            .collect()
    }
}

struct Browser {
    /// The serialized DOM after the page's scripts ran.
    dom: String,
    /// Console messages (`CONSOLE` log lines).
    console: Vec<String>,
    /// Requests of the page that reached the network (through the recording proxy).
    requests: Vec<String>,
}

/// Opens `page` (a file, with an optional `#fragment`) in headless Chromium, through a
/// recording proxy; with `screenshot`, takes one instead of dumping the DOM.
fn chromium(page: &Path, fragment: &str, screenshot: Option<&Path>) -> Browser {
    let profile = tempfile::tempdir().unwrap();
    let proxy = Recorder::start();
    let url = format!("file://{}{fragment}", page.display());
    let mut cmd = Command::new(tool("GPULINT_CHROMIUM", "chromium"));
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--hide-scrollbars",
        "--window-size=1150,1400",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=3000",
        "--proxy-bypass-list=<-loopback>",
    ])
    .arg(format!("--proxy-server=http://127.0.0.1:{}", proxy.port))
    .arg(format!("--user-data-dir={}", profile.path().display()));
    match screenshot {
        Some(png) => cmd.arg(format!("--screenshot={}", png.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd.arg(&url).output().expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    Browser {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
        requests: proxy.page_requests(),
    }
}

/// The findings rows of a DOM dump: (rule, severity, hidden), in document order.
fn table_rows(dom: &str) -> Vec<(String, String, bool)> {
    let attr = |tag: &str, name: &str| {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        Some(tag[start..].split('"').next()?.to_string())
    };
    dom.split("<tr ")
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>')?];
            Some((
                attr(tag, "data-rule")?,
                attr(tag, "data-severity")?,
                tag.contains(" hidden"),
            ))
        })
        .collect()
}

/// Text as Chromium serializes it in element content.
fn dom_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
fn html_in_chromium_sorts_filters_and_fetches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, demo_html()).unwrap();
    let findings = json_findings(DEMO);
    let errors = findings.iter().filter(|f| f["severity"] == "error").count();

    // The recorder and the console capture work: a page that fetches and throws is caught.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><img src=\"http://gpulint.invalid/x.png\"><script>throw new Error('control')</script>",
    )
    .unwrap();
    let b = chromium(&control, "", None);
    assert!(
        b.requests.iter().any(|r| r.contains("gpulint.invalid")),
        "{:?}",
        b.requests
    );
    assert!(b
        .console
        .iter()
        .any(|l| l.contains("Uncaught Error: control")));

    // The report, filtered to errors and sorted by rule through its URL fragment.
    let b = chromium(&page, "#severity=error&sort=2", None);
    assert!(
        b.dom.contains("data-ready=\"1\""),
        "the script ran to its end"
    );
    assert_eq!(b.console, Vec::<String>::new(), "no console message");
    assert_eq!(b.requests, Vec::<String>::new(), "no request left the page");
    assert!(b
        .dom
        .contains(&format!("{errors} of {} findings shown", findings.len())));
    let rows = table_rows(&b.dom);
    assert_eq!(rows.len(), findings.len());
    for (rule, severity, hidden) in &rows {
        assert_eq!(*hidden, severity != "error", "{rule} {severity}");
    }
    let shown: Vec<&str> = rows.iter().filter(|r| !r.2).map(|r| r.0.as_str()).collect();
    let mut sorted = shown.clone();
    sorted.sort();
    assert_eq!(shown, sorted, "sorted by rule");
    assert_eq!(shown.len(), errors);
    // Every finding and every namespace total is in the page.
    for f in &findings {
        let message = f["message"].as_str().unwrap();
        assert!(b.dom.contains(&dom_text(message)), "{message}");
    }
    let (code_6, inventory, _) = run(&["inventory", DEMO, "--format", "json"]);
    assert_eq!(code_6, 0);
    let inventory: Value = serde_json::from_str(&inventory).unwrap();
    let mut total = 0;
    for ns in inventory["namespaces"].as_array().unwrap() {
        let gpus = ns["gpus"].as_i64().unwrap();
        total += gpus;
        if gpus > 0 {
            let name = ns["namespace"].as_str().unwrap_or("(cluster)");
            assert!(
                b.dom.contains(&format!(
                    "<tr><td>{}</td><td class=\"n\">{gpus}</td>",
                    dom_text(name)
                )),
                "{name} {gpus}"
            );
        }
    }
    assert!(b
        .dom
        .contains(&format!("<th>total</th><th class=\"n\">{total}</th>")));

    // Sorted the other way by severity, unfiltered: errors last.
    let b = chromium(&page, "#sort=-1", None);
    let severities: Vec<String> = table_rows(&b.dom).into_iter().map(|r| r.1).collect();
    assert!(table_rows(&b.dom).iter().all(|r| !r.2));
    assert_eq!(severities.first().map(String::as_str), Some("info"));
    assert_eq!(severities.last().map(String::as_str), Some("error"));

    // Without script: the plain table, every finding, no filters. Script is blocked by the
    // page's own policy (`script-src 'none'`): Chromium's `--blink-settings=scriptEnabled=false`
    // also stops `--dump-dom` from printing anything.
    let no_script = dir.path().join("no-script.html");
    std::fs::write(
        &no_script,
        demo_html().replace("script-src 'unsafe-inline'", "script-src 'none'"),
    )
    .unwrap();
    let b = chromium(&no_script, "#severity=error", None);
    assert!(!b.dom.contains("data-ready=\"1\""));
    let rows = table_rows(&b.dom);
    assert_eq!(rows.len(), findings.len());
    assert!(rows.iter().all(|r| !r.2), "every row shown");
    assert!(b.dom.contains("<div id=\"filters\" hidden=\"\">"));

    // A screenshot of the page.
    let png = dir.path().join("report.png");
    chromium(&page, "", Some(&png));
    let bytes = std::fs::read(&png).expect("a screenshot was written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(bytes.len() > 20_000, "{} bytes", bytes.len());
}

/// The report's findings table, after a script added to the page measured it: `yes` when it
/// fits the page's column, else its width and the column's.
fn table_fits(dom: &str) -> &str {
    let at = dom.find("data-fits=\"").expect("the measuring script ran") + "data-fits=\"".len();
    dom[at..].split('"').next().unwrap_or_default()
}

#[test]
fn html_findings_table_stays_in_its_column_and_filters_by_render() {
    // Long paths and object names, as GitOps trees have them; two overlays of one base and a
    // plain file.
    let long = "clusters/production-us-east-1/tenants/machine-learning-platform/inference-services";
    let name = "llama-3-1-70b-instruct-awq-int4-tensor-parallel-sharded-serving-deployment-canary";
    let pod = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm-openai-server-with-speculative-decoding\n        image: x\n        resources:\n          requests: {{nvidia.com/gpu: 2}}\n          limits: {{nvidia.com/gpu: 1}}\n"
    );
    let repo = tempfile::tempdir().unwrap();
    crate::support::common::write_files(
        repo.path(),
        &[
            (&format!("{long}/base/deploy.yaml"), pod.as_str()),
            (
                &format!("{long}/base/kustomization.yaml"),
                "resources: [deploy.yaml]\n",
            ),
            (
                &format!("{long}/overlays/prod/kustomization.yaml"),
                "resources: [../../base]\nnamePrefix: prod-\n",
            ),
            (
                &format!("{long}/overlays/staging/kustomization.yaml"),
                "resources: [../../base]\nnamePrefix: staging-\n",
            ),
            (&format!("{long}/plain/deploy.yaml"), pod.as_str()),
        ],
    );
    let (code, html, stderr) = output(
        gpulint()
            .current_dir(repo.path())
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .args([long, "--format", "html"]),
    );
    assert_eq!(code, 1, "{stderr}");
    let measure = "<script>(function(){var t=document.getElementById('findings'),b=document.body,cs=getComputedStyle(b);\
var w=b.clientWidth-parseFloat(cs.paddingLeft)-parseFloat(cs.paddingRight);\
document.documentElement.setAttribute('data-fits',t.offsetWidth<=Math.ceil(w)?'yes':t.offsetWidth+' > '+w);})();</script></body>";
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, html.replace("</body>", measure)).unwrap();

    // The demo's table (its widest cells: paths, `nvidia.com/mig-…` names) fits too.
    let demo = dir.path().join("demo.html");
    std::fs::write(&demo, demo_html().replace("</body>", measure)).unwrap();
    assert_eq!(table_fits(&chromium(&demo, "", None).dom), "yes");

    let prod = format!("{long}/overlays/prod");
    let b = chromium(
        &page,
        &format!("#render=r%3A{}", prod.replace('/', "%2F")),
        None,
    );
    assert_eq!(b.console, Vec::<String>::new(), "no console message");
    assert_eq!(table_fits(&b.dom), "yes");
    // The render filter lists every render and shows only the chosen one's findings.
    for render in ["overlays/prod", "overlays/staging"] {
        assert!(
            b.dom
                .contains(&format!("<option value=\"r:{long}/{render}\">")),
            "{render}"
        );
    }
    let rows = |dom: &str| -> Vec<(String, bool)> {
        dom.split("<tr ")
            .skip(1)
            .filter_map(|rest| {
                let tag = &rest[..rest.find('>')?];
                tag.contains("data-rule=").then(|| {
                    let render = tag
                        .split("data-render=\"")
                        .nth(1)
                        .and_then(|r| r.split('"').next())
                        .unwrap_or("")
                        .to_string();
                    (render, tag.contains(" hidden"))
                })
            })
            .collect()
    };
    let all = rows(&b.dom);
    assert!(
        all.iter().any(|(r, _)| r.is_empty()),
        "a plain file's finding"
    );
    for (render, hidden) in &all {
        assert_eq!(*hidden, *render != prod, "{render}");
    }
    let shown = all.iter().filter(|r| !r.1).count();
    assert!(shown > 0);
    assert!(b
        .dom
        .contains(&format!("{shown} of {} findings shown", all.len())));
    // The files as written: the plain file's findings only.
    let b = chromium(&page, "#render=files", None);
    for (render, hidden) in rows(&b.dom) {
        assert_eq!(hidden, !render.is_empty(), "{render}");
    }
}

#[test]
fn markdown_of_the_demo() {
    let (code, stdout, _) = run(&[DEMO, "--format", "markdown"]);
    assert_eq!(code, 1);
    // Each memory chart's axis spans one order of magnitude: the smallest container's bars are
    // not drawn flat beside a 1800Gi limit.
    let charts: Vec<&str> = stdout.split("xychart-beta").skip(1).collect();
    assert!(charts.len() > 1, "{stdout}");
    for chart in charts {
        let values = |series: &str| -> Vec<f64> {
            chart
                .split(&format!("{series} ["))
                .nth(1)
                .and_then(|rest| rest.split(']').next())
                .unwrap_or_default()
                .split(", ")
                .filter_map(|v| v.parse().ok())
                .collect()
        };
        let (bars, lines) = (values("bar"), values("line"));
        // A container without a memory limit is charted with no limit line, never at 0.
        if chart.contains("no memory limit set") {
            assert!(!chart.contains("line ["), "{chart}");
        } else {
            assert_eq!(bars.len(), lines.len(), "{chart}");
            assert!(
                lines.iter().all(|l| *l > 0.0),
                "a limit drawn at 0: {chart}"
            );
        }
        let scales: Vec<f64> = bars
            .iter()
            .enumerate()
            .map(|(i, b)| b.max(lines.get(i).copied().unwrap_or(0.0)))
            .collect();
        let low = scales
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .max(1.0);
        let high = scales.iter().copied().fold(0.0, f64::max);
        assert!(high <= 10.0 * low, "{low} .. {high} on one axis: {chart}");
    }
    insta::assert_snapshot!(redact_checkout(&stdout));
}

#[test]
fn with_fix_diff_the_diff_is_on_stdout_and_the_report_in_its_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {nvidia.com/gpu: 2}\n      limits: {nvidia.com/gpu: 1}\n",
    )
    .unwrap();
    let report = dir.path().join("report.xml");
    let (code, stdout, stderr) = run(&[
        dir.path().to_str().unwrap(),
        "--fix",
        "--diff",
        "--format",
        "junit",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.starts_with("--- "), "{stdout}");
    let xml = std::fs::read_to_string(&report).expect("-o is written with --diff");
    // The report of the lint, as without --fix (--diff writes nothing).
    let (code_7, plain, _) = run(&[dir.path().to_str().unwrap(), "--format", "junit"]);
    assert_eq!(code_7, 1);
    assert_eq!(xml, plain);
    assert!(xml.contains("classname=\"gpulint.GPU002\""), "{xml}");
    xmllint_validates(&xml);
}
