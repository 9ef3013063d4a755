//! DRA001–DRA008: Dynamic Resource Allocation claims, checked on the pods that use them
//! (references between containers, pod claims and the repository's templates and claims) and
//! on the ResourceClaimTemplates and ResourceClaims themselves (request shape, MIG profiles,
//! counts).

use std::collections::BTreeSet;

use super::kueue::did_you_mean;
use super::{container_anchor, container_label, Context, Hit, Rule};
use crate::k8s::dra::{
    container_claims, is_known_mig_profile, pod_claims, Claim, ClaimSource, DeviceCount,
};
use crate::k8s::gpu::GpuName;
use crate::k8s::podsets::{pod_sets, PodCount};
use crate::k8s::workload::Workload;

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let id = &w.object.id;
    if id.api_version.starts_with(crate::k8s::dra::GROUP)
        && matches!(id.kind.as_str(), "ResourceClaimTemplate" | "ResourceClaim")
    {
        check_claim_object(cx, w, hits);
        return;
    }
    check_pods(cx, w, hits);
}

pub(crate) fn namespace<'a>(cx: &'a Context, w: &'a Workload) -> &'a str {
    w.object
        .id
        .namespace
        .as_deref()
        .unwrap_or(cx.default_namespace)
}

/// DRA001–DRA004, DRA006 on each pod spec of a workload.
fn check_pods(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    // Most workloads use no DRA at all: nothing to count.
    let uses_dra = w
        .pods
        .iter()
        .any(|p| p.spec.get("resourceClaims").is_some())
        || w.containers.iter().any(|c| c.resources.has_claims);
    if !uses_dra {
        return;
    }
    let ns = namespace(cx, w);
    let dra = &cx.facts.dra;
    let sets = pod_sets(w);
    for (index, pod) in w.pods.iter().enumerate() {
        let claims = pod_claims(pod);
        let names: BTreeSet<&str> = claims.iter().map(|c| c.name.as_str()).collect();
        let containers = w.containers.iter().filter(|c| c.pod == Some(index));
        for c in containers {
            for (claim, span) in container_claims(c.node) {
                if !names.contains(claim.as_str()) {
                    let hint = match did_you_mean(&claim, names.iter().copied()) {
                        Some(m) => format!("; did you mean `{m}`?"),
                        None => String::new(),
                    };
                    hits.push(
                        Hit::new(
                            Rule::DraContainerClaimUnknown,
                            span,
                            format!(
                                "{} uses claim `{claim}`, which the pod's `resourceClaims` does not list: the API server rejects the pod{hint}",
                                container_label(c)
                            ),
                            "no such pod claim".into(),
                        )
                        .container(c)
                        .help("add it to `spec.resourceClaims` with a resourceClaimTemplateName, or fix the name"),
                    );
                }
            }
            check_double_allocation(cx, w, ns, &claims, c, hits);
        }
        // How many pods run from this spec: a shared claim in several pods is one device set.
        let pods = sets
            .iter()
            .find(|s| {
                s.containers
                    .iter()
                    .any(|&i| w.containers.get(i).is_some_and(|c| c.pod == Some(index)))
            })
            .map(|s| s.count.clone());
        for entry in &claims {
            let (name, span, templates) = match &entry.source {
                ClaimSource::Missing => {
                    hits.push(Hit::new(
                        Rule::DraClaimSourceMissing,
                        entry.span,
                        format!(
                            "pod claim `{}` names neither `resourceClaimTemplateName` nor `resourceClaimName`: the API server rejects the pod",
                            entry.name
                        ),
                        "no claim source".into(),
                    ));
                    continue;
                }
                ClaimSource::Template((t, span)) => (t, *span, true),
                ClaimSource::Claim((c, span)) => {
                    if let Some(PodCount::Known(n)) = pods
                        .as_ref()
                        .filter(|p| matches!(p, PodCount::Known(n) if *n > 1))
                    {
                        hits.push(
                            Hit::new(
                                Rule::DraSharedClaimMultiReplica,
                                *span,
                                format!(
                                    "{} pods of {} `{}` share ResourceClaim `{c}` (`resourceClaimName`): they all get the same devices, not one set each",
                                    n,
                                    w.object.id.kind,
                                    w.object.id.name.as_deref().unwrap_or("<unnamed>")
                                ),
                                "one claim for every pod".into(),
                            )
                            .help("use `resourceClaimTemplateName` for a claim per pod"),
                        );
                    }
                    (c, *span, false)
                }
            };
            if dra.is_empty() || dra.resolve(ns, entry).is_some() {
                continue;
            }
            let (what, pool) = if templates {
                ("ResourceClaimTemplate", &dra.templates)
            } else {
                ("ResourceClaim", &dra.claims)
            };
            let here: Vec<&str> = pool
                .keys()
                .filter(|(n, _)| n == ns)
                .map(|(_, name)| name.as_str())
                .collect();
            let hint = match did_you_mean(name, here.iter().copied()) {
                Some(m) => format!("; did you mean `{m}`?"),
                None => String::new(),
            };
            hits.push(Hit::new(
                Rule::DraClaimUnknown,
                span,
                format!(
                    "no {what} `{name}` in namespace `{ns}` in the repo: the pod stays pending until it exists{hint}"
                ),
                format!("no such {what}"),
            ));
        }
    }
}

