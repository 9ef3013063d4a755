//! NVIDIA NIM for LLMs: what a NIM container serves and how it is sized, read from NIM's own
//! settings, then judged like any engine ([`judge`]) when its profile says enough, else by
//! the bound no profile can beat.
//!
//! A NIM picks a *profile* at start (a backend, a precision, a tensor × pipeline parallel
//! size) from the GPUs it finds: optimized before generic, lower precision first
//! (docs.nvidia.com/nim/large-language-models/1.0.0/optimization.html, 1.12.0/profiles.html).
//! So the layout and the weights' format are known only when the manifest pins them:
//! - a readable `NIM_MODEL_PROFILE` (`vllm-bf16-tp2-pp1`, `tensorrt_llm-a100-fp16-tp1-throughput`;
//!   1.1.0/profiles.html: the readable name or the id), or a NIMService's
//!   `spec.storage.nimCache.profile`, which the operator passes as `NIM_MODEL_PROFILE`;
//! - `NIM_TENSOR_PARALLEL_SIZE` / `NIM_PIPELINE_PARALLEL_SIZE`, or vLLM's flags after `nim-serve`
//!   (2.x: command line > `NIM_*` > profile tags, 2.0.0/reference/advanced-configuration.html);
//! - a checkpoint named by `NIM_MODEL_PATH` (2.x) or `NIM_MODEL_NAME` (the 1.x multi-LLM
//!   `llm-nim` image): `hf://org/model` is served in its published format.
//!
//! With both the layout and the format known, FIT002–FIT004 judge it as its backend (vLLM by
//! default: 2.0 is built on vLLM alone; its `--gpu-memory-utilization` defaults to 0.9,
//! troubleshooting/memory.html). Otherwise only FIT002's bound is said: even at 4 bits a
//! parameter (the smallest precision NIM's memory page sizes: INT4 and NVFP4, 0.5 byte) over
//! every GPU of the pod, the weights exceed a whole GPU, so no profile can load them. NIM's
//! memory settings whose meaning its documentation does not give (`NIM_KVCACHE_PERCENT`,
//! `NIM_GPU_MEM_FRACTION`, `NIM_LOW_MEMORY_MODE`, `NIM_RELAX_MEM_CONSTRAINTS`) and
//! `NIM_PASSTHROUGH_ARGS` are not judged (FIT005 says so).

use super::{
    container_label, estimate, flag_span, gib, judge, kv_bytes, kv_bytes_per_token, landing,
    larger_gpu, more_tensor_parallel, quantization_way, tenth, ways_text, weights_dtype,
    weights_gib, Fit, Inputs, Served, Site, Sizer, Words, UNKNOWN_MODEL_HELP,
};
use crate::k8s::accelerator::Landing;
use crate::k8s::engine::{self, FractionCovers, Setting};
use crate::k8s::model::{Dtype, Found, Model};
use crate::k8s::workload::{Container, Workload};
use crate::rules::{Context, Hit, Rule};
use crate::source::yaml::Node;

/// Settings of NIM whose effect on memory its documentation does not say: not judged.
const UNREAD: &[&str] = &[
    "NIM_KVCACHE_PERCENT",
    "NIM_GPU_MEM_FRACTION",
    "NIM_GPU_MEMORY_FRACTION",
    "NIM_LOW_MEMORY_MODE",
    "NIM_RELAX_MEM_CONSTRAINTS",
    "NIM_PASSTHROUGH_ARGS",
];

/// Settings that spread one NIM over several pods (the operator's LeaderWorkerSet backend):
/// the pod's GPUs are not all its ranks.
const MULTI_NODE: &[&str] = &["NIM_MULTI_NODE", "NIM_NUM_COMPUTE_NODES"];

