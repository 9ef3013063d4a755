//! `--fix`, `--diff`, `--patch` and `--commit`, end to end, with the real `git` CLI.
//!
//! Fixture pairs live in testdata/fix/<case>/{input.yaml,expected.yaml}; each runs both ways:
//! fixing the input gives the expected text byte for byte, and the expected text has nothing
//! left to fix. Cases named `unsafe-*` run with `--unsafe-fixes`.

use std::path::{Path, PathBuf};

use crate::support::common::{git, gpulint, run, write_files};

const FIX_RULES: &str = "GPU001,GPU002,GPU004,QOS002,RES001";

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fix");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 12, "fixture pairs are missing");
    cases
}

#[test]
fn fixture_pairs_fix_to_expected_and_expected_needs_no_fix() {
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read(case.join("input.yaml")).unwrap();
        let expected = std::fs::read(case.join("expected.yaml")).unwrap();
        let mut args = vec!["case.yaml", "--fix", "--select", FIX_RULES];
        if name.starts_with("unsafe-") {
            args.push("--unsafe-fixes");
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("case.yaml");
        std::fs::write(&file, &input).unwrap();
        let (code_1, _, stderr) = run(dir.path(), &args);
        assert_eq!(
            code_1,
            i32::from(name == "anchor-not-edited-through-alias"),
            "{stderr}"
        );
        let fixed = std::fs::read(&file).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&fixed),
            String::from_utf8_lossy(&expected),
            "{name}: fixing input.yaml must give expected.yaml\n{stderr}"
        );
        // The other direction: nothing left to fix, so the diff is empty.
        std::fs::write(&file, &expected).unwrap();
        let mut diff_args = args.clone();
        diff_args.push("--diff");
        let (code_2, stdout, _) = run(dir.path(), &diff_args);
        assert_eq!(code_2, i32::from(name == "anchor-not-edited-through-alias"));
        assert_eq!(stdout, "", "{name}: expected.yaml must need no fix");
    }
}

#[test]
fn an_edit_through_an_anchor_is_reported_not_written() {
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fix/anchor-not-edited-through-alias");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(case.join("input.yaml"), dir.path().join("x.yaml")).unwrap();
    let (code, _, stderr) = run(dir.path(), &["x.yaml", "--fix"]);
    assert_eq!(code, 1, "the finding remains");
    assert!(stderr.contains("not fixed: x.yaml:"), "{stderr}");
    assert!(stderr.contains("GPU002"), "{stderr}");
}

const BROKEN: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          # sized for the 8B model\n          resources:\n            requests:\n              nvidia.com/gpu: 2\n              cpu: \"4\"\n              memory: 24Gi\n            limits:\n              nvidia.com/gpu: 1\n              cpu: \"4\"\n              memory: 24Gi\n";

#[test]
fn fix_writes_in_place_reports_changes_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("llm.yaml");
    std::fs::write(&file, BROKEN).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let (code, _, stderr) = run(dir.path(), &["llm.yaml", "--fix"]);
    assert_eq!(code, 0, "nothing left after the fix: {stderr}");
    assert!(
        stderr
            .contains("fixed llm.yaml:13: GPU002 requests.nvidia.com/gpu: 2 -> 1 (Deployment/llm)"),
        "{stderr}"
    );
    let fixed = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        fixed,
        BROKEN.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "permissions are kept");
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temp files left behind");
    let (code_3, _, stderr) = run(dir.path(), &["llm.yaml", "--fix"]);
    assert_eq!(code_3, 0, "{stderr}");
    assert!(stderr.contains("nothing to fix"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), fixed);
}

#[test]
fn diff_writes_nothing_and_exits_as_a_lint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("llm.yaml"), BROKEN).unwrap();
    let (code, stdout, _) = run(dir.path(), &["llm.yaml", "--fix", "--diff"]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("llm.yaml")).unwrap(),
        BROKEN
    );
}

fn repo_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["config", "user.name", "Test User"]);
    git(dir.path(), &["config", "user.email", "test@example.com"]);
    write_files(dir.path(), files);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "initial"]);
    dir
}

