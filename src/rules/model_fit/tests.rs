use super::*;
use crate::rules::test_support::run;
use crate::rules::RepoFacts;

/// A Deployment running `image` with `args` and `env` on `gpus` GPUs, its node selected by
/// `key: value`.
fn deployment(
    image: &str,
    args: &[&str],
    env: &[(&str, &str)],
    gpus: u32,
    key: &str,
    value: &str,
) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    let env: Vec<String> = env
        .iter()
        .map(|(n, v)| format!("{{name: {n}, value: {v:?}}}"))
        .collect();
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: m}}\nspec:\n  template:\n    spec:\n      nodeSelector: {{{key}: {value:?}}}\n      containers:\n      - name: server\n        image: {image}\n        args: [{}]\n        env: [{}]\n        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n",
        args.join(", "),
        env.join(", ")
    )
}

fn fit_rules(text: &str) -> Vec<(String, String)> {
    run(text, &RepoFacts::default(), false)
        .into_iter()
        .filter(|(r, _, _)| r.starts_with("FIT"))
        .map(|(r, _, m)| (r, m))
        .collect()
}

fn rules_of(text: &str) -> Vec<String> {
    fit_rules(text).into_iter().map(|(r, _)| r).collect()
}

const VLLM: &str = "vllm/vllm-openai:v0.10.1";
const TRTLLM: &str = "nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc1";
const GPU: &str = "nvidia.com/gpu.product";

fn inputs_8b_on(capacity_gib: f64, context: u64) -> Inputs {
    let m = crate::k8s::model::Catalogue::default()
        .find("meta-llama/Llama-3.1-8B-Instruct")
        .unwrap()
        .model
        .clone();
    Inputs {
        weights_gib: weights_gib(&m, Dtype::Bf16),
        tp: 1,
        pp: 1,
        kv_bytes_per_token: kv_bytes_per_token(&m, 1, 1, 2.0),
        capacity_gib,
        fraction: 0.9,
        covers: FractionCovers::All,
        context,
    }
}

#[test]
fn the_arithmetic_is_kaitos() {
    // Llama 3.1 8B: 8.03e9 × 2 bytes = 14.96 GiB; 2 × 32 × 8 × 128 × 2 = 131072 bytes a token.
    let i = inputs_8b_on(80.0, 8192);
    assert!((i.weights_gib - 14.957).abs() < 0.01, "{}", i.weights_gib);
    assert_eq!(i.kv_bytes_per_token, 131072.0);
    let e = estimate(&i);
    assert!((e.weights - 14.957 * 1.02).abs() < 0.01);
    assert!((e.usable - (72.0 - 2.3)).abs() < 1e-9);
    assert_eq!(e.kv_one, 1.0, "8192 tokens × 128 KiB = 1 GiB");
    // Tensor parallelism splits weights and KV heads; pipeline parallelism weights and layers.
    let m = crate::k8s::model::builtin()
        .iter()
        .find(|m| m.id == "meta-llama/Llama-3.1-70B-Instruct")
        .unwrap();
    assert_eq!(kv_bytes_per_token(m, 1, 1, 2.0), 327680.0);
    assert_eq!(kv_bytes_per_token(m, 4, 1, 2.0), 81920.0);
    assert_eq!(
        kv_bytes_per_token(m, 16, 1, 2.0),
        40960.0,
        "8 KV heads on 16 ranks: one each"
    );
    assert_eq!(kv_bytes_per_token(m, 4, 2, 2.0), 40960.0);
    // MLA: one latent of 512 + 64 a layer, on every rank.
    let ds = crate::k8s::model::builtin()
        .iter()
        .find(|m| m.id == "deepseek-ai/DeepSeek-V3")
        .unwrap();
    assert_eq!(kv_bytes_per_token(ds, 8, 1, 2.0), 576.0 * 61.0 * 2.0);
    // SGLang's share covers weights and KV only.
    let e = estimate(&Inputs {
        covers: FractionCovers::WeightsAndKv,
        ..inputs_8b_on(80.0, 8192)
    });
    assert_eq!(e.usable, 72.0);
}

/// TensorRT-LLM's share is the KV cache's, of what the weights, activations and CUDA context
/// leave: the weights may use the whole GPU less that overhead.
#[test]
fn the_kv_of_free_share_is_of_the_memory_left_after_the_weights() {
    let i = Inputs {
        covers: FractionCovers::KvOfFree,
        ..inputs_8b_on(80.0, 8192)
    };
    let e = estimate(&i);
    let weights = 14.957 * 1.02;
    assert!((e.usable - 77.7).abs() < 1e-9, "{}", e.usable);
    assert!(
        (e.kv_room - (77.7 - weights) * 0.9).abs() < 0.01,
        "{}",
        e.kv_room
    );
    assert_eq!(e.kv_tokens, (e.kv_room * GIB / 131072.0).floor() as u64);
    // A share of 0.5 halves the KV cache, not the weights' room.
    let half = estimate(&Inputs {
        fraction: 0.5,
        ..i.clone()
    });
    assert_eq!(half.usable, e.usable);
    assert!((half.kv_room - (77.7 - weights) * 0.5).abs() < 0.01);
    // Weights above the GPU less the overhead: no KV cache.
    let small = estimate(&Inputs {
        capacity_gib: 16.0,
        ..i
    });
    assert!(!small.weights_fit() || small.kv_room < 0.1);
}

