//! Prometheus at scale: 5,000 pods' worth of series (1,000 Deployments × 5 pods over two
//! ReplicaSets each, a rollout) in a REAL Prometheus (Debian's package, backfilled with promtool
//! as in tests/integration/prometheus.rs), and the real `gpulint snapshot` binary over a repo with those
//! 1,000 Deployments.
//!
//! It checks that the snapshot has data for every workload container, with the figures the
//! samples imply (so no pod was attributed to the wrong Deployment), and that the number of
//! query requests, as counted by Prometheus itself, is the same as for a 4-workload repo. It
//! prints the wall time of each step, the snapshot command's included; no time is asserted
//! (timed assertions are flaky on a shared 2-core machine).
//!
//! History: a 6-hour window, the samples filling all of it but its first and last quarter hour,
//! at 5-minute resolution (CPU counters every 2 minutes, as `rate(...[5m])` needs two samples
//! per 5 minutes): about 1.9 million samples in 36,500 series, 280 MiB of OpenMetrics. Measured
//! on the 2-core machine, idle: generating 1.5 s, promtool 3.3 s (one block, thanks to
//! `--max-block-duration=24h`), each snapshot 2.2-2.4 s (nearly all of it Prometheus evaluating
//! the 19 queries), the whole test 9.5 s; while other builds ran: 2.6 s, 7-8 s, 3-6 s, 15-20 s.
//! A 12-hour history would double the backfill and the query time; 6 hours keeps the test well
//! inside its one-minute budget.
//!
//! If `prometheus`/`promtool` are missing this test FAILS, asking to run scripts/test (which
//! installs them), unless GPULINT_SKIP_PROMETHEUS=1.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::support::openmetrics::{labels, OpenMetrics};
use crate::support::prometheus::{backfill, tools, Prometheus};
use gpulint::metrics::usage::{ContainerKey, UsageSet};

use crate::support::common::gpulint;

const MIB: f64 = 1024.0 * 1024.0;
const MINUTE: i64 = 60;
const HOUR: i64 = 3600;
const DEPLOYMENTS: usize = 1000;
const NAMESPACES: usize = 10;
/// Pods per ReplicaSet: the old one (before the rollout) and the new one.
const OLD_PODS: usize = 2;
const NEW_PODS: usize = 3;
const WINDOW: &str = "6h";
/// Samples start this long after the window's start at generation time, so that every sample
/// is still inside the window when the snapshot runs (minutes later at most).
const INSIDE: i64 = 10 * MINUTE;
/// Every SIDECAR_EVERY-th Deployment has an `istio-proxy` sidecar; every GPU_EVERY-th a GPU
/// (half of those seen through dcgm-exporter's `exported_*` labels); every OOM_EVERY-th an
/// OOM kill in one pod of its old ReplicaSet.
const SIDECAR_EVERY: usize = 5;
const GPU_EVERY: usize = 10;
const OOM_EVERY: usize = 50;

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

// ---------------------------------------------------------------------------------------
// The simulated cluster

struct Ctr {
    name: &'static str,
    /// Memory: base + amp * (a pseudo-random step of 100 over time).
    mem: (f64, f64),
    /// CPU cores (the counter's slope).
    cpu: f64,
    /// GPU memory used (MiB, base + amp * step) on a GPU of 40 GiB, and whether the dcgm
    /// series carry `exported_*` labels.
    gpu: Option<((f64, f64), bool)>,
    /// Time of an OOM kill.
    oom: Option<i64>,
}

struct Pod {
    ns: String,
    /// The Deployment.
    deployment: String,
    replicaset: String,
    name: String,
    from: i64,
    to: i64,
    ctrs: Vec<Ctr>,
    /// A node-unique GPU index, for the dcgm labels.
    gpu_index: usize,
}

struct ReplicaSet {
    ns: String,
    name: String,
    deployment: String,
    from: i64,
    to: i64,
}

struct Cluster {
    start: i64,
    end: i64,
    pods: Vec<Pod>,
    replicasets: Vec<ReplicaSet>,
}

fn namespace(d: usize) -> String {
    format!("team-{:02}", d % NAMESPACES)
}

fn deployment(d: usize) -> String {
    format!("svc-{d:04}")
}

