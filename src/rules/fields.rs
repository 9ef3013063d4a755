//! FLD001: keys Kubernetes does not know where gpulint reads a pod: a container's `resources`
//! (`request:` for `requests:`), the resource names in its requests and limits (`memroy:`),
//! and the fields of a pod spec and its containers. A misspelt key is not a value gpulint can
//! judge: without this rule `memroy: 8Gi` reads as "no memory limit" and `request:` as no
//! requests at all. The API server rejects an unknown resource name always, and an unknown
//! field under strict field validation (kubectl's default); otherwise it drops the field
//! silently.

use super::{container_label, Context, Hit, Rule};
use crate::k8s::workload::{Container, Workload};
use crate::source::decode::did_you_mean;
use crate::source::yaml::{Entry, Node};

/// core/v1 PodSpec's fields (Kubernetes 1.34).
const POD_SPEC: &[&str] = &[
    "activeDeadlineSeconds",
    "affinity",
    "automountServiceAccountToken",
    "containers",
    "dnsConfig",
    "dnsPolicy",
    "enableServiceLinks",
    "ephemeralContainers",
    "hostAliases",
    "hostIPC",
    "hostNetwork",
    "hostPID",
    "hostUsers",
    "hostname",
    "hostnameOverride",
    "imagePullSecrets",
    "initContainers",
    "nodeName",
    "nodeSelector",
    "os",
    "overhead",
    "preemptionPolicy",
    "priority",
    "priorityClassName",
    "readinessGates",
    "resourceClaims",
    "resources",
    "restartPolicy",
    "runtimeClassName",
    "schedulerName",
    "schedulingGates",
    "securityContext",
    "serviceAccount",
    "serviceAccountName",
    "setHostnameAsFQDN",
    "shareProcessNamespace",
    "subdomain",
    "terminationGracePeriodSeconds",
    "tolerations",
    "topologySpreadConstraints",
    "volumes",
];

/// core/v1 Container's fields (Kubernetes 1.34); an ephemeral container adds
/// `targetContainerName`.
const CONTAINER: &[&str] = &[
    "args",
    "command",
    "env",
    "envFrom",
    "image",
    "imagePullPolicy",
    "lifecycle",
    "livenessProbe",
    "name",
    "ports",
    "readinessProbe",
    "resizePolicy",
    "resources",
    "restartPolicy",
    "restartPolicyRules",
    "securityContext",
    "startupProbe",
    "stdin",
    "stdinOnce",
    "targetContainerName",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "tty",
    "volumeDevices",
    "volumeMounts",
    "workingDir",
];

/// ResourceRequirements' fields.
const RESOURCES: &[&str] = &["claims", "limits", "requests"];

/// The resource names without a domain a container may ask for (`hugepages-<size>` besides).
const STANDARD_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage"];

/// A toleration's fields (SCH001 and Kueue's flavors read them), and a memory emptyDir's
/// (SHM001 reads `sizeLimit`).
const TOLERATION: &[&str] = &["effect", "key", "operator", "tolerationSeconds", "value"];
const EMPTY_DIR: &[&str] = &["medium", "sizeLimit"];

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    // A kind found by the generic search may spell its blocks its own way.
    if w.generic {
        return;
    }
    for pod in w.pods.iter().filter(|p| p.exact) {
        unknown_keys(pod.spec, POD_SPEC, "the pod spec", None, hits);
        for t in seq(pod.spec, "tolerations") {
            unknown_keys(t, TOLERATION, "a toleration", None, hits);
        }
        for v in seq(pod.spec, "volumes") {
            if let Some(empty_dir) = v.get("emptyDir") {
                unknown_keys(empty_dir, EMPTY_DIR, "an emptyDir volume", None, hits);
            }
        }
        for (field, init) in [
            ("initContainers", true),
            ("containers", false),
            ("ephemeralContainers", false),
        ] {
            for c in seq(pod.spec, field) {
                let name = c.get_str("name");
                let place = match name {
                    Some(name) if init => format!("init container `{name}`"),
                    Some(name) => format!("container `{name}`"),
                    None => "a container".to_string(),
                };
                unknown_keys(c, CONTAINER, &place, name, hits);
            }
        }
    }
    for c in &w.containers {
        resources(cx, c, hits);
    }
}

