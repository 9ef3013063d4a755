//! Which GPU a pod lands on, from what its manifest selects: node labels (GPU feature
//! discovery, GKE, Karpenter, the cloud instance type) in `nodeSelector` and required node
//! affinity, a Kueue flavor's `nodeLabels`, a MIG resource name, or a measured DCGM model
//! name. The table is `rules/gpus.yaml`. When several GPUs are possible, the smallest is the
//! one judged (`Landing::gpu`), and the others are named.

use std::sync::OnceLock;

use crate::source::decode::{builtin_rows, table_rows, DecodeError, Fields};
use crate::source::yaml::Node;

const BUILTIN: &str = include_str!("../../rules/gpus.yaml");

pub const PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
pub const MEMORY_LABEL: &str = "nvidia.com/gpu.memory";
pub const GKE_LABEL: &str = "cloud.google.com/gke-accelerator";
pub const KARPENTER_NAME_LABEL: &str = "karpenter.k8s.aws/instance-gpu-name";
pub const KARPENTER_MEMORY_LABEL: &str = "karpenter.k8s.aws/instance-gpu-memory";
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
/// The older spelling of the instance-type label, still set by kubelets.
pub const BETA_INSTANCE_TYPE_LABEL: &str = "beta.kubernetes.io/instance-type";

/// One row of `rules/gpus.yaml`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gpu {
    pub name: String,
    pub memory_mib: u64,
    pub products: Vec<String>,
    pub dcgm: Vec<String>,
    pub gke: Vec<String>,
    pub karpenter: Vec<String>,
    pub instance_types: Vec<String>,
    /// Instance types by exact name, with the GPUs a node of each has.
    pub instance_gpus: Vec<(String, u64)>,
    /// The data sheet's GB (what Kaito's SKU table writes as GiB).
    pub nominal_gb: Option<f64>,
}

/// `instance_gpus`: `{name: count}`, each count a whole number above 0.
fn decode_instance_gpus(node: Option<&Node>, gpu: &str) -> Result<Vec<(String, u64)>, DecodeError> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    let bad = |at: &Node, message: String| DecodeError {
        offset: at.span.start(),
        message: format!("GPU {gpu}: `instance_gpus`: {message}"),
    };
    let entries = node.as_map().ok_or_else(|| {
        bad(
            node,
            "expected a mapping of instance type to GPU count".into(),
        )
    })?;
    entries
        .iter()
        .map(|e| {
            let name = e
                .key
                .text()
                .ok_or_else(|| bad(&e.key, "expected an instance type".into()))?;
            let count = e
                .value
                .text()
                .and_then(|t| t.parse::<u64>().ok())
                .filter(|n| *n >= 1)
                .ok_or_else(|| bad(&e.value, format!("{name}: expected a whole number above 0")))?;
            Ok((name.to_string(), count))
        })
        .collect()
}

fn decode_gpu(node: &Node) -> Result<Gpu, DecodeError> {
    let mut f = Fields::new(node, "a GPU")?;
    let name = f.required_string("name")?;
    let memory_mib = f
        .number("memory_mib")?
        .filter(|v| *v >= 1.0 && v.fract() == 0.0)
        .ok_or_else(|| DecodeError {
            offset: node.span.start(),
            message: format!("GPU {name}: `memory_mib`: expected a whole number above 0"),
        })? as u64;
    let nominal_gb = f.number("nominal_gb")?;
    if let Some(v) = nominal_gb.filter(|v| *v <= 0.0) {
        return Err(DecodeError {
            offset: node.span.start(),
            message: format!("GPU {name}: `nominal_gb`: expected a number above 0, found {v}"),
        });
    }
    let g = Gpu {
        products: f.string_list("products")?,
        dcgm: f.string_list("dcgm")?,
        gke: f.string_list("gke")?,
        karpenter: f.string_list("karpenter")?,
        instance_types: f.string_list("instance_types")?,
        instance_gpus: decode_instance_gpus(f.take("instance_gpus"), &name)?,
        nominal_gb,
        name,
        memory_mib,
    };
    f.finish()?;
    Ok(g)
}