/// DRA006: a container asking for a device-plugin GPU count and for GPUs through a claim.
fn check_double_allocation(
    cx: &Context,
    w: &Workload,
    ns: &str,
    claims: &[crate::k8s::dra::PodClaim],
    c: &crate::k8s::workload::Container,
    hits: &mut Vec<Hit>,
) {
    let counted = c
        .resources
        .requests
        .entries
        .iter()
        .chain(&c.resources.limits.entries)
        .find(|q| {
            cx.gpu_names.classify(q.name) == GpuName::Known
                && q.value.text().is_some_and(|t| t.trim() != "0")
        });
    let Some(counted) = counted else { return };
    let used = container_claims(c.node);
    let gpu_claim = claims.iter().find(|entry| {
        used.iter().any(|(n, _)| *n == entry.name)
            && cx.facts.dra.resolve(ns, entry).is_some_and(|claim| {
                claim.requests.iter().any(|r| {
                    r.device_class
                        .as_deref()
                        .is_some_and(|d| cx.gpu_names.is_gpu_device_class(d))
                })
            })
    });
    let Some(entry) = gpu_claim else { return };
    hits.push(
        Hit::new(
            Rule::DraGpuAllocatedTwice,
            container_anchor(c),
            format!(
                "{} of {} `{}` asks for `{}` from the device plugin and for GPUs through DRA claim `{}`: two allocations, two sets of GPUs",
                container_label(c),
                w.object.id.kind,
                w.object.id.name.as_deref().unwrap_or("<unnamed>"),
                counted.name,
                entry.name
            ),
            "GPUs asked for twice".into(),
        )
        .container(c)
        .help(format!("drop `{}` or the claim", counted.name)),
    );
}

