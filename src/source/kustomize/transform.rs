//! The field transformers: namespace, name prefix/suffix, labels, annotations, images, replicas,
//! and name references. Every value they write is the kustomization's own node (or carries its
//! span), so a finding on a synthesised value points at the kustomization field behind it.

use std::collections::HashMap;
use std::rc::Rc;

use super::kustomization::{Image, Replica, Str};
use super::load::Res;
use crate::source::yaml::{Entry, Node, ScalarKind, Span, Value};

/// A kustomize field spec: where a transformer writes, for which kinds.
struct FieldSpec {
    group: Option<&'static str>,
    kind: Option<&'static str>,
    path: &'static str,
    create: bool,
}

const fn fs(
    group: Option<&'static str>,
    kind: &'static str,
    path: &'static str,
    create: bool,
) -> FieldSpec {
    FieldSpec {
        group,
        kind: Some(kind),
        path,
        create,
    }
}

const APPS: Option<&str> = Some("apps");
const BATCH: Option<&str> = Some("batch");
const CORE: Option<&str> = Some("");

const AFFINITY: [&str; 5] = [
    "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
    "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
    "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
    "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
    "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
];

/// kustomize's `commonLabels` field specs that are selectors.
fn selector_specs() -> Vec<FieldSpec> {
    let mut v = vec![
        fs(CORE, "Service", "spec/selector", true),
        fs(CORE, "ReplicationController", "spec/selector", true),
        fs(APPS, "Deployment", "spec/selector/matchLabels", true),
        fs(APPS, "ReplicaSet", "spec/selector/matchLabels", true),
        fs(APPS, "DaemonSet", "spec/selector/matchLabels", true),
        fs(APPS, "StatefulSet", "spec/selector/matchLabels", true),
        fs(BATCH, "Job", "spec/selector/matchLabels", false),
        fs(
            BATCH,
            "CronJob",
            "spec/jobTemplate/spec/selector/matchLabels",
            false,
        ),
        fs(
            Some("policy"),
            "PodDisruptionBudget",
            "spec/selector/matchLabels",
            false,
        ),
        fs(
            Some("networking.k8s.io"),
            "NetworkPolicy",
            "spec/podSelector/matchLabels",
            false,
        ),
        fs(
            Some("networking.k8s.io"),
            "NetworkPolicy",
            "spec/ingress/from/podSelector/matchLabels",
            false,
        ),
        fs(
            Some("networking.k8s.io"),
            "NetworkPolicy",
            "spec/egress/to/podSelector/matchLabels",
            false,
        ),
    ];
    for kind in ["Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"] {
        for p in AFFINITY {
            v.push(fs(APPS, kind, p, false));
        }
    }
    v
}

/// Pod template metadata of the workload kinds (`labels.includeTemplates`, annotations).
fn template_specs(field: &'static str) -> Vec<FieldSpec> {
    let (t, jt, jtt) = match field {
        "labels" => (
            "spec/template/metadata/labels",
            "spec/jobTemplate/metadata/labels",
            "spec/jobTemplate/spec/template/metadata/labels",
        ),
        _ => (
            "spec/template/metadata/annotations",
            "spec/jobTemplate/metadata/annotations",
            "spec/jobTemplate/spec/template/metadata/annotations",
        ),
    };
    vec![
        fs(CORE, "ReplicationController", t, true),
        fs(APPS, "Deployment", t, true),
        fs(APPS, "ReplicaSet", t, true),
        fs(APPS, "DaemonSet", t, true),
        fs(APPS, "StatefulSet", t, true),
        fs(BATCH, "Job", t, true),
        fs(BATCH, "CronJob", jt, true),
        fs(BATCH, "CronJob", jtt, true),
    ]
}

fn group_of(node: &Node) -> &str {
    let api = node.get_str("apiVersion").unwrap_or_default();
    api.split_once('/').map_or("", |(g, _)| g)
}

fn applies(spec: &FieldSpec, node: &Node) -> bool {
    let kind_ok = spec.kind.is_none_or(|k| node.get_str("kind") == Some(k));
    let group_ok = spec.group.is_none_or(|g| group_of(node) == g);
    kind_ok && group_ok
}

