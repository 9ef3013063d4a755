//! GPU012–GPU015: the GPU itself sized. GPU012 (static) compares an engine's parallelism flags
//! with the container's GPU count. With measurements: GPU013 recommends a MIG slice instead of a
//! whole GPU, GPU014 fewer GPUs when some sat idle, GPU015 says an engine that preallocates
//! GPU memory was not judged by its framebuffer. Engines come from `rules/engines.yaml`, MIG
//! profiles from `rules/mig-profiles.yaml`.

use super::gpu::{judge, Judged};
use super::headroom::usage_of;
use super::{container_label, Context, Hit, Rule};
use crate::edit::resources::rename_resource;
use crate::k8s::engine::{self, Engine, Parallelism};
use crate::k8s::podsets::lws_group;
use crate::k8s::workload::{Container, Workload};
use crate::metrics::mig::{self, NoFit};
use crate::metrics::recommend::MigStrategy;
use crate::metrics::usage::Usage;
use crate::quantity::gib;

/// The whole-GPU resource a MIG slice replaces.
const WHOLE_GPU: &str = "nvidia.com/gpu";

/// Kinds whose pods together run one engine instance (ranks across pods): an engine whose
/// parallelism counts all ranks (vLLM, SGLang, TensorRT-LLM) is not compared per pod there.
const MULTI_NODE_KINDS: &[&str] = &[
    "LeaderWorkerSet",
    "RayCluster",
    "RayService",
    "RayJob",
    "JobSet",
    "PyTorchJob",
    "MPIJob",
    "TrainJob",
];

/// The number of GPU devices a container gets: the sum of its known GPU resources in limits
/// (else requests). `None` when a count is not a whole number (a placeholder, an error that
/// GPU003/GPU005 report) or there is none.
pub(crate) fn gpu_count(cx: &Context, c: &Container) -> Option<u64> {
    let r = &c.resources;
    let side = if r.limits.entries.is_empty() {
        &r.requests
    } else {
        &r.limits
    };
    let mut total = 0u64;
    let mut any = false;
    for q in &side.entries {
        if cx.gpu_names.classify(q.name) != crate::k8s::gpu::GpuName::Known {
            continue;
        }
        let Judged::Valid(v) = judge(q.value) else {
            return None;
        };
        let n = u64::try_from(v.as_whole_i128()?).ok()?;
        total = total.checked_add(n)?;
        any = true;
    }
    any.then_some(total)
}

/// Whole GPUs requested as `nvidia.com/gpu` (the resource a MIG slice replaces).
fn whole_gpus(c: &Container) -> Option<u64> {
    let q = c
        .resources
        .limits
        .get(WHOLE_GPU)
        .or(c.resources.requests.get(WHOLE_GPU))?;
    match judge(q.value) {
        Judged::Valid(v) => u64::try_from(v.as_whole_i128()?).ok(),
        _ => None,
    }
}

fn uses_mig(c: &Container) -> bool {
    let r = &c.resources;
    r.limits
        .entries
        .iter()
        .chain(&r.requests.entries)
        .any(|q| q.name.starts_with("nvidia.com/mig-"))
}

/// The GPUs the ranks of a container's engine run on: the container's own, or, for an engine
/// whose flags count ranks across pods (`per_pod: false`) in a LeaderWorkerSet, the group's.
struct RankGpus {
    gpus: u64,
    /// For a group: how it is made up, for people (`a LeaderWorkerSet group of 2 pods: …`).
    group: Option<String>,
    /// Pods of the container's pod set in one group (idle GPUs are freed per group).
    pods_per_group: u64,
}

/// Where the ranks of `c`'s engine land, when that can be counted: `None` for an engine
/// counting ranks across pods in another multi-node kind, or with a multi-node flag.
fn rank_gpus(
    cx: &Context,
    w: &Workload,
    c: &Container,
    engine: &Engine,
    p: &Parallelism,
) -> Option<RankGpus> {
    if p.skip_flag.is_some() {
        return None;
    }
    let kind = w.object.id.kind.as_str();
    if engine.per_pod || !MULTI_NODE_KINDS.contains(&kind) {
        return Some(RankGpus {
            gpus: gpu_count(cx, c)?,
            group: None,
            pods_per_group: 1,
        });
    }
    let (size, sets) = lws_group(w)?;
    // Every pod of the group has a template here (none is left to an unknown set).
    if sets.iter().map(|(_, n)| n).sum::<u64>() != size {
        return None;
    }
    let index = w.containers.iter().position(|x| x.path == c.path)?;
    let mut gpus = 0u64;
    let mut parts = Vec::new();
    let mut pods_per_group = None;
    for (set, per_group) in &sets {
        let mut per_pod = 0u64;
        for x in set.containers.iter().filter_map(|&i| w.containers.get(i)) {
            if x.init || !super::is_gpu_container(cx, x) {
                continue;
            }
            per_pod = per_pod.checked_add(gpu_count(cx, x)?)?;
        }
        gpus = gpus.checked_add(per_pod.checked_mul(*per_group)?)?;
        parts.push(format!("{per_group} {} pod(s) × {per_pod}", set.name));
        if set.containers.contains(&index) {
            pods_per_group = Some(*per_group);
        }
    }
    Some(RankGpus {
        gpus,
        group: Some(format!(
            "a LeaderWorkerSet group of {size} pod(s): {}",
            parts.join(" + ")
        )),
        pods_per_group: pods_per_group.filter(|n| *n > 0)?,
    })
}

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    // A KServe model with no image runs its serving runtime's engine and flags.
    super::runtime_view::each_serving(cx, w, hits, check_container);
}

