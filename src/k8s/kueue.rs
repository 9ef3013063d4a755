//! Kueue's objects as the repository declares them (ClusterQueues, Cohorts, ResourceFlavors,
//! LocalQueues, Namespaces' labels) and the admission arithmetic: the most a ClusterQueue can
//! ever admit of one flavor and resource, with every other queue idle.
//!
//! The arithmetic is Kueue's own (`pkg/cache/.../resource_node.go`, `potentialAvailable`):
//! a node's subtree quota is its nominal quota plus what its children lend (their subtree
//! quota minus what they keep: `subtree - lendingLimit` when a lending limit is set); a root
//! can use its subtree quota; any other node what it keeps plus what its parent can reach,
//! capped at `subtree + borrowingLimit` when a borrowing limit is set. A ClusterQueue without
//! a cohort is a root. Cohorts named but not declared exist implicitly, without quota.
//!
//! The model owns its data (no borrow of the YAML tree): it is gathered once over every file
//! and render of the run, before linting.

use std::collections::{BTreeMap, BTreeSet};

use super::workload::Object;
use crate::quantity::Quantity;
use crate::source::yaml::Node;

pub const GROUP: &str = "kueue.x-k8s.io/";
/// The label Kueue reads the LocalQueue from.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// The label every namespace carries (Kubernetes sets it).
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// One resource's quota in one flavor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quota {
    pub nominal: Quantity,
    pub borrowing_limit: Option<Quantity>,
    pub lending_limit: Option<Quantity>,
}

/// A flavor of a resource group with its quotas, by resource name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlavorQuotas {
    pub flavor: String,
    pub resources: BTreeMap<String, Quota>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceGroup {
    pub covered: Vec<String>,
    pub flavors: Vec<FlavorQuotas>,
}

/// A node of the quota tree: a ClusterQueue or a Cohort.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuotaNode {
    pub name: String,
    /// The cohort above it (`spec.cohort`/`cohortName` of a ClusterQueue, `spec.parent`/
    /// `parentName` of a Cohort).
    pub parent: Option<String>,
    pub groups: Vec<ResourceGroup>,
}

impl QuotaNode {
    pub fn quota(&self, flavor: &str, resource: &str) -> Option<&Quota> {
        self.groups
            .iter()
            .flat_map(|g| &g.flavors)
            .filter(|f| f.flavor == flavor)
            .find_map(|f| f.resources.get(resource))
    }

    /// The resource group that covers `resource`.
    pub fn group_of(&self, resource: &str) -> Option<&ResourceGroup> {
        self.groups
            .iter()
            .find(|g| g.covered.iter().any(|c| c == resource))
    }
}

/// A label selector (`matchLabels`, `matchExpressions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    pub match_labels: BTreeMap<String, String>,
    pub expressions: Vec<Requirement>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

impl Requirement {
    /// A `matchExpressions` entry (`key`, `operator`, `values`); None without key or operator.
    pub fn read(node: &Node) -> Option<Requirement> {
        Some(Requirement {
            key: node.get_str("key")?.to_string(),
            operator: node.get_str("operator")?.to_string(),
            values: super::texts(node.get("values")),
        })
    }

    /// Whether labels satisfy it; `None` when a label it needs is not known.
    pub fn matches(&self, label: impl Fn(&str) -> Option<Option<String>>) -> Option<bool> {
        // `label(key)`: None = unknown, Some(None) = absent, Some(Some(v)) = value.
        let value = label(&self.key)?;
        let has = |v: &String| self.values.contains(v);
        Some(match self.operator.as_str() {
            "In" => value.as_ref().is_some_and(has),
            "NotIn" => !value.as_ref().is_some_and(has),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            // Gt/Lt (node affinity) and anything else: not judged.
            _ => return None,
        })
    }
}

impl Selector {
    pub fn read(node: &Node) -> Selector {
        Selector {
            match_labels: string_map(node.get("matchLabels")),
            expressions: node
                .get("matchExpressions")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(Requirement::read)
                .collect(),
        }
    }

