use super::*;
use crate::k8s::model::Catalogue;
use crate::rules::test_support::run;
use crate::rules::RepoFacts;

const EXAMPLES: &str = "https://github.com/kaito-project/kaito/blob/056b8280b1a8debf644bc6f4399e913a1f9c7e70/examples/inference";

/// A Workspace of `preset` on `instance` (none: BYO), with a ConfigMap of `vllm` settings
/// (`key: value` lines) when given.
fn workspace(
    preset: &str,
    instance: Option<&str>,
    count: Option<u64>,
    vllm: Option<&str>,
) -> String {
    let mut text = String::new();
    if let Some(vllm) = vllm {
        let lines: String = vllm
            .split(", ")
            .filter(|l| !l.is_empty())
            .map(|l| format!("      {l}\n"))
            .collect();
        text.push_str(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: params\ndata:\n  inference_config.yaml: |\n    vllm:\n{lines}---\n"
        ));
    }
    text.push_str(
        "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata:\n  name: ws\nresource:\n",
    );
    if let Some(c) = count {
        text.push_str(&format!("  count: {c}\n"));
    }
    if let Some(i) = instance {
        text.push_str(&format!("  instanceType: \"{i}\"\n"));
    }
    text.push_str(&format!(
        "  labelSelector:\n    matchLabels:\n      apps: ws\ninference:\n  preset:\n    name: \"{preset}\"\n"
    ));
    if vllm.is_some() {
        text.push_str("  config: params\n");
    }
    text
}

/// (rule, text at span, message) of the FIT rules on `text`, the ConfigMaps read as repo facts.
fn fit(text: &str) -> Vec<(String, String, String)> {
    run(text, &RepoFacts::of_text(text), false)
        .into_iter()
        .filter(|(r, _, _)| r.starts_with("FIT"))
        .collect()
}

fn catalogued(id: &str) -> &'static Model {
    crate::k8s::model::builtin()
        .iter()
        .find(|m| m.id == id)
        .unwrap_or_else(|| panic!("{id}"))
}

/// Kaito's node estimator on gpulint's catalogue, against Kaito's own figures: the worked
/// example of its docs and the cases of its estimator's tests, and the counts of its examples.
#[test]
fn the_node_estimator_is_kaitos() {
    let nodes = |id: &str, instance: &str, context: u64| {
        let m = catalogued(id);
        let i = accelerator::instance(instance).unwrap();
        kaito_nodes(
            weights_gib(m, m.dtype),
            kv_bytes_per_token(m, 1, 1, 2.0),
            context,
            i.gpus,
            i.nominal_gib,
        )
    };
    // website/docs/memory-estimator.md: Phi-4-mini-instruct, 7.15 GiB, 128 KiB a token, 2048
    // tokens, one A100 80GB: (67.2 − 2.55) / 1.05 = 61.57 GiB a GPU for weights: 1 node.
    assert_eq!(
        nodes(
            "microsoft/Phi-4-mini-instruct",
            "Standard_NC24ads_A100_v4",
            2048
        ),
        Some(1)
    );
    // pkg/workspace/estimator/nodesestimator/estimator_test.go: qwen2.5-coder-32b-instruct on
    // Standard_NC24ads_A100_v4 is 2 nodes whatever `count` asks.
    assert_eq!(
        nodes(
            "Qwen/Qwen2.5-Coder-32B-Instruct",
            "Standard_NC24ads_A100_v4",
            2048
        ),
        Some(2)
    );
    // falcon-7b on one A10 and on one A100: 1 node.
    assert_eq!(
        nodes("tiiuae/falcon-7b-instruct", "Standard_NV36ads_A10_v5", 2048),
        Some(1)
    );
    assert_eq!(
        nodes(
            "tiiuae/falcon-7b-instruct",
            "Standard_NC24ads_A100_v4",
            2048
        ),
        Some(1)
    );
    // examples/inference: llama-3.3-70b-instruct on Standard_NC48ads_A100_v4 with its ConfigMap's
    // max-model-len 16384: the example's `count: 2`.
    assert_eq!(
        nodes(
            "meta-llama/Llama-3.3-70B-Instruct",
            "Standard_NC48ads_A100_v4",
            16384
        ),
        Some(2)
    );
    // deepseek-r1-0528 (641 GiB of fp8) on Standard_NC80adis_H100_v5 (2 × 94 GiB): 9 GPUs, so 5
    // nodes, not the example's `count: 6`.
    assert_eq!(
        nodes("deepseek-ai/DeepSeek-V3", "Standard_NC80adis_H100_v5", 2048),
        Some(5)
    );
    assert_eq!(
        nodes(
            "mistralai/Mistral-Large-3-675B-Instruct-2512",
            "Standard_NC80adis_H100_v5",
            2048
        ),
        Some(5)
    );
    // A GPU too small for the overhead and the KV cache alone: Kaito refuses.
    assert_eq!(kaito_nodes(1.0, 1024.0 * 1024.0, 1 << 20, 1, 16.0), None);
    assert_eq!(kaito_nodes(1.0, 0.0, 0, 1, 2.0), None);
    // No panic, no overflow, on absurd inputs.
    assert!(kaito_nodes(1e300, 0.0, 0, 1, 80.0).is_some());
    assert_eq!(kaito_nodes(f64::NAN, 0.0, 0, 0, f64::INFINITY), None);
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Fits,
    WeightsOom,
    ContextError,
}
use Outcome::*;

