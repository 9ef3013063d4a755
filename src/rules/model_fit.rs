//! FIT002–FIT005: will the model fit? An inference engine's model (`rules/models.yaml`, the
//! config's `models:`), its flags (`rules/engines.yaml`'s `serving:`) and the GPU the pod
//! lands on (`k8s::accelerator`, with the measured nodes and GPU model) give the GPU memory
//! the weights and the KV cache of one sequence need, per GPU, against what the engine may
//! use. The arithmetic ([`estimate`]) is Kaito's "Model SKU Requirements Calculation Guide"
//! (measured on vLLM 0.10.1): weights × 1.02, plus 1.7 GiB of activations and 0.6 GiB outside
//! PyTorch on every GPU, within capacity × the engine's memory share.
//!
//! A container is read from its flags; a Kaito `Workspace`, which has no pod template, from its
//! preset, instance type and ConfigMap, sized as Kaito's controller sizes it (`kaito.rs`). Both
//! are judged by [`judge`], told by a [`Site`] where the findings point and how their messages
//! name the settings.

use super::{container_label, flag_span, Context, Hit, Rule};
use crate::k8s::accelerator::{self, Candidate, Landing};
use crate::k8s::engine::{self, Engine, FractionCovers, ServingFlags, Setting};
use crate::k8s::model::{Dtype, Found, Model};
use crate::k8s::workload::{Container, Workload};
use crate::metrics::usage::Usage;
use crate::source::yaml::Span;
use serde::Serialize;

/// Weights take this much more GPU memory than their files (the guide's 102%).
pub const WEIGHTS_FACTOR: f64 = 1.02;
/// Activations, at most, per GPU (the guide's measurement), GiB.
pub const ACTIVATIONS_GIB: f64 = 1.7;
/// Memory outside PyTorch (CUDA context, NCCL), at most, per GPU, GiB.
pub const NON_TORCH_GIB: f64 = 0.6;
/// An error needs the estimate to exceed what the engine may use by more than this share:
/// the guide's activations and non-PyTorch memory are the largest it measured (a small model
/// needs less), the driver's reserved memory and the engine version move the real need by a
/// few percent, and a linter that stops a merge must not be wrong (Llama 3.1 8B at 32k on one
/// L4, Google's published sample, is 7% above the estimate).
pub const TOLERANCE: f64 = 0.10;
/// vLLM's default KV block size: a suggested `--max-model-len` is a multiple of it.
pub const BLOCK: u64 = 16;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// What the arithmetic needs, all per engine instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// Weights of the whole model, GiB (as published, or as quantized).
    pub weights_gib: f64,
    pub tp: u64,
    pub pp: u64,
    /// KV cache bytes a token, on one GPU.
    pub kv_bytes_per_token: f64,
    pub capacity_gib: f64,
    pub fraction: f64,
    pub covers: FractionCovers,
    pub context: u64,
}

/// The verdict of the arithmetic, per GPU (GiB).
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub weights: f64,
    /// What the weights may use (and, but for `kv_of_free`, the weights and the KV cache).
    pub usable: f64,
    pub overhead: f64,
    /// What the KV cache may use beside the weights (0 when the weights do not fit).
    pub kv_room: f64,
    /// The KV cache of one sequence of `context` tokens.
    pub kv_one: f64,
    /// Tokens the KV cache holds after the weights (0 when the weights do not fit).
    pub kv_tokens: u64,
}

impl Estimate {
    /// The weights fit within the tolerance.
    pub fn weights_fit(&self) -> bool {
        self.weights <= self.usable * (1.0 + TOLERANCE)
    }

    /// One sequence of the context fits beside the weights, within the tolerance.
    pub fn context_fits(&self) -> bool {
        self.kv_one <= self.kv_room + self.usable * TOLERANCE
    }

    /// The largest context that fits (the estimate itself, no tolerance), a multiple of
    /// [`BLOCK`].
    pub fn largest_context(&self) -> u64 {
        self.kv_tokens / BLOCK * BLOCK
    }

    /// Sequences of the context the KV cache holds at once.
    pub fn concurrent(&self, context: u64) -> u64 {
        self.kv_tokens.checked_div(context).unwrap_or(0)
    }
}

/// The arithmetic a FIT finding judged by, per GPU, in the figures its message prints (GiB to
/// one decimal): the JSON's `fit` and the report cards' fit line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    pub model: String,
    pub gpu: String,
    pub dtype: &'static str,
    pub tensor_parallel: u64,
    pub pipeline_parallel: u64,
    /// The context judged: the engine's flag, else the model's.
    pub context: u64,
    /// Weights on one GPU.
    pub weights_gib: f64,
    /// The KV cache of one sequence of `context` tokens on one GPU.
    pub kv_gib: f64,
    /// What the engine may use on one GPU.
    pub usable_gib: f64,
    /// Tokens the KV cache holds beside the weights.
    pub kv_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<MeasuredFit>,
    /// Only the weights were judged, as the least any layout needs (NVIDIA NIM without a pinned
    /// profile): no KV cache, no context.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub weights_only: bool,
}

/// What the snapshot says of the estimate: on the same GPU model only (a framebuffer measured
/// on another GPU says nothing about this one).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasuredFit {
    /// The snapshot's `gpu_model`.
    pub gpu_model: String,
    /// Framebuffer P99 on one GPU (the container's P99 over its GPUs).
    pub framebuffer_gib: f64,
    /// What the engine's memory share reserves on one GPU, by the estimate.
    pub reserved_gib: f64,
    /// The two agree within [`TOLERANCE`]: the engine ran with this reservation.
    pub agrees: bool,
    /// The KV cache's P99 fill, when the engine exports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_p99: Option<f64>,
}