    /// Whether labels satisfy every requirement; `None` when it depends on a label not known.
    /// A requirement known to fail decides, even when others are unknown.
    pub fn matches(&self, label: impl Fn(&str) -> Option<Option<String>>) -> Option<bool> {
        let mut unknown = false;
        let pairs = self.match_labels.iter().map(|(k, v)| Requirement {
            key: k.clone(),
            operator: "In".into(),
            values: vec![v.clone()],
        });
        for r in pairs.chain(self.expressions.iter().cloned()) {
            match r.matches(&label) {
                Some(false) => return Some(false),
                Some(true) => {}
                None => unknown = true,
            }
        }
        (!unknown).then_some(true)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterQueue {
    pub node: QuotaNode,
    /// `None` when the field is absent (not judged: its default changed between versions).
    pub namespace_selector: Option<Selector>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalQueue {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: Option<String>,
}

/// What of Kueue's own configuration (`config.kueue.x-k8s.io` `Configuration`, as an object or
/// in the manager's ConfigMap under `controller_manager_config.yaml`) changes admission.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KueueConfig {
    /// `resources.excludeResourcePrefixes`: resources Kueue does not count.
    pub exclude_prefixes: Vec<String>,
    /// `resources.transformations[].input`: resources Kueue turns into others (gpulint does
    /// not compute the outputs: such resources are not judged).
    pub transformed: Vec<String>,
    /// `resources.quotaCheckStrategy`, when set.
    pub quota_check_strategy: Option<String>,
}

impl KueueConfig {
    fn read(root: &Node) -> KueueConfig {
        let resources = root.get("resources");
        KueueConfig {
            exclude_prefixes: super::texts(
                resources.and_then(|r| r.get("excludeResourcePrefixes")),
            ),
            transformed: resources
                .and_then(|r| r.get("transformations"))
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(|t| t.get_str("input").map(str::to_string))
                .collect(),
            quota_check_strategy: resources
                .and_then(|r| r.get_str("quotaCheckStrategy"))
                .map(str::to_string),
        }
    }

    /// Whether Kueue counts the resource against quota as it is named.
    pub fn counts(&self, resource: &str) -> bool {
        !self
            .exclude_prefixes
            .iter()
            .any(|p| resource.starts_with(p.as_str()))
            && !self.transformed.iter().any(|t| t == resource)
    }

    /// Whether a resource no ClusterQueue covers blocks admission (Kueue's default,
    /// `BlockUndeclared`).
    pub fn blocks_undeclared(&self) -> bool {
        self.quota_check_strategy
            .as_deref()
            .is_none_or(|s| s == "BlockUndeclared")
    }
}

/// Everything Kueue-related the repository declares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KueueFacts {
    /// Kueue's configuration, when the repository has it.
    pub config: KueueConfig,
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    pub cohorts: BTreeMap<String, QuotaNode>,
    /// ResourceFlavor `nodeLabels`, by flavor name.
    pub flavors: BTreeMap<String, BTreeMap<String, String>>,
    /// ResourceFlavor `tolerations`, by flavor name: Kueue adds them to the pods it admits
    /// to the flavor.
    pub flavor_tolerations: BTreeMap<String, Vec<Toleration>>,
    /// LocalQueues by (namespace, name).
    pub local_queues: BTreeMap<(String, String), LocalQueue>,
    /// Namespace objects' labels, by name.
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// KAI scheduler `Queue` names (`scheduling.run.ai`).
    pub kai_queues: BTreeSet<String>,
}

/// A toleration, as far as telling which taint it tolerates needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Toleration {
    pub key: Option<String>,
    pub operator: Option<String>,
}

/// A Kueue `Configuration` (it has no name).
fn is_configuration(root: &Node) -> bool {
    root.get_str("kind") == Some("Configuration")
        && root
            .get_str("apiVersion")
            .is_some_and(|v| v.starts_with("config.kueue.x-k8s.io/"))
}