fn check_container(cx: &Context, w: &Workload, c: &Container, hits: &mut Vec<Hit>) {
    let engine = engine::detect(c);
    if let Some(e) = engine {
        check_parallelism(cx, w, c, e, hits);
    }
    if let Some(usage) = &usage_of(cx, w, c) {
        if super::is_gpu_container(cx, c) {
            check_measured(cx, w, c, engine, usage, hits);
        }
    }
}

/// GPU012: ranks started by the flags vs the container's GPUs.
fn check_parallelism(cx: &Context, w: &Workload, c: &Container, e: &Engine, hits: &mut Vec<Hit>) {
    let p = engine::parallelism(e, c);
    let (Some(ranks), Some(on)) = (p.ranks(), rank_gpus(cx, w, c, e, &p)) else {
        return;
    };
    let gpus = on.gpus;
    if ranks == gpus || gpus == 0 {
        return;
    }
    let Some(first) = p.factors.first() else {
        return;
    };
    let who = container_label(c);
    let flags = p.describe();
    let (consequence, label) = if ranks > gpus {
        (
            "more ranks than GPUs: it fails at start".to_string(),
            format!("{ranks} ranks, {gpus} GPUs"),
        )
    } else {
        (
            format!("{} GPU(s) sit idle", gpus - ranks),
            format!("{ranks} ranks, {gpus} GPUs"),
        )
    };
    let (span, comment_anchor) = super::flag_span(cx, first.node, &first.flag);
    let mut hit = Hit::new(
        Rule::GpuParallelismMismatch,
        span,
        format!(
            "{} in {who} starts {ranks} rank(s) ({flags}) on {gpus} GPU(s){}: {consequence}",
            e.name,
            on.group
                .as_deref()
                .map_or_else(String::new, |g| format!(", {g}"))
        ),
        label,
    )
    .help(match &on.group {
        None => format!(
            "make the product of the parallelism flags equal the GPUs of the pod ({gpus}), or request {ranks} GPU(s)"
        ),
        Some(_) => format!(
            "make the product of the parallelism flags equal the GPUs of the group ({gpus}), or size the group (`size`, GPUs per pod) for {ranks} GPU(s)"
        ),
    })
    .comment_anchor(comment_anchor)
    .container(c);
    if ranks < gpus {
        // Idle GPUs are per group: spread over the container's pods in one group.
        hit = hit.frees((gpus - ranks) as f64 / on.pods_per_group as f64, w, c);
    }
    hits.push(hit);
}

