//! The Prometheus client against a REAL Prometheus (Debian's package, started by
//! tests/integration/support/prometheus.rs on backfilled OpenMetrics), plus tiny local TCP servers for the
//! transport cases (dead, slow, token, warnings).
//!
//! If `prometheus`/`promtool` are missing these tests FAIL, asking to run scripts/test (which
//! installs them), unless GPULINT_SKIP_PROMETHEUS=1.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::support::fake_http::{dead_url, RecordingServer, SilentServer};
use crate::support::openmetrics::{labels, OpenMetrics};
use crate::support::prometheus::{backfill, copy_blocks, tools, Prometheus};
use gpulint::metrics::prometheus::{collect, Collected, PrometheusError, PrometheusOptions};
use gpulint::metrics::usage::{ContainerKey, GpuMemory, GpuUtilization, KvCache, Stats, Usage};

use crate::support::common::{gpulint, output};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;
const HOUR: i64 = 3600;
const DAY: i64 = 86_400;
const WINDOW: &str = "3d";
const FILLERS: usize = 40;

// ---------------------------------------------------------------------------------------
// The simulated cluster: what is written to Prometheus, and what the client must report.

struct Gpu {
    index: u32,
    used_base: f64,
    used_amp: f64,
    capacity: f64,
    /// DCGM_FI_DEV_GPU_UTIL, percent (base, amplitude).
    util_pct: Option<(f64, f64)>,
    /// DCGM_FI_PROF_GR_ENGINE_ACTIVE, fraction (MIG).
    engine: Option<(f64, f64)>,
    /// Series carry exported_namespace/exported_pod/exported_container.
    exported: bool,
    /// DCGM's modelName label.
    model: &'static str,
}

struct Ctr {
    name: &'static str,
    mem_base: f64,
    mem_amp: f64,
    cpu_rate: f64,
    gpus: Vec<Gpu>,
    /// Times of OOM kills (restart counter +1, last terminated reason OOMKilled from then on).
    ooms: Vec<i64>,
    /// The memory limit in bytes (kube_pod_container_resource_limits), if any.
    mem_limit: Option<f64>,
}

fn ctr(name: &'static str, mem_base: f64, mem_amp: f64, cpu_rate: f64) -> Ctr {
    Ctr {
        name,
        mem_base,
        mem_amp,
        cpu_rate,
        gpus: Vec::new(),
        ooms: Vec::new(),
        mem_limit: None,
    }
}