/// GiB as messages print them.
fn tenth(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

impl Fit {
    /// The context as messages print it (`16k`).
    pub fn context_label(&self) -> String {
        context_short(self.context)
    }

    /// `weights 15.3 GiB + KV 2.0 GiB at 16k of 17.9 GiB usable on NVIDIA A10G`; `weights
    /// 33.5 GiB (at least) of 20.2 GiB usable` when only the weights were judged.
    pub fn summary(&self) -> String {
        let mut s = if self.weights_only {
            format!(
                "{}: weights {} (at least) of {} usable on {}",
                self.model,
                gib(self.weights_gib),
                gib(self.usable_gib),
                self.gpu
            )
        } else {
            format!(
                "{}: weights {} + KV {} at {} of {} usable on {}",
                self.model,
                gib(self.weights_gib),
                gib(self.kv_gib),
                context_short(self.context),
                gib(self.usable_gib),
                self.gpu
            )
        };
        if let Some(m) = &self.measured {
            s.push_str(&format!(
                "; measured framebuffer {} a GPU ({})",
                gib(m.framebuffer_gib),
                if m.agrees {
                    "as reserved".to_string()
                } else {
                    format!("not the {} reserved", gib(m.reserved_gib))
                }
            ));
            if let Some(kv) = m.kv_cache_p99 {
                s.push_str(&format!(", KV cache {:.0}% full at P99", kv * 100.0));
            }
        }
        s
    }
}

impl MeasuredFit {
    /// `20.1 GiB a GPU (as reserved), KV 71% at P99`: the reports' measured column.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} a GPU ({})",
            gib(self.framebuffer_gib),
            if self.agrees {
                "as reserved".to_string()
            } else {
                format!("not the {} reserved", gib(self.reserved_gib))
            }
        );
        if let Some(kv) = self.kv_cache_p99 {
            s.push_str(&format!(", KV {:.0}% at P99", kv * 100.0));
        }
        s
    }
}

/// The snapshot against the estimate, for a container measured on the GPU model it is judged
/// on with a framebuffer figure.
fn measured_fit(u: &Usage, s: &Served, on: &Landing, e: &Estimate) -> Option<MeasuredFit> {
    let model = u.gpu_model.as_deref()?;
    if accelerator::by_dcgm(model)?.name != on.gpu.name {
        return None;
    }
    let p99 = u.gpu_memory_bytes.as_ref()?.p99?;
    let gpus = u
        .gpu_count
        .filter(|n| *n > 0)
        .unwrap_or(s.tp.saturating_mul(s.pp))
        .max(1);
    let framebuffer = p99 / gpus as f64 / GIB;
    // The share covers the activations and the CUDA context too (vLLM), or they come on top
    // of it (SGLang): either way the engine holds about usable + those on every GPU.
    // TensorRT-LLM holds the weights, its KV cache share of what they leave, and the overhead.
    let reserved = match s.flags.fraction_covers {
        FractionCovers::KvOfFree => e.weights + e.kv_room + e.overhead,
        _ => e.usable + ACTIVATIONS_GIB + NON_TORCH_GIB,
    };
    Some(MeasuredFit {
        gpu_model: model.to_string(),
        framebuffer_gib: tenth(framebuffer),
        reserved_gib: tenth(reserved),
        agrees: (framebuffer - reserved).abs() <= reserved * TOLERANCE,
        kv_cache_p99: u.kv_cache_usage.as_ref().and_then(|k| k.p99),
    })
}

/// What a FIT finding's message adds from the snapshot. `starts`: the finding says the engine
/// cannot start (FIT002, FIT003), so a measurement of it running is weighed against that.
fn measured_clause(m: &MeasuredFit, starts: bool) -> String {
    let fb = gib(m.framebuffer_gib);
    let kv = m
        .kv_cache_p99
        .map(|k| {
            if k >= 0.9 {
                format!(
                    ", its KV cache {:.0}% full at P99: requests already wait for room",
                    k * 100.0
                )
            } else {
                format!(
                    ", its KV cache {:.0}% full at P99: the traffic measured leaves room",
                    k * 100.0
                )
            }
        })
        .unwrap_or_default();
    match (starts, m.agrees) {
        (true, true) => format!(
            "; measured running on {} with {fb} a GPU (P99), the {} this share reserves: the flags that ran then differ from these, or this estimate is wrong for this model",
            m.gpu_model,
            gib(m.reserved_gib)
        ),
        (true, false) => format!(
            "; measured on {} with {fb} a GPU (P99), not the {} this share reserves: it ran with other flags, which do not test these",
            m.gpu_model,
            gib(m.reserved_gib)
        ),
        (false, true) => format!(
            "; measured on {}: {fb} a GPU (P99), as this share reserves{kv}",
            m.gpu_model
        ),
        (false, false) => format!(
            "; measured on {}: {fb} a GPU (P99), not the {} this share reserves, so judged by the estimate{kv}",
            m.gpu_model,
            gib(m.reserved_gib)
        ),
    }
}

/// Kaito's arithmetic, per GPU. The engine's memory share covers the weights, activations and
/// KV cache (`all`), the weights and KV cache (`weights_and_kv`, the activations outside), or
/// the KV cache alone as a share of what the weights, activations and CUDA context leave free
/// (`kv_of_free`, TensorRT-LLM: the weights may use the whole GPU less that overhead).
pub fn estimate(i: &Inputs) -> Estimate {
    let ranks = i.tp.max(1).saturating_mul(i.pp.max(1)) as f64;
    let weights = i.weights_gib * WEIGHTS_FACTOR / ranks;
    let (usable, overhead, kv_room) = match i.covers {
        FractionCovers::All | FractionCovers::WeightsAndKv => {
            let overhead = match i.covers {
                FractionCovers::WeightsAndKv => 0.0,
                _ => ACTIVATIONS_GIB + NON_TORCH_GIB,
            };
            let usable = i.capacity_gib * i.fraction - overhead;
            (usable, overhead, (usable - weights).max(0.0))
        }
        FractionCovers::KvOfFree => {
            let overhead = ACTIVATIONS_GIB + NON_TORCH_GIB;
            let usable = i.capacity_gib - overhead;
            (usable, overhead, (usable - weights).max(0.0) * i.fraction)
        }
    };
    let kv_one = i.kv_bytes_per_token * i.context as f64 / GIB;
    let kv_tokens = if i.kv_bytes_per_token > 0.0 {
        (kv_room * GIB / i.kv_bytes_per_token).floor() as u64
    } else {
        0
    };
    Estimate {
        weights,
        usable,
        overhead,
        kv_room,
        kv_one,
        kv_tokens,
    }
}

