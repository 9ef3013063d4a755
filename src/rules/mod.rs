//! The rule catalogue and the engine that runs rule families over workloads.
//!
//! A rule family (one file each) looks at one workload and reports `Hit`s: a rule id, a span and
//! a message. The engine turns hits into findings: it applies the config's severities and
//! enablement, `--select`/`--ignore`, and the suppressions.

mod dra;
mod fit;
mod gpu;
mod gpu_sizing;
pub mod headroom;
mod kueue;
mod qos;
mod render;
pub mod savings;
mod schedule;
mod shm;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::fix::edit::{Applicability, Fix};
use crate::fix::resources::Target;
use crate::k8s::gpu::GpuNames;
use crate::k8s::workload::{Container, ObjectRef, Workload};
use crate::metrics::recommend::Policy;
use crate::metrics::usage::UsageSet;
use crate::source::yaml::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Whether a rule's findings carry fixes (ruff's `FixAvailability`). A rules test checks it
/// against what the findings on each rule's fixtures really carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixAvailability {
    /// Every finding carries a fix, unless its field is written where no edit can be placed
    /// safely (through a YAML alias, or merged from several files).
    Always,
    /// Some findings carry a fix (e.g. only with measured usage, or only when a value exists
    /// to copy); the others say why not.
    Sometimes,
    Never,
}

impl FixAvailability {
    pub fn as_str(self) -> &'static str {
        match self {
            FixAvailability::Always => "always",
            FixAvailability::Sometimes => "sometimes",
            FixAvailability::Never => "never",
        }
    }
}

#[derive(Debug)]
pub struct RuleInfo {
    pub id: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub enabled_by_default: bool,
    /// Whether its findings carry fixes.
    pub fix: FixAvailability,
    pub summary: &'static str,
    /// The full text, `rules/<ID>.md`.
    pub doc: &'static str,
}

impl RuleInfo {
    pub fn help_uri(&self) -> String {
        format!(
            "https://github.com/gpulint/gpulint/blob/main/rules/{}.md",
            self.id
        )
    }
}

macro_rules! rule {
    ($id:literal, $name:literal, $sev:ident, $on:literal, $fix:ident, $summary:literal) => {
        RuleInfo {
            id: $id,
            name: $name,
            severity: Severity::$sev,
            enabled_by_default: $on,
            fix: FixAvailability::$fix,
            summary: $summary,
            doc: include_str!(concat!("../../rules/", $id, ".md")),
        }
    };
}

