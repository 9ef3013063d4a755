//! KUE001: GPU batch workloads must name a Kueue queue where the repo uses Kueue.

use super::{is_gpu_container, Context, Hit};
use crate::k8s::workload::Workload;

pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// Long-running kinds Kueue also admits through its integrations (besides batch kinds).
const KUEUE_SERVING_KINDS: &[&str] = &["RayCluster", "LeaderWorkerSet"];

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let queued = w.batch || KUEUE_SERVING_KINDS.contains(&w.object.id.kind.as_str());
    if !queued || !w.containers.iter().any(|c| is_gpu_container(cx, c)) {
        return;
    }
    let namespace = w.object.id.namespace.as_deref().unwrap_or("default");
    let queues = cx.facts.local_queues.get(namespace);
    if queues.is_none() && !cx.kueue_required {
        return;
    }
    // Kueue (LocalQueueDefaulting, on by default since v0.12) puts unlabelled workloads into a
    // LocalQueue named `default` when the namespace has one.
    if queues.is_some_and(|q| q.contains("default")) {
        return;
    }
    // CronJobs carry the label on the Job template; Kueue reads it from the Job.
    let labelled = w.object.label(QUEUE_LABEL).is_some()
        || w.object
            .node
            .get_path(&["spec", "jobTemplate", "metadata", "labels"])
            .and_then(|l| l.get_str(QUEUE_LABEL))
            .is_some();
    if labelled {
        return;
    }
    let span = w
        .object
        .node
        .entry("metadata")
        .map(|e| e.key.span)
        .or_else(|| w.object.node.entry("kind").map(|e| e.value.span))
        .unwrap_or(w.object.node.span.at_start());
    let why = match queues {
        Some(q) => format!(
            "the repo defines LocalQueue {} in namespace `{namespace}`",
            q.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "the config requires Kueue (`kueue: {required: true}`)".to_string(),
    };
    hits.push(
        Hit::new(
            "KUE001",
            span,
            format!(
                "GPU {} `{}` has no `{QUEUE_LABEL}` label but {why}: it bypasses quota and fair sharing",
                w.object.id.kind,
                w.object.id.name.as_deref().unwrap_or("<unnamed>")
            ),
            "no queue-name label".into(),
        )
        .help(format!("add `metadata.labels.{QUEUE_LABEL}: <queue>`")),
    );
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::run;
    use crate::rules::RepoFacts;

    const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: ml\nspec:\n  template:\n    spec:\n      containers:\n      - name: t\n        resources: {limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}\n";

    fn facts(ns: &str) -> RepoFacts {
        let mut f = RepoFacts::default();
        f.local_queues
            .entry(ns.into())
            .or_default()
            .insert("team-a".into());
        f
    }

    #[test]
    fn unlabelled_gpu_job_in_a_kueue_namespace() {
        let hits = run(JOB, &facts("ml"), false);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, "KUE001");
        assert!(hits[0].2.contains("`team-a`"), "{}", hits[0].2);
    }

    #[test]
    fn other_namespaces_and_labelled_jobs_are_fine() {
        assert!(run(JOB, &facts("other"), false).is_empty());
        let labelled = JOB.replace(
            "  namespace: ml\n",
            "  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: team-a}\n",
        );
        assert!(run(&labelled, &facts("ml"), false).is_empty());
    }

    #[test]
    fn a_default_local_queue_takes_unlabelled_workloads() {
        let mut f = facts("ml");
        f.local_queues
            .entry("ml".into())
            .or_default()
            .insert("default".into());
        assert!(run(JOB, &f, false).is_empty());
    }

    #[test]
    fn config_can_require_kueue_everywhere() {
        assert_eq!(run(JOB, &RepoFacts::default(), true).len(), 1);
    }
}
