//! FIT002–FIT005 on Kaito `Workspace`s (`k8s::kaito`): a preset served by Kaito's vLLM runtime
//! on the nodes of `resource.instanceType` (or a MIG slice, or the BYO nodes its label selector
//! names), sized the way Kaito sizes it, then judged by the same arithmetic as a container.
//!
//! What Kaito does (https://github.com/kaito-project/kaito at commit 056b8280b1a8, 2026-08; the
//! same since v0.7.0 unless said):
//! - The node count is not `resource.count` (deprecated in v1beta1) but the controller's node
//!   estimator (`EstimateNodeCount`, pkg/workspace/estimator/nodesestimator/estimator.go, run for
//!   the vLLM runtime): the fewest nodes whose GPUs hold the preset's weights × 1.02, 2.3 GiB of
//!   overhead a GPU plus 5% of its weights, and the KV cache of the ConfigMap's `max-model-len`
//!   (else 2048 tokens) spread over the node's GPUs, at 0.84 of each GPU's memory as its SKU
//!   table gives it (`24Gi` for an L4: the data sheet's GB, `nominal_gb` in rules/gpus.yaml).
//!   It refuses the Workspace when one GPU is too small for that overhead and KV cache alone
//!   ([`kaito_nodes`] returns `None`), and (MIG) when the model does not fit one slice.
//! - The layout (`configureParallelism`, pkg/model/interface.go): data parallel on one node
//!   when the weights are under half of one GPU (tensor parallel 1 on each GPU), else tensor
//!   parallel over the node's GPUs, and pipeline parallel over the nodes when there are several.
//! - The memory share: the controller passes `--gpu-memory-utilization 0.84` (0.82 on an A10,
//!   `gpuMemoryUtilizationByGPUModel`). The runtime's own default, computed at start-up as
//!   min(0.95, (free − 600 MiB) / total) from `torch.cuda.mem_get_info`
//!   (presets/workspace/inference/vllm/inference_api.py, `get_max_gpu_memory_utilization`),
//!   applies only when no flag is passed, which the controller always does; so "free at
//!   start-up" needs no approximating here. The ConfigMap's `vllm:` keys are passed after
//!   Kaito's own flags, so its `gpu-memory-utilization` (like any key) wins.
//! - The context: Kaito passes `--max-model-len=auto` (vLLM fits the longest context the KV
//!   cache holds, up to the model's), so without the ConfigMap's `max-model-len` only the
//!   weights are judged; with it, the context too (FIT003, FIT004).
//!
//! Admission (api/v1beta1/workspace_validation.go) checks, for the vLLM runtime with node
//! auto-provisioning, only that the instance type is in Kaito's SKU table; the estimator does
//! the sizing. These findings say what the estimator and vLLM will do with the repository's
//! Workspace and ConfigMap: an error is a configuration Kaito provisions and vLLM then refuses
//! (a ConfigMap that lowers the memory share below what the estimator assumed, a MIG slice too
//! small for the weights, a context one GPU cannot hold).

use super::{
    estimate, judge, kv_bytes, kv_bytes_per_token, quantization_way, weights_dtype, weights_gib,
    Served, Site, Words, GIB, UNKNOWN_MODEL_HELP,
};
use crate::k8s::accelerator::{self, Instance, Landing};
use crate::k8s::engine;
use crate::k8s::kaito::{self as k, InferenceConfig, Workspace};
use crate::k8s::model::{Dtype, Found, Model};
use crate::k8s::workload::Workload;
use crate::rules::{Context, Hit, Rule};
use crate::source::yaml::{Node, Span};