/// KV cache bytes a token on one GPU: `2 × layers × KV heads × head dim × bytes`, the heads
/// split over tensor-parallel ranks (each rank keeps at least one), the layers over pipeline
/// stages; MLA keeps one latent vector (`kv_lora_rank + qk_rope_head_dim`) a layer, whole on
/// every rank.
pub fn kv_bytes_per_token(m: &Model, tp: u64, pp: u64, kv_bytes: f64) -> f64 {
    let layers = m.full_attention_layers.unwrap_or(m.layers) as f64 / pp.max(1) as f64;
    match m.mla {
        Some(mla) => (mla.kv_lora_rank + mla.qk_rope_head_dim) as f64 * layers * kv_bytes,
        None => {
            let heads = (m.kv_heads as f64 / tp.max(1) as f64).max(1.0);
            2.0 * layers * heads * m.head_dim as f64 * kv_bytes
        }
    }
}

/// The weights' format: a quantization flag, else a quantized repository's, else the
/// published dtype (an fp8 or mxfp4 checkpoint stays so), else `--dtype`.
fn weights_dtype(found: &Found, dtype: Option<Dtype>, quantization: Option<&str>) -> Option<Dtype> {
    if let Some(q) = quantization {
        return Dtype::of_quantization(q);
    }
    if let Some(d) = found.quantized {
        return Some(d);
    }
    let native = found.model.dtype;
    match native {
        Dtype::Bf16 | Dtype::Fp16 | Dtype::Fp32 => Some(dtype.unwrap_or(native)),
        _ => Some(native),
    }
}

fn weights_gib(m: &Model, dtype: Dtype) -> f64 {
    match m.weights_gib {
        Some(w) if dtype == m.dtype => w,
        _ => m.params_b * 1e9 * dtype.bytes() / GIB,
    }
}

