//! Every fix promised lands (issue 26): custom resources (RayService, JobSet, LeaderWorkerSet:
//! the upstream examples in testdata/fix-crd-overlays) in a base two overlays share are fixed
//! with a JSON 6902 patch of the overlay, checked with `kubectl kustomize` (the oracle) and a
//! second run; `fixable` is what `--fix` writes, on every fixture used here.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpulint::source::document::plain;
use gpulint::source::yaml::Stream;
use serde_json::Value;

use crate::support::common::{copy_dir, git, kubectl, run};

const FIXTURE: &str = "testdata/fix-crd-overlays";

/// A git-initialised temp copy of the fixture.
struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &dir);
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["add", "-A"]);
        Repo { _tmp: tmp, dir }
    }

    fn gpulint(&self, args: &[&str]) -> (i32, String, String) {
        let mut all = vec!["--metrics", "metrics.json", "overlays"];
        all.extend(args);
        run(&self.dir, &all)
    }

    fn json(&self) -> Value {
        let (code, stdout, stderr) = self.gpulint(&["--format", "json"]);
        assert!(code == 0 || code == 1, "exit {code}: {stderr}");
        serde_json::from_str(&stdout).unwrap()
    }

    fn kubectl(&self, overlay: &str) -> Vec<Value> {
        let out = Command::new(kubectl())
            .current_dir(&self.dir)
            .args(["kustomize", overlay])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl kustomize {overlay}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s = Stream::parse(&String::from_utf8_lossy(&out.stdout));
        assert!(s.error.is_none(), "{:?}", s.error);
        s.documents.iter().map(|d| plain(&d.root)).collect()
    }
}

/// Staging measured like prod, and its overlay listing `patches:` as a flow list, where `--fix`
/// adds no entry: staging's fixes are refused.
fn add_refusals(dir: &Path) {
    let metrics = std::fs::read_to_string(dir.join("metrics.json")).unwrap();
    let mut snapshot: Value = serde_json::from_str(&metrics).unwrap();
    let prod = snapshot["containers"].as_array().unwrap().clone();
    for mut c in prod {
        c["namespace"] = "staging".into();
        snapshot["containers"].as_array_mut().unwrap().push(c);
    }
    std::fs::write(dir.join("metrics.json"), snapshot.to_string()).unwrap();
    let staging = dir.join("overlays/staging/kustomization.yaml");
    let text = std::fs::read_to_string(&staging).unwrap();
    std::fs::write(staging, format!("{text}patches: []\n")).unwrap();
}

/// `(rule, kind, container, render)` of the findings of `rules`.
fn findings(report: &Value, rules: &[&str]) -> Vec<(String, String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| rules.contains(&f["rule"].as_str().unwrap()))
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or("-").to_string();
            (
                s(&f["rule"]),
                s(&f["object"]["kind"]),
                s(&f["container"]),
                s(&f["render"]),
            )
        })
        .collect()
}

/// Sets the field at `pointer` of the `kind` object, creating the mappings on the way.
fn set(objects: &mut [Value], kind: &str, pointer: &str, value: Value) {
    let mut at = objects
        .iter_mut()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("{kind} not rendered"));
    for key in pointer.trim_start_matches('/').split('/') {
        at = match key.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => {
                if at.is_null() {
                    *at = serde_json::json!({});
                }
                &mut at[key]
            }
        };
    }
    *at = value;
}

const RAY: &str = "/spec/rayClusterConfig/workerGroupSpecs/0/template/spec/containers/0/resources";
const JOBSET: &str = "/spec/replicatedJobs/0/template/spec/template/spec/containers/0/resources";
const LWS: &str = "/spec/leaderWorkerTemplate/workerTemplate/spec/containers/0/resources";

