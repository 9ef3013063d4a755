//! Dynamic Resource Allocation (`resource.k8s.io`, GA in Kubernetes 1.34): ResourceClaimTemplates
//! and ResourceClaims as the repository declares them, the GPUs their requests ask for, and the
//! pod-side references (`spec.resourceClaims`, `containers[].resources.claims`).
//!
//! Request shapes: `resource.k8s.io/v1` and `v1beta2` put a request's device class, count and
//! selectors under `exactly:` (or a list of alternatives under `firstAvailable:`); `v1beta1`
//! puts them on the request itself. A request counts `count` devices (default 1), or, with
//! `allocationMode: All`, every matching device on the node: a count gpulint cannot know.

use std::collections::{BTreeMap, BTreeSet};

use super::workload::{Object, Pod};
use crate::source::yaml::{Node, Span};

pub const GROUP: &str = "resource.k8s.io/";

/// NVIDIA's DRA driver's API group: a `ComputeDomain` names, in
/// `spec.channel.resourceClaimTemplate.name`, the ResourceClaimTemplate of its IMEX channel,
/// which the driver creates in the ComputeDomain's namespace.
pub const NVIDIA_GROUP: &str = "resource.nvidia.com/";

/// Device classes whose devices are GPUs (NVIDIA's DRA driver, AMD's and Intel's), besides
/// the config's `gpu_device_classes`.
pub const GPU_DEVICE_CLASSES: &[&str] = &[
    "gpu.nvidia.com",
    "mig.nvidia.com",
    "vfio.gpu.nvidia.com",
    "gpu.amd.com",
    "gpu.intel.com",
];

/// MIG profiles NVIDIA documents ("Supported MIG Profiles", MIG user guide; B300 and RTX PRO
/// 6000 from the GPU Operator's mig-parted configs): A30, A100 40/80GB, H100 80/94/96GB,
/// H200 141GB, GH200 144GB, B200, B300, RTX PRO 6000 Blackwell. Media-extension variants
/// (`+me`, `+me.all`, `+gfx`, `-me`) of a listed profile are known too.
#[rustfmt::skip]
pub const MIG_PROFILES: &[&str] = &[
    // A30 24GB
    "1g.6gb", "2g.12gb", "4g.24gb",
    // A100 40GB
    "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb",
    // A100 80GB, H100 80GB
    "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
    // H100 94GB (NVL)
    "1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb",
    // H100 96GB
    "3g.48gb", "4g.48gb", "7g.96gb",
    // H200 141GB
    "1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb",
    // GH200 144GB
    "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb",
    // B200 180GB
    "1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb",
    // B300 288GB
    "1g.34gb", "1g.67gb", "2g.67gb", "3g.135gb", "4g.135gb", "7g.269gb",
    // RTX PRO 6000 Blackwell 96GB
    "1g.24gb", "2g.48gb", "4g.96gb",
];

/// Whether NVIDIA documents the MIG profile (or a media-extension variant of one).
pub fn is_known_mig_profile(profile: &str) -> bool {
    let base = profile
        .split_once('+')
        .map_or(profile, |(b, _)| b)
        .trim_end_matches("-me");
    MIG_PROFILES.contains(&base)
}

/// How many devices a request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceCount {
    Known(u64),
    /// `allocationMode: All`: every matching device (the span is the `All`).
    All(Span),
    /// Templated, invalid, or alternatives (`firstAvailable`) that differ.
    Unknown,
}

impl DeviceCount {
    /// The same count, wherever it is written (`All` carries the span of its `All`).
    fn same_as(&self, other: &DeviceCount) -> bool {
        match (self, other) {
            (DeviceCount::All(_), DeviceCount::All(_)) => true,
            (a, b) => a == b,
        }
    }
}

/// A MIG profile a CEL selector compares `device.attributes['gpu.nvidia.com'].profile` with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigProfile {
    pub profile: String,
    /// The `expression:` value.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceRequest {
    pub name: String,
    pub device_class: Option<String>,
    pub count: DeviceCount,
    pub mig_profiles: Vec<MigProfile>,
    /// The GPU products its CEL selectors compare `device.attributes['gpu.nvidia.com']
    /// .productName` with (`==`): NVIDIA's driver publishes NVML's name (`NVIDIA L4`).
    pub products: Vec<String>,
    /// `deviceClassName` on the request itself (the v1beta1 shape).
    pub flat_shape: Option<Span>,
}