/// A mapping synthesised at `span`.
fn new_map(span: Span) -> Node {
    Node {
        value: Value::Map(Vec::new()),
        span,
        flow: false,
        via_alias: false,
    }
}

/// The mappings at `path` (lists on the way are walked element by element), created when
/// `create` and missing.
fn with_maps(
    node: &mut Node,
    path: &[&str],
    create: bool,
    span: Span,
    f: &mut dyn FnMut(&mut Node),
) {
    match &mut node.value {
        Value::Seq(items) => {
            for i in items {
                with_maps(i, path, create, span, f);
            }
        }
        Value::Map(entries) => {
            let Some((first, rest)) = path.split_first() else {
                f(node);
                return;
            };
            // `name[]` is a list: walked, never created.
            let (first, create_here) = match first.strip_suffix("[]") {
                Some(f) => (f, false),
                None => (*first, create),
            };
            let pos = entries.iter().position(|e| e.key.text() == Some(first));
            let i = match pos {
                Some(i) if !entries[i].value.is_null() => i,
                Some(i) if create_here => {
                    entries[i].value = new_map(span);
                    i
                }
                None if create_here => {
                    let mut key = Node::scalar(first, ScalarKind::Str);
                    key.span = span;
                    entries.push(Entry {
                        key,
                        value: new_map(span),
                    });
                    entries.len() - 1
                }
                _ => return,
            };
            with_maps(&mut entries[i].value, rest, create, span, f);
        }
        Value::Scalar(_) => {}
    }
}

/// Sets `key: value` in a mapping, replacing an existing value.
fn set_entry(map: &mut Node, key: &Node, value: &Node) {
    let Value::Map(entries) = &mut map.value else {
        return;
    };
    let k = key.text().unwrap_or_default();
    match entries.iter_mut().find(|e| e.key.text() == Some(k)) {
        Some(e) => e.value = value.clone(),
        None => entries.push(Entry {
            key: key.clone(),
            value: value.clone(),
        }),
    }
}

/// A label or annotation value is a string whatever it looks like (`1`, `true`).
fn as_string(node: &Node) -> Node {
    let mut n = node.clone();
    if let Value::Scalar(s) = &mut n.value {
        if s.kind != ScalarKind::Str {
            s.kind = ScalarKind::Str;
        }
    }
    n
}

fn set_pairs(res: &mut Res, specs: &[FieldSpec], pairs: &[(Node, Node)]) {
    for spec in specs {
        if !applies(spec, &res.node) {
            continue;
        }
        let path: Vec<&str> = spec.path.split('/').collect();
        let span = pairs.first().map(|(k, _)| k.span).unwrap_or_default();
        with_maps(&mut res.node, &path, spec.create, span, &mut |m| {
            for (k, v) in pairs {
                set_entry(m, k, &as_string(v));
            }
        });
    }
}

pub(crate) fn labels(
    acc: &mut [Res],
    pairs: &[(Node, Node)],
    selectors: bool,
    templates: bool,
    claim_templates: bool,
) {
    let mut specs = vec![FieldSpec {
        group: None,
        kind: None,
        path: "metadata/labels",
        create: true,
    }];
    if selectors {
        specs.extend(selector_specs());
    }
    if templates {
        specs.extend(template_specs("labels"));
    }
    if claim_templates {
        specs.push(fs(
            APPS,
            "StatefulSet",
            "spec/volumeClaimTemplates[]/metadata/labels",
            true,
        ));
    }
    for r in acc {
        set_pairs(r, &specs, pairs);
    }
}

pub(crate) fn annotations(acc: &mut [Res], pairs: &[(Node, Node)]) {
    let mut specs = vec![FieldSpec {
        group: None,
        kind: None,
        path: "metadata/annotations",
        create: true,
    }];
    specs.extend(template_specs("annotations"));
    for r in acc {
        set_pairs(r, &specs, pairs);
    }
}

