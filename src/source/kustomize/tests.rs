use super::*;
use crate::source::document::plain;
use crate::source::yaml::Value;

/// Writes `files` (path, text) under a fresh temporary directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    dir
}

fn opts() -> Options {
    Options {
        reorder: Reorder::None,
        ..Options::default()
    }
}

/// The file and the bytes a node's span points at.
fn origin(sources: &FsSources, node: &Node) -> (PathBuf, String) {
    let files = sources.files();
    let (path, stream) = &files[node.span.source.index().expect("a file span")];
    let text = stream
        .text
        .get(node.span.start()..node.span.end())
        .unwrap_or("<out of range>");
    (path.clone(), text.to_string())
}

fn ends(path: &Path, suffix: &str) -> bool {
    path.ends_with(suffix)
}

const BASE_DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  selector:
    matchLabels:
      app: trainer
  template:
    metadata:
      labels:
        app: trainer
    spec:
      containers:
      - name: main
        image: nginx:1.0
        resources:
          limits:
            memory: 1Gi
            nvidia.com/gpu: 1
";

fn container(obj: &Node) -> &Node {
    &obj.get_path(&["spec", "template", "spec", "containers"])
        .and_then(Node::as_seq)
        .expect("containers")[0]
}

#[test]
fn origins_point_at_the_file_that_wrote_each_value() {
    let dir = tree(&[
        ("base/kustomization.yaml", "resources:\n- deployment.yaml\n"),
        ("base/deployment.yaml", BASE_DEPLOYMENT),
        (
            "overlay/kustomization.yaml",
            "resources:\n- ../base\nnamespace: ml\ncommonLabels:\n  team: research\npatches:\n- path: patch.yaml\nimages:\n- name: nginx\n  newTag: \"1.2\"\n",
        ),
        (
            "overlay/patch.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        resources:\n          limits:\n            memory: 2Gi\n",
        ),
    ]);
    let sources = FsSources::new();
    let r = render(&dir.path().join("overlay"), &sources, &opts()).expect("renders");
    assert_eq!(r.objects.len(), 1);
    let obj = &r.objects[0];
    let c = container(obj);

    let memory = c
        .get_path(&["resources", "limits", "memory"])
        .expect("memory");
    let (file, text) = origin(&sources, memory);
    assert!(ends(&file, "overlay/patch.yaml"), "{file:?}");
    assert_eq!(text, "2Gi");

    let gpu = c
        .get_path(&["resources", "limits", "nvidia.com/gpu"])
        .expect("gpu");
    let (file, text) = origin(&sources, gpu);
    assert!(ends(&file, "base/deployment.yaml"), "{file:?}");
    assert_eq!(text, "1");

    let name = c.get("name").expect("name");
    assert!(ends(&origin(&sources, name).0, "base/deployment.yaml"));

    // The image was rewritten by `images:`: it points at the newTag value.
    let image = c.get("image").expect("image");
    assert_eq!(image.text(), Some("nginx:1.2"));
    let (file, text) = origin(&sources, image);
    assert!(ends(&file, "overlay/kustomization.yaml"), "{file:?}");
    assert_eq!(text, "\"1.2\"");

    let label = obj
        .get_path(&["metadata", "labels", "team"])
        .expect("label");
    let (file, text) = origin(&sources, label);
    assert!(ends(&file, "overlay/kustomization.yaml"));
    assert_eq!(text, "research");
    let selector = obj
        .get_path(&["spec", "selector", "matchLabels", "team"])
        .expect("selector label");
    assert_eq!(origin(&sources, selector).1, "research");

    let ns = obj.get_path(&["metadata", "namespace"]).expect("namespace");
    let (file, text) = origin(&sources, ns);
    assert!(ends(&file, "overlay/kustomization.yaml"));
    assert_eq!(text, "ml");

    // Files and kustomizations, each once, in read order.
    assert_eq!(r.kustomizations.len(), 2);
    assert!(ends(&r.kustomizations[0], "overlay/kustomization.yaml"));
    assert_eq!(r.files.len(), 4);
}