/// The GPU the container lands on: a MIG slice it requests, what its pod (and its Kueue
/// flavors) select, the measured GPU model, the measured nodes its selector allows; the
/// smallest when several are possible.
pub(crate) fn landing(cx: &Context, w: &Workload, c: &Container) -> Option<Landing> {
    let r = &c.resources;
    let mig = r
        .limits
        .entries
        .iter()
        .chain(&r.requests.entries)
        .find_map(|q| q.name.strip_prefix("nvidia.com/mig-"));
    if let Some(profile) = mig {
        let slice = accelerator::mig_slice(profile)?;
        return Some(accelerator::exactly(
            slice,
            format!("resource nvidia.com/mig-{profile}"),
        ));
    }
    let pod = c.pod.and_then(|p| w.pods.get(p)).map(|p| p.spec);
    let mut found = pod.and_then(accelerator::from_pod_spec);
    // Kueue injects a flavor's nodeLabels: any of the flavors admitting the GPUs.
    let gpu_resource = r
        .limits
        .entries
        .iter()
        .chain(&r.requests.entries)
        .find(|q| cx.gpu_names.classify(q.name) == crate::k8s::gpu::GpuName::Known)
        .map(|q| q.name);
    if let Some(flavors) = gpu_resource.and_then(|g| super::kueue::admitting_flavors(cx, w, g)) {
        let choices: Option<Vec<_>> = flavors
            .iter()
            .map(|f| {
                let labels = cx.facts.kueue.flavors.get(*f)?;
                accelerator::from_labels(
                    labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                    &format!("Kueue flavor {f}"),
                )
            })
            .collect();
        found = accelerator::both(found, choices.and_then(|c| accelerator::either(&c)));
    }
    found = accelerator::both(found, claimed_product(cx, w, c));
    // Measured: the GPU model the container ran on, else the nodes its selector allows.
    if let Some(u) = &super::headroom::usage_of(cx, w, c) {
        if let Some(model) = u.gpu_model.as_deref() {
            if let Some(gpu) = accelerator::by_dcgm(model) {
                found = accelerator::both(
                    found,
                    Some(accelerator::exactly(gpu, format!("measured: {model}"))),
                );
            }
        }
    }
    if found.is_none() {
        let nodes = cx.usage.map(|u| u.nodes_of(cx.cluster)).unwrap_or_default();
        let known_key = |k: &str| nodes.iter().any(|n| n.has_label_key(k));
        let choices: Vec<_> = match pod {
            Some(pod) => nodes
                .iter()
                .filter(|n| super::fit::allowed(pod, n, &known_key))
                .filter_map(|n| {
                    let product = n.label(accelerator::PRODUCT_LABEL)?;
                    accelerator::from_labels(
                        [(accelerator::PRODUCT_LABEL, product)],
                        "measured node",
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        found = accelerator::either(&choices);
    }
    found
}

/// The GPU a container's DRA claim selects by product (`device.attributes['gpu.nvidia.com']
/// .productName == 'NVIDIA L4'`): the smallest of a request's products, when the GPU table
/// knows every one (one it does not know narrows nothing).
fn claimed_product(cx: &Context, w: &Workload, c: &Container) -> Option<Landing> {
    let pod = w.pods.get(c.pod?)?;
    let entries = crate::k8s::dra::pod_claims(pod);
    let ns = super::dra::namespace(cx, w);
    let mut found = None;
    for (name, _) in crate::k8s::dra::container_claims(c.node) {
        let Some(entry) = entries.iter().find(|e| e.name == name) else {
            continue;
        };
        let Some(claim) = cx.facts.dra.resolve(ns, entry) else {
            continue;
        };
        for r in claim.requests.iter().filter(|r| !r.products.is_empty()) {
            let gpus: Option<Vec<Candidate>> =
                r.products.iter().map(|p| accelerator::by_dcgm(p)).collect();
            let Some(smallest) = gpus
                .into_iter()
                .flatten()
                .min_by(|a, b| a.memory_mib.total_cmp(&b.memory_mib))
            else {
                continue;
            };
            let from = format!(
                "DRA claim `{name}`, request `{}`: productName {}",
                r.name,
                r.products.join(" or ")
            );
            found = accelerator::both(found, Some(accelerator::exactly(smallest, from)));
        }
    }
    found
}

/// What an engine serves and how it is told to size it, read once: from a container's flags,
/// or from a Kaito Workspace's preset, instance type and ConfigMap (`kaito.rs`).
struct Served<'a> {
    engine: &'static Engine,
    flags: &'static ServingFlags,
    /// The served name, for people (`gemma-7b-AWQ`).
    name: String,
    found: Found<'a>,
    dtype: Dtype,
    kv_bytes: f64,
    tp: u64,
    pp: u64,
    fraction: f64,
    context: Option<u64>,
    /// Without a context setting the engine takes the model's whole context (and checks it).
    context_from_model: bool,
    max_seqs: Option<u64>,
    /// A context one sequence of which does not fit is shrunk to what fits, not refused
    /// (TensorRT-LLM without `--fail_fast_on_attention_window_too_large`).
    context_shrinks: bool,
}

/// Where a served model's findings are shown, and how their messages name its settings.
struct Site<'a> {
    /// `container `vllm``, `Workspace `phi-4``.
    who: String,
    container: Option<&'a Container<'a>>,
    /// Where FIT002 points (and FIT003/FIT004 without a context setting), and where its
    /// suppression comment may sit.
    model: (Span, Span),
    /// Where the context setting is written, when it is.
    context: Option<(Span, Span)>,
    /// How messages name the engine's settings.
    words: Words,
    /// Who sized it, whose help names the ways that would fit.
    sizer: Sizer,
}

/// Who sized what a [`Site`] judges: its help names what that sizer can change.
enum Sizer {
    /// The engine's own flags.
    Flags,
    /// Kaito's controller: instance types and ConfigMap settings.
    Kaito(kaito::Sizing),
    /// NVIDIA NIM's profile: tensor parallelism and precision are a profile's.
    Nim(nim::Sizing),
}

/// How a finding names the settings it is about: the engine's flags, or the `vllm:` keys of a
/// Kaito Workspace's ConfigMap.
enum Words {
    Flags {
        /// The memory share was written (else it is the engine's default).
        fraction_written: bool,
        /// The context flag as written (`--max_model_len`), when it is.
        context_flag: Option<String>,
    },
    KaitoConfig {
        /// The ConfigMap `inference.config` names, when it does.
        configmap: Option<String>,
        /// `gpu-memory-utilization` is the ConfigMap's (else Kaito's own).
        fraction_written: bool,
    },
}

impl Words {
    /// A setting and its value, for messages: `--max-num-seqs 256`, `max-num-seqs 256 of
    /// ConfigMap `params``.
    fn setting_value(&self, flags: &[String], key: &str, value: impl std::fmt::Display) -> String {
        match self {
            Words::Flags { .. } => format!("{} {value}", flags.first().map_or(key, |f| f.as_str())),
            Words::KaitoConfig {
                configmap: Some(cm),
                ..
            } => format!("{key} {value} of ConfigMap `{cm}`"),
            Words::KaitoConfig {
                configmap: None, ..
            } => format!("{key} {value}"),
        }
    }

    /// The context setting, for messages: as written (`--max_model_len`), else the engine's
    /// first spelling, else the ConfigMap's `max-model-len`.
    fn context(&self, flags: &[String]) -> String {
        match self {
            Words::Flags {
                context_flag: Some(flag),
                ..
            } => flag.clone(),
            Words::Flags { .. } => flags.first().cloned().unwrap_or_default(),
            Words::KaitoConfig {
                configmap: Some(cm),
                ..
            } => format!("max-model-len of ConfigMap `{cm}`"),
            Words::KaitoConfig {
                configmap: None, ..
            } => "max-model-len".into(),
        }
    }

    /// The context setting and its value: `--max-model-len 65536`, `max-model-len 65536 of
    /// ConfigMap `params``.
    fn context_value(&self, flags: &[String], value: u64) -> String {
        match self {
            Words::Flags { .. } => format!("{} {value}", self.context(flags)),
            Words::KaitoConfig { .. } => self.setting_value(flags, "max-model-len", value),
        }
    }

    /// The edit that sets the context: `--max-model-len 21968`, `max-model-len: 21968 under
    /// `vllm:` in ConfigMap `params``.
    fn set_context(&self, flags: &[String], value: u64) -> String {
        match self {
            Words::Flags { .. } => format!("{} {value}", self.context(flags)),
            Words::KaitoConfig {
                configmap: Some(cm),
                ..
            } => format!("max-model-len: {value} under `vllm:` in ConfigMap `{cm}`"),
            Words::KaitoConfig {
                configmap: None, ..
            } => format!(
                "max-model-len: {value} under `vllm:` in a ConfigMap that `inference.config` names"
            ),
        }
    }

    /// What the memory share is: `0.90, the default`, `0.84, the gpu-memory-utilization Kaito passes`.
    fn share(&self, fraction: f64) -> String {
        match self {
            Words::Flags {
                fraction_written: true,
                ..
            } => format!("{fraction:.2}"),
            Words::Flags {
                fraction_written: false,
                ..
            } => format!("{fraction:.2}, the default"),
            Words::KaitoConfig {
                fraction_written: true,
                configmap,
            } => format!(
                "{fraction:.2}, the gpu-memory-utilization of ConfigMap `{}`",
                configmap.as_deref().unwrap_or("?")
            ),
            Words::KaitoConfig {
                fraction_written: false,
                ..
            } => format!("{fraction:.2}, the gpu-memory-utilization Kaito passes"),
        }
    }
}

fn number<T: std::str::FromStr>(s: &Setting) -> Option<T> {
    s.value.as_deref()?.trim().parse().ok()
}

/// The tensor- and pipeline-parallel sizes (1 unless written); `None` when one is written but
/// is not a number.
fn tp_pp(engine: &Engine, c: &Container) -> Option<(u64, u64)> {
    let p = engine::parallelism(engine, c);
    let mut sizes = [1u64, 1u64];
    for f in &p.factors {
        if let Some(i) = engine
            .parallelism
            .iter()
            .take(2)
            .position(|spellings| spellings.contains(&f.flag))
        {
            sizes[i] = f.count?;
        } else if !engine.parallelism.iter().any(|s| s.contains(&f.flag)) {
            // An environment variable factor (TGI's NUM_SHARD): the shard count.
            sizes[0] = f.count?;
        }
    }
    Some((sizes[0], sizes[1]))
}

/// What a container's flags serve, with the settings its findings point at.
struct FromFlags<'a> {
    served: Served<'a>,
    model: Setting<'a>,
    context: Option<Setting<'a>>,
    fraction_written: bool,
}

/// Why a container's served model is not judged, said by FIT005.
enum NotJudged<'a> {
    /// The model is named but not catalogued.
    Unknown(Setting<'a>),
    /// A setting the arithmetic is not for (a file of overrides, another backend): the
    /// setting, why, and the help.
    Setting(Setting<'a>, String, &'static str),
}

/// A container's model and flags. `None` when the model cannot be judged (returned as `Err`
/// when FIT005 should say so).
fn served<'a>(cx: &'a Context, c: &Container<'a>) -> Result<Option<FromFlags<'a>>, NotJudged<'a>> {
    let Some(engine) = engine::detect(c) else {
        return Ok(None);
    };
    let Some(flags) = engine.serving.as_ref() else {
        return Ok(None);
    };
    if !engine::runs_engine(c, engine) {
        return Ok(None);
    }
    let Some(model) = engine::model_setting(c, flags) else {
        return Ok(None);
    };
    let Some(name) = model.value.clone() else {
        return Ok(None);
    };
    let read = |spellings: &[String]| engine::setting(c, spellings);
    if let Some(file) = read(&flags.overrides) {
        let why = format!(
            "{} {} overrides {}'s flags from a file gpulint does not read",
            file.flag,
            file.value.as_deref().unwrap_or(&file.written),
            engine.name
        );
        return Err(NotJudged::Setting(
            file,
            why,
            "gpulint does not read the file's settings (a kv_cache_config, max_seq_len, parallel sizes); without the file the flags are judged, see docs/models.md",
        ));
    }
    if let Some(backend) = read(&flags.backend) {
        let value = backend.value.clone().unwrap_or_default();
        if !flags.backends.contains(&value) {
            let why = format!(
                "{} {} is a backend gpulint's arithmetic is not for (it judges {})",
                backend.flag,
                if value.is_empty() {
                    &backend.written
                } else {
                    &value
                },
                flags.backends.join(", ")
            );
            return Err(NotJudged::Setting(
                backend,
                why,
                "a built engine is sized when it is built, not by these flags; the default backend is judged, see docs/models.md",
            ));
        }
    }
    let Some(found) = cx.models.find(&name) else {
        return Err(NotJudged::Unknown(model));
    };
    let dtype_flag = read(&flags.dtype).and_then(|s| s.value.as_deref().and_then(Dtype::parse));
    let quantization = read(&flags.quantization).and_then(|s| s.value);
    let Some(dtype) = weights_dtype(&found, dtype_flag, quantization.as_deref()) else {
        return Ok(None);
    };
    let kv_flag = read(&flags.kv_cache_dtype);
    let Some(kv_bytes) = kv_bytes(
        kv_flag.as_ref().and_then(|s| s.value.as_deref()),
        dtype_flag,
    ) else {
        return Ok(None);
    };
    let Some((tp, pp)) = tp_pp(engine, c) else {
        return Ok(None);
    };
    let fraction_setting = read(&flags.memory_fraction);
    let fraction = match &fraction_setting {
        Some(s) => match number::<f64>(s).filter(|f| *f > 0.0 && *f <= 1.0) {
            Some(f) => f,
            None => return Ok(None),
        },
        None => flags.memory_fraction_default,
    };
    let context = match read(&flags.context) {
        Some(s) => match number::<u64>(&s).filter(|n| *n > 0) {
            Some(n) => Some((n, s)),
            None => return Ok(None),
        },
        None => None,
    };
    let max_seqs = read(&flags.max_seqs).and_then(|s| number::<u64>(&s));
    let (context, context_setting) = match context {
        Some((n, s)) => (Some(n), Some(s)),
        None => (None, None),
    };
    Ok(Some(FromFlags {
        served: Served {
            engine,
            flags,
            name: crate::k8s::model::display_name(&name),
            found,
            dtype,
            kv_bytes,
            tp,
            pp,
            fraction,
            context,
            context_from_model: flags.context_from_model,
            max_seqs,
            context_shrinks: !flags.context_shrinks_unless.is_empty()
                && !engine::switch(c, &flags.context_shrinks_unless),
        },
        model,
        context: context_setting,
        fraction_written: fraction_setting.is_some(),
    }))
}

