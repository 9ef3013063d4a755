//! GPU001–GPU005: the API server's rules for extended resources, resource names, placeholders.

use super::{container_label, Context, Hit, Rule};
use crate::edit::resources::{rename_resource, set_quantity, Side};
use crate::edit::Applicability;
use crate::k8s::gpu::{is_placeholder, GpuName};
use crate::k8s::workload::{Container, Workload};
use crate::quantity::Quantity;
use crate::source::yaml::{Node, Value};

/// A quantity as written, judged.
pub(crate) enum Judged {
    Placeholder,
    Invalid(String),
    Valid(Quantity),
}

pub(crate) fn judge(node: &Node) -> Judged {
    let text = match &node.value {
        Value::Scalar(s) => s.text.trim(),
        _ => return Judged::Invalid("it is not a scalar".into()),
    };
    if node.is_null() || text.is_empty() {
        return Judged::Invalid("it is empty".into());
    }
    if is_placeholder(text) {
        return Judged::Placeholder;
    }
    match text.parse::<Quantity>() {
        Ok(q) => Judged::Valid(q),
        Err(e) => Judged::Invalid(e.to_string()),
    }
}

/// What to do about a placeholder, by who would have filled it in.
fn placeholder_help(node: &Node) -> &'static str {
    let text = node.text().unwrap_or_default();
    if text.contains("${") {
        "a Flux variable: gpulint substitutes it as Flux does when a Flux Kustomization with \
         `spec.postBuild` applies this file (lint from the repository's root so it sees \
         `clusters/<name>/`); none does, so the cluster would get the text itself and reject it"
    } else if text.contains("{{") {
        "a template left in a manifest: lint the rendered manifests (`gpulint` renders the \
         charts it finds, or pipe `helm template … | gpulint -`)"
    } else {
        "neither Kubernetes (which expands `$(VAR)` in command, args and env only) nor Flux \
         (which substitutes `${VAR}` only) fills it in: write the number"
    }
}

/// A GPU count must be a whole number >= 0.
fn judge_gpu(node: &Node) -> Judged {
    match judge(node) {
        Judged::Valid(q) if q.is_negative() => Judged::Invalid("it is negative".into()),
        Judged::Valid(q) if !q.is_whole() => {
            Judged::Invalid("devices cannot be split: it must be a whole number".into())
        }
        other => other,
    }
}

pub(crate) fn scalar_style(node: &Node) -> crate::source::yaml::ScalarStyle {
    node.as_scalar()
        .map_or(crate::source::yaml::ScalarStyle::Plain, |s| s.style)
}

fn quoted(node: &Node) -> String {
    match node.text() {
        Some(t) => format!("`{t}`"),
        None => "an empty value".to_string(),
    }
}

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    for c in &w.containers {
        check_names(cx, c, hits);
        check_counts(cx, c, hits);
        check_spark(cx, c, hits);
    }
}

fn unknown_name_hit(cx: &Context, c: &Container, name: &str, key: &Node) -> Hit {
    let suggestion = cx.gpu_names.suggest(name);
    let message = format!(
        "`{name}` in {} looks like a GPU resource, but no device plugin advertises it: the pod \
         stays Pending",
        container_label(c)
    );
    let label = match &suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => "unknown GPU resource".to_string(),
    };
    let fix = suggestion
        .as_deref()
        .filter(|s| !s.contains('<'))
        .and_then(|to| rename_resource(&cx.target, c, name, to));
    Hit::new(Rule::GpuResourceUnknown, key.span, message, label)
        .with_fix(fix)
        .help(
            "use a known name (nvidia.com/gpu, nvidia.com/mig-<g>g.<mem>gb, amd.com/gpu, \
             gpu.intel.com/i915, gpu.intel.com/xe) or add yours to `gpu_resources` in .gpulint.yaml",
        )
        .container(c)
}