/// trtllm-serve: the positional model (after the program or its `serve`), click's `_`
/// spellings, a context it cuts rather than refuses, the file of overrides and another backend
/// not judged.
#[test]
fn trtllm_serve_is_read_and_judged() {
    let on = |args: &[&str], gpus: u32, product: &str| {
        fit_rules(&deployment(TRTLLM, args, &[], gpus, GPU, product))
    };
    // 70B in bf16 over tensor parallel 2 on two L4s: cannot load, whatever the spelling.
    for args in [
        &[
            "trtllm-serve",
            "meta-llama/Llama-3.3-70B-Instruct",
            "--tp_size",
            "2",
        ][..],
        &[
            "trtllm-serve",
            "serve",
            "meta-llama/Llama-3.3-70B-Instruct",
            "--tensor_parallel_size=2",
        ],
    ] {
        let hits = on(args, 2, "NVIDIA-L4");
        assert_eq!(hits.len(), 1, "{args:?}: {hits:?}");
        assert_eq!(hits[0].0, "FIT002");
        assert!(
            hits[0].1.contains("over tensor parallel 2"),
            "{}",
            hits[0].1
        );
        assert!(hits[0].1.contains("less 2.3 GiB of activations and CUDA context; the KV cache takes what the weights leave × 0.90, the default"), "{}", hits[0].1);
    }
    // Llama 3.1 8B on an A10G with its whole context (131072): TensorRT-LLM starts and cuts
    // the sequence (FIT004), unless told to fail fast (FIT003).
    let hits = on(
        &["trtllm-serve", "meta-llama/Llama-3.1-8B-Instruct"],
        1,
        "NVIDIA-A10G",
    );
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].0, "FIT004");
    assert!(
        hits[0]
            .1
            .contains("TensorRT-LLM starts with its longest sequence cut to about"),
        "{}",
        hits[0].1
    );
    assert!(
        hits[0]
            .1
            .contains("(without --fail_fast_on_attention_window_too_large)"),
        "{}",
        hits[0].1
    );
    let hits = on(
        &[
            "trtllm-serve",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--fail_fast_on_attention_window_too_large",
        ],
        1,
        "NVIDIA-A10G",
    );
    assert_eq!(rules_of_hits(&hits), ["FIT003"], "{hits:?}");
    // 8k fits; a lower share (of the free memory) cuts it again.
    assert_eq!(
        rules_of_hits(&on(
            &[
                "trtllm-serve",
                "meta-llama/Llama-3.1-8B-Instruct",
                "--max_seq_len",
                "8192"
            ],
            1,
            "NVIDIA-A10G"
        )),
        Vec::<String>::new()
    );
    let hits = on(
        &[
            "trtllm-serve",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--max_seq_len=32768",
            "--kv_cache_free_gpu_memory_fraction",
            "0.2",
        ],
        1,
        "NVIDIA-A10G",
    );
    assert_eq!(rules_of_hits(&hits), ["FIT004"], "{hits:?}");
    assert!(
        hits[0].1.contains("what the weights leave × 0.20:"),
        "{}",
        hits[0].1
    );
    // A file of overrides, another backend: not judged, said by FIT005.
    let hits = on(
        &[
            "trtllm-serve",
            "meta-llama/Llama-3.3-70B-Instruct",
            "--tp_size",
            "2",
            "--extra_llm_api_options",
            "/etc/trtllm/extra.yaml",
        ],
        2,
        "NVIDIA-L4",
    );
    assert_eq!(rules_of_hits(&hits), ["FIT005"], "{hits:?}");
    assert!(hits[0].1.contains("--extra_llm_api_options /etc/trtllm/extra.yaml overrides TensorRT-LLM's flags from a file gpulint does not read"), "{}", hits[0].1);
    let hits = on(
        &[
            "trtllm-serve",
            "/engines/llama-70b",
            "--backend",
            "tensorrt",
        ],
        2,
        "NVIDIA-L4",
    );
    assert_eq!(rules_of_hits(&hits), ["FIT005"], "{hits:?}");
    assert!(
        hits[0].1.contains("--backend tensorrt is a backend"),
        "{}",
        hits[0].1
    );
    // The model is not the word after an option: not guessed.
    assert!(on(&["trtllm-serve", "--host", "0.0.0.0"], 1, "NVIDIA-A10G").is_empty());
}

/// TensorRT-LLM holds its weights, its KV cache share of what they leave, and the overhead:
/// about 22.0 GiB of an A10G for Llama 3.1 8B at 0.90, which a measured framebuffer is weighed
/// against.
#[test]
fn trtllm_measured_framebuffer_is_weighed_against_weights_plus_its_kv_share() {
    let text = deployment(
        TRTLLM,
        &[
            "trtllm-serve",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--max_seq_len",
            "8192",
            "--max_batch_size",
            "64",
        ],
        &[],
        1,
        GPU,
        "NVIDIA-A10G",
    );
    let hits = fit_measured(&text, measured_on("NVIDIA A10G", 21.8, None));
    assert_eq!(rules_of_hits(&hits), ["FIT004"], "{hits:?}");
    assert!(
        hits[0]
            .1
            .contains("21.8 GiB a GPU (P99), as this share reserves"),
        "{}",
        hits[0].1
    );
    let hits = fit_measured(&text, measured_on("NVIDIA A10G", 17.0, None));
    assert!(
        hits[0].1.contains("not the 22.0 GiB this share reserves"),
        "{}",
        hits[0].1
    );
}