/// Words of NIM images that serve no LLM (embedding, reranking, retrieval, safety classifiers,
/// speech, vision, OCR): not this rule's.
const NOT_LLM: &[&str] = &[
    "embed",
    "rerank",
    "retriever",
    "nemoguard",
    "safety",
    "parse",
    "ocr",
    "riva",
    "asr",
    "tts",
    "clip",
    "cosmos",
    "yolox",
    "elements",
    "structure",
    "vista",
    "diffusion",
    "flux",
    // BioNeMo, Maxine, Earth-2, Omniverse.
    "diffdock",
    "alphafold",
    "openfold",
    "evo2",
    "genmol",
    "molmim",
    "esm2",
    "proteinmpnn",
    "msa-search",
    "audio2face",
    "maxine",
    "fourcastnet",
    "corrdiff",
    "usd",
];

/// Words of LLM NIM image names: an image the catalogue does not know gets FIT005 only with
/// one of them (NIM serves many models that are not LLMs, whose names say little).
const LLM_WORDS: &[&str] = &[
    "instruct",
    "chat",
    "llama",
    "mistral",
    "mixtral",
    "gemma",
    "qwen",
    "deepseek",
    "phi-",
    "gpt",
    "nemotron",
    "granite",
    "codestral",
    "starcoder",
    "falcon",
    "jamba",
    "dbrx",
    "glm",
    "kimi",
    "minimax",
    "coder",
    "reason",
    "-it",
];

/// The generic image: it serves what `NIM_MODEL_NAME` names, nothing by itself.
const GENERIC_IMAGE: &str = "llm-nim";

/// The bytes a parameter no NIM profile goes below.
const SMALLEST: Dtype = Dtype::Int4;

/// Whether a container runs NIM (its image is under `nvcr.io/nim/`, or it runs `nim-serve`).
pub(super) fn runs_nim(c: &Container) -> bool {
    engine::detect(c).is_some_and(|e| e.id == "nim")
}

/// What a readable profile name says; all `None` for a profile id (a hash).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Profile {
    /// The engine row of its backend (`vllm`, `sglang`, `trtllm`).
    backend: Option<&'static str>,
    precision: Option<Dtype>,
    tp: Option<u64>,
    pp: Option<u64>,
}

/// `vllm-bf16-tp2-pp1`, `tensorrt_llm-h100-fp8-tp2-pp1-throughput`,
/// `tensorrt_llm-trtllm_buildable-bf16-tp8-pp2`, `vllm-nvfp4-tp2-pp1-18.0`, or a backend alone
/// (`vllm`, the multi-LLM image's profiles).
fn parse_profile(text: &str) -> Profile {
    let text = text.trim().to_ascii_lowercase();
    let mut words = text.split('-');
    let backend = match words.next() {
        Some("vllm") => Some("vllm"),
        Some("sglang") => Some("sglang"),
        Some("tensorrt_llm" | "trtllm") => Some("trtllm"),
        _ => return Profile::default(),
    };
    let mut p = Profile {
        backend,
        ..Profile::default()
    };
    for w in words {
        let count = |prefix: &str| {
            w.strip_prefix(prefix)
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|n| *n > 0)
        };
        if let Some(n) = count("tp") {
            p.tp = Some(n);
        } else if let Some(n) = count("pp") {
            p.pp = Some(n);
        } else if let Some(d) = precision(w) {
            p.precision = Some(d);
        }
    }
    p
}

/// A profile's precision word; NVFP4 counts as 4 bits (NIM's memory page: 0.5 byte).
fn precision(word: &str) -> Option<Dtype> {
    match word {
        "bf16" => Some(Dtype::Bf16),
        "fp16" => Some(Dtype::Fp16),
        "fp8" => Some(Dtype::Fp8),
        "int8" | "int8_wo" | "int8wo" | "w8a16" => Some(Dtype::Int8),
        "int4" | "int4_awq" | "awq" | "w4a16" | "nvfp4" => Some(Dtype::Int4),
        "mxfp4" => Some(Dtype::Mxfp4),
        _ => None,
    }
}

/// What names the model: a setting (`NIM_MODEL_PATH=hf://…`) or the image itself.
enum Named<'a> {
    Setting(Setting<'a>),
    Image {
        node: &'a Node,
        image: String,
        /// The path under `nim/` (`meta/llama3-8b-instruct`).
        path: String,
    },
}