#[test]
fn json6902_values_point_at_the_patch() {
    let dir = tree(&[
        (
            "kustomization.yaml",
            "resources:\n- deployment.yaml\npatches:\n- path: json.yaml\n  target:\n    kind: Deployment\n    name: train.*\n",
        ),
        ("deployment.yaml", BASE_DEPLOYMENT),
        (
            "json.yaml",
            "- op: replace\n  path: /spec/template/spec/containers/0/resources/limits/memory\n  value: 3Gi\n- op: add\n  path: /spec/replicas\n  value: 4\n",
        ),
    ]);
    let sources = FsSources::new();
    let r = render(dir.path(), &sources, &opts()).expect("renders");
    let obj = &r.objects[0];
    let memory = container(obj)
        .get_path(&["resources", "limits", "memory"])
        .unwrap();
    let (file, text) = origin(&sources, memory);
    assert!(ends(&file, "json.yaml"));
    assert_eq!(text, "3Gi");
    let replicas = obj.get_path(&["spec", "replicas"]).unwrap();
    assert_eq!(origin(&sources, replicas).1, "4");
}

#[test]
fn inline_literal_patches_map_into_the_kustomization_bytes() {
    let kustomization = "resources:\n- deployment.yaml\npatches:\n- target:\n    kind: Deployment\n  patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: trainer\n    spec:\n      template:\n        spec:\n          containers:\n          - name: main\n            resources:\n              limits:\n                memory: 5Gi\n- patch: |\n    - op: add\n      path: /spec/replicas\n      value: 7\n  target:\n    kind: Deployment\n- patch: \"[{op: add, path: /spec/paused, value: true}]\"\n  target:\n    kind: Deployment\n";
    let dir = tree(&[
        ("kustomization.yaml", kustomization),
        ("deployment.yaml", BASE_DEPLOYMENT),
    ]);
    let sources = FsSources::new();
    let r = render(dir.path(), &sources, &opts()).expect("renders");
    let obj = &r.objects[0];
    let memory = container(obj)
        .get_path(&["resources", "limits", "memory"])
        .unwrap();
    let (file, text) = origin(&sources, memory);
    assert!(ends(&file, "kustomization.yaml"));
    assert_eq!(text, "5Gi");
    // An in-place replacement there is a valid edit of the kustomization.
    let mut edited = kustomization.to_string();
    edited.replace_range(memory.span.start()..memory.span.end(), "6Gi");
    let overrides = HashMap::from([(dir.path().join("kustomization.yaml"), edited)]);
    let again = render(dir.path(), &FsSources::with_overrides(overrides), &opts()).unwrap();
    let m2 = container(&again.objects[0])
        .get_path(&["resources", "limits", "memory"])
        .unwrap();
    assert_eq!(m2.text(), Some("6Gi"));

    let replicas = obj.get_path(&["spec", "replicas"]).unwrap();
    assert_eq!(origin(&sources, replicas).1, "7");
    // A quoted (not literal) inline patch: everything points at the string.
    let paused = obj.get_path(&["spec", "paused"]).unwrap();
    assert_eq!(
        origin(&sources, paused).1,
        "\"[{op: add, path: /spec/paused, value: true}]\""
    );
}

#[test]
fn crd_lists_are_replaced_like_kustomize_does() {
    let job = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: train\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n          - name: pytorch\n            image: pt:1\n            resources:\n              limits:\n                nvidia.com/gpu: 1\n";
    let patch = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: train\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      template:\n        spec:\n          containers:\n          - name: pytorch\n            resources:\n              limits:\n                nvidia.com/gpu: 4\n";
    let dir = tree(&[
        (
            "kustomization.yaml",
            "resources:\n- job.yaml\npatches:\n- path: patch.yaml\n",
        ),
        ("job.yaml", job),
        ("patch.yaml", patch),
    ]);
    let r = render(dir.path(), &FsSources::new(), &opts()).unwrap();
    let worker = r.objects[0]
        .get_path(&["spec", "pytorchReplicaSpecs", "Worker"])
        .unwrap();
    assert_eq!(worker.get_str("replicas"), Some("2"));
    let c = &worker
        .get_path(&["template", "spec", "containers"])
        .and_then(Node::as_seq)
        .unwrap()[0];
    assert!(c.get("image").is_none(), "kustomize drops the image");
}

#[test]
fn load_restrictor_and_boundary() {
    let dir = tree(&[
        ("shared/patch.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n  replicas: 3\n"),
        ("app/deployment.yaml", BASE_DEPLOYMENT),
        (
            "app/kustomization.yaml",
            "resources:\n- deployment.yaml\npatchesStrategicMerge:\n- ../shared/patch.yaml\n",
        ),
    ]);
    let app = dir.path().join("app");
    let e = render(&app, &FsSources::new(), &opts()).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::LoadRestrictor);
    assert!(e.message.starts_with("security; file '"), "{}", e.message);
    assert!(e.span.is_some());
    let none = Options {
        load_restrictor: LoadRestrictor::None,
        ..opts()
    };
    let r = render(&app, &FsSources::new(), &none).unwrap();
    assert_eq!(
        r.objects[0]
            .get_path(&["spec", "replicas"])
            .and_then(Node::text),
        Some("3")
    );
    let bounded = Options {
        boundary: Some(app.clone()),
        ..none
    };
    let e = render(&app, &FsSources::new(), &bounded).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::LoadRestrictor);
}