/// A ResourceClaimTemplate's or ResourceClaim's device requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Claim {
    pub api_version: String,
    pub requests: Vec<DeviceRequest>,
}

impl Claim {
    /// The claim's device spec: `spec.spec.devices` of a template, `spec.devices` of a claim.
    pub fn read(object: &Object) -> Option<Claim> {
        let spec = object.node.get("spec")?;
        let spec = if object.id.kind == "ResourceClaimTemplate" {
            spec.get("spec")?
        } else {
            spec
        };
        let requests = spec
            .get_path(&["devices", "requests"])
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .map(DeviceRequest::read)
            .collect();
        Some(Claim {
            api_version: object.id.api_version.clone(),
            requests,
        })
    }

    /// GPUs per device class; `unknown` holds the classes whose count is not known.
    pub fn gpus(
        &self,
        is_gpu_class: impl Fn(&str) -> bool,
    ) -> (BTreeMap<String, u64>, BTreeSet<String>) {
        let mut known: BTreeMap<String, u64> = BTreeMap::new();
        let mut unknown = BTreeSet::new();
        for r in &self.requests {
            let Some(class) = r.device_class.as_deref().filter(|c| is_gpu_class(c)) else {
                continue;
            };
            match r.count {
                DeviceCount::Known(n) => {
                    let slot = known.entry(class.to_string()).or_default();
                    *slot = slot.saturating_add(n);
                }
                _ => {
                    unknown.insert(class.to_string());
                }
            }
        }
        (known, unknown)
    }
}

fn count_of(node: &Node) -> DeviceCount {
    if let Some(mode) = node
        .get("allocationMode")
        .filter(|m| m.text() == Some("All"))
    {
        return DeviceCount::All(mode.span);
    }
    match node.get("count") {
        None => DeviceCount::Known(1),
        Some(c) => c
            .text()
            .and_then(|t| t.trim().parse().ok())
            .map_or(DeviceCount::Unknown, DeviceCount::Known),
    }
}

/// The strings a request's CEL selectors compare `.<attribute>` with by `==`, with the
/// `expression:` value's span. An `||` of comparisons gives several; anything else (a
/// `startsWith`, a `!=`) gives none.
fn compared(node: &Node, attribute: &str) -> Vec<(String, Span)> {
    let selectors = node
        .get("selectors")
        .and_then(Node::as_seq)
        .unwrap_or_default();
    let needle = format!(".{attribute}");
    let mut out = Vec::new();
    for s in selectors {
        let Some(expr) = s.get_path(&["cel", "expression"]) else {
            continue;
        };
        let Some(text) = expr.text() else { continue };
        for (at, _) in text.match_indices(&needle) {
            let rest = text[at + needle.len()..].trim_start();
            let Some(rest) = rest.strip_prefix("==") else {
                continue;
            };
            let rest = rest.trim_start();
            let Some(quote) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
                continue;
            };
            let Some(end) = rest[1..].find(quote) else {
                continue;
            };
            out.push((rest[1..1 + end].to_string(), expr.span));
        }
    }
    out
}

/// The MIG profiles `device.attributes['gpu.nvidia.com'].profile == '…'` selects.
fn mig_profiles(node: &Node) -> Vec<MigProfile> {
    compared(node, "profile")
        .into_iter()
        .map(|(profile, span)| MigProfile { profile, span })
        .collect()
}