#[test]
fn crds_in_a_shared_base_are_fixed_with_a_json6902_patch_of_the_overlay() {
    let repo = Repo::new();
    let before = repo.json();
    let measured = ["MEM002", "QOS001"];
    let prod = |rule: &str, kind: &str, c: &str| {
        (rule.into(), kind.into(), c.into(), "overlays/prod".into())
    };
    assert_eq!(
        findings(&before, &measured),
        vec![
            prod("MEM002", "RayService", "ray-worker"),
            prod("QOS001", "JobSet", "maxtext"),
            prod("MEM002", "LeaderWorkerSet", "vllm-worker"),
            // Staging has no measurement: its QOS001 has no value to write.
            (
                "QOS001".into(),
                "JobSet".into(),
                "maxtext".into(),
                "overlays/staging".into()
            ),
        ]
    );
    let rendered_prod = repo.kubectl("overlays/prod");
    let rendered_staging = repo.kubectl("overlays/staging");
    let base = std::fs::read_to_string(repo.dir.join("base/lws.yaml")).unwrap();

    let (code, _, stderr) = repo.gpulint(&["--fix"]);
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    assert!(!stderr.contains("not fixed"), "{stderr}");
    // And the LeaderWorkerSet's CPU request without a limit (QOS002) at its measured size.
    assert!(stderr.contains("fixed 4 finding(s)"), "{stderr}");

    // The oracle: prod renders exactly the recommended values, staging and the base are as
    // they were.
    let mut expected = rendered_prod;
    for field in ["limits/memory", "requests/memory"] {
        set(
            &mut expected,
            "RayService",
            &format!("{RAY}/{field}"),
            "13Gi".into(),
        );
        set(
            &mut expected,
            "JobSet",
            &format!("{JOBSET}/{field}"),
            "43Gi".into(),
        );
        set(
            &mut expected,
            "LeaderWorkerSet",
            &format!("{LWS}/{field}"),
            "429Gi".into(),
        );
        // P99 100 cores × 1.15, whole cores for a GPU container.
        let cpu = field.replace("memory", "cpu");
        set(
            &mut expected,
            "LeaderWorkerSet",
            &format!("{LWS}/{cpu}"),
            "115".into(),
        );
    }
    assert_eq!(repo.kubectl("overlays/prod"), expected);
    assert_eq!(repo.kubectl("overlays/staging"), rendered_staging);
    assert_eq!(
        std::fs::read_to_string(repo.dir.join("base/lws.yaml")).unwrap(),
        base
    );
    let patch = std::fs::read_to_string(
        repo.dir
            .join("overlays/prod/gpulint-rayservice-ray-serve-llm-json6902.yaml"),
    )
    .unwrap();
    assert!(patch.contains("- op: test\n"), "{patch}");
    assert!(patch.contains("- op: replace\n"), "{patch}");

    // A second run: the fixed findings are gone.
    let after = repo.json();
    assert_eq!(
        findings(&after, &measured),
        vec![(
            "QOS001".into(),
            "JobSet".into(),
            "maxtext".into(),
            "overlays/staging".into()
        )]
    );
}