/// Kinds without a namespace (by API group).
pub(crate) fn cluster_scoped(node: &Node) -> bool {
    let kind = node.get_str("kind").unwrap_or_default();
    let group = group_of(node);
    matches!(
        (group, kind),
        (
            "",
            "Namespace" | "Node" | "PersistentVolume" | "ComponentStatus"
        ) | (
            "rbac.authorization.k8s.io",
            "ClusterRole" | "ClusterRoleBinding"
        ) | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | (
                "storage.k8s.io",
                "StorageClass" | "CSIDriver" | "CSINode" | "VolumeAttachment"
            )
            | ("scheduling.k8s.io", "PriorityClass")
            | ("node.k8s.io", "RuntimeClass")
            | ("networking.k8s.io", "IngressClass")
            | ("policy", "PodSecurityPolicy")
            | ("apiregistration.k8s.io", "APIService")
            | ("certificates.k8s.io", "CertificateSigningRequest")
            | (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration"
                    | "MutatingWebhookConfiguration"
                    | "ValidatingAdmissionPolicy"
                    | "ValidatingAdmissionPolicyBinding"
                    | "MutatingAdmissionPolicy"
                    | "MutatingAdmissionPolicyBinding"
            )
            | (
                "flowcontrol.apiserver.k8s.io",
                "FlowSchema" | "PriorityLevelConfiguration"
            )
    )
}

fn set_scalar_at(node: &mut Node, path: &[&str], value: &Node, create: bool) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut key = Node::scalar(last, ScalarKind::Str);
    key.span = value.span;
    with_maps(node, parents, create, value.span, &mut |m| {
        if create || m.get(last).is_some() {
            set_entry(m, &key, value)
        }
    });
}

pub(crate) fn namespace(acc: &mut [Res], ns: &Str) {
    let value = as_string(&ns.node);
    for r in acc {
        let kind = r.node.get_str("kind").unwrap_or_default().to_string();
        if !cluster_scoped(&r.node) {
            r.remember();
            set_scalar_at(&mut r.node, &["metadata", "namespace"], &value, true);
        }
        match kind.as_str() {
            // The `default` service account follows the namespace (kustomize's default mode).
            "RoleBinding" | "ClusterRoleBinding" => {
                with_maps(&mut r.node, &["subjects"], false, value.span, &mut |m| {
                    if m.get_str("kind") == Some("ServiceAccount")
                        && m.get_str("name") == Some("default")
                    {
                        set_scalar_at(m, &["namespace"], &value, true);
                    }
                });
            }
            "CustomResourceDefinition" => set_scalar_at(
                &mut r.node,
                &[
                    "spec",
                    "conversion",
                    "webhook",
                    "clientConfig",
                    "service",
                    "namespace",
                ],
                &value,
                false,
            ),
            _ => {}
        }
    }
}

pub(crate) fn prefix_suffix(acc: &mut [Res], prefix: Option<&Str>, suffix: Option<&Str>) {
    let p = prefix.map(|s| s.text.as_str()).unwrap_or_default();
    let s = suffix.map(|s| s.text.as_str()).unwrap_or_default();
    let span = prefix.or(suffix).map(|s| s.node.span).unwrap_or_default();
    for r in acc {
        let kind = r.node.get_str("kind").unwrap_or_default();
        let skip = matches!(kind, "CustomResourceDefinition" | "Namespace")
            || (kind == "APIService" && group_of(&r.node) == "apiregistration.k8s.io");
        if skip {
            continue;
        }
        let Some(name) = r.node.get_path(&["metadata", "name"]).and_then(Node::text) else {
            continue;
        };
        let mut new = Node::scalar(&format!("{p}{name}{s}"), ScalarKind::Str);
        new.span = span;
        r.remember();
        set_scalar_at(&mut r.node, &["metadata", "name"], &new, true);
    }
}