/// The KV cache's bytes an element: `--kv-cache-dtype` (`auto` is the compute dtype's), else
/// the compute dtype's (4 for fp32, else 2); `None` for a value gpulint cannot size.
fn kv_bytes(kv_cache_dtype: Option<&str>, dtype: Option<Dtype>) -> Option<f64> {
    match kv_cache_dtype {
        Some(v) if v != "auto" => Dtype::parse(v).map(Dtype::bytes),
        _ if dtype == Some(Dtype::Fp32) => Some(4.0),
        _ => Some(2.0),
    }
}

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    kaito::check(cx, w, hits);
    // A KServe model with no image runs its serving runtime's engine and flags.
    super::runtime_view::each_serving(cx, w, hits, check_container);
}

/// FIT002–FIT005 (and NIM's GPU012) on one container.
fn check_container(cx: &Context, w: &Workload, c: &Container, hits: &mut Vec<Hit>) {
    if nim::runs_nim(c) {
        nim::check(cx, w, c, hits);
        return;
    }
    let s = served(cx, c);
    if matches!(s, Ok(None)) {
        return;
    }
    // Without a known GPU nothing is judged, and an unknown model is not worth a note.
    let Some(on) = landing(cx, w, c) else {
        return;
    };
    match s {
        Ok(Some(FromFlags {
            served: s,
            model,
            context,
            fraction_written,
        })) => {
            let measured = super::headroom::usage_of(cx, w, c);
            let site = Site {
                who: container_label(c),
                container: Some(c),
                model: flag_span(cx, model.node, &model.flag),
                context: context
                    .as_ref()
                    .map(|setting| flag_span(cx, setting.node, &setting.flag)),
                words: Words::Flags {
                    fraction_written,
                    context_flag: context.map(|setting| setting.flag),
                },
                sizer: Sizer::Flags,
            };
            judge(
                &site,
                &s,
                &on,
                measured.as_ref(),
                cx.policy.concurrent_requests,
                hits,
            )
        }
        Ok(None) => {}
        Err(NotJudged::Unknown(model)) => {
            if super::is_gpu_container(cx, c) {
                hits.push(unknown(cx, c, &model));
            }
        }
        Err(NotJudged::Setting(setting, why, help)) => {
            if super::is_gpu_container(cx, c) {
                hits.push(not_judged(cx, c, &setting, &why, help));
            }
        }
    }
}

