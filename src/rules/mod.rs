//! The rule catalogue and the engine that runs rule families over workloads.
//!
//! A rule family (one file each) looks at one workload and reports `Hit`s: a rule id, a span and
//! a message. The engine turns hits into findings: it applies the config's severities and
//! enablement, `--select`/`--ignore`, and the suppressions.

mod dra;
mod fields;
mod fit;
mod gpu;
mod gpu_sizing;
pub mod headroom;
mod kueue;
mod model_fit;
pub use model_fit::{Fit, MeasuredFit};
mod qos;
mod render_errors;
mod runtime_view;
pub mod savings;
mod schedule;
mod shm;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::edit::resources::Target;
use crate::edit::{Applicability, Fix};
use crate::k8s::gpu::GpuNames;
use crate::k8s::workload::{Container, ObjectRef, Workload};
use crate::metrics::recommend::Policy;
use crate::metrics::usage::{ContainerKey, UsageSet};
use crate::source::yaml::{offset32, Node, ScalarStyle, Span};

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
    pub rule: Rule,
    /// The id every output prints (`GPU001`).
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

/// Declares every rule once: the `Rule` enum (one variant per rule, in catalogue order) and
/// `RULES`, its metadata in the same order (`Rule::info` indexes it). Adding a rule is one entry
/// here plus its `rules/<ID>.md` (the build fails without it; `tests/integration/registry.rs` checks the
/// rule tables of docs/rules.md and rules/README.md against this list).
macro_rules! registry {
    ($(
        $variant:ident {
            id: $id:literal,
            name: $name:literal,
            severity: $sev:ident,
            enabled_by_default: $on:literal,
            fix: $fix:ident,
            summary: $summary:literal $(,)?
        }
    )*) => {
        /// A rule of the catalogue. Its id (`GPU001`) is what every output prints.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $(#[doc = $summary] $variant,)*
        }

        impl Rule {
            /// The id every output prints (`GPU001`); `const` so that lists of ids can be
            /// written with the variants (`headroom::MEASURED_RULES`).
            pub const fn id(self) -> &'static str {
                match self {
                    $(Rule::$variant => $id,)*
                }
            }
        }

        /// Every rule, in catalogue order (the order of `Rule`). Ids are stable; names are
        /// readable aliases.
        pub static RULES: &[RuleInfo] = &[$(
            RuleInfo {
                rule: Rule::$variant,
                id: $id,
                name: $name,
                severity: Severity::$sev,
                enabled_by_default: $on,
                fix: FixAvailability::$fix,
                summary: $summary,
                doc: include_str!(concat!("../../rules/", $id, ".md")),
            },
        )*];
    };
}