struct Pod {
    ns: String,
    name: String,
    /// kube_pod_owner's owner (kind, name); "<none>" for a bare pod.
    owner: (String, String),
    /// The workload the test expects the pod to belong to.
    workload: (String, String),
    from: i64,
    to: i64,
    ctrs: Vec<Ctr>,
    /// A serving engine's KV-cache series (metric name, wave), labelled by namespace and pod.
    kv: Option<(&'static str, (f64, f64))>,
}

struct Owner {
    ns: String,
    name: String,
    kind: String,
    owner: String,
    from: i64,
    to: i64,
}

struct Cluster {
    start: i64,
    end: i64,
    pods: Vec<Pod>,
    replicasets: Vec<Owner>,
    jobs: Vec<Owner>,
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

fn s(v: &str) -> String {
    v.to_string()
}

#[allow(clippy::too_many_arguments)]
fn pod(
    ns: &str,
    name: &str,
    owner: (&str, &str),
    workload: (&str, &str),
    from: i64,
    to: i64,
    ctrs: Vec<Ctr>,
) -> Pod {
    Pod {
        ns: s(ns),
        name: s(name),
        owner: (s(owner.0), s(owner.1)),
        workload: (s(workload.0), s(workload.1)),
        from,
        to,
        ctrs,
        kv: None,
    }
}

fn owner(ns: &str, name: &str, kind: &str, owner: &str, from: i64, to: i64) -> Owner {
    Owner {
        ns: s(ns),
        name: s(name),
        kind: s(kind),
        owner: s(owner),
        from,
        to,
    }
}

impl Cluster {
    /// Two days of data ending a few minutes ago, on 10-minute boundaries.
    fn new() -> Cluster {
        let end = (now_secs() - 600) / 600 * 600;
        let t0 = end - 2 * DAY;
        let mut c = Cluster {
            start: t0,
            end,
            pods: Vec::new(),
            replicasets: Vec::new(),
            jobs: Vec::new(),
        };
        let (old_rs, new_rs) = ("frontend-6d4cf56db6", "frontend-7b9f8c6d5");
        let dep = ("Deployment", "frontend");
        // Deployment rollout: old ReplicaSet (2 pods) on day 1, new ReplicaSet (1 pod) on day 2.
        for p in ["aaaaa", "bbbbb"] {
            c.pods.push(pod(
                "web",
                &format!("{old_rs}-{p}"),
                ("ReplicaSet", old_rs),
                dep,
                t0,
                t0 + DAY,
                vec![
                    ctr("app", 200.0 * MIB, 50.0 * MIB, 0.25),
                    ctr("istio-proxy", 40.0 * MIB, 10.0 * MIB, 0.05),
                ],
            ));
        }
        c.pods.push(pod(
            "web",
            &format!("{new_rs}-ccccc"),
            ("ReplicaSet", new_rs),
            dep,
            t0 + DAY,
            end,
            vec![
                ctr("app", 300.0 * MIB, 100.0 * MIB, 0.5),
                ctr("istio-proxy", 60.0 * MIB, 5.0 * MIB, 0.04),
            ],
        ));
        c.replicasets
            .push(owner("web", old_rs, "Deployment", "frontend", t0, t0 + DAY));
        c.replicasets.push(owner(
            "web",
            new_rs,
            "Deployment",
            "frontend",
            t0 + DAY,
            end,
        ));
        // A Deployment whose ReplicaSet has no kube_replicaset_owner series (metric dropped):
        // attributed by name, with a note.
        c.pods.push(pod(
            "web",
            "legacy-55d9c8f7b-qwert",
            ("ReplicaSet", "legacy-55d9c8f7b"),
            ("Deployment", "legacy"),
            t0 + DAY,
            t0 + DAY + 4 * HOUR,
            vec![ctr("app", 50.0 * MIB, 5.0 * MIB, 0.1)],
        ));
        // A bare pod.
        c.pods.push(pod(
            "web",
            "debug-shell",
            ("<none>", "<none>"),
            ("Pod", "debug-shell"),
            t0 + 10 * HOUR,
            t0 + 12 * HOUR,
            vec![ctr("shell", 10.0 * MIB, MIB, 0.01)],
        ));
        // CronJob -> Job -> Pod, twice; and a bare Job.
        for (job, pod_name, from, base, amp, cpu) in [
            (
                "nightly-29400000",
                "nightly-29400000-q7x2m",
                t0 + 2 * HOUR,
                800.0,
                200.0,
                2.0,
            ),
            (
                "nightly-29401440",
                "nightly-29401440-z8k4n",
                t0 + 26 * HOUR,
                1200.0,
                300.0,
                1.5,
            ),
        ] {
            c.pods.push(pod(
                "batch",
                pod_name,
                ("Job", job),
                ("CronJob", "nightly"),
                from,
                from + 2 * HOUR,
                vec![ctr("etl", base * MIB, amp * MIB, cpu)],
            ));
            c.jobs.push(owner(
                "batch",
                job,
                "CronJob",
                "nightly",
                from,
                from + 2 * HOUR,
            ));
        }
        c.pods.push(pod(
            "batch",
            "migrate-5tq8w",
            ("Job", "migrate"),
            ("Job", "migrate"),
            t0 + HOUR,
            t0 + 2 * HOUR,
            vec![{
                // An OOMKilled Job container with a 128Mi limit.
                let mut m = ctr("migrate", 100.0 * MIB, 20.0 * MIB, 0.3);
                m.ooms = vec![t0 + HOUR + 1800];
                m.mem_limit = Some(128.0 * MIB);
                m
            }],
        ));
        c.jobs.push(owner(
            "batch",
            "migrate",
            "<none>",
            "<none>",
            t0 + HOUR,
            t0 + 2 * HOUR,
        ));
        // StatefulSet with two OOM kills in db-1; a DaemonSet.
        let sts = ("StatefulSet", "db");
        c.pods.push(pod(
            "data",
            "db-0",
            sts,
            sts,
            t0,
            end,
            vec![{
                // Rolled out later with a larger limit: not the limit the kills hit.
                let mut db0 = ctr("postgres", 2.0 * GIB, 512.0 * MIB, 1.0);
                db0.mem_limit = Some(4.0 * GIB);
                db0
            }],
        ));
        let mut db1 = ctr("postgres", 1.5 * GIB, GIB, 0.8);
        db1.ooms = vec![t0 + 30 * HOUR, t0 + 36 * HOUR];
        db1.mem_limit = Some(3.0 * GIB);
        c.pods
            .push(pod("data", "db-1", sts, sts, t0, end, vec![db1]));
        let ds = ("DaemonSet", "node-agent");
        for (p, cpu) in [("node-agent-abcde", 0.02), ("node-agent-fghij", 0.03)] {
            c.pods.push(pod(
                "data",
                p,
                ds,
                ds,
                t0,
                end,
                vec![ctr("agent", 30.0 * MIB, 5.0 * MIB, cpu)],
            ));
        }
        // A PyTorchJob owning its pods directly, GPUs seen through dcgm's exported_* labels.
        let pt = ("PyTorchJob", "train");
        let gpu = |index, used_base, used_amp, util: (f64, f64)| Gpu {
            index,
            used_base,
            used_amp,
            capacity: 81920.0,
            util_pct: Some(util),
            engine: None,
            exported: true,
            model: "NVIDIA A100-SXM4-80GB",
        };
        let mut master = ctr("pytorch", 8.0 * GIB, 2.0 * GIB, 4.0);
        master.gpus.push(gpu(0, 30000.0, 10000.0, (60.0, 30.0)));
        let mut worker = ctr("pytorch", 6.0 * GIB, GIB, 3.5);
        worker.gpus.push(gpu(1, 50000.0, 20000.0, (70.0, 25.0)));
        worker.gpus.push(gpu(2, 20000.0, 5000.0, (40.0, 10.0)));
        c.pods.push(pod(
            "ml",
            "train-master-0",
            pt,
            pt,
            t0 + 6 * HOUR,
            end,
            vec![master],
        ));
        c.pods.push(pod(
            "ml",
            "train-worker-0",
            pt,
            pt,
            t0 + 6 * HOUR,
            end,
            vec![worker],
        ));
        // A RayCluster on a MIG slice: only DCGM_FI_PROF_GR_ENGINE_ACTIVE, plain labels.
        let mut head = ctr("ray-head", 4.0 * GIB, GIB, 1.0);
        head.gpus.push(Gpu {
            index: 3,
            used_base: 4000.0,
            used_amp: 2000.0,
            capacity: 10240.0,
            util_pct: None,
            engine: Some((0.3, 0.4)),
            exported: false,
            model: "NVIDIA A100-SXM4-80GB",
        });
        let ray = ("RayCluster", "ray");
        c.pods
            .push(pod("ml", "ray-head-x2x2x", ray, ray, t0, end, vec![head]));
        // vLLM on 4 H100s per pod, two pods: some GPUs idle (engine activity under 5%, although
        // their coarse utilisation says 30-40%), KV cache under the current and the older metric
        // name, labelled by pod only.
        let vllm = ("Deployment", "llm");
        let h100 = |index, engine: (f64, f64)| Gpu {
            index,
            used_base: 70000.0,
            used_amp: 1000.0,
            capacity: 81559.0,
            util_pct: Some((30.0, 10.0)),
            engine: Some(engine),
            exported: false,
            model: "NVIDIA H100 80GB HBM3",
        };
        for (pod_name, engines, kv) in [
            (
                "llm-7c9d8f6b5-aaaaa",
                [(0.4, 0.3), (0.35, 0.3), (0.01, 0.02), (0.0, 0.03)],
                ("vllm:kv_cache_usage_perc", (0.2, 0.25)),
            ),
            (
                "llm-7c9d8f6b5-bbbbb",
                [(0.5, 0.2), (0.2, 0.1), (0.06, 0.01), (0.02, 0.0)],
                ("vllm:gpu_cache_usage_perc", (0.3, 0.3)),
            ),
        ] {
            let mut c_vllm = ctr("vllm", 12.0 * GIB, GIB, 2.0);
            for (i, e) in engines.into_iter().enumerate() {
                c_vllm.gpus.push(h100(10 + i as u32, e));
            }
            let mut p = pod(
                "serve",
                pod_name,
                ("ReplicaSet", "llm-7c9d8f6b5"),
                vllm,
                t0 + 2 * HOUR,
                end,
                vec![c_vllm],
            );
            p.kv = Some(kv);
            c.pods.push(p);
        }
        c.replicasets.push(owner(
            "serve",
            "llm-7c9d8f6b5",
            "Deployment",
            "llm",
            t0,
            end,
        ));
        // SGLang on one H100: its KV cache is `sglang:token_usage`.
        let mut c_sgl = ctr("sglang", 10.0 * GIB, GIB, 1.0);
        c_sgl.gpus.push(h100(20, (0.2, 0.1)));
        let mut p = pod(
            "serve",
            "sgl-5d6f7c8b9-ccccc",
            ("ReplicaSet", "sgl-5d6f7c8b9"),
            ("Deployment", "sgl"),
            t0 + 4 * HOUR,
            end,
            vec![c_sgl],
        );
        p.kv = Some(("sglang:token_usage", (0.1, 0.5)));
        c.pods.push(p);
        c.replicasets.push(owner(
            "serve",
            "sgl-5d6f7c8b9",
            "Deployment",
            "sgl",
            t0,
            end,
        ));
        // NVIDIA NIM on one H100: its KV cache is `gpu_cache_usage_perc` (no prefix), at
        // /v1/metrics.
        let mut c_nim = ctr("nim", 10.0 * GIB, GIB, 1.0);
        c_nim.gpus.push(h100(21, (0.3, 0.1)));
        let mut p = pod(
            "serve",
            "nim-6c7d8e9f5-ddddd",
            ("ReplicaSet", "nim-6c7d8e9f5"),
            ("Deployment", "nim"),
            t0 + 4 * HOUR,
            end,
            vec![c_nim],
        );
        p.kv = Some(("gpu_cache_usage_perc", (0.2, 0.4)));
        c.pods.push(p);
        c.replicasets.push(owner(
            "serve",
            "nim-6c7d8e9f5",
            "Deployment",
            "nim",
            t0,
            end,
        ));
        // Fillers: many plain Deployments in two namespaces.
        for i in 0..FILLERS {
            let ns = filler_ns(i);
            let name = filler_name(i);
            let rs = format!("{name}-5f7d8b9c4");
            c.pods.push(pod(
                ns,
                &format!("{rs}-abcde"),
                ("ReplicaSet", &rs),
                ("Deployment", &name),
                t0,
                end,
                vec![ctr(
                    "app",
                    (64.0 + i as f64) * MIB,
                    16.0 * MIB,
                    0.1 + i as f64 / 100.0,
                )],
            ));
            c.replicasets
                .push(owner(ns, &rs, "Deployment", &name, t0, end));
        }
        c
    }