/// The `--gpu-memory-utilization` Kaito's controller passes to vLLM (`defaultGPUMemoryUtilization`).
pub const UTILIZATION: f64 = 0.84;
/// On an A10 (`gpuMemoryUtilizationByGPUModel`, keyed by its SKU table's GPU model).
pub const UTILIZATION_A10: f64 = 0.82;
/// The estimator's constants (`weightExpansionFactor`, `baseOverheadGiB`,
/// `overheadWeightFactor`) and its context when the ConfigMap sets none.
pub const ESTIMATOR_WEIGHTS_FACTOR: f64 = 1.02;
pub const ESTIMATOR_BASE_OVERHEAD_GIB: f64 = 2.3;
pub const ESTIMATOR_OVERHEAD_WEIGHT_FACTOR: f64 = 0.05;
pub const ESTIMATOR_CONTEXT: u64 = 2048;

/// Kaito's node estimator: the fewest nodes of `gpus_per_node` GPUs of `gpu_gib` each (as its
/// SKU table gives them) for `weights` GiB (the published files) and the KV cache of
/// `context` tokens at `kv_bytes_per_token` (the whole model's, 16-bit), at Kaito's 0.84. `None`
/// when one GPU is too small for the overhead and the KV cache alone (Kaito refuses).
pub fn kaito_nodes(
    weights: f64,
    kv_bytes_per_token: f64,
    context: u64,
    gpus_per_node: u64,
    gpu_gib: f64,
) -> Option<u64> {
    let gpus = gpus_per_node.max(1);
    let model = weights * ESTIMATOR_WEIGHTS_FACTOR;
    let available = gpu_gib * UTILIZATION;
    let fixed =
        ESTIMATOR_BASE_OVERHEAD_GIB + kv_bytes_per_token * context as f64 / GIB / gpus as f64;
    if available <= fixed || !available.is_finite() || !fixed.is_finite() {
        return None;
    }
    let per_gpu = (available - fixed) / (1.0 + ESTIMATOR_OVERHEAD_WEIGHT_FACTOR);
    // Go's `int(modelSize/availMemPerGPU) + 1`: truncated, plus one.
    let min_gpus = ((model / per_gpu).floor().clamp(0.0, 1e9) as u64).saturating_add(1);
    Some(min_gpus.div_ceil(gpus))
}

/// How Kaito runs the preset, for the help of a FIT002 finding.
pub(super) struct Sizing {
    /// The instance type, when the GPUs are one (not a MIG slice or BYO labels).
    instance: Option<Instance>,
    mig: bool,
    gpus_per_node: u64,
    nodes: u64,
    configmap: Option<String>,
    fraction_written: bool,
    /// The ConfigMap sets the tensor or pipeline parallel size Kaito would otherwise choose.
    parallel_written: bool,
    /// Kaito's own layout (tensor × pipeline parallel).
    kaito_tp: u64,
    kaito_pp: u64,
}