/// `(rule, kind, render)` and `not_fixed` of the findings `fixable` says.
fn fixable(report: &Value, yes: bool) -> Vec<(String, String, String, Option<String>)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["fixable"] == yes && (yes || f.get("not_fixed").is_some()))
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or("-").to_string();
            (
                s(&f["rule"]),
                s(&f["object"]["kind"]),
                s(&f["render"]),
                f["not_fixed"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn a_refused_fix_is_not_fixable_and_is_said_once_with_its_render() {
    let repo = Repo::new();
    add_refusals(&repo.dir);
    let report = repo.json();
    let line = |rule: &str, kind: &str| {
        (
            rule.to_string(),
            kind.to_string(),
            "overlays/prod".to_string(),
            None,
        )
    };
    assert_eq!(
        fixable(&report, true),
        vec![
            line("MEM002", "RayService"),
            line("QOS001", "JobSet"),
            line("MEM002", "LeaderWorkerSet"),
            line("QOS002", "LeaderWorkerSet"),
        ]
    );
    let why = "`patches:` is not a block list; add the patch by hand".to_string();
    let refused = |rule: &str, kind: &str| {
        (
            rule.to_string(),
            kind.to_string(),
            "overlays/staging".to_string(),
            Some(why.clone()),
        )
    };
    assert_eq!(
        fixable(&report, false),
        vec![
            refused("MEM002", "RayService"),
            refused("QOS001", "JobSet"),
            refused("MEM002", "LeaderWorkerSet"),
            refused("QOS002", "LeaderWorkerSet"),
        ]
    );
    let (_, stdout, _) = repo.gpulint(&[]);
    assert!(stdout.contains("; 4 fixable;"), "{stdout}");

    // `--fix --diff`: each refusal once, with its render; the diff holds prod's four.
    let (_, diff, stderr) = repo.gpulint(&["--fix", "--diff"]);
    let not_fixed: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("not fixed:"))
        .collect();
    assert_eq!(not_fixed.len(), 4, "{stderr}");
    for l in &not_fixed {
        assert!(
            l.ends_with(&format!("{why} [render of overlays/staging]")),
            "{l}"
        );
    }
    // Two per memory fix, two for the CPU request and its new limit.
    assert_eq!(
        diff.matches("- op: replace").count() + diff.matches("- op: add").count(),
        8,
        "{diff}"
    );

    // After `--fix`, what is left is not fixable: the summary promises nothing.
    let (_, _, stderr) = repo.gpulint(&["--fix"]);
    assert!(stderr.contains("fixed 4 finding(s)"), "{stderr}");
    let summary = stderr.lines().last().unwrap();
    assert!(
        !summary.contains(" fixable;") && !summary.ends_with(" fixable"),
        "{summary}"
    );
}

/// Copies `fixture` into a temp git repository.
fn copy_of(fixture: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture), &dir);
    git(&dir, &["init", "-q", "-b", "main"]);
    (tmp, dir)
}

fn report_of(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, stdout, stderr) = run(dir, &all);
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn fixable_findings_are_exactly_those_fix_writes_on_every_fixture() {
    let key = |f: &Value| {
        let s = |v: &Value| v.as_str().unwrap_or("-").to_string();
        (
            s(&f["rule"]),
            s(&f["object"]["namespace"]),
            s(&f["object"]["name"]),
            s(&f["container"]),
            s(&f["render"]),
        )
    };
    let cases: [(&str, &[&str], bool); 4] = [
        (FIXTURE, &["--metrics", "metrics.json", "overlays"], false),
        (FIXTURE, &["--metrics", "metrics.json", "overlays"], true),
        (
            "testdata/kustomize-lint",
            &["--metrics", "metrics.json", "."],
            false,
        ),
        ("testdata/demo", &["--metrics", "metrics.json", "."], false),
    ];
    for (fixture, args, refusals) in cases {
        let (_tmp, dir) = copy_of(fixture);
        if refusals {
            add_refusals(&dir);
        }
        let before = report_of(&dir, args);
        // The values a fixable finding recommends are the ones its fix writes.
        let mut diff_args = args.to_vec();
        diff_args.extend(["--fix", "--diff"]);
        let (_, diff, _) = run(&dir, &diff_args);
        let added: Vec<&str> = diff.lines().filter(|l| l.starts_with('+')).collect();
        for f in before["findings"].as_array().unwrap() {
            let Some(rec) = f["recommended"]
                .as_object()
                .filter(|_| f["fixable"] == true)
            else {
                continue;
            };
            for (resource, value) in rec {
                let value = value.as_str().unwrap();
                assert!(
                    added
                        .iter()
                        .any(|l| l.contains(resource.as_str()) && l.contains(value))
                        || added.iter().any(|l| l.ends_with(&format!("value: {value}"))
                            || l.ends_with(&format!("value: \"{value}\""))),
                    "{fixture}: {resource} {value} recommended, not written: {f}\n{diff}"
                );
            }
        }
        let mut fix = args.to_vec();
        fix.push("--fix");
        let (code, _, stderr) = run(&dir, &fix);
        assert!(code == 0 || code == 1, "{fixture}: exit {code}: {stderr}");
        let after: std::collections::BTreeSet<_> = report_of(&dir, args)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(key)
            .collect();
        let mut planned = 0;
        for f in before["findings"].as_array().unwrap() {
            let has_fix = f["fixable"] == true || f.get("not_fixed").is_some();
            if !has_fix {
                continue;
            }
            planned += 1;
            let gone = !after.contains(&key(f));
            assert_eq!(
                f["fixable"] == true,
                gone,
                "{fixture}: fixable is not what --fix does: {f}\n{stderr}"
            );
        }
        assert!(planned > 0, "{fixture}");
    }
}