impl<'a> Named<'a> {
    fn node(&self) -> &'a Node {
        match self {
            Named::Setting(s) => s.node,
            Named::Image { node, .. } => node,
        }
    }
}

/// The path of a NIM image under `nim/`: `nvcr.io/nim/meta/llama3-8b-instruct:1.0.0` →
/// `meta/llama3-8b-instruct`.
fn nim_path(repository: &str) -> Option<&str> {
    repository
        .strip_prefix("nim/")
        .or_else(|| repository.split_once("/nim/").map(|(_, p)| p))
        .filter(|p| !p.is_empty())
}

fn read<'a>(c: &Container<'a>, names: &[&str]) -> Option<Setting<'a>> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    engine::setting(c, &names)
}

/// A whole positive number a setting gives; `Err` when it is written but not one.
fn count(s: Option<Setting>) -> Result<Option<u64>, ()> {
    match s {
        None => Ok(None),
        Some(s) => s
            .value
            .as_deref()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or(()),
    }
}

/// How the help of a finding judged from a NIM profile names the ways that fit.
pub(super) struct Sizing {
    /// The settings that fixed the layout, for people (`NIM_MODEL_PROFILE vllm-bf16-tp1`).
    layout_from: String,
}

impl Sizing {
    /// What would make the weights fit: a profile of more tensor parallelism, of a lower
    /// precision, or a larger GPU.
    pub(super) fn weights_help(
        &self,
        s: &Served,
        model: &Model,
        on: &Landing,
        context: u64,
    ) -> String {
        let fits = |dtype: Dtype, tp: u64, capacity: f64| {
            estimate(&super::inputs(s, model, dtype, tp, capacity, context)).weights_fit()
        };
        let mut ways = Vec::new();
        if let Some(tp) = more_tensor_parallel(s.tp, |t| fits(s.dtype, t, on.gpu.gib())) {
            ways.push(format!(
                "a profile of tensor parallel {tp} (instead of {}) with {} GPU(s)",
                self.layout_from,
                tp.saturating_mul(s.pp)
            ));
        }
        if let Some(way) = quantization_way(
            s,
            |d| fits(d, s.tp, on.gpu.gib()),
            |method| format!("an {method} profile"),
        ) {
            ways.push(way);
        }
        if let Some(way) = larger_gpu(on, |capacity| fits(s.dtype, s.tp, capacity)) {
            ways.push(way);
        }
        ways_text(
            "it fits with",
            &ways,
            "spread it over more GPUs or serve a smaller model",
        )
    }
}

/// The layout and backend a NIM container's settings and profile say.
struct Layout<'a> {
    backend: &'static engine::Engine,
    flags: &'static engine::ServingFlags,
    profile: Profile,
    /// Tensor parallel, when a setting or the profile says it.
    tp: Option<u64>,
    pp: u64,
    /// Its ranks span several pods (the operator's LeaderWorkerSet backend).
    multi_node: bool,
    /// What fixed the layout, for people: `NIM_TENSOR_PARALLEL_SIZE 2`, `the profile vllm-bf16-tp2`.
    from: String,
    /// Where a finding on the layout points.
    at: Option<&'a Node>,
}