fn check_names(cx: &Context, c: &Container, hits: &mut Vec<Hit>) {
    let r = &c.resources;
    for q in r.requests.entries.iter().chain(&r.limits.entries) {
        if cx.gpu_names.classify(q.name) == GpuName::Unknown {
            hits.push(unknown_name_hit(cx, c, q.name, q.key));
        }
    }
}

fn check_counts(cx: &Context, c: &Container, hits: &mut Vec<Hit>) {
    let r = &c.resources;
    for name in r.names() {
        if !cx.gpu_names.is_gpu(name) {
            continue;
        }
        let request = r.requests.get(name);
        let limit = r.limits.get(name);
        let mut valid = Vec::new();
        let mut unresolved = false;
        for q in [request, limit].into_iter().flatten() {
            match judge_gpu(q.value) {
                Judged::Valid(v) => valid.push(Some(v)),
                Judged::Placeholder => {
                    valid.push(None);
                    if !unresolved {
                        unresolved = true;
                        hits.push(
                            Hit::new(
                                Rule::GpuQuantityUnresolved,
                                q.value.span,
                                format!(
                                    "not checked: `{name}` of {} is an unresolved placeholder {}",
                                    container_label(c),
                                    quoted(q.value)
                                ),
                                "unresolved placeholder".into(),
                            )
                            .help(placeholder_help(q.value))
                            .container(c),
                        );
                    }
                }
                Judged::Invalid(why) => {
                    valid.push(None);
                    hits.push(
                        Hit::new(
                            Rule::GpuQuantityInvalid,
                            q.value.span,
                            format!(
                                "`{name}` of {} is {}, which is not a valid GPU count: {why}",
                                container_label(c),
                                quoted(q.value)
                            ),
                            "not a whole number of GPUs".into(),
                        )
                        .help("GPUs are requested as whole devices: use 1, 2, 4, … (or a MIG profile or a shared GPU resource for a fraction)")
                        .container(c),
                    );
                }
            }
        }
        match (request, limit) {
            (Some(req), None) => {
                let value = req.value.text().unwrap_or_default();
                let fix = match valid.first() {
                    Some(Some(_)) => set_quantity(
                        &cx.target,
                        c,
                        Side::Limits,
                        name,
                        value,
                        scalar_style(req.value),
                        Applicability::Safe,
                    ),
                    _ => None,
                };
                hits.push(
                    Hit::new(
                        Rule::GpuLimitMissing,
                        req.key.span,
                        format!(
                            "`{name}` is requested ({value}) by {} but has no limit: the API \
                             server rejects extended-resource requests without a limit",
                            container_label(c)
                        ),
                        "request without a limit".into(),
                    )
                    .help(format!(
                        "add `limits: {{{name}: {value}}}` (or set it in limits only)"
                    ))
                    .container(c)
                    .with_fix(fix),
                );
            }
            (Some(req), Some(lim)) => {
                if let [Some(a), Some(b)] = valid.as_slice() {
                    if a != b {
                        let (rv, lv) = (
                            req.value.text().unwrap_or_default(),
                            lim.value.text().unwrap_or_default(),
                        );
                        hits.push(
                            Hit::new(
                                Rule::GpuRequestLimitMismatch,
                                req.value.span,
                                format!(
                                    "`{name}` request ({rv}) differs from its limit ({lv}) in {}: \
                                     the API server rejects it, extended resources must have \
                                     requests equal to limits",
                                    container_label(c)
                                ),
                                format!("request {rv} != limit {lv}"),
                            )
                            .help(format!("set the request to the limit ({lv}), or drop the request: it defaults to the limit"))
                            .container(c)
                            .with_fix(set_quantity(
                                &cx.target,
                                c,
                                Side::Requests,
                                name,
                                lv,
                                scalar_style(req.value),
                                Applicability::Safe,
                            )),
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

fn check_spark(cx: &Context, c: &Container, hits: &mut Vec<Hit>) {
    let Some(spark) = &c.spark else { return };
    if let Some(name_node) = spark.gpu_name {
        if let Some(name) = name_node.text() {
            if cx.gpu_names.classify(name) == GpuName::Unknown {
                hits.push(unknown_name_hit(cx, c, name, name_node));
            }
        }
    }
    if let Some(q) = spark.gpu_quantity {
        match judge_gpu(q) {
            Judged::Invalid(why) => hits.push(
                Hit::new(
                    Rule::GpuQuantityInvalid,
                    q.span,
                    format!(
                        "Spark GPU quantity {} is not a valid GPU count: {why}",
                        quoted(q)
                    ),
                    "not a whole number of GPUs".into(),
                )
                .container(c),
            ),
            Judged::Placeholder => hits.push(
                Hit::new(
                    Rule::GpuQuantityUnresolved,
                    q.span,
                    format!(
                        "not checked: Spark GPU quantity {} is an unresolved placeholder",
                        quoted(q)
                    ),
                    "unresolved placeholder".into(),
                )
                .container(c),
            ),
            Judged::Valid(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::{deployment, rules_hit};

    #[test]
    fn a_request_without_a_limit_is_gpu001() {
        let hits = rules_hit(&deployment(
            "          requests: {nvidia.com/gpu: 1, cpu: 4, memory: 16Gi}\n          limits: {cpu: 4, memory: 16Gi}\n",
        ));
        assert_eq!(hits, ["GPU001 nvidia.com/gpu"]);
    }

    #[test]
    fn a_request_different_from_the_limit_is_gpu002() {
        let hits = rules_hit(&deployment(
            "          requests: {nvidia.com/gpu: 2, cpu: 4, memory: 16Gi}\n          limits: {nvidia.com/gpu: 1, cpu: 4, memory: 16Gi}\n",
        ));
        assert_eq!(hits, ["GPU002 2"]);
    }

    #[test]
    fn equal_quantities_in_other_spellings_are_equal() {
        let hits = rules_hit(&deployment(
            "          requests: {nvidia.com/gpu: \"1\", cpu: 4, memory: 16Gi}\n          limits: {nvidia.com/gpu: 1000m, cpu: 4, memory: 16Gi}\n",
        ));
        assert_eq!(hits, Vec::<String>::new());
    }

    #[test]
    fn fractional_empty_negative_and_garbage_counts_are_gpu003() {
        for bad in ["0.5", "500m", "-1", "\"\"", "lots"] {
            let hits = rules_hit(&deployment(&format!(
                "          limits: {{nvidia.com/gpu: {bad}, cpu: 4, memory: 16Gi}}\n"
            )));
            assert_eq!(hits, [format!("GPU003 {bad}")], "{bad}");
        }
    }

    #[test]
    fn placeholders_are_reported_once_as_unchecked() {
        let hits = rules_hit(&deployment(
            "          requests: {nvidia.com/gpu: \"${GPUS}\", cpu: 4, memory: 16Gi}\n          limits: {nvidia.com/gpu: \"${GPUS}\", cpu: 4, memory: 16Gi}\n",
        ));
        assert_eq!(hits, ["GPU005 \"${GPUS}\""]);
    }

    #[test]
    fn unknown_gpu_names_are_gpu004() {
        let hits = rules_hit(&deployment(
            "          limits: {nvidia.com/gpus: 1, cpu: 4, memory: 16Gi}\n",
        ));
        assert_eq!(hits, ["GPU004 nvidia.com/gpus"]);
    }

    #[test]
    fn a_guaranteed_gpu_pod_is_clean() {
        let hits = rules_hit(&deployment(
            "          requests: {nvidia.com/gpu: 1, cpu: 4, memory: 16Gi}\n          limits: {nvidia.com/gpu: 1, cpu: 4, memory: 16Gi}\n",
        ));
        assert_eq!(hits, Vec::<String>::new());
    }
}