registry! {
    GpuLimitMissing {
        id: "GPU001",
        name: "gpu-limit-missing",
        severity: Error,
        enabled_by_default: true,
        fix: Sometimes,
        summary: "GPU resource requested without a limit: the API server rejects the pod",
    }
    GpuRequestLimitMismatch {
        id: "GPU002",
        name: "gpu-request-limit-mismatch",
        severity: Error,
        enabled_by_default: true,
        fix: Always,
        summary: "GPU request differs from its limit: the API server rejects the pod",
    }
    GpuQuantityInvalid {
        id: "GPU003",
        name: "gpu-quantity-invalid",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "GPU quantity is not a whole, non-negative number",
    }
    GpuResourceUnknown {
        id: "GPU004",
        name: "gpu-resource-unknown",
        severity: Warning,
        enabled_by_default: true,
        fix: Sometimes,
        summary: "resource name looks like a GPU but no device plugin advertises it",
    }
    GpuQuantityUnresolved {
        id: "GPU005",
        name: "gpu-quantity-unresolved",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "GPU quantity is an unrendered placeholder and was not checked",
    }
    GpuMemoryLimitMissing {
        id: "QOS001",
        name: "gpu-memory-limit-missing",
        severity: Warning,
        enabled_by_default: true,
        fix: Sometimes,
        summary: "GPU container without a memory limit",
    }
    GpuBurstableQos {
        id: "QOS002",
        name: "gpu-burstable-qos",
        severity: Warning,
        enabled_by_default: true,
        fix: Sometimes,
        summary: "a container of a GPU pod (init containers and sidecars included) without CPU and memory requests = limits: the pod is Burstable",
    }
    GpuCpuRequestMissing {
        id: "QOS003",
        name: "gpu-cpu-request-missing",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "GPU container without a CPU request",
    }
    RequestAboveLimit {
        id: "RES001",
        name: "request-above-limit",
        severity: Error,
        enabled_by_default: true,
        fix: Always,
        summary: "CPU, memory or ephemeral-storage request above its limit: the API server rejects the pod",
    }
    ShmSizeLimitMissing {
        id: "SHM001",
        name: "shm-size-limit-missing",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "memory-backed emptyDir in a GPU pod without a sizeLimit",
    }
    ShmSizeLimitExceedsMemoryLimit {
        id: "SHM002",
        name: "shm-size-limit-exceeds-memory-limit",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "memory-backed emptyDir sizeLimit at or above the memory limit of a container mounting it",
    }
    KueueQueueNameMissing {
        id: "KUE001",
        name: "kueue-queue-name-missing",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "GPU batch workload without a kueue.x-k8s.io/queue-name label where Kueue queues exist",
    }
    KueueLocalQueueUnknown {
        id: "KUE002",
        name: "kueue-local-queue-unknown",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "kueue.x-k8s.io/queue-name names no LocalQueue in the workload's namespace: the job stays suspended",
    }
    KueueClusterQueueUnknown {
        id: "KUE003",
        name: "kueue-cluster-queue-unknown",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a LocalQueue points to a ClusterQueue the repo does not define: its workloads are never admitted",
    }
    KueueNamespaceNotSelected {
        id: "KUE004",
        name: "kueue-namespace-not-selected",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a LocalQueue's namespace is excluded by its ClusterQueue's namespaceSelector",
    }
    KueueQuotaNeverAdmits {
        id: "KUE005",
        name: "kueue-quota-never-admits",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a workload asks for more than its ClusterQueue can ever reach, borrowing included",
    }
    KueueResourceNotCovered {
        id: "KUE006",
        name: "kueue-resource-not-covered",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a workload requests a resource no resource group of its ClusterQueue covers",
    }
    KueueFlavorNodeLabelsConflict {
        id: "KUE007",
        name: "kueue-flavor-node-labels-conflict",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "the pod's nodeSelector/required affinity contradicts every flavor that covers its GPUs",
    }
    KaiQueueUnknown {
        id: "KUE008",
        name: "kai-queue-unknown",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a kai.scheduler/queue label names no KAI Queue the repo defines",
    }
    DraContainerClaimUnknown {
        id: "DRA001",
        name: "dra-container-claim-unknown",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a container's resources.claims names no entry of the pod's resourceClaims: rejected",
    }
    DraClaimSourceMissing {
        id: "DRA002",
        name: "dra-claim-source-missing",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a pod claim names neither resourceClaimTemplateName nor resourceClaimName: rejected",
    }
    DraClaimUnknown {
        id: "DRA003",
        name: "dra-claim-unknown",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a pod claim names a ResourceClaimTemplate or ResourceClaim the repo does not define",
    }
    DraSharedClaimMultiReplica {
        id: "DRA004",
        name: "dra-shared-claim-multi-replica",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "a resourceClaimName in a multi-replica pod template: every pod shares one device set",
    }
    DraRequestShapeV1beta1 {
        id: "DRA005",
        name: "dra-request-shape-v1beta1",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "deviceClassName directly on a request under resource.k8s.io/v1 (or v1beta2), where exactly: is required",
    }
    DraGpuAllocatedTwice {
        id: "DRA006",
        name: "dra-gpu-allocated-twice",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "a container asks for nvidia.com/gpu and for GPUs through a DRA claim: two allocations",
    }
    DraMigProfileUnknown {
        id: "DRA007",
        name: "dra-mig-profile-unknown",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "a CEL selector asks for a MIG profile no NVIDIA GPU offers",
    }
    DraGpuCountUnknown {
        id: "DRA008",
        name: "dra-gpu-count-unknown",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "a GPU request with allocationMode: All: the number of GPUs is not known from the repo",
    }
    MemoryLimitBelowUsage {
        id: "MEM001",
        name: "memory-limit-below-usage",
        severity: Error,
        enabled_by_default: true,
        fix: Always,
        summary: "memory limit below the measured recommendation: the container will be OOMKilled",
    }
    MemoryOverprovisioned {
        id: "MEM002",
        name: "memory-overprovisioned",
        severity: Warning,
        enabled_by_default: true,
        fix: Always,
        summary: "memory request far above the measured recommendation: memory held idle",
    }
    OomKilled {
        id: "MEM003",
        name: "oom-killed",
        severity: Error,
        enabled_by_default: true,
        fix: Sometimes,
        summary: "container was OOMKilled in the measurement window",
    }
    UsageDataInsufficient {
        id: "MEM004",
        name: "usage-data-insufficient",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "too few samples or too little history for a recommendation",
    }
    OomKillAddressed {
        id: "MEM005",
        name: "oom-kill-addressed",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "OOMKilled in the window; the memory limit now covers the recommendation",
    }
    CpuRequestFarFromUsage {
        id: "CPU001",
        name: "cpu-request-far-from-usage",
        severity: Warning,
        enabled_by_default: true,
        fix: Always,
        summary: "CPU request far from the measured P99",
    }
    GpuUnderused {
        id: "GPU010",
        name: "gpu-underused",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "average GPU utilisation below the threshold: GPUs sit idle",
    }
    GpuMemoryPressure {
        id: "GPU011",
        name: "gpu-memory-pressure",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "GPU memory use near capacity at P99: CUDA out-of-memory risk",
    }
    GpuParallelismMismatch {
        id: "GPU012",
        name: "gpu-parallelism-mismatch",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "an engine's parallelism flags start more or fewer ranks than the container's GPUs",
    }
    GpuMigCandidate {
        id: "GPU013",
        name: "gpu-mig-candidate",
        severity: Warning,
        enabled_by_default: true,
        fix: Sometimes,
        summary: "a whole GPU whose measured memory and compute fit a MIG slice",
    }
    GpuCountOverprovisioned {
        id: "GPU014",
        name: "gpu-count-overprovisioned",
        severity: Warning,
        enabled_by_default: true,
        fix: Never,
        summary: "fewer GPUs busy than requested over the whole window",
    }
    GpuMemoryPreallocated {
        id: "GPU015",
        name: "gpu-memory-preallocated",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "an inference engine preallocates GPU memory: not judged by its framebuffer",
    }
    NoNodeFits {
        id: "FIT001",
        name: "no-node-fits",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a pod's CPU, memory or GPU requests exceed every node its selector allows (measured nodes)",
    }
    ModelWeightsDoNotFit {
        id: "FIT002",
        name: "model-weights-do-not-fit",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "an inference engine's model weights exceed the GPU memory it may use: it cannot load",
    }
    ModelContextDoesNotFit {
        id: "FIT003",
        name: "model-context-does-not-fit",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "the KV cache of one sequence of max-model-len does not fit beside the weights: the engine refuses to start",
    }
    ModelConcurrencyLow {
        id: "FIT004",
        name: "model-concurrency-low",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "the KV cache holds fewer sequences of max-model-len than the engine batches",
    }
    ModelUnknown {
        id: "FIT005",
        name: "model-unknown",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "an inference engine serves a model that is not in the model catalogue (or a Kaito Workspace's instance type or ConfigMap is unknown): its fit is not checked",
    }
    UsageDataMissing {
        id: "MET001",
        name: "usage-data-missing",
        severity: Info,
        enabled_by_default: true,
        fix: Never,
        summary: "GPU container without usage data: not judged against measurements",
    }
    GpuTolerationMissing {
        id: "SCH001",
        name: "gpu-toleration-missing",
        severity: Warning,
        enabled_by_default: false,
        fix: Never,
        summary: "GPU pod without a toleration for the GPU node taint",
    }
    RenderedContainerWithoutImage {
        id: "KUS001",
        name: "rendered-container-without-image",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a container has no image after rendering (a patch replaced a CRD's container list)",
    }
    GpuNodeSelectorMissing {
        id: "SCH002",
        name: "gpu-node-selector-missing",
        severity: Warning,
        enabled_by_default: false,
        fix: Never,
        summary: "GPU pod without a node selector or affinity on a GPU product label",
    }
    UnknownField {
        id: "FLD001",
        name: "unknown-field",
        severity: Error,
        enabled_by_default: true,
        fix: Never,
        summary: "a key Kubernetes does not know in a pod spec, a container or its resources (`request:`, `memroy:`): rejected, or dropped",
    }
}

impl Rule {
    /// Its metadata.
    pub fn info(self) -> &'static RuleInfo {
        // `RULES` lists the rules in the enum's order (checked by a test).
        &RULES[self as usize]
    }

    /// The rule an id (any case) or a name designates.
    pub fn parse(id_or_name: &str) -> Option<Rule> {
        rule(id_or_name).map(|r| r.rule)
    }

    /// The rule an id or name designates, else an error naming it, with the closest id or
    /// name when one is near (a typo: `GPU01` suggests `GPU001`).
    pub fn parse_or_suggest(id_or_name: &str) -> Result<Rule, String> {
        Rule::parse(id_or_name).ok_or_else(|| {
            let mut message = format!("unknown rule {id_or_name:?}");
            if let Some(near) = did_you_mean(id_or_name) {
                message.push_str(&format!("; did you mean `{near}`?"));
            }
            message
        })
    }
}