/// `None` when a layout setting is written but is not a whole number (not judged).
fn layout<'a>(c: &Container<'a>) -> Option<Layout<'a>> {
    let profile_setting = read(c, &["NIM_MODEL_PROFILE"]);
    // A NIMService's `storage.nimCache.profile`, which the operator passes as
    // NIM_MODEL_PROFILE (a NIMCache's own `profiles`, `precision` or `tensorParallelism` only
    // say what it caches: NIM still picks, and may download, another).
    let spec_profile = c.node.get_path(&["storage", "nimCache", "profile"]);
    let profile_text = profile_setting
        .as_ref()
        .and_then(|s| s.value.clone())
        .or_else(|| spec_profile.and_then(Node::text).map(str::to_string))
        .filter(|p| !p.trim().is_empty());
    let profile = profile_text
        .as_deref()
        .map(parse_profile)
        .unwrap_or_default();
    let backend = engine::by_id(profile.backend.unwrap_or("vllm"))?;
    let flags = backend.serving.as_ref()?;
    let spelled = |factor: usize, env: &str| {
        let mut all: Vec<&str> = backend
            .parallelism
            .get(factor)
            .map(|names| names.iter().map(String::as_str).collect())
            .unwrap_or_default();
        all.push(env);
        read(c, &all)
    };
    let tp_setting = spelled(0, "NIM_TENSOR_PARALLEL_SIZE");
    let pp_setting = spelled(1, "NIM_PIPELINE_PARALLEL_SIZE");
    let multi = |key: &str| {
        c.node
            .get_path(&["multiNode", "parallelism", key])
            .and_then(Node::text)
            .and_then(|t| t.trim().parse::<u64>().ok())
            .filter(|n| *n > 0)
    };
    let written: Vec<String> = [&tp_setting, &pp_setting]
        .into_iter()
        .flatten()
        .map(|s| format!("{} {}", s.flag, s.written))
        .collect();
    let tp_set = count(tp_setting.clone()).ok()?;
    let pp_set = count(pp_setting.clone()).ok()?;
    let from = if !written.is_empty() {
        written.join(", ")
    } else {
        match &profile_text {
            Some(p) if profile.tp.is_some() => format!("the profile {p}"),
            _ => "NIM's choice".into(),
        }
    };
    Some(Layout {
        backend,
        flags,
        profile,
        tp: tp_set.or(multi("tensor")).or(profile.tp),
        pp: pp_set.or(multi("pipeline")).or(profile.pp).unwrap_or(1),
        multi_node: c.node.get("multiNode").is_some()
            || MULTI_NODE.iter().any(|name| read(c, &[name]).is_some()),
        from,
        at: tp_setting
            .or(pp_setting)
            .or(profile_setting)
            .map(|s| s.node)
            .or(spec_profile),
    })
}

/// FIT002–FIT005 and GPU012 for a container that runs NIM.
pub(super) fn check(cx: &Context, w: &Workload, c: &Container, hits: &mut Vec<Hit>) {
    let Some(named) = named(c) else {
        return;
    };
    let Some(l) = layout(c) else {
        return;
    };
    // The operator gives a NIMService that asks for no GPUs the tensor parallel of the profile
    // its `storage.nimCache.profile` names (not its pipeline parallel); without one it gets
    // none.
    let asks_gpus = c
        .resources
        .limits
        .entries
        .iter()
        .chain(&c.resources.requests.entries)
        .any(|q| cx.gpu_names.classify(q.name) != crate::k8s::gpu::GpuName::Other);
    let spec_profile = c.node.get_path(&["storage", "nimCache", "profile"]);
    let gpus = match super::super::gpu_sizing::gpu_count(cx, c).filter(|n| *n > 0) {
        Some(n) => n,
        None if !asks_gpus && spec_profile.is_some() => match l.tp {
            Some(tp) => tp,
            None => return,
        },
        None => return,
    };
    if !l.multi_node {
        // Unknown tensor parallel is at least 1: pipeline parallel alone may exceed the GPUs.
        let tp = l.tp.unwrap_or(1);
        if tp.saturating_mul(l.pp) > gpus {
            let at = l.at.unwrap_or_else(|| named.node());
            hits.push(too_many_ranks(c, at, &l.from, tp, l.pp, gpus));
            return;
        }
    }
    let found = match &named {
        Named::Setting(s) => {
            let Some(value) = s.value.as_deref() else {
                return;
            };
            match ngc_path(value) {
                Some(path) => find_image_model(cx, path),
                None => cx.models.find(value),
            }
        }
        Named::Image { path, .. } => find_image_model(cx, path),
    };
    // Without a known GPU nothing is judged, and an unknown model is not worth a note.
    let Some(on) = landing(cx, w, c) else {
        return;
    };
    let Some(found) = found else {
        let evidence = match &named {
            Named::Setting(_) => true,
            Named::Image { path, .. } => LLM_WORDS.iter().any(|word| path.contains(word)),
        };
        if evidence {
            hits.push(unknown(cx, c, &named));
        }
        return;
    };
    if let Some(s) = UNREAD.iter().find_map(|name| read(c, &[name])) {
        hits.push(not_judged(cx, c, &s));
        return;
    }
    // The weights' format: the profile's, else a checkpoint's as published; an image's own
    // weights are in whatever format the profile NIM picks.
    let precision = l.profile.precision.or(match &named {
        Named::Setting(_) => weights_dtype(&found, None, None),
        Named::Image { .. } => None,
    });
    match (precision, l.tp) {
        (Some(dtype), Some(tp)) => judge_pinned(cx, w, c, &named, found, &l, dtype, tp, &on, hits),
        _ if l.multi_node => {}
        (dtype, tp) => bound(
            cx,
            c,
            &named,
            found,
            dtype,
            // Unknown tensor parallel: as much as the GPUs the pipeline stages leave.
            tp.unwrap_or((gpus / l.pp.max(1)).max(1)),
            &l,
            gpus,
            &on,
            hits,
        ),
    }
}