/// Every rule, in catalogue order. Ids are stable; names are readable aliases.
pub static RULES: &[RuleInfo] =
    &[
        rule!(
            "GPU001",
            "gpu-limit-missing",
            Error,
            true,
            Sometimes,
            "GPU resource requested without a limit: the API server rejects the pod"
        ),
        rule!(
            "GPU002",
            "gpu-request-limit-mismatch",
            Error,
            true,
            Always,
            "GPU request differs from its limit: the API server rejects the pod"
        ),
        rule!(
            "GPU003",
            "gpu-quantity-invalid",
            Error,
            true,
            Never,
            "GPU quantity is not a whole, non-negative number"
        ),
        rule!(
            "GPU004",
            "gpu-resource-unknown",
            Warning,
            true,
            Sometimes,
            "resource name looks like a GPU but no device plugin advertises it"
        ),
        rule!(
            "GPU005",
            "gpu-quantity-unresolved",
            Info,
            true,
            Never,
            "GPU quantity is an unrendered placeholder and was not checked"
        ),
        rule!(
            "QOS001",
            "gpu-memory-limit-missing",
            Warning,
            true,
            Sometimes,
            "GPU container without a memory limit"
        ),
        rule!(
            "QOS002",
            "gpu-burstable-qos",
            Warning,
            true,
            Sometimes,
            "a container of a GPU pod (init containers and sidecars included) without CPU and memory requests = limits: the pod is Burstable"
        ),
        rule!(
            "QOS003",
            "gpu-cpu-request-missing",
            Warning,
            true,
            Never,
            "GPU container without a CPU request"
        ),
        rule!(
            "RES001",
            "request-above-limit",
            Error,
            true,
            Always,
            "CPU, memory or ephemeral-storage request above its limit: the API server rejects the pod"
        ),
        rule!(
            "SHM001",
            "shm-size-limit-missing",
            Warning,
            true,
            Never,
            "memory-backed emptyDir in a GPU pod without a sizeLimit"
        ),
        rule!("SHM002", "shm-size-limit-exceeds-memory-limit", Error, true, Never,
        "memory-backed emptyDir sizeLimit at or above the memory limit of a container mounting it"),
        rule!(
            "KUE001",
            "kueue-queue-name-missing",
            Warning,
            true,
            Never,
            "GPU batch workload without a kueue.x-k8s.io/queue-name label where Kueue queues exist"
        ),
        rule!(
            "KUE002",
            "kueue-local-queue-unknown",
            Error,
            true,
            Never,
            "kueue.x-k8s.io/queue-name names no LocalQueue in the workload's namespace: the job stays suspended"
        ),
        rule!(
            "KUE003",
            "kueue-cluster-queue-unknown",
            Error,
            true,
            Never,
            "a LocalQueue points to a ClusterQueue the repo does not define: its workloads are never admitted"
        ),
        rule!(
            "KUE004",
            "kueue-namespace-not-selected",
            Error,
            true,
            Never,
            "a LocalQueue's namespace is excluded by its ClusterQueue's namespaceSelector"
        ),
        rule!(
            "KUE005",
            "kueue-quota-never-admits",
            Error,
            true,
            Never,
            "a workload asks for more than its ClusterQueue can ever reach, borrowing included"
        ),
        rule!(
            "KUE006",
            "kueue-resource-not-covered",
            Error,
            true,
            Never,
            "a workload requests a resource no resource group of its ClusterQueue covers"
        ),
        rule!(
            "KUE007",
            "kueue-flavor-node-labels-conflict",
            Error,
            true,
            Never,
            "the pod's nodeSelector/required affinity contradicts every flavor that covers its GPUs"
        ),
        rule!(
            "KUE008",
            "kai-queue-unknown",
            Error,
            true,
            Never,
            "a kai.scheduler/queue label names no KAI Queue the repo defines"
        ),
        rule!(
            "DRA001",
            "dra-container-claim-unknown",
            Error,
            true,
            Never,
            "a container's resources.claims names no entry of the pod's resourceClaims: rejected"
        ),
        rule!(
            "DRA002",
            "dra-claim-source-missing",
            Error,
            true,
            Never,
            "a pod claim names neither resourceClaimTemplateName nor resourceClaimName: rejected"
        ),
        rule!(
            "DRA003",
            "dra-claim-unknown",
            Error,
            true,
            Never,
            "a pod claim names a ResourceClaimTemplate or ResourceClaim the repo does not define"
        ),
        rule!(
            "DRA004",
            "dra-shared-claim-multi-replica",
            Warning,
            true,
            Never,
            "a resourceClaimName in a multi-replica pod template: every pod shares one device set"
        ),
        rule!(
            "DRA005",
            "dra-request-shape-v1beta1",
            Error,
            true,
            Never,
            "deviceClassName directly on a request under resource.k8s.io/v1 (or v1beta2), where exactly: is required"
        ),
        rule!(
            "DRA006",
            "dra-gpu-allocated-twice",
            Warning,
            true,
            Never,
            "a container asks for nvidia.com/gpu and for GPUs through a DRA claim: two allocations"
        ),
        rule!(
            "DRA007",
            "dra-mig-profile-unknown",
            Warning,
            true,
            Never,
            "a CEL selector asks for a MIG profile no NVIDIA GPU offers"
        ),
        rule!(
            "DRA008",
            "dra-gpu-count-unknown",
            Info,
            true,
            Never,
            "a GPU request with allocationMode: All: the number of GPUs is not known from the repo"
        ),
        rule!(
            "MEM001",
            "memory-limit-below-usage",
            Error,
            true,
            Always,
            "memory limit below the measured recommendation: the container will be OOMKilled"
        ),
        rule!(
            "MEM002",
            "memory-overprovisioned",
            Warning,
            true,
            Always,
            "memory request far above the measured recommendation: memory held idle"
        ),
        rule!(
            "MEM003",
            "oom-killed",
            Error,
            true,
            Sometimes,
            "container was OOMKilled in the measurement window"
        ),
        rule!(
            "MEM004",
            "usage-data-insufficient",
            Info,
            true,
            Never,
            "too few samples or too little history for a recommendation"
        ),
        rule!(
            "MEM005",
            "oom-kill-addressed",
            Info,
            true,
            Never,
            "OOMKilled in the window; the memory limit now covers the recommendation"
        ),
        rule!(
            "CPU001",
            "cpu-request-far-from-usage",
            Warning,
            true,
            Always,
            "CPU request far from the measured P99"
        ),
        rule!(
            "GPU010",
            "gpu-underused",
            Warning,
            true,
            Never,
            "average GPU utilisation below the threshold: GPUs sit idle"
        ),
        rule!(
            "GPU011",
            "gpu-memory-pressure",
            Warning,
            true,
            Never,
            "GPU memory use near capacity at P99: CUDA out-of-memory risk"
        ),
        rule!(
            "GPU012",
            "gpu-parallelism-mismatch",
            Error,
            true,
            Never,
            "an engine's parallelism flags start more or fewer ranks than the container's GPUs"
        ),
        rule!(
            "GPU013",
            "gpu-mig-candidate",
            Warning,
            true,
            Sometimes,
            "a whole GPU whose measured memory and compute fit a MIG slice"
        ),
        rule!(
            "GPU014",
            "gpu-count-overprovisioned",
            Warning,
            true,
            Never,
            "fewer GPUs busy than requested over the whole window"
        ),
        rule!(
            "GPU015",
            "gpu-memory-preallocated",
            Info,
            true,
            Never,
            "an inference engine preallocates GPU memory: not judged by its framebuffer"
        ),
        rule!(
            "FIT001",
            "no-node-fits",
            Error,
            true,
            Never,
            "a pod's CPU, memory or GPU requests exceed every node its selector allows (measured nodes)"
        ),
        rule!(
            "MET001",
            "usage-data-missing",
            Info,
            true,
            Never,
            "GPU container without usage data: not judged against measurements"
        ),
        rule!(
            "SCH001",
            "gpu-toleration-missing",
            Warning,
            false,
            Never,
            "GPU pod without a toleration for the GPU node taint"
        ),
        rule!(
            "KUS001",
            "rendered-container-without-image",
            Error,
            true,
            Never,
            "a container has no image after rendering (a patch replaced a CRD's container list)"
        ),
        rule!(
            "SCH002",
            "gpu-node-selector-missing",
            Warning,
            false,
            Never,
            "GPU pod without a node selector or affinity on a GPU product label"
        ),
    ];

