//! The pipeline: discover → load (parallel) → repo facts → rules (parallel) → findings.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::PathBuf;

use rayon::prelude::*;

use crate::config::Config;
use crate::fix::resources::Target;
use crate::k8s::catalog::Catalog;
use crate::k8s::gpu::GpuNames;
use crate::k8s::workload::{objects, Workload};
use crate::metrics::recommend::Policy;
use crate::metrics::usage::{ContainerKey, UsageSet};
use crate::rules::headroom::usage_key;
use crate::rules::{self, Context, Finding, RepoFacts, Severity, Suppression, SuppressionKind};
use crate::source::discover::{discover, Input};
use crate::source::yaml::{Comment, Stream};

pub const IGNORE_ANNOTATION: &str = "gpulint.io/ignore";

/// One input file, parsed.
pub struct SourceFile {
    pub input: Input,
    /// The name shown in findings (the path as walked).
    pub name: String,
    pub stream: Stream,
}

/// An input that could not be read or parsed, placed where it went wrong.
#[derive(Clone, Debug, serde::Serialize)]
pub struct InputError {
    /// Index of the file in the run's file list, when it was read (for the source snippet).
    #[serde(skip)]
    pub source: Option<(usize, usize)>,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Which rules to run, from the command line.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Selection {
    fn allows(&self, info: &rules::RuleInfo) -> bool {
        let named = |list: &[String]| list.iter().any(|s| s == info.id || s == info.name);
        (self.select.is_empty() || named(&self.select)) && !named(&self.ignore)
    }

    /// `--select` names a rule explicitly: it runs even when off by default.
    fn forces(&self, info: &rules::RuleInfo) -> bool {
        self.select.iter().any(|s| s == info.id || s == info.name)
    }
}

pub struct Run {
    pub files: Vec<SourceFile>,
    pub findings: Vec<Finding>,
    pub errors: Vec<InputError>,
}

impl Run {
    /// Findings that count (not suppressed) at or above `level`.
    pub fn count_at_or_above(&self, level: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.suppression.is_none() && f.severity >= level)
            .count()
    }
}

/// Everything a lint run needs besides the inputs.
pub struct Linter {
    pub config: Config,
    pub catalog: Catalog,
    pub gpu_names: GpuNames,
    pub selection: Selection,
    /// Measured usage for the headroom rules.
    pub usage: Option<UsageSet>,
    pub policy: Policy,
}

impl Linter {
    pub fn new(config: Config, selection: Selection) -> Linter {
        let mut catalog = Catalog::builtin();
        catalog.extend(config.workloads.clone());
        let gpu_names = GpuNames::new(config.gpu_resources.clone());
        let config_policy = config.policy.clone();
        Linter {
            config,
            catalog,
            gpu_names,
            selection,
            usage: None,
            policy: config_policy,
        }
    }

    /// Loads every input; unreadable files become errors.
    pub fn load(&self, paths: &[PathBuf]) -> (Vec<SourceFile>, Vec<InputError>) {
        let (inputs, walk_errors) = discover(paths, &self.config);
        let mut errors: Vec<InputError> = walk_errors
            .into_iter()
            .map(|message| InputError {
                source: None,
                file: String::new(),
                line: 0,
                column: 0,
                message,
            })
            .collect();
        let loaded: Vec<Result<SourceFile, InputError>> =
            inputs.into_par_iter().map(load_input).collect();
        let mut files = Vec::new();
        for result in loaded {
            match result {
                Ok(file) => {
                    if let Some(e) = &file.stream.error {
                        let (line, column) = file.stream.line_col(e.offset);
                        errors.push(InputError {
                            source: Some((files.len(), e.offset)),
                            file: file.name.clone(),
                            line,
                            column,
                            message: e.message.clone(),
                        });
                    }
                    files.push(file);
                }
                Err(e) => errors.push(e),
            }
        }
        (files, errors)
    }

