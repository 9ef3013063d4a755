//! Conformance of the built-in Kustomize renderer against upstream kustomize's own test data
//! (testdata/kustomize-conformance, see its README): every case renders to the expected objects,
//! in order; every error case fails with the expected kind of error.

use std::path::{Path, PathBuf};

use gpulint::source::document::plain;
use gpulint::source::kustomize::{
    render, FsSources, LoadRestrictor, Options, RenderErrorKind, Reorder,
};
use gpulint::source::yaml::Stream;

/// Cases the built-in renderer does not pass yet, with the reason. The test checks they still
/// fail, so the list stays honest.
const KNOWN_FAILURES: &[(&str, &str)] = &[(
    "namespace-not-added-to-validating-admission-policies",
    "its kustomization writes `apiVersion` and `kind` twice; kustomize accepts that, gpulint \
     refuses duplicate mapping keys as the API server's strict decoding does (issue 10)",
)];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize-conformance")
}

struct Case {
    dir: PathBuf,
    name: String,
    run_dir: PathBuf,
    options: Options,
    expect_error: Option<String>,
    category: Option<String>,
}

fn cases(sub: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root().join(sub))
        .expect("conformance data")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("case.yaml")).expect("case.yaml");
        let s = Stream::parse(&text);
        let c = &s.documents[0].root;
        let get = |k: &str| c.get_str(k).map(str::to_string);
        let run_dir = dir
            .join("input")
            .join(get("run_dir").unwrap_or_else(|| ".".into()));
        let options = Options {
            load_restrictor: match get("load_restrictor").as_deref() {
                Some("none") => LoadRestrictor::None,
                _ => LoadRestrictor::RootOnly,
            },
            reorder: match get("reorder").as_deref() {
                Some("legacy") => Reorder::Legacy,
                _ => Reorder::None,
            },
            boundary: Some(dir.join("input")),
            ..Options::default()
        };
        out.push(Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            dir,
            run_dir,
            options,
            expect_error: get("expect_error"),
            category: get("error_category"),
        });
    }
    out
}

fn docs(text: &str) -> Vec<serde_json::Value> {
    let s = Stream::parse(text);
    assert!(s.error.is_none(), "expected.yaml parses: {:?}", s.error);
    s.documents.iter().map(|d| plain(&d.root)).collect()
}

fn check_case(c: &Case) -> Result<(), String> {
    let sources = FsSources::new();
    let rendered = render(&c.run_dir, &sources, &c.options).map_err(|e| format!("{e}"))?;
    let got: Vec<_> = rendered.objects.iter().map(plain).collect();
    let expected = docs(&std::fs::read_to_string(c.dir.join("expected.yaml")).unwrap());
    if got != expected {
        let show = |v: &[serde_json::Value]| {
            v.iter()
                .map(|x| serde_json::to_string(x).unwrap())
                .collect::<Vec<_>>()
                .join("\n")
        };
        return Err(format!(
            "output differs\n--- expected\n{}\n--- got\n{}",
            show(&expected),
            show(&got)
        ));
    }
    // Our own YAML output re-parses to the same data.
    let again = docs(&gpulint::source::kustomize::to_yaml(&rendered.objects));
    if again != got {
        return Err("to_yaml does not round-trip".to_string());
    }
    Ok(())
}

#[test]
fn conformance_cases_render_as_upstream() {
    let mut failures = Vec::new();
    let all = cases("cases");
    assert_eq!(all.len(), 85);
    for c in &all {
        let known = KNOWN_FAILURES.iter().find(|(n, _)| *n == c.name);
        match (check_case(c), known) {
            (Ok(()), None) => {}
            (Ok(()), Some(_)) => failures.push(format!(
                "{}: passes now, remove it from KNOWN_FAILURES",
                c.name
            )),
            (Err(e), None) => failures.push(format!("{}: {e}", c.name)),
            (Err(_), Some(_)) => {}
        }
    }
    println!(
        "{} cases, {} known failures",
        all.len(),
        KNOWN_FAILURES.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn kind_of(category: &str) -> RenderErrorKind {
    match category {
        "missing-kustomization-file" => RenderErrorKind::MissingKustomization,
        "cycle" => RenderErrorKind::Cycle,
        "patch-target-not-found" => RenderErrorKind::PatchTargetNotFound,
        "patch-target-ambiguous" => RenderErrorKind::PatchTargetAmbiguous,
        "load-restrictor" => RenderErrorKind::LoadRestrictor,
        "missing-resource" => RenderErrorKind::MissingResource,
        "duplicate-id" => RenderErrorKind::DuplicateId,
        other => panic!("unknown error category {other}"),
    }
}

#[test]
fn conformance_error_cases_fail_as_upstream() {
    let all = cases("error-cases");
    assert_eq!(all.len(), 12);
    let mut failures = Vec::new();
    for c in &all {
        let sources = FsSources::new();
        let category = c.category.clone().unwrap_or_default();
        match render(&c.run_dir, &sources, &c.options) {
            Ok(_) => failures.push(format!("{}: rendered, expected {category}", c.name)),
            Err(e) => {
                println!("{}: {:?}: {}", c.name, e.kind, e.message);
                if e.kind != kind_of(&category) {
                    failures.push(format!(
                        "{}: {:?}, expected {category}: {}",
                        c.name, e.kind, e.message
                    ));
                }
                // Our messages copy kustomize's wording; upstream's paths are rooted at input/.
                let input = c.dir.join("input");
                let msg = e.message.replace(&*input.to_string_lossy(), "");
                if let Some(want) = &c.expect_error {
                    if !msg.contains(want.as_str()) {
                        failures.push(format!("{}: message {msg:?} lacks {want:?}", c.name));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