    fn write(&self) -> OpenMetrics {
        let mut om = OpenMetrics::new();
        let cl = ("cluster", "prod");
        let every = |from: i64, to: i64, step: i64| (from..=to).step_by(step as usize);
        for p in &self.pods {
            let uid = format!("uid-{}", p.name);
            let node = "node-1";
            om.add(
                "kube_pod_owner",
                &labels(&[
                    cl,
                    ("namespace", p.ns.as_str()),
                    ("pod", p.name.as_str()),
                    ("uid", uid.as_str()),
                    ("owner_kind", p.owner.0.as_str()),
                    ("owner_name", p.owner.1.as_str()),
                    (
                        "owner_is_controller",
                        if p.owner.0 == "<none>" {
                            "false"
                        } else {
                            "true"
                        },
                    ),
                ]),
                every(p.from, p.to, 300).map(|t| (t, 1.0)),
            );
            // The pod-level cgroup and the pause container: must be ignored.
            for pseudo in ["", "POD"] {
                om.add(
                    "container_memory_working_set_bytes",
                    &labels(&[
                        cl,
                        ("namespace", p.ns.as_str()),
                        ("pod", p.name.as_str()),
                        ("container", pseudo),
                        ("node", node),
                    ]),
                    every(p.from, p.to, 300).map(|t| (t, 64.0 * GIB)),
                );
            }
            for c in &p.ctrs {
                let cadv = labels(&[
                    cl,
                    ("namespace", p.ns.as_str()),
                    ("pod", p.name.as_str()),
                    ("container", c.name),
                    ("node", node),
                    ("id", format!("/kubepods/{uid}/{}", c.name).as_str()),
                ]);
                om.add(
                    "container_memory_working_set_bytes",
                    &cadv,
                    every(p.from, p.to, 300).map(|t| (t, mem_at(c, t))),
                );
                om.add(
                    "container_cpu_usage_seconds_total",
                    &cadv,
                    every(p.from, p.to, 120)
                        .map(|t| (t, 1000.0 + c.cpu_rate * (t - p.from) as f64)),
                );
                let ksm = labels(&[
                    cl,
                    ("namespace", p.ns.as_str()),
                    ("pod", p.name.as_str()),
                    ("uid", uid.as_str()),
                    ("container", c.name),
                ]);
                // Restarts: 1-minute resolution where an OOM happens, else 5 minutes.
                let step = if c.ooms.is_empty() { 300 } else { 60 };
                om.add(
                    "kube_pod_container_status_restarts_total",
                    &ksm,
                    every(p.from, p.to, step)
                        .map(|t| (t, c.ooms.iter().filter(|&&o| t >= o).count() as f64)),
                );
                if let Some(limit) = c.mem_limit {
                    let mut l = ksm.clone();
                    l.push((s("resource"), s("memory")));
                    l.push((s("unit"), s("byte")));
                    om.add(
                        "kube_pod_container_resource_limits",
                        &l,
                        every(p.from, p.to, 300).map(|t| (t, limit)),
                    );
                }
                if let Some(&o) = c.ooms.first() {
                    let mut l = ksm.clone();
                    l.push((s("reason"), s("OOMKilled")));
                    om.add(
                        "kube_pod_container_status_last_terminated_reason",
                        &l,
                        every(o, p.to, 60).map(|t| (t, 1.0)),
                    );
                }
                for g in &c.gpus {
                    let gpu_id = g.index.to_string();
                    let uuid = format!("GPU-{:08x}-test", g.index);
                    let device = format!("nvidia{}", g.index);
                    let mut l = labels(&[
                        cl,
                        ("gpu", gpu_id.as_str()),
                        ("UUID", uuid.as_str()),
                        ("device", device.as_str()),
                        ("modelName", g.model),
                        ("Hostname", "gpu-node-1"),
                    ]);
                    if g.exported {
                        l.extend(labels(&[
                            ("namespace", "gpu-operator"),
                            ("pod", "nvidia-dcgm-exporter-7xk2p"),
                            ("container", "nvidia-dcgm-exporter"),
                            ("exported_namespace", p.ns.as_str()),
                            ("exported_pod", p.name.as_str()),
                            ("exported_container", c.name),
                        ]));
                    } else {
                        l.extend(labels(&[
                            ("namespace", p.ns.as_str()),
                            ("pod", p.name.as_str()),
                            ("container", c.name),
                        ]));
                    }
                    let ts: Vec<i64> = every(p.from, p.to, 300).collect();
                    om.add(
                        "DCGM_FI_DEV_FB_USED",
                        &l,
                        ts.iter().map(|&t| (t, gpu_used_at(g, t))),
                    );
                    om.add(
                        "DCGM_FI_DEV_FB_FREE",
                        &l,
                        ts.iter().map(|&t| (t, g.capacity - gpu_used_at(g, t))),
                    );
                    if let Some(u) = g.util_pct {
                        om.add(
                            "DCGM_FI_DEV_GPU_UTIL",
                            &l,
                            ts.iter().map(|&t| (t, wave(u, t, 7, 20).round())),
                        );
                    }
                    if let Some(e) = g.engine {
                        om.add(
                            "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                            &l,
                            ts.iter().map(|&t| (t, wave(e, t, 7, 20))),
                        );
                    }
                }
            }
        }
        for p in &self.pods {
            if let Some((metric, w)) = p.kv {
                om.add(
                    metric,
                    &labels(&[
                        cl,
                        ("namespace", p.ns.as_str()),
                        ("pod", p.name.as_str()),
                        ("model_name", "meta-llama/Llama-3.1-70B-Instruct"),
                        ("engine", "0"),
                    ]),
                    (p.from..=p.to).step_by(300).map(|t| (t, kv_at(w, t))),
                );
            }
        }
        for (metric, name_label, owners) in [
            ("kube_replicaset_owner", "replicaset", &self.replicasets),
            ("kube_job_owner", "job_name", &self.jobs),
        ] {
            for o in owners {
                om.add(
                    metric,
                    &labels(&[
                        cl,
                        ("namespace", o.ns.as_str()),
                        (name_label, o.name.as_str()),
                        ("owner_kind", o.kind.as_str()),
                        ("owner_name", o.owner.as_str()),
                        (
                            "owner_is_controller",
                            if o.kind == "<none>" { "false" } else { "true" },
                        ),
                    ]),
                    every(o.from, o.to, 300).map(|t| (t, 1.0)),
                );
            }
        }
        om
    }

    fn key(&self, p: &Pod, c: &Ctr) -> ContainerKey {
        ContainerKey {
            cluster: None,
            namespace: p.ns.clone(),
            kind: p.workload.0.clone(),
            name: p.workload.1.clone(),
            container: c.name.to_string(),
        }
    }