/// Kaito's supported preset and instance-type pairs (its examples, with their ConfigMaps) fit;
/// the same presets on a MIG slice too small, or with a ConfigMap that lowers the memory share
/// below what Kaito's estimator assumed, do not. Every failure predicted, no success flagged.
#[test]
fn kaitos_presets_fit_their_instance_types_and_too_small_ones_do_not() {
    type Case = (
        &'static str,
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        Outcome,
    );
    let cases: &[Case] = &[
        ("kaito_workspace_phi_4.yaml", "phi-4", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_phi_4_mini.yaml", "phi-4-mini-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_tool_calling.yaml", "phi-4-mini-instruct", Some("Standard_NC24ads_A100_v4"), Some("max-model-len: 4096"), Fits),
        ("kaito_workspace_phi_3_mini_4k.yaml", "phi-3-mini-4k-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_phi_3_mini_128k.yaml", "phi-3-mini-128k-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_phi_3_medium_4k.yaml", "phi-3-medium-4k-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_phi_3_medium_128k.yaml", "phi-3-medium-128k-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_phi_3.5-instruct.yaml", "phi-3.5-mini-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_qwen_2.5_coder_7b-instruct.yaml", "qwen2.5-coder-7b-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_qwen_2.5_coder_32b-instruct.yaml", "qwen2.5-coder-32b-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_deepseek_r1_distill_qwen_14b.yaml", "deepseek-r1-distill-qwen-14b", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_deepseek_r1_distill_llama_8b.yaml", "deepseek-r1-distill-llama-8b", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_llama-3.1_8b_instruct.yaml", "llama-3.1-8b-instruct", Some("Standard_NC96ads_A100_v4"), None, Fits),
        ("kaito_workspace_llama-3.3_70b_instruct.yaml", "llama-3.3-70b-instruct", Some("Standard_NC48ads_A100_v4"), Some("cpu-offload-gb: 0, gpu-memory-utilization: 0.95, swap-space: 4, max-model-len: 16384"), Fits),
        ("kaito_workspace_mistral_7b-instruct.yaml", "mistral-7b-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_mistral_7b.yaml", "mistral-7b", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_gemma_3_4b_instruct.yaml", "gemma-3-4b-instruct", Some("Standard_NV36ads_A10_v5"), None, Fits),
        ("kaito_workspace_gemma_3_27b_instruct.yaml", "gemma-3-27b-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_gpt_oss_20b.yaml", "gpt-oss-20b", Some("Standard_NV36ads_A10_v5"), Some("gpu-memory-utilization: 0.82"), Fits),
        ("kaito_workspace_gpt_oss_120b.yaml", "gpt-oss-120b", Some("Standard_NC24ads_A100_v4"), Some("gpu-memory-utilization: 0.92"), Fits),
        ("kaito_workspace_ministral_3_3b_instruct.yaml", "ministral-3-3b-instruct", Some("Standard_NV36ads_A10_v5"), None, Fits),
        ("kaito_workspace_ministral_3_8b_instruct.yaml", "ministral-3-8b-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_ministral_3_14b_instruct.yaml", "ministral-3-14b-instruct", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("kaito_workspace_deepseek_r1.yaml", "deepseek-r1-0528", Some("Standard_NC80adis_H100_v5"), None, Fits),
        ("kaito_workspace_deepseek_v3.yaml", "deepseek-v3-0324", Some("Standard_NC80adis_H100_v5"), None, Fits),
        ("kaito_workspace_mistral_large_3_675b_instruct.yaml", "mistral-large-3-675b-instruct", Some("Standard_NC80adis_H100_v5"), None, Fits),
        // The same presets by their Hugging Face ids, and on AWS instance types of Kaito's table.
        ("(a Hugging Face id)", "microsoft/phi-4", Some("Standard_NC24ads_A100_v4"), None, Fits),
        ("(AWS)", "llama-3.1-8b-instruct", Some("g5.12xlarge"), None, Fits),
        ("(AWS)", "llama-3.3-70b-instruct", Some("p4d.24xlarge"), None, Fits),
        // Too small. A ConfigMap that halves the memory share: Kaito's estimator still sizes at
        // 0.84 (3 nodes of one A100), and vLLM gets 0.5 of each GPU.
        ("(share lowered)", "llama-3.3-70b-instruct", Some("Standard_NC24ads_A100_v4"), Some("gpu-memory-utilization: 0.5"), WeightsOom),
        // The same on A10s: Kaito sizes 2 nodes at 0.84, vLLM gets half of each GPU.
        ("(share lowered)", "phi-4", Some("Standard_NV36ads_A10_v5"), Some("gpu-memory-utilization: 0.5"), WeightsOom),
        // The ConfigMap pins one GPU where Kaito would spread over the node's four.
        ("(tensor parallel pinned)", "llama-3.3-70b-instruct", Some("Standard_NC96ads_A100_v4"), Some("tensor-parallel-size: 1, pipeline-parallel-size: 1"), WeightsOom),
        // The weights fit, the ConfigMap's context does not at its share.
        ("(context)", "llama-3.1-8b-instruct", Some("Standard_NC24ads_A100_v4"), Some("gpu-memory-utilization: 0.3, max-model-len: 131072"), ContextError),
    ];
    assert!(cases.len() >= 30, "{}", cases.len());
    let mut wrong = Vec::new();
    for (source, preset, instance, vllm, outcome) in cases {
        let text = workspace(preset, *instance, None, *vllm);
        let found = fit(&text);
        let errors: Vec<&str> = found
            .iter()
            .map(|(r, _, _)| r.as_str())
            .filter(|r| matches!(*r, "FIT002" | "FIT003" | "FIT005"))
            .collect();
        let want: &[&str] = match outcome {
            Fits => &[],
            WeightsOom => &["FIT002"],
            ContextError => &["FIT003"],
        };
        if errors != want {
            wrong.push(format!(
                "{EXAMPLES}/{source} {preset} on {instance:?}: want {want:?}, got {found:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A MIG partition (BYO nodes, v1beta1): one slice, not split further.
#[test]
fn a_mig_slice_is_judged_alone() {
    let text = |profile: &str| {
        format!("apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {{name: ws}}\nresource:\n  labelSelector: {{matchLabels: {{apps: ws}}}}\n  partition:\n    mode: mig\n    profile: {profile}\ninference:\n  preset: {{name: llama-3.1-8b-instruct}}\n")
    };
    let found = fit(&text("1g.10gb"));
    assert_eq!(found.len(), 1, "{found:?}");
    let (rule, at, message) = &found[0];
    assert_eq!((rule.as_str(), at.as_str()), ("FIT002", "1g.10gb"));
    assert!(
        message.contains("MIG slice 1g.10gb (resource.partition: MIG profile 1g.10gb)"),
        "{message}"
    );
    assert!(
        message.contains("0.84, the gpu-memory-utilization Kaito passes"),
        "{message}"
    );
    assert!(fit(&text("3g.40gb")).is_empty());
}

/// The finding's place and words: at the instance type, with the ConfigMap's share, Kaito's node
/// count, the unused `count`, and a help that names Kaito's own share.
#[test]
fn a_finding_names_the_configmap_and_kaitos_sizing() {
    let text = workspace(
        "llama-3.3-70b-instruct",
        Some("Standard_NC24ads_A100_v4"),
        Some(1),
        Some("gpu-memory-utilization: 0.5"),
    );
    let found = fit(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    let (rule, at, message) = &found[0];
    assert_eq!(
        (rule.as_str(), at.as_str()),
        ("FIT002", "\"Standard_NC24ads_A100_v4\"")
    );
    for part in [
        "Llama-3.3-70B-Instruct in bf16 is 131.4 GiB of weights: 44.7 GiB a GPU over tensor parallel 1 × pipeline parallel 3",
        "in Workspace `ws` (3 nodes of Standard_NC24ads_A100_v4, as Kaito's node estimator sizes it; its `count: 1` is not what Kaito's vLLM runtime uses)",
        "NVIDIA A100 80GB (resource.instanceType Standard_NC24ads_A100_v4): 80.0 GiB × 0.50, the gpu-memory-utilization of ConfigMap `params`",
        "vLLM cannot load it",
    ] {
        assert!(message.contains(part), "{part}\nnot in\n{message}");
    }
    let hits = {
        let stream = crate::source::yaml::Stream::parse(&text);
        let facts = RepoFacts::of_text(&text);
        let names = crate::k8s::gpu::GpuNames::default();
        let policy = crate::metrics::recommend::Policy::default();
        let models = Catalogue::default();
        let cx = Context {
            models: &models,
            cluster: None,
            gpu_names: &names,
            facts: &facts,
            kueue_required: false,
            target: crate::edit::resources::Target::local(&text, 1),
            usage: None,
            policy: &policy,
            default_namespace: "default",
        };
        let objects = crate::k8s::workload::objects(&stream.documents[1]);
        let w = crate::rules::view(objects[0].clone(), &crate::k8s::catalog::Catalog::builtin())
            .unwrap();
        crate::rules::check_workload(&cx, &w)
    };
    let help = hits
        .iter()
        .find(|h| h.rule == Rule::ModelWeightsDoNotFit)
        .and_then(|h| h.help.clone())
        .unwrap();
    assert!(
        help.contains("gpu-memory-utilization 0.84 (Kaito's own, which its node estimator assumed) in ConfigMap `params`"),
        "{help}"
    );
    let arithmetic = hits[0].fit.as_ref().unwrap();
    assert_eq!(
        (arithmetic.tensor_parallel, arithmetic.pipeline_parallel),
        (1, 3)
    );
    // The context: at the ConfigMap's name, with the largest max-model-len as the edit.
    let text = workspace(
        "llama-3.1-8b-instruct",
        Some("Standard_NC24ads_A100_v4"),
        None,
        Some("gpu-memory-utilization: 0.3, max-model-len: 131072"),
    );
    let found = fit(&text);
    let (rule, at, message) = &found[0];
    assert_eq!((rule.as_str(), at.as_str()), ("FIT003", "params"));
    assert!(message.starts_with("one sequence of max-model-len 131072 of ConfigMap `params` needs 16.0 GiB of KV cache a GPU for Llama-3.1-8B-Instruct in Workspace `ws`"), "{message}");
}

/// What is not judged says so (FIT005) and is never guessed: an unknown preset, an instance type
/// the table does not size, a ConfigMap that is not in the repository or not readable.
#[test]
fn what_is_not_known_is_said_and_not_guessed() {
    let notes = |text: &str| -> Vec<(String, String)> {
        fit(text)
            .into_iter()
            .map(|(r, at, m)| {
                assert_eq!(r, "FIT005", "{m}");
                (at, m)
            })
            .collect()
    };
    let found = notes(&workspace(
        "acme/private-13b",
        Some("Standard_NC24ads_A100_v4"),
        None,
        None,
    ));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, "\"acme/private-13b\"");
    assert!(
        found[0].1.contains(
            "the preset `acme/private-13b` of Workspace `ws` is not in gpulint's model catalogue"
        ),
        "{}",
        found[0].1
    );
    let found = notes(&workspace(
        "phi-4",
        Some("Standard_NG32ads_V620_v1"),
        None,
        None,
    ));
    assert_eq!(found.len(), 1);
    assert!(found[0].1.contains("the instance type `Standard_NG32ads_V620_v1` of Workspace `ws` is not in gpulint's GPU table"), "{}", found[0].1);
    // A family the table knows by its pattern, in a size it does not count.
    let found = notes(&workspace("phi-4", Some("a2-highgpu-8g"), None, None));
    assert!(found[0].1.contains("knows the GPU of instance type `a2-highgpu-8g` of Workspace `ws` (NVIDIA A100 40GB) but not how many a node has"), "{}", found[0].1);
    // A ConfigMap named but absent, then one that is not YAML.
    let mut absent = workspace(
        "phi-4",
        Some("Standard_NC24ads_A100_v4"),
        None,
        Some("max-model-len: 4096"),
    );
    absent = absent.replace("  config: params\n", "  config: elsewhere\n");
    let found = notes(&absent);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, "elsewhere");
    assert!(found[0].1.contains("ConfigMap `elsewhere` (Workspace `ws`'s inference.config, namespace default) is not among the linted files"), "{}", found[0].1);
    let broken = workspace(
        "phi-4",
        Some("Standard_NC24ads_A100_v4"),
        None,
        Some("max-model-len: [4096"),
    );
    let found = notes(&broken);
    assert!(
        found[0].1.contains("is not YAML with a `vllm:` mapping"),
        "{}",
        found[0].1
    );
    // Said nothing: BYO nodes whose labels name no GPU, a template, the Transformers runtime,
    // tuning, a Helm template's value, a value of the ConfigMap gpulint cannot read.
    assert!(fit(&workspace("phi-4", None, None, None)).is_empty());
    assert!(fit(&workspace(
        "{{ .Values.preset }}",
        Some("Standard_NC24ads_A100_v4"),
        None,
        None
    ))
    .is_empty());
    assert!(fit(&workspace(
        "llama-3.3-70b-instruct",
        Some("Standard_NC24ads_A100_v4"),
        None,
        Some("gpu-memory-utilization: ${SHARE}")
    ))
    .is_empty());
    let transformers = workspace(
        "llama-3.3-70b-instruct",
        Some("Standard_NC24ads_A100_v4"),
        None,
        Some("gpu-memory-utilization: 0.1"),
    )
    .replace(
        "metadata:\n  name: ws\n",
        "metadata:\n  name: ws\n  annotations: {kaito.sh/runtime: transformers}\n",
    );
    assert!(fit(&transformers).is_empty());
    // The ConfigMap asks for more ranks than the node has GPUs (Kaito's custom-config example:
    // tensor-parallel-size 2 on a one-GPU instance type): not a memory verdict.
    assert!(fit(&workspace(
        "deepseek-r1-distill-qwen-14b",
        Some("Standard_NC24ads_A100_v4"),
        None,
        Some("gpu-memory-utilization: 0.95, max-model-len: 131072, tensor-parallel-size: 2")
    ))
    .is_empty());
}

/// v1alpha1 defaults the instance type; BYO nodes are sized from the labels Kaito reads.
#[test]
fn v1alpha1_defaults_and_byo_labels_give_the_gpu() {
    let v1alpha1 = "apiVersion: kaito.sh/v1alpha1\nkind: Workspace\nmetadata: {name: old}\nresource:\n  labelSelector: {matchLabels: {apps: old}}\ninference:\n  preset: {name: llama-3.3-70b-instruct}\n  config: params\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: params}\ndata:\n  inference_config.yaml: \"vllm: {gpu-memory-utilization: 0.5}\"\n";
    let found = fit(v1alpha1);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].1, "llama-3.3-70b-instruct",
        "no instance type written: at the preset"
    );
    assert!(
        found[0]
            .2
            .contains("resource.instanceType Standard_NC24ads_A100_v4, v1alpha1's default"),
        "{}",
        found[0].2
    );
    let byo = |labels: &str| {
        format!("apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {{name: byo}}\nresource:\n  labelSelector:\n    matchLabels: {{{labels}}}\ninference:\n  preset: {{name: llama-3.3-70b-instruct}}\n  config: params\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: params}}\ndata:\n  inference_config.yaml: \"vllm: {{gpu-memory-utilization: 0.5}}\"\n")
    };
    let found = fit(&byo(
        "node.kubernetes.io/instance-type: Standard_NC24ads_A100_v4",
    ));
    assert!(
        found[0].2.contains(
            "resource.labelSelector node.kubernetes.io/instance-type=Standard_NC24ads_A100_v4"
        ),
        "{found:?}"
    );
    let found = fit(&byo(
        "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: '1'",
    ));
    assert!(found[0].2.contains("NVIDIA A100 80GB (resource.labelSelector nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB)"), "{found:?}");
    // A product without a count: how many GPUs a node has is not guessed.
    assert!(fit(&byo("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB")).is_empty());
}

/// Kaito's share on an A10 is 0.82, else 0.84: the message says which.
#[test]
fn kaitos_share_is_its_controllers() {
    let on = |gpu: &str| Landing {
        gpu: accelerator::Candidate {
            name: gpu.into(),
            memory_mib: 23028.0,
        },
        others: Vec::new(),
        from: String::new(),
    };
    assert_eq!(default_utilization(&on("NVIDIA A10")), 0.82);
    assert_eq!(default_utilization(&on("NVIDIA A10G")), 0.84);
    assert_eq!(default_utilization(&on("NVIDIA L4")), 0.84);
}

/// Odd values (from a repository: anything) neither panic nor become a verdict.
#[test]
fn odd_values_neither_panic_nor_guess() {
    let odd = [
        "resource: {instanceType: [a, b]}\ninference: {preset: {name: phi-4}}",
        "resource: {instanceType: Standard_NC24ads_A100_v4}\ninference: {preset: {name: [phi-4]}}",
        "resource: {partition: {mode: accelerator, count: 18446744073709551615}, labelSelector: {matchLabels: {nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.count: '1'}}}\ninference: {preset: {name: phi-4}}",
        "resource: {partition: {mode: mig, profile: 0g.0gb}}\ninference: {preset: {name: phi-4}}",
        "resource: {partition: {mode: mig, profile: 99999999999999999999g.99999999999999999999gb}}\ninference: {preset: {name: phi-4}}",
        "resource: {labelSelector: {matchLabels: {nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.count: '-3'}}}\ninference: {preset: {name: phi-4}}",
        "resource: {labelSelector: {matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge, g6.xlarge]}]}}\ninference: {preset: {name: phi-4}}",
        "resource: {instanceType: g5.xlarge}\ninference: {preset: {name: deepseek-r1-0528}, config: params}",
        "resource: null\ninference: null",
        "resource: {instanceType: g5.xlarge}\ninference: {preset: {name: phi-4}, config: [x]}",
        "resource: {instanceType: g5.xlarge}\ninference: {preset: {name: ''}}",
        "resource: {instanceType: '   '}\ninference: {preset: {name: phi-4}}",
    ];
    for body in odd {
        let text = format!(
            "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {{name: ws}}\n{body}\n"
        );
        for (r, _, m) in fit(&text) {
            assert!(!matches!(r.as_str(), "FIT002" | "FIT003"), "{body}: {m}");
        }
    }
    // A ConfigMap's odd values: none panics; those gpulint cannot read are not judged.
    for vllm in [
        "tensor-parallel-size: 18446744073709551615, pipeline-parallel-size: 18446744073709551615",
        "max-model-len: 18446744073709551615",
        "max-model-len: 0",
        "gpu-memory-utilization: 1e-300",
        "gpu-memory-utilization: .nan",
        "gpu-memory-utilization: 2",
        "dtype: int3",
        "kv-cache-dtype: fp2",
        "max-num-seqs: -1",
        "quantization: unknown-method",
    ] {
        let found = fit(&workspace(
            "deepseek-r1-0528",
            Some("g5.xlarge"),
            None,
            Some(vllm),
        ));
        assert!(found.len() <= 1, "{vllm}: {found:?}");
    }
}

/// The ConfigMap's parallel sizes reach vLLM after Kaito's own (inference_api.py appends the
/// `vllm:` keys to the command line, and the last flag wins), so a size that starts more ranks
/// than the nodes have GPUs stops vLLM at start: GPU012, at the Workspace's `inference.config`.
/// Kaito's custom-config example (tensor-parallel-size 2 on Standard_NC24ads_A100_v4, one A100)
/// is one.
#[test]
fn a_configmaps_parallel_sizes_beyond_the_nodes_gpus_are_gpu012() {
    let ranks = |instance: &str, vllm: &str| -> Vec<(String, String, String)> {
        let text = workspace(
            "deepseek-r1-distill-qwen-14b",
            Some(instance),
            None,
            Some(vllm),
        );
        run(&text, &RepoFacts::of_text(&text), false)
            .into_iter()
            .filter(|(r, _, _)| r == "GPU012")
            .collect()
    };
    let found = ranks("Standard_NC24ads_A100_v4", "tensor-parallel-size: 2");
    assert_eq!(found.len(), 1, "{found:?}");
    let (_, at, message) = &found[0];
    assert_eq!(at, "params");
    assert_eq!(
        message,
        "vLLM in Workspace `ws` starts 2 rank(s) (tensor parallel 2 × pipeline parallel 1 × data parallel 1; tensor-parallel-size 2 of ConfigMap `params`) on 1 GPU(s), 1 node(s) of Standard_NC24ads_A100_v4 with 1 GPU(s) each: more ranks than GPUs: it fails at start"
    );
    // Two A100s: Kaito runs the 28 GiB model data parallel on each GPU (under half of one),
    // and its data-parallel-size 2 stays: tensor parallel 2 makes 4 ranks on 2 GPUs.
    let found = ranks("Standard_NC48ads_A100_v4", "tensor-parallel-size: 2");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].2.contains("4 rank(s)"), "{found:?}");
    // Sizes that fit the GPUs, or none written: nothing.
    for (instance, vllm) in [
        ("Standard_NC24ads_A100_v4", "tensor-parallel-size: 1"),
        (
            "Standard_NC48ads_A100_v4",
            "tensor-parallel-size: 2, data-parallel-size: 1",
        ),
        ("Standard_NC48ads_A100_v4", "tensor-parallel-size: 1"),
        ("Standard_NC24ads_A100_v4", "max-model-len: 4096"),
    ] {
        let found = ranks(instance, vllm);
        assert!(found.is_empty(), "{instance} {vllm}: {found:?}");
    }
}