/// The setting or image that names the model; `None` for the generic image with nothing
/// named, or an image that serves no LLM.
fn named<'a>(c: &Container<'a>) -> Option<Named<'a>> {
    if let Some(s) = read(c, &["NIM_MODEL_PATH", "NIM_MODEL_NAME"]) {
        return Some(Named::Setting(s));
    }
    let node = c.node.get("image")?;
    let image = engine::image(c)?;
    let repository = engine::image_repository_of(c)?;
    let path = nim_path(&repository)?.to_string();
    let name = path.rsplit('/').next().unwrap_or(&path);
    if name == GENERIC_IMAGE || NOT_LLM.iter().any(|word| name.contains(word)) {
        return None;
    }
    Some(Named::Image { node, image, path })
}

/// `ngc://nim/meta/llama-3.3-70b-instruct:hf` → `meta/llama-3.3-70b-instruct`.
fn ngc_path(value: &str) -> Option<&str> {
    let rest = value.trim().strip_prefix("ngc://")?;
    let rest = rest.split(':').next().unwrap_or(rest);
    Some(rest.strip_prefix("nim/").unwrap_or(rest))
}

/// The model a NIM image path serves: the catalogue's `nim:` entries, else the model of that
/// name (NVIDIA names most LLM NIMs as the model: `meta/llama-3.1-8b-instruct`).
fn find_image_model<'c>(cx: &'c Context, path: &str) -> Option<Found<'c>> {
    let path = variant_of(path);
    if let Some(model) = cx.models.find_nim(path) {
        return Some(Found {
            model,
            quantized: None,
        });
    }
    cx.models.find(path)
}

/// An image path without the suffix of a build of the same model for other hardware or a
/// production branch: `meta/llama-3.1-8b-instruct-dgx-spark` (DGX Spark's ARM64 build),
/// `meta/llama-3.1-8b-instruct-pb24h2` (production branch 24H2).
fn variant_of(path: &str) -> &str {
    if let Some(base) = path.strip_suffix("-dgx-spark") {
        return base;
    }
    // `-pbYYhN`.
    if let Some((base, branch)) = path.rsplit_once("-pb") {
        let b = branch.as_bytes();
        if b.len() == 4
            && b[0].is_ascii_digit()
            && b[1].is_ascii_digit()
            && b[2] == b'h'
            && b[3].is_ascii_digit()
        {
            return base;
        }
    }
    path
}