    /// Every workload container of the scenario (fillers excluded).
    fn scenario_keys(&self) -> Vec<ContainerKey> {
        let mut keys: Vec<ContainerKey> = self
            .pods
            .iter()
            .filter(|p| !p.ns.starts_with("fill-"))
            .flat_map(|p| p.ctrs.iter().map(move |c| self.key(p, c)))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// What Prometheus must yield for each workload container, computed from the samples.
    fn expected(&self) -> BTreeMap<ContainerKey, Usage> {
        #[derive(Default)]
        struct Acc {
            mem: [Option<f64>; 3],
            cpu: Option<f64>,
            samples: u64,
            first: Option<i64>,
            last: Option<i64>,
            gpu: [Option<f64>; 3],
            util: [Option<f64>; 2],
            oom: u64,
            /// Largest limit of killed pods, and of all pods.
            limit_killed: Option<f64>,
            limit_any: Option<f64>,
            model: Option<String>,
            gpu_count: Option<u64>,
            gpus_used: Option<u64>,
            engine: [Option<f64>; 2],
            kv: [Option<f64>; 2],
        }
        let mut acc: BTreeMap<ContainerKey, Acc> = BTreeMap::new();
        let max = |slot: &mut Option<f64>, v: f64| *slot = Some(slot.map_or(v, |c: f64| c.max(v)));
        for p in &self.pods {
            let ts: Vec<i64> = (p.from..=p.to).step_by(300).collect();
            for c in &p.ctrs {
                let a = acc.entry(self.key(p, c)).or_default();
                let mem: Vec<f64> = ts.iter().map(|&t| mem_at(c, t)).collect();
                max(&mut a.mem[0], quantile(0.5, &mem));
                max(&mut a.mem[1], quantile(0.99, &mem));
                max(&mut a.mem[2], mem.iter().cloned().fold(f64::MIN, f64::max));
                max(&mut a.cpu, c.cpu_rate);
                a.samples += mem.len() as u64;
                let (f, l) = (ts[0], ts[ts.len() - 1]);
                a.first = Some(a.first.map_or(f, |x| x.min(f)));
                a.last = Some(a.last.map_or(l, |x| x.max(l)));
                a.oom += c.ooms.len() as u64;
                if let Some(l) = c.mem_limit {
                    max(&mut a.limit_any, l);
                    if !c.ooms.is_empty() {
                        max(&mut a.limit_killed, l);
                    }
                }
                if !c.gpus.is_empty() {
                    let busy = c
                        .gpus
                        .iter()
                        .filter(|g| {
                            let activity: Vec<f64> = match (g.engine, g.util_pct) {
                                (Some(e), _) => ts.iter().map(|&t| wave(e, t, 7, 20)).collect(),
                                (None, Some(u)) => ts
                                    .iter()
                                    .map(|&t| wave(u, t, 7, 20).round() / 100.0)
                                    .collect(),
                                (None, None) => vec![0.0],
                            };
                            activity.iter().sum::<f64>() / activity.len() as f64 >= 0.05
                        })
                        .count() as u64;
                    let n = c.gpus.len() as u64;
                    a.gpu_count = Some(a.gpu_count.map_or(n, |x| x.max(n)));
                    a.gpus_used = Some(a.gpus_used.map_or(busy, |x| x.max(busy)));
                    a.model = Some(c.gpus[0].model.to_string());
                    if let Some((_, w)) = p.kv {
                        let kv: Vec<f64> = ts.iter().map(|&t| kv_at(w, t)).collect();
                        max(&mut a.kv[0], quantile(0.99, &kv));
                        max(&mut a.kv[1], kv.iter().cloned().fold(f64::MIN, f64::max));
                    }
                }
                for g in &c.gpus {
                    if let Some(e) = g.engine {
                        let engine: Vec<f64> = ts.iter().map(|&t| wave(e, t, 7, 20)).collect();
                        max(
                            &mut a.engine[0],
                            engine.iter().sum::<f64>() / engine.len() as f64,
                        );
                        max(&mut a.engine[1], quantile(0.99, &engine));
                    }
                    let used: Vec<f64> = ts.iter().map(|&t| gpu_used_at(g, t)).collect();
                    max(&mut a.gpu[0], quantile(0.99, &used) * MIB);
                    max(
                        &mut a.gpu[1],
                        used.iter().cloned().fold(f64::MIN, f64::max) * MIB,
                    );
                    max(&mut a.gpu[2], g.capacity * MIB);
                    let util: Vec<f64> = match (g.util_pct, g.engine) {
                        (Some(u), _) => ts
                            .iter()
                            .map(|&t| wave(u, t, 7, 20).round() / 100.0)
                            .collect(),
                        (None, Some(e)) => ts.iter().map(|&t| wave(e, t, 7, 20)).collect(),
                        (None, None) => Vec::new(),
                    };
                    if !util.is_empty() {
                        max(&mut a.util[0], util.iter().sum::<f64>() / util.len() as f64);
                        max(&mut a.util[1], quantile(0.99, &util));
                    }
                }
            }
        }
        acc.into_iter()
            .map(|(k, a)| {
                let usage = Usage {
                    samples: Some(a.samples),
                    history_seconds: Some((a.last.unwrap_or(0) - a.first.unwrap_or(0)) as f64),
                    memory_bytes: Some(Stats {
                        p50: a.mem[0],
                        p99: a.mem[1],
                        max: a.mem[2],
                    }),
                    cpu_cores: Some(Stats {
                        p50: a.cpu,
                        p99: a.cpu,
                        max: a.cpu,
                    }),
                    gpu_memory_bytes: a.gpu[0].map(|_| GpuMemory {
                        p99: a.gpu[0],
                        max: a.gpu[1],
                        capacity: a.gpu[2],
                    }),
                    gpu_utilization: a.util[0].map(|_| GpuUtilization {
                        avg: a.util[0],
                        p99: a.util[1],
                    }),
                    oom_kills: Some(a.oom),
                    memory_limit_bytes: a.limit_killed.or(a.limit_any),
                    gpu_model: a.model,
                    gpu_count: a.gpu_count,
                    gpus_used: a.gpus_used,
                    gpu_engine_active: a.engine[0].map(|_| GpuUtilization {
                        avg: a.engine[0],
                        p99: a.engine[1],
                    }),
                    kv_cache_usage: a.kv[0].map(|_| KvCache {
                        p99: a.kv[0],
                        max: a.kv[1],
                    }),
                };
                (k, usage)
            })
            .collect()
    }
}

fn filler_ns(i: usize) -> &'static str {
    if i % 2 == 0 {
        "fill-a"
    } else {
        "fill-b"
    }
}

fn filler_name(i: usize) -> String {
    format!("svc-{i:02}")
}

fn filler_key(i: usize) -> ContainerKey {
    ContainerKey {
        cluster: None,
        namespace: filler_ns(i).to_string(),
        kind: "Deployment".into(),
        name: filler_name(i),
        container: "app".into(),
    }
}

/// base + amp * (one of `levels` evenly spaced steps, pseudo-randomly ordered over time).
fn wave((base, amp): (f64, f64), t: i64, mult: i64, levels: i64) -> f64 {
    let i = t / 300;
    base + amp * ((i * mult).rem_euclid(levels)) as f64 / (levels - 1) as f64
}

fn mem_at(c: &Ctr, t: i64) -> f64 {
    wave((c.mem_base, c.mem_amp), t, 37, 100).round()
}

fn kv_at(w: (f64, f64), t: i64) -> f64 {
    wave(w, t, 11, 40)
}

fn gpu_used_at(g: &Gpu, t: i64) -> f64 {
    wave((g.used_base, g.used_amp), t, 13, 50).round()
}

/// Prometheus' quantile: linear interpolation between closest ranks.
fn quantile(q: f64, vals: &[f64]) -> f64 {
    let mut v = vals.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = q * (v.len() as f64 - 1.0);
    let lo = rank.floor().max(0.0) as usize;
    let hi = (lo + 1).min(v.len() - 1);
    let w = rank - rank.floor();
    v[lo] * (1.0 - w) + v[hi] * w
}

// ---------------------------------------------------------------------------------------
// Comparing

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-3),
        _ => false,
    }
}