/// A name no container may ask for: without a domain and not a standard one (`memroy`,
/// `storage`). The API server rejects the pod before any scheduler or queue sees it, so the
/// rules that read requests (KUE006) leave it to this one.
pub(super) fn invalid_resource_name(name: &str) -> bool {
    let standard = STANDARD_RESOURCES.contains(&name) || name.starts_with("hugepages-");
    !standard && !name.contains('/') && !placeholder(name)
}

/// A name a program fills in before applying: `${VAR}`, `{{ .x }}`, `FILLED_BY_VALIDATOR` (the
/// GPU operator's validator manifests).
fn placeholder(name: &str) -> bool {
    let shouting = name.contains('_')
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    shouting || name.contains(['$', '{'])
}

fn seq<'a>(node: &'a Node, key: &str) -> &'a [Node] {
    node.get(key).and_then(Node::as_seq).unwrap_or_default()
}

/// A container's ResourceRequirements: its keys, then the names in requests and limits.
fn resources(cx: &Context, c: &Container, hits: &mut Vec<Hit>) {
    let (Some(key), Some(node)) = (c.resources.key, c.resources.node) else {
        return;
    };
    if c.spark.is_some() {
        return;
    }
    let field = key.text().unwrap_or("resources");
    let place = format!("the `{field}` of {}", container_label(c));
    unknown_keys(node, RESOURCES, &place, c.name, hits);
    for side in [&c.resources.requests, &c.resources.limits] {
        let Some(list) = side.key.and_then(Node::text) else {
            continue;
        };
        for q in &side.entries {
            let name = q.name;
            // A domain-prefixed name is an extended resource; a GPU-like one is GPU004's; a
            // placeholder was not rendered.
            if !invalid_resource_name(name) || cx.gpu_names.is_gpu(name) {
                continue;
            }
            let near = STANDARD_RESOURCES
                .iter()
                .copied()
                .find(|s| s.eq_ignore_ascii_case(name))
                .or_else(|| did_you_mean(name, STANDARD_RESOURCES.iter().copied()));
            let (hint, help) = match near {
                Some(near) => (
                    format!("; did you mean `{near}`?"),
                    format!("rename `{name}` to `{near}`"),
                ),
                None => (
                    String::new(),
                    "a container asks for `cpu`, `memory`, `ephemeral-storage`, \
                     `hugepages-<size>`, or an extended resource with a domain \
                     (`nvidia.com/gpu`)"
                        .to_string(),
                ),
            };
            let mut hit = Hit::new(
                Rule::UnknownField,
                q.key.span,
                format!(
                    "unknown resource `{name}` in the {list} of {}: the API server rejects the \
                     pod (a resource without a domain must be `cpu`, `memory`, \
                     `ephemeral-storage` or `hugepages-<size>`){hint}",
                    container_label(c),
                ),
                "not a resource Kubernetes knows".into(),
            )
            .help(help);
            hit.container = c.name.map(str::to_string);
            hits.push(hit);
        }
    }
}

