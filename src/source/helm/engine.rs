//! Running Helm: `helm template` through a found binary (never a shell, with a timeout), the
//! parsed render, and mapping rendered documents and fields back to their template's `# Source:`
//! and line.

use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;

use super::releases::{invalid_name, is_namespace, is_release_name};
use super::{
    apply_parameters, typed, user_values, HelmError, Release, ValuesSource, DEFAULT_TIMEOUT,
};
use crate::source::document::Segment;
use crate::source::yaml::{Node, ScalarKind, Stream, Value};

/// A rendered release: the `helm template` output, parsed.
#[derive(Clone, Debug)]
pub struct RenderedRelease {
    pub text: Arc<str>,
    pub stream: Stream,
    /// Per document of `stream`: the template it came from (`# Source:`, e.g.
    /// `ollama/templates/deployment.yaml`).
    pub templates: Vec<Option<String>>,
}

impl RenderedRelease {
    pub fn parse(text: &str) -> RenderedRelease {
        let stream = Stream::parse(text);
        RenderedRelease {
            text: stream.text.clone(),
            templates: source_templates(&stream),
            stream,
        }
    }
}

/// Per document of a `helm template` output: the template path of the nearest `# Source:`
/// comment above it (`None` when there is none, e.g. for input that is not Helm output).
pub fn source_templates(stream: &Stream) -> Vec<Option<String>> {
    let sources: Vec<(usize, &str)> = stream
        .comments
        .iter()
        .filter_map(|c| {
            let path = c.text.trim().strip_prefix("Source:")?.trim();
            (!path.is_empty()).then_some((c.line, path))
        })
        .collect();
    stream
        .documents
        .iter()
        .map(|doc| {
            let (line, _) = stream.line_col(doc.root.span.start());
            sources
                .iter()
                .take_while(|(l, _)| *l < line)
                .last()
                .map(|(_, p)| p.to_string())
        })
        .collect()
}

/// The template file a `# Source:` path names, and the first line in it that writes `key:`
/// (e.g. `resources:`): the byte offset of that key. `template` is as Helm prints it,
/// `<chart-name>/templates/x.yaml` (subcharts: `<chart-name>/charts/<sub>/templates/x.yaml`,
/// found only when the subchart is unpacked). `None` when the file or the key is not there.
pub fn template_location(chart: &Path, template: &str, key: &str) -> Option<(PathBuf, usize)> {
    let (_, rest) = template.split_once('/')?;
    let rel = Path::new(rest);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let file = chart.join(rel);
    let text = crate::source::repo::read_repo_text(&file).ok()?;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let item = trimmed.strip_prefix("- ").map(str::trim_start);
        for (candidate, at) in [
            (Some(trimmed), indent),
            (item, line.len() - item.map_or(0, str::len)),
        ] {
            let Some(c) = candidate else { continue };
            let unquoted = c
                .strip_prefix('"')
                .and_then(|c| c.strip_prefix(key)?.strip_prefix('"'))
                .or_else(|| c.strip_prefix(key));
            if unquoted.is_some_and(|r| r.starts_with(':')) {
                return Some((file, offset + at));
            }
        }
        offset += line.len();
    }
    None
}

/// A template's file in `chart`, from its `# Source:` path (never outside the chart).
fn template_file(chart: &Path, template: &str) -> Option<PathBuf> {
    let (_, rest) = template.split_once('/')?;
    let rel = Path::new(rest);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(chart.join(rel))
}

/// The key a template line writes (`key:` or `- key:`, the key possibly quoted), and where the
/// key starts in the line; `None` for directives (`{{ … }}`), comments and blank lines.
fn template_key(line: &str) -> Option<(&str, usize)> {
    let trimmed = line.trim_start();
    let mut at = line.len() - trimmed.len();
    let mut rest = trimmed;
    if let Some(item) = rest.strip_prefix("- ") {
        let item = item.trim_start();
        at = line.len() - item.len();
        rest = item;
    }
    if rest.is_empty() || rest.starts_with('#') || rest.starts_with("{{") {
        return None;
    }
    let key = match rest.strip_prefix('"') {
        Some(quoted) => &quoted[..quoted.find('"')?],
        None => &rest[..rest.find(':')?],
    };
    Some((key, at))
}