fn check_usage(key: &ContainerKey, got: &Usage, want: &Usage) -> Vec<String> {
    let mut errs = Vec::new();
    let mut cmp = |what: &str, g: Option<f64>, w: Option<f64>| {
        if !close(g, w) {
            errs.push(format!("{key:?} {what}: got {g:?}, want {w:?}"));
        }
    };
    let stats = |s: Option<Stats>| {
        let s = s.unwrap_or_default();
        [s.p50, s.p99, s.max]
    };
    for (i, n) in ["p50", "p99", "max"].iter().enumerate() {
        cmp(
            &format!("memory {n}"),
            stats(got.memory_bytes)[i],
            stats(want.memory_bytes)[i],
        );
        cmp(
            &format!("cpu {n}"),
            stats(got.cpu_cores)[i],
            stats(want.cpu_cores)[i],
        );
    }
    let gm = |g: Option<GpuMemory>| g.map(|g| [g.p99, g.max, g.capacity]).unwrap_or([None; 3]);
    for (i, n) in ["p99", "max", "capacity"].iter().enumerate() {
        cmp(
            &format!("gpu memory {n}"),
            gm(got.gpu_memory_bytes)[i],
            gm(want.gpu_memory_bytes)[i],
        );
    }
    let gu = |g: Option<GpuUtilization>| g.map(|g| [g.avg, g.p99]).unwrap_or([None; 2]);
    for (i, n) in ["avg", "p99"].iter().enumerate() {
        cmp(
            &format!("gpu util {n}"),
            gu(got.gpu_utilization)[i],
            gu(want.gpu_utilization)[i],
        );
    }
    cmp("history", got.history_seconds, want.history_seconds);
    cmp(
        "samples",
        got.samples.map(|v| v as f64),
        want.samples.map(|v| v as f64),
    );
    cmp(
        "oom",
        got.oom_kills.map(|v| v as f64),
        want.oom_kills.map(|v| v as f64),
    );
    cmp(
        "memory limit",
        got.memory_limit_bytes,
        want.memory_limit_bytes,
    );
    // GPU sizing: within 3% of the values computed from the samples (the issue's contract).
    let within3 = |g: Option<f64>, w: Option<f64>| match (g, w) {
        (None, None) => true,
        (Some(g), Some(w)) => (g - w).abs() <= 0.03 * w.abs().max(1e-3),
        _ => false,
    };
    let ea = |g: Option<GpuUtilization>| g.map(|g| [g.avg, g.p99]).unwrap_or([None; 2]);
    let kv = |k: Option<KvCache>| k.map(|k| [k.p99, k.max]).unwrap_or([None; 2]);
    for (what, g, w) in [
        (
            "engine avg",
            ea(got.gpu_engine_active)[0],
            ea(want.gpu_engine_active)[0],
        ),
        (
            "engine p99",
            ea(got.gpu_engine_active)[1],
            ea(want.gpu_engine_active)[1],
        ),
        (
            "kv p99",
            kv(got.kv_cache_usage)[0],
            kv(want.kv_cache_usage)[0],
        ),
        (
            "kv max",
            kv(got.kv_cache_usage)[1],
            kv(want.kv_cache_usage)[1],
        ),
    ] {
        if !within3(g, w) {
            errs.push(format!("{key:?} {what}: got {g:?}, want {w:?}"));
        }
    }
    if (&got.gpu_model, got.gpu_count, got.gpus_used)
        != (&want.gpu_model, want.gpu_count, want.gpus_used)
    {
        errs.push(format!(
            "{key:?} gpu model/count/used: got {:?}, want {:?}",
            (&got.gpu_model, got.gpu_count, got.gpus_used),
            (&want.gpu_model, want.gpu_count, want.gpus_used)
        ));
    }
    errs
}

fn opts(url: &str) -> PrometheusOptions {
    let mut o = PrometheusOptions::new(url, WINDOW);
    o.timeout = Duration::from_secs(30);
    o
}

fn must_collect(o: &PrometheusOptions, wanted: &[ContainerKey]) -> Collected {
    match collect(o, wanted) {
        Ok(c) => c,
        Err(e) => panic!("collect failed: {e}"),
    }
}

// ---------------------------------------------------------------------------------------
// Real Prometheus

#[test]
fn real_prometheus() {
    let Some(tools) = tools() else { return };
    let t_all = Instant::now();
    let tmp = tempfile::tempdir().expect("tempdir");
    let cluster = Cluster::new();
    let mut om = cluster.write();
    let files = om.write_daily(tmp.path());
    let t = Instant::now();
    let data = tmp.path().join("data");
    backfill(&tools, &files, &data);
    eprintln!(
        "backfilled {} samples ({}..{}, {} h) in {} daily files: {:?}",
        om.sample_count(),
        cluster.start,
        cluster.end,
        (cluster.end - cluster.start) / HOUR,
        files.len(),
        t.elapsed()
    );
    // A second server on a copy of the blocks, with a sample limit that the whole-store
    // subqueries exceed but per-namespace ones do not.
    let limited = tmp.path().join("data-limited");
    copy_blocks(&data, &limited);
    let work_a = tmp.path().join("a");
    let work_b = tmp.path().join("b");
    std::fs::create_dir_all(&work_a).expect("mkdir");
    std::fs::create_dir_all(&work_b).expect("mkdir");
    let t = Instant::now();
    let prom = Prometheus::start(&tools, &work_a, &data, &[], None);
    let limit = sample_limit(&cluster);
    let limit_flag = format!("--query.max-samples={limit}");
    let prom_limited = Prometheus::start(&tools, &work_b, &limited, &[&limit_flag], None);
    eprintln!("two servers ready in {:?}", t.elapsed());

    let t = Instant::now();
    workloads_are_resolved_and_measured(&prom, &cluster);
    eprintln!("workloads checked in {:?}", t.elapsed());
    let t = Instant::now();
    let base = request_count_does_not_grow_with_workloads(&prom);
    eprintln!("request count checked in {:?}", t.elapsed());
    let t = Instant::now();
    too_expensive_queries_are_split_by_namespace(&prom, &prom_limited, base);
    eprintln!("split checked in {:?}", t.elapsed());
    bad_selector_is_a_clear_error(&prom);
    unmatched_selector_reports_everything_missing(&prom, &cluster);
    let t = Instant::now();
    the_cli_snapshot_and_live_modes_agree(&prom, &cluster);
    eprintln!("CLI checked in {:?}", t.elapsed());
    eprintln!("real Prometheus tests: {:?} in all", t_all.elapsed());
}