#[test]
fn unsupported_features_are_named() {
    let dir = tree(&[
        (
            "kustomization.yaml",
            "resources:\n- https://github.com/x/y\nconfigMapGenerator:\n- name: a\n  literals: [a=b]\nhelmCharts:\n- name: x\n",
        ),
    ]);
    let found = unsupported_features(dir.path(), &FsSources::new());
    let names: Vec<_> = found.iter().map(|u| u.feature.as_str()).collect();
    assert!(names.contains(&"configMapGenerator"), "{names:?}");
    assert!(names.contains(&"helmCharts"));
    assert!(names.iter().any(|n| n.starts_with("resources: remote")));
    // A remote resource is never fetched, whatever else the kustomization holds.
    let e = render(dir.path(), &FsSources::new(), &opts()).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::Remote);
    assert!(
        e.message.starts_with("remote resource not rendered"),
        "{}",
        e.message
    );
    let dir = tree(&[(
        "kustomization.yaml",
        "configMapGenerator:\n- name: a\n  literals: [a=b]\n",
    )]);
    let e = render(dir.path(), &FsSources::new(), &opts()).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::Unsupported);
}

#[test]
fn remote_resources_are_recognized_in_every_spelling() {
    for url in [
        "https://example.com/x.yaml",
        "http://127.0.0.1:1/x.yaml",
        "ssh://git@github.com/org/repo//path?ref=v1",
        "git@github.com:org/repo.git",
        "github.com/org/repo/path?ref=v1",
        "example.com/org/repo//path?ref=main",
        "git::https://example.com/repo",
    ] {
        let dir = tree(&[("kustomization.yaml", &format!("resources:\n- {url}\n"))]);
        let e = render(dir.path(), &FsSources::new(), &opts()).unwrap_err();
        assert_eq!(e.kind, RenderErrorKind::Remote, "{url}: {e}");
    }
}

#[test]
fn malformed_kustomizations_are_errors_not_panics() {
    let bodies = [
        "resources: 3\n",
        "resources: {a: b}\n",
        "resources:\n- [a]\n",
        "patches: [{}]\n",
        "patches: [3]\n",
        "patches:\n- patch: 3\n",
        "patches:\n- patch: \"just a string\"\n  target: {kind: Deployment}\n",
        "patches:\n- patch: \"- op: replace\\n  path: nope\\n  value: 1\"\n  target: {kind: Deployment}\n",
        "patches:\n- patch: \"- op: remove\\n  path: /spec/nope/0\"\n  target: {kind: Deployment}\n",
        "patches:\n- patch: \"- op: add\\n  path: /spec/template/spec/containers/99\\n  value: 1\"\n  target: {kind: Deployment}\n",
        "patches:\n- patch: \"- op: move\\n  path: /a\"\n  target: {kind: Deployment}\n",
        "patches:\n- patch: \"- 1\\n- 2\"\n  target: {kind: Deployment}\n",
        "patches:\n- patch: \"[\"\n",
        "patches:\n- path: missing.yaml\n",
        "patches:\n- path: deployment.yaml\n  target: 3\n",
        "patches:\n- path: deployment.yaml\n  target: {name: \"(\"}\n",
        "patchesStrategicMerge: [3]\n",
        "patchesStrategicMerge:\n- \"kind: X\\n\"\n",
        "patchesJson6902:\n- path: x.yaml\n",
        "commonLabels: [a]\n",
        "commonLabels: {a: {b: c}}\n",
        "labels: 3\n",
        "labels:\n- pairs: 3\n",
        "labels:\n- includeSelectors: maybe\n",
        "images: [3]\n",
        "images:\n- newTag: x\n",
        "replicas:\n- name: a\n  count: many\n",
        "namespace: [a]\n",
        "namePrefix: {a: b}\n",
        "components: [3]\n",
        "components:\n- missing\n",
        "bases: 3\n",
        "unknownField: 1\n",
        "- a list\n",
        "a: [\n",
        "resources:\n- deployment.yaml\n---\nresources: []\n",
        "resources:\n- .\n",
        "resources:\n- ..\n",
    ];
    for body in bodies {
        let dir = tree(&[
            ("kustomization.yaml", body),
            ("deployment.yaml", BASE_DEPLOYMENT),
        ]);
        let result = std::panic::catch_unwind(|| render(dir.path(), &FsSources::new(), &opts()));
        match result {
            Ok(Ok(r)) => {
                // Some are valid (a scalar SMP body does not parse as a mapping patch, ...).
                let _ = to_yaml(&r.objects);
            }
            Ok(Err(e)) => assert!(!e.message.is_empty(), "{body}"),
            Err(_) => panic!("panicked on {body:?}"),
        }
    }
    // Scalar and malformed resource files.
    for resource in [
        "3\n",
        "- a\n",
        "kind: [\n",
        "apiVersion: v1\n",
        "kind: List\nitems: [3]\n",
    ] {
        let dir = tree(&[
            ("kustomization.yaml", "resources:\n- r.yaml\n"),
            ("r.yaml", resource),
        ]);
        let result = render(dir.path(), &FsSources::new(), &opts());
        assert!(result.is_err(), "{resource:?} should be refused");
    }
}