/// Judged like its backend: the profile (or the settings) fix the layout and the format.
#[allow(clippy::too_many_arguments)]
fn judge_pinned(
    cx: &Context,
    w: &Workload,
    c: &Container,
    named: &Named,
    found: Found,
    l: &Layout,
    dtype: Dtype,
    tp: u64,
    on: &Landing,
    hits: &mut Vec<Hit>,
) {
    let (backend, flags, pp) = (l.backend, l.flags, l.pp);
    let Some(nim) = engine::by_id("nim") else {
        return;
    };
    let context_names: Vec<String> = flags
        .context
        .iter()
        .cloned()
        .chain(["NIM_MAX_MODEL_LEN".to_string()])
        .collect();
    let context_setting = engine::setting(c, &context_names);
    let context = match &context_setting {
        Some(s) => match s
            .value
            .as_deref()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            Some(n) if n > 0 => Some(n),
            _ => return,
        },
        None => None,
    };
    let fraction_setting = engine::setting(c, &flags.memory_fraction);
    let fraction = match &fraction_setting {
        Some(s) => match s
            .value
            .as_deref()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|f| *f > 0.0 && *f <= 1.0)
        {
            Some(f) => f,
            None => return,
        },
        None => flags.memory_fraction_default,
    };
    let kv_setting = engine::setting(c, &flags.kv_cache_dtype);
    let Some(kv_bytes) = kv_bytes(kv_setting.as_ref().and_then(|s| s.value.as_deref()), None)
    else {
        return;
    };
    let served = Served {
        engine: nim,
        flags,
        name: found.model.name().to_string(),
        found,
        dtype,
        kv_bytes,
        tp,
        pp,
        fraction,
        context,
        // Without a context setting NIM's choice is not documented: not judged.
        context_from_model: false,
        max_seqs: engine::setting(c, &flags.max_seqs)
            .and_then(|s| s.value?.trim().parse::<u64>().ok()),
        context_shrinks: !flags.context_shrinks_unless.is_empty()
            && !engine::switch(c, &flags.context_shrinks_unless),
    };
    let (model_span, model_anchor) = model_span(cx, named);
    let site = Site {
        who: format!("{} ({} backend)", container_label(c), backend.name),
        container: Some(c),
        model: (model_span, model_anchor),
        context: context_setting
            .as_ref()
            .map(|s| flag_span(cx, s.node, &s.flag)),
        words: Words::Flags {
            fraction_written: fraction_setting.is_some(),
            context_flag: context_setting.map(|s| s.flag),
        },
        sizer: Sizer::Nim(Sizing {
            layout_from: l.from.clone(),
        }),
    };
    judge(
        &site,
        &served,
        on,
        super::super::headroom::usage_of(cx, w, c).as_ref(),
        cx.policy.concurrent_requests,
        hits,
    );
}

fn model_span(
    cx: &Context,
    named: &Named,
) -> (crate::source::yaml::Span, crate::source::yaml::Span) {
    match named {
        Named::Setting(s) => flag_span(cx, s.node, &s.flag),
        Named::Image { node, .. } => (node.span, node.span),
    }
}