fn string_map(node: Option<&Node>) -> BTreeMap<String, String> {
    node.and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some((e.key.text()?.to_string(), e.value.text()?.to_string())))
        .collect()
}

fn quantity(node: Option<&Node>) -> Option<Quantity> {
    node?.text()?.trim().parse().ok()
}

/// `resourceGroups` of a ClusterQueue or Cohort spec. A quota that is not a quantity (a
/// placeholder) leaves its resource out: never guessed.
fn resource_groups(spec: Option<&Node>) -> Vec<ResourceGroup> {
    let groups = spec
        .and_then(|s| s.get("resourceGroups"))
        .and_then(Node::as_seq)
        .unwrap_or_default();
    groups
        .iter()
        .map(|g| ResourceGroup {
            covered: super::texts(g.get("coveredResources")),
            flavors: g
                .get("flavors")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(|f| {
                    let resources = f
                        .get("resources")
                        .and_then(Node::as_seq)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|r| {
                            let quota = Quota {
                                nominal: quantity(r.get("nominalQuota"))?,
                                borrowing_limit: quantity(r.get("borrowingLimit")),
                                lending_limit: quantity(r.get("lendingLimit")),
                            };
                            Some((r.get_str("name")?.to_string(), quota))
                        })
                        .collect();
                    Some(FlavorQuotas {
                        flavor: f.get_str("name")?.to_string(),
                        resources,
                    })
                })
                .collect(),
        })
        .collect()
}