#[test]
fn to_yaml_round_trips_and_quotes() {
    let text = "a: \"true\"\nb: \"1\"\nc: \"\"\nd: \"- x\"\ne: \"a: b\"\nf: \"x #y\"\ng: \"null\"\nh: \"line1\\nline2\"\ni: 5\nj: true\nk: null\nl: []\nm: {}\nn:\n- - x\n  - y\n- {p: 1, q: [1, {r: s}]}\no: \"@at\"\np: \"0x1F\"\nq: \"~\"\nr: \" lead\"\ns: \"1.5\"\nt: \"*x\"\nu: \"!tag\"\nv: \"{x}\"\nw: \"%p\"\nx: \"é ü\"\n";
    let s = Stream::parse(text);
    assert!(s.error.is_none());
    let objects: Vec<Node> = s.documents.iter().map(|d| d.root.clone()).collect();
    let out = to_yaml(&objects);
    let again = Stream::parse(&out);
    assert!(again.error.is_none(), "{out}");
    assert_eq!(plain(&again.documents[0].root), plain(&objects[0]), "{out}");
    // Kinds survive too (a quoted "true" stays a string).
    let kinds = |n: &Node| -> Vec<String> {
        n.as_map()
            .unwrap()
            .iter()
            .map(|e| match &e.value.value {
                Value::Scalar(s) => format!("{:?}", s.kind),
                _ => "coll".into(),
            })
            .collect()
    };
    assert_eq!(kinds(&again.documents[0].root), kinds(&objects[0]), "{out}");
    let two = to_yaml(&[objects[0].clone(), objects[0].clone()]);
    assert_eq!(Stream::parse(&two).documents.len(), 2);
}

#[test]
fn normalize_removes_dots() {
    assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    assert_eq!(normalize(Path::new("/../x")), PathBuf::from("/x"));
}

#[test]
fn replacements_copy_the_source_node() {
    let dir = tree(&[
        (
            "kustomization.yaml",
            "resources:\n- deployment.yaml\n- svc.yaml\nreplacements:\n- source:\n    kind: Deployment\n    fieldPath: spec.template.spec.containers.[name=main].image\n  targets:\n  - select:\n      kind: Service\n    fieldPaths:\n    - metadata.annotations.image\n    options:\n      create: true\n  - select:\n      kind: Service\n    fieldPaths:\n    - spec.selector.app\n    options:\n      delimiter: '-'\n      index: 1\n",
        ),
        ("deployment.yaml", BASE_DEPLOYMENT),
        ("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector:\n    app: a-b-c\n"),
    ]);
    let sources = FsSources::new();
    let r = render(dir.path(), &sources, &opts()).expect("renders");
    let svc = &r.objects[1];
    let image = svc.get_path(&["metadata", "annotations", "image"]).unwrap();
    let (file, text) = origin(&sources, image);
    assert!(ends(&file, "deployment.yaml"));
    assert_eq!(text, "nginx:1.0");
    assert_eq!(
        svc.get_path(&["spec", "selector", "app"])
            .and_then(Node::text),
        Some("a-nginx:1.0-c")
    );
    // A replacement whose source is missing is an error, not a panic.
    let bad = tree(&[
        ("kustomization.yaml", "resources:\n- deployment.yaml\nreplacements:\n- source:\n    kind: Nope\n  targets: []\n- 3\n"),
        ("deployment.yaml", BASE_DEPLOYMENT),
    ]);
    assert!(render(bad.path(), &FsSources::new(), &opts()).is_err());
}