/// FIT005.
fn unknown(cx: &Context, c: &Container, model: &Setting) -> Hit {
    let (span, anchor) = flag_span(cx, model.node, &model.flag);
    Hit::new(
        Rule::ModelUnknown,
        span,
        format!(
            "not judged: the model `{}` served in {} is not in gpulint's model catalogue, so whether it fits its GPU was not checked",
            model.value.as_deref().unwrap_or(&model.written),
            container_label(c)
        ),
        "model not in the catalogue".into(),
    )
    .help(UNKNOWN_MODEL_HELP)
    .comment_anchor(anchor)
    .container(c)
}

/// FIT005: a setting the arithmetic is not for.
fn not_judged(cx: &Context, c: &Container, setting: &Setting, why: &str, help: &str) -> Hit {
    let (span, anchor) = flag_span(cx, setting.node, &setting.flag);
    Hit::new(
        Rule::ModelUnknown,
        span,
        format!(
            "not judged: {why}, so whether the model in {} fits its GPU was not checked",
            container_label(c)
        ),
        "sizing not read".into(),
    )
    .help(help)
    .comment_anchor(anchor)
    .container(c)
}

const UNKNOWN_MODEL_HELP: &str = "add it under `models:` in .gpulint.yaml (parameters, layers, KV heads, head dimension, context, dtype: its config.json), see docs/models.md";

fn gib(v: f64) -> String {
    format!("{v:.1} GiB")
}

fn inputs(
    s: &Served,
    model: &Model,
    dtype: Dtype,
    tp: u64,
    capacity_gib: f64,
    context: u64,
) -> Inputs {
    Inputs {
        weights_gib: weights_gib(model, dtype),
        tp,
        pp: s.pp,
        kv_bytes_per_token: kv_bytes_per_token(model, tp, s.pp, s.kv_bytes),
        capacity_gib,
        fraction: s.fraction,
        covers: s.flags.fraction_covers,
        context,
    }
}

/// What the engine may use on the GPU, for people: `22.5 GiB × 0.90, the default, less 2.3 GiB …`.
fn usable_text(site: &Site, s: &Served, on: &Landing, e: &Estimate) -> String {
    if s.flags.fraction_covers == FractionCovers::KvOfFree {
        return format!(
            "{} usable on {}: {} less {} of activations and CUDA context; the KV cache takes what the weights leave × {}",
            gib(e.usable),
            on.describe(),
            gib(on.gpu.gib()),
            gib(e.overhead),
            site.words.share(s.fraction),
        );
    }
    let overhead = if e.overhead > 0.0 {
        format!(", less {} of activations and CUDA context", gib(e.overhead))
    } else {
        String::new()
    };
    format!(
        "{} usable on {}: {} × {}{overhead}",
        gib(e.usable),
        on.describe(),
        gib(on.gpu.gib()),
        site.words.share(s.fraction),
    )
}

fn layout(s: &Served) -> String {
    match (s.tp, s.pp) {
        (1, 1) => "on one GPU".into(),
        (t, 1) => format!("over tensor parallel {t}"),
        (t, p) => format!("over tensor parallel {t} × pipeline parallel {p}"),
    }
}