/// `gpulint snapshot --prometheus` writes what `gpulint --prometheus` judges by: linting
/// against the written snapshot gives the same findings as linting live.
fn the_cli_snapshot_and_live_modes_agree(prom: &Prometheus, cluster: &Cluster) {
    let repo = tempfile::tempdir().expect("tempdir");
    let mut manifests = String::new();
    for key in cluster.scenario_keys() {
        let api = match key.kind.as_str() {
            "Deployment" | "StatefulSet" | "DaemonSet" => "apps/v1",
            _ => continue,
        };
        manifests.push_str(&format!(
            "---\napiVersion: {api}\nkind: {}\nmetadata: {{name: {}, namespace: {}}}\nspec:\n  template:\n    spec:\n      containers:\n      - name: {}\n        resources:\n          limits: {{nvidia.com/gpu: 1, cpu: 100m, memory: 64Mi}}\n",
            key.kind, key.name, key.namespace, key.container
        ));
    }
    assert!(manifests.matches("kind:").count() >= 3, "{manifests}");
    std::fs::write(repo.path().join("workloads.yaml"), manifests).expect("write");
    let run_env = |args: &[&str], env: &[(&str, &str)]| {
        output(
            gpulint()
                .current_dir(repo.path())
                .args(args)
                .envs(env.iter().copied()),
        )
    };
    let run = |args: &[&str]| run_env(args, &[]);
    let url = prom.url.as_str();
    let (code, _, stderr) = run(&[
        "snapshot",
        "--prometheus",
        url,
        "--window",
        WINDOW,
        "-o",
        "snap.json",
        ".",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("container(s) with data"), "{stderr}");
    // The snapshot file holds the GPU-sizing fields, as computed from the samples.
    let snap = gpulint::metrics::snapshot::read(
        &repo.path().join("snap.json"),
        gpulint::metrics::snapshot::DEFAULT_MAX_BYTES,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let expected = cluster.expected();
    let llm = ContainerKey {
        cluster: None,
        namespace: "serve".into(),
        kind: "Deployment".into(),
        name: "llm".into(),
        container: "vllm".into(),
    };
    let written = snap
        .get(&llm)
        .expect("the vLLM Deployment is in the snapshot");
    assert_eq!(
        check_usage(&llm, &written, &expected[&llm]),
        Vec::<String>::new()
    );
    assert_eq!((written.gpu_count, written.gpus_used), (Some(4), Some(3)));
    let (code_live, live, stderr) = run(&[
        ".",
        "--prometheus",
        url,
        "--window",
        WINDOW,
        "--format",
        "json",
    ]);
    assert_eq!(
        code_live, 1,
        "limits of 64Mi are below every measured usage: {stderr}"
    );
    let (code_snap, from_snapshot, stderr) =
        run(&[".", "--metrics", "snap.json", "--format", "json"]);
    assert_eq!(code_snap, 1, "{stderr}");
    let findings = |text: &str| {
        let v: serde_json::Value = serde_json::from_str(text).expect("JSON");
        let mut rules: Vec<String> = v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| format!("{} {} {}", f["rule"], f["object"]["name"], f["message"]))
            .collect();
        rules.sort();
        rules
    };
    let live = findings(&live);
    assert!(
        live.iter().any(|f| f.starts_with("\"MEM001\"")),
        "{live:#?}"
    );
    // The source line differs (prometheus URL vs snapshot); MET001 messages name it.
    let strip = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .filter(|f| !f.starts_with("\"MET001\""))
            .collect()
    };
    assert_eq!(strip(live), strip(findings(&from_snapshot)));

    // The same with the URL from the environment and the rest from `.gpulint.yaml` (which may
    // not name the URL), and a per-path selector that matches no series: the copy under
    // other/ is measured with `cluster="nowhere"` and gets no data.
    std::fs::create_dir_all(repo.path().join("other")).expect("mkdir");
    std::fs::copy(
        repo.path().join("workloads.yaml"),
        repo.path().join("other/workloads.yaml"),
    )
    .expect("copy");
    std::fs::write(
        repo.path().join(".gpulint.yaml"),
        format!(
            "prometheus:\n  window: {WINDOW}\n  selectors:\n  - path: other/**\n    selector: 'cluster=\"nowhere\"'\n"
        ),
    )
    .expect("config");
    let rules_in = |dir: &str| {
        let (code, out, stderr) = run_env(
            &[dir, "--format", "json"],
            &[("GPULINT_PROMETHEUS_URL", url)],
        );
        assert_ne!(code, 2, "{stderr}");
        assert!(stderr.contains("request(s)"), "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["rule"].as_str().unwrap_or_default().to_string())
            .collect::<std::collections::BTreeSet<String>>()
    };
    let measured = rules_in("workloads.yaml");
    assert!(measured.contains("MEM001"), "{measured:?}");
    let other = rules_in("other");
    assert!(
        other.contains("MET001") && !other.contains("MEM001"),
        "{other:?}"
    );
}

/// A `--query.max-samples` between the per-namespace and the whole-store size of the CPU
/// subquery (`rate(...[5m])[3d:1m]`: about one point per minute of each container's life).
fn sample_limit(c: &Cluster) -> u64 {
    let mut per_ns: BTreeMap<&str, u64> = BTreeMap::new();
    for p in &c.pods {
        let points = ((p.to - p.from) / 60) as u64 * p.ctrs.len() as u64;
        *per_ns.entry(p.ns.as_str()).or_default() += points;
    }
    let whole: u64 = per_ns.values().sum();
    let biggest = per_ns.values().copied().max().unwrap_or(0);
    assert!(
        whole > 2 * biggest,
        "test data: whole {whole}, biggest namespace {biggest}"
    );
    (whole + biggest) / 2
}

fn workloads_are_resolved_and_measured(prom: &Prometheus, cluster: &Cluster) {
    let mut wanted = cluster.scenario_keys();
    let ghost = ContainerKey {
        cluster: None,
        namespace: "web".into(),
        kind: "Deployment".into(),
        name: "ghost".into(),
        container: "app".into(),
    };
    let wrong_container = ContainerKey {
        container: "no-such-container".into(),
        ..wanted[0].clone()
    };
    wanted.push(ghost.clone());
    wanted.push(wrong_container.clone());
    let mut o = opts(&prom.url);
    o.selector = Some(r#"cluster="prod""#.into());
    let before = prom.query_requests();
    let got = must_collect(&o, &wanted);
    let after = prom.query_requests();
    assert_eq!(
        after - before,
        got.requests as u64,
        "requests counted by Prometheus"
    );
    let expected = cluster.expected();
    let mut errs = Vec::new();
    for key in cluster.scenario_keys() {
        match got.usage.get(&key) {
            Some(u) => errs.extend(check_usage(&key, &u, &expected[&key])),
            None => errs.push(format!("{key:?}: no usage (missing: {:?})", got.missing)),
        }
    }
    assert!(
        errs.is_empty(),
        "{} mismatches:\n{}\nnotes: {:?}",
        errs.len(),
        errs.join("\n"),
        got.notes
    );
    // The GPU-sizing figures are there (not both missing): vLLM with 4 GPUs per pod, 3 busy in
    // the busier pod, engine activity and the KV cache of both metric names.
    let llm = ContainerKey {
        cluster: None,
        namespace: "serve".into(),
        kind: "Deployment".into(),
        name: "llm".into(),
        container: "vllm".into(),
    };
    let u = got.usage.containers.get(&llm).unwrap_or_default();
    assert_eq!((u.gpu_count, u.gpus_used), (Some(4), Some(3)));
    assert_eq!(u.gpu_model.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert!(u.gpu_engine_active.and_then(|e| e.p99).is_some(), "{u:?}");
    assert!(u.kv_cache_usage.and_then(|k| k.p99).is_some(), "{u:?}");
    eprintln!(
        "vLLM measured: engine {:?}, KV cache {:?}",
        u.gpu_engine_active, u.kv_cache_usage
    );
    let sgl = ContainerKey {
        name: "sgl".into(),
        container: "sglang".into(),
        ..llm.clone()
    };
    let u = got.usage.containers.get(&sgl).unwrap_or_default();
    assert_eq!((u.gpu_count, u.gpus_used), (Some(1), Some(1)));
    assert!(u.kv_cache_usage.and_then(|k| k.max).is_some(), "{u:?}");
    let nim = ContainerKey {
        name: "nim".into(),
        container: "nim".into(),
        ..llm.clone()
    };
    let u = got.usage.containers.get(&nim).unwrap_or_default();
    assert!(u.kv_cache_usage.and_then(|k| k.max).is_some(), "{u:?}");
    let mut want_missing = vec![ghost, wrong_container];
    want_missing.sort();
    assert_eq!(got.missing, want_missing);
    assert_eq!(
        got.usage.containers.len(),
        cluster.scenario_keys().len(),
        "only wanted keys"
    );
    assert_eq!(got.usage.window.as_deref(), Some(WINDOW));
    assert!(got.usage.source.contains(&prom.url), "{}", got.usage.source);
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    assert_eq!(got.notes.len(), 1, "{:?}", got.notes);
    assert!(
        got.notes[0].contains("no kube_replicaset_owner series for 1 ReplicaSet")
            && got.notes[0].contains("web/legacy-55d9c8f7b"),
        "{:?}",
        got.notes
    );

    // Spot checks of the semantics, independent of the reference computation.
    let k = |ns: &str, kind: &str, name: &str, c: &str| ContainerKey {
        cluster: None,
        namespace: ns.into(),
        kind: kind.into(),
        name: name.into(),
        container: c.into(),
    };
    let app = got
        .usage
        .get(&k("web", "Deployment", "frontend", "app"))
        .expect("frontend/app");
    // Max over both ReplicaSets' pods: the new pod's 400 MiB; history spans the rollout.
    assert_eq!(app.memory_bytes.and_then(|m| m.max), Some(400.0 * MIB));
    assert!(
        close(app.cpu_cores.and_then(|c| c.p99), Some(0.5)),
        "{app:?}"
    );
    assert_eq!(app.history_seconds, Some(2.0 * DAY as f64));
    let sidecar = got
        .usage
        .get(&k("web", "Deployment", "frontend", "istio-proxy"))
        .expect("sidecar");
    assert!(
        close(sidecar.cpu_cores.and_then(|c| c.max), Some(0.05)),
        "old pods' CPU: {sidecar:?}"
    );
    let etl = got
        .usage
        .get(&k("batch", "CronJob", "nightly", "etl"))
        .expect("cronjob");
    // Above the first Job's ceiling (1000 MiB): the second Job's pod counts too.
    assert!(
        etl.memory_bytes
            .and_then(|m| m.max)
            .is_some_and(|m| m > 1000.0 * MIB),
        "{etl:?}"
    );
    let migrate = got
        .usage
        .get(&k("batch", "Job", "migrate", "migrate"))
        .expect("job");
    // The OOMKilled Job's limit, from kube_pod_container_resource_limits.
    assert_eq!(migrate.oom_kills, Some(1), "{migrate:?}");
    assert_eq!(migrate.memory_limit_bytes, Some(128.0 * MIB), "{migrate:?}");
    assert!(got
        .usage
        .get(&k("web", "Pod", "debug-shell", "shell"))
        .is_some());
    let db = got
        .usage
        .get(&k("data", "StatefulSet", "db", "postgres"))
        .expect("sts");
    assert_eq!(db.oom_kills, Some(2), "{db:?}");
    // The limit the kills hit (db-1's 3Gi), not db-0's larger one.
    assert_eq!(db.memory_limit_bytes, Some(3.0 * GIB), "{db:?}");
    assert_eq!(app.oom_kills, Some(0));
    assert_eq!(app.memory_limit_bytes, None, "no limit series: none");
    let train = got
        .usage
        .get(&k("ml", "PyTorchJob", "train", "pytorch"))
        .expect("pytorchjob");
    let gpu = train
        .gpu_memory_bytes
        .expect("gpu memory via exported_* labels");
    assert_eq!(gpu.max, Some(70000.0 * MIB));
    assert_eq!(gpu.capacity, Some(81920.0 * MIB));
    let util = train.gpu_utilization.expect("util");
    assert!(util.p99.is_some_and(|v| v > 0.9 && v <= 0.95), "{util:?}");
    let ray = got
        .usage
        .get(&k("ml", "RayCluster", "ray", "ray-head"))
        .expect("raycluster");
    assert_eq!(
        ray.gpu_memory_bytes.and_then(|g| g.capacity),
        Some(10240.0 * MIB)
    );
    assert!(ray
        .gpu_utilization
        .and_then(|u| u.p99)
        .is_some_and(|v| v > 0.6 && v <= 0.7 + 1e-9));
}

/// 4 workloads or 40: the same number of requests, as counted by Prometheus itself.
fn request_count_does_not_grow_with_workloads(prom: &Prometheus) -> usize {
    let four: Vec<ContainerKey> = (0..4).map(filler_key).collect();
    let forty: Vec<ContainerKey> = (0..FILLERS).map(filler_key).collect();
    let o = opts(&prom.url);
    let c0 = prom.query_requests();
    let small = must_collect(&o, &four);
    let c1 = prom.query_requests();
    let big = must_collect(&o, &forty);
    let c2 = prom.query_requests();
    assert_eq!(
        small.usage.containers.len(),
        4,
        "missing: {:?}",
        small.missing
    );
    assert_eq!(
        big.usage.containers.len(),
        FILLERS,
        "missing: {:?}",
        big.missing
    );
    assert_eq!(
        (c1 - c0) as usize,
        small.requests,
        "client and server agree (4)"
    );
    assert_eq!(
        (c2 - c1) as usize,
        big.requests,
        "client and server agree (40)"
    );
    assert_eq!(
        small.requests, big.requests,
        "request count must not depend on workloads"
    );
    // 20 for usage and owners, 5 for GPU sizing, 2 for the nodes (docs/measurements.md: Live: Prometheus).
    assert!(
        small.requests == 27,
        "a fixed, small set of queries: {}",
        small.requests
    );
    eprintln!("requests per collect: {}", big.requests);
    // The same figures for the 4 from both runs.
    for k in &four {
        assert_eq!(small.usage.get(k), big.usage.get(k), "{k:?}");
    }
    big.requests
}

fn too_expensive_queries_are_split_by_namespace(
    prom: &Prometheus,
    limited: &Prometheus,
    base: usize,
) {
    let forty: Vec<ContainerKey> = (0..FILLERS).map(filler_key).collect();
    // 4 workloads in the same 2 namespaces as the 40.
    let four: Vec<ContainerKey> = [0, 1, 2, 3].into_iter().map(filler_key).collect();
    let reference = must_collect(&opts(&prom.url), &forty);
    let o = opts(&limited.url);
    let c0 = limited.query_requests();
    let split = must_collect(&o, &forty);
    let c1 = limited.query_requests();
    let split4 = must_collect(&o, &four);
    let c2 = limited.query_requests();
    assert!(
        split
            .notes
            .iter()
            .any(|n| n.contains("split into 2 per-namespace queries")
                && n.contains("too many samples")),
        "notes: {:?}",
        split.notes
    );
    assert_eq!((c1 - c0) as usize, split.requests);
    assert_eq!((c2 - c1) as usize, split4.requests);
    assert_eq!(
        split.requests, split4.requests,
        "still independent of the workload count"
    );
    let failed = split.notes.len();
    assert_eq!(
        split.requests,
        base + failed * 2,
        "each failed query retried once per namespace"
    );
    assert_eq!(
        split.usage.containers, reference.usage.containers,
        "same figures when split"
    );
    assert!(split.missing.is_empty());
    eprintln!(
        "split: {failed} queries too big, {} requests",
        split.requests
    );
}

fn bad_selector_is_a_clear_error(prom: &Prometheus) {
    let mut o = opts(&prom.url);
    o.selector = Some(r#"cluster=~"(unclosed""#.into());
    let err = collect(&o, &[filler_key(0)]).expect_err("bad selector must fail");
    let msg = err.to_string();
    match &err {
        PrometheusError::Query {
            error_type, status, ..
        } => {
            assert_eq!(error_type, "bad_data", "{msg}");
            assert_eq!(*status, 400, "{msg}");
        }
        other => panic!("expected a query error, got {other:?}"),
    }
    assert!(msg.contains(&prom.url), "{msg}");
    assert!(msg.contains("(unclosed"), "the query is shown: {msg}");
    assert!(
        msg.contains("rror parsing regexp") || msg.contains("parse error"),
        "{msg}"
    );
}

fn unmatched_selector_reports_everything_missing(prom: &Prometheus, cluster: &Cluster) {
    let mut o = opts(&prom.url);
    o.selector = Some(r#"{cluster="dev"}"#.into());
    let wanted = cluster.scenario_keys();
    let got = must_collect(&o, &wanted);
    assert!(got.usage.containers.is_empty());
    assert_eq!(got.missing, wanted);
    assert!(
        got.notes.iter().any(|n| n.contains("kube_pod_owner")),
        "{:?}",
        got.notes
    );
}

#[test]
fn real_prometheus_over_tls_with_custom_ca() {
    let Some(tools) = tools() else { return };
    let Some(openssl) = find_openssl() else {
        panic!("openssl not found: it is needed to make a test CA (Debian package openssl)");
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    make_certs(&openssl, dir, "ca");
    make_certs(&openssl, dir, "other");
    let web = format!(
        "tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
        dir.join("ca-server.pem").display(),
        dir.join("ca-server.key").display()
    );
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    let prom = Prometheus::start(&tools, dir, &data, &[], Some(&web));
    assert!(prom.url.starts_with("https://"));

    let wanted = [filler_key(0)];
    let mut o = opts(&prom.url);
    o.ca_file = Some(dir.join("ca.pem"));
    let got = collect(&o, &wanted).unwrap_or_else(|e| panic!("TLS with the custom CA: {e}"));
    assert_eq!(got.missing, wanted.to_vec(), "empty store: all missing");
    assert_eq!(got.requests, 3, "owner maps, then stop: no kube_pod_owner");

    // Built-in roots, or another CA: the certificate is not trusted.
    for ca in [None, Some(dir.join("other.pem"))] {
        let mut o = opts(&prom.url);
        o.ca_file = ca.clone();
        let err = collect(&o, &wanted).expect_err("untrusted certificate");
        assert!(
            matches!(err, PrometheusError::Tls { .. }),
            "{ca:?}: {err:?}"
        );
        assert!(err.to_string().contains(&prom.url), "{err}");
        assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    }
}

fn find_openssl() -> Option<std::path::PathBuf> {
    ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_file())
}

/// `<name>.pem` (a CA) and `<name>-server.pem`/`.key` (signed by it, for 127.0.0.1).
fn make_certs(openssl: &Path, dir: &Path, name: &str) {
    let run = |args: &[&str]| {
        let out = Command::new(openssl)
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ext = dir.join(format!("{name}.ext"));
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write ext");
    let (ca, cakey) = (format!("{name}.pem"), format!("{name}.key"));
    let (srv, srvkey, csr) = (
        format!("{name}-server.pem"),
        format!("{name}-server.key"),
        format!("{name}-server.csr"),
    );
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let subj_ca = format!("/CN=gpulint test CA {name}");
    let mut a = vec![
        "req", "-x509", "-days", "2", "-subj", &subj_ca, "-keyout", &cakey, "-out", &ca,
    ];
    a.extend(ec);
    run(&a);
    let mut b = vec![
        "req",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        &srvkey,
        "-out",
        &csr,
    ];
    b.extend(ec);
    run(&b);
    let extfile = ext.to_string_lossy().to_string();
    run(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &ca,
        "-CAkey",
        &cakey,
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        &srv,
        "-extfile",
        &extfile,
    ]);
}

// ---------------------------------------------------------------------------------------
// Transport and options (no Prometheus needed)

const EMPTY_OK: &str = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;

#[test]
fn dead_endpoint_fails_fast_naming_the_url() {
    let url = dead_url();
    let mut o = opts(&url);
    o.bearer_token = Some("tok-dead-0123456789".into());
    let t = Instant::now();
    let err = collect(&o, &[filler_key(0)]).expect_err("nothing listens");
    let took = t.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let msg = err.to_string();
    assert!(matches!(err, PrometheusError::Connect { .. }), "{err:?}");
    assert!(msg.contains(&url), "{msg}");
    assert!(msg.contains("connection refused"), "{msg}");
    assert!(
        !msg.contains("tok-dead") && !format!("{err:?}").contains("tok-dead"),
        "{msg}"
    );
}

#[test]
fn slow_endpoint_hits_the_timeout() {
    let server = SilentServer::start();
    let mut o = opts(&server.url);
    o.timeout = Duration::from_millis(1500);
    let t = Instant::now();
    let err = collect(&o, &[filler_key(0)]).expect_err("never answers");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_secs(6),
        "took {took:?}"
    );
    assert!(matches!(err, PrometheusError::Timeout { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&server.url) && msg.contains("1500ms"), "{msg}");
}

#[test]
fn token_and_headers_are_sent_and_never_shown() {
    const TOKEN: &str = "tok-s3cr3t-abcdef123456";
    let warn = r#"{"status":"success","warnings":["partial response: store eu-1 unavailable"],
        "data":{"resultType":"vector","result":[]}}"#;
    let server = RecordingServer::start(move |_| (200, warn.to_string()));
    let mut o = opts(&server.url);
    o.bearer_token = Some(TOKEN.into());
    o.headers = vec![("X-Scope-OrgID".into(), "tenant-7".into())];
    o.selector = Some(r#"cluster="prod""#.into());
    assert!(!format!("{o:?}").contains(TOKEN), "Debug redacts the token");
    let got = must_collect(&o, &[filler_key(0)]);
    assert_eq!(
        got.warnings,
        vec!["partial response: store eu-1 unavailable".to_string()]
    );
    let reqs = server.recorded();
    assert_eq!(reqs.len(), got.requests);
    assert_eq!(got.requests, 3, "owner maps only: no kube_pod_owner series");
    for r in &reqs {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/api/v1/query");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert_eq!(r.header("x-scope-orgid"), Some("tenant-7"));
        assert_eq!(
            r.header("content-type"),
            Some("application/x-www-form-urlencoded")
        );
        let q = r.form("query").expect("query= in the form body");
        assert!(q.contains(r#"cluster="prod""#), "{q}");
        assert!(
            !q.contains(r#"namespace="fill-a""#),
            "whole-store query: {q}"
        );
        assert!(
            r.form("time").is_some_and(|t| t.parse::<f64>().is_ok()),
            "{}",
            r.body
        );
    }
    assert!(reqs[0]
        .form("query")
        .is_some_and(|q| q.contains("max_over_time(kube_pod_owner")));

    // A server that echoes the credentials back in an error: scrubbed.
    let echo = RecordingServer::start(|r| {
        let auth = r.header("authorization").unwrap_or("").to_string();
        (401, format!("unauthorized: bad credentials {auth}"))
    });
    let mut o2 = o.clone();
    o2.url = echo.url.clone();
    let err = collect(&o2, &[filler_key(0)]).expect_err("401");
    let (msg, dbg) = (err.to_string(), format!("{err:?}"));
    assert!(
        matches!(err, PrometheusError::Http { status: 401, .. }),
        "{dbg}"
    );
    assert!(msg.contains(&echo.url) && msg.contains("401"), "{msg}");
    assert!(!msg.contains(TOKEN) && !dbg.contains(TOKEN), "{msg}");
    assert!(msg.contains("<redacted>"), "{msg}");
    // Same for an API error echoing it.
    let api = RecordingServer::start(|r| {
        let auth = r.header("authorization").unwrap_or("").to_string();
        (
            400,
            format!(r#"{{"status":"error","errorType":"bad_data","error":"denied for {auth}"}}"#),
        )
    });
    o2.url = api.url.clone();
    let err = collect(&o2, &[filler_key(0)]).expect_err("400");
    assert!(!err.to_string().contains(TOKEN) && !format!("{err:?}").contains(TOKEN));
}

#[test]
fn timeout_errors_are_retried_per_namespace() {
    // 503 errorType=timeout for whole-store queries, success per namespace.
    let server = RecordingServer::start(|r| {
        let q = r.form("query").unwrap_or_default();
        if q.contains("namespace=") {
            (200, EMPTY_OK.to_string())
        } else {
            (
                503,
                r#"{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}"#
                    .to_string(),
            )
        }
    });
    let wanted = [filler_key(0), filler_key(1), filler_key(2)]; // fill-a, fill-b, fill-a
    let got = must_collect(&opts(&server.url), &wanted);
    // 3 owner queries, each: 1 failed + 2 namespaces; then no kube_pod_owner -> stop.
    assert_eq!(got.requests, 9);
    assert_eq!(server.recorded().len(), 9);
    assert_eq!(
        got.notes
            .iter()
            .filter(|n| n.contains("split into 2"))
            .count(),
        3,
        "{:?}",
        got.notes
    );
    let per_ns: Vec<String> = server
        .recorded()
        .iter()
        .filter_map(|r| r.form("query"))
        .filter(|q| q.contains("namespace="))
        .collect();
    assert!(
        per_ns[0].contains(r#"namespace="fill-a""#)
            && per_ns[0].contains(r#"exported_namespace="fill-a""#)
    );
}

#[test]
fn options_are_checked_before_any_request() {
    let server = RecordingServer::start(|_| (200, EMPTY_OK.to_string()));
    let wanted = [filler_key(0)];
    let bad = |f: &dyn Fn(&mut PrometheusOptions)| {
        let mut o = opts(&server.url);
        f(&mut o);
        collect(&o, &wanted).expect_err("invalid options")
    };
    let e = bad(&|o| o.window = "two weeks".into());
    assert!(
        matches!(e, PrometheusError::Options(_)) && e.to_string().contains("two weeks"),
        "{e}"
    );
    let e = bad(&|o| o.url = "prometheus:9090".into());
    assert!(e.to_string().contains("http://"), "{e}");
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("no-such-ca.pem");
    let e = bad(&|o| o.ca_file = Some(missing.clone()));
    assert!(matches!(e, PrometheusError::CaFile { .. }), "{e:?}");
    assert!(e.to_string().contains("no-such-ca.pem"), "{e}");
    let junk = tmp.path().join("junk.pem");
    std::fs::write(&junk, "this is not a certificate\n").expect("write");
    let e = bad(&|o| o.ca_file = Some(junk.clone()));
    assert!(matches!(e, PrometheusError::CaFile { .. }), "{e:?}");
    assert!(
        e.to_string().contains("junk.pem") && e.to_string().contains("no PEM certificate"),
        "{e}"
    );
    let e = bad(&|o| {
        o.bearer_token = Some("tok-abc-123456".into());
        o.headers = vec![("Authorization".into(), "Basic eA==".into())];
    });
    assert!(matches!(e, PrometheusError::Options(_)), "{e:?}");
    assert!(
        server.recorded().is_empty(),
        "no request for invalid options"
    );
    // Nothing wanted: nothing asked.
    let got = must_collect(&opts(&server.url), &[]);
    assert_eq!(got.requests, 0);
}