/// Where a template writes the rendered field `path` (the segments of the rendered object, as
/// [`node_path_at`] gives them): the keys of `path` are looked for in order, each inside the
/// block of the one found before it (a deeper indentation), skipping keys the template does
/// not write literally (`toYaml`, `include`); the last one found is the place, as (file,
/// offset, length). A template that writes none of them gives its first line; `None` when
/// the template file is not in the chart (a packed subchart).
pub fn template_field_location(
    chart: &Path,
    template: &str,
    path: &[Segment],
) -> Option<(PathBuf, usize, usize)> {
    let file = template_file(chart, template)?;
    let text = crate::source::repo::read_repo_text(&file).ok()?;
    // (offset of the key, its indentation, the key) per line that writes a key.
    let mut lines: Vec<(usize, usize, &str)> = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some((key, at)) = template_key(line.trim_end_matches(['\n', '\r'])) {
            lines.push((offset + at, at, key));
        }
        offset += line.len();
    }
    let mut next = 0;
    let mut block: Option<usize> = None;
    let mut best = (0, 0);
    for segment in path {
        let Segment::Key(wanted) = segment else {
            continue;
        };
        let found = lines[next..]
            .iter()
            .take_while(|(_, indent, _)| block.is_none_or(|b| *indent > b))
            .position(|(_, _, key)| key == wanted);
        if let Some(i) = found {
            let (at, indent, key) = lines[next + i];
            best = (at, key.len());
            block = Some(indent);
            next += i + 1;
        }
    }
    Some((file, best.0, best.1))
}

/// The path of keys and indices to the deepest node of `root` whose span holds `offset` (a
/// key's span counts as its entry's).
pub fn node_path_at(root: &Node, offset: usize) -> Vec<Segment> {
    let mut path = Vec::new();
    let mut node = root;
    loop {
        let next = match &node.value {
            Value::Map(entries) => entries.iter().find_map(|e| {
                let holds = |n: &Node| {
                    n.span.start() <= offset && offset < n.span.end().max(n.span.start() + 1)
                };
                (holds(&e.key) || holds(&e.value))
                    .then(|| Some((Segment::Key(e.key.text()?.to_string()), &e.value)))
                    .flatten()
            }),
            Value::Seq(items) => items.iter().enumerate().find_map(|(i, n)| {
                (n.span.start() <= offset && offset < n.span.end())
                    .then_some((Segment::Index(i), n))
            }),
            Value::Scalar(_) => None,
        };
        let Some((segment, child)) = next else {
            return path;
        };
        path.push(segment);
        node = child;
    }
}

/// A `helm` binary.
#[derive(Clone, Debug)]
pub struct HelmEngine {
    pub binary: PathBuf,
    /// Per `helm` run; [`DEFAULT_TIMEOUT`] unless changed.
    pub timeout: Duration,
    /// The run's time for renderer programs (`--render-budget`, shared with the Kustomize
    /// fallback): a `helm` run gets what is left of it, at most `timeout`.
    pub budget: std::sync::Arc<crate::source::child::Budget>,
    /// The private copies of the charts rendered so far ([`super::stage`]: a render never sees
    /// the chart folder itself), one per chart for the run.
    staged: Arc<std::sync::Mutex<std::collections::HashMap<PathBuf, Arc<super::stage::Staged>>>>,
}

/// What one `helm` run may print (stdout and stderr each): a chart that prints more is an
/// error, not gigabytes held in memory.
pub const MAX_HELM_OUTPUT: usize = 64 << 20;

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

struct Output {
    status: std::process::ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Why a `helm` run was stopped.
#[derive(Debug, Clone, Copy)]
enum Stopped {
    /// Its own timeout.
    Timeout,
    /// The run's budget is spent.
    Budget,
    /// It printed more than [`MAX_HELM_OUTPUT`].
    Output,
}

/// Makes a private temporary folder (created exclusively), removed on drop.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// A new folder with a random name, readable by this user only (rendered values may hold
    /// secrets); removed on drop.
    pub fn new() -> std::io::Result<TempDir> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("gpulint-helm-");
        // tempfile gives folders the default mode (0755 under the usual umask).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o700));
        }
        builder.tempdir().map(TempDir)
    }
}