fn judge(
    site: &Site,
    s: &Served,
    on: &Landing,
    measured: Option<&Usage>,
    concurrent_requests: u64,
    hits: &mut Vec<Hit>,
) {
    let model = s.found.model;
    let context = s.context.unwrap_or(model.context);
    let e = estimate(&inputs(s, model, s.dtype, s.tp, on.gpu.gib(), context));
    let checked = measured.and_then(|u| measured_fit(u, s, on, &e));
    let fit = Fit {
        model: s.name.clone(),
        gpu: on.gpu.name.clone(),
        dtype: s.dtype.name(),
        tensor_parallel: s.tp,
        pipeline_parallel: s.pp,
        context,
        weights_gib: tenth(e.weights),
        kv_gib: tenth(e.kv_one),
        usable_gib: tenth(e.usable),
        kv_tokens: e.kv_tokens,
        measured: checked.clone(),
        weights_only: false,
    };
    let clause = |starts: bool| {
        checked
            .as_ref()
            .map(|m| measured_clause(m, starts))
            .unwrap_or_default()
    };
    let who = &site.who;
    let hit = |h: Hit| match site.container {
        Some(c) => h.container(c),
        None => h,
    };
    let (model_span, model_anchor) = site.model;
    if !e.weights_fit() {
        let total = weights_gib(model, s.dtype);
        let help = match &site.sizer {
            Sizer::Kaito(k) => k.weights_help(s, model, on, context),
            Sizer::Nim(n) => n.weights_help(s, model, on, context),
            Sizer::Flags => weights_help(s, model, on, context),
        };
        hits.push(hit(Hit::new(
            Rule::ModelWeightsDoNotFit,
            model_span,
            format!(
                "{} in {} is {} of weights: {} a GPU {} in {who}, above the {}: {} cannot load it{}",
                s.name,
                s.dtype.name(),
                gib(total),
                gib(e.weights),
                layout(s),
                usable_text(site, s, on, &e),
                s.engine.name,
                clause(true),
            ),
            format!("{} of weights a GPU, {} usable", gib(e.weights), gib(e.usable)),
        )
        .fit(fit)
        .help(help)
        .comment_anchor(model_anchor)));
        return;
    }
    if s.context.is_none() && !s.context_from_model {
        return;
    }
    let (span, anchor) = site.context.unwrap_or(site.model);
    let flag = site.words.context(&s.flags.context);
    let whose = if s.context.is_some() {
        site.words.context_value(&s.flags.context, context)
    } else {
        format!("{context}, the model's context (no {flag})")
    };
    if !e.context_fits() && s.context_shrinks {
        // TensorRT-LLM starts, with its longest sequence cut to what its KV cache holds.
        let fail_fast = s
            .flags
            .context_shrinks_unless
            .first()
            .cloned()
            .unwrap_or_default();
        hits.push(hit(Hit::new(
            Rule::ModelConcurrencyLow,
            span,
            format!(
                "one sequence of {whose} needs {} of KV cache a GPU for {} in {who}, but {} of weights leave {} for it of the {}: {} starts with its longest sequence cut to about {} tokens (without {fail_fast}){}",
                gib(e.kv_one),
                s.name,
                gib(e.weights),
                gib(e.kv_room),
                usable_text(site, s, on, &e),
                s.engine.name,
                e.kv_tokens,
                clause(false),
            ),
            format!("sequences cut to about {} tokens", e.kv_tokens),
        )
        .fit(fit)
        .help(format!(
            "no sequence longer than about {} tokens is served; set {} (the most the KV cache holds by this estimate), or give it more memory: a larger GPU, more tensor parallelism or a higher memory share",
            e.kv_tokens,
            site.words.set_context(&s.flags.context, e.largest_context())
        ))
        .comment_anchor(anchor)));
        return;
    }
    if !e.context_fits() {
        let largest = e.largest_context();
        let more = match &site.sizer {
            Sizer::Kaito(_) => "an instance type with more GPU memory, an fp8 KV cache (kv-cache-dtype: fp8) or a higher gpu-memory-utilization",
            Sizer::Nim(_) => "a larger GPU or a profile with more tensor parallelism (and as many GPUs)",
            Sizer::Flags if s.flags.kv_cache_dtype.is_empty() => {
                "a larger GPU, more tensor parallelism or a higher memory share"
            }
            Sizer::Flags => "a larger GPU, more tensor parallelism, an fp8 KV cache (--kv-cache-dtype fp8) or a higher memory share",
        };
        // vLLM's block size; TensorRT-LLM's tokens a block are its own (not modelled).
        let block = if s.flags.fraction_covers == FractionCovers::KvOfFree {
            String::new()
        } else {
            format!(", a multiple of the block size {BLOCK}")
        };
        let help = if largest >= BLOCK {
            format!(
                "set {} (the most the KV cache holds by this estimate{block}), or give it more memory: {more}",
                site.words.set_context(&s.flags.context, largest)
            )
        } else {
            match &site.sizer {
                Sizer::Kaito(_) => "the weights leave no room for the KV cache: use an instance type with more GPU memory or a quantized model".to_string(),
                Sizer::Nim(_) | Sizer::Flags => "the weights leave no room for the KV cache: use a larger GPU, more tensor parallelism or a quantized model".to_string(),
            }
        };
        hits.push(hit(Hit::new(
            Rule::ModelContextDoesNotFit,
            span,
            format!(
                "one sequence of {whose} needs {} of KV cache a GPU for {} in {who}, but {} of weights leave {}{} of the {}: {} refuses to start (its KV cache holds about {} tokens){}",
                gib(e.kv_one),
                s.name,
                gib(e.weights),
                gib(e.kv_room),
                if s.flags.fraction_covers == FractionCovers::KvOfFree {
                    " for it"
                } else {
                    ""
                },
                usable_text(site, s, on, &e),
                s.engine.name,
                e.kv_tokens,
                clause(true),
            ),
            format!("needs {} of KV cache, {} left", gib(e.kv_one), gib(e.kv_room)),
        )
        .fit(fit)
        .help(help)
        .comment_anchor(anchor)));
        return;
    }
    let n = e.concurrent(context);
    // Said when the engine is told to batch more than the cache holds (else the policy's
    // `concurrent_requests`, 1 by default), or when not even one sequence fits by the estimate
    // (within FIT003's tolerance).
    let wanted = s.max_seqs.unwrap_or(concurrent_requests);
    if n == 0 || n < wanted {
        let seqs = match s.max_seqs {
            Some(m) if !s.flags.max_seqs.is_empty() => format!(
                " ({})",
                site.words
                    .setting_value(&s.flags.max_seqs, "max-num-seqs", m)
            ),
            _ if wanted > 1 => format!(" (policy.concurrent_requests {wanted})"),
            _ => String::new(),
        };
        let room = if n == 0 {
            format!(
                "room for less than one request of {} tokens by this estimate (within FIT003's tolerance of {:.0}%: the engine may refuse to start)",
                context_short(context),
                TOLERANCE * 100.0
            )
        } else {
            format!(
                "room for {n} concurrent request(s) of {} tokens{seqs}",
                context_short(context)
            )
        };
        hits.push(hit(Hit::new(
            Rule::ModelConcurrencyLow,
            span,
            format!(
                "{room}: the KV cache of {} in {who} holds about {} tokens ({} of weights + {} of KV at {} a GPU, of {}){}",
                s.name,
                e.kv_tokens,
                gib(e.weights),
                gib(e.kv_one),
                context_short(context),
                usable_text(site, s, on, &e),
                clause(false),
            ),
            format!("{n} request(s) of {} at once", context_short(context)),
        )
        .fit(fit)
        .help(format!(
            "longer requests queue; if they need not be {context} tokens long, a lower {flag} serves more at once"
        ))
        .comment_anchor(anchor)));
    }
}