/// A 5-letter pod suffix, like the ReplicaSet controller's.
fn suffix(n: usize) -> String {
    const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = n * 7919 + 12345;
    (0..5)
        .map(|_| {
            let c = ALPHA[n % ALPHA.len()] as char;
            n /= ALPHA.len();
            c
        })
        .collect()
}

impl Cluster {
    /// Data from `INSIDE` after the window's start to 6 to 11 minutes ago, every boundary on
    /// 5 minutes. Ending over 5 minutes ago makes every evaluation of `rate(...[5m])` that sees
    /// a sample part of the past, so two snapshots a few seconds apart give the same figures.
    fn new() -> Cluster {
        let now = now_secs();
        let five = 5 * MINUTE;
        let end = (now - 6 * MINUTE) / five * five;
        let start = (now - 6 * HOUR + INSIDE) / five * five + five;
        // The old ReplicaSet runs the first half; the new one from a third on (an hour of
        // overlap, a slow rollout) to the end.
        let old_to = start + (end - start) / 2 / five * five;
        let new_from = start + (end - start) / 3 / five * five;
        let mut c = Cluster {
            start,
            end,
            pods: Vec::new(),
            replicasets: Vec::new(),
        };
        for d in 0..DEPLOYMENTS {
            let ns = namespace(d);
            let dep = deployment(d);
            let df = d as f64;
            for (gen, hash, pods, from, to) in [
                (0, "6d4cf56db6", OLD_PODS, start, old_to),
                (1, "7b9f8c6d5", NEW_PODS, new_from, end),
            ] {
                let rs = format!("{dep}-{hash}");
                c.replicasets.push(ReplicaSet {
                    ns: ns.clone(),
                    name: rs.clone(),
                    deployment: dep.clone(),
                    from,
                    to,
                });
                for p in 0..pods {
                    let pf = p as f64;
                    let genf = gen as f64;
                    // Distinct per Deployment, pod and generation, so a pod attributed to the
                    // wrong Deployment shows in the figures.
                    let mut app = Ctr {
                        name: "app",
                        mem: (
                            (64.0 + (d % 500) as f64 + 8.0 * pf + 32.0 * genf) * MIB,
                            (8.0 + (d % 7) as f64) * MIB,
                        ),
                        cpu: 0.01 + (d % 97) as f64 / 100.0 + 0.003 * pf + 0.2 * genf,
                        gpu: None,
                        oom: None,
                    };
                    if d % GPU_EVERY == 0 {
                        let used = (1000.0 + 10.0 * df + 100.0 * pf, 500.0 + 1000.0 * genf);
                        app.gpu = Some((used, d % (2 * GPU_EVERY) == 0));
                    }
                    if d % OOM_EVERY == 3 && gen == 0 && p == 0 {
                        app.oom = Some(from + HOUR);
                    }
                    let mut ctrs = vec![app];
                    if d % SIDECAR_EVERY == 0 {
                        ctrs.push(Ctr {
                            name: "istio-proxy",
                            mem: ((40.0 + pf) * MIB, 4.0 * MIB),
                            cpu: 0.02 + 0.001 * (d % 13) as f64,
                            gpu: None,
                            oom: None,
                        });
                    }
                    c.pods.push(Pod {
                        ns: ns.clone(),
                        deployment: dep.clone(),
                        replicaset: rs.clone(),
                        name: format!("{rs}-{}", suffix(c.pods.len())),
                        from,
                        to,
                        ctrs,
                        gpu_index: c.pods.len(),
                    });
                }
            }
        }
        c
    }