pub(crate) fn replicas(acc: &mut [Res], rep: &Replica) {
    for r in acc {
        let kind = r.node.get_str("kind").unwrap_or_default();
        if !matches!(
            kind,
            "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController"
        ) {
            continue;
        }
        if r.all_ids().iter().any(|id| id.name == rep.name) {
            set_scalar_at(&mut r.node, &["spec", "replicas"], &rep.count, true);
        }
    }
}

/// `name[:tag][@digest]` split the way kustomize does.
fn split_image(image: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, digest) = match image.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (image, None),
    };
    // A `:` after the last `/` starts the tag (a `:` before it is a registry port).
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], Some(&rest[slash + i + 1..]), digest),
        None => (rest, None, digest),
    }
}

fn rewrite_image(old: &str, img: &Image) -> Option<String> {
    let (name, tag, digest) = split_image(old);
    if name != img.name {
        return None;
    }
    let name = img.new_name.as_ref().map_or(name, |n| n.text.as_str());
    let (tag, digest) = match (&img.new_tag, &img.digest) {
        (_, Some(d)) => (None, Some(d.text.as_str())),
        (Some(t), None) => (Some(t.text.as_str()), None),
        (None, None) => (tag, digest),
    };
    let mut out = name.to_string();
    if let Some(t) = tag {
        out.push(':');
        out.push_str(t);
    }
    if let Some(d) = digest {
        out.push('@');
        out.push_str(d);
    }
    Some(out)
}

/// Every `containers` / `initContainers` list anywhere in the object (kustomize's legacy image
/// filter walks them all, which covers CRDs with pod templates).
fn walk_images(node: &mut Node, img: &Image) {
    match &mut node.value {
        Value::Map(entries) => {
            for e in entries {
                let is_list = matches!(e.key.text(), Some("containers" | "initContainers"));
                if is_list {
                    if let Value::Seq(items) = &mut e.value.value {
                        for c in items {
                            if let Value::Map(fields) = &mut c.value {
                                for f in fields.iter_mut().filter(|f| f.key.text() == Some("image"))
                                {
                                    let Some(old) = f.value.text() else { continue };
                                    if let Some(new) = rewrite_image(old, img) {
                                        let mut n = Node::scalar(&new, ScalarKind::Str);
                                        n.span = img
                                            .new_tag
                                            .as_ref()
                                            .or(img.digest.as_ref())
                                            .or(img.new_name.as_ref())
                                            .map_or(img.node.span, |s| s.node.span);
                                        f.value = n;
                                    }
                                }
                            }
                        }
                    }
                }
                walk_images(&mut e.value, img);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| walk_images(i, img)),
        Value::Scalar(_) => {}
    }
}

pub(crate) fn image(acc: &mut [Res], img: &Image) {
    for r in acc {
        walk_images(&mut r.node, img);
    }
}

/// Where pod specs refer to other objects by name: (referred kind, path to the name).
const POD_REFS: &[(&str, &str)] = &[
    ("ConfigMap", "volumes/configMap/name"),
    ("ConfigMap", "volumes/projected/sources/configMap/name"),
    ("ConfigMap", "containers/env/valueFrom/configMapKeyRef/name"),
    (
        "ConfigMap",
        "initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    ("ConfigMap", "containers/envFrom/configMapRef/name"),
    ("ConfigMap", "initContainers/envFrom/configMapRef/name"),
    ("Secret", "volumes/secret/secretName"),
    ("Secret", "volumes/projected/sources/secret/name"),
    ("Secret", "containers/env/valueFrom/secretKeyRef/name"),
    ("Secret", "initContainers/env/valueFrom/secretKeyRef/name"),
    ("Secret", "containers/envFrom/secretRef/name"),
    ("Secret", "initContainers/envFrom/secretRef/name"),
    ("Secret", "imagePullSecrets/name"),
    ("ServiceAccount", "serviceAccountName"),
    ("ServiceAccount", "serviceAccount"),
    (
        "PersistentVolumeClaim",
        "volumes/persistentVolumeClaim/claimName",
    ),
    ("PriorityClass", "priorityClassName"),
];

fn pod_spec_root(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Pod" => "spec",
        "Deployment"
        | "ReplicaSet"
        | "DaemonSet"
        | "StatefulSet"
        | "Job"
        | "ReplicationController" => "spec/template/spec",
        "CronJob" => "spec/jobTemplate/spec/template/spec",
        _ => return None,
    })
}