/// A finding for every key of `node` not in `known`.
fn unknown_keys(
    node: &Node,
    known: &[&str],
    place: &str,
    container: Option<&str>,
    hits: &mut Vec<Hit>,
) {
    for Entry { key, .. } in node.as_map().unwrap_or_default() {
        let Some(name) = key.text() else { continue };
        // A YAML merge key is not a field; a placeholder was not rendered.
        if known.contains(&name) || name == "<<" || placeholder(name) {
            continue;
        }
        let near = known
            .iter()
            .copied()
            .find(|k| k.eq_ignore_ascii_case(name))
            .or_else(|| did_you_mean(name, known.iter().copied()));
        let hint = near.map_or(String::new(), |n| format!("; did you mean `{n}`?"));
        let mut hit = Hit::new(
            Rule::UnknownField,
            key.span,
            format!(
                "unknown field `{name}` in {place}: Kubernetes has no such field (strict field \
                 validation, kubectl's default, rejects the object; otherwise the field is \
                 dropped and never applies){hint}"
            ),
            "unknown field".into(),
        )
        .help(match near {
            Some(n) => format!("rename `{name}` to `{n}`"),
            None => format!("remove `{name}`, or move it where it belongs"),
        });
        hit.container = container.map(str::to_string);
        hits.push(hit);
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::{deployment, rules_hit, run};
    use crate::rules::RepoFacts;

    fn fld001(text: &str) -> Vec<(String, String)> {
        run(text, &RepoFacts::default(), false)
            .into_iter()
            .filter(|(r, _, _)| r == "FLD001")
            .map(|(_, at, message)| (at, message))
            .collect()
    }

    #[test]
    fn a_misspelt_resources_key_is_found_with_the_key_it_is_a_typo_of() {
        let text = deployment("          request:\n            cpu: 1\n          limits:\n            memroy: 8Gi\n            Memory: 1Gi\n            storage: 1Gi\n            hugepages-2Mi: 1Gi\n            example.com/fpga: 1\n            nvidia.com/gpu: 1\n            FILLED_BY_VALIDATOR: 1\n");
        let found = fld001(&text);
        let at: Vec<&str> = found.iter().map(|(at, _)| at.as_str()).collect();
        assert_eq!(at, ["request", "memroy", "Memory", "storage"], "{found:#?}");
        assert!(
            found[0]
                .1
                .starts_with("unknown field `request` in the `resources` of container `vllm`: ")
                && found[0].1.ends_with("; did you mean `requests`?"),
            "{}",
            found[0].1
        );
        assert!(
            found[1]
                .1
                .starts_with("unknown resource `memroy` in the limits of container `vllm`: the API server rejects the pod")
                && found[1].1.ends_with("; did you mean `memory`?"),
            "{}",
            found[1].1
        );
        assert!(
            found[2].1.contains("did you mean `memory`?"),
            "{}",
            found[2].1
        );
        assert!(
            found[3].1.ends_with("or `hugepages-<size>`)"),
            "{}",
            found[3].1
        );
    }

    #[test]
    fn pod_and_container_fields_are_checked_in_pod_templates_only() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      nodeSelecter: {a: b}\n      tolerations:\n      - {key: nvidia.com/gpu, operator: Exists, efect: NoSchedule}\n      volumes:\n      - name: shm\n        emptyDir: {medium: Memory, sizelimit: 1Gi}\n      containers:\n      - name: vllm\n        image: x\n        resource: {limits: {nvidia.com/gpu: 1}}\n        volumeMount: []\n        <<: {}\n";
        let at: Vec<String> = fld001(text).into_iter().map(|(at, _)| at).collect();
        assert_eq!(
            at,
            [
                "nodeSelecter",
                "efect",
                "sizelimit",
                "resource",
                "volumeMount"
            ]
        );
        // KServe's predictor is a PodSpec with fields of its own: not judged as one.
        let kserve = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: m\nspec:\n  predictor:\n    minReplicas: 1\n    model:\n      modelFormat: {name: pytorch}\n      resources:\n        limits: {nvidia.com/gpu: 1}\n";
        assert!(fld001(kserve).is_empty(), "{:#?}", fld001(kserve));
        // A correct manifest has none.
        let ok = deployment("          requests: {cpu: 1, memory: 1Gi}\n          limits: {memory: 1Gi, nvidia.com/gpu: 1}\n          claims: [{name: gpu}]\n");
        assert!(!rules_hit(&ok).iter().any(|h| h.starts_with("FLD001")));
    }
}