pub fn rule(id_or_name: &str) -> Option<&'static RuleInfo> {
    RULES
        .iter()
        .find(|r| r.id.eq_ignore_ascii_case(id_or_name) || r.name == id_or_name)
}

/// What a rule family reports: the engine adds the object, file and severity.
#[derive(Clone, Debug)]
pub struct Hit {
    pub rule: &'static str,
    pub span: Span,
    pub message: String,
    /// Short text under the underlined span.
    pub label: String,
    pub help: Option<String>,
    pub container: Option<String>,
    pub fix: Option<Fix>,
    /// Measured values the finding recommends.
    pub recommended: Option<headroom::Recommended>,
    /// What following the finding frees (GPUs per pod, pods).
    pub frees: Option<savings::Frees>,
}

impl Hit {
    pub fn new(rule: &'static str, span: Span, message: String, label: String) -> Hit {
        Hit {
            rule,
            span,
            message,
            label,
            help: None,
            container: None,
            fix: None,
            recommended: None,
            frees: None,
        }
    }

    /// What following the finding frees: `gpus` per pod of `c`'s pods in `w`.
    pub fn frees(mut self, gpus: f64, w: &Workload, c: &Container) -> Hit {
        self.frees = savings::Frees::new(gpus, w, c);
        self
    }