/// FIT002 when no profile can load it: at `dtype` (4 bits a parameter when the profile is not
/// known) over `tp` × `pp` GPUs the weights exceed a whole GPU less its overhead.
#[allow(clippy::too_many_arguments)]
fn bound(
    cx: &Context,
    c: &Container,
    named: &Named,
    found: Found,
    dtype: Option<Dtype>,
    tp: u64,
    l: &Layout,
    gpus: u64,
    on: &Landing,
    hits: &mut Vec<Hit>,
) {
    let pp = l.pp;
    let model = found.model;
    let at = dtype.unwrap_or(SMALLEST);
    let fits =
        |tp: u64, capacity: f64| estimate(&bound_inputs(model, at, tp, pp, capacity)).weights_fit();
    let e = estimate(&bound_inputs(model, at, tp, pp, on.gpu.gib()));
    if e.weights_fit() {
        return;
    }
    let format = match dtype {
        Some(d) => format!("in {}", d.name()),
        None => format!(
            "even at 4 bits a parameter ({}, the smallest precision of NIM's profiles)",
            SMALLEST.name()
        ),
    };
    let layout = match (tp, pp) {
        (1, 1) => "on one GPU".to_string(),
        (t, 1) if t == gpus => format!("over all {t} of its GPUs"),
        (t, 1) => format!("over tensor parallel {t}"),
        (t, p) => format!("over tensor parallel {t} × pipeline parallel {p}"),
    };
    let mut ways = Vec::new();
    if let Some(more) = more_tensor_parallel(tp, |t| fits(t, on.gpu.gib())) {
        ways.push(format!(
            "{} GPUs (nvidia.com/gpu: {})",
            more.saturating_mul(pp),
            more.saturating_mul(pp)
        ));
    }
    if let Some(way) = larger_gpu(on, |capacity| fits(tp, capacity)) {
        ways.push(way);
    }
    let help = ways_text(
        "a profile may load it with",
        &ways,
        "spread it over more GPUs (a multi-node NIM) or serve a smaller model",
    );
    let (span, anchor) = model_span(cx, named);
    let fit = Fit {
        model: model.name().to_string(),
        gpu: on.gpu.name.clone(),
        dtype: at.name(),
        tensor_parallel: tp,
        pipeline_parallel: pp,
        context: model.context,
        weights_gib: tenth(e.weights),
        kv_gib: 0.0,
        usable_gib: tenth(e.usable),
        kv_tokens: 0,
        measured: None,
        weights_only: true,
    };
    hits.push(
        Hit::new(
            Rule::ModelWeightsDoNotFit,
            span,
            format!(
                "{} {format} is {} of weights: {} a GPU {layout} in {} (NVIDIA NIM), above the {} usable on {}: {} less {} of activations and CUDA context, the most any NIM backend gives the weights: {}",
                model.name(),
                gib(weights_gib(model, at)),
                gib(e.weights),
                container_label(c),
                gib(e.usable),
                on.describe(),
                gib(on.gpu.gib()),
                gib(e.overhead),
                match dtype {
                    Some(d) => format!("no {} profile can load it", d.name()),
                    None => "no NIM profile can load it".to_string(),
                },
            ),
            format!("{} of weights a GPU, {} usable", gib(e.weights), gib(e.usable)),
        )
        .fit(fit)
        .help(help)
        .comment_anchor(anchor)
        .container(c),
    );
}

/// The bound's arithmetic: the weights may use the whole GPU less the overhead (the most any
/// NIM backend lets them: TensorRT-LLM's share is the KV cache's only).
fn bound_inputs(model: &Model, dtype: Dtype, tp: u64, pp: u64, capacity_gib: f64) -> Inputs {
    Inputs {
        weights_gib: weights_gib(model, dtype),
        tp,
        pp,
        kv_bytes_per_token: kv_bytes_per_token(model, tp, pp, 2.0),
        capacity_gib,
        fraction: 1.0,
        covers: FractionCovers::KvOfFree,
        context: 0,
    }
}

/// GPU012: the profile's (or the settings') ranks are more than the pod's GPUs.
fn too_many_ranks(c: &Container, at: &Node, layout_from: &str, tp: u64, pp: u64, gpus: u64) -> Hit {
    let ranks = tp.saturating_mul(pp);
    let (span, anchor) = (at.span, at.span);
    Hit::new(
        Rule::GpuParallelismMismatch,
        span,
        format!(
            "NVIDIA NIM in {} runs tensor parallel {tp} × pipeline parallel {pp} ({layout_from}): {ranks} GPU(s), but the pod has {gpus}: a NIM profile needs tensor × pipeline parallel GPUs, so it fails at start",
            container_label(c)
        ),
        format!("{ranks} ranks, {gpus} GPUs"),
    )
    .help(format!(
        "give the pod {ranks} GPU(s) (nvidia.com/gpu: {ranks}), or choose a profile of tensor × pipeline parallel {gpus}"
    ))
    .comment_anchor(anchor)
    .container(c)
}

/// FIT005: the model a NIM serves is not in the catalogue.
fn unknown(cx: &Context, c: &Container, named: &Named) -> Hit {
    let (span, anchor) = model_span(cx, named);
    let (what, help) = match named {
        Named::Setting(s) => (
            format!("`{}`", s.value.as_deref().unwrap_or(&s.written)),
            UNKNOWN_MODEL_HELP.to_string(),
        ),
        Named::Image { image, path, .. } => (
            format!("of the NIM image `{image}`"),
            format!("{UNKNOWN_MODEL_HELP}, with `nim: [{path}]` naming this image"),
        ),
    };
    Hit::new(
        Rule::ModelUnknown,
        span,
        format!(
            "not judged: the model {what} served in {} is not in gpulint's model catalogue, so whether it fits its GPU was not checked",
            container_label(c)
        ),
        "model not in the catalogue".into(),
    )
    .help(help)
    .comment_anchor(anchor)
    .container(c)
}