    fn write(&self) -> OpenMetrics {
        let mut om = OpenMetrics::new();
        let every = |from: i64, to: i64, step: i64| (from..=to).step_by(step as usize);
        for p in &self.pods {
            let uid = format!("uid-{}", p.name);
            let node = format!("node-{:03}", p.gpu_index % 200);
            let (ns, pod) = (p.ns.as_str(), p.name.as_str());
            om.add(
                "kube_pod_owner",
                &labels(&[
                    ("namespace", ns),
                    ("pod", pod),
                    ("uid", &uid),
                    ("owner_kind", "ReplicaSet"),
                    ("owner_name", &p.replicaset),
                    ("owner_is_controller", "true"),
                ]),
                every(p.from, p.to, 5 * MINUTE).map(|t| (t, 1.0)),
            );
            // The pod-level cgroup and the pause container, as cAdvisor reports them.
            for pseudo in ["", "POD"] {
                om.add(
                    "container_memory_working_set_bytes",
                    &labels(&[
                        ("namespace", ns),
                        ("pod", pod),
                        ("container", pseudo),
                        ("node", &node),
                    ]),
                    every(p.from, p.to, 5 * MINUTE).map(|t| (t, 64.0 * 1024.0 * MIB)),
                );
            }
            for c in &p.ctrs {
                let cadv = labels(&[
                    ("namespace", ns),
                    ("pod", pod),
                    ("container", c.name),
                    ("node", &node),
                ]);
                om.add(
                    "container_memory_working_set_bytes",
                    &cadv,
                    every(p.from, p.to, 5 * MINUTE).map(|t| (t, mem_at(c, t))),
                );
                om.add(
                    "container_cpu_usage_seconds_total",
                    &cadv,
                    every(p.from, p.to, 2 * MINUTE)
                        .map(|t| (t, 100.0 + c.cpu * (t - p.from) as f64)),
                );
                let ksm = labels(&[
                    ("namespace", ns),
                    ("pod", pod),
                    ("uid", &uid),
                    ("container", c.name),
                ]);
                // 1-minute resolution where an OOM kill happens, as a restart is seen.
                let step = if c.oom.is_some() { MINUTE } else { 5 * MINUTE };
                om.add(
                    "kube_pod_container_status_restarts_total",
                    &ksm,
                    every(p.from, p.to, step)
                        .map(|t| (t, f64::from(c.oom.is_some_and(|o| t >= o)))),
                );
                if let Some(o) = c.oom {
                    let mut l = ksm.clone();
                    l.push(("reason".into(), "OOMKilled".into()));
                    om.add(
                        "kube_pod_container_status_last_terminated_reason",
                        &l,
                        every(o, p.to, MINUTE).map(|t| (t, 1.0)),
                    );
                }
                if let Some((used, exported)) = c.gpu {
                    let gpu = (p.gpu_index % 8).to_string();
                    let uuid = format!("GPU-{:08x}-scale", p.gpu_index);
                    let mut l = labels(&[
                        ("gpu", &gpu),
                        ("UUID", &uuid),
                        ("modelName", "NVIDIA A100-SXM4-40GB"),
                        ("Hostname", &node),
                    ]);
                    if exported {
                        l.extend(labels(&[
                            ("namespace", "gpu-operator"),
                            ("pod", "nvidia-dcgm-exporter-7xk2p"),
                            ("container", "nvidia-dcgm-exporter"),
                            ("exported_namespace", ns),
                            ("exported_pod", pod),
                            ("exported_container", c.name),
                        ]));
                    } else {
                        l.extend(labels(&[
                            ("namespace", ns),
                            ("pod", pod),
                            ("container", c.name),
                        ]));
                    }
                    let ts: Vec<i64> = every(p.from, p.to, 5 * MINUTE).collect();
                    let fb = |t| wave(used, t, 13, 50).round();
                    om.add("DCGM_FI_DEV_FB_USED", &l, ts.iter().map(|&t| (t, fb(t))));
                    om.add(
                        "DCGM_FI_DEV_FB_FREE",
                        &l,
                        ts.iter().map(|&t| (t, GPU_MIB - fb(t))),
                    );
                    om.add(
                        "DCGM_FI_DEV_GPU_UTIL",
                        &l,
                        ts.iter()
                            .map(|&t| (t, wave((20.0, 60.0), t, 7, 20).round())),
                    );
                }
            }
        }
        for rs in &self.replicasets {
            om.add(
                "kube_replicaset_owner",
                &labels(&[
                    ("namespace", rs.ns.as_str()),
                    ("replicaset", rs.name.as_str()),
                    ("owner_kind", "Deployment"),
                    ("owner_name", rs.deployment.as_str()),
                    ("owner_is_controller", "true"),
                ]),
                every(rs.from, rs.to, 5 * MINUTE).map(|t| (t, 1.0)),
            );
        }
        om
    }