/// Its id: where a string is expected (`rule(hit.rule)`, `Config::ignored(path, r.id)`).
impl AsRef<str> for Rule {
    fn as_ref(&self) -> &str {
        self.id()
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// The id or name closest to `text` when close enough to be a typo (ids compared in capitals).
fn did_you_mean(text: &str) -> Option<&'static str> {
    let upper = text.to_ascii_uppercase();
    let id = kueue::did_you_mean(&upper, RULES.iter().map(|r| r.id));
    id.or_else(|| kueue::did_you_mean(text, RULES.iter().map(|r| r.name)))
}

/// The rule an id (any case) or a name designates.
pub fn rule(id_or_name: impl AsRef<str>) -> Option<&'static RuleInfo> {
    let id_or_name = id_or_name.as_ref();
    RULES
        .iter()
        .find(|r| r.id.eq_ignore_ascii_case(id_or_name) || r.name == id_or_name)
}

/// What a rule family reports: the engine adds the object, file and severity.
#[derive(Clone, Debug)]
pub struct Hit {
    pub rule: Rule,
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
    /// The model-fit arithmetic a FIT finding judged by (its figures are the message's).
    pub fit: Option<model_fit::Fit>,
    /// Where else a suppression comment may sit, when `span` points inside a multi-line value
    /// (a flag in a script): a block scalar's header line, since no YAML comment fits inside it.
    pub comment_anchor: Option<Span>,
}