fn percent(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

fn check_measured(
    cx: &Context,
    w: &Workload,
    c: &Container,
    engine: Option<&Engine>,
    usage: &Usage,
    hits: &mut Vec<Hit>,
) {
    let preallocating = engine.filter(|e| e.preallocates.is_some());
    if let Some(e) = preallocating {
        if usage.kv_cache_usage.and_then(|k| k.p99).is_none() && usage.gpu_memory_bytes.is_some() {
            hits.push(not_judged(c, e));
        }
    }
    check_count(cx, w, c, engine, usage, hits);
    check_mig(cx, w, c, preallocating, usage, hits);
}

/// GPU015: an engine that reserves GPU memory up front without KV-cache measurements.
fn not_judged(c: &Container, e: &Engine) -> Hit {
    let flag = e.preallocates.as_deref().unwrap_or_default();
    let metrics = if e.kv_cache_metrics.is_empty() {
        "it exports no KV-cache metric gpulint reads".to_string()
    } else {
        format!(
            "no KV-cache usage ({}) was measured",
            e.kv_cache_metrics.join(", ")
        )
    };
    Hit::new(
        Rule::GpuMemoryPreallocated,
        super::container_anchor(c),
        format!(
            "not judged: {} in {} preallocates GPU memory by {flag}, so its framebuffer use says nothing about its need, and {metrics}",
            e.name,
            container_label(c)
        ),
        "engine preallocates GPU memory".into(),
    )
    .help("scrape the engine's /metrics endpoint so that the snapshot has kv_cache_usage; GPU memory pressure and MIG sizing are then judged from the KV cache")
    .container(c)
}

/// GPU014: fewer GPUs busy than requested, for the whole window.
fn check_count(
    cx: &Context,
    w: &Workload,
    c: &Container,
    engine: Option<&Engine>,
    usage: &Usage,
    hits: &mut Vec<Hit>,
) {
    let (Some(requested), Some(used)) = (gpu_count(cx, c), usage.gpus_used) else {
        return;
    };
    if used >= requested || requested < 2 {
        return;
    }
    let Some(q) = c
        .resources
        .limits
        .entries
        .iter()
        .chain(&c.resources.requests.entries)
        .find(|q| cx.gpu_names.is_gpu(q.name))
    else {
        return;
    };
    let parallelism = engine
        .map(|e| (e, engine::parallelism(e, c)))
        .filter(|(_, p)| !p.factors.is_empty());
    // The ranks the flags start on this pod's GPUs. In a LeaderWorkerSet group the flags
    // count the group's ranks: as many as the group's GPUs is one on every GPU of this pod too
    // (`group` says so); fewer cannot be placed on this pod's GPUs, so none are counted.
    let mut group = None;
    let ranks = parallelism.as_ref().and_then(|(e, p)| {
        let on = rank_gpus(cx, w, c, e, p)?;
        let ranks = p.ranks()?;
        match on.group {
            None => Some(ranks),
            Some(g) if ranks == on.gpus => {
                group = Some((ranks, g));
                Some(requested)
            }
            Some(_) => None,
        }
    });
    let described = parallelism.as_ref().map(|(_, p)| p.describe());
    let flags = described
        .as_deref()
        .map(|d| format!("; change {d} with it"))
        .unwrap_or_else(|| {
            "; no parallelism flag was found: check how the program picks its GPUs".into()
        });
    let who = container_label(c);
    let keep = used.max(1);
    let measured = format!(
        "{who} has {requested} GPUs, {used} busy over the window (average engine activity at least 5%)"
    );
    let hit = match (ranks, described.as_deref()) {
        // One rank per GPU now: the idleness was measured under other flags (or the program
        // ignores its ranks); fewer GPUs would undo the fix of the flags.
        (Some(ranks), Some(d)) if ranks == requested => Hit::new(
            Rule::GpuCountOverprovisioned,
            q.value.span,
            format!(
                "{measured}, but its flags ({d}) now start {}, one per GPU: the measurement does not describe this manifest (it likely predates a change of the parallelism flags): not a reason to request fewer GPUs",
                match &group {
                    Some((all, g)) => format!("{all} ranks on the {all} GPUs of {g}"),
                    None => format!("{ranks} ranks"),
                }
            ),
            format!("{requested} GPUs, {used} busy: stale?"),
        )
        .help("if the flags changed after the window (the fix of GPU012), keep the GPU count and measure again; if they did not, check that the program starts a rank per GPU"),
        // The flags leave GPUs idle: GPU012 reports them (and frees them); count only the rest.
        (Some(ranks), Some(d)) if ranks < requested && ranks >= keep => {
            let idle = requested - ranks;
            let message = if ranks == keep {
                format!(
                    "{measured}: the same {idle} idle GPU(s) that GPU012 reports ({d} starts {ranks} ranks): request {keep} or raise the flags, as GPU012 says"
                )
            } else {
                format!(
                    "{measured}: request {keep}, which frees {} GPU(s) per pod; {idle} of them are the idle GPUs GPU012 reports ({d} starts {ranks} ranks); change {d} with it",
                    requested - keep
                )
            };
            let mut hit = Hit::new(
                Rule::GpuCountOverprovisioned,
                q.value.span,
                message,
                format!("{requested} GPUs, {used} busy"),
            )
            .help("not fixed automatically: the parallelism flags must change with the GPU count");
            if ranks > keep {
                hit = hit.frees((ranks - keep) as f64, w, c);
            }
            hit
        }
        _ => Hit::new(
            Rule::GpuCountOverprovisioned,
            q.value.span,
            format!(
                "{measured}: request {keep}, which frees {} GPU(s) per pod{flags}",
                requested - keep
            ),
            format!("{requested} GPUs, {used} busy"),
        )
        .help("not fixed automatically: the parallelism flags must change with the GPU count")
        .frees((requested - keep) as f64, w, c),
    };
    hits.push(hit.container(c));
}

/// GPU013: one whole GPU whose measured use fits a MIG slice.
fn check_mig(
    cx: &Context,
    w: &Workload,
    c: &Container,
    preallocating: Option<&Engine>,
    usage: &Usage,
    hits: &mut Vec<Hit>,
) {
    if uses_mig(c) || whole_gpus(c) != Some(1) || usage.gpu_count.is_some_and(|n| n > 1) {
        return;
    }
    let Some(p99) = usage.gpu_memory_bytes.and_then(|g| g.p99) else {
        return;
    };
    // The GPU it ran on as measured (DCGM's modelName), else the one GPU the pod can land on
    // (the resolver every GPU rule uses: its node selector, instance type, Kueue flavor). A
    // choice of several is no answer here: their MIG profiles differ.
    let landed = match &usage.gpu_model {
        Some(_) => None,
        None => super::model_fit::landing(cx, w, c).filter(|l| l.others.is_empty()),
    };
    let (model, model_from) = match (&usage.gpu_model, &landed) {
        (Some(m), _) => (m.as_str(), String::new()),
        (None, Some(l)) => (l.gpu.name.as_str(), format!(" (from {})", l.from)),
        (None, None) => return,
    };
    // An engine's framebuffer is its reservation: without KV-cache measurements, no advice.
    let kv = usage.kv_cache_usage.and_then(|k| k.p99);
    if preallocating.is_some() && kv.is_none() {
        return;
    }
    // The precise signal first; DCGM_FI_DEV_GPU_UTIL counts any kernel time, so it can only
    // overstate the compute need.
    let (compute, compute_series) = match usage.gpu_engine_active.and_then(|g| g.p99) {
        Some(v) => (Some(v), "engine activity"),
        None => (usage.gpu_utilization.and_then(|g| g.p99), "GPU utilisation"),
    };
    let fit = match mig::choose(model, p99, cx.policy.memory_margin, compute) {
        Ok(fit) => fit,
        Err(NoFit::NotMigCapable(_) | NoFit::ComputeUnknown | NoFit::TooBig) => return,
    };
    // With the cluster's nodes measured, the fix asks only for a slice some node offers (any
    // other would not schedule: FIT001 on the next run); the smallest offered one that fits.
    let nodes = cx.usage.map(|u| u.nodes_of(cx.cluster)).unwrap_or_default();
    let offers = |p: &mig::Profile| {
        let resource = format!("nvidia.com/mig-{}", p.name);
        nodes.iter().any(|n| {
            n.allocatable(&resource)
                .is_some_and(|q| !q.is_zero() && !q.is_negative())
        })
    };
    let (fit, not_offered) = if nodes.is_empty() {
        (fit, false)
    } else {
        match mig::choose_among(model, p99, cx.policy.memory_margin, compute, offers) {
            Ok(offered) => (offered, false),
            Err(_) => (fit, true),
        }
    };
    let who = container_label(c);
    let profile = &fit.profile.name;
    let resource = format!("nvidia.com/mig-{profile}");
    let engine_note = match (preallocating, kv) {
        (Some(e), Some(kv)) => format!(
            " ({} preallocates: sized from its whole reservation, with its KV cache at {} at P99)",
            e.name,
            percent(kv)
        ),
        _ => String::new(),
    };
    let uses = format!(
        "uses {} of GPU memory at P99 ({} with the {} margin) and {} {compute_series} at P99",
        gib(p99),
        gib(fit.memory_needed),
        percent(cx.policy.memory_margin),
        percent(fit.compute_needed)
    );
    let (change, fix) = match cx.policy.mig_strategy {
        MigStrategy::Mixed if not_offered => (
            format!(
                "no measured node offers `{resource}`: partition a node pool with it, then request `{resource}: 1` instead of `{WHOLE_GPU}: 1`"
            ),
            None,
        ),
        MigStrategy::Mixed => (
            format!("request `{resource}: 1` instead of `{WHOLE_GPU}: 1`"),
            rename_resource(&cx.target, c, WHOLE_GPU, &resource),
        ),
        MigStrategy::Single => (
            format!(
                "under the `single` MIG strategy keep `{WHOLE_GPU}: 1` and select nodes partitioned as {profile} (label `nvidia.com/gpu.product` ending in `-MIG-{profile}`)"
            ),
            None,
        ),
    };
    hits.push(
        Hit::new(
            Rule::GpuMigCandidate,
            c.resources
                .limits
                .get(WHOLE_GPU)
                .or(c.resources.requests.get(WHOLE_GPU))
                .map_or_else(|| super::container_anchor(c), |q| q.key.span),
            format!(
                "{who} holds a whole {}{model_from} but {uses}{engine_note}: MIG {profile} fits and frees {} of the GPU; {change}",
                fit.model.name, fit.frees
            ),
            format!("fits MIG {profile}"),
        )
        .help("a MIG slice has its own memory and compute; the node's GPU must be partitioned with this profile (GPU operator MIG manager, nvidia.com/mig.config)")
        .container(c)
        .with_fix(fix)
        .frees(fit.frees.value(), w, c),
    );
}

#[cfg(test)]
mod tests {
    use crate::metrics::recommend::{MigStrategy, Policy};
    use crate::metrics::usage::{GpuMemory, GpuUtilization, KvCache, Usage};
    use crate::rules::test_support::{rules_hit, run_measured};

    const GB: f64 = 1e9;

    /// A measured container on an H100 80GB: `fb` GB at P99, `engine` activity at P99.
    fn h100(fb: f64, engine: Option<f64>, kv: Option<f64>) -> Usage {
        Usage {
            samples: Some(20_000),
            history_seconds: Some(14.0 * 86400.0),
            gpu_model: Some("NVIDIA H100 80GB HBM3".into()),
            gpu_count: Some(1),
            gpus_used: Some(1),
            gpu_memory_bytes: Some(GpuMemory {
                p99: Some(fb * GB),
                max: Some(fb * GB),
                capacity: Some(80.0 * GB),
            }),
            gpu_engine_active: engine.map(|e| GpuUtilization {
                avg: Some(e / 2.0),
                p99: Some(e),
            }),
            gpu_utilization: Some(GpuUtilization {
                avg: Some(0.5),
                p99: Some(0.9),
            }),
            kv_cache_usage: kv.map(|k| KvCache {
                p99: Some(k),
                max: Some(k),
            }),
            ..Usage::default()
        }
    }

    fn one_gpu(name: &str, image: &str, args: &str, gpu: &str) -> String {
        deployment(&format!("      - name: {name}\n        image: {image}\n        args: {args}\n        resources:\n          limits: {{{gpu}, cpu: 8, memory: 64Gi}}\n          requests: {{{gpu}, cpu: 8, memory: 64Gi}}\n"))
    }

    fn measured(
        text: &str,
        container: &str,
        u: Usage,
        policy: &Policy,
    ) -> Vec<(String, String, String, Option<String>)> {
        run_measured(text, &[("Deployment", "llm", container, u)], policy)
            .into_iter()
            .filter(|h| h.0.starts_with("GPU01") && h.0 != "GPU010")
            .collect()
    }

    #[test]
    fn a_whole_gpu_that_fits_a_slice_is_gpu013_with_an_unsafe_rename() {
        let text = one_gpu(
            "embed",
            "ghcr.io/example/embedder:1",
            "[serve]",
            "nvidia.com/gpu: 1",
        );
        let hits = measured(
            &text,
            "embed",
            h100(8.0, Some(0.1), None),
            &Policy::default(),
        );
        assert_eq!(hits.len(), 1, "{hits:?}");
        let (rule, at, message, fix) = &hits[0];
        assert_eq!((rule.as_str(), at.as_str()), ("GPU013", "nvidia.com/gpu"));
        // 8 GB × 1.15 = 9.2 GB fits 1g.10gb; 10% compute fits 1/7. Shown in GiB, as every
        // report shows memory.
        assert!(message.contains("uses 7.5Gi of GPU memory at P99 (8.6Gi with the 15% margin) and 10% engine activity at P99"), "{message}");
        assert!(
            message.contains("MIG 1g.10gb fits and frees 6/7 of the GPU"),
            "{message}"
        );
        assert!(
            message.contains("request `nvidia.com/mig-1g.10gb: 1` instead of `nvidia.com/gpu: 1`"),
            "{message}"
        );
        assert_eq!(
            fix.as_deref(),
            Some("rename nvidia.com/gpu -> nvidia.com/mig-1g.10gb")
        );
    }

    /// Without DCGM's modelName in the measurements, the GPU is the one the pod's node
    /// selector lands it on (the resolver FIT002 uses), named in the message; a selector that
    /// leaves a choice of GPUs gives no advice (their profiles differ).
    #[test]
    fn without_a_measured_model_the_gpu_comes_from_the_node_selector() {
        let unmodelled = Usage {
            gpu_model: None,
            ..h100(8.0, Some(0.1), None)
        };
        let selected = |selector: &str| {
            one_gpu(
                "embed",
                "ghcr.io/example/embedder:1",
                "[serve]",
                "nvidia.com/gpu: 1",
            )
            .replace(
                "      containers:\n",
                &format!("      nodeSelector: {{{selector}}}\n      containers:\n"),
            )
        };
        let text = selected("nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3");
        let hits = measured(&text, "embed", unmodelled.clone(), &Policy::default());
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(
            hits[0].2.contains(
                "holds a whole H100 80GB (from nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3) but"
            ),
            "{}",
            hits[0].2
        );
        assert!(hits[0].2.contains("MIG 1g.10gb fits"), "{}", hits[0].2);
        // No selector: nothing tells the GPU.
        let bare = one_gpu(
            "embed",
            "ghcr.io/example/embedder:1",
            "[serve]",
            "nvidia.com/gpu: 1",
        );
        assert!(measured(&bare, "embed", unmodelled, &Policy::default()).is_empty());
    }

    #[test]
    fn the_single_strategy_gets_advice_and_no_fix() {
        let text = one_gpu(
            "embed",
            "ghcr.io/example/embedder:1",
            "[serve]",
            "nvidia.com/gpu: 1",
        );
        let policy = Policy {
            mig_strategy: MigStrategy::Single,
            ..Policy::default()
        };
        let hits = measured(&text, "embed", h100(8.0, Some(0.1), None), &policy);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(
            hits[0]
                .2
                .contains("under the `single` MIG strategy keep `nvidia.com/gpu: 1`"),
            "{}",
            hits[0].2
        );
        assert_eq!(hits[0].3, None);
    }

    #[test]
    fn no_slice_is_recommended_when_it_would_not_fit_or_cannot_be_judged() {
        let text = one_gpu(
            "embed",
            "ghcr.io/example/embedder:1",
            "[serve]",
            "nvidia.com/gpu: 1",
        );
        // 41 GB is above the 4g.40gb profile.
        assert_eq!(
            measured(
                &text,
                "embed",
                h100(36.0, Some(0.1), None),
                &Policy::default()
            ),
            []
        );
        // Compute too high for anything below 7g.
        assert_eq!(
            measured(
                &text,
                "embed",
                h100(5.0, Some(0.9), None),
                &Policy::default()
            ),
            []
        );
        // Engine activity not measured: the coarse utilisation (P99 90%) stands in, and is too high.
        assert_eq!(
            measured(&text, "embed", h100(5.0, None, None), &Policy::default()),
            []
        );
        // A model without MIG.
        let l4 = Usage {
            gpu_model: Some("NVIDIA L4".into()),
            ..h100(5.0, Some(0.1), None)
        };
        assert_eq!(measured(&text, "embed", l4, &Policy::default()), []);
        // MIG already in use.
        let mig = one_gpu(
            "embed",
            "ghcr.io/example/embedder:1",
            "[serve]",
            "nvidia.com/mig-3g.40gb: 1",
        );
        assert_eq!(
            measured(
                &mig,
                "embed",
                h100(5.0, Some(0.1), None),
                &Policy::default()
            ),
            []
        );
    }

    #[test]
    fn engine_activity_unknown_falls_back_to_utilisation() {
        let text = one_gpu(
            "embed",
            "ghcr.io/example/embedder:1",
            "[serve]",
            "nvidia.com/gpu: 1",
        );
        let u = Usage {
            gpu_utilization: Some(GpuUtilization {
                avg: Some(0.1),
                p99: Some(0.25),
            }),
            ..h100(8.0, None, None)
        };
        let hits = measured(&text, "embed", u, &Policy::default());
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(
            hits[0].2.contains("25% GPU utilisation at P99"),
            "{}",
            hits[0].2
        );
        assert!(hits[0].2.contains("MIG 2g.20gb"), "{}", hits[0].2);
    }

    #[test]
    fn a_preallocating_engine_is_judged_by_its_kv_cache() {
        let text = one_gpu(
            "vllm",
            "vllm/vllm-openai:v0.10.0",
            "[--model, m]",
            "nvidia.com/gpu: 1",
        );
        // 92% framebuffer, 35% KV cache: no pressure, no MIG (the reservation does not fit).
        let hits = measured(
            &text,
            "vllm",
            h100(73.6, Some(0.3), Some(0.35)),
            &Policy::default(),
        );
        assert_eq!(hits, []);
        // Without KV-cache usage: not judged (GPU015), and no MIG advice.
        let hits = measured(
            &text,
            "vllm",
            h100(73.6, Some(0.3), None),
            &Policy::default(),
        );
        let rules: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(rules, ["GPU015"]);
        assert!(hits[0].2.contains("vLLM in container `vllm` preallocates GPU memory by --gpu-memory-utilization (default 0.9),"), "{}", hits[0].2);
        let hits = measured(
            &text,
            "vllm",
            h100(8.0, Some(0.1), None),
            &Policy::default(),
        );
        assert_eq!(
            hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(),
            ["GPU015"]
        );
        // KV cache at 93% at P99: pressure.
        let hits = measured(
            &text,
            "vllm",
            h100(73.6, Some(0.3), Some(0.93)),
            &Policy::default(),
        );
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].0, "GPU011");
        assert!(
            hits[0].2.contains("uses 93% of its KV cache at P99"),
            "{}",
            hits[0].2
        );
        // A small reservation with KV-cache data: sized from the whole reservation.
        let hits = measured(
            &text,
            "vllm",
            h100(16.0, Some(0.1), Some(0.2)),
            &Policy::default(),
        );
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].2.contains("MIG 1g.20gb fits"), "{}", hits[0].2);
        assert!(
            hits[0]
                .2
                .contains("sized from its whole reservation, with its KV cache at 20% at P99"),
            "{}",
            hits[0].2
        );
    }

    #[test]
    fn framebuffer_pressure_stays_for_other_workloads() {
        let text = one_gpu(
            "train",
            "pytorch/pytorch",
            "[train.py]",
            "nvidia.com/gpu: 1",
        );
        let hits = measured(
            &text,
            "train",
            h100(75.0, Some(0.95), None),
            &Policy::default(),
        );
        assert_eq!(
            hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(),
            ["GPU011"]
        );
    }

    /// In a LeaderWorkerSet the flags count the group's ranks: tp 8 × pp 2 on a group of two
    /// 8-GPU pods is one rank on every GPU of each pod, so 4 busy GPUs of the leader is a
    /// stale measurement, not "request 4" (which would break the group's 16 ranks).
    #[test]
    fn gpu014_counts_a_leader_worker_set_groups_ranks() {
        let lws = |tp: &str| {
            format!("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: vllm\nspec:\n  leaderWorkerTemplate:\n    size: 2\n    leaderTemplate:\n      spec:\n        containers:\n        - name: leader\n          image: vllm/vllm-openai\n          args: [--tensor-parallel-size, \"{tp}\", --pipeline-parallel-size, \"2\"]\n          resources:\n            limits: {{nvidia.com/gpu: 8, cpu: 8, memory: 64Gi}}\n            requests: {{nvidia.com/gpu: 8, cpu: 8, memory: 64Gi}}\n    workerTemplate:\n      spec:\n        containers:\n        - name: worker\n          image: vllm/vllm-openai\n          resources:\n            limits: {{nvidia.com/gpu: 8, cpu: 8, memory: 64Gi}}\n            requests: {{nvidia.com/gpu: 8, cpu: 8, memory: 64Gi}}\n")
        };
        let u = Usage {
            gpu_count: Some(8),
            gpus_used: Some(4),
            ..h100(60.0, Some(0.6), Some(0.4))
        };
        let run = |text: &str| {
            run_measured(
                text,
                &[("LeaderWorkerSet", "vllm", "leader", u.clone())],
                &Policy::default(),
            )
            .into_iter()
            .filter(|h| h.0 == "GPU014")
            .collect::<Vec<_>>()
        };
        let hits = run(&lws("8"));
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(
            hits[0].2.contains(
                "now start 16 ranks on the 16 GPUs of a LeaderWorkerSet group of 2 pod(s)"
            ) && !hits[0].2.contains("request 4"),
            "{}",
            hits[0].2
        );
        // tp 4 × pp 2 leaves the group's GPUs half idle (GPU012): this pod's share is not
        // known, so GPU014 gives the plain count.
        let hits = run(&lws("4"));
        assert!(
            hits[0]
                .2
                .contains("request 4, which frees 4 GPU(s) per pod"),
            "{}",
            hits[0].2
        );
    }

    #[test]
    fn idle_gpus_over_the_window_are_gpu014_naming_the_flags() {
        let text = one_gpu(
            "vllm",
            "vllm/vllm-openai",
            "[--tensor-parallel-size, \"8\"]",
            "nvidia.com/gpu: 8",
        );
        let u = Usage {
            gpu_count: Some(8),
            gpus_used: Some(4),
            ..h100(60.0, Some(0.6), Some(0.4))
        };
        // A rank per GPU: 4 busy is a measurement from before the flags, not advice.
        let hits = measured(&text, "vllm", u.clone(), &Policy::default());
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!((hits[0].0.as_str(), hits[0].1.as_str()), ("GPU014", "8"));
        assert!(
            hits[0].2.contains("has 8 GPUs, 4 busy over the window"),
            "{}",
            hits[0].2
        );
        assert!(
            hits[0].2.contains(
                "but its flags (--tensor-parallel-size 8) now start 8 ranks, one per GPU"
            ) && !hits[0].2.contains("request 4"),
            "{}",
            hits[0].2
        );
        assert_eq!(hits[0].3, None);
        // 4 ranks on 8 GPUs, 2 busy: GPU012's 4 idle GPUs, and 2 more.
        let tp4 = text.replace("\"8\"]", "\"4\"]");
        let u2 = Usage {
            gpus_used: Some(2),
            ..u
        };
        let hits = measured(&tp4, "vllm", u2, &Policy::default());
        let rules: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(rules, ["GPU012", "GPU014"], "{hits:?}");
        assert!(
            hits[1].2.contains(
                "request 2, which frees 6 GPU(s) per pod; 4 of them are the idle GPUs GPU012 reports (--tensor-parallel-size 4 starts 4 ranks); change --tensor-parallel-size 4 with it"
            ),
            "{}",
            hits[1].2
        );
        // All busy: nothing.
        let u = Usage {
            gpu_count: Some(8),
            gpus_used: Some(8),
            ..h100(60.0, Some(0.6), Some(0.4))
        };
        assert_eq!(measured(&text, "vllm", u, &Policy::default()), []);
    }

    fn deployment(container: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n{container}"
        )
    }

    #[test]
    fn parallelism_that_does_not_match_the_gpus_is_gpu012() {
        let more = deployment("      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n        args: [--tensor-parallel-size=4, -pp, \"2\"]\n        resources:\n          limits: {nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}\n          requests: {nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}\n");
        assert_eq!(rules_hit(&more), ["GPU012 --tensor-parallel-size=4"]);
        let fewer = deployment("      - name: tgi\n        image: ghcr.io/huggingface/text-generation-inference:3.0\n        env: [{name: NUM_SHARD, value: \"2\"}]\n        resources:\n          limits: {nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}\n          requests: {nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}\n");
        assert_eq!(rules_hit(&fewer), ["GPU012 \"2\""]);
        let shell = deployment("      - name: train\n        image: pytorch/pytorch\n        command: [sh, -c, \"torchrun --nproc_per_node=8 train.py\"]\n        resources:\n          limits: {nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}\n          requests: {nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}\n");
        // In a script, the flag itself (a script is many lines)…
        assert_eq!(rules_hit(&shell), ["GPU012 --nproc_per_node=8"]);
        // …unless it is written twice: then which one counts is not pointed at.
        let twice = shell.replace(
            "\"torchrun --nproc_per_node=8 train.py\"",
            "\"echo --nproc_per_node=8; torchrun --nproc_per_node=8 train.py\"",
        );
        assert_eq!(
            rules_hit(&twice),
            ["GPU012 \"echo --nproc_per_node=8; torchrun --nproc_per_node=8 train.py\""]
        );
    }

    #[test]
    fn matching_unresolved_and_multi_node_parallelism_is_clean() {
        for args in [
            "[--tensor-parallel-size, \"4\"]",
            "[--tensor-parallel-size, \"$(TP)\"]",
            "[--model, m]",
            // Ranks across pods (data-parallel placement): not compared per pod.
            "[--tensor-parallel-size, \"8\", --data-parallel-size-local, \"1\"]",
            // SGLang's data parallelism: its GPU count depends on --enable-dp-attention.
            "[python3, -m, sglang.launch_server, --tp, \"2\", --dp, \"2\"]",
        ] {
            let text = deployment(&format!("      - name: vllm\n        image: vllm/vllm-openai\n        args: {args}\n        resources:\n          limits: {{nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}}\n          requests: {{nvidia.com/gpu: 4, cpu: 8, memory: 64Gi}}\n"));
            assert_eq!(rules_hit(&text), Vec::<String>::new(), "{args}");
        }
        // A LeaderWorkerSet's tensor parallelism spans the group's pods.
        let lws = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: vllm\nspec:\n  leaderWorkerTemplate:\n    size: 2\n    leaderTemplate:\n      spec:\n        containers:\n        - name: vllm-leader\n          image: vllm/vllm-openai\n          args: [--tensor-parallel-size, \"8\", --pipeline-parallel-size, \"2\"]\n          resources:\n            limits: {nvidia.com/gpu: 8, cpu: 8, memory: 64Gi}\n            requests: {nvidia.com/gpu: 8, cpu: 8, memory: 64Gi}\n";
        assert_eq!(rules_hit(lws), Vec::<String>::new());
    }
}