#[test]
fn patch_is_accepted_by_git_apply_and_writes_no_manifest() {
    // The fix lands on the last line of a file without a final newline.
    let no_newline = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}\n      requests: {nvidia.com/gpu: 2, cpu: 1, memory: 1Gi}";
    let repo = repo_with(&[("apps/llm.yaml", BROKEN), ("apps/last.yaml", no_newline)]);
    let (code, _, stderr) = run(
        &repo.path().join("apps"),
        &[".", "--fix", "--patch", "../fixes.patch"],
    );
    assert_eq!(code, 1, "{stderr}");
    let patch = std::fs::read_to_string(repo.path().join("fixes.patch")).unwrap();
    assert!(
        patch.contains("--- a/apps/llm.yaml\n+++ b/apps/llm.yaml"),
        "{patch}"
    );
    assert!(patch.contains("\\ No newline at end of file"), "{patch}");
    assert_eq!(
        git(repo.path(), &["status", "--porcelain", "apps"]),
        "",
        "no manifest written"
    );
    git(repo.path(), &["apply", "--check", "fixes.patch"]);
    git(repo.path(), &["apply", "fixes.patch"]);
    let (code, _, _) = run(repo.path(), &["apps"]);
    assert_eq!(code, 0, "after git apply nothing is left");
}

#[test]
fn commit_commits_exactly_the_fixed_files() {
    let clean = BROKEN.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1");
    let repo = repo_with(&[
        ("llm.yaml", BROKEN),
        ("ok.yaml", &clean),
        ("notes.md", "x\n"),
    ]);
    std::fs::write(repo.path().join("notes.md"), "user's own edit\n").unwrap();
    let (code, stdout, stderr) = run(
        repo.path(),
        &[".", "--fix", "--commit", "--message", "Fix GPU requests"],
    );
    assert_eq!(code, 0, "{stderr}");
    // `committed <sha>` once, in the fix log on stderr; stdout is the report.
    let committed: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("committed "))
        .collect();
    assert_eq!(committed.len(), 1, "{stderr}");
    let id = committed[0];
    assert!(!stdout.contains(id), "{stdout}");
    assert_eq!(git(repo.path(), &["rev-parse", "HEAD"]).trim(), id);
    let show = git(
        repo.path(),
        &["show", "--name-only", "--format=%an|%s%n%b", "HEAD"],
    );
    assert!(show.starts_with("Test User|Fix GPU requests"), "{show}");
    assert!(
        show.contains("- llm.yaml:13: GPU002 requests.nvidia.com/gpu: 2 -> 1"),
        "{show}"
    );
    let files: Vec<&str> = show
        .lines()
        .filter(|l| l.ends_with(".yaml") || l.ends_with(".md"))
        .collect();
    assert_eq!(files, ["llm.yaml"], "{show}");
    // The user's unrelated change is untouched and uncommitted.
    assert_eq!(
        git(repo.path(), &["status", "--porcelain"]),
        " M notes.md\n"
    );
}

#[test]
fn commit_refuses_when_a_fixed_file_has_uncommitted_changes() {
    let repo = repo_with(&[("llm.yaml", BROKEN)]);
    let edited = format!("{BROKEN}# my local note\n");
    std::fs::write(repo.path().join("llm.yaml"), &edited).unwrap();
    let (code, _, stderr) = run(repo.path(), &[".", "--fix", "--commit"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("llm.yaml: has uncommitted changes"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("llm.yaml")).unwrap(),
        edited
    );
    assert_eq!(
        git(repo.path(), &["rev-list", "--count", "HEAD"]).trim(),
        "1"
    );
}

#[test]
fn commit_outside_a_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("llm.yaml"), BROKEN).unwrap();
    let (code, _, stderr) = run(dir.path(), &["llm.yaml", "--fix", "--commit"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not inside a git repository"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("llm.yaml")).unwrap(),
        BROKEN
    );
}