impl Sizing {
    /// What would make the weights fit: Kaito's own memory share or layout when the ConfigMap
    /// overrides them, a quantization, a MIG profile or an instance type with more memory.
    pub(super) fn weights_help(
        &self,
        s: &Served,
        model: &Model,
        on: &Landing,
        context: u64,
    ) -> String {
        let fits = |dtype: Dtype, tp: u64, pp: u64, fraction: f64, gib: f64| {
            estimate(&super::Inputs {
                weights_gib: weights_gib(model, dtype),
                tp,
                pp,
                kv_bytes_per_token: kv_bytes_per_token(model, tp, pp, s.kv_bytes),
                capacity_gib: gib,
                fraction,
                covers: s.flags.fraction_covers,
                context,
            })
            .weights_fit()
        };
        let cm = self
            .configmap
            .as_deref()
            .map_or_else(String::new, |c| format!(" in ConfigMap `{c}`"));
        let mut ways = Vec::new();
        let default_share = default_utilization(on);
        if self.fraction_written
            && s.fraction < default_share
            && fits(s.dtype, s.tp, s.pp, default_share, on.gpu.gib())
        {
            ways.push(format!(
                "gpu-memory-utilization {default_share:.2} (Kaito's own, which its node estimator assumed){cm}"
            ));
        }
        if self.parallel_written
            && (self.kaito_tp, self.kaito_pp) != (s.tp, s.pp)
            && fits(
                s.dtype,
                self.kaito_tp,
                self.kaito_pp,
                s.fraction,
                on.gpu.gib(),
            )
        {
            ways.push(format!(
                "Kaito's own layout (no tensor-parallel-size or pipeline-parallel-size{cm}: tensor parallel {} × pipeline parallel {})",
                self.kaito_tp, self.kaito_pp
            ));
        }
        if let Some(way) = quantization_way(
            s,
            |d| fits(d, s.tp, s.pp, s.fraction, on.gpu.gib()),
            |method| format!("quantization: {method} under `vllm:`{cm}"),
        ) {
            ways.push(way);
        }
        if self.mig {
            let need = weights_gib(model, s.dtype) * super::WEIGHTS_FACTOR + s.flags_overhead();
            ways.push(format!(
                "a MIG profile of about {:.0} GB or more at this share, or whole GPUs (a MIG slice is not split further)",
                (need / s.fraction * GIB / 1e9).ceil()
            ));
        } else if self.instance.is_some() {
            // One node of a larger instance type, with Kaito's layout on it.
            let larger = accelerator::instances().into_iter().find(|i| {
                let total = i.gpu.memory_mib * i.gpus as f64;
                let ours = on.gpu.memory_mib * self.gpus_per_node.saturating_mul(self.nodes) as f64;
                let tp = if i.gpus > 1 && weights_gib(model, model.dtype) * 2.0 < i.nominal_gib {
                    1
                } else {
                    i.gpus
                };
                total > ours && fits(s.dtype, tp, 1, s.fraction, i.gpu.gib())
            });
            if let Some(i) = larger {
                ways.push(format!(
                    "instance type {} ({} × {}) on one node",
                    i.name, i.gpus, i.gpu.name
                ));
            }
        }
        super::ways_text("it fits with", &ways, "serve a smaller or quantized model")
    }
}

impl Served<'_> {
    /// The overhead the memory share must also hold (vLLM: activations and CUDA context).
    fn flags_overhead(&self) -> f64 {
        match self.flags.fraction_covers {
            engine::FractionCovers::All | engine::FractionCovers::KvOfFree => {
                super::ACTIVATIONS_GIB + super::NON_TORCH_GIB
            }
            engine::FractionCovers::WeightsAndKv => 0.0,
        }
    }
}

/// Kaito's memory share on a GPU: 0.82 on an A10, else 0.84.
fn default_utilization(on: &Landing) -> f64 {
    if on.gpu.name == "NVIDIA A10" {
        UTILIZATION_A10
    } else {
        UTILIZATION
    }
}

/// A value a renderer or Flux has not filled in (`${VAR}`, `{{ .Values.x }}`, `$(VAR)`).
fn unresolved(text: &str) -> bool {
    text.contains("${") || text.contains("{{") || text.contains("$(")
}

/// A count of GPUs a node has, as written: a whole number from 1 to 64 (no node has more; a
/// larger or other value is not a count gpulint sizes with).
fn gpu_count(text: &str) -> Option<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (1..=MAX_GPUS_A_NODE).contains(n))
}

/// The most GPUs a node is taken to have.
const MAX_GPUS_A_NODE: u64 = 64;

/// The GPUs a Workspace's pods get.
struct Gpus {
    landing: Landing,
    gpus_per_node: u64,
    /// One GPU's memory as Kaito's estimator counts it, GiB.
    nominal_gib: f64,
    mig: bool,
    instance: Option<Instance>,
    /// Where FIT002 points: the instance type, the MIG profile, else the preset.
    at: Span,
}

fn of_instance(i: Instance, from: String, at: Span) -> Gpus {
    Gpus {
        landing: accelerator::exactly(i.gpu.clone(), from),
        gpus_per_node: i.gpus,
        nominal_gib: i.nominal_gib,
        mig: false,
        instance: Some(i),
        at,
    }
}