    /// What the rules see for one document of a file.
    pub fn context<'a>(
        &'a self,
        facts: &'a RepoFacts,
        text: &'a str,
        document: usize,
        default_namespace: &'a str,
    ) -> Context<'a> {
        Context {
            gpu_names: &self.gpu_names,
            facts,
            kueue_required: self.config.kueue_required,
            target: Target { text, document },
            usage: self.usage.as_ref(),
            policy: &self.policy,
            default_namespace,
        }
    }

    /// The namespace of a file's manifests that name none.
    pub fn default_namespace(&self, file: &SourceFile) -> &str {
        match &file.input {
            Input::File(path) => self.config.namespace_for(path),
            Input::Stdin => self
                .config
                .default_namespace
                .as_deref()
                .unwrap_or("default"),
        }
    }

    /// The metrics identities of every named container of every workload in `files`.
    pub fn container_keys(&self, files: &[SourceFile]) -> Vec<ContainerKey> {
        let mut keys = BTreeSet::new();
        for file in files {
            for doc in &file.stream.documents {
                for object in objects(doc) {
                    if let Some(w) = Workload::of(object, &self.catalog) {
                        let ns = self.default_namespace(file);
                        keys.extend(w.containers.iter().filter_map(|c| usage_key(&w, c, ns)));
                    }
                }
            }
        }
        keys.into_iter().collect()
    }

    pub fn run(&self, paths: &[PathBuf]) -> Run {
        let (files, errors) = self.load(paths);
        let facts = repo_facts(&files);
        let per_file: Vec<Vec<Finding>> = files
            .par_iter()
            .enumerate()
            .map(|(index, file)| self.lint_file(&facts, index, file))
            .collect();
        Run {
            files,
            findings: per_file.into_iter().flatten().collect(),
            errors,
        }
    }

    /// Lints one file; `index` is its place in the run's file list.
    pub fn lint_file(&self, facts: &RepoFacts, index: usize, file: &SourceFile) -> Vec<Finding> {
        let comments = suppression_comments(&file.stream.comments);
        let mut findings = Vec::new();
        for (document, doc) in file.stream.documents.iter().enumerate() {
            let cx = self.context(
                facts,
                &file.stream.text,
                document,
                self.default_namespace(file),
            );
            for object in objects(doc) {
                let Some(workload) = Workload::of(object, &self.catalog) else {
                    continue;
                };
                let annotated: BTreeSet<String> = workload
                    .annotations(IGNORE_ANNOTATION)
                    .iter()
                    .flat_map(|v| v.split(','))
                    .filter_map(|s| rules::rule(s.trim()).map(|r| r.id.to_string()))
                    .collect();
                for hit in rules::check_workload(&cx, &workload) {
                    let Some(info) = rules::rule(hit.rule) else {
                        continue;
                    };
                    let enabled = self.selection.forces(info) || self.config.rule_enabled(info);
                    if !enabled || !self.selection.allows(info) {
                        continue;
                    }
                    let (line, _) = file.stream.line_col(hit.span.start);
                    let suppression = comment_suppression(&comments, line, info)
                        .or_else(|| {
                            annotated.contains(info.id).then_some(Suppression {
                                kind: SuppressionKind::Annotation,
                                justification: None,
                            })
                        })
                        .or_else(|| self.config_suppression(file, info));
                    findings.push(Finding {
                        rule: info,
                        severity: self.config.severity(info),
                        message: hit.message,
                        label: hit.label,
                        help: hit.help,
                        file: index,
                        span: hit.span,
                        object: workload.object.id.clone(),
                        container: hit.container,
                        fixable: hit.fixable,
                        fix: hit.fix,
                        recommended: hit.recommended,
                        suppression,
                    });
                }
            }
        }
        findings.sort_by_key(|f| (f.span.start, f.rule.id));
        findings
    }

    fn config_suppression(&self, file: &SourceFile, info: &rules::RuleInfo) -> Option<Suppression> {
        let Input::File(path) = &file.input else {
            return None;
        };
        self.config.ignored(path, info.id).map(|entry| Suppression {
            kind: SuppressionKind::Config,
            justification: Some(format!("ignored by config for path {}", entry.pattern)),
        })
    }
}

fn load_input(input: Input) -> Result<SourceFile, InputError> {
    let name = input.display();
    let bytes = match &input {
        Input::File(path) => std::fs::read(path),
        Input::Stdin => {
            let mut buf = Vec::new();
            std::io::stdin().read_to_end(&mut buf).map(|_| buf)
        }
    }
    .map_err(|e| InputError {
        source: None,
        file: name.clone(),
        line: 0,
        column: 0,
        message: format!("cannot read: {e}"),
    })?;
    Ok(SourceFile {
        stream: Stream::parse_bytes(&bytes),
        input,
        name,
    })
}

/// Kueue LocalQueues defined anywhere in the input.
pub fn repo_facts(files: &[SourceFile]) -> RepoFacts {
    let mut facts = RepoFacts::default();
    for file in files {
        for doc in &file.stream.documents {
            for object in objects(doc) {
                let is_queue = object.id.kind == "LocalQueue"
                    && object.id.api_version.starts_with("kueue.x-k8s.io/");
                if let (true, Some(name)) = (is_queue, &object.id.name) {
                    let ns = object
                        .id
                        .namespace
                        .clone()
                        .unwrap_or_else(|| "default".into());
                    facts
                        .local_queues
                        .entry(ns)
                        .or_default()
                        .insert(name.clone());
                }
            }
        }
    }
    facts
}

/// A `# gpulint: ignore[ID, ID] reason` comment.
struct IgnoreComment {
    rules: Vec<String>,
    reason: Option<String>,
}

fn parse_ignore_comment(text: &str) -> Option<IgnoreComment> {
    let rest = text.trim_start().strip_prefix("gpulint:")?.trim_start();
    let rest = rest.strip_prefix("ignore[")?;
    let (ids, after) = rest.split_once(']')?;
    let rules = ids
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let reason = after.trim().trim_start_matches(['-', ':']).trim();
    Some(IgnoreComment {
        rules,
        reason: (!reason.is_empty()).then(|| reason.to_string()),
    })
}

fn suppression_comments(comments: &[Comment]) -> HashMap<usize, IgnoreComment> {
    comments
        .iter()
        .filter_map(|c| Some((c.line, parse_ignore_comment(&c.text)?)))
        .collect()
}

/// A suppression comment on the finding's line or the line above.
fn comment_suppression(
    comments: &HashMap<usize, IgnoreComment>,
    line: usize,
    info: &rules::RuleInfo,
) -> Option<Suppression> {
    [Some(line), line.checked_sub(1)]
        .into_iter()
        .flatten()
        .filter_map(|l| comments.get(&l))
        .find(|c| {
            c.rules
                .iter()
                .any(|r| r.eq_ignore_ascii_case(info.id) || r == info.name)
        })
        .map(|c| Suppression {
            kind: SuppressionKind::Comment,
            justification: c.reason.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_comments_parse() {
        let c = parse_ignore_comment(" gpulint: ignore[GPU002, QOS001] shared node pool").unwrap();
        assert_eq!(c.rules, ["GPU002", "QOS001"]);
        assert_eq!(c.reason.as_deref(), Some("shared node pool"));
        assert!(parse_ignore_comment(" just a comment").is_none());
        assert!(parse_ignore_comment(" gpulint: ignore GPU002").is_none());
    }
}