#[test]
fn stdin_is_linted_but_not_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = gpulint()
        .current_dir(dir.path())
        .args(["-", "--fix"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(BROKEN.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stdin can be linted but not fixed"),
        "{stderr}"
    );
}

/// The real manifests of the corpus (`testdata/corpus/raw`), sorted.
fn corpus_files() -> Vec<PathBuf> {
    let raw = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/raw");
    let mut files = Vec::new();
    let mut stack = vec![raw];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Every real manifest with a GPU block: break it (change a request), fix it, and check that it
/// parses, that only that block changed, and that every comment survived. The other break,
/// dropping a limit, is `real_manifests_with_a_dropped_gpu_limit_get_it_back`.
#[test]
fn broken_copies_of_real_manifests_are_repaired() {
    let mut repaired = 0;
    for path in corpus_files() {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // A few upstream files are not valid YAML: nothing to repair there.
        if gpulint::source::yaml::Stream::parse(&text).error.is_some() {
            continue;
        }
        // Break the first `nvidia.com/gpu: N` limit line that has a matching request by
        // changing the request to N+1, the most common hand-edit mistake (GPU002).
        let Some((line_no, line)) = text.lines().enumerate().find(|(_, l)| {
            l.trim_start().starts_with("nvidia.com/gpu: ")
                && l.trim_end().ends_with(|c: char| c.is_ascii_digit())
        }) else {
            continue;
        };
        let value: String = line
            .trim()
            .trim_start_matches("nvidia.com/gpu: ")
            .to_string();
        let Ok(n) = value.trim_matches('"').parse::<u32>() else {
            continue;
        };
        let broken_line = line.replace(
            &format!("nvidia.com/gpu: {value}"),
            &format!("nvidia.com/gpu: {}", n + 1),
        );
        let mut lines: Vec<&str> = text.lines().collect();
        lines[line_no] = &broken_line;
        let mut broken = lines.join("\n");
        if text.ends_with('\n') {
            broken.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.yaml");
        std::fs::write(&file, &broken).unwrap();
        let (code, _, stderr) = run(dir.path(), &["m.yaml", "--fix", "--select", "GPU002"]);
        let fixed = std::fs::read_to_string(&file).unwrap();
        if fixed == broken {
            // Only a request line can be repaired by GPU002; a broken limit stays for a person.
            assert!(code != 2, "{}: {stderr}", path.display());
            continue;
        }
        repaired += 1;
        assert_eq!(code, 0, "{}: {stderr}", path.display());
        let changed: Vec<(usize, &str, &str)> = broken
            .lines()
            .zip(fixed.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| (i, a, b))
            .collect();
        // One line changes: the request of the broken pair (the broken line itself when it was
        // the request, else its request twin).
        assert_eq!(
            changed.len(),
            1,
            "{}: only one line changes",
            path.display()
        );
        assert!(
            changed[0].2.trim_start().starts_with("nvidia.com/gpu: "),
            "{}",
            path.display()
        );
        assert_eq!(fixed.lines().count(), broken.lines().count());
        let (code, _, _) = run(dir.path(), &["m.yaml", "--select", "GPU002"]);
        assert_eq!(code, 0, "{}: GPU002 is gone after the fix", path.display());
        let comments = |t: &str| {
            t.lines()
                .filter(|l| l.trim_start().starts_with('#'))
                .count()
        };
        assert_eq!(comments(&fixed), comments(&broken), "{}", path.display());
    }
    // Most corpus GPU blocks set limits only; those with both sides get the GPU002 break.
    assert!(repaired >= 15, "only {repaired} corpus files were repaired");
}

fn comment_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .collect()
}

/// A GPU limit line that can be dropped: in a block `limits` mapping, on a line of its own,
/// with a request of the same value in the same container.
struct DropTarget {
    /// 0-based line of the limit.
    line: usize,
    name: String,
    request: String,
    /// Whether other entries stay in `limits` once the line is gone.
    others: bool,
}

fn drop_target(text: &str) -> Option<DropTarget> {
    use gpulint::k8s::catalog::Catalog;
    use gpulint::k8s::gpu::{GpuName, GpuNames};
    use gpulint::k8s::workload::{objects, Workload};
    use gpulint::source::yaml::Stream;

    let stream = Stream::parse(text);
    if stream.error.is_some() {
        return None;
    }
    let (catalog, names) = (Catalog::builtin(), GpuNames::default());
    for doc in &stream.documents {
        for object in objects(doc) {
            let Some(w) = Workload::of(object, &catalog) else {
                continue;
            };
            for c in &w.containers {
                let (req, lim) = (&c.resources.requests, &c.resources.limits);
                let Some(limits) = lim.node.filter(|n| !n.flow && !n.via_alias) else {
                    continue;
                };
                for q in &lim.entries {
                    if names.classify(q.name) != GpuName::Known || q.key.via_alias {
                        continue;
                    }
                    let Some(r) = req.get(q.name) else { continue };
                    let (Some(rv), Some(lv)) = (r.value.text(), q.value.text()) else {
                        continue;
                    };
                    let line = stream.line_col(q.key.span.start()).0 - 1;
                    let own_line = stream.line_col(q.value.span.end()).0 - 1 == line
                        && text.lines().nth(line).is_some_and(|l| {
                            l.len() - l.trim_start().len() + 1
                                == stream.line_col(q.key.span.start()).1
                        });
                    // A placeholder (`${GPUS}`) has no fix: only whole numbers are put back.
                    let whole = !rv.is_empty() && rv.bytes().all(|b| b.is_ascii_digit());
                    if rv != lv || !whole || !own_line || r.value.via_alias {
                        continue;
                    }
                    return Some(DropTarget {
                        line,
                        name: q.name.to_string(),
                        request: rv.to_string(),
                        others: limits.as_map().is_some_and(|m| m.len() > 1),
                    });
                }
            }
        }
    }
    None
}

/// Real manifests broken the other way the issue names: a GPU limit dropped (GPU001). The fix
/// must put exactly that line back inside the `limits` block, at its indentation.
#[test]
fn real_manifests_with_a_dropped_gpu_limit_get_it_back() {
    use gpulint::config::Config;
    use gpulint::lint::{Linter, Selection};
    use gpulint::source::document::plain;
    use gpulint::source::yaml::Stream;

    let select = Selection {
        select: vec![gpulint::rules::Rule::GpuLimitMissing],
        ignore: Vec::new(),
        measured_only: false,
    };
    let linter = Linter::new(Config::default(), select);
    let (mut exercised, mut byte_for_byte, mut emptied) = (0, 0, 0);
    for path in corpus_files() {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Some(target) = drop_target(&text) else {
            continue;
        };
        let shown = path.display();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.yaml");
        // The file as it is must have nothing for GPU001 to fix, or more than our line changes.
        std::fs::write(&file, &text).unwrap();
        if !linter.run(std::slice::from_ref(&file)).findings.is_empty() {
            continue;
        }
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let dropped = lines[target.line];
        let broken: String = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != target.line)
            .map(|(_, l)| *l)
            .collect();
        std::fs::write(&file, &broken).unwrap();
        let (code, _, stderr) = run(dir.path(), &["m.yaml", "--fix", "--select", "GPU001"]);
        let fixed = std::fs::read_to_string(&file).unwrap();
        // An emptied `limits:` (null) is filled in place: the limit goes back under it.
        if !target.others {
            emptied += 1;
        }
        exercised += 1;
        assert_eq!(code, 0, "{shown}: nothing is left after the fix\n{stderr}");
        let after = Stream::parse(&fixed);
        assert!(after.error.is_none(), "{shown}: the fix does not parse");
        // The fixed documents are the original ones (the limit may now come last).
        let before = Stream::parse(&text);
        assert_eq!(after.documents.len(), before.documents.len(), "{shown}");
        for (a, b) in after.documents.iter().zip(&before.documents) {
            let (a, b) = (plain(&a.root), plain(&b.root));
            assert!(
                same_data(&a, &b),
                "{shown}: the data differs from the original"
            );
        }
        if fixed == text {
            byte_for_byte += 1;
        }
        // Only one line is new; every other line is the broken file's, in order.
        let (old, new): (Vec<&str>, Vec<&str>) = (
            broken.split_inclusive('\n').collect(),
            fixed.split_inclusive('\n').collect(),
        );
        assert_eq!(new.len(), old.len() + 1, "{shown}: one line is inserted");
        let at = (0..new.len())
            .find(|&i| old.get(i).map(|l| l.trim_end()) != Some(new[i].trim_end()))
            .unwrap();
        for i in at + 1..new.len() {
            assert_eq!(new[i], old[i - 1], "{shown}: line {}", i + 1);
        }
        // Byte for byte before it too, but for the line break a last line gains.
        let at_end = at + 1 == new.len() && !broken.ends_with('\n');
        assert!(
            (0..at).all(|i| new[i] == old[i] || (at_end && i + 1 == at && new[i].trim_end() == old[i])),
            "{shown}: the lines before the inserted one are unchanged"
        );
        // The inserted line is the limit, at the indentation of the limits entries, right
        // after the last of them.
        let inserted = new[at].trim_end();
        let indent = dropped.len() - dropped.trim_start().len();
        // Into an emptied block, the indentation comes from `requests:` (2 when it is flow).
        if target.others {
            assert_eq!(
                inserted.len() - inserted.trim_start().len(),
                indent,
                "{shown}: {inserted:?} is indented like {dropped:?}"
            );
        }
        let indent = inserted.len() - inserted.trim_start().len();
        let (key, value) = inserted.trim_start().split_once(": ").unwrap();
        assert_eq!(key.trim_matches(['"', '\'']), target.name, "{shown}");
        assert_eq!(value.trim_matches(['"', '\'']), target.request, "{shown}");
        // Inside the limits block: the nearest less indented line above is `limits:`, and the
        // next line of that indentation or deeper (comments aside) is not another entry.
        let pad = |l: &str| l.len() - l.trim_start().len();
        let content = |l: &str| !l.trim().is_empty() && !l.trim_start().starts_with('#');
        let parent = new[..at]
            .iter()
            .rev()
            .find(|l| content(l) && pad(l) < indent);
        assert!(
            parent.is_some_and(|l| l
                .trim_start()
                .trim_matches(['"', '\''])
                .starts_with("limits")),
            "{shown}: {inserted:?} is not in the limits block:\n{}",
            new[at.saturating_sub(4)..(at + 3).min(new.len())].concat()
        );
        let next = new[at + 1..].iter().find(|l| content(l));
        assert!(
            next.is_none_or(|l| pad(l) < indent),
            "{shown}: the limit is not the last entry of its block"
        );
        assert_eq!(
            comment_lines(&fixed),
            comment_lines(&broken),
            "{shown}: comments"
        );
        let (code, _, _) = run(dir.path(), &["m.yaml", "--select", "GPU001"]);
        assert_eq!(code, 0, "{shown}: GPU001 is gone after the fix");
    }
    eprintln!(
        "dropped GPU limits: {exercised} files repaired ({byte_for_byte} byte for byte), \
         {emptied} of them into an emptied limits block"
    );
    // 81 corpus files have a GPU limit with an equal request and other limits beside it.
    assert!(
        exercised - emptied >= 60,
        "only {exercised} corpus files were exercised"
    );
    assert!(
        emptied >= 5,
        "only {emptied} emptied limits blocks were filled"
    );
}

/// Equal as data, key order aside.
fn same_data(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_data(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_data(v, w))
        }
        _ => a == b,
    }
}