impl Hit {
    pub fn new(rule: Rule, span: Span, message: String, label: String) -> Hit {
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
            fit: None,
            comment_anchor: None,
        }
    }

    /// What following the finding frees: `gpus` per pod of `c`'s pods in `w`.
    pub fn frees(mut self, gpus: f64, w: &Workload, c: &Container) -> Hit {
        self.frees = savings::Frees::new(gpus, w, c);
        self
    }

    pub fn fit(mut self, fit: model_fit::Fit) -> Hit {
        self.fit = Some(fit);
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

    /// A suppression comment at `value` (on its first line or the line above) counts too.
    pub fn comment_anchor(mut self, value: Span) -> Hit {
        self.comment_anchor = Some(value);
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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RepoFacts {
    /// Kueue LocalQueue names by namespace (`default` when the manifest has none).
    pub local_queues: BTreeMap<String, BTreeSet<String>>,
    /// Kueue's (and KAI's) queues, quotas and flavors, and Namespace labels.
    pub kueue: crate::k8s::kueue::KueueFacts,
    /// DRA ResourceClaimTemplates and ResourceClaims.
    pub dra: crate::k8s::dra::DraFacts,
    /// Kaito's inference ConfigMaps (a Workspace's `inference.config`).
    pub kaito: crate::k8s::kaito::KaitoFacts,
    /// KServe's serving runtimes (a predictor model's `runtime`).
    pub kserve: crate::k8s::kserve::RuntimeFacts,
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
        self.kaito.add(object);
        self.kserve.add(object);
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

/// Whether a rule's verdict reads objects besides the workload (`Context::facts`: queues,
/// quotas, flavors, namespaces, claims, Kaito's inference ConfigMaps): the Kueue and DRA
/// families, SCH001 (a Kueue flavor's tolerations) and FIT002–FIT005 (a Kueue flavor's or a DRA
/// claim's GPU, a Kaito Workspace's ConfigMap). `--changed-since` keeps their findings when such
/// an object changed.
pub fn reads_repo_facts(rule: Rule) -> bool {
    let id = rule.id();
    id.starts_with("KUE")
        || id.starts_with("DRA")
        || matches!(
            rule,
            Rule::GpuTolerationMissing
                | Rule::ModelWeightsDoNotFit
                | Rule::ModelContextDoesNotFit
                | Rule::ModelConcurrencyLow
                | Rule::ModelUnknown
        )
}

/// Kinds checked on their own, not as workloads (they run no pods): a LocalQueue's target, a
/// DRA claim's requests.
pub fn checks_object(id: &ObjectRef) -> bool {
    let queue = id.kind == "LocalQueue" && id.api_version.starts_with(crate::k8s::kueue::GROUP);
    let claim = matches!(id.kind.as_str(), "ResourceClaimTemplate" | "ResourceClaim")
        && id.api_version.starts_with(crate::k8s::dra::GROUP);
    queue || claim
}

/// The view the rules check an object through: a kind checked on its own ([`checks_object`]),
/// else a workload (its pod templates and containers), else a Kaito Workspace with no pod
/// template (the fit rules size its preset), else nothing.
pub fn view<'a>(
    object: crate::k8s::workload::Object<'a>,
    catalog: &crate::k8s::catalog::Catalog,
) -> Option<Workload<'a>> {
    if checks_object(&object.id) {
        return Some(Workload::bare(object));
    }
    if crate::k8s::kaito::is_workspace(&object.id) {
        let bare = object.clone();
        return Some(Workload::of(object, catalog).unwrap_or_else(|| Workload::bare(bare)));
    }
    Workload::of(object, catalog)
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
    /// The cluster that applies the object (`None`: the implicit one): part of its metrics
    /// identity, and whose nodes it must fit.
    pub cluster: Option<&'a str>,
    /// The model catalogue: the built-in one and the config's `models:`.
    pub models: &'a crate::k8s::model::Catalogue,
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
    model_fit::check(cx, w, &mut hits);
    headroom::check(cx, w, &mut hits);
    schedule::check(cx, w, &mut hits);
    render_errors::check(cx, w, &mut hits);
    fields::check(cx, w, &mut hits);
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
    /// The model-fit arithmetic of a FIT finding.
    pub fit: Option<model_fit::Fit>,
    pub suppression: Option<Suppression>,
    /// What the object was read from, and so where a fix of it lands.
    pub origin: Origin,
    /// The namespace the object lands in: its own, else the release's or the configured
    /// default; `None` for a cluster-scoped kind.
    pub namespace: Option<String>,
    /// The cluster that applies the object (`None`: no GitOps declaration reaches it).
    pub cluster: Option<String>,
    /// What this run's `--fix` does with its fix, once the fix plan decided it
    /// (`fix::plan::mark`); `None` until then (the fix alone says whether it is fixable).
    pub fix_status: Option<FixStatus>,
}

/// What the fix plan did with a finding's fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FixStatus {
    /// `--fix` writes it.
    Lands,
    /// `--fix` refuses it, for this reason (what its `not fixed:` line says).
    Refused(String),
    /// Planned but not written (stdin, or still clashing after the last round).
    NotWritten,
}