#[cfg(all(test, unix))]
mod private_folder_tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_render_folder_is_this_users_only() {
        let dir = super::TempDir::new().expect("temp dir");
        let mode = std::fs::metadata(dir.path())
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

impl HelmEngine {
    pub fn new(binary: PathBuf) -> HelmEngine {
        HelmEngine {
            binary,
            timeout: DEFAULT_TIMEOUT,
            budget: std::sync::Arc::default(),
            staged: Arc::default(),
        }
    }

    /// `explicit` (a path, or a bare name looked up on `PATH`), else `helm` on `PATH`.
    pub fn find(explicit: Option<&Path>) -> Option<HelmEngine> {
        let binary = match explicit {
            Some(p) if p.components().count() > 1 || p.is_absolute() => {
                p.is_file().then(|| p.to_path_buf())?
            }
            Some(p) => find_on_path(&p.to_string_lossy())?,
            None => find_on_path("helm")?,
        };
        Some(HelmEngine::new(binary))
    }

    /// Runs `helm ARGS` within the per-run timeout and what is left of the run's budget, an
    /// output cap and a memory limit. `Ok(Err(why))`: it was stopped ([`HelmEngine::stopped`]
    /// makes the error).
    fn run(&self, args: &[&std::ffi::OsStr]) -> Result<Result<Output, Stopped>, HelmError> {
        let left = self.budget.remaining();
        if left.is_zero() {
            return Ok(Err(Stopped::Budget));
        }
        let limits = crate::source::child::Limits {
            timeout: self.timeout.min(left),
            max_output: MAX_HELM_OUTPUT,
            max_memory: Some(crate::source::child::MAX_CHILD_MEMORY),
        };
        let mut cmd = Command::new(&self.binary);
        cmd.args(args);
        let ended =
            crate::source::child::run(&mut cmd, limits).map_err(|source| HelmError::Spawn {
                binary: self.binary.clone(),
                source,
            })?;
        Ok(match ended {
            crate::source::child::Ended::Exited {
                status,
                stdout,
                stderr,
            } => Ok(Output {
                status,
                stdout,
                stderr,
            }),
            crate::source::child::Ended::TimedOut if limits.timeout < self.timeout => {
                Err(Stopped::Budget)
            }
            crate::source::child::Ended::TimedOut => Err(Stopped::Timeout),
            crate::source::child::Ended::TooMuchOutput => Err(Stopped::Output),
        })
    }

    /// The error for a run that was stopped.
    fn stopped(&self, why: Stopped, chart: &Path, release: &str) -> HelmError {
        let failed = |stderr: String| HelmError::Failed {
            chart: chart.to_path_buf(),
            release: release.to_string(),
            status: "stopped".into(),
            stderr,
        };
        match why {
            Stopped::Timeout => HelmError::Timeout {
                chart: chart.to_path_buf(),
                release: release.to_string(),
                seconds: self.timeout.as_secs(),
            },
            Stopped::Budget => failed(format!(
                "not rendered: the run's {} s for renderers (--render-budget) are spent",
                self.budget.total().as_secs()
            )),
            Stopped::Output => failed(format!(
                "helm printed more than {} MiB",
                MAX_HELM_OUTPUT >> 20
            )),
        }
    }