/// What `--fix` reports as left is what a lint of the fixed tree finds, byte for byte: on the
/// demo (overlay patches and plain files, measured rules) and on the fixture inputs (plain
/// files only, so only the files the fix wrote are linted again).
#[test]
fn the_report_after_a_fix_is_a_lint_of_the_fixed_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    crate::support::common::copy_dir(&root.join("testdata/demo"), &dir.path().join("demo"));
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::create_dir_all(dir.path().join("plain")).unwrap();
        std::fs::copy(
            case.join("input.yaml"),
            dir.path().join(format!("plain/{name}.yaml")),
        )
        .unwrap();
    }
    for tree in ["demo", "plain"] {
        let fix = [tree, "--fix", "--unsafe-fixes", "--format", "json"];
        let (_, left, stderr) = run(dir.path(), &fix);
        let fixed = stderr.lines().filter(|l| l.starts_with("fixed ")).count();
        assert!(fixed > 3, "{tree}: the fix must write something\n{stderr}");
        let (_, again, _) = run(dir.path(), &[tree, "--format", "json"]);
        let findings = serde_json::from_str::<serde_json::Value>(&again).unwrap()["findings"]
            .as_array()
            .map_or(0, Vec::len);
        assert!(findings > 0, "{tree}: something must be left to report");
        assert_eq!(
            left, again,
            "{tree}: --fix reported other findings than a lint"
        );
    }
}