/// What a finding's object was read from. `Finding::file` and `span` say where the finding is
/// shown (for a rendered object, the file and bytes that wrote the field); the origin says which
/// text a fix must change and verify: the file itself, or a render to run again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// A plain manifest: the object is the file's own text.
    File,
    /// The render of a Kustomize root (index in the run's units).
    Kustomize(usize),
    /// The render of a Helm release (index in the run's releases).
    Helm(usize),
}

impl Finding {
    /// Whether what it says comes from the measurement: a rule judged against usage, or a
    /// finding whose fix writes measured values (QOS001, QOS002, RES001 with a snapshot). The
    /// one test for "this finding is about what was measured": the right-sizing pull request
    /// (`--measured-only`) and the guard on files several clusters apply use it.
    pub fn is_measured(&self) -> bool {
        headroom::MEASURED_RULES.contains(&self.rule.id) || self.recommended.is_some()
    }

    /// The measured container it is on (namespace, kind, name, container), the key of its usage.
    pub fn container_key(&self) -> Option<ContainerKey> {
        Some(ContainerKey {
            cluster: self.cluster.clone(),
            namespace: self.namespace.clone().unwrap_or_default(),
            kind: self.object.kind.clone(),
            name: self.object.name.clone()?,
            container: self.container.clone()?,
        })
    }