/// GPU012 on a Workspace whose ConfigMap sets parallel sizes that start more vLLM ranks than
/// the GPUs of the nodes Kaito provisions: vLLM refuses to start ("more ranks than GPUs").
#[allow(clippy::too_many_arguments)]
fn too_many_ranks(
    who: &str,
    configmap: &str,
    at: Span,
    written: [(&str, Option<u64>); 3],
    (tp, pp, dp): (u64, u64, u64),
    ranks: u64,
    given: u64,
    nodes: u64,
    instance: Option<&Instance>,
) -> Hit {
    let set: Vec<String> = written
        .iter()
        .filter_map(|(key, v)| v.map(|n| format!("{key} {n}")))
        .collect();
    let on = match instance {
        Some(i) => format!("{nodes} node(s) of {} with {} GPU(s) each", i.name, i.gpus),
        None => format!("{nodes} node(s)"),
    };
    Hit::new(
        Rule::GpuParallelismMismatch,
        at,
        format!(
            "vLLM in {who} starts {ranks} rank(s) (tensor parallel {tp} × pipeline parallel {pp} × data parallel {dp}; {} of ConfigMap `{configmap}`) on {given} GPU(s), {on}: more ranks than GPUs: it fails at start",
            set.join(", ")
        ),
        format!("{ranks} ranks, {given} GPUs"),
    )
    .help(format!(
        "remove {} from the ConfigMap (Kaito sets the parallel sizes for the node's GPUs), or choose an instance type with {ranks} GPU(s) a node",
        set.iter().map(|s| s.split(' ').next().unwrap_or_default()).collect::<Vec<_>>().join(" and ")
    ))
    .comment_anchor(at)
}

/// FIT005 at `at`: `what` was not judged.
fn not_judged(at: Span, message: String, label: &str, help: &str) -> Hit {
    Hit::new(Rule::ModelUnknown, at, message, label.into())
        .help(help)
        .comment_anchor(at)
}

/// The GPUs, from the instance type, the v1alpha1 default, a MIG or accelerator partition, or
/// the BYO nodes' labels. An instance type the table does not size is said (FIT005); BYO nodes
/// whose labels name no GPU say nothing, like a pod with no GPU selector.
fn gpus(ws: &Workspace, who: &str, preset: &Node, hits: &mut Vec<Hit>) -> Option<Gpus> {
    let resource_at = ws.resource.map_or(preset.span, |e| e.key.span);
    if let Some(p) = ws.partition {
        match p.mode.map(str::trim) {
            Some("mig") => {
                let node = p.profile?;
                let profile = node.text()?.trim();
                let slice = accelerator::mig_slice(profile)?;
                return Some(Gpus {
                    nominal_gib: slice.gib(),
                    landing: accelerator::exactly(
                        slice,
                        format!("resource.partition: MIG profile {profile}"),
                    ),
                    gpus_per_node: 1,
                    mig: true,
                    instance: None,
                    at: node.span,
                });
            }
            Some("accelerator") => {
                let count = gpu_count(p.count?.text()?)?;
                let mut g = byo(ws, resource_at)?;
                g.gpus_per_node = count;
                g.instance = None;
                g.landing.from = format!(
                    "{}, resource.partition: {count} whole GPU(s)",
                    g.landing.from
                );
                return Some(g);
            }
            _ => return None,
        }
    }
    if let Some(node) = ws.instance_type {
        let name = node.text()?.trim();
        if unresolved(name) {
            return None;
        }
        if let Some(i) = accelerator::instance(name) {
            return Some(of_instance(
                i,
                format!("resource.instanceType {name}"),
                node.span,
            ));
        }
        let known = accelerator::by_label(accelerator::INSTANCE_TYPE_LABEL, name)
            .and_then(|c| c.into_iter().next());
        let message = match known {
            Some(gpu) => format!(
                "not judged: gpulint knows the GPU of instance type `{name}` of {who} ({}) but not how many a node has, so whether its preset fits was not checked",
                gpu.name
            ),
            None => format!(
                "not judged: the instance type `{name}` of {who} is not in gpulint's GPU table, so whether its preset fits was not checked"
            ),
        };
        hits.push(not_judged(
            node.span,
            message,
            "instance type not in the GPU table",
            "rules/gpus.yaml lists the instance types gpulint sizes, with their GPUs a node (`instance_gpus`, from Kaito's SKU tables and the clouds' pages)",
        ));
        return None;
    }
    if ws.v1alpha1 {
        let i = accelerator::instance(k::V1ALPHA1_DEFAULT_INSTANCE_TYPE)?;
        return Some(of_instance(
            i,
            format!(
                "resource.instanceType {}, v1alpha1's default",
                k::V1ALPHA1_DEFAULT_INSTANCE_TYPE
            ),
            preset.span,
        ));
    }
    byo(ws, preset.span)
}