/// Decodes `{gpus: [...]}`.
pub fn decode(root: &Node) -> Result<Vec<Gpu>, DecodeError> {
    table_rows(root, "the GPU table", "gpus", decode_gpu)
}

/// The built-in table (a unit test keeps it valid).
pub fn table() -> &'static [Gpu] {
    static TABLE: OnceLock<Vec<Gpu>> = OnceLock::new();
    TABLE.get_or_init(|| builtin_rows(BUILTIN, decode))
}

/// A GPU the pod may get: a table row, or only a memory size (a MIG slice, a memory label).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub name: String,
    pub memory_mib: f64,
}

impl Candidate {
    fn of(g: &Gpu) -> Candidate {
        Candidate {
            name: g.name.clone(),
            memory_mib: g.memory_mib as f64,
        }
    }

    pub fn gib(&self) -> f64 {
        self.memory_mib / 1024.0
    }
}

/// What one selector term says: the candidates, and the selection that says it, for people.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub candidates: Vec<Candidate>,
    pub from: String,
}

impl Choice {
    fn smallest(&self) -> Option<&Candidate> {
        self.candidates
            .iter()
            .min_by(|a, b| a.memory_mib.total_cmp(&b.memory_mib))
    }
}

/// The GPU judged, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Landing {
    /// The smallest possible GPU.
    pub gpu: Candidate,
    /// The other possible GPUs (larger or equal), by name.
    pub others: Vec<String>,
    /// What selects it (`nodeSelector nvidia.com/gpu.product=NVIDIA-L4`).
    pub from: String,
}

impl Landing {
    fn of(choice: &Choice) -> Option<Landing> {
        let gpu = choice.smallest()?.clone();
        let mut others: Vec<String> = choice
            .candidates
            .iter()
            .filter(|c| c.name != gpu.name)
            .map(|c| c.name.clone())
            .collect();
        others.sort();
        others.dedup();
        Some(Landing {
            gpu,
            others,
            from: choice.from.clone(),
        })
    }

    /// `NVIDIA L4 (nodeSelector …)`, with the others when there are: `; the smallest of …`.
    pub fn describe(&self) -> String {
        let mut s = format!("{} ({}", self.gpu.name, self.from);
        if !self.others.is_empty() {
            s.push_str(&format!(
                "; the smallest of the GPUs it may land on, with {}",
                self.others.join(", ")
            ));
        }
        s.push(')');
        s
    }
}

fn rows(pred: impl Fn(&Gpu) -> bool) -> Vec<Candidate> {
    table()
        .iter()
        .filter(|g| pred(g))
        .map(Candidate::of)
        .collect()
}

fn instance_type_matches(pattern: &str, value: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => value.starts_with(prefix),
        None => pattern == value,
    }
}

/// A cloud instance type the table sizes: its GPU and how many a node has.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// The name as the table writes it (`Standard_NC24ads_A100_v4`).
    pub name: String,
    pub gpu: Candidate,
    pub gpus: u64,
    /// One GPU's memory as Kaito's SKU table gives it, GiB (the data sheet's GB), else the
    /// memory the driver reports.
    pub nominal_gib: f64,
}

/// The instance type `value` names, compared ignoring case (as Kaito compares SKUs).
pub fn instance(value: &str) -> Option<Instance> {
    let value = value.trim();
    table().iter().find_map(|g| {
        let (name, gpus) = g
            .instance_gpus
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(value))?;
        Some(Instance {
            name: name.clone(),
            gpu: Candidate::of(g),
            gpus: *gpus,
            nominal_gib: g.nominal_gb.unwrap_or(g.memory_mib as f64 / 1024.0),
        })
    })
}

/// Every instance type the table sizes, smallest total GPU memory first.
pub fn instances() -> Vec<Instance> {
    let mut all: Vec<Instance> = table()
        .iter()
        .flat_map(|g| {
            g.instance_gpus.iter().map(|(name, gpus)| Instance {
                name: name.clone(),
                gpu: Candidate::of(g),
                gpus: *gpus,
                nominal_gib: g.nominal_gb.unwrap_or(g.memory_mib as f64 / 1024.0),
            })
        })
        .collect();
    all.sort_by(|a, b| {
        (a.gpu.memory_mib * a.gpus as f64)
            .total_cmp(&(b.gpu.memory_mib * b.gpus as f64))
            .then_with(|| a.name.cmp(&b.name))
    });
    all
}