#[test]
fn mem003_on_a_limit_an_overlays_json6902_patch_sets_points_at_the_patch() {
    let repo = Repo::new();
    let pointer = "/spec/rayClusterConfig/workerGroupSpecs/0/template/spec/containers/0/resources";
    std::fs::write(
        repo.dir.join("overlays/prod/memory.yaml"),
        format!(
            "- op: replace\n  path: {pointer}/limits/memory\n  value: 8Gi\n- op: replace\n  path: {pointer}/requests/memory\n  value: 8Gi\n"
        ),
    )
    .unwrap();
    let kustomization = repo.dir.join("overlays/prod/kustomization.yaml");
    let text = std::fs::read_to_string(&kustomization).unwrap();
    std::fs::write(
        &kustomization,
        format!("{text}patches:\n- path: memory.yaml\n  target:\n    kind: RayService\n    name: ray-serve-llm\n"),
    )
    .unwrap();
    let metrics = std::fs::read_to_string(repo.dir.join("metrics.json")).unwrap();
    std::fs::write(
        repo.dir.join("metrics.json"),
        metrics.replacen(
            "\"container\": \"ray-worker\",",
            "\"container\": \"ray-worker\", \"oom_kills\": 2,",
            1,
        ),
    )
    .unwrap();
    let report = repo.json();
    let mem003: Vec<(String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "MEM003")
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(mem003, vec![("overlays/prod/memory.yaml".to_string(), 3)]);

    // The fix edits the same place; the base stays, the render has the new value.
    let base = std::fs::read_to_string(repo.dir.join("base/ray-service.llm-serve.yaml")).unwrap();
    let (code, _, stderr) = repo.gpulint(&["--fix"]);
    assert!(code == 0 || code == 1, "{stderr}");
    assert!(
        stderr.contains("fixed overlays/prod/memory.yaml:3: MEM003"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.dir.join("base/ray-service.llm-serve.yaml")).unwrap(),
        base
    );
    let rendered = repo.kubectl("overlays/prod");
    let ray = rendered.iter().find(|o| o["kind"] == "RayService").unwrap();
    let limit = ray.pointer(&format!("{pointer}/limits/memory")).unwrap();
    assert_ne!(limit, "8Gi");
    let after = repo.json();
    assert!(
        !after["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "MEM003"),
        "{after}"
    );
}

#[test]
fn gpu013_fixes_to_a_mig_profile_the_clusters_nodes_offer() {
    let (_tmp, dir) = copy_of("testdata/rules/GPU013");
    let path = dir.join("metrics.json");
    let mut snapshot: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // MIG nodes partitioned 3g.40gb only (the 1g.10gb the measurement fits is not offered),
    // and nodes of whole GPUs.
    snapshot["nodes"] = serde_json::json!([
        {"name": "h100-mig", "allocatable": {"cpu": "96", "memory": "900Gi", "pods": "110",
          "nvidia.com/mig-3g.40gb": "2"}},
        {"name": "h100", "allocatable": {"cpu": "96", "memory": "900Gi", "pods": "110",
          "nvidia.com/gpu": "8"}}
    ]);
    std::fs::write(&path, snapshot.to_string()).unwrap();
    let args = [
        "--metrics",
        "metrics.json",
        "--select",
        "GPU013,FIT001",
        ".",
    ];
    let (_, diff, stderr) = run(
        &dir,
        &[&args[..], &["--fix", "--unsafe-fixes", "--diff"]].concat(),
    );
    let added: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('+') && l.contains("nvidia.com/mig-"))
        .collect();
    assert!(!added.is_empty(), "{diff}\n{stderr}");
    assert!(
        added
            .iter()
            .all(|l| l.contains("mig-3g.40gb") || l.contains("mig-1g.10gb")),
        "{diff}"
    );
    let (code, _, stderr) = run(&dir, &[&args[..], &["--fix", "--unsafe-fixes"]].concat());
    assert!(code == 0 || code == 1, "{stderr}");
    let after = report_of(&dir, &args);
    let fit: Vec<&Value> = after["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FIT001")
        .collect();
    assert!(fit.is_empty(), "the fixed slice schedules: {fit:?}");
    let manifest = std::fs::read_to_string(dir.join("workloads.yaml")).unwrap();
    assert!(manifest.contains("nvidia.com/mig-3g.40gb: 1"), "{manifest}");
}