/// One place an object names another.
struct RefSite {
    kind: String,
    /// Path to the mapping that holds the name.
    map: Vec<String>,
    name_key: &'static str,
    /// The mapping's own namespace field, which follows the referred object (RBAC subjects,
    /// webhook services); without it the referred object must share the referrer's namespace.
    ns_key: Option<&'static str>,
    /// The mapping's `kind` must be the referred kind (RBAC subjects).
    check_kind: bool,
    /// Cluster-scoped referrals (ClusterRole) match in any namespace.
    any_namespace: bool,
}

/// Kinds whose reference sites depend on the object (the referred kind is a field of it).
fn sites_read_the_object(kind: &str) -> bool {
    matches!(
        kind,
        "HorizontalPodAutoscaler" | "RoleBinding" | "ClusterRoleBinding"
    )
}

/// Whether `node` has a mapping at `path` (lists walked, `name[]` a list) holding a string
/// `name_key`: a reference [`with_maps`] would visit, found without changing anything.
fn names_at(node: &Node, path: &[String], name_key: &str) -> bool {
    match &node.value {
        Value::Seq(items) => items.iter().any(|i| names_at(i, path, name_key)),
        Value::Map(entries) => {
            let Some((first, rest)) = path.split_first() else {
                return node.get_str(name_key).is_some();
            };
            let first = first.strip_suffix("[]").unwrap_or(first);
            entries
                .iter()
                .find(|e| e.key.text() == Some(first))
                .is_some_and(|e| !e.value.is_null() && names_at(&e.value, rest, name_key))
        }
        Value::Scalar(_) => false,
    }
}

fn sites(node: &Node) -> Vec<RefSite> {
    let kind = node.get_str("kind").unwrap_or_default();
    let site = |k: &str, path: &str, name_key: &'static str| {
        let mut map: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let _ = map.pop();
        RefSite {
            kind: k.to_string(),
            map,
            name_key,
            ns_key: None,
            check_kind: false,
            any_namespace: false,
        }
    };
    let mut out = Vec::new();
    if let Some(root) = pod_spec_root(kind) {
        for (k, p) in POD_REFS {
            let full = format!("{root}/{p}");
            let key = if p.ends_with("secretName") {
                "secretName"
            } else if p.ends_with("claimName") {
                "claimName"
            } else if p.ends_with("serviceAccountName") {
                "serviceAccountName"
            } else if p.ends_with("serviceAccount") {
                "serviceAccount"
            } else if p.ends_with("priorityClassName") {
                "priorityClassName"
            } else {
                "name"
            };
            out.push(site(k, &full, key));
        }
    }
    match kind {
        "StatefulSet" => out.push(site("Service", "spec/serviceName", "serviceName")),
        "HorizontalPodAutoscaler" => {
            if let Some(k) = node
                .get_path(&["spec", "scaleTargetRef", "kind"])
                .and_then(Node::text)
            {
                out.push(site(k, "spec/scaleTargetRef/name", "name"));
            }
        }
        "ValidatingAdmissionPolicyBinding" => {
            let mut s = site("ValidatingAdmissionPolicy", "spec/policyName", "policyName");
            s.any_namespace = true;
            out.push(s);
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            if let Some(k) = node.get_path(&["roleRef", "kind"]).and_then(Node::text) {
                let mut s = site(k, "roleRef/name", "name");
                s.any_namespace = k == "ClusterRole";
                out.push(s);
            }
            let mut s = site("ServiceAccount", "subjects/name", "name");
            s.ns_key = Some("namespace");
            s.check_kind = true;
            out.push(s);
        }
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            let mut s = site("Service", "webhooks/clientConfig/service/name", "name");
            s.ns_key = Some("namespace");
            out.push(s);
        }
        _ => {}
    }
    out
}