/// `nvidia.com/gpu.memory` and Karpenter's memory label are MiB.
fn memory_candidate(value: &str) -> Option<Candidate> {
    let mib: u64 = value.trim().parse().ok().filter(|v| *v > 0)?;
    Some(Candidate {
        name: format!("a GPU of {mib} MiB"),
        memory_mib: mib as f64,
    })
}

/// The GPUs a node label's value names; `None` for a label or value the table does not know.
pub fn by_label(key: &str, value: &str) -> Option<Vec<Candidate>> {
    let found = match key {
        PRODUCT_LABEL => {
            let mut c = rows(|g| g.products.iter().any(|p| p.eq_ignore_ascii_case(value)));
            if c.is_empty() {
                // A MIG-partitioned node under the `single` strategy: `NVIDIA-A100-SXM4-80GB-MIG-3g.40gb`.
                c.extend(value.split_once("-MIG-").and_then(|(_, p)| mig_slice(p)));
            }
            c
        }
        GKE_LABEL => rows(|g| g.gke.iter().any(|p| p == value)),
        KARPENTER_NAME_LABEL => rows(|g| g.karpenter.iter().any(|p| p.eq_ignore_ascii_case(value))),
        INSTANCE_TYPE_LABEL | BETA_INSTANCE_TYPE_LABEL => rows(|g| {
            g.instance_types
                .iter()
                .any(|p| instance_type_matches(p, value))
                || g.instance_gpus.iter().any(|(name, _)| name == value)
        }),
        MEMORY_LABEL | KARPENTER_MEMORY_LABEL => memory_candidate(value).into_iter().collect(),
        _ => return None,
    };
    (!found.is_empty()).then_some(found)
}

/// A MIG profile's memory, from its name (`3g.40gb`): at least that many GB (NVIDIA rounds the
/// slice down in the name), counted in decimal GB so the estimate stays below the slice.
pub fn mig_slice(profile: &str) -> Option<Candidate> {
    let gb: f64 = profile
        .split_once("g.")?
        .1
        .strip_suffix("gb")?
        .parse()
        .ok()
        .filter(|v: &f64| *v > 0.0)?;
    Some(Candidate {
        name: format!("MIG slice {profile}"),
        memory_mib: gb * 1e9 / (1024.0 * 1024.0),
    })
}

/// A measured GPU model (DCGM's `modelName`, a snapshot's `gpu_model`).
pub fn by_dcgm(model: &str) -> Option<Candidate> {
    table()
        .iter()
        .find(|g| g.dcgm.iter().any(|d| d.eq_ignore_ascii_case(model)))
        .map(Candidate::of)
}

/// The GPUs a set of required labels (ANDed: each a list of allowed values) allows: per
/// label, the union of its values' GPUs; across labels, the label whose smallest GPU is the
/// largest (the GPU must satisfy every label, so its memory is at least that).
fn and_of(labels: &[(String, Vec<String>, String)]) -> Option<Choice> {
    let mut best: Option<Choice> = None;
    for (key, values, shown) in labels {
        let mut candidates = Vec::new();
        for v in values {
            match by_label(key, v) {
                Some(c) => candidates.extend(c),
                // One value the table does not know: the label narrows nothing.
                None => {
                    candidates.clear();
                    break;
                }
            }
        }
        if candidates.is_empty() {
            continue;
        }
        let choice = Choice {
            candidates,
            from: shown.clone(),
        };
        let better = match (&best, choice.smallest()) {
            (None, _) => true,
            (Some(b), Some(c)) => b.smallest().is_none_or(|s| c.memory_mib > s.memory_mib),
            _ => false,
        };
        if better {
            best = Some(choice);
        }
    }
    best
}