    pub fn recommended(mut self, r: headroom::Recommended) -> Hit {
        self.recommended = Some(r);
        self
    }

    /// Attaches a fix, if there is one: a finding is fixable exactly when it carries a fix.
    pub fn with_fix(mut self, fix: Option<Fix>) -> Hit {
        self.fix = fix;
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Hit {
        self.help = Some(help.into());
        self
    }

    pub fn container(mut self, c: &Container) -> Hit {
        self.container = c.name.map(str::to_string);
        self
    }
}

/// Facts gathered from the whole input before linting: rules that look across files read them.
#[derive(Clone, Debug, Default)]
pub struct RepoFacts {
    /// Kueue LocalQueue names by namespace (`default` when the manifest has none).
    pub local_queues: BTreeMap<String, BTreeSet<String>>,
    /// Kueue's (and KAI's) queues, quotas and flavors, and Namespace labels.
    pub kueue: crate::k8s::kueue::KueueFacts,
    /// DRA ResourceClaimTemplates and ResourceClaims.
    pub dra: crate::k8s::dra::DraFacts,
}

impl RepoFacts {
    /// Records what rules need to know of one object (any kind; most are ignored).
    pub fn add(&mut self, object: &crate::k8s::workload::Object) {
        let id = &object.id;
        let is_queue =
            id.kind == "LocalQueue" && id.api_version.starts_with(crate::k8s::kueue::GROUP);
        if let (true, Some(name)) = (is_queue, &id.name) {
            let ns = id.namespace.clone().unwrap_or_else(|| "default".into());
            self.local_queues
                .entry(ns)
                .or_default()
                .insert(name.clone());
        }
        self.kueue.add(object, "default");
        self.dra.add(object, "default");
    }

    /// The facts of every object of a YAML text (tests).
    #[cfg(test)]
    pub fn of_text(text: &str) -> RepoFacts {
        let stream = crate::source::yaml::Stream::parse(text);
        let mut facts = RepoFacts::default();
        for doc in &stream.documents {
            for object in crate::k8s::workload::objects(doc) {
                facts.add(&object);
            }
        }
        facts
    }
}

/// Kinds checked on their own, not as workloads (they run no pods): a LocalQueue's target, a
/// DRA claim's requests.
pub fn checks_object(id: &ObjectRef) -> bool {
    let queue = id.kind == "LocalQueue" && id.api_version.starts_with(crate::k8s::kueue::GROUP);
    let claim = matches!(id.kind.as_str(), "ResourceClaimTemplate" | "ResourceClaim")
        && id.api_version.starts_with(crate::k8s::dra::GROUP);
    queue || claim
}

/// What the rules need besides the workload.
pub struct Context<'a> {
    pub gpu_names: &'a GpuNames,
    pub facts: &'a RepoFacts,
    pub kueue_required: bool,
    /// The file text and the document being checked, for fixes.
    pub target: Target<'a>,
    /// Measured usage (`--metrics`/`--prometheus`), when given.
    pub usage: Option<&'a UsageSet>,
    pub policy: &'a Policy,
    /// The namespace of manifests that name none (`default` unless the config says otherwise).
    pub default_namespace: &'a str,
}

/// Runs every rule family on one workload.
pub fn check_workload(cx: &Context, w: &Workload) -> Vec<Hit> {
    let mut hits = Vec::new();
    gpu::check(cx, w, &mut hits);
    gpu_sizing::check(cx, w, &mut hits);
    qos::check(cx, w, &mut hits);
    shm::check(cx, w, &mut hits);
    kueue::check(cx, w, &mut hits);
    dra::check(cx, w, &mut hits);
    fit::check(cx, w, &mut hits);
    headroom::check(cx, w, &mut hits);
    schedule::check(cx, w, &mut hits);
    render::check(cx, w, &mut hits);
    hits
}