/// Updates references to renamed (or moved) objects: kustomize's name reference transformer,
/// for the references workloads, RBAC, webhooks and admission policies use. Run at the end of
/// every kustomization level, so a base's references are settled before an overlay mixes bases
/// that share names.
pub(crate) fn fix_name_references(acc: &mut [Res]) {
    if acc.iter().all(|r| r.prev.is_empty()) {
        return; // nothing renamed or moved
    }
    // The sites of most kinds depend on the kind alone: built once per kind. Only objects that
    // hold one of their mappings are visited (most objects name nothing), and the targets are
    // built only when some object does: a render of thousands of objects stays linear.
    let mut by_kind: HashMap<String, Rc<Vec<RefSite>>> = HashMap::new();
    let mut referrers: Vec<(usize, Rc<Vec<RefSite>>)> = Vec::new();
    for (i, r) in acc.iter().enumerate() {
        let kind = r.node.get_str("kind").unwrap_or_default();
        let kind_sites = if sites_read_the_object(kind) {
            Rc::new(sites(&r.node))
        } else {
            Rc::clone(
                by_kind
                    .entry(kind.to_string())
                    .or_insert_with(|| Rc::new(sites(&r.node))),
            )
        };
        if kind_sites
            .iter()
            .any(|site| names_at(&r.node, &site.map, site.name_key))
        {
            referrers.push((i, kind_sites));
        }
    }
    if referrers.is_empty() {
        return;
    }
    struct Target {
        kind: String,
        /// Earlier names (only renamed or moved objects are candidates, as in kustomize).
        names: Vec<String>,
        namespaces: Vec<String>,
        name: Node,
        namespace: Option<Node>,
    }
    let targets: Vec<Target> = acc
        .iter()
        .filter(|r| !r.prev.is_empty())
        .filter_map(|r| {
            let ids = r.all_ids();
            Some(Target {
                kind: r.id().kind,
                names: ids.iter().map(|i| i.name.clone()).collect(),
                namespaces: ids
                    .iter()
                    .map(|i| i.effective_namespace().to_string())
                    .collect(),
                name: r.node.get_path(&["metadata", "name"])?.clone(),
                namespace: r.node.get_path(&["metadata", "namespace"]).cloned(),
            })
        })
        .collect();
    if targets.is_empty() {
        return;
    }
    for (i, kind_sites) in referrers {
        let Some(r) = acc.get_mut(i) else { continue };
        let own_ns: Vec<String> = r
            .all_ids()
            .iter()
            .map(|i| i.effective_namespace().to_string())
            .collect();
        for site in kind_sites.iter() {
            let path: Vec<&str> = site.map.iter().map(String::as_str).collect();
            with_maps(&mut r.node, &path, false, Span::default(), &mut |m| {
                if site.check_kind && m.get_str("kind") != Some(site.kind.as_str()) {
                    return;
                }
                let Some(old) = m.get_str(site.name_key).map(str::to_string) else {
                    return;
                };
                let ns: Vec<String> = match site.ns_key {
                    Some(k) => vec![m
                        .get_str(k)
                        .filter(|s| !s.is_empty())
                        .unwrap_or("default")
                        .to_string()],
                    None => own_ns.clone(),
                };
                let found = targets.iter().find(|t| {
                    t.kind == site.kind
                        && t.names.contains(&old)
                        && (site.any_namespace || t.namespaces.iter().any(|n| ns.contains(n)))
                });
                let Some(t) = found else { return };
                if let Some(key) = m.entry(site.name_key).map(|e| e.key.clone()) {
                    if t.name.text() != Some(old.as_str()) {
                        set_entry(m, &key, &t.name);
                    }
                }
                if let (Some(k), Some(ns_node)) = (site.ns_key, &t.namespace) {
                    if m.get_str(k) != ns_node.text() {
                        let mut key = Node::scalar(k, ScalarKind::Str);
                        key.span = ns_node.span;
                        if let Some(e) = m.entry(k) {
                            key = e.key.clone();
                        }
                        set_entry(m, &key, ns_node);
                    }
                }
            });
        }
    }
}