impl KueueFacts {
    /// Records an object if it is one Kueue (or KAI) reads. `namespace`: where a namespaced
    /// object without one lands.
    pub fn add(&mut self, object: &Object, namespace: &str) {
        let id = &object.id;
        if is_configuration(object.node) {
            self.config = KueueConfig::read(object.node);
            return;
        }
        let Some(name) = id.name.clone() else { return };
        let spec = object.node.get("spec");
        let kueue = id.api_version.starts_with(GROUP);
        match id.kind.as_str() {
            "ClusterQueue" if kueue => {
                let parent = spec
                    .and_then(|s| s.get_str("cohortName").or_else(|| s.get_str("cohort")))
                    .filter(|c| !c.is_empty())
                    .map(str::to_string);
                let namespace_selector = spec
                    .and_then(|s| s.get("namespaceSelector"))
                    .filter(|n| !n.is_null())
                    .map(Selector::read);
                self.cluster_queues.insert(
                    name.clone(),
                    ClusterQueue {
                        node: QuotaNode {
                            name,
                            parent,
                            groups: resource_groups(spec),
                        },
                        namespace_selector,
                    },
                );
            }
            "Cohort" if kueue => {
                let parent = spec
                    .and_then(|s| s.get_str("parentName").or_else(|| s.get_str("parent")))
                    .filter(|c| !c.is_empty())
                    .map(str::to_string);
                self.cohorts.insert(
                    name.clone(),
                    QuotaNode {
                        name,
                        parent,
                        groups: resource_groups(spec),
                    },
                );
            }
            "ResourceFlavor" if kueue => {
                let labels = string_map(spec.and_then(|s| s.get("nodeLabels")));
                let tolerations = spec
                    .and_then(|s| s.get("tolerations"))
                    .and_then(Node::as_seq)
                    .unwrap_or_default()
                    .iter()
                    .map(|t| Toleration {
                        key: t.get_str("key").map(str::to_string),
                        operator: t.get_str("operator").map(str::to_string),
                    })
                    .collect();
                self.flavor_tolerations.insert(name.clone(), tolerations);
                self.flavors.insert(name, labels);
            }
            "LocalQueue" if kueue => {
                let namespace = id.namespace.clone().unwrap_or_else(|| namespace.into());
                let cluster_queue = spec
                    .and_then(|s| s.get_str("clusterQueue"))
                    .map(str::to_string);
                self.local_queues.insert(
                    (namespace.clone(), name.clone()),
                    LocalQueue {
                        namespace,
                        name,
                        cluster_queue,
                    },
                );
            }
            "Namespace" if id.api_version == "v1" => {
                let labels = string_map(object.metadata().and_then(|m| m.get("labels")));
                self.namespaces.insert(name, labels);
            }
            "Queue" if id.api_version.starts_with("scheduling.run.ai/") => {
                self.kai_queues.insert(name);
            }
            "ConfigMap" if id.api_version == "v1" => {
                // Kueue's manager reads its Configuration from this key of its ConfigMap.
                let embedded = object
                    .node
                    .get_path(&["data", "controller_manager_config.yaml"])
                    .and_then(Node::text);
                if let Some(text) = embedded {
                    let stream = crate::source::yaml::Stream::parse(text);
                    for doc in &stream.documents {
                        if is_configuration(&doc.root) {
                            self.config = KueueConfig::read(&doc.root);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The LocalQueues of a namespace.
    pub fn queues_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a LocalQueue> {
        self.local_queues
            .range((namespace.to_string(), String::new())..)
            .take_while(move |((ns, _), _)| ns == namespace)
            .map(|(_, q)| q)
    }

    /// A namespace's label, as far as the repository tells: `None` when the namespace is not
    /// declared here and the label is not the one Kubernetes sets.
    pub fn namespace_label(&self, namespace: &str, key: &str) -> Option<Option<String>> {
        if key == NAMESPACE_NAME_LABEL {
            return Some(Some(namespace.to_string()));
        }
        self.namespaces
            .get(namespace)
            .map(|labels| labels.get(key).cloned())
    }

    fn node(&self, name: &str, cohort: bool) -> Option<&QuotaNode> {
        if cohort {
            self.cohorts.get(name)
        } else {
            self.cluster_queues.get(name).map(|c| &c.node)
        }
    }

    /// The children of a cohort: ClusterQueues and Cohorts whose parent it is.
    fn children<'a>(&'a self, cohort: &'a str) -> impl Iterator<Item = &'a QuotaNode> {
        let queues = self.cluster_queues.values().map(|c| &c.node);
        queues
            .chain(self.cohorts.values())
            .filter(move |n| n.parent.as_deref() == Some(cohort))
    }

    /// Nominal quota of the node and everything its children lend it (Kueue's SubtreeQuota).
    /// An undeclared cohort has no quota of its own. `depth` stops a cycle.
    fn subtree_quota(
        &self,
        name: &str,
        cohort: bool,
        flavor: &str,
        resource: &str,
        depth: usize,
    ) -> Quantity {
        if depth > 32 {
            return Quantity::ZERO;
        }
        let own = self
            .node(name, cohort)
            .and_then(|n| n.quota(flavor, resource))
            .map_or(Quantity::ZERO, |q| q.nominal);
        if !cohort {
            return own;
        }
        self.children(name).fold(own, |sum, child| {
            let child_is_cohort = self.cohorts.get(&child.name) == Some(child);
            let subtree =
                self.subtree_quota(&child.name, child_is_cohort, flavor, resource, depth + 1);
            let kept = guaranteed(child.quota(flavor, resource), subtree);
            let lent = subtree.checked_sub(kept).unwrap_or(Quantity::ZERO);
            sum.checked_add(lent).unwrap_or(sum)
        })
    }

    /// The most the node can use of a flavor's resource with every other node idle (Kueue's
    /// `potentialAvailable`).
    fn potential(
        &self,
        name: &str,
        cohort: bool,
        flavor: &str,
        resource: &str,
        depth: usize,
    ) -> Quantity {
        let subtree = self.subtree_quota(name, cohort, flavor, resource, 0);
        let node = self.node(name, cohort);
        let parent = node.and_then(|n| n.parent.as_deref());
        let (Some(parent), true) = (parent, depth <= 32) else {
            return subtree;
        };
        let quota = node.and_then(|n| n.quota(flavor, resource));
        let mut available = guaranteed(quota, subtree)
            .checked_add(self.potential(parent, true, flavor, resource, depth + 1))
            .unwrap_or(subtree);
        if let Some(limit) = quota.and_then(|q| q.borrowing_limit) {
            if let Some(cap) = subtree.checked_add(limit) {
                available = available.min(cap);
            }
        }
        available
    }

    /// The most a ClusterQueue can admit of `resource` in `flavor`, borrowing all it may. A
    /// ClusterQueue borrows only for flavors it defines: 0 for any other.
    pub fn reachable(&self, cluster_queue: &str, flavor: &str, resource: &str) -> Quantity {
        let defined = self
            .cluster_queues
            .get(cluster_queue)
            .and_then(|c| c.node.quota(flavor, resource))
            .is_some();
        if !defined {
            return Quantity::ZERO;
        }
        self.potential(cluster_queue, false, flavor, resource, 0)
    }
}

/// What a node keeps for itself and never lends (Kueue's guaranteedQuota):
/// `subtree - lendingLimit` (at least 0) with a lending limit, else nothing.
fn guaranteed(quota: Option<&Quota>, subtree: Quantity) -> Quantity {
    match quota.and_then(|q| q.lending_limit) {
        Some(limit) => subtree
            .checked_sub(limit)
            .unwrap_or(Quantity::ZERO)
            .max(Quantity::ZERO),
        None => Quantity::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::workload::objects;
    use crate::source::yaml::Stream;

    fn facts(text: &str) -> KueueFacts {
        let stream = Stream::parse(text);
        assert!(stream.error.is_none(), "{:?}", stream.error);
        let mut f = KueueFacts::default();
        for doc in &stream.documents {
            for o in objects(doc) {
                f.add(&o, "default");
            }
        }
        f
    }

    /// A ClusterQueue with one flavor `default-flavor` and a `cpu` quota.
    fn cq(name: &str, cohort: &str, quota: &str) -> String {
        format!("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  namespaceSelector: {{}}\n  cohort: {cohort}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default-flavor\n      resources:\n      - {{name: cpu, {quota}}}\n---\n")
    }

    fn reach(f: &KueueFacts, queue: &str) -> Quantity {
        f.reachable(queue, "default-flavor", "cpu")
    }

    /// Kueue's documented examples. Each expected figure is the one the cited page states.
    #[test]
    fn admission_arithmetic_matches_kueues_documented_examples() {
        let n = |v: i128| Quantity::from(v);
        let cases: Vec<(&str, String, &str, Quantity)> = vec![
            // site/content/en/docs/concepts/cluster_queue.md, "Borrowing example": with
            // team-b-cq idle, team-a-cq "can admit Workloads with resources adding up to
            // `12+9=21` CPUs".
            (
                "borrowing",
                cq("team-a-cq", "team-ab", "nominalQuota: 9") + &cq("team-b-cq", "team-ab", "nominalQuota: 12"),
                "team-a-cq",
                n(21),
            ),
            // cluster_queue.md, "BorrowingLimit": borrowingLimit 1 on team-a-cq: "adding up
            // to `9+1=10` CPUs".
            (
                "borrowing limit",
                cq("team-a-cq", "team-ab", "nominalQuota: 9, borrowingLimit: 1")
                    + &cq("team-b-cq", "team-ab", "nominalQuota: 12"),
                "team-a-cq",
                n(10),
            ),
            // Same section: "`team-b-cq` can use up to `12+9` CPUs".
            (
                "no borrowing limit on the other queue",
                cq("team-a-cq", "team-ab", "nominalQuota: 9, borrowingLimit: 1")
                    + &cq("team-b-cq", "team-ab", "nominalQuota: 12"),
                "team-b-cq",
                n(21),
            ),
            // cluster_queue.md, "LendingLimit": lendingLimit 1 on team-b-cq: team-a-cq "can
            // admit Workloads with resources adding up to `9+1=10` CPUs".
            (
                "lending limit",
                cq("team-a-cq", "team-ab", "nominalQuota: 9")
                    + &cq("team-b-cq", "team-ab", "nominalQuota: 12, lendingLimit: 1"),
                "team-a-cq",
                n(10),
            ),
            // Same section: "`team-b-cq` can use up to `9+12` CPUs".
            (
                "the lender keeps its own quota",
                cq("team-a-cq", "team-ab", "nominalQuota: 9")
                    + &cq("team-b-cq", "team-ab", "nominalQuota: 12, lendingLimit: 1"),
                "team-b-cq",
                n(21),
            ),
            // site/content/en/docs/concepts/cohort.md, "Configuring Quotas": a Cohort with 12
            // CPUs and a ClusterQueue with nominalQuota 0, which it "must" define to borrow.
            (
                "cohort quota",
                "apiVersion: kueue.x-k8s.io/v1alpha1\nkind: Cohort\nmetadata: {name: hello-cohort}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default-flavor\n      resources:\n      - {name: cpu, nominalQuota: 12}\n---\n".to_string()
                    + &cq("my-cluster-queue", "hello-cohort", "nominalQuota: 0"),
                "my-cluster-queue",
                n(12),
            ),
            // cluster_queue.md, "Cohort": without a cohort a ClusterQueue "cannot borrow quota
            // from any other ClusterQueue": its nominal quota (the first sample: 9 CPUs).
            (
                "no cohort",
                cq("cluster-queue", "\"\"", "nominalQuota: 9") + &cq("other", "x", "nominalQuota: 12"),
                "cluster-queue",
                n(9),
            ),
        ];
        for (what, text, queue, want) in cases {
            assert_eq!(reach(&facts(&text), queue), want, "{what}");
        }
    }

    #[test]
    fn hierarchical_cohorts_lend_up_the_tree_within_limits() {
        // root (4 CPUs) <- org (borrowingLimit 2) <- team (5 CPUs); a sibling queue with 6.
        let text = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: root}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default-flavor\n      resources: [{name: cpu, nominalQuota: 4}]\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: org}\nspec:\n  parentName: root\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default-flavor\n      resources: [{name: cpu, nominalQuota: 0, borrowingLimit: 2}]\n---\n".to_string()
            + &cq("team", "org", "nominalQuota: 5")
            + &cq("sibling", "root", "nominalQuota: 6");
        let f = facts(&text);
        // team: its 5 + org's subtree (5) capped by org's limit: 5 + 2 = 7.
        assert_eq!(reach(&f, "team"), Quantity::from(7));
        // sibling: 6 + root's 4 + team's 5 lent up through org = 15.
        assert_eq!(reach(&f, "sibling"), Quantity::from(15));
        // A flavor the queue does not define: nothing, whatever the cohort has.
        assert_eq!(f.reachable("team", "other-flavor", "cpu"), Quantity::ZERO);
    }

    #[test]
    fn selectors_say_unknown_unless_decided() {
        let sel = Selector {
            match_labels: [("team".to_string(), "a".to_string())].into(),
            expressions: vec![],
        };
        let mut f = KueueFacts::default();
        assert_eq!(sel.matches(|k| f.namespace_label("ml", k)), None);
        f.namespaces
            .insert("ml".into(), [("team".to_string(), "b".to_string())].into());
        assert_eq!(sel.matches(|k| f.namespace_label("ml", k)), Some(false));
        let by_name = Selector {
            match_labels: [(NAMESPACE_NAME_LABEL.to_string(), "x".to_string())].into(),
            expressions: vec![],
        };
        assert_eq!(by_name.matches(|k| f.namespace_label("y", k)), Some(false));
        assert_eq!(Selector::default().matches(|_| None), Some(true));
    }
}