/// How a finding was suppressed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SuppressionKind {
    /// A `# gpulint: ignore[ID]` comment.
    Comment,
    /// A `gpulint.io/ignore` annotation.
    Annotation,
    /// An `ignore:` entry of the config file.
    Config,
}

#[derive(Clone, Debug, Serialize)]
pub struct Suppression {
    pub kind: SuppressionKind,
    pub justification: Option<String>,
}

/// A finding, placed in its file.
#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: &'static RuleInfo,
    pub severity: Severity,
    pub message: String,
    pub label: String,
    pub help: Option<String>,
    /// Index of the file in the run's file list.
    pub file: usize,
    pub span: Span,
    pub object: ObjectRef,
    pub container: Option<String>,
    pub fix: Option<Fix>,
    pub recommended: Option<headroom::Recommended>,
    /// What following the finding frees.
    pub frees: Option<savings::Frees>,
    pub suppression: Option<Suppression>,
    /// The render unit (index in the run's units) whose rendered object this finding is on;
    /// `None` for a plain file.
    pub unit: Option<usize>,
    /// The Helm release (index in the run's releases) whose rendered object this is on.
    pub release: Option<usize>,
    /// The namespace the object lands in: its own, else the release's or the configured
    /// default; `None` for a cluster-scoped kind.
    pub namespace: Option<String>,
}

impl Finding {
    /// Whether `--fix` writes a fix for it: it carries a safe fix.
    pub fn fixable(&self) -> bool {
        self.fix
            .as_ref()
            .is_some_and(|f| f.applicability == Applicability::Safe)
    }

    /// Whether it carries a fix that only `--fix --unsafe-fixes` writes.
    pub fn unsafe_fixable(&self) -> bool {
        self.fix
            .as_ref()
            .is_some_and(|f| f.applicability == Applicability::Unsafe)
    }
}