    /// What the snapshot must hold for each workload container (the figures that do not
    /// depend on Prometheus' quantile interpolation).
    fn expected(&self) -> BTreeMap<ContainerKey, Expect> {
        let mut out: BTreeMap<ContainerKey, Expect> = BTreeMap::new();
        for p in &self.pods {
            for c in &p.ctrs {
                let key = ContainerKey {
                    cluster: None,
                    namespace: p.ns.clone(),
                    kind: "Deployment".into(),
                    name: p.deployment.clone(),
                    container: c.name.into(),
                };
                let e = out.entry(key).or_insert(Expect {
                    mem_max: 0.0,
                    cpu_max: 0.0,
                    samples: 0,
                    first: i64::MAX,
                    last: i64::MIN,
                    gpu_max: None,
                    oom: 0,
                });
                for t in (p.from..=p.to).step_by(5 * MINUTE as usize) {
                    e.mem_max = e.mem_max.max(mem_at(c, t));
                    e.samples += 1;
                    if let Some((used, _)) = c.gpu {
                        let v = wave(used, t, 13, 50).round() * MIB;
                        e.gpu_max = Some(e.gpu_max.map_or(v, |m: f64| m.max(v)));
                    }
                }
                e.cpu_max = e.cpu_max.max(c.cpu);
                e.first = e.first.min(p.from);
                e.last = e.last.max(p.to);
                e.oom += u64::from(c.oom.is_some());
            }
        }
        out
    }
}

const GPU_MIB: f64 = 40960.0;

struct Expect {
    mem_max: f64,
    cpu_max: f64,
    samples: u64,
    first: i64,
    last: i64,
    gpu_max: Option<f64>,
    oom: u64,
}

/// base + amp * (one of `levels` evenly spaced steps, pseudo-randomly ordered over time).
fn wave((base, amp): (f64, f64), t: i64, mult: i64, levels: i64) -> f64 {
    let i = t / 300;
    base + amp * ((i * mult).rem_euclid(levels)) as f64 / (levels - 1) as f64
}

fn mem_at(c: &Ctr, t: i64) -> f64 {
    wave(c.mem, t, 37, 100).round()
}

fn close(got: Option<f64>, want: f64) -> bool {
    got.is_some_and(|g| (g - want).abs() <= 1e-6 * want.abs().max(1e-3))
}

// ---------------------------------------------------------------------------------------
// The repos and the binary

/// One manifest per Deployment, in a folder per namespace, as a GitOps repo has them.
fn write_repo(dir: &Path, deployments: impl IntoIterator<Item = usize>) -> usize {
    let mut n = 0;
    for d in deployments {
        let ns = namespace(d);
        let name = deployment(d);
        let folder = dir.join(&ns);
        std::fs::create_dir_all(&folder).expect("mkdir");
        let gpu = if d % GPU_EVERY == 0 {
            ", nvidia.com/gpu: 1"
        } else {
            ""
        };
        let mut text = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {ns}\n\
             spec:\n  replicas: {NEW_PODS}\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n\
             \x20   metadata:\n      labels: {{app: {name}}}\n    spec:\n      containers:\n\
             \x20     - name: app\n        image: registry.example/{name}:1.0\n        resources:\n\
             \x20         requests: {{cpu: 250m, memory: 256Mi}}\n\
             \x20         limits: {{cpu: '1', memory: 512Mi{gpu}}}\n"
        );
        if d % SIDECAR_EVERY == 0 {
            text.push_str(
                "      - name: istio-proxy\n        image: istio/proxyv2:1.22\n        resources:\n\
                 \x20         limits: {cpu: 100m, memory: 128Mi}\n",
            );
        }
        std::fs::write(folder.join(format!("{name}.yaml")), text).expect("write manifest");
        n += 1;
    }
    n
}

struct Snapshot {
    wall: Duration,
    /// Requests counted by Prometheus (`prometheus_http_requests_total`, /api/v1/query).
    server_requests: u64,
    /// Requests as gpulint reports them on stderr.
    client_requests: u64,
    usage: UsageSet,
    stderr: String,
}