/// BYO nodes (no instance type): their instance-type label, else GPU feature discovery's
/// product and count labels, as the label selector requires them (Kaito reads the same labels
/// from the nodes, `GetGPUConfigFromNodeLabels`).
fn byo(ws: &Workspace, at: Span) -> Option<Gpus> {
    let instance_label = ws
        .label(accelerator::INSTANCE_TYPE_LABEL)
        .map(|v| (accelerator::INSTANCE_TYPE_LABEL, v))
        .or_else(|| {
            ws.label(accelerator::BETA_INSTANCE_TYPE_LABEL)
                .map(|v| (accelerator::BETA_INSTANCE_TYPE_LABEL, v))
        });
    if let Some((key, value)) = instance_label {
        if let Some(i) = accelerator::instance(value) {
            return Some(of_instance(
                i,
                format!("resource.labelSelector {key}={value}"),
                at,
            ));
        }
    }
    let product = ws.label(accelerator::PRODUCT_LABEL)?;
    let count = gpu_count(ws.label("nvidia.com/gpu.count")?)?;
    let gpu = accelerator::by_label(accelerator::PRODUCT_LABEL, product)?
        .into_iter()
        .min_by(|a, b| a.memory_mib.total_cmp(&b.memory_mib))?;
    let nominal_gib = accelerator::table()
        .iter()
        .find(|g| g.name == gpu.name)
        .and_then(|g| g.nominal_gb)
        .unwrap_or(gpu.gib());
    Some(Gpus {
        landing: accelerator::exactly(
            gpu,
            format!(
                "resource.labelSelector {}={product}",
                accelerator::PRODUCT_LABEL
            ),
        ),
        gpus_per_node: count,
        nominal_gib,
        mig: false,
        instance: None,
        at,
    })
}

/// A setting of the ConfigMap: `Ok(None)` when not written (or `auto`), `Err` when written but
/// not a value of `T` that `valid` accepts (not judged).
fn setting<T: std::str::FromStr>(
    config: Option<&InferenceConfig>,
    keys: &[&str],
    valid: impl Fn(&T) -> bool,
) -> Result<Option<T>, ()> {
    let Some(text) = config.and_then(|c| keys.iter().rev().find_map(|k| c.get(k))) else {
        return Ok(None);
    };
    if text.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    text.parse::<T>()
        .ok()
        .filter(|v| valid(v))
        .map(Some)
        .ok_or(())
}