/// `32k` for 32768, `131072` otherwise plain.
fn context_short(n: u64) -> String {
    if n >= 1024 && n % 1024 == 0 {
        format!("{}k", n / 1024)
    } else {
        n.to_string()
    }
}

/// What would make the weights fit: the smallest tensor parallelism, a quantization, a GPU.
fn weights_help(s: &Served, model: &Model, on: &Landing, context: u64) -> String {
    let fits = |dtype: Dtype, tp: u64, capacity: f64| {
        estimate(&inputs(s, model, dtype, tp, capacity, context)).weights_fit()
    };
    let mut ways = Vec::new();
    let tp_flag = s
        .engine
        .parallelism
        .first()
        .and_then(|f| f.first())
        .cloned();
    if let Some(flag) = &tp_flag {
        if let Some(tp) = more_tensor_parallel(s.tp, |t| fits(s.dtype, t, on.gpu.gib())) {
            ways.push(format!("{flag} {tp} (with as many GPUs)"));
        }
    }
    if let Some(q) = s.flags.quantization.first() {
        if let Some(way) = quantization_way(
            s,
            |d| fits(d, s.tp, on.gpu.gib()),
            |method| format!("{q} {method}"),
        ) {
            ways.push(way);
        }
    }
    if let Some(way) = larger_gpu(on, |capacity| fits(s.dtype, s.tp, capacity)) {
        ways.push(way);
    }
    ways_text(
        "it fits with",
        &ways,
        "spread it over more GPUs (tensor or pipeline parallelism across nodes) or serve a smaller model",
    )
}

/// The smallest tensor parallel above `tp` (of 2, 4, 8, 16) with which `fits`.
fn more_tensor_parallel(tp: u64, fits: impl Fn(u64) -> bool) -> Option<u64> {
    [2u64, 4, 8, 16]
        .into_iter()
        .filter(|t| *t > tp)
        .find(|t| fits(*t))
}

/// A help naming the ways that would fit (`it fits with A, or B`), else `otherwise`.
fn ways_text(lead: &str, ways: &[String], otherwise: &str) -> String {
    if ways.is_empty() {
        otherwise.to_string()
    } else {
        format!("{lead} {}", ways.join(", or "))
    }
}

/// The smallest GPU of the table larger than the one it lands on with which `fits(capacity
/// GiB)`: `a GPU of 44.4 GiB or more (NVIDIA L40S)`.
fn larger_gpu(on: &Landing, fits: impl Fn(f64) -> bool) -> Option<String> {
    let gpu = accelerator::table()
        .iter()
        .map(|g| Candidate {
            name: g.name.clone(),
            memory_mib: g.memory_mib as f64,
        })
        .filter(|g| g.memory_mib > on.gpu.memory_mib)
        .filter(|g| fits(g.gib()))
        .min_by(|a, b| a.memory_mib.total_cmp(&b.memory_mib))?;
    Some(format!(
        "a GPU of {} or more ({})",
        gib(gpu.gib()),
        gpu.name
    ))
}

/// The first quantization (fp8, then a 4-bit copy) smaller than the weights' format with
/// which they fit: fp8 said as `flag("fp8")`, a 4-bit copy as a quantized checkpoint.
fn quantization_way(
    s: &Served,
    fits: impl Fn(Dtype) -> bool,
    flag: impl Fn(&str) -> String,
) -> Option<String> {
    for (dtype, method) in [(Dtype::Fp8, "fp8"), (Dtype::Int4, "awq or gptq")] {
        if dtype.bytes() < s.dtype.bytes() && fits(dtype) {
            return Some(if dtype == Dtype::Fp8 {
                flag(method)
            } else {
                format!("a 4-bit quantized copy ({method})")
            });
        }
    }
    None
}

mod kaito;
mod nim;

#[cfg(test)]
mod tests;