fn snapshot(prom: &Prometheus, repo: &Path) -> Snapshot {
    let out_file = repo.join("snap.json");
    let before = prom.query_requests();
    let t = Instant::now();
    let out = gpulint()
        .current_dir(repo)
        .args(["snapshot", "--prometheus", &prom.url, "--window", WINDOW])
        .arg("-o")
        .arg(&out_file)
        .arg(".")
        .output()
        .expect("gpulint runs");
    let wall = t.elapsed();
    let after = prom.query_requests();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "gpulint snapshot in {}: {}\nstderr:\n{stderr}\nprometheus log:\n{}",
        repo.display(),
        out.status,
        prom.log_text()
    );
    // "prometheus URL, window 6h: N container(s) with data, M without (R request(s))"
    let client_requests = stderr
        .split(" request(s))")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no request count in gpulint's stderr:\n{stderr}"));
    // The file must be usable by `gpulint --metrics`: read it with the same reader.
    let usage =
        gpulint::metrics::snapshot::read(&out_file, gpulint::metrics::snapshot::DEFAULT_MAX_BYTES)
            .unwrap_or_else(|e| {
                panic!(
                    "`gpulint snapshot` wrote a file that gpulint's snapshot reader rejects: {e}"
                )
            });
    Snapshot {
        wall,
        server_requests: after - before,
        client_requests,
        usage,
        stderr,
    }
}

// ---------------------------------------------------------------------------------------