/// The products `device.attributes['gpu.nvidia.com'].productName == '…'` selects.
fn products(node: &Node) -> Vec<String> {
    compared(node, "productName")
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

impl DeviceRequest {
    fn read(node: &Node) -> DeviceRequest {
        let name = node.get_str("name").unwrap_or_default().to_string();
        let flat = node.entry("deviceClassName");
        if let Some(exactly) = node.get("exactly") {
            return DeviceRequest {
                name,
                device_class: exactly.get_str("deviceClassName").map(str::to_string),
                count: count_of(exactly),
                mig_profiles: mig_profiles(exactly),
                products: products(exactly),
                flat_shape: flat.map(|e| e.key.span),
            };
        }
        if let Some(alternatives) = node.get("firstAvailable").and_then(Node::as_seq) {
            // One of the alternatives is allocated: a count only when they agree.
            let classes: BTreeSet<&str> = alternatives
                .iter()
                .filter_map(|a| a.get_str("deviceClassName"))
                .collect();
            let counts: Vec<DeviceCount> = alternatives.iter().map(count_of).collect();
            let same = counts.windows(2).all(|w| w[0].same_as(&w[1]));
            return DeviceRequest {
                name,
                device_class: (classes.len() == 1)
                    .then(|| classes.iter().next().map(|c| c.to_string()))
                    .flatten(),
                count: match counts.first() {
                    Some(c) if same => c.clone(),
                    _ => DeviceCount::Unknown,
                },
                mig_profiles: alternatives.iter().flat_map(mig_profiles).collect(),
                products: alternatives.iter().flat_map(products).collect(),
                flat_shape: flat.map(|e| e.key.span),
            };
        }
        DeviceRequest {
            name,
            device_class: flat.and_then(|e| e.value.text()).map(str::to_string),
            count: count_of(node),
            mig_profiles: mig_profiles(node),
            products: products(node),
            flat_shape: flat.map(|e| e.key.span),
        }
    }
}

/// The repository's ResourceClaimTemplates and ResourceClaims, by (namespace, name).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DraFacts {
    pub templates: BTreeMap<(String, String), Claim>,
    pub claims: BTreeMap<(String, String), Claim>,
}

impl DraFacts {
    pub fn add(&mut self, object: &Object, namespace: &str) {
        let ns = || {
            object
                .id
                .namespace
                .clone()
                .unwrap_or_else(|| namespace.into())
        };
        if object.id.api_version.starts_with(NVIDIA_GROUP) && object.id.kind == "ComputeDomain" {
            // The driver creates the channel's template: it exists, and asks for no GPU.
            let channel = object
                .node
                .get_path(&["spec", "channel", "resourceClaimTemplate", "name"])
                .and_then(Node::text);
            if let Some(name) = channel {
                let claim = Claim {
                    api_version: object.id.api_version.clone(),
                    requests: Vec::new(),
                };
                self.templates.insert((ns(), name.to_string()), claim);
            }
            return;
        }
        if !object.id.api_version.starts_with(GROUP) {
            return;
        }
        let Some(name) = object.id.name.clone() else {
            return;
        };
        let ns = ns();
        let Some(claim) = Claim::read(object) else {
            return;
        };
        match object.id.kind.as_str() {
            "ResourceClaimTemplate" => {
                self.templates.insert((ns, name), claim);
            }
            "ResourceClaim" => {
                self.claims.insert((ns, name), claim);
            }
            _ => {}
        }
    }

    pub fn is_empty(&self) -> bool {
        self.templates.is_empty() && self.claims.is_empty()
    }

    /// The claim a pod claim entry names, in `namespace`.
    pub fn resolve(&self, namespace: &str, entry: &PodClaim) -> Option<&Claim> {
        let key = |n: &str| (namespace.to_string(), n.to_string());
        match &entry.source {
            ClaimSource::Template(t) => self.templates.get(&key(&t.0)),
            ClaimSource::Claim(c) => self.claims.get(&key(&c.0)),
            ClaimSource::Missing => None,
        }
    }
}

/// Where a pod claim's devices come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimSource {
    /// `resourceClaimTemplateName`: one claim per pod.
    Template((String, Span)),
    /// `resourceClaimName`: one claim shared by every pod that names it.
    Claim((String, Span)),
    Missing,
}

/// One entry of a pod's `spec.resourceClaims`.
#[derive(Clone, Debug)]
pub struct PodClaim {
    pub name: String,
    pub span: Span,
    pub source: ClaimSource,
}