fn rules_of_hits(hits: &[(String, String)]) -> Vec<String> {
    hits.iter().map(|(r, _)| r.clone()).collect()
}

/// The tolerance at its edges: an estimate exactly `TOLERANCE` above the usable memory is
/// not an error; a hair more is.
#[test]
fn the_tolerance_is_explicit_and_tested_at_its_edges() {
    assert_eq!(TOLERANCE, 0.10);
    let base = inputs_8b_on(80.0, 0);
    let weights = base.weights_gib * WEIGHTS_FACTOR;
    // Weights: capacity such that usable × (1 + TOLERANCE) == weights.
    let capacity_at =
        |need: f64| (need / (1.0 + TOLERANCE) + ACTIVATIONS_GIB + NON_TORCH_GIB) / 0.9;
    let edge = capacity_at(weights);
    let at = estimate(&Inputs {
        capacity_gib: edge + 1e-9,
        ..base.clone()
    });
    let over = estimate(&Inputs {
        capacity_gib: edge - 1e-6,
        ..base.clone()
    });
    assert!(at.weights_fit() && !over.weights_fit());
    // Context: weights + one sequence at the edge.
    let ctx = 32768;
    let kv = base.kv_bytes_per_token * ctx as f64 / GIB;
    let edge = capacity_at(weights + kv);
    let at = estimate(&Inputs {
        capacity_gib: edge + 1e-9,
        context: ctx,
        ..base.clone()
    });
    let over = estimate(&Inputs {
        capacity_gib: edge - 1e-6,
        context: ctx,
        ..base.clone()
    });
    assert!(at.weights_fit() && at.context_fits());
    assert!(over.weights_fit() && !over.context_fits());
    // The suggested context fits without the tolerance, and is a multiple of the block.
    assert_eq!(over.largest_context() % BLOCK, 0);
    let suggested = estimate(&Inputs {
        capacity_gib: edge - 1e-6,
        context: over.largest_context(),
        ..base
    });
    assert!(suggested.weights + suggested.kv_one <= suggested.usable);
}

#[test]
fn the_model_and_its_flags_are_read_in_every_engine_and_spelling() {
    // vLLM: positional model, `_` spellings, `$(VAR)` from env.
    let text = deployment(
        VLLM,
        &[
            "vllm",
            "serve",
            "$(MODEL)",
            "--max_model_len",
            "4096",
            "--tensor_parallel_size=2",
            "--served-model-name",
            "chat",
        ],
        &[("MODEL", "meta-llama/Llama-3.1-70B-Instruct")],
        2,
        GPU,
        "NVIDIA-L4",
    );
    let hits = fit_rules(
        &text
            .replace(
                "args: [\"vllm\", \"serve\",",
                "command: [\"vllm\", \"serve\",",
            )
            .replace("\"chat\"]", "\"chat\"]\n        args: []"),
    );
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].0, "FIT002");
    assert!(hits[0].1.starts_with("Llama-3.1-70B-Instruct in bf16 is 131.4 GiB of weights: 67.0 GiB a GPU over tensor parallel 2"), "{}", hits[0].1);
    // SGLang.
    let text = deployment(
        "lmsysorg/sglang:v0.4.9",
        &[
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "Qwen/Qwen2.5-72B-Instruct",
            "--tp",
            "2",
            "--context-length",
            "32768",
        ],
        &[],
        2,
        "cloud.google.com/gke-accelerator",
        "nvidia-l4",
    );
    assert_eq!(rules_of(&text), ["FIT002"]);
    // TGI through its environment, quantized: fits.
    let text = deployment(
        "ghcr.io/huggingface/text-generation-inference:2.4",
        &[],
        &[
            ("MODEL_ID", "meta-llama/Meta-Llama-3-70B-Instruct"),
            ("NUM_SHARD", "2"),
            ("QUANTIZE", "bitsandbytes-nf4"),
        ],
        2,
        "cloud.google.com/gke-accelerator",
        "nvidia-l4",
    );
    assert_eq!(rules_of(&text), Vec::<String>::new());
    // The same unquantized: 131 GiB over 2 L4s.
    let text = text.replace(", {name: QUANTIZE, value: \"bitsandbytes-nf4\"}", "");
    assert_eq!(rules_of(&text), ["FIT002"]);
    // A quantized repository: its name says so.
    let text = deployment(
        VLLM,
        &[
            "--model",
            "Qwen/Qwen2.5-72B-Instruct-AWQ",
            "-tp",
            "2",
            "--max-model-len",
            "8192",
        ],
        &[],
        2,
        GPU,
        "NVIDIA-L40S",
    );
    assert_eq!(rules_of(&text), Vec::<String>::new());
    // An unresolved value is not judged, an unknown model is a note, never a guess.
    let text = deployment(VLLM, &["--model", "$(MODEL)"], &[], 1, GPU, "NVIDIA-L4");
    assert_eq!(rules_of(&text), Vec::<String>::new());
    let text = deployment(
        VLLM,
        &["--model", "acme/private-13b"],
        &[],
        1,
        GPU,
        "NVIDIA-L4",
    );
    let hits = fit_rules(&text);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].0, "FIT005");
    assert!(hits[0].1.contains("`acme/private-13b`"), "{}", hits[0].1);
    // An engine image running another program: its flags are not the engine's.
    let text = deployment(
        VLLM,
        &["lm_eval --model vllm --model_args pretrained=x"],
        &[],
        1,
        GPU,
        "NVIDIA-L4",
    )
    .replace(
        "        args: [",
        "        command: [\"/bin/sh\", \"-c\"]\n        args: [",
    );
    assert_eq!(rules_of(&text), Vec::<String>::new());
    // No GPU known: nothing said.
    let text = deployment(
        VLLM,
        &["--model", "meta-llama/Llama-3.1-70B-Instruct"],
        &[],
        1,
        "pool",
        "gpu",
    );
    assert_eq!(rules_of(&text), Vec::<String>::new());
}

