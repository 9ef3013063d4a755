//! libFuzzer target: the built-in Kustomize renderer on a small in-memory tree.
//!
//! The fuzzer's bytes are split at NUL bytes into up to eight files with fixed names (a root
//! kustomization, a base with its own kustomization, a component, resources and patches), served
//! by an in-memory [`Sources`]; then `kustomize::render` and `to_yaml`. Any panic is a crash; so
//! is a rendered node whose span is outside the file it says it came from, or a render past the
//! object cap (the cap must stop it first).

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gpulint::source::kustomize::{self, Options, Sources};
use gpulint::source::yaml::{Node, SourceId, Stream, Value};
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 8] = [
    "/r/kustomization.yaml",
    "/r/base/kustomization.yaml",
    "/r/base/deploy.yaml",
    "/r/patch.yaml",
    "/r/comp/kustomization.yaml",
    "/r/res.yaml",
    "/r/base/more/kustomization.yaml",
    "/r/comp/patch.yaml",
];

struct Memory {
    files: Vec<(PathBuf, String)>,
    loaded: Mutex<Vec<(PathBuf, Arc<Stream>)>>,
}

impl Sources for Memory {
    fn load(&self, path: &Path) -> std::io::Result<Arc<Stream>> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, s)) = loaded.iter().find(|(p, _)| p == path) {
            return Ok(s.clone());
        }
        let Some((_, text)) = self.files.iter().find(|(p, _)| p == path) else {
            return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
        };
        let mut stream = Stream::parse(text);
        stream.set_source(SourceId::file(loaded.len()));
        let stream = Arc::new(stream);
        loaded.push((path.to_path_buf(), stream.clone()));
        Ok(stream)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.files
            .iter()
            .any(|(p, _)| p.starts_with(path) && p != path)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.iter().any(|(p, _)| p == path)
    }
}

fn check_spans(node: &Node, loaded: &[(PathBuf, Arc<Stream>)]) {
    if let Some(i) = node.span.source.index() {
        if let Some((path, stream)) = loaded.get(i) {
            let (start, end) = (node.span.start as usize, node.span.end as usize);
            assert!(
                start <= end && end <= stream.text.len(),
                "span {start}..{end} outside {} ({} bytes)",
                path.display(),
                stream.text.len()
            );
        }
    }
    match &node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter().for_each(|n| check_spans(n, loaded)),
        Value::Map(entries) => entries.iter().for_each(|e| {
            check_spans(&e.key, loaded);
            check_spans(&e.value, loaded);
        }),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let files = NAMES
        .iter()
        .zip(text.split('\0'))
        .map(|(name, t)| (PathBuf::from(name), t.to_string()))
        .collect();
    let sources = Memory {
        files,
        loaded: Mutex::new(Vec::new()),
    };
    let options = Options {
        boundary: Some(PathBuf::from("/r")),
        ..Options::default()
    };
    if let Ok(rendered) = kustomize::render(Path::new("/r"), &sources, &options) {
        assert!(
            rendered.objects.len() <= kustomize::MAX_RENDERED_OBJECTS,
            "{} objects rendered past the cap",
            rendered.objects.len()
        );
        let loaded = sources.loaded.lock().unwrap_or_else(|p| p.into_inner());
        rendered
            .objects
            .iter()
            .for_each(|o| check_spans(o, &loaded));
        let _ = kustomize::to_yaml(&rendered.objects);
    }
});