/// A pod spec's `resourceClaims`.
pub fn pod_claims(pod: &Pod) -> Vec<PodClaim> {
    pod.spec
        .get("resourceClaims")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|c| {
            let name = c.entry("name")?;
            let text = |key: &str| {
                c.get(key)
                    .and_then(|n| Some((n.text()?.to_string(), n.span)))
            };
            let source = match (text("resourceClaimTemplateName"), text("resourceClaimName")) {
                (Some(t), _) => ClaimSource::Template(t),
                (None, Some(c)) => ClaimSource::Claim(c),
                (None, None) => ClaimSource::Missing,
            };
            Some(PodClaim {
                name: name.value.text().unwrap_or_default().to_string(),
                span: name.value.span,
                source,
            })
        })
        .collect()
}

/// A container's `resources.claims[]` names, with their spans.
pub fn container_claims(container: &Node) -> Vec<(String, Span)> {
    container
        .get_path(&["resources", "claims"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|c| {
            let n = c.get("name")?;
            Some((n.text()?.to_string(), n.span))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::workload::objects;
    use crate::source::yaml::Stream;

    fn claim(text: &str) -> Claim {
        let stream = Stream::parse(text);
        let o = objects(&stream.documents[0]).remove(0);
        Claim::read(&o).expect("a claim")
    }

    fn gpus(c: &Claim) -> (BTreeMap<String, u64>, BTreeSet<String>) {
        c.gpus(|class| GPU_DEVICE_CLASSES.contains(&class))
    }

    #[test]
    fn request_shapes_of_every_version_count_the_same() {
        let v1 = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n";
        let v1beta1 = "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec:\n  spec:\n    devices:\n      requests:\n      - {name: gpu, deviceClassName: gpu.nvidia.com, count: 2}\n";
        let want = BTreeMap::from([("gpu.nvidia.com".to_string(), 2)]);
        assert_eq!(gpus(&claim(v1)).0, want);
        assert_eq!(gpus(&claim(v1beta1)).0, want);
        assert!(claim(v1).requests[0].flat_shape.is_none());
        assert!(claim(v1beta1).requests[0].flat_shape.is_some());
        let all = v1.replace("count: 2", "allocationMode: All");
        let (known, unknown) = gpus(&claim(&all));
        assert!(known.is_empty());
        assert_eq!(unknown, BTreeSet::from(["gpu.nvidia.com".to_string()]));
        // Alternatives that all take every device agree on the count, wherever each is written.
        let first_available = all.replace(
            "        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}\n",
            "        firstAvailable:\n        - {name: big, deviceClassName: gpu.nvidia.com, allocationMode: All}\n        - {name: small, deviceClassName: gpu.nvidia.com, allocationMode: All}\n",
        );
        assert_ne!(first_available, all);
        assert!(matches!(
            claim(&first_available).requests[0].count,
            DeviceCount::All(_)
        ));
    }

    #[test]
    fn a_compute_domain_declares_its_channel_template() {
        let text = "apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {name: cd, namespace: ml}\nspec:\n  numNodes: 1\n  channel:\n    resourceClaimTemplate: {name: imex-channel-0}\n";
        let stream = Stream::parse(text);
        let mut facts = DraFacts::default();
        for o in objects(&stream.documents[0]) {
            facts.add(&o, "default");
        }
        let key = ("ml".to_string(), "imex-channel-0".to_string());
        assert!(facts
            .templates
            .get(&key)
            .is_some_and(|c| c.requests.is_empty()));
    }

    #[test]
    fn mig_profiles_are_read_from_cel_selectors() {
        let text = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n    requests:\n    - name: mig\n      exactly:\n        deviceClassName: mig.nvidia.com\n        selectors:\n        - cel:\n            expression: \"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'\"\n";
        let c = claim(text);
        assert_eq!(c.requests[0].mig_profiles[0].profile, "3g.40gb");
        assert!(is_known_mig_profile("3g.40gb"));
        assert!(is_known_mig_profile("1g.10gb+me"));
        assert!(!is_known_mig_profile("3g.45gb"));
    }
}