/// The lint after a fix reads again only the plain files that changed (the others keep their
/// parse: counted by pointer), unless a render reads a changed file or a changed file's repo
/// facts (here a LocalQueue) changed: then it is the whole run, and another file's finding
/// follows the new facts. Either way the findings are a whole run's.
#[test]
fn the_lint_after_a_fix_reads_only_what_it_must() {
    use gpulint::config::Config;
    use gpulint::lint::{Linter, Run, Selection};
    use std::collections::BTreeSet;
    use std::sync::Arc;

    let job = |memory: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j-{memory}\n  namespace: ml\n  labels:\n    kueue.x-k8s.io/queue-name: team\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n        resources:\n          limits: {{nvidia.com/gpu: 1, memory: {memory}}}\n"
        )
    };
    let queue = |name: &str| {
        format!("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: {name}\n  namespace: ml\nspec:\n  clusterQueue: cq\n")
    };
    let dir = crate::support::common::temp_tree(&[
        ("a.yaml", &job("1Gi")),
        ("b.yaml", &job("2Gi")),
        ("queues.yaml", &queue("team")),
        ("overlay/kustomization.yaml", "resources:\n- job.yaml\n"),
        ("overlay/job.yaml", &job("3Gi")),
    ]);
    let root = [dir.path().to_path_buf()];
    let linter = Linter::new(Config::default(), Selection::default());
    let named = |run: &Run, file: usize| {
        let path = std::path::Path::new(&run.files[file].name);
        path.strip_prefix(&root[0])
            .unwrap_or(path)
            .display()
            .to_string()
    };
    let summary = |run: &Run| -> Vec<(String, String, String)> {
        run.findings
            .iter()
            .map(|f| (f.rule.id.to_string(), named(run, f.file), f.message.clone()))
            .collect()
    };
    // Lints, changes the files, lints again after the "fix": the files read again, the run.
    let fix = |changes: &[(&str, String)]| -> (BTreeSet<String>, Run) {
        let before = linter.run(&root);
        let parsed: Vec<_> = (0..before.files.len())
            .map(|i| (named(&before, i), before.files[i].stream.clone()))
            .collect();
        for (file, text) in changes {
            std::fs::write(root[0].join(file), text).unwrap();
        }
        let changed: Vec<_> = changes.iter().map(|(f, _)| root[0].join(f)).collect();
        let after = linter.relint(before, &changed, &root);
        let reread = (0..after.files.len())
            .filter(|&i| {
                !parsed.iter().any(|(name, stream)| {
                    *name == named(&after, i) && Arc::ptr_eq(stream, &after.files[i].stream)
                })
            })
            .map(|i| named(&after, i))
            .collect();
        assert_eq!(
            summary(&after),
            summary(&linter.run(&root)),
            "not a whole run's findings"
        );
        (reread, after)
    };

    let (reread, after) = fix(&[("a.yaml", job("5Gi"))]);
    assert_eq!(reread, BTreeSet::from(["a.yaml".to_string()]));
    assert!(!after.findings.is_empty());

    let (reread, _) = fix(&[("overlay/job.yaml", job("6Gi"))]);
    assert!(
        reread.contains("b.yaml"),
        "a render read it: the whole run ({reread:?})"
    );

    let unknown_queue = |run: &Run| {
        summary(run)
            .iter()
            .any(|(rule, file, _)| rule == "KUE002" && file == "b.yaml")
    };
    assert!(!unknown_queue(&linter.run(&root)));
    let (reread, after) = fix(&[("queues.yaml", queue("other"))]);
    assert!(
        reread.contains("b.yaml"),
        "the facts changed: the whole run ({reread:?})"
    );
    assert!(unknown_queue(&after), "{:?}", summary(&after));
}