/// FIT002–FIT005 on a Kaito Workspace that serves a preset.
pub(super) fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let Some(ws) = Workspace::of(&w.object) else {
        return;
    };
    if ws.tuning || ws.template {
        return;
    }
    let Some(preset_node) = ws.preset else {
        return;
    };
    let Some(preset) = preset_node.text().map(str::trim) else {
        return;
    };
    if unresolved(preset) {
        return;
    }
    // The Hugging Face Transformers runtime loads the model with `accelerate`, without vLLM's
    // memory share or KV cache: not this arithmetic.
    if ws.runtime.is_some_and(|r| r.trim() == "transformers") {
        return;
    }
    let who = format!("Workspace `{}`", ws.name.unwrap_or("<unnamed>"));
    let gpus = gpus(&ws, &who, preset_node, hits);
    let id = k::preset_model(preset);
    let found = cx.models.find(&id);
    if found.is_none() {
        let named = if id.eq_ignore_ascii_case(preset) {
            String::new()
        } else {
            format!(" (Hugging Face `{id}`)")
        };
        hits.push(not_judged(
            preset_node.span,
            format!(
                "not judged: the preset `{preset}`{named} of {who} is not in gpulint's model catalogue, so whether it fits its GPUs was not checked"
            ),
            "model not in the catalogue",
            UNKNOWN_MODEL_HELP,
        ));
    }
    let ns = ws.namespace.unwrap_or(cx.default_namespace);
    let config = match ws.config {
        None => Some(None),
        Some(node) => match node.text().map(str::trim) {
            Some(name) if !unresolved(name) => match cx.facts.kaito.config(ns, name) {
                Some(c) if c.unreadable => {
                    hits.push(not_judged(
                        node.span,
                        format!(
                            "not judged: the `{}` of ConfigMap `{name}` ({who}'s inference.config) is not YAML with a `vllm:` mapping, so its vLLM settings were not read and the fit was not checked",
                            k::CONFIG_KEY
                        ),
                        "unreadable inference config",
                        "Kaito passes each key under `vllm:` to vLLM as a flag",
                    ));
                    None
                }
                Some(c) => Some(Some((name, c, node))),
                None => {
                    hits.push(not_judged(
                        node.span,
                        format!(
                            "not judged: ConfigMap `{name}` ({who}'s inference.config, namespace {ns}) is not among the linted files, so its vLLM settings (gpu-memory-utilization, max-model-len, …) are unknown and the fit was not checked"
                        ),
                        "ConfigMap not found",
                        "lint the folder that holds the ConfigMap with the Workspace",
                    ));
                    None
                }
            },
            _ => None,
        },
    };
    let (Some(gpus), Some(found), Some(config)) = (gpus, found, config) else {
        return;
    };
    size_and_judge(cx, &ws, &who, gpus, found, config, hits);
}