/// Issue 26: the right-sizing pull request (`--measured-only`) carries every fix whose value
/// comes from the measurement: QOS001 on a GPU container with no memory limit (the most common
/// case in public manifests), QOS002 and RES001 with measured values, not only the headroom rules;
/// and nothing that was not measured.
#[test]
fn measured_only_carries_every_measured_fix_and_nothing_else() {
    const GIB: f64 = 1073741824.0;
    let deployment = |name: &str, requests: &str, limits: &str, sidecar: bool| {
        let sidecar = if sidecar {
            "        - name: proxy\n          image: envoyproxy/envoy:v1.31.0\n          resources:\n            requests: {cpu: 250m}\n            limits: {cpu: 250m}\n"
        } else {
            ""
        };
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  template:\n    spec:\n      containers:\n        - name: main\n          image: vllm/vllm-openai:v0.10.0\n          resources:\n            requests: {requests}\n            limits: {limits}\n{sidecar}"
        )
    };
    let manifests = [
        deployment(
            "nolimit",
            r#"{cpu: "4", memory: 40Gi}"#,
            r#"{nvidia.com/gpu: 1, cpu: "4"}"#,
            false,
        ),
        deployment(
            "burst",
            r#"{cpu: "4", memory: 8Gi}"#,
            r#"{nvidia.com/gpu: 1, cpu: "4", memory: 16Gi}"#,
            false,
        ),
        deployment(
            "above",
            r#"{cpu: "4", memory: 20Gi}"#,
            r#"{nvidia.com/gpu: 1, cpu: "4", memory: 16Gi}"#,
            false,
        ),
        deployment(
            "cores",
            r#"{cpu: "2", memory: 8Gi}"#,
            r#"{nvidia.com/gpu: 1, cpu: "8", memory: 8Gi}"#,
            false,
        ),
        deployment(
            "sidecar",
            r#"{cpu: "4", memory: 8Gi}"#,
            r#"{nvidia.com/gpu: 1, cpu: "4", memory: 8Gi}"#,
            true,
        ),
        // Not in the snapshot: its QOS002 copies the limit, nothing measured.
        deployment(
            "unmeasured",
            r#"{cpu: "4", memory: 8Gi}"#,
            r#"{nvidia.com/gpu: 1, cpu: "4", memory: 16Gi}"#,
            false,
        ),
    ]
    .join("---\n");
    let usage = |name: &str, container: &str, p99: f64, cpu: f64| {
        serde_json::json!({"namespace": "ml", "kind": "Deployment", "name": name,
            "container": container, "samples": 20160, "history_seconds": 1209600,
            "memory_bytes": {"p50": p99 * 0.8, "p99": p99, "max": p99 * 1.02},
            "cpu_cores": {"p50": cpu * 0.8, "p99": cpu, "max": cpu * 1.1}, "oom_kills": 0})
    };
    let snapshot = serde_json::json!({"version": 1, "window": "14d", "containers": [
        usage("nolimit", "main", 40.0 * GIB, 3.5),
        usage("burst", "main", 10.0 * GIB, 3.5),
        usage("above", "main", 21.0 * GIB, 3.5),
        usage("cores", "main", 7.0 * GIB, 4.6),
        usage("sidecar", "main", 7.0 * GIB, 3.5),
        usage("sidecar", "proxy", 0.3 * GIB, 0.2),
    ]});
    let tmp = crate::support::common::temp_tree(&[
        ("apps/deploy.yaml", &manifests),
        ("metrics.json", &snapshot.to_string()),
    ]);
    let dir = tmp.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let args = ["--metrics", "metrics.json", "apps"];

    // Without --measured-only the unmeasured QOS002 is there, with no measured value.
    let all = report_of(dir, &args);
    let unmeasured: Vec<&Value> = all["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["object"]["name"] == "unmeasured" && f["rule"] == "QOS002")
        .collect();
    assert_eq!(unmeasured.len(), 1, "{unmeasured:?}");
    assert!(unmeasured[0]["recommended"].is_null());

    let mut measured_args = args.to_vec();
    measured_args.push("--measured-only");
    let report = report_of(dir, &measured_args);
    let found: Vec<(String, String, String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or("-").to_string();
            let rec = &f["recommended"];
            let value = format!("{}/{}", s(&rec["memory"]), s(&rec["cpu"]));
            (
                s(&f["rule"]),
                s(&f["object"]["name"]),
                s(&f["container"]),
                value,
            )
        })
        .collect();
    let rules: Vec<(&str, &str, &str)> = found
        .iter()
        .map(|(r, n, c, _)| (r.as_str(), n.as_str(), c.as_str()))
        .collect();
    // One finding for the GPU container's missing memory limit (QOS001, not QOS002 too); the
    // sidecar's missing limits take its measured sizes; nothing of `unmeasured`.
    for expected in [
        ("QOS001", "nolimit", "main"),
        ("QOS002", "burst", "main"),
        ("RES001", "above", "main"),
        ("MEM001", "above", "main"),
        ("QOS002", "cores", "main"),
        ("QOS002", "sidecar", "proxy"),
    ] {
        assert!(
            rules.contains(&expected),
            "{expected:?} missing from {found:?}"
        );
    }
    // Of `unmeasured` only MET001 says it was not measured.
    assert!(
        rules.contains(&("MET001", "unmeasured", "main"))
            && !rules
                .iter()
                .any(|(r, n, _)| *n == "unmeasured" && *r != "MET001"),
        "{found:?}"
    );
    assert!(
        !rules.contains(&("QOS002", "nolimit", "main")),
        "QOS001 already sets it: {found:?}"
    );
    // Every finding says its measured value, and every one is fixable.
    for f in report["findings"].as_array().unwrap() {
        assert!(!f["recommended"].is_null() || f["rule"] == "MET001", "{f}");
        assert_eq!(f["fixable"], f["rule"] != "MET001", "{f}");
    }
    // The GPU container's CPU is in whole cores (P99 4.6 cores).
    let cores = found
        .iter()
        .find(|(r, n, _, _)| r == "QOS002" && n == "cores")
        .map(|(_, _, _, v)| v.clone())
        .unwrap();
    let cpu = cores.split('/').nth(1).unwrap().to_string();
    assert!(cpu.parse::<u32>().is_ok(), "whole cores, got {cpu}");

    // The diff writes the very values the findings recommend.
    let mut diff_args = measured_args.clone();
    diff_args.extend(["--fix", "--diff"]);
    let (code, diff, stderr) = run(dir, &diff_args);
    assert!(code == 0 || code == 1, "{stderr}");
    for (_, name, _, value) in &found {
        for v in value.split('/').filter(|v| *v != "-") {
            assert!(
                diff.lines().any(|l| l.starts_with('+') && l.contains(v)),
                "{name}: {v} not written:\n{diff}"
            );
        }
    }
    // After the fix, nothing measured is left to change.
    let mut fix_args = measured_args.clone();
    fix_args.push("--fix");
    let (code, _, stderr) = run(dir, &fix_args);
    assert!(code == 0 || code == 1, "{stderr}");
    let after = report_of(dir, &measured_args);
    let left: Vec<&Value> = after["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] != "MET001")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // The unmeasured workload was left as it was.
    let text = std::fs::read_to_string(dir.join("apps/deploy.yaml")).unwrap();
    assert!(text.contains(
        "requests: {cpu: \"4\", memory: 8Gi}\n            limits: {nvidia.com/gpu: 1, cpu: \"4\", memory: 16Gi}\n"
    ));

    // Without measurements, --measured-only is a usage error.
    let (code, _, stderr) = run(dir, &["--measured-only", "apps"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--measured-only needs measurements"),
        "{stderr}"
    );
}

/// RES001 (the limit raised to the measured 25Gi) and MEM001 (requests = limits = 25Gi) on one
/// container: MEM001's fix makes RES001's edit too, so both land in the same round and both are
/// fixable, in a plain file and through a Kustomize overlay; a second run has neither.
#[test]
fn a_fix_another_fix_makes_is_fixable_and_lands_with_it() {
    const GIB: f64 = 1073741824.0;
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: above, namespace: ml}\nspec:\n  template:\n    spec:\n      containers:\n        - name: main\n          image: vllm/vllm-openai:v0.10.0\n          resources:\n            requests: {cpu: \"4\", memory: 20Gi}\n            limits: {nvidia.com/gpu: 1, cpu: \"4\", memory: 16Gi}\n";
    let snapshot = serde_json::json!({"version": 1, "window": "14d", "containers": [
        {"namespace": "ml", "kind": "Deployment", "name": "above", "container": "main",
         "samples": 20160, "history_seconds": 1209600,
         "memory_bytes": {"p50": 18.0 * GIB, "p99": 21.0 * GIB, "max": 22.0 * GIB},
         "cpu_cores": {"p50": 3.0, "p99": 3.5, "max": 3.9}, "oom_kills": 0}]});
    let layouts: [&[(&str, &str)]; 2] = [
        &[("apps/deploy.yaml", deployment)],
        &[
            ("apps/base/deploy.yaml", deployment),
            ("apps/base/kustomization.yaml", "resources: [deploy.yaml]\n"),
            ("apps/prod/kustomization.yaml", "resources: [../base]\n"),
        ],
    ];
    for files in layouts {
        let tmp = crate::support::common::temp_tree(files);
        let dir = tmp.path();
        std::fs::write(dir.join("metrics.json"), snapshot.to_string()).unwrap();
        git(dir, &["init", "-q", "-b", "main"]);
        let args = [
            "--metrics",
            "metrics.json",
            "--select",
            "RES001,MEM001",
            "apps",
        ];
        let report = report_of(dir, &args);
        let fixable: Vec<(String, bool)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap_or("-").to_string(),
                    f["fixable"] == true,
                )
            })
            .collect();
        assert_eq!(
            fixable,
            [("RES001".to_string(), true), ("MEM001".to_string(), true)],
            "{files:?}"
        );
        let mut fix = args.to_vec();
        fix.push("--fix");
        let (code, _, stderr) = run(dir, &fix);
        assert!(code == 0 || code == 1, "{stderr}");
        assert!(stderr.contains("fixed 2 finding(s)"), "{files:?}: {stderr}");
        let after = report_of(dir, &args);
        assert_eq!(after["findings"].as_array().unwrap().len(), 0, "{after}");
    }
}