/// FIT005: a NIM setting whose effect on memory is not documented.
fn not_judged(cx: &Context, c: &Container, s: &Setting) -> Hit {
    let (span, anchor) = flag_span(cx, s.node, &s.flag);
    Hit::new(
        Rule::ModelUnknown,
        span,
        format!(
            "not judged: {} changes how NVIDIA NIM sizes its memory in a way its documentation does not give, so whether the model in {} fits its GPU was not checked",
            s.flag,
            container_label(c)
        ),
        "sizing not read".into(),
    )
    .help("without it, NIM's profile and its backend's flags are judged; see docs/models.md#nvidia-nim")
    .comment_anchor(anchor)
    .container(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_profiles_give_backend_precision_and_layout() {
        let p = parse_profile("vllm-bf16-tp2-pp1");
        assert_eq!(
            p,
            Profile {
                backend: Some("vllm"),
                precision: Some(Dtype::Bf16),
                tp: Some(2),
                pp: Some(1)
            }
        );
        let p = parse_profile("tensorrt_llm-H100-fp8-tp2-pp1-throughput");
        assert_eq!(
            (p.backend, p.precision, p.tp),
            (Some("trtllm"), Some(Dtype::Fp8), Some(2))
        );
        let p = parse_profile("tensorrt_llm-trtllm_buildable-bf16-tp8-pp2");
        assert_eq!((p.tp, p.pp), (Some(8), Some(2)));
        let p = parse_profile("vllm-nvfp4-tp2-pp1-18.0");
        assert_eq!((p.precision, p.tp), (Some(Dtype::Int4), Some(2)));
        let p = parse_profile("tensorrt_llm-A100-fp16-tp1-throughput");
        assert_eq!(
            (p.precision, p.tp, p.pp),
            (Some(Dtype::Fp16), Some(1), None)
        );
        assert_eq!(
            parse_profile("vllm"),
            Profile {
                backend: Some("vllm"),
                ..Profile::default()
            }
        );
        // A profile id says nothing gpulint can read.
        assert_eq!(
            parse_profile("07cd4f2bddd7a14ca84bab0a32602889fd0ae0eb76dc2eb0fc32594d065011a4"),
            Profile::default()
        );
        assert_eq!(
            parse_profile("vllm-bf16-tp0-ppx"),
            Profile {
                backend: Some("vllm"),
                precision: Some(Dtype::Bf16),
                ..Profile::default()
            }
        );
    }

    #[test]
    fn image_paths_and_ngc_uris_name_the_model() {
        assert_eq!(
            nim_path("nvcr.io/nim/meta/llama3-8b-instruct"),
            Some("meta/llama3-8b-instruct")
        );
        assert_eq!(
            nim_path("nim/meta/llama3-8b-instruct"),
            Some("meta/llama3-8b-instruct")
        );
        assert_eq!(nim_path("nvcr.io/nvidia/tritonserver"), None);
        assert_eq!(
            ngc_path("ngc://nim/meta/llama-3.3-70b-instruct:hf"),
            Some("meta/llama-3.3-70b-instruct")
        );
        assert_eq!(ngc_path("hf://meta-llama/Llama-3.1-8B-Instruct"), None);
        // Builds for other hardware and production branches serve the same model.
        assert_eq!(
            variant_of("meta/llama-3.1-8b-instruct-dgx-spark"),
            "meta/llama-3.1-8b-instruct"
        );
        assert_eq!(
            variant_of("meta/llama-3.1-8b-instruct-pb24h2"),
            "meta/llama-3.1-8b-instruct"
        );
        assert_eq!(variant_of("acme/model-pb2"), "acme/model-pb2");
        assert_eq!(variant_of("acme/model-pbxxhx"), "acme/model-pbxxhx");
    }
}