#[test]
fn the_context_rule_suggests_the_largest_max_model_len_and_concurrency_is_counted() {
    let text = deployment(
        VLLM,
        &[
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--max-model-len",
            "65536",
        ],
        &[],
        1,
        GPU,
        "NVIDIA-A10G",
    );
    let hits = run(&text, &RepoFacts::default(), false);
    let fit: Vec<_> = hits.iter().filter(|h| h.0.starts_with("FIT")).collect();
    assert_eq!(fit.len(), 1, "{hits:?}");
    assert_eq!(fit[0].0, "FIT003");
    assert_eq!(fit[0].1, "\"65536\"");
    assert!(
        fit[0]
            .2
            .contains("one sequence of --max-model-len 65536 needs 8.0 GiB of KV cache a GPU"),
        "{}",
        fit[0].2
    );
    // 8192 fits, 2.7 GiB / 1 GiB: room for 2, and --max-num-seqs asks for 16.
    let args = [
        "--model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--max-model-len",
        "8192",
    ];
    let with_seqs = |n: &str| {
        let mut a = args.to_vec();
        a.extend(["--max-num-seqs", n]);
        deployment(VLLM, &a, &[], 1, GPU, "NVIDIA-A10G")
    };
    let hits = fit_rules(&with_seqs("16"));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].0, "FIT004");
    assert!(
        hits[0]
            .1
            .starts_with("room for 2 concurrent request(s) of 8k tokens (--max-num-seqs 16)"),
        "{}",
        hits[0].1
    );
    // --max-num-seqs 2 asks for no more; without the flag, the engine's default is not compared.
    assert_eq!(rules_of(&with_seqs("2")), Vec::<String>::new());
    let text = deployment(VLLM, &args, &[], 1, GPU, "NVIDIA-A10G");
    assert_eq!(rules_of(&text), Vec::<String>::new());
}

#[test]
fn a_mig_slice_is_the_gpu() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: s\n    image: vllm/vllm-openai\n    args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '4096']\n    resources: {limits: {nvidia.com/mig-1g.10gb: 1}}\n";
    let hits = fit_rules(text);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].0, "FIT002");
    assert!(hits[0].1.contains("MIG slice 1g.10gb"), "{}", hits[0].1);
}

/// What happened, as reported.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    /// It loaded and served.
    Loaded,
    /// CUDA out of memory while loading the weights.
    WeightsOom,
    /// "The model's max seq len … is larger than the maximum number of tokens that can be
    /// stored in KV cache" (or its newer wording).
    ContextError,
}