/// What a pod spec's `nodeSelector` and required node affinity select. Required affinity
/// terms are ORed: the smallest GPU over the terms.
pub fn from_pod_spec(spec: &Node) -> Option<Landing> {
    let selector: Vec<(String, Vec<String>, String)> = spec
        .get("nodeSelector")
        .and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| {
            let (k, v) = (e.key.text()?, e.value.text()?);
            Some((
                k.to_string(),
                vec![v.to_string()],
                format!("nodeSelector {k}={v}"),
            ))
        })
        .collect();
    let terms = spec
        .get_path(&[
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ])
        .and_then(Node::as_seq)
        .unwrap_or_default();
    let mut term_choices = Vec::new();
    for term in terms {
        let mut labels = selector.clone();
        for e in term
            .get("matchExpressions")
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let (Some(key), Some(op)) = (e.get_str("key"), e.get_str("operator")) else {
                continue;
            };
            let values: Vec<String> = e
                .get("values")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(|v| v.text().map(str::to_string))
                .collect();
            match op {
                "In" if !values.is_empty() => {
                    let shown = format!("node affinity {key} in [{}]", values.join(", "));
                    labels.push((key.to_string(), values, shown));
                }
                // A memory lower bound (`instance-gpu-memory Gt 40000`): at least that.
                "Gt" if matches!(key, MEMORY_LABEL | KARPENTER_MEMORY_LABEL) => {
                    if let [v] = values.as_slice() {
                        if let Some(n) = v.trim().parse::<u64>().ok().and_then(|n| n.checked_add(1))
                        {
                            let shown = format!("node affinity {key} > {v}");
                            labels.push((key.to_string(), vec![n.to_string()], shown));
                        }
                    }
                }
                _ => {}
            }
        }
        match and_of(&labels) {
            Some(c) => term_choices.push(c),
            // A term that selects no known GPU: the pod may land anywhere it allows.
            None => return None,
        }
    }
    if terms.is_empty() {
        return Landing::of(&and_of(&selector)?);
    }
    // The union over the terms, shown as the term of the smallest.
    let smallest = term_choices
        .iter()
        .filter_map(|c| c.smallest().map(|s| (s.memory_mib, c)))
        .min_by(|a, b| a.0.total_cmp(&b.0))?
        .1;
    let union = Choice {
        candidates: term_choices
            .iter()
            .flat_map(|c| c.candidates.clone())
            .collect(),
        from: smallest.from.clone(),
    };
    Landing::of(&union)
}

/// What a set of node labels (a Kueue flavor's `nodeLabels`) selects.
pub fn from_labels<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    from: &str,
) -> Option<Choice> {
    let labels: Vec<(String, Vec<String>, String)> = labels
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                vec![v.to_string()],
                format!("{from} {k}={v}"),
            )
        })
        .collect();
    and_of(&labels)
}

/// The tighter of two facts that both hold (the pod's selector and its flavor): the one whose
/// smallest GPU is larger.
pub fn both(a: Option<Landing>, b: Option<Landing>) -> Option<Landing> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.gpu.memory_mib > a.gpu.memory_mib {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}

/// Either of several facts (flavors a pod may be admitted to): the smallest.
pub fn either(choices: &[Choice]) -> Option<Landing> {
    if choices.is_empty() {
        return None;
    }
    let smallest = choices
        .iter()
        .filter_map(|c| c.smallest().map(|s| (s.memory_mib, c)))
        .min_by(|a, b| a.0.total_cmp(&b.0))?
        .1;
    Landing::of(&Choice {
        candidates: choices.iter().flat_map(|c| c.candidates.clone()).collect(),
        from: smallest.from.clone(),
    })
}