    /// Whether `--fix` writes a fix for it: it carries a safe fix that the plan, when it ran,
    /// did not refuse.
    pub fn fixable(&self) -> bool {
        self.planned_to_land()
            && self
                .fix
                .as_ref()
                .is_some_and(|f| f.applicability == Applicability::Safe)
    }

    /// Whether it carries a fix that only `--fix --unsafe-fixes` writes (and that the plan, when
    /// it ran with them, did not refuse).
    pub fn unsafe_fixable(&self) -> bool {
        self.planned_to_land()
            && self
                .fix
                .as_ref()
                .is_some_and(|f| f.applicability == Applicability::Unsafe)
    }

    fn planned_to_land(&self) -> bool {
        matches!(self.fix_status, None | Some(FixStatus::Lands))
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

/// Where `flag` and its value are written inside `node`, a script (`bash -c "… --flag=2 …"`)
/// or an argument: the flag's own text, when the node's text in its file holds that flag
/// exactly once; else the whole node (a flag written twice, or in a comment, is not guessed at).
/// Second, where a suppression comment for it may sit ([`Hit::comment_anchor`]): a block
/// scalar's header line (`- |`), the node's first line otherwise.
pub(crate) fn flag_span(cx: &Context, node: &Node, flag: &str) -> (Span, Span) {
    let whole = node.span;
    let Some(text) = cx.target.text_of(whole.source) else {
        return (whole, whole);
    };
    let block = node
        .as_scalar()
        .is_some_and(|s| matches!(s.style, ScalarStyle::Literal | ScalarStyle::Folded));
    // A block scalar's span starts on its first content line (blank lines before it are
    // content too): its header is the last line before with anything on it.
    let anchor = text
        .get(..whole.start())
        .filter(|_| block)
        .map(str::trim_end)
        .filter(|header| !header.is_empty())
        .map_or(whole, |header| {
            let at = header.rfind('\n').map_or(0, |i| i + 1);
            Span {
                start: offset32(at),
                end: offset32(at),
                source: whole.source,
            }
        });
    let Some(raw) = text.get(whole.range()) else {
        return (whole, anchor);
    };
    let bytes = raw.as_bytes();
    let ends_word = |b: u8| b.is_ascii_whitespace() || b"\"',[]=;&|\\".contains(&b);
    let mut found = raw.match_indices(flag).filter(|(at, _)| {
        let before = at.checked_sub(1).and_then(|i| bytes.get(i));
        let after = bytes.get(at + flag.len());
        before.is_none_or(|&b| ends_word(b)) && after.is_none_or(|&b| ends_word(b))
    });
    let (Some((at, _)), None) = (found.next(), found.next()) else {
        return (whole, anchor);
    };
    // The value: `=2`, or the next word after blanks.
    let mut end = at + flag.len();
    let rest = bytes.get(end..).unwrap_or_default();
    let value_start = match rest.first() {
        Some(b'=') => 1,
        _ => rest
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count(),
    };
    let value_len = rest
        .get(value_start..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| !ends_word(b))
        .count();
    if value_len > 0 {
        end += value_start + value_len;
    }
    let span = Span {
        start: offset32(whole.start() + at),
        end: offset32(whole.start() + end),
        source: whole.source,
    };
    (span, anchor)
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
        let models = crate::k8s::model::Catalogue::default();
        for (document, doc) in stream.documents.iter().enumerate() {
            let cx = Context {
                models: &models,
                cluster: None,
                gpu_names: &names,
                facts,
                kueue_required,
                target: Target::local(text, document),
                usage: None,
                policy: &policy,
                default_namespace: "default",
            };
            for obj in objects(doc) {
                if let Some(w) = view(obj, &catalog) {
                    for h in check_workload(&cx, &w) {
                        if !all && !h.rule.info().enabled_by_default {
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
                    cluster: None,
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
        let models = crate::k8s::model::Catalogue::default();
        for (document, doc) in stream.documents.iter().enumerate() {
            let cx = Context {
                models: &models,
                cluster: None,
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
                        if !h.rule.info().enabled_by_default {
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
        // `Rule::info` indexes `RULES` by the variant.
        for r in RULES {
            assert_eq!(r.rule.info().id, r.id);
            assert_eq!(Rule::parse(r.id), Some(r.rule));
            assert_eq!(Rule::parse(r.name), Some(r.rule));
            assert_eq!(r.rule.to_string(), r.id);
        }
        assert_eq!(rule("gpu002").map(|r| r.id), Some("GPU002"));
    }

    #[test]
    fn an_unknown_rule_names_the_closest_id_or_name() {
        let near = |text: &str| Rule::parse_or_suggest(text).unwrap_err();
        assert_eq!(
            near("GPU01"),
            "unknown rule \"GPU01\"; did you mean `GPU001`?"
        );
        assert_eq!(
            near("qos02"),
            "unknown rule \"qos02\"; did you mean `QOS002`?"
        );
        assert_eq!(
            near("gpu-limit-mising"),
            "unknown rule \"gpu-limit-mising\"; did you mean `gpu-limit-missing`?"
        );
        // Nothing close: no guess.
        assert_eq!(near("GPU999"), "unknown rule \"GPU999\"");
        assert_eq!(near("banana"), "unknown rule \"banana\"");
        assert_eq!(Rule::parse_or_suggest("gpu001"), Ok(Rule::GpuLimitMissing));
    }
}

/// A container that gets GPUs: a GPU count other than zero in requests or limits, or DRA claims.
pub(crate) fn is_gpu_container(cx: &Context, c: &Container) -> bool {
    requests_gpus(cx.gpu_names, c)
}

/// [`is_gpu_container`] with the run's GPU resource names (for the measurements' coverage).
pub fn requests_gpus(gpu_names: &GpuNames, c: &Container) -> bool {
    let r = &c.resources;
    let counts = r
        .requests
        .entries
        .iter()
        .chain(&r.limits.entries)
        .filter(|q| gpu_names.classify(q.name) == crate::k8s::gpu::GpuName::Known)
        .any(|q| q.value.text().is_none_or(|t| t.trim() != "0"));
    let spark = c.spark.as_ref().is_some_and(|s| {
        s.gpu_quantity
            .is_some_and(|q| q.text().is_none_or(|t| t != "0"))
    });
    counts || r.has_claims || spark
}