/// Real cases from public reports: model, GPU, flags, what happened. Every failure is
/// predicted by the rule it names; no run that loaded is flagged.
#[test]
fn real_cases_from_public_reports() {
    use Outcome::*;
    // (source, image, args, env, GPUs, label key, label value, outcome)
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a [&'a str],
        &'a [(&'a str, &'a str)],
        u32,
        &'a str,
        &'a str,
        Outcome,
    );
    let gke = "cloud.google.com/gke-accelerator";
    let mem = "nvidia.com/gpu.memory";
    let tgi = "ghcr.io/huggingface/text-generation-inference:2.4";
    let cases: &[Case] = &[
        // Failures.
        ("https://github.com/vllm-project/vllm/issues/10517", VLLM,
         &["--model", "meta-llama/Llama-3.1-70B-Instruct", "--dtype", "float16", "--tensor-parallel-size", "2"], &[], 2, GPU, "NVIDIA-H100-80GB-HBM3", ContextError),
        // The GPU is not named; 7344 tokens of KV cache (0.5 MiB each) beside 14.4 GiB of
        // weights is a 24 GB card.
        ("https://github.com/QwenLM/Qwen3/issues/295", VLLM,
         &["--served-model-name", "Qwen1.5-7B-Chat", "--model", "/models--Qwen--Qwen1.5-7B-Chat"], &[], 1, GPU, "NVIDIA-A10G", ContextError),
        ("https://github.com/Graph-COM/SubgraphRAG/issues/19 (RTX 3090, 24576 MiB)", VLLM,
         &["--model", "meta-llama/Llama-3.1-8B-Instruct"], &[], 1, mem, "24576", ContextError),
        ("https://github.com/vllm-project/vllm/pull/5714 (Llama 3 70B on one 80GB GPU)", VLLM,
         &["--model", "meta-llama/Meta-Llama-3-70B-Instruct"], &[], 1, GPU, "NVIDIA-H100-80GB-HBM3", WeightsOom),
        ("https://github.com/vllm-project/vllm/issues/636 (79.35 GiB A100)", VLLM,
         &["--model", "meta-llama/Llama-2-70b-hf"], &[], 1, GPU, "NVIDIA-A100-SXM4-80GB", WeightsOom),
        ("https://github.com/QwenLM/Qwen3/issues/67 (A800 80GB, no tensor parallelism)", VLLM,
         &["--model", "qwen/Qwen1.5-72B-Chat"], &[], 1, mem, "81920", WeightsOom),
        ("https://github.com/vllm-project/vllm/issues/11560 (Qwen2-VL-72B's language model on one GPU: any single 80GB)", VLLM,
         &["--model", "Qwen/Qwen2.5-72B-Instruct"], &[], 1, GPU, "NVIDIA-H100-80GB-HBM3", WeightsOom),
        ("https://huggingface.co/openai/gpt-oss-120b (fits a single 80GB GPU: not a 40GB one)", VLLM,
         &["--model", "openai/gpt-oss-120b"], &[], 1, GPU, "NVIDIA-A100-SXM4-40GB", WeightsOom),
        ("https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/blob/main/ai-ml/llm-serving-gemma/vllm/vllm-7b-token.yaml (needs --max-model-len 600 on one L4)", VLLM,
         &["--model", "google/gemma-7b", "--max-model-len", "16384"], &[], 1, gke, "nvidia-l4", ContextError),
        ("https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8 (Maverick in bf16 needs more than one H100 host: the FP8 weights are what fit 8 H100s)", VLLM,
         &["--model", "meta-llama/Llama-4-Maverick-17B-128E-Instruct", "--tensor-parallel-size", "8"], &[], 8, gke, "nvidia-h100-80gb", WeightsOom),
        // Loaded: Google's, Meta's, OpenAI's, Kaito's published configurations.
        ("kubernetes-engine-samples ai-ml/llm-serving-llama/vllm/vllm-llama4-maverick-17b-128e-instruct-fp8.yaml", VLLM,
         &["--model=meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "--max-model-len=524288", "--tensor-parallel-size=8"], &[], 8, gke, "nvidia-h100-80gb", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-llama/vllm/vllm-llama4-scout-17b-16e-instruct.yaml (1.3M tokens)", VLLM,
         &["--model=meta-llama/Llama-4-Scout-17B-16E-Instruct", "--max-model-len=1310720", "--tensor-parallel-size=8"], &[], 8, gke, "nvidia-h100-80gb", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-llama/vllm/vllm-llama4-maverick-17b-128e-instruct.yaml", VLLM,
         &["--model=meta-llama/Llama-4-Maverick-17B-128E-Instruct", "--max-model-len=131072", "--tensor-parallel-size=8"], &[], 8, gke, "nvidia-h200-141gb", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-3-27b-it.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=1", "--gpu-memory-utilization=0.95", "--max-model-len=32768", "--max-num-seqs=4"], &[("MODEL_ID", "google/gemma-3-27b-it")], 1, gke, "nvidia-a100-80gb", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-7b-token.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=1", "--max-model-len=600"], &[("MODEL_ID", "google/gemma-7b")], 1, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-7b-kvcache.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=1", "--max-model-len=1200"], &[("MODEL_ID", "google/gemma-7b")], 1, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-7b-awq.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=1"], &[("MODEL_ID", "google/gemma-7b-AWQ")], 1, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-7b.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=2"], &[("MODEL_ID", "google/gemma-7b")], 2, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-2-9b-it.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=2"], &[("MODEL_ID", "google/gemma-2-9b-it")], 2, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/mix-train-and-inference/workloads/vllm-gemma-3-12b-it.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=2", "--max-model-len=16384"], &[("MODEL_ID", "google/gemma-3-12b-it")], 2, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-7b-it-a100-80gb.yaml", "docker.io/vllm/vllm-openai:v0.10.0",
         &["--model=$(MODEL_ID)", "--tensor-parallel-size=2"], &[("MODEL_ID", "google/gemma-7b-it")], 2, gke, "nvidia-a100-80gb", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-multiple-gpus/llama3-70b/text-generation-inference.yaml", tgi,
         &[], &[("MODEL_ID", "meta-llama/Meta-Llama-3-70B-Instruct"), ("NUM_SHARD", "2"), ("QUANTIZE", "bitsandbytes-nf4")], 2, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/tgi/tgi-2-9b-it.yaml", tgi,
         &[], &[("MODEL_ID", "google/gemma-2-9b-it"), ("NUM_SHARD", "2")], 2, gke, "nvidia-l4", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-serving-gemma/tgi/tgi-2b-it-h100-80gb.yaml", tgi,
         &["--model-id=$(MODEL_ID)"], &[("MODEL_ID", "google/gemma-2b-it")], 8, gke, "nvidia-h100-80gb", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-multihost-gpus/vllm-llama3-405b-A3.yaml (2 nodes of 8 H100)", VLLM,
         &["--model", "meta-llama/Meta-Llama-3.1-405B-Instruct", "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2"], &[], 8, gke, "nvidia-h100-80gb", Loaded),
        ("kubernetes-engine-samples ai-ml/llm-multihost-gpus/vllm-deepseek-r1-A3.yaml (2 nodes of 8 H100)", VLLM,
         &["--model", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2", "--max-model-len", "4096"], &[], 8, gke, "nvidia-h100-80gb", Loaded),
        ("https://huggingface.co/openai/gpt-oss-120b (a single 80GB GPU)", VLLM,
         &["vllm", "serve", "openai/gpt-oss-120b"], &[], 1, GPU, "NVIDIA-H100-80GB-HBM3", Loaded),
        ("https://huggingface.co/openai/gpt-oss-20b (within 16GB of memory)", VLLM,
         &["--model", "openai/gpt-oss-20b"], &[], 1, GPU, "NVIDIA-L4", Loaded),
        ("https://github.com/QwenLM/Qwen3/issues/295 (the maintainers' answer: --max_model_len 7200)", VLLM,
         &["--model", "/models--Qwen--Qwen1.5-7B-Chat", "--max_model_len", "7200"], &[], 1, GPU, "NVIDIA-A10G", Loaded),
        ("https://docs.vllm.ai/projects/recipes/en/latest/DeepSeek/DeepSeek-V3.html (8 H200, tp 8)", VLLM,
         &["--model", "deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8"], &[], 8, GPU, "NVIDIA-H200", Loaded),
        ("https://github.com/kaito-project/kaito/tree/main/presets/workspace/models/llama3 (llama-3.1-8b-instruct on Standard_NC24ads_A100_v4)", VLLM,
         &["--model", "meta-llama/Llama-3.1-8B-Instruct"], &[], 1, "node.kubernetes.io/instance-type", "Standard_NC24ads_A100_v4", Loaded),
        ("https://github.com/kaito-project/kaito/tree/main/presets/workspace/models/phi4 (phi-4 on Standard_NC24ads_A100_v4)", VLLM,
         &["--model", "microsoft/phi-4"], &[], 1, "node.kubernetes.io/instance-type", "Standard_NC24ads_A100_v4", Loaded),
        // TensorRT-LLM's trtllm-serve (PyTorch backend).
        ("https://nvidia.github.io/TensorRT-LLM/blogs/tech_blog/blog9_Deploying_GPT_OSS_on_TRTLLM.html (gpt-oss-120b: 1x B200/GB200/H200)", TRTLLM,
         &["trtllm-serve", "openai/gpt-oss-120b", "--tp_size", "1", "--max_batch_size", "64"], &[], 1, GPU, "NVIDIA-H200", Loaded),
        ("https://github.com/NVIDIA/TensorRT-LLM/issues/12228 (\"70B BF16 model - running on 80GB is not enough\")", TRTLLM,
         &["trtllm-serve", "serve", "meta-llama/Llama-3.3-70B-Instruct"], &[], 1, GPU, "NVIDIA-H100-80GB-HBM3", WeightsOom),
    ];
    assert!(cases.len() >= 25, "{}", cases.len());
    let mut wrong = Vec::new();
    for (source, image, args, env, gpus, key, value, outcome) in cases {
        let (command, args): (Vec<&str>, Vec<&str>) = match args.first() {
            Some(&"vllm") => (args[..2].to_vec(), args[2..].to_vec()),
            _ => (Vec::new(), args.to_vec()),
        };
        let mut text = deployment(image, &args, env, *gpus, key, value);
        if !command.is_empty() {
            let words: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
            text = text.replace(
                "        args: [",
                &format!("        command: [{}]\n        args: [", words.join(", ")),
            );
        }
        let got = fit_rules(&text);
        let errors: Vec<&str> = got
            .iter()
            .map(|(r, _)| r.as_str())
            .filter(|r| matches!(*r, "FIT002" | "FIT003" | "FIT005"))
            .collect();
        let want: &[&str] = match outcome {
            Loaded => &[],
            WeightsOom => &["FIT002"],
            ContextError => &["FIT003"],
        };
        if errors != want {
            wrong.push(format!("{source}: {outcome:?}, gpulint said {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A one-GPU container measured on `gpu_model` with `framebuffer_gib` at P99.
fn measured_on(gpu_model: &str, framebuffer_gib: f64, kv: Option<f64>) -> Usage {
    use crate::metrics::usage::{GpuMemory, KvCache};
    Usage {
        samples: Some(20_000),
        history_seconds: Some(14.0 * 86400.0),
        gpu_model: Some(gpu_model.into()),
        gpu_count: Some(1),
        gpu_memory_bytes: Some(GpuMemory {
            p99: Some(framebuffer_gib * GIB),
            max: Some(framebuffer_gib * GIB),
            capacity: None,
        }),
        kv_cache_usage: kv.map(|k| KvCache {
            p99: Some(k),
            max: Some(k),
        }),
        ..Usage::default()
    }
}

fn fit_measured(text: &str, u: Usage) -> Vec<(String, String)> {
    crate::rules::test_support::run_measured(
        text,
        &[("Deployment", "m", "server", u)],
        &crate::metrics::recommend::Policy::default(),
    )
    .into_iter()
    .filter(|(r, ..)| r.starts_with("FIT"))
    .map(|(r, _, m, _)| (r, m))
    .collect()
}

/// The snapshot is weighed against the estimate on the GPU model it was measured on only: the
/// framebuffer a preallocating engine holds is the share it reserves (20.2 GiB on an A10G at
/// 0.90), and the message says whether the measurement agrees and which figure it judged by.
#[test]
fn the_measured_framebuffer_and_kv_cache_check_the_estimate() {
    let args = [
        "--model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--max-model-len",
        "16384",
        "--max-num-seqs",
        "32",
    ];
    let text = deployment(VLLM, &args, &[], 1, GPU, "NVIDIA-A10G");
    // Agrees (20.1 of 20.2 GiB), a KV cache 71% full.
    let hits = fit_measured(&text, measured_on("NVIDIA A10G", 20.1, Some(0.71)));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].0, "FIT004");
    assert!(
        hits[0].1.ends_with("; measured on NVIDIA A10G: 20.1 GiB a GPU (P99), as this share reserves, its KV cache 71% full at P99: the traffic measured leaves room"),
        "{}",
        hits[0].1
    );
    // Far from the reservation (another --gpu-memory-utilization ran): judged by the estimate.
    let hits = fit_measured(&text, measured_on("NVIDIA A10G", 12.0, Some(0.95)));
    assert!(
        hits[0].1.ends_with("; measured on NVIDIA A10G: 12.0 GiB a GPU (P99), not the 20.2 GiB this share reserves, so judged by the estimate, its KV cache 95% full at P99: requests already wait for room"),
        "{}",
        hits[0].1
    );
    // Measured on another GPU than the one judged (the selector's A10G is the larger): no word
    // of it.
    let hits = fit_measured(&text, measured_on("Tesla T4", 13.0, Some(0.71)));
    assert!(hits[0].1.contains("usable on NVIDIA A10G"), "{}", hits[0].1);
    assert!(!hits[0].1.contains("measured"), "{}", hits[0].1);
    // The engine cannot start by the estimate, yet ran with this reservation: said, not hidden.
    let long = deployment(
        VLLM,
        &[
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--max-model-len",
            "65536",
        ],
        &[],
        1,
        GPU,
        "NVIDIA-A10G",
    );
    let hits = fit_measured(&long, measured_on("NVIDIA A10G", 20.3, None));
    assert_eq!(hits[0].0, "FIT003");
    assert!(
        hits[0].1.ends_with("; measured running on NVIDIA A10G with 20.3 GiB a GPU (P99), the 20.2 GiB this share reserves: the flags that ran then differ from these, or this estimate is wrong for this model"),
        "{}",
        hits[0].1
    );
}

/// The `fit` a finding carries is the message's arithmetic, to the printed decimal.
#[test]
fn a_fit_finding_carries_its_arithmetic() {
    let text = deployment(
        VLLM,
        &[
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--max-model-len",
            "65536",
        ],
        &[],
        1,
        GPU,
        "NVIDIA-A10G",
    );
    let e = estimate(&inputs_8b_on(22.488_281_25, 65536));
    let m = MeasuredFit {
        gpu_model: "NVIDIA A10G".into(),
        framebuffer_gib: 20.1,
        reserved_gib: tenth(e.usable + ACTIVATIONS_GIB + NON_TORCH_GIB),
        agrees: true,
        kv_cache_p99: Some(0.5),
    };
    let fit = Fit {
        model: "Llama-3.1-8B-Instruct".into(),
        gpu: "NVIDIA A10G".into(),
        dtype: "bf16",
        tensor_parallel: 1,
        pipeline_parallel: 1,
        context: 65536,
        weights_gib: tenth(e.weights),
        kv_gib: tenth(e.kv_one),
        usable_gib: tenth(e.usable),
        kv_tokens: e.kv_tokens,
        measured: Some(m),
        weights_only: false,
    };
    assert_eq!(
        fit.summary(),
        "Llama-3.1-8B-Instruct: weights 15.3 GiB + KV 8.0 GiB at 64k of 17.9 GiB usable on NVIDIA A10G; measured framebuffer 20.1 GiB a GPU (as reserved), KV cache 50% full at P99"
    );
    // NIM's bound judges the weights alone.
    let bound = Fit {
        weights_only: true,
        measured: None,
        ..fit.clone()
    };
    assert_eq!(
        bound.summary(),
        "Llama-3.1-8B-Instruct: weights 15.3 GiB (at least) of 17.9 GiB usable on NVIDIA A10G"
    );
    let hits = rules_of(&text);
    assert_eq!(hits, ["FIT003"]);
}

/// Without `--max-num-seqs`, FIT004 asks the policy's `concurrent_requests` (1 by default).
#[test]
fn the_policy_sets_the_concurrency_wanted_when_the_engine_names_none() {
    let text = deployment(
        VLLM,
        &[
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--max-model-len",
            "8192",
        ],
        &[],
        1,
        GPU,
        "NVIDIA-A10G",
    );
    let measured = |policy: &crate::metrics::recommend::Policy| {
        crate::rules::test_support::run_measured(text.as_str(), &[], policy)
            .into_iter()
            .filter(|(r, ..)| r.starts_with("FIT"))
            .map(|(r, _, m, _)| (r, m))
            .collect::<Vec<_>>()
    };
    assert_eq!(measured(&Default::default()), []);
    let policy = crate::metrics::recommend::Policy {
        concurrent_requests: 4,
        ..Default::default()
    };
    let hits = measured(&policy);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(
        hits[0].1.starts_with(
            "room for 2 concurrent request(s) of 8k tokens (policy.concurrent_requests 4)"
        ),
        "{}",
        hits[0].1
    );
}

/// A DRA claim whose request selects a product (NVIDIA's driver publishes NVML's name as
/// `productName`) is the GPU the pod lands on: Llama 3.1 8B at 64k on an L4 does not fit, and
/// the message says which claim chose the GPU. An `||` of products is judged on the smallest.
#[test]
fn a_dra_claim_selecting_a_product_is_the_gpu() {
    let template = |expression: &str| {
        format!(
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: one-gpu}}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 1\n          selectors:\n          - cel:\n              expression: {expression:?}\n"
        )
    };
    let pod = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n      resourceClaims:\n      - {name: gpu, resourceClaimTemplateName: one-gpu}\n      containers:\n      - name: server\n        image: vllm/vllm-openai:v0.10.1\n        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, \"65536\"]\n        resources:\n          claims: [{name: gpu}]\n";
    let judged = |expression: &str| {
        let facts = RepoFacts::of_text(&template(expression));
        run(pod, &facts, false)
            .into_iter()
            .filter(|(r, _, _)| r.starts_with("FIT"))
            .map(|(r, _, m)| (r, m))
            .collect::<Vec<_>>()
    };
    let hits = judged(r#"device.attributes["gpu.nvidia.com"].productName == "NVIDIA L4""#);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].0, "FIT003");
    assert!(
        hits[0].1.contains(
            "usable on NVIDIA L4 (DRA claim `gpu`, request `gpu`: productName NVIDIA L4)"
        ),
        "{}",
        hits[0].1
    );
    // On an H100 it fits: no finding.
    assert_eq!(
        judged(r#"device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3""#),
        []
    );
    // Either: the smaller one is judged.
    let hits = judged(
        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3' || device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'",
    );
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].1.contains("usable on NVIDIA L4"), "{}", hits[0].1);
    // A product the table does not know, or no selector: not judged.
    assert_eq!(
        judged(r#"device.attributes["gpu.nvidia.com"].productName == "Mock GPU""#),
        []
    );
}

const NIM_70B: &str = "nvcr.io/nim/meta/llama-3.1-70b-instruct:1.3.3";
const L4: (&str, &str) = ("cloud.google.com/gke-accelerator", "nvidia-l4");
const H100: (&str, &str) = ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3");

/// NIM: the bound (no profile pinned), a readable profile, the settings that pin a layout,
/// and the values gpulint cannot read (not judged, no panic).
#[test]
fn nim_is_judged_as_far_as_its_manifest_pins_it() {
    let nim = |image: &str, env: &[(&str, &str)], gpus: u32, on: (&str, &str)| {
        run(
            &deployment(image, &[], env, gpus, on.0, on.1),
            &RepoFacts::default(),
            false,
        )
        .into_iter()
        .filter(|(r, _, _)| r.starts_with("FIT") || r == "GPU012")
        .map(|(r, _, _)| r)
        .collect::<Vec<_>>()
    };
    // 70B at 4 bits is 33.5 GiB a GPU on one L4: no profile; over two, one may.
    assert_eq!(nim(NIM_70B, &[], 1, L4), ["FIT002"]);
    assert!(nim(NIM_70B, &[], 2, L4).is_empty());
    // bf16 tensor parallel 2 on two H100s fits; tensor parallel 1 does not.
    assert!(nim(
        NIM_70B,
        &[("NIM_MODEL_PROFILE", "vllm-bf16-tp2-pp1")],
        2,
        H100
    )
    .is_empty());
    assert_eq!(
        nim(
            NIM_70B,
            &[("NIM_MODEL_PROFILE", "vllm-bf16-tp1-pp1")],
            2,
            H100
        ),
        ["FIT002"]
    );
    // More ranks than GPUs, by tensor parallel or by pipeline parallel alone.
    assert_eq!(
        nim(NIM_70B, &[("NIM_TENSOR_PARALLEL_SIZE", "4")], 2, H100),
        ["GPU012"]
    );
    assert_eq!(
        nim(NIM_70B, &[("NIM_PIPELINE_PARALLEL_SIZE", "4")], 2, H100),
        ["GPU012"]
    );
    assert_eq!(
        nim(
            NIM_70B,
            &[("NIM_PIPELINE_PARALLEL_SIZE", "9223372036854775808")],
            2,
            H100
        ),
        ["GPU012"]
    );
    // The multi-LLM image with a checkpoint: its bf16 over the one GPU the setting gives.
    assert_eq!(
        nim(
            "nvcr.io/nim/nvidia/llm-nim:1.14",
            &[
                ("NIM_MODEL_NAME", "hf://meta-llama/Llama-3.1-70B-Instruct"),
                ("NIM_TENSOR_PARALLEL_SIZE", "1")
            ],
            8,
            H100
        ),
        ["FIT002"]
    );
    // The generic image naming nothing, and values gpulint cannot read: nothing said, no panic.
    assert!(nim("nvcr.io/nim/nvidia/llm-nim:1.14", &[], 1, L4).is_empty());
    for (name, value) in [
        ("NIM_TENSOR_PARALLEL_SIZE", "$(TP)"),
        ("NIM_TENSOR_PARALLEL_SIZE", "0"),
        ("NIM_PIPELINE_PARALLEL_SIZE", "18446744073709551615"),
        ("NIM_TENSOR_PARALLEL_SIZE", "99999999999999999999999"),
        (
            "NIM_MODEL_PROFILE",
            "vllm-bf16-tp18446744073709551615-pp18446744073709551615",
        ),
        ("NIM_MAX_MODEL_LEN", "-1"),
        ("NIM_MODEL_NAME", "ngc://"),
        ("NIM_MODEL_PATH", "hf://"),
    ] {
        let _ = nim(NIM_70B, &[(name, value)], 1, L4);
    }
}