#[test]
fn errors_point_at_the_offending_entry() {
    let k = "resources:\n- deployment.yaml\n- missing.yaml\n";
    let dir = tree(&[
        ("kustomization.yaml", k),
        ("deployment.yaml", BASE_DEPLOYMENT),
    ]);
    let sources = FsSources::new();
    let e = render(dir.path(), &sources, &opts()).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::MissingResource);
    assert!(e.file.ends_with("kustomization.yaml"));
    let span = e.span.expect("span");
    assert_eq!(&k[span.range()], "missing.yaml");
    assert!(
        e.message.contains("accumulating resources"),
        "{}",
        e.message
    );

    let empty = tempfile::tempdir().unwrap();
    let e = render(empty.path(), &FsSources::new(), &opts()).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::MissingKustomization);

    // A base that includes its overlay is a cycle.
    let cyc = tree(&[
        ("a/kustomization.yaml", "resources:\n- ../b\n"),
        ("b/kustomization.yaml", "resources:\n- ../a\n"),
    ]);
    let e = render(&cyc.path().join("a"), &FsSources::new(), &opts()).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::Cycle, "{}", e.message);
}

/// Counts the kustomization files a render asks for.
struct Counting {
    inner: FsSources,
    loads: std::sync::Mutex<std::collections::HashMap<PathBuf, usize>>,
}

impl Sources for Counting {
    fn load(&self, path: &Path) -> std::io::Result<std::sync::Arc<Stream>> {
        if let Ok(mut loads) = self.loads.lock() {
            *loads.entry(path.to_path_buf()).or_default() += 1;
        }
        self.inner.load(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }
    fn is_file(&self, path: &Path) -> bool {
        self.inner.is_file(path)
    }
}

#[test]
fn a_diamond_builds_each_base_once() {
    // Ten levels, each including the next twice (under two prefixes): 1,024 objects.
    let mut files = vec![
        (
            "l10/kustomization.yaml".to_string(),
            "resources:\n- cm.yaml\n".to_string(),
        ),
        (
            "l10/cm.yaml".to_string(),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n".to_string(),
        ),
    ];
    for i in 0..10 {
        files.push((
            format!("l{i}/kustomization.yaml"),
            "resources:\n- a\n- b\n".into(),
        ));
        for side in ["a", "b"] {
            files.push((
                format!("l{i}/{side}/kustomization.yaml"),
                format!("namePrefix: {side}-\nresources:\n- ../../l{}\n", i + 1),
            ));
        }
    }
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = tree(&borrowed);
    let sources = Counting {
        inner: FsSources::new(),
        loads: std::sync::Mutex::default(),
    };
    let rendered = render(&dir.path().join("l0"), &sources, &opts()).expect("renders");
    assert_eq!(rendered.objects.len(), 1024);
    let loads = sources.loads.lock().map(|l| l.clone()).unwrap_or_default();
    let kustomizations: Vec<(&PathBuf, &usize)> = loads
        .iter()
        .filter(|(p, _)| p.ends_with("kustomization.yaml"))
        .collect();
    assert_eq!(kustomizations.len(), 31, "{loads:?}");
    // Once to count its users, once to build it: never again, whatever the paths to it.
    assert!(
        kustomizations.iter().all(|(_, n)| **n == 2),
        "{kustomizations:?}"
    );
}

#[test]
fn a_folder_flux_generates_a_kustomization_for_refuses_one_id_twice() {
    // Flux lists the folder's manifests in a generated kustomization, and kustomize refuses the
    // second object of one id: the error names the file and points at the object.
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
    let t = tree(&[("apps/a.yaml", cm), ("apps/sub/b.yaml", cm)]);
    let dir = t.path().join("apps");
    let manifests = [dir.join("a.yaml"), dir.join("sub/b.yaml")];
    let sources = FsSources::new();
    let e = render_generated(&dir, &manifests, &sources).unwrap_err();
    assert_eq!(e.kind, RenderErrorKind::DuplicateId);
    assert_eq!(e.file, dir.join("sub/b.yaml"));
    assert_eq!(e.span.map(|s| s.start), Some(0), "the refused object");
    assert_eq!(
        e.message,
        "accumulating resources: accumulation err='merging resources from 'sub/b.yaml': may not \
         add resource with an already registered id: ConfigMap.v1.[noGrp]/x.[noNs]'"
    );
    // Another namespace is another id.
    let other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: prod\n";
    std::fs::write(dir.join("sub/b.yaml"), other).unwrap();
    let sources = FsSources::new();
    let rendered = render_generated(&dir, &manifests, &sources).unwrap();
    assert_eq!(rendered.objects.len(), 2);
}