/// Container helpers shared by the families.
pub(crate) fn container_label(c: &Container) -> String {
    match c.name {
        Some(name) if c.init => format!("init container `{name}`"),
        Some(name) => format!("container `{name}`"),
        // Container-like blocks without a name (KServe `predictor.model`): name the place.
        None => {
            let place: Vec<&str> = c
                .path
                .split(['[', ']'])
                .filter_map(|seg| seg.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .collect();
            format!("`{}`", place.join("."))
        }
    }
}

/// The span to underline for a container-level finding: its `resources:` key, else its name.
pub(crate) fn container_anchor(c: &Container) -> Span {
    if let Some(key) = c.resources.key {
        return key.span;
    }
    if let Some(entry) = c.node.entry("name") {
        return entry.value.span;
    }
    c.node.span.at_start()
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::k8s::catalog::Catalog;
    use crate::k8s::workload::objects;
    use crate::source::yaml::Stream;

    /// Runs the default-enabled rules on every workload of a YAML text; returns
    /// (rule, text at span, message).
    pub fn run(
        text: &str,
        facts: &RepoFacts,
        kueue_required: bool,
    ) -> Vec<(String, String, String)> {
        run_rules(text, facts, kueue_required, false)
    }

    /// Every rule, including those off by default, as `rule text-at-span`.
    pub fn rules_hit_all(text: &str) -> Vec<String> {
        run_rules(text, &RepoFacts::default(), false, true)
            .into_iter()
            .map(|(r, at, _)| format!("{r} {at}"))
            .collect()
    }

    fn run_rules(
        text: &str,
        facts: &RepoFacts,
        kueue_required: bool,
        all: bool,
    ) -> Vec<(String, String, String)> {
        let stream = Stream::parse(text);
        assert_eq!(stream.error, None, "test YAML must parse");
        let catalog = Catalog::builtin();
        let names = GpuNames::default();
        let mut out = Vec::new();
        let policy = Policy::default();
        for (document, doc) in stream.documents.iter().enumerate() {
            let cx = Context {
                gpu_names: &names,
                facts,
                kueue_required,
                target: Target::local(text, document),
                usage: None,
                policy: &policy,
                default_namespace: "default",
            };
            for obj in objects(doc) {
                let view = if checks_object(&obj.id) {
                    Some(Workload::bare(obj))
                } else {
                    Workload::of(obj, &catalog)
                };
                if let Some(w) = view {
                    for h in check_workload(&cx, &w) {
                        if !all && !rule(h.rule).is_some_and(|r| r.enabled_by_default) {
                            continue;
                        }
                        let at = text[h.span.start()..h.span.end()].to_string();
                        out.push((h.rule.to_string(), at, h.message));
                    }
                }
            }
        }
        out
    }

    /// Every default-enabled rule with `usage` measured for every container named in `keys`
    /// (namespace `default`): (rule, text at span, message, fix description).
    pub fn run_measured(
        text: &str,
        usage: &[(&str, &str, &str, crate::metrics::usage::Usage)],
        policy: &Policy,
    ) -> Vec<(String, String, String, Option<String>)> {
        let stream = Stream::parse(text);
        assert_eq!(stream.error, None, "test YAML must parse");
        let catalog = Catalog::builtin();
        let names = GpuNames::default();
        let mut set = UsageSet {
            source: "test".into(),
            ..UsageSet::default()
        };
        for (kind, name, container, u) in usage {
            set.containers.insert(
                crate::metrics::usage::ContainerKey {
                    namespace: "default".into(),
                    kind: kind.to_string(),
                    name: name.to_string(),
                    container: container.to_string(),
                },
                u.clone(),
            );
        }
        let facts = RepoFacts::default();
        let mut out = Vec::new();
        for (document, doc) in stream.documents.iter().enumerate() {
            let cx = Context {
                gpu_names: &names,
                facts: &facts,
                kueue_required: false,
                target: Target::local(text, document),
                usage: Some(&set),
                policy,
                default_namespace: "default",
            };
            for obj in objects(doc) {
                if let Some(w) = Workload::of(obj, &catalog) {
                    for h in check_workload(&cx, &w) {
                        if !rule(h.rule).is_some_and(|r| r.enabled_by_default) {
                            continue;
                        }
                        let at = text[h.span.start()..h.span.end()].to_string();
                        out.push((
                            h.rule.to_string(),
                            at,
                            h.message,
                            h.fix.map(|f| f.description),
                        ));
                    }
                }
            }
        }
        out
    }

    pub fn rules_hit(text: &str) -> Vec<String> {
        run(text, &RepoFacts::default(), false)
            .into_iter()
            .map(|(r, at, _)| format!("{r} {at}"))
            .collect()
    }

    /// A Deployment with one container whose `resources:` block is `resources` (indented 10).
    pub fn deployment(resources: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        resources:\n{resources}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_are_unique_and_documented() {
        let mut ids = BTreeSet::new();
        let mut names = BTreeSet::new();
        for r in RULES {
            assert!(ids.insert(r.id), "duplicate id {}", r.id);
            assert!(names.insert(r.name), "duplicate name {}", r.name);
            assert!(
                r.doc.starts_with(&format!("# {} {}", r.id, r.name)),
                "rules/{}.md must start with its title",
                r.id
            );
        }
        assert_eq!(rule("gpu-limit-missing").map(|r| r.id), Some("GPU001"));
        assert_eq!(rule("gpu002").map(|r| r.id), Some("GPU002"));
    }
}

/// A container that gets GPUs: a GPU count other than zero in requests or limits, or DRA claims.
pub(crate) fn is_gpu_container(cx: &Context, c: &Container) -> bool {
    let r = &c.resources;
    let counts = r
        .requests
        .entries
        .iter()
        .chain(&r.limits.entries)
        .filter(|q| cx.gpu_names.classify(q.name) == crate::k8s::gpu::GpuName::Known)
        .any(|q| q.value.text().is_none_or(|t| t.trim() != "0"));
    let spark = c.spark.as_ref().is_some_and(|s| {
        s.gpu_quantity
            .is_some_and(|q| q.text().is_none_or(|t| t != "0"))
    });
    counts || r.has_claims || spark
}