/// A measured or sliced GPU, as a landing.
pub fn exactly(candidate: Candidate, from: String) -> Landing {
    Landing {
        gpu: candidate,
        others: Vec::new(),
        from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::yaml::Stream;

    #[test]
    fn the_builtin_table_decodes() {
        let stream = Stream::parse(BUILTIN);
        let gpus = decode(&stream.documents[0].root).expect("rules/gpus.yaml is valid");
        assert_eq!(gpus.len(), table().len());
        assert!(gpus.len() >= 10);
    }

    fn one(key: &str, value: &str) -> (String, f64) {
        let c = by_label(key, value).unwrap_or_else(|| panic!("{key}={value}"));
        let s = c
            .iter()
            .min_by(|a, b| a.memory_mib.total_cmp(&b.memory_mib))
            .unwrap();
        (s.name.clone(), s.memory_mib)
    }

    /// Every label and instance type the resolver knows, with its source.
    #[test]
    fn each_label_and_instance_type_resolves() {
        let cases: &[(&str, &str, &str, f64, &str)] = &[
            // GPU feature discovery: https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md
            (PRODUCT_LABEL, "NVIDIA-L4", "NVIDIA L4", 23034.0, "GFD"),
            (
                PRODUCT_LABEL,
                "NVIDIA-H100-80GB-HBM3",
                "NVIDIA H100 80GB",
                81559.0,
                "GFD",
            ),
            (
                PRODUCT_LABEL,
                "NVIDIA-A100-SXM4-40GB",
                "NVIDIA A100 40GB",
                40960.0,
                "GFD",
            ),
            (
                PRODUCT_LABEL,
                "NVIDIA-A100-SXM4-80GB",
                "NVIDIA A100 80GB",
                81920.0,
                "GFD",
            ),
            (PRODUCT_LABEL, "Tesla-T4", "NVIDIA T4", 15360.0, "GFD"),
            (PRODUCT_LABEL, "NVIDIA-H200", "NVIDIA H200", 143771.0, "GFD"),
            (PRODUCT_LABEL, "NVIDIA-L40S", "NVIDIA L40S", 46068.0, "GFD"),
            (PRODUCT_LABEL, "NVIDIA-A10G", "NVIDIA A10G", 23028.0, "GFD"),
            // GFD under the single MIG strategy: the product names the slice.
            (
                PRODUCT_LABEL,
                "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb",
                "MIG slice 3g.40gb",
                40e9 / 1048576.0,
                "GFD MIG single",
            ),
            (
                MEMORY_LABEL,
                "81920",
                "a GPU of 81920 MiB",
                81920.0,
                "GFD gpu.memory",
            ),
            // GKE: https://cloud.google.com/kubernetes-engine/docs/how-to/gpus
            (GKE_LABEL, "nvidia-l4", "NVIDIA L4", 23034.0, "GKE"),
            (GKE_LABEL, "nvidia-tesla-t4", "NVIDIA T4", 15360.0, "GKE"),
            (
                GKE_LABEL,
                "nvidia-tesla-a100",
                "NVIDIA A100 40GB",
                40960.0,
                "GKE",
            ),
            (
                GKE_LABEL,
                "nvidia-a100-80gb",
                "NVIDIA A100 80GB",
                81920.0,
                "GKE",
            ),
            (
                GKE_LABEL,
                "nvidia-h100-80gb",
                "NVIDIA H100 80GB",
                81559.0,
                "GKE",
            ),
            (
                GKE_LABEL,
                "nvidia-h100-mega-80gb",
                "NVIDIA H100 80GB",
                81559.0,
                "GKE",
            ),
            (
                GKE_LABEL,
                "nvidia-h200-141gb",
                "NVIDIA H200",
                143771.0,
                "GKE",
            ),
            (
                GKE_LABEL,
                "nvidia-tesla-v100",
                "NVIDIA V100 16GB",
                16160.0,
                "GKE",
            ),
            // Karpenter: https://karpenter.sh/docs/reference/instance-types/
            (
                KARPENTER_NAME_LABEL,
                "a10g",
                "NVIDIA A10G",
                23028.0,
                "Karpenter",
            ),
            (
                KARPENTER_NAME_LABEL,
                "l4",
                "NVIDIA L4",
                23034.0,
                "Karpenter",
            ),
            (
                KARPENTER_NAME_LABEL,
                "l40s",
                "NVIDIA L40S",
                46068.0,
                "Karpenter",
            ),
            (
                KARPENTER_NAME_LABEL,
                "t4",
                "NVIDIA T4",
                15360.0,
                "Karpenter",
            ),
            (
                KARPENTER_NAME_LABEL,
                "h100",
                "NVIDIA H100 80GB",
                81559.0,
                "Karpenter",
            ),
            (
                KARPENTER_NAME_LABEL,
                "h200",
                "NVIDIA H200",
                143771.0,
                "Karpenter",
            ),
            // `a100` is both p4d (40GB) and p4de (80GB): the smallest.
            (
                KARPENTER_NAME_LABEL,
                "a100",
                "NVIDIA A100 40GB",
                40960.0,
                "Karpenter",
            ),
            (
                KARPENTER_MEMORY_LABEL,
                "24576",
                "a GPU of 24576 MiB",
                24576.0,
                "Karpenter",
            ),
            // AWS: https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html
            (
                INSTANCE_TYPE_LABEL,
                "g4dn.xlarge",
                "NVIDIA T4",
                15360.0,
                "AWS G4dn",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "g5.12xlarge",
                "NVIDIA A10G",
                23028.0,
                "AWS G5",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "g6.2xlarge",
                "NVIDIA L4",
                23034.0,
                "AWS G6",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "gr6.4xlarge",
                "NVIDIA L4",
                23034.0,
                "AWS Gr6",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "g6e.12xlarge",
                "NVIDIA L40S",
                46068.0,
                "AWS G6e",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "p3.8xlarge",
                "NVIDIA V100 16GB",
                16160.0,
                "AWS P3",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "p4d.24xlarge",
                "NVIDIA A100 40GB",
                40960.0,
                "AWS P4d",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "p4de.24xlarge",
                "NVIDIA A100 80GB",
                81920.0,
                "AWS P4de",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "p5.48xlarge",
                "NVIDIA H100 80GB",
                81559.0,
                "AWS P5",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "p5e.48xlarge",
                "NVIDIA H200",
                143771.0,
                "AWS P5e",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "p5en.48xlarge",
                "NVIDIA H200",
                143771.0,
                "AWS P5en",
            ),
            // Google Cloud: https://cloud.google.com/compute/docs/gpus
            (
                INSTANCE_TYPE_LABEL,
                "g2-standard-24",
                "NVIDIA L4",
                23034.0,
                "GCP G2",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "a2-highgpu-8g",
                "NVIDIA A100 40GB",
                40960.0,
                "GCP A2",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "a2-megagpu-16g",
                "NVIDIA A100 40GB",
                40960.0,
                "GCP A2",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "a2-ultragpu-8g",
                "NVIDIA A100 80GB",
                81920.0,
                "GCP A2 ultra",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "a3-highgpu-8g",
                "NVIDIA H100 80GB",
                81559.0,
                "GCP A3",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "a3-megagpu-8g",
                "NVIDIA H100 80GB",
                81559.0,
                "GCP A3 Mega",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "a3-ultragpu-8g",
                "NVIDIA H200",
                143771.0,
                "GCP A3 Ultra",
            ),
            // Azure: https://learn.microsoft.com/azure/virtual-machines/sizes/overview#gpu-accelerated
            (
                INSTANCE_TYPE_LABEL,
                "Standard_NC4as_T4_v3",
                "NVIDIA T4",
                15360.0,
                "Azure NCasT4_v3",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "Standard_NC24ads_A100_v4",
                "NVIDIA A100 80GB",
                81920.0,
                "Azure NC A100 v4",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "Standard_ND96asr_v4",
                "NVIDIA A100 40GB",
                40960.0,
                "Azure ND A100 v4",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "Standard_ND96amsr_A100_v4",
                "NVIDIA A100 80GB",
                81920.0,
                "Azure NDm A100 v4",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "Standard_ND96isr_H100_v5",
                "NVIDIA H100 80GB",
                81559.0,
                "Azure ND H100 v5",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "Standard_NC40ads_H100_v5",
                "NVIDIA H100 NVL",
                95830.0,
                "Azure NC H100 v5",
            ),
            (
                INSTANCE_TYPE_LABEL,
                "Standard_ND96isr_H200_v5",
                "NVIDIA H200",
                143771.0,
                "Azure ND H200 v5",
            ),
            (
                BETA_INSTANCE_TYPE_LABEL,
                "g5.xlarge",
                "NVIDIA A10G",
                23028.0,
                "kubelet's beta label",
            ),
        ];
        for (key, value, name, mib, source) in cases {
            assert_eq!(
                one(key, value),
                (name.to_string(), *mib),
                "{key}={value} ({source})"
            );
        }
        // Labels and values the table does not know narrow nothing.
        assert_eq!(by_label(PRODUCT_LABEL, "NVIDIA-Future-GPU"), None);
        assert_eq!(by_label(INSTANCE_TYPE_LABEL, "m5.large"), None);
        assert_eq!(by_label("kubernetes.io/os", "linux"), None);
        assert_eq!(by_label(MEMORY_LABEL, "lots"), None);
        assert_eq!(
            mig_slice("1g.10gb").map(|c| c.memory_mib.round()),
            Some(9537.0)
        );
        assert_eq!(
            by_dcgm("NVIDIA L4").map(|c| c.name),
            Some("NVIDIA L4".into())
        );
    }

    /// Instance types with the GPUs a node has: Kaito's SKU tables
    /// (https://github.com/kaito-project/kaito/blob/056b8280b1a8debf644bc6f4399e913a1f9c7e70/pkg/sku/azure_sku_handler.go
    /// and aws_sku_handler.go; the T4 sizes from the same files before kaito-project/kaito#2185),
    /// and AWS's G6e page. Kaito compares names ignoring case.
    #[test]
    fn instance_types_have_their_gpus_a_node() {
        let cases: &[(&str, &str, u64, f64)] = &[
            ("Standard_NC24ads_A100_v4", "NVIDIA A100 80GB", 1, 80.0),
            ("standard_nc48ads_a100_v4", "NVIDIA A100 80GB", 2, 80.0),
            ("Standard_NC96ads_A100_v4", "NVIDIA A100 80GB", 4, 80.0),
            ("Standard_ND96amsr_A100_v4", "NVIDIA A100 80GB", 8, 80.0),
            ("Standard_ND96asr_A100_v4", "NVIDIA A100 40GB", 8, 40.0),
            ("Standard_ND96asr_v4", "NVIDIA A100 40GB", 8, 40.0),
            ("Standard_NC40ads_H100_v5", "NVIDIA H100 NVL", 1, 94.0),
            ("Standard_NC80adis_H100_v5", "NVIDIA H100 NVL", 2, 94.0),
            ("Standard_NCC40ads_H100_v5", "NVIDIA H100 NVL", 1, 94.0),
            ("Standard_ND96isr_H100_v5", "NVIDIA H100 80GB", 8, 80.0),
            ("Standard_ND96isr_H200_v5", "NVIDIA H200", 8, 141.0),
            ("Standard_NV36ads_A10_v5", "NVIDIA A10", 1, 24.0),
            ("Standard_NV72ads_A10_v5", "NVIDIA A10", 2, 24.0),
            ("Standard_NC4as_T4_v3", "NVIDIA T4", 1, 16.0),
            ("Standard_NC64as_T4_v3", "NVIDIA T4", 4, 16.0),
            ("p4d.24xlarge", "NVIDIA A100 40GB", 8, 40.0),
            ("p4de.24xlarge", "NVIDIA A100 80GB", 8, 80.0),
            ("p5.48xlarge", "NVIDIA H100 80GB", 8, 80.0),
            ("p5en.48xlarge", "NVIDIA H200", 8, 141.0),
            ("g5.xlarge", "NVIDIA A10G", 1, 24.0),
            ("g5.12xlarge", "NVIDIA A10G", 4, 24.0),
            ("g5.48xlarge", "NVIDIA A10G", 8, 24.0),
            ("g6.2xlarge", "NVIDIA L4", 1, 24.0),
            ("g6.24xlarge", "NVIDIA L4", 4, 24.0),
            ("g6.48xlarge", "NVIDIA L4", 8, 24.0),
            ("gr6.8xlarge", "NVIDIA L4", 1, 24.0),
            ("g6e.12xlarge", "NVIDIA L40S", 4, 48.0),
            ("g4dn.12xlarge", "NVIDIA T4", 4, 16.0),
            ("p3.8xlarge", "NVIDIA V100 16GB", 4, 16.0),
        ];
        for (name, gpu, gpus, nominal) in cases {
            let i = instance(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(
                (i.gpu.name.as_str(), i.gpus, i.nominal_gib),
                (*gpu, *gpus, *nominal),
                "{name}"
            );
            // The node label (as the table spells it) selects the same GPU.
            assert_eq!(one(INSTANCE_TYPE_LABEL, &i.name).0, *gpu, "{name}");
        }
        // A family pattern selects the GPU, but the count of a size it does not list is not
        // guessed; AMD's and unknown sizes are not in the table.
        assert!(by_label(INSTANCE_TYPE_LABEL, "a2-highgpu-8g").is_some());
        assert_eq!(instance("a2-highgpu-8g"), None);
        assert_eq!(instance("Standard_NG32ads_V620_v1"), None);
        assert_eq!(instance(""), None);
        let all = instances();
        assert!(all.len() >= 40, "{}", all.len());
        assert!(all
            .windows(2)
            .all(|w| w[0].gpu.memory_mib * w[0].gpus as f64
                <= w[1].gpu.memory_mib * w[1].gpus as f64));
    }

    /// The table's own errors name the row.
    #[test]
    fn instance_gpus_must_be_whole_counts() {
        for (bad, wanted) in [
            (
                "gpus: [{name: X, memory_mib: 1, instance_gpus: {a: 0}}]",
                "a: expected a whole number above 0",
            ),
            (
                "gpus: [{name: X, memory_mib: 1, instance_gpus: {a: two}}]",
                "a: expected a whole number above 0",
            ),
            (
                "gpus: [{name: X, memory_mib: 1, instance_gpus: [a]}]",
                "expected a mapping",
            ),
            (
                "gpus: [{name: X, memory_mib: 1, nominal_gb: 0}]",
                "`nominal_gb`: expected a number above 0",
            ),
        ] {
            let stream = Stream::parse(bad);
            let e = decode(&stream.documents[0].root).unwrap_err();
            assert!(e.message.contains(wanted), "{bad}: {}", e.message);
        }
    }

    fn landing(spec: &str) -> Option<Landing> {
        let stream = Stream::parse(spec);
        from_pod_spec(&stream.documents[0].root)
    }

    #[test]
    fn selectors_and_affinity_resolve_to_the_smallest_possible_gpu() {
        let l = landing("nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}").unwrap();
        assert_eq!(l.gpu.name, "NVIDIA L4");
        assert_eq!(l.from, "nodeSelector nvidia.com/gpu.product=NVIDIA-L4");
        // An affinity allowing two GPUs: the smaller, the other named.
        let l = landing(
            "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: cloud.google.com/gke-accelerator, operator: In, values: [nvidia-h100-80gb, nvidia-l4]}]}]}}}",
        )
        .unwrap();
        assert_eq!(
            (l.gpu.name.as_str(), l.others.clone()),
            ("NVIDIA L4", vec!["NVIDIA H100 80GB".to_string()])
        );
        assert!(
            l.describe()
                .contains("the smallest of the GPUs it may land on"),
            "{}",
            l.describe()
        );
        // Two labels ANDed: the tighter one (a100 is 40 or 80 GB; the memory says 80).
        let l = landing("nodeSelector: {karpenter.k8s.aws/instance-gpu-name: a100, karpenter.k8s.aws/instance-gpu-memory: '81920'}").unwrap();
        assert_eq!(l.gpu.memory_mib, 81920.0);
        // A Gt lower bound.
        let l = landing("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/instance-gpu-memory, operator: Gt, values: ['40000']}]}]}}}").unwrap();
        assert_eq!(l.gpu.memory_mib, 40001.0);
        // Terms are ORed: one term that selects nothing known leaves the GPU unknown.
        assert_eq!(
            landing("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}]}, {matchExpressions: [{key: pool, operator: In, values: [a]}]}]}}}"),
            None
        );
        assert_eq!(landing("nodeSelector: {pool: gpu}"), None);
        assert_eq!(landing("{}"), None);
    }
}