/// DRA005, DRA007, DRA008 on a ResourceClaimTemplate or ResourceClaim.
fn check_claim_object(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let Some(claim) = Claim::read(&w.object) else {
        return;
    };
    let version = claim
        .api_version
        .strip_prefix(crate::k8s::dra::GROUP)
        .unwrap_or_default();
    let kind = &w.object.id.kind;
    let name = w.object.id.name.as_deref().unwrap_or("<unnamed>");
    for r in &claim.requests {
        if let (Some(span), "v1" | "v1beta2") = (r.flat_shape, version) {
            hits.push(
                Hit::new(
                    Rule::DraRequestShapeV1beta1,
                    span,
                    format!(
                        "request `{}` of {kind} `{name}` has `deviceClassName` on the request, the v1beta1 shape; resource.k8s.io/{version} wants it under `exactly:`: the API server rejects it",
                        r.name
                    ),
                    "v1beta1 request shape".into(),
                )
                .help("move deviceClassName, count, allocationMode and selectors under `exactly:`"),
            );
        }
        let gpu = r
            .device_class
            .as_deref()
            .is_some_and(|d| cx.gpu_names.is_gpu_device_class(d));
        for p in &r.mig_profiles {
            if !is_known_mig_profile(&p.profile) {
                hits.push(Hit::new(
                    Rule::DraMigProfileUnknown,
                    p.span,
                    format!(
                        "request `{}` of {kind} `{name}` selects MIG profile `{}`, which no NVIDIA GPU offers (e.g. 1g.10gb, 3g.40gb, 7g.80gb on H100 80GB): no device ever matches",
                        r.name, p.profile
                    ),
                    "unknown MIG profile".into(),
                ));
            }
        }
        if let (true, DeviceCount::All(mode)) = (gpu, &r.count) {
            hits.push(Hit::new(
                Rule::DraGpuCountUnknown,
                *mode,
                format!(
                    "request `{}` of {kind} `{name}` takes every matching GPU on the node (`allocationMode: All`): how many is not known from the repo, so GPU totals leave it out",
                    r.name
                ),
                "unknown GPU count".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::run;
    use crate::rules::RepoFacts;

    /// NVIDIA DRA driver quickstart `demo/specs/quickstart/v1/gpu-test1.yaml` (Apache-2.0),
    /// one pod.
    const TEST1: &str = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  namespace: gpu-test1\n  name: single-gpu\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  namespace: gpu-test1\n  name: pod1\nspec:\n  containers:\n  - name: ctr\n    image: ubuntu:22.04\n    resources:\n      claims:\n      - name: gpu\n  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: single-gpu\n";

    fn hits(text: &str) -> Vec<(String, String, String)> {
        run(text, &RepoFacts::of_text(text), false)
            .into_iter()
            .filter(|(r, _, _)| r.starts_with("DRA"))
            .collect()
    }

    fn rules(text: &str) -> Vec<String> {
        hits(text)
            .into_iter()
            .map(|(r, at, _)| format!("{r} {at}"))
            .collect()
    }

    #[test]
    fn the_quickstart_is_clean() {
        assert!(hits(TEST1).is_empty(), "{:?}", hits(TEST1));
    }

    #[test]
    fn dra001_container_claim_not_in_the_pod() {
        let text = TEST1.replace(
            "      claims:\n      - name: gpu\n",
            "      claims:\n      - name: gpus\n",
        );
        assert_eq!(rules(&text), ["DRA001 gpus"]);
    }

    #[test]
    fn dra002_pod_claim_without_a_source() {
        let text = TEST1.replace("    resourceClaimTemplateName: single-gpu\n", "");
        assert_eq!(rules(&text), ["DRA002 gpu"]);
    }

    #[test]
    fn dra003_template_the_repo_does_not_define() {
        let text = TEST1.replace(
            "resourceClaimTemplateName: single-gpu",
            "resourceClaimTemplateName: singel-gpu",
        );
        let h = hits(&text);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!((h[0].0.as_str(), h[0].1.as_str()), ("DRA003", "singel-gpu"));
        assert!(h[0].2.contains("did you mean `single-gpu`?"), "{}", h[0].2);
        // No template or claim anywhere in the input: they live elsewhere, not judged.
        let pod_only = &text[text.find("apiVersion: v1\n").unwrap_or(0)..];
        assert!(hits(pod_only).is_empty());
    }

    #[test]
    fn dra004_a_shared_claim_in_a_multi_replica_template() {
        let deployment = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {namespace: ml, name: shared}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {namespace: ml, name: d}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: c\n        resources: {claims: [{name: gpu}]}\n      resourceClaims:\n      - name: gpu\n        resourceClaimName: shared\n";
        assert_eq!(rules(deployment), ["DRA004 shared"]);
        assert!(hits(&deployment.replace("replicas: 3", "replicas: 1")).is_empty());
    }

    #[test]
    fn dra005_v1beta1_shape_under_v1() {
        let text = TEST1.replace(
            "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n",
            "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n",
        );
        assert_eq!(rules(&text), ["DRA005 deviceClassName"]);
        // The same shape under v1beta1 is that version's own.
        let beta = text.replace("resource.k8s.io/v1\n", "resource.k8s.io/v1beta1\n");
        assert!(hits(&beta).is_empty());
    }

    #[test]
    fn dra006_a_device_plugin_gpu_and_a_dra_gpu() {
        let text = TEST1.replace(
            "      claims:\n      - name: gpu\n",
            "      claims:\n      - name: gpu\n      limits: {nvidia.com/gpu: 1}\n",
        );
        assert_eq!(rules(&text), ["DRA006 resources"]);
    }

    #[test]
    fn dra007_mig_profiles_no_gpu_offers() {
        let mig = |profile: &str| {
            TEST1.replace(
                "          deviceClassName: gpu.nvidia.com\n",
                &format!("          deviceClassName: mig.nvidia.com\n          selectors:\n          - cel:\n              expression: \"device.attributes['gpu.nvidia.com'].profile == '{profile}'\"\n"),
            )
        };
        let h = hits(&mig("3g.45gb"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].0, "DRA007");
        assert!(h[0].2.contains("`3g.45gb`"), "{}", h[0].2);
        assert!(hits(&mig("3g.40gb")).is_empty());
    }

    #[test]
    fn dra008_all_devices_is_an_unknown_count() {
        let text = TEST1.replace(
            "          deviceClassName: gpu.nvidia.com\n",
            "          deviceClassName: gpu.nvidia.com\n          allocationMode: All\n",
        );
        let h = hits(&text);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].0, "DRA008");
        // Not a GPU class: not reported.
        assert!(hits(&text.replace(
            "gpu.nvidia.com\n          allocationMode",
            "example.com/nic\n          allocationMode"
        ))
        .is_empty());
    }
}
