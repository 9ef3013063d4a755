//! SHM001–SHM002: memory-backed emptyDir volumes (the usual /dev/shm) in GPU pods. tmpfs pages
//! count against the memory limit of the container that writes them.

use super::gpu::{judge, Judged};
use super::{container_label, is_gpu_container, Context, Hit, Rule};
use crate::k8s::workload::Workload;
use crate::source::yaml::Node;

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    for (index, pod) in w.pods.iter().enumerate() {
        let containers: Vec<_> = w
            .containers
            .iter()
            .filter(|c| c.pod == Some(index))
            .collect();
        if !containers.iter().any(|c| is_gpu_container(cx, c)) {
            continue;
        }
        let volumes = pod
            .spec
            .get("volumes")
            .and_then(Node::as_seq)
            .unwrap_or_default();
        for volume in volumes {
            let Some(empty_dir) = volume.get("emptyDir") else {
                continue;
            };
            let Some(medium) = empty_dir.get("medium") else {
                continue;
            };
            if medium.text() != Some("Memory") {
                continue;
            }
            let name = volume.get_str("name").unwrap_or("<unnamed>");
            let Some(size) = empty_dir.get("sizeLimit").filter(|s| !s.is_null()) else {
                hits.push(
                    Hit::new(
                        Rule::ShmSizeLimitMissing,
                        medium.span,
                        format!(
                            "memory-backed emptyDir `{name}` has no sizeLimit: what is written to it \
                             counts against the container's memory limit and can grow until the \
                             container is OOMKilled"
                        ),
                        "tmpfs without sizeLimit".into(),
                    )
                    .help("set `sizeLimit` (e.g. 8Gi) well below the memory limit of the containers that mount it"),
                );
                continue;
            };
            let Judged::Valid(size_q) = judge(size) else {
                continue;
            };
            for c in &containers {
                let mounts = c
                    .node
                    .get("volumeMounts")
                    .and_then(Node::as_seq)
                    .unwrap_or_default();
                if !mounts.iter().any(|m| m.get_str("name") == Some(name)) {
                    continue;
                }
                let Some(limit) = c.resources.limits.get("memory") else {
                    continue;
                };
                let Judged::Valid(limit_q) = judge(limit.value) else {
                    continue;
                };
                if size_q >= limit_q {
                    hits.push(
                        Hit::new(
                            Rule::ShmSizeLimitExceedsMemoryLimit,
                            size.span,
                            format!(
                                "memory-backed emptyDir `{name}` may hold {} but {} mounting it is \
                                 limited to {} of memory: filling it alone OOM-kills the container",
                                size.text().unwrap_or_default(),
                                container_label(c),
                                limit.value.text().unwrap_or_default()
                            ),
                            "sizeLimit >= memory limit".into(),
                        )
                        .help("lower sizeLimit, or raise the memory limit to cover shm plus the process's own memory")
                        .container(c),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::rules_hit;

    fn pod(volume: &str, limit: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: train\n    volumeMounts: [{{name: shm, mountPath: /dev/shm}}]\n    resources:\n      limits: {{nvidia.com/gpu: 1, cpu: 4, memory: {limit}}}\n  volumes:\n  - name: shm\n    emptyDir: {volume}\n"
        )
    }

    #[test]
    fn shm_without_size_limit() {
        assert_eq!(
            rules_hit(&pod("{medium: Memory}", "16Gi")),
            ["SHM001 Memory"]
        );
    }

    #[test]
    fn shm_as_big_as_the_limit() {
        assert_eq!(
            rules_hit(&pod("{medium: Memory, sizeLimit: 16Gi}", "16Gi")),
            ["SHM002 16Gi"]
        );
        assert_eq!(
            rules_hit(&pod("{medium: Memory, sizeLimit: 4Gi}", "16Gi")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn disk_backed_empty_dirs_are_fine() {
        assert_eq!(rules_hit(&pod("{}", "16Gi")), Vec::<String>::new());
    }
}