    /// `helm version --short`, e.g. `v3.16.2+g13654a5` (trimmed).
    pub fn version(&self) -> Result<String, HelmError> {
        let failed = |status: String, stderr: String| HelmError::Failed {
            chart: PathBuf::new(),
            release: "(helm version)".into(),
            status,
            stderr,
        };
        let out = self
            .run(&["version".as_ref(), "--short".as_ref()])?
            .map_err(|why| failed(format!("{why:?}"), String::new()))?;
        if !out.status.success() {
            return Err(failed(
                out.status.to_string(),
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The private copy of `chart` ([`super::stage`]), made once per run.
    fn staged(&self, chart: &Path) -> Result<Arc<super::stage::Staged>, HelmError> {
        let mut staged = match self.staged.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(copy) = staged.get(chart) {
            return Ok(copy.clone());
        }
        let copy = Arc::new(
            super::stage::stage(chart).map_err(|refused| HelmError::Refused {
                file: refused.file,
                message: refused.message,
            })?,
        );
        staged.insert(chart.to_path_buf(), copy.clone());
        Ok(copy)
    }

    /// Renders `release` like `helm template NAME CHART --namespace NS -f V1 -f V2 …`: its values
    /// sources in order (inline values are written to temporary files), then `override_values`
    /// (a JSON object, applied last) if given.
    pub fn template(
        &self,
        release: &Release,
        override_values: Option<&Json>,
    ) -> Result<RenderedRelease, HelmError> {
        let tmp = TempDir::new().map_err(|source| HelmError::Io {
            what: "creating a temporary folder".into(),
            source,
        })?;
        let values_err = |message: String| HelmError::Values {
            chart: release.chart.clone(),
            release: release.name.clone(),
            message,
        };
        let mut files: Vec<PathBuf> = Vec::new();
        let write = |name: String, content: &[u8]| -> Result<PathBuf, HelmError> {
            let path = tmp.path().join(name);
            std::fs::File::create(&path)
                .and_then(|mut f| f.write_all(content))
                .map_err(|source| HelmError::Io {
                    what: format!("writing {}", path.display()),
                    source,
                })?;
            Ok(path)
        };
        for (i, source) in release.values.iter().enumerate() {
            match source {
                ValuesSource::File(p) => files.push(p.clone()),
                ValuesSource::Inline { file, node } => {
                    let content = match &node.value {
                        Value::Scalar(s) if s.kind == ScalarKind::Str => s.text.clone(),
                        Value::Map(_) => typed(node).to_string(),
                        _ => {
                            return Err(values_err(format!(
                                "inline values in {} are neither a mapping nor a string",
                                file.display()
                            )))
                        }
                    };
                    files.push(write(format!("values-{i}.yaml"), content.as_bytes())?);
                }
                ValuesSource::Parameters { params, .. } => {
                    // Helm applies `--set` onto the values files' merge (a list index enters
                    // the list a file gave); written out, that merge is the last values file.
                    let mut user = user_values(&release.values[..i])?;
                    apply_parameters(&mut user, params);
                    files.push(write(
                        format!("values-{i}.json"),
                        user.to_string().as_bytes(),
                    )?);
                }
            }
        }
        if let Some(v) = override_values {
            if !v.is_object() {
                return Err(values_err("override values must be an object".into()));
            }
            files.push(write("override.json".into(), v.to_string().as_bytes())?);
        }
        // Names come from manifests: never handed to helm unless they are names, flags take
        // their value in the same argument, and the positional arguments follow `--`.
        if !is_release_name(&release.name) {
            return Err(values_err(invalid_name(
                "release name",
                &release.name,
                &release.name,
            )));
        }
        if !is_namespace(&release.namespace) {
            return Err(values_err(invalid_name(
                "namespace",
                &release.namespace,
                &release.name,
            )));
        }
        let namespace = format!("--namespace={}", release.namespace);
        let values: Vec<std::ffi::OsString> = files
            .iter()
            .map(|f| {
                let mut arg = std::ffi::OsString::from("--values=");
                arg.push(f);
                arg
            })
            .collect();
        let mut args: Vec<&std::ffi::OsStr> = vec!["template".as_ref(), namespace.as_ref()];
        args.extend(values.iter().map(|v| v.as_os_str()));
        args.push("--".as_ref());
        args.push(release.name.as_ref());
        // Helm is handed the chart's private copy: its tracked files, no `.git`, no link.
        let staged = self.staged(&release.chart)?;
        args.push(staged.chart.as_os_str());
        let out = self
            .run(&args)?
            .map_err(|why| self.stopped(why, &release.chart, &release.name))?;
        if !out.status.success() {
            // Helm names the copy: name the chart instead.
            let stderr = String::from_utf8_lossy(&out.stderr).trim().replace(
                &*staged.chart.to_string_lossy(),
                &release.chart.to_string_lossy(),
            );
            return Err(HelmError::Failed {
                chart: release.chart.clone(),
                release: release.name.clone(),
                status: out.status.to_string(),
                stderr,
            });
        }
        let text = String::from_utf8(out.stdout)
            .map_err(|_| values_err("helm printed output that is not UTF-8".into()))?;
        Ok(RenderedRelease::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use crate::source::helm::tests::keys;

    use super::*;

    #[test]
    fn source_templates_maps_documents_to_the_comment_above() {
        let text = "---\n# Source: c/templates/a.yaml\n---\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B1\n---\nkind: B2\n---\n# Source: c/templates/empty.yaml\n---\n# Source: c/templates/c.yaml\n# a comment of the template\nkind: C\n";
        let s = Stream::parse(text);
        assert_eq!(
            source_templates(&s),
            [
                Some("c/templates/a.yaml".to_string()),
                Some("c/templates/b.yaml".to_string()),
                Some("c/templates/b.yaml".to_string()),
                Some("c/templates/c.yaml".to_string()),
            ]
        );
        let plain = Stream::parse("kind: A\n---\nkind: B\n");
        assert_eq!(source_templates(&plain), [None, None]);
        assert!(source_templates(&Stream::parse("")).is_empty());
    }

    #[test]
    fn template_location_finds_the_key_line() {
        let dir = std::env::temp_dir().join(format!("gpulint-helm-unit-{}", std::process::id()));
        let templates = dir.join("templates");
        std::fs::create_dir_all(&templates).unwrap();
        let text = "spec:\n  containers:\n  - name: x\n    # resources below\n    resources:\n      {{- toYaml .Values.resources | nindent 6 }}\n";
        std::fs::write(templates.join("d.yaml"), text).unwrap();
        let (file, at) = template_location(&dir, "mychart/templates/d.yaml", "resources").unwrap();
        assert_eq!(file, templates.join("d.yaml"));
        assert!(text[at..].starts_with("resources:"));
        let (_, at) = template_location(&dir, "mychart/templates/d.yaml", "name").unwrap();
        assert!(text[at..].starts_with("name: x"));
        assert_eq!(
            template_location(&dir, "mychart/templates/d.yaml", "limits"),
            None
        );
        assert_eq!(
            template_location(&dir, "mychart/templates/none.yaml", "spec"),
            None
        );
        assert_eq!(
            template_location(&dir, "mychart/../etc/passwd", "root"),
            None
        );
        assert_eq!(template_location(&dir, "no-slash", "spec"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn template_field_location_follows_the_path_through_blocks() {
        let dir = std::env::temp_dir().join(format!("gpulint-helm-field-{}", std::process::id()));
        let templates = dir.join("templates");
        std::fs::create_dir_all(&templates).unwrap();
        let text = "spec:\n  template:\n    spec:\n      initContainers:\n      - name: init\n        resources: {{ toYaml .Values.init | nindent 10 }}\n      containers:\n      - name: main\n        {{- if .Values.r }}\n# a comment at column 0\n        resources:\n          limits:\n            {{- include \"x\" . | nindent 12 }}\n        {{- end }}\n";
        std::fs::write(templates.join("d.yaml"), text).unwrap();
        let path = keys(&[
            "spec",
            "template",
            "spec",
            "containers",
            "0",
            "resources",
            "limits",
            "nvidia.com/gpu",
        ]);
        let (file, at, len) = template_field_location(&dir, "c/templates/d.yaml", &path).unwrap();
        assert_eq!(file, templates.join("d.yaml"));
        assert!(text[at..].starts_with("limits:"), "{}", &text[at..]);
        assert_eq!(len, "limits".len());
        // Nothing written literally: the template's first line.
        assert_eq!(
            template_field_location(&dir, "c/templates/d.yaml", &keys(&["data"])),
            Some((templates.join("d.yaml"), 0, 0))
        );
        assert_eq!(
            template_field_location(&dir, "c/templates/none.yaml", &path),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
        // The path of a rendered node.
        let s = Stream::parse(
            "spec:\n  containers:\n  - name: a\n    resources:\n      limits: {x: 1}\n",
        );
        let at = s.text.find("x: 1").unwrap();
        assert_eq!(
            node_path_at(&s.documents[0].root, at),
            keys(&["spec", "containers", "0", "resources", "limits", "x"])
        );
    }
}