#[test]
fn five_thousand_pods_same_query_count_snapshot_in_seconds() {
    let Some(tools) = tools() else { return };
    let t_all = Instant::now();
    let tmp = tempfile::tempdir().expect("tempdir");

    let t = Instant::now();
    let cluster = Cluster::new();
    let mut om = cluster.write();
    let om_dir = tmp.path().join("openmetrics");
    std::fs::create_dir_all(&om_dir).expect("mkdir");
    let files = om.write_daily(&om_dir);
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    let series = cluster
        .pods
        .iter()
        .map(|p| {
            3 + p
                .ctrs
                .iter()
                .map(|c| 3 + usize::from(c.oom.is_some()) + 3 * usize::from(c.gpu.is_some()))
                .sum::<usize>()
        })
        .sum::<usize>()
        + cluster.replicasets.len();
    eprintln!(
        "generated {} pods ({DEPLOYMENTS} Deployments), {series} series, {} samples over {:.2} h, \
         {:.0} MiB of OpenMetrics in {} file(s): {:?}",
        cluster.pods.len(),
        om.sample_count(),
        (cluster.end - cluster.start) as f64 / HOUR as f64,
        bytes as f64 / MIB,
        files.len(),
        t.elapsed()
    );
    drop(om);

    let t = Instant::now();
    let data = tmp.path().join("data");
    backfill(&tools, &files, &data);
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    eprintln!("promtool backfill: {:?}", t.elapsed());

    let t = Instant::now();
    let work = tmp.path().join("prometheus");
    std::fs::create_dir_all(&work).expect("mkdir");
    let prom = Prometheus::start(&tools, &work, &data, &[], None);
    eprintln!("prometheus ready: {:?}", t.elapsed());

    let big_repo = tmp.path().join("repo-1000");
    let small_repo = tmp.path().join("repo-4");
    assert_eq!(write_repo(&big_repo, 0..DEPLOYMENTS), DEPLOYMENTS);
    // Four Deployments from the same store: a sidecar, a GPU (exported_* labels), an OOM.
    let four = [0, 1, 2, 3];
    assert_eq!(write_repo(&small_repo, four), 4);

    let big = snapshot(&prom, &big_repo);
    eprintln!(
        "gpulint snapshot, {DEPLOYMENTS} Deployments: {:?} wall, {} requests\n  {}",
        big.wall,
        big.server_requests,
        big.stderr.trim().replace('\n', "\n  ")
    );
    let small = snapshot(&prom, &small_repo);
    eprintln!(
        "gpulint snapshot, 4 Deployments: {:?} wall, {} requests",
        small.wall, small.server_requests
    );

    // The query count: fixed, and the client's own count is Prometheus's.
    assert_eq!(
        big.server_requests, big.client_requests,
        "requests counted by Prometheus vs by gpulint (1,000 workloads)"
    );
    assert_eq!(
        small.server_requests, small.client_requests,
        "requests counted by Prometheus vs by gpulint (4 workloads)"
    );
    assert_eq!(
        big.server_requests, small.server_requests,
        "the number of queries must not depend on the number of workloads \
         (1,000 Deployments / 5,000 pods vs 4 Deployments)"
    );
    // 20 for usage and owners, 5 for GPU sizing, 2 for the nodes (docs/measurements.md: Live: Prometheus).
    assert!(
        big.server_requests == 27,
        "a fixed, small set of queries: {}",
        big.server_requests
    );

    // Every workload container has data, with the figures its pods' samples imply.
    let expected = cluster.expected();
    let workloads: std::collections::BTreeSet<(String, String)> = big
        .usage
        .containers
        .keys()
        .map(|k| (k.namespace, k.name))
        .collect();
    assert_eq!(workloads.len(), DEPLOYMENTS, "workloads with data");
    let missing: Vec<&ContainerKey> = expected
        .keys()
        .filter(|k| !big.usage.containers.contains_key(k))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} containers without data, e.g. {:?}\n{}",
        missing.len(),
        expected.len(),
        &missing[..missing.len().min(5)],
        big.stderr
    );
    assert_eq!(
        big.usage.containers.len(),
        expected.len(),
        "only the repo's containers"
    );
    let mut errs = Vec::new();
    for (key, want) in &expected {
        let got = big.usage.containers.get(key).unwrap_or_default();
        let mut check = |what: &str, ok: bool, got: String, want: String| {
            if !ok {
                errs.push(format!("{key:?} {what}: got {got}, want {want}"));
            }
        };
        let mem_max = got.memory_bytes.and_then(|m| m.max);
        check(
            "memory max",
            close(mem_max, want.mem_max),
            format!("{mem_max:?}"),
            want.mem_max.to_string(),
        );
        let cpu_max = got.cpu_cores.and_then(|c| c.max);
        check(
            "cpu max",
            close(cpu_max, want.cpu_max),
            format!("{cpu_max:?}"),
            want.cpu_max.to_string(),
        );
        check(
            "samples",
            got.samples == Some(want.samples),
            format!("{:?}", got.samples),
            want.samples.to_string(),
        );
        let history = (want.last - want.first) as f64;
        check(
            "history",
            close(got.history_seconds, history),
            format!("{:?}", got.history_seconds),
            history.to_string(),
        );
        let gpu_max = got.gpu_memory_bytes.and_then(|g| g.max);
        let gpu_ok = match want.gpu_max {
            Some(w) => {
                close(gpu_max, w)
                    && got
                        .gpu_memory_bytes
                        .and_then(|g| g.capacity)
                        .is_some_and(|c| close(Some(c), GPU_MIB * MIB))
                    && got.gpu_utilization.and_then(|u| u.p99).is_some()
            }
            None => got.gpu_memory_bytes.is_none() && got.gpu_utilization.is_none(),
        };
        check(
            "gpu",
            gpu_ok,
            format!("{:?} {:?}", got.gpu_memory_bytes, got.gpu_utilization),
            format!("{:?}", want.gpu_max),
        );
        check(
            "oom kills",
            got.oom_kills == Some(want.oom),
            format!("{:?}", got.oom_kills),
            want.oom.to_string(),
        );
    }
    assert!(
        errs.is_empty(),
        "{} mismatches, e.g.:\n{}",
        errs.len(),
        errs[..errs.len().min(20)].join("\n")
    );
    assert!(
        expected.values().any(|e| e.oom > 0) && expected.values().any(|e| e.gpu_max.is_some()),
        "the scenario has OOM kills and GPUs"
    );

    // The 4-workload snapshot: the same figures for the same containers.
    assert_eq!(small.usage.containers.len(), 4 + 1, "4 apps and a sidecar");
    for (key, usage) in &small.usage.containers {
        assert_eq!(
            Some(usage),
            big.usage.containers.get(&key),
            "{key:?}: same figures from the small and the big repo"
        );
    }
    eprintln!(
        "prometheus scale test: {} pods, snapshot of {} containers in {:?} ({} requests, as for \
         4 workloads); {:?} in all",
        cluster.pods.len(),
        big.usage.containers.len(),
        big.wall,
        big.server_requests,
        t_all.elapsed()
    );
}