#[allow(clippy::too_many_arguments)]
fn size_and_judge(
    cx: &Context,
    ws: &Workspace,
    who: &str,
    gpus: Gpus,
    found: Found,
    config: Option<(&str, &InferenceConfig, &Node)>,
    hits: &mut Vec<Hit>,
) {
    let Some(engine) = engine::by_id("vllm") else {
        return;
    };
    let Some(flags) = engine.serving.as_ref() else {
        return;
    };
    let cfg = config.map(|(_, c, _)| c);
    let read = || -> Result<_, ()> {
        Ok((
            setting::<f64>(cfg, &["gpu-memory-utilization"], |f| *f > 0.0 && *f <= 1.0)?,
            setting::<u64>(cfg, &["max-model-len"], |n| *n > 0)?,
            setting::<u64>(cfg, &["tensor-parallel-size", "tp"], |n| *n > 0)?,
            setting::<u64>(cfg, &["pipeline-parallel-size", "pp"], |n| *n > 0)?,
            setting::<u64>(cfg, &["data-parallel-size", "dp"], |n| *n > 0)?,
            setting::<u64>(cfg, &["max-num-seqs"], |n| *n > 0)?,
        ))
    };
    // A value gpulint cannot read (a template, a typo) is not judged.
    let Ok((fraction, context, tp_set, pp_set, dp_set, max_seqs)) = read() else {
        return;
    };
    let text = |key: &str| cfg.and_then(|c| c.get(key)).filter(|v| *v != "auto");
    let dtype_set = match text("dtype") {
        Some(v) => match Dtype::parse(v) {
            Some(d) => Some(d),
            None => return,
        },
        None => None,
    };
    let Some(dtype) = weights_dtype(&found, dtype_set, text("quantization")) else {
        return;
    };
    let Some(kv_bytes) = kv_bytes(text("kv-cache-dtype"), dtype_set) else {
        return;
    };
    let model = found.model;
    // Kaito's node count and layout, from the preset's published weights (its
    // TotalSafeTensorFileSize) and its 16-bit KV cache, whatever the ConfigMap says of them.
    let published = weights_gib(model, model.dtype);
    let estimated = if gpus.mig {
        Some(1)
    } else {
        kaito_nodes(
            published,
            kv_bytes_per_token(model, 1, 1, 2.0),
            context.unwrap_or(ESTIMATOR_CONTEXT),
            gpus.gpus_per_node,
            gpus.nominal_gib,
        )
    };
    let nodes = estimated.unwrap_or(1);
    let data_parallel = nodes == 1 && gpus.gpus_per_node > 1 && published * 2.0 < gpus.nominal_gib;
    let (kaito_tp, kaito_pp, kaito_dp) = if data_parallel {
        (1, 1, gpus.gpus_per_node)
    } else {
        (gpus.gpus_per_node, nodes, 1)
    };
    let (tp, pp) = (tp_set.unwrap_or(kaito_tp), pp_set.unwrap_or(kaito_pp));
    let ranks = tp
        .saturating_mul(pp)
        .saturating_mul(dp_set.unwrap_or(kaito_dp));
    let given = gpus.gpus_per_node.saturating_mul(nodes);
    if ranks > given {
        // The ConfigMap's keys come after Kaito's own flags on vLLM's command line, so its
        // parallel sizes win: vLLM is asked for more ranks than Kaito gives it GPUs and does
        // not start. The memory is then beside the point (not judged).
        if let Some((name, _, node)) = config {
            hits.push(too_many_ranks(
                who,
                name,
                node.span,
                [
                    ("tensor-parallel-size", tp_set),
                    ("pipeline-parallel-size", pp_set),
                    ("data-parallel-size", dp_set),
                ],
                (tp, pp, dp_set.unwrap_or(kaito_dp)),
                ranks,
                given,
                nodes,
                gpus.instance.as_ref(),
            ));
        }
        return;
    }
    let fraction_written = fraction.is_some();
    let fraction = fraction.unwrap_or_else(|| default_utilization(&gpus.landing));
    let served = Served {
        engine,
        flags,
        name: model.name().to_string(),
        found,
        dtype,
        kv_bytes,
        tp,
        pp,
        fraction,
        context,
        context_from_model: false,
        max_seqs,
        context_shrinks: false,
    };
    let mut notes = Vec::new();
    if !gpus.mig {
        let of = gpus
            .instance
            .as_ref()
            .map_or_else(String::new, |i| format!(" of {}", i.name));
        match estimated {
            Some(n) if n > 1 => {
                notes.push(format!("{n} nodes{of}, as Kaito's node estimator sizes it"))
            }
            Some(_) => {}
            None => notes.push(format!(
                "judged on one node{of}: Kaito's node estimator refuses it, one GPU being too small for its overhead and the KV cache of {} tokens",
                context.unwrap_or(ESTIMATOR_CONTEXT)
            )),
        }
        if let Some(count) = ws.count.and_then(Node::text).map(str::trim) {
            if count != nodes.to_string() {
                notes.push(format!(
                    "its `count: {count}` is not what Kaito's vLLM runtime uses"
                ));
            }
        }
    }
    let who = if notes.is_empty() {
        who.to_string()
    } else {
        format!("{who} ({})", notes.join("; "))
    };
    let configmap = config.map(|(name, _, _)| name.to_string());
    let config_at = config.map(|(_, _, node)| (node.span, node.span));
    let site = Site {
        who,
        container: None,
        model: (gpus.at, gpus.at),
        context: if context.is_some() { config_at } else { None },
        words: Words::KaitoConfig {
            configmap: configmap.clone(),
            fraction_written,
        },
        sizer: super::Sizer::Kaito(Sizing {
            instance: gpus.instance.clone(),
            mig: gpus.mig,
            gpus_per_node: gpus.gpus_per_node,
            nodes,
            configmap,
            fraction_written,
            parallel_written: tp_set.is_some() || pp_set.is_some(),
            kaito_tp,
            kaito_pp,
        }),
    };
    judge(
        &site,
        &served,
        &gpus.landing,
        None,
        cx.policy.concurrent_requests,
        hits,
    );
}

#[cfg(test)]
mod tests;
