//! Recommended requests and limits from measured [`Usage`], the current resources and a
//! [`Policy`].
//!
//! All arithmetic is exact integer arithmetic on bytes and millicores, always rounding up,
//! so a recommendation is never below the value its rule computes. Ratios from the policy
//! (margins, factors, tolerances) are applied with a precision of one part per million.
//!
//! # Memory ([`memory`])
//!
//! 1. `computed = max(ceil(P99) × (1 + memory_margin), ceil(max))`, rounded up to a whole
//!    byte. If P99 was not measured the observed max stands in for it:
//!    `ceil(max) × (1 + memory_margin)`.
//! 2. After an OOM kill in the window (`oom_kills > 0`):
//!    `computed = max(computed, ref × oom_bump_factor, ref + oom_bump_min_bytes)`
//!    (defaults: at least `ref × 1.2` and at least `ref + 100Mi`), where `ref` is the limit the
//!    container was killed at as measured (`memory_limit_bytes`, the largest limit its pods had
//!    in the window), or the observed max when it had no limit or the snapshot does not record
//!    one. Never the manifest's current value: the recommendation is a pure function of the
//!    measurement, so the message, the JSON and every fix round give the same number.
//! 3. Readable rounding ([`round_memory_readable`]): the slack is
//!    `max(computed × memory_round_tolerance, memory_round_min_slack_bytes)` (defaults 5% and
//!    64Mi). The value is rounded up to the coarsest step among `1Gi`, `256Mi`, `64Mi`, `1Mi`
//!    (then `1Ki`, `1` byte) whose rounded value is at most `computed + slack`. So
//!    `35.65e9` bytes becomes `34Gi`, `373293056` becomes `384Mi`.
//!
//! # CPU ([`cpu`])
//!
//! 1. `computed = P99 × (1 + cpu_margin)` in millicores, rounded up (at least `1m`). P99 is
//!    taken at nanocore precision from its shortest decimal form (`3.4` is exactly 3.4 cores).
//! 2. Readable rounding ([`round_cpu_readable`]): with `slack = computed × cpu_round_tolerance`
//!    (default 5%), round up to whole cores if `computed >= cpu_whole_core_min_millicores`
//!    (default 4 cores) and the result is within the slack; else to a multiple of `100m` if
//!    within the slack; else to a multiple of `10m`. So `3910m` becomes `4`, `5175m` becomes
//!    `5200m`, `58m` becomes `60m`.
//!
//! # When there is no recommendation ([`NoRecommendation`])
//!
//! The series is missing; fewer than `min_samples` samples; less than `min_history_seconds`
//! of history; a value is negative, non-finite or implausibly large; memory usage is zero.
//! An unknown sample count or history (`None`) is not treated as zero and does not block a
//! recommendation; the recommendation carries it so a message can say so.

use thiserror::Error;

use super::usage::Usage;
use crate::quantity::{format_bytes_binary, format_millicores, Quantity};

const KI: i128 = 1 << 10;
const MI: i128 = 1 << 20;
const GI: i128 = 1 << 30;

/// One, in parts per million.
const PPM: i128 = 1_000_000;

/// Largest usable byte value (1 YiB, far beyond any node); larger ones are bogus data.
const MAX_BYTES: f64 = 1_208_925_819_614_629_174_706_176.0; // 2^80

/// Largest usable CPU value in cores.
const MAX_CORES: f64 = 1e9;

/// Steps for readable memory values, coarsest first.
const MEMORY_STEPS: [i128; 6] = [GI, 256 * MI, 64 * MI, MI, KI, 1];

/// Every threshold of the recommendation engine and of the usage rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Headroom over the memory P99: `0.15` recommends P99 × 1.15. Default 0.15.
    pub memory_margin: f64,
    /// Headroom over the CPU P99. Default 0.15.
    pub cpu_margin: f64,
    /// After an OOM kill, at least `limit × oom_bump_factor`. Default 1.2.
    pub oom_bump_factor: f64,
    /// After an OOM kill, at least `limit + oom_bump_min_bytes`. Default 100Mi.
    pub oom_bump_min_bytes: i128,
    /// Fewer memory samples than this give no recommendation. Default 100.
    pub min_samples: u64,
    /// Less history than this gives no recommendation. Default 3 h (10800 s).
    pub min_history_seconds: u64,
    /// FIT004: the fewest sequences of the context the KV cache should hold at once when the
    /// engine names no batch size (`--max-num-seqs`). Default 1.
    pub concurrent_requests: u64,
    /// Readable memory rounding may add up to this fraction of the value. Default 0.05.
    pub memory_round_tolerance: f64,
    /// ... or up to this many bytes, whichever is larger. Default 64Mi.
    pub memory_round_min_slack_bytes: i128,
    /// Readable CPU rounding to whole cores or 100m may add up to this fraction. Default 0.05.
    pub cpu_round_tolerance: f64,
    /// Whole cores are only suggested from this many millicores up. Default 4000 (4 cores).
    pub cpu_whole_core_min_millicores: i128,
    /// MEM002: memory is overprovisioned when the current value exceeds the computed
    /// recommendation by this factor. Default 1.5.
    pub overprovision_factor: f64,
    /// The CPU request is far from the recommendation when above `factor ×` or below
    /// `1/factor ×` the computed value. Default 2.0.
    pub cpu_far_factor: f64,
    /// A GPU is under-used when its average utilisation is below this fraction. Default 0.30.
    pub gpu_underuse_threshold: f64,
    /// GPU memory is under pressure when P99 framebuffer use / capacity reaches this.
    /// Default 0.90.
    pub gpu_memory_pressure: f64,
    /// `true`: requests = limits for CPU and memory on GPU containers (Guaranteed QoS).
    /// `false`: memory requests = limits, CPU limits left unset. Default true.
    pub guaranteed: bool,
    /// An inference engine's KV cache is under pressure when its P99 usage reaches this.
    /// Default 0.90.
    pub kv_cache_pressure: f64,
    /// How the cluster's GPU operator advertises MIG slices (GPU013's fix). Default `mixed`.
    pub mig_strategy: MigStrategy,
}

/// The GPU operator's MIG strategy: `mixed` advertises `nvidia.com/mig-<profile>`, `single`
/// keeps `nvidia.com/gpu` and tells slices apart by node label.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MigStrategy {
    #[default]
    Mixed,
    Single,
}

impl MigStrategy {
    pub fn parse(s: &str) -> Option<MigStrategy> {
        match s {
            "mixed" => Some(MigStrategy::Mixed),
            "single" => Some(MigStrategy::Single),
            _ => None,
        }
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            memory_margin: 0.15,
            cpu_margin: 0.15,
            oom_bump_factor: 1.2,
            oom_bump_min_bytes: 100 * MI,
            min_samples: 100,
            min_history_seconds: 3 * 3600,
            concurrent_requests: 1,
            memory_round_tolerance: 0.05,
            memory_round_min_slack_bytes: 64 * MI,
            cpu_round_tolerance: 0.05,
            cpu_whole_core_min_millicores: 4000,
            overprovision_factor: 1.5,
            cpu_far_factor: 2.0,
            gpu_underuse_threshold: 0.30,
            gpu_memory_pressure: 0.90,
            guaranteed: true,
            kv_cache_pressure: 0.90,
            mig_strategy: MigStrategy::Mixed,
        }
    }
}

/// A [`Policy`] field with a value that makes no sense.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("policy {field} = {value} is invalid: expected {expected}")]
pub struct PolicyError {
    pub field: &'static str,
    pub value: String,
    pub expected: &'static str,
}

impl Policy {
    /// Checks every field's range. The functions here never panic on an invalid policy
    /// (negative margins count as zero, factors below one as one), but a configuration
    /// loader should reject one with this.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let ratio = |field, v: f64, ok: bool, expected| {
            if v.is_finite() && ok {
                Ok(())
            } else {
                Err(PolicyError {
                    field,
                    value: v.to_string(),
                    expected,
                })
            }
        };
        let fraction = "a number from 0 to 1";
        ratio(
            "memory_margin",
            self.memory_margin,
            (0.0..=10.0).contains(&self.memory_margin),
            "a number from 0 to 10",
        )?;
        ratio(
            "cpu_margin",
            self.cpu_margin,
            (0.0..=10.0).contains(&self.cpu_margin),
            "a number from 0 to 10",
        )?;
        ratio(
            "oom_bump_factor",
            self.oom_bump_factor,
            (1.0..=100.0).contains(&self.oom_bump_factor),
            "a number from 1 to 100",
        )?;
        ratio(
            "overprovision_factor",
            self.overprovision_factor,
            (1.0..=1000.0).contains(&self.overprovision_factor),
            "a number from 1 to 1000",
        )?;
        ratio(
            "cpu_far_factor",
            self.cpu_far_factor,
            (1.0..=1000.0).contains(&self.cpu_far_factor),
            "a number from 1 to 1000",
        )?;
        for (field, v) in [
            ("memory_round_tolerance", self.memory_round_tolerance),
            ("cpu_round_tolerance", self.cpu_round_tolerance),
            ("gpu_underuse_threshold", self.gpu_underuse_threshold),
            ("gpu_memory_pressure", self.gpu_memory_pressure),
            ("kv_cache_pressure", self.kv_cache_pressure),
        ] {
            ratio(field, v, (0.0..=1.0).contains(&v), fraction)?;
        }
        for (field, v) in [
            ("oom_bump_min_bytes", self.oom_bump_min_bytes),
            (
                "memory_round_min_slack_bytes",
                self.memory_round_min_slack_bytes,
            ),
            (
                "cpu_whole_core_min_millicores",
                self.cpu_whole_core_min_millicores,
            ),
        ] {
            if !(0..=1 << 80).contains(&v) {
                return Err(PolicyError {
                    field,
                    value: v.to_string(),
                    expected: "a non-negative number",
                });
            }
        }
        Ok(())
    }
}

/// Why a value could not be recommended (or a usage rule cannot be decided).
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum NoRecommendation {
    /// The series needed was not measured; `series` names it, e.g. `memory_bytes P99 or max`.
    #[error("no {series} measured")]
    NoSeries { series: &'static str },
    /// Too few samples to trust the percentiles.
    #[error("only {samples} samples (at least {min} needed)")]
    TooFewSamples { samples: u64, min: u64 },
    /// The samples span too short a time.
    #[error(
        "only {} of history (at least {} needed)",
        format_duration(*seconds),
        format_duration(*min_seconds as f64)
    )]
    TooLittleHistory { seconds: f64, min_seconds: u64 },
    /// A value that cannot be a measurement: negative, NaN, infinite or implausibly large.
    #[error("{series} = {value} is not a usable measurement")]
    Unusable { series: &'static str, value: f64 },
    /// Memory usage measured as zero: a broken metric, not a real container.
    #[error("{series} is zero, which no running container uses (broken metric?)")]
    ZeroUsage { series: &'static str },
}

/// Which term of the memory rule determined the computed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryBasis {
    /// `P99 × (1 + margin)`.
    P99WithMargin,
    /// The observed max was above `P99 × (1 + margin)`.
    ObservedMax,
    /// P99 not measured: `max × (1 + margin)`.
    MaxWithMargin,
    /// The OOM floor `max(limit × factor, limit + min)` was above the usage terms.
    OomBump,
}

/// The value an OOM bump starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OomReference {
    /// The limit the container ran with (`memory_limit_bytes`): the one it was killed at.
    MeasuredLimit(i128),
    /// No limit measured (none set, or an older snapshot): the observed max. Sampling can miss
    /// the spike that killed the container, so this may be below the limit that was hit.
    ObservedMax(i128),
}

impl OomReference {
    pub fn bytes(self) -> i128 {
        match self {
            OomReference::MeasuredLimit(b) | OomReference::ObservedMax(b) => b,
        }
    }
}

/// A memory value (use it for both request and limit), with the inputs behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryRecommendation {
    /// The recommended value: `computed_bytes` after readable rounding.
    pub bytes: i128,
    /// `bytes` as a quantity: `34Gi`, `1536Mi`.
    pub quantity: String,
    /// The exact value the rule computed, before readable rounding.
    pub computed_bytes: i128,
    /// Which term determined `computed_bytes`.
    pub basis: MemoryBasis,
    /// Measured P99 and max, in bytes, as given.
    pub p99_bytes: Option<f64>,
    pub max_bytes: Option<f64>,
    /// The margin applied (from the policy).
    pub margin: f64,
    /// OOM kills in the window (0 when not measured).
    pub oom_kills: u64,
    /// What the OOM floor was computed from, after an OOM kill in the window.
    pub oom_reference: Option<OomReference>,
    /// The OOM floor, after an OOM kill in the window with a limit or max measured.
    pub oom_floor_bytes: Option<i128>,
    /// Data quality, as measured (`None` = unknown).
    pub samples: Option<u64>,
    pub history_seconds: Option<f64>,
}

impl MemoryRecommendation {
    /// True when the OOM floor raised the value above what usage alone gives.
    pub fn oom_bump_applied(&self) -> bool {
        self.basis == MemoryBasis::OomBump
    }
}

/// A CPU value (request; also limit under a guaranteed policy), with the inputs behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuRecommendation {
    /// The recommended value: `computed_millicores` after readable rounding.
    pub millicores: i128,
    /// `millicores` as a quantity: `2500m`, `4`.
    pub quantity: String,
    /// The exact value the rule computed, before readable rounding.
    pub computed_millicores: i128,
    /// Measured P99 in cores.
    pub p99_cores: f64,
    /// The margin applied (from the policy).
    pub margin: f64,
    pub samples: Option<u64>,
    pub history_seconds: Option<f64>,
}

/// Recommended memory for a container: see the module documentation for the rule. A pure
/// function of the measurement and the policy.
pub fn memory(usage: &Usage, policy: &Policy) -> Result<MemoryRecommendation, NoRecommendation> {
    let stats = usage.memory_bytes.unwrap_or_default();
    if stats.p99.is_none() && stats.max.is_none() {
        return Err(NoRecommendation::NoSeries {
            series: "memory_bytes P99 or max",
        });
    }
    check_data(usage, policy)?;
    let p99 = stats
        .p99
        .map(|v| bytes_ceil("memory_bytes.p99", v))
        .transpose()?;
    let max = stats
        .max
        .map(|v| bytes_ceil("memory_bytes.max", v))
        .transpose()?;
    if p99.unwrap_or(0) == 0 && max.unwrap_or(0) == 0 {
        return Err(NoRecommendation::ZeroUsage {
            series: "memory_bytes",
        });
    }
    let factor = PPM + ppm(policy.memory_margin);
    let overflow = |series, value| NoRecommendation::Unusable { series, value };
    let (mut computed, mut basis) = match (p99, max) {
        (Some(p), m) => {
            let with_margin = mul_ppm_ceil(p, factor)
                .ok_or_else(|| overflow("memory_bytes.p99", stats.p99.unwrap_or(0.0)))?;
            match m {
                Some(m) if m > with_margin => (m, MemoryBasis::ObservedMax),
                _ => (with_margin, MemoryBasis::P99WithMargin),
            }
        }
        (None, Some(m)) => (
            mul_ppm_ceil(m, factor)
                .ok_or_else(|| overflow("memory_bytes.max", stats.max.unwrap_or(0.0)))?,
            MemoryBasis::MaxWithMargin,
        ),
        (None, None) => {
            return Err(NoRecommendation::NoSeries {
                series: "memory_bytes P99 or max",
            })
        }
    };

    let oom_kills = usage.oom_kills.unwrap_or(0);
    let limit_at_kill = usage
        .memory_limit_bytes
        .map(|v| bytes_ceil("memory_limit_bytes", v))
        .transpose()?
        .filter(|&l| l > 0);
    let oom_reference = match limit_at_kill {
        Some(limit) => Some(OomReference::MeasuredLimit(limit)),
        None => max.filter(|&m| m > 0).map(OomReference::ObservedMax),
    }
    .filter(|_| oom_kills > 0);
    let oom_floor = oom_reference.map(|r| oom_floor(r.bytes(), policy));
    if let Some(floor) = oom_floor {
        if floor > computed {
            computed = floor;
            basis = MemoryBasis::OomBump;
        }
    }

    let bytes = round_memory_readable(computed, policy);
    Ok(MemoryRecommendation {
        bytes,
        quantity: format_bytes_binary(bytes),
        computed_bytes: computed,
        basis,
        p99_bytes: stats.p99,
        max_bytes: stats.max,
        margin: policy.memory_margin,
        oom_kills,
        oom_reference,
        oom_floor_bytes: oom_floor,
        samples: usage.samples,
        history_seconds: usage.history_seconds,
    })
}

/// `max(ceil(limit × oom_bump_factor), limit + oom_bump_min_bytes)`; saturates instead of
/// overflowing (for absurd limits).
fn oom_floor(limit: i128, policy: &Policy) -> i128 {
    let by_factor = mul_ppm_ceil(limit, ppm(policy.oom_bump_factor).max(PPM)).unwrap_or(i128::MAX);
    let by_bytes = limit.saturating_add(policy.oom_bump_min_bytes.max(0));
    by_factor.max(by_bytes)
}

/// Recommended CPU for a container: see the module documentation for the rule.
pub fn cpu(usage: &Usage, policy: &Policy) -> Result<CpuRecommendation, NoRecommendation> {
    let p99 = usage
        .cpu_cores
        .and_then(|s| s.p99)
        .ok_or(NoRecommendation::NoSeries {
            series: "cpu_cores P99",
        })?;
    check_data(usage, policy)?;
    let unusable = NoRecommendation::Unusable {
        series: "cpu_cores.p99",
        value: p99,
    };
    let nanos = cores_to_nanos_ceil(p99).ok_or_else(|| unusable.clone())?;
    let with_margin = mul_ppm_ceil(nanos, PPM + ppm(policy.cpu_margin)).ok_or(unusable)?;
    // Nanocores to millicores, rounding up; at least 1m.
    let computed = ceil_div(with_margin, 1_000_000).max(1);
    let millicores = round_cpu_readable(computed, policy);
    Ok(CpuRecommendation {
        millicores,
        quantity: format_millicores(millicores),
        computed_millicores: computed,
        p99_cores: p99,
        margin: policy.cpu_margin,
        samples: usage.samples,
        history_seconds: usage.history_seconds,
    })
}

/// The data-quality gate shared by every usage-based decision: enough samples and enough
/// history, where known. Unknown (`None`) counts and histories pass.
pub fn check_data(usage: &Usage, policy: &Policy) -> Result<(), NoRecommendation> {
    if let Some(samples) = usage.samples {
        if samples < policy.min_samples {
            return Err(NoRecommendation::TooFewSamples {
                samples,
                min: policy.min_samples,
            });
        }
    }
    if let Some(seconds) = usage.history_seconds {
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(NoRecommendation::Unusable {
                series: "history_seconds",
                value: seconds,
            });
        }
        if seconds < policy.min_history_seconds as f64 {
            return Err(NoRecommendation::TooLittleHistory {
                seconds,
                min_seconds: policy.min_history_seconds,
            });
        }
    }
    Ok(())
}

/// Rounds `bytes` up to a readable binary quantity, at most
/// `max(bytes × memory_round_tolerance, memory_round_min_slack_bytes)` above it: the
/// coarsest of `1Gi`, `256Mi`, `64Mi`, `1Mi`, `1Ki`, `1` whose multiple fits. Never below
/// `bytes`; values below 1 are treated as 1 byte (so the result is at least 1).
///
/// With the defaults: `35_650_000_000` → `34Gi`; `20_615_843_021` (16Gi × 1.2) → `20Gi`;
/// `373_293_056` (356Mi) → `384Mi`; `1000Mi` → `1Gi`; `300Mi` → `320Mi`.
pub fn round_memory_readable(bytes: i128, policy: &Policy) -> i128 {
    let bytes = bytes.max(1);
    let slack = mul_ppm_floor(bytes, ppm(policy.memory_round_tolerance))
        .max(policy.memory_round_min_slack_bytes.max(0));
    for step in MEMORY_STEPS {
        if let Some(r) = ceil_to(bytes, step) {
            if r - bytes <= slack {
                return r;
            }
        }
    }
    bytes
}

/// Rounds millicores up to a readable CPU value: whole cores when `m >=
/// cpu_whole_core_min_millicores` and within `m × cpu_round_tolerance`, else a multiple of
/// `100m` within that tolerance, else a multiple of `10m`. Never below `m`; values below 1
/// are treated as `1m` (so the result is at least `10m`).
///
/// With the defaults: `3910` → `4000` (`4`), `5750` → `6000`, `5175` → `5200`, `1380` →
/// `1400`, `58` → `60`.
pub fn round_cpu_readable(millicores: i128, policy: &Policy) -> i128 {
    let m = millicores.max(1);
    let slack = mul_ppm_floor(m, ppm(policy.cpu_round_tolerance));
    if m >= policy.cpu_whole_core_min_millicores {
        if let Some(r) = ceil_to(m, 1000).filter(|r| r - m <= slack) {
            return r;
        }
    }
    if let Some(r) = ceil_to(m, 100).filter(|r| r - m <= slack) {
        return r;
    }
    ceil_to(m, 10).unwrap_or(m)
}

/// Requests and limits to set, as quantities; `None` = leave unset / no recommendation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourcePlan {
    pub memory_request: Option<String>,
    pub memory_limit: Option<String>,
    pub cpu_request: Option<String>,
    pub cpu_limit: Option<String>,
}

/// What to set for a GPU container: memory request = limit = the memory recommendation;
/// CPU request = the CPU recommendation, and CPU limit = request only when
/// `policy.guaranteed` (otherwise the CPU limit stays unset).
pub fn plan(
    memory: Option<&MemoryRecommendation>,
    cpu: Option<&CpuRecommendation>,
    policy: &Policy,
) -> ResourcePlan {
    let mem = memory.map(|m| m.quantity.clone());
    let cpu = cpu.map(|c| c.quantity.clone());
    ResourcePlan {
        memory_request: mem.clone(),
        memory_limit: mem,
        cpu_limit: if policy.guaranteed { cpu.clone() } else { None },
        cpu_request: cpu,
    }
}

/// MEM002: true when the current memory value (request or limit, in bytes) is more than
/// `overprovision_factor ×` the computed recommendation (`computed_bytes`, before rounding).
pub fn memory_overprovisioned(
    current_bytes: i128,
    rec: &MemoryRecommendation,
    policy: &Policy,
) -> bool {
    exceeds_ratio(
        current_bytes,
        rec.computed_bytes,
        policy.overprovision_factor,
    )
}

/// True when the current CPU request (millicores) is above `cpu_far_factor ×` or below
/// `1/cpu_far_factor ×` the computed recommendation (`computed_millicores`).
pub fn cpu_far_from(current_millicores: i128, rec: &CpuRecommendation, policy: &Policy) -> bool {
    exceeds_ratio(
        current_millicores,
        rec.computed_millicores,
        policy.cpu_far_factor,
    ) || exceeds_ratio(
        rec.computed_millicores,
        current_millicores,
        policy.cpu_far_factor,
    )
}

/// `Some(avg)` when the average GPU utilisation is below `gpu_underuse_threshold`, `None`
/// when it is not; an error when it was not measured or the data is too thin
/// ([`check_data`]). Engine activity stands in where utilisation is absent, and where it is 0
/// while engine activity is not: a GPU that ran no kernel has no engine activity, so that 0 is
/// dcgm-exporter's report for a MIG instance, not idleness.
pub fn gpu_underused(usage: &Usage, policy: &Policy) -> Result<Option<f64>, NoRecommendation> {
    Ok(gpu_underuse(usage, policy)?.map(|(avg, _)| avg))
}

/// [`gpu_underused`] with the name of the figure it judged, for the message: "GPU utilisation"
/// or, where that stands in, "GPU engine activity".
pub fn gpu_underuse(
    usage: &Usage,
    policy: &Policy,
) -> Result<Option<(f64, &'static str)>, NoRecommendation> {
    const UTIL: &str = "GPU utilisation";
    const ENGINE: &str = "GPU engine activity";
    let util = usage.gpu_utilization.and_then(|g| g.avg);
    let engine = usage.gpu_engine_active.and_then(|g| g.avg);
    let (avg, measure) = match (util, engine) {
        (Some(u), Some(e)) if u == 0.0 && e > 0.0 => Some((e, ENGINE)),
        (Some(u), _) => Some((u, UTIL)),
        (None, e) => e.map(|e| (e, ENGINE)),
    }
    .ok_or(NoRecommendation::NoSeries {
        series: "gpu_utilization average",
    })?;
    check_data(usage, policy)?;
    if !(0.0..=1.0).contains(&avg) {
        return Err(NoRecommendation::Unusable {
            series: "gpu_utilization.avg",
            value: avg,
        });
    }
    Ok((avg < policy.gpu_underuse_threshold).then_some((avg, measure)))
}

/// `Some(ratio)` when P99 framebuffer use / capacity is at least `gpu_memory_pressure`,
/// `None` when it is below; an error when either was not measured or the data is too thin.
pub fn gpu_memory_pressure(
    usage: &Usage,
    policy: &Policy,
) -> Result<Option<f64>, NoRecommendation> {
    let g = usage.gpu_memory_bytes.unwrap_or_default();
    let p99 = g.p99.ok_or(NoRecommendation::NoSeries {
        series: "gpu_memory_bytes P99",
    })?;
    let capacity = g.capacity.ok_or(NoRecommendation::NoSeries {
        series: "gpu_memory_bytes capacity",
    })?;
    check_data(usage, policy)?;
    for (series, value) in [
        ("gpu_memory_bytes.p99", p99),
        ("gpu_memory_bytes.capacity", capacity),
    ] {
        if !value.is_finite() || value < 0.0 {
            return Err(NoRecommendation::Unusable { series, value });
        }
    }
    if capacity == 0.0 {
        return Err(NoRecommendation::Unusable {
            series: "gpu_memory_bytes.capacity",
            value: capacity,
        });
    }
    let ratio = p99 / capacity;
    Ok((ratio >= policy.gpu_memory_pressure).then_some(ratio))
}

/// Formats seconds as `14d`, `2h30m`, `45s` (whole seconds, zero units omitted).
pub fn format_duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 1.0 {
        return if seconds.is_finite() && seconds >= 0.0 {
            "0s".to_owned()
        } else {
            seconds.to_string()
        };
    }
    // Saturating cast: absurd values print as a huge day count.
    let mut rest = seconds as u64;
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Exact integer helpers.

/// A policy ratio in parts per million, rounded to nearest; non-finite or negative is 0,
/// capped at 10^6 (a factor of a million).
fn ppm(x: f64) -> i128 {
    if x.is_finite() && x > 0.0 {
        (x.min(1e6) * 1e6).round() as i128
    } else {
        0
    }
}

/// `ceil(v × ratio_ppm / 10^6)` for `v, ratio_ppm >= 0`; `None` on overflow.
fn mul_ppm_ceil(v: i128, ratio_ppm: i128) -> Option<i128> {
    Some(ceil_div(v.checked_mul(ratio_ppm)?, PPM))
}

/// `floor(v × ratio_ppm / 10^6)`, saturating.
fn mul_ppm_floor(v: i128, ratio_ppm: i128) -> i128 {
    v.checked_mul(ratio_ppm).map_or(i128::MAX, |p| p / PPM)
}

/// True when `a > factor × b` (exactly, at ppm precision; factors below 1 count as 1).
fn exceeds_ratio(a: i128, b: i128, factor: f64) -> bool {
    let f = ppm(factor).max(PPM);
    match (a.checked_mul(PPM), b.checked_mul(f)) {
        (Some(lhs), Some(rhs)) => lhs > rhs,
        (None, Some(_)) => a > 0,
        (_, None) => false,
    }
}

/// `ceil(n / d)` for `n >= 0`, `d > 0`.
fn ceil_div(n: i128, d: i128) -> i128 {
    n / d + i128::from(n % d != 0)
}

/// Smallest multiple of `step` that is `>= v` (for `v >= 0`, `step > 0`); `None` on overflow.
fn ceil_to(v: i128, step: i128) -> Option<i128> {
    let rem = v % step;
    if rem == 0 {
        Some(v)
    } else {
        v.checked_add(step - rem)
    }
}

/// A byte statistic rounded up to whole bytes, if it is a plausible measurement.
fn bytes_ceil(series: &'static str, v: f64) -> Result<i128, NoRecommendation> {
    if v.is_finite() && (0.0..=MAX_BYTES).contains(&v) {
        // Exact: a finite f64 below 2^80 rounded up is an integer that fits i128.
        Ok(v.ceil() as i128)
    } else {
        Err(NoRecommendation::Unusable { series, value: v })
    }
}

/// Cores to nanocores, rounded up, from the shortest decimal form of `cores`.
fn cores_to_nanos_ceil(cores: f64) -> Option<i128> {
    if !(cores.is_finite() && (0.0..=MAX_CORES).contains(&cores)) {
        return None;
    }
    // `Display` for f64 prints the shortest decimal that round-trips, never in exponent
    // form, so appending `e9` scales it exactly.
    format!("{cores}e9").parse::<Quantity>().ok()?.ceil_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::usage::{GpuMemory, GpuUtilization, Stats};

    fn usage(p99: Option<f64>, max: Option<f64>) -> Usage {
        Usage {
            samples: Some(20_160),
            history_seconds: Some(1_209_600.0),
            memory_bytes: Some(Stats {
                p50: None,
                p99,
                max,
            }),
            cpu_cores: None,
            gpu_memory_bytes: None,
            gpu_utilization: None,
            oom_kills: None,
            memory_limit_bytes: None,
            ..Usage::default()
        }
    }

    fn cpu_usage(p99: f64) -> Usage {
        Usage {
            cpu_cores: Some(Stats {
                p50: None,
                p99: Some(p99),
                max: None,
            }),
            ..usage(None, None)
        }
    }

    fn mem(u: &Usage) -> MemoryRecommendation {
        match memory(u, &Policy::default()) {
            Ok(r) => r,
            Err(e) => panic!("expected a recommendation: {e}"),
        }
    }

    fn cpu_rec(p99: f64) -> CpuRecommendation {
        match cpu(&cpu_usage(p99), &Policy::default()) {
            Ok(r) => r,
            Err(e) => panic!("expected a recommendation: {e}"),
        }
    }

    /// The readable-rounding contract with the default policy.
    fn assert_memory_bound(computed: i128, rounded: i128) {
        let slack = (computed / 20).max(64 * MI);
        assert!(rounded >= computed, "{computed} rounded below to {rounded}");
        assert!(
            rounded - computed <= slack,
            "{computed} -> {rounded}: {} above, slack {slack}",
            rounded - computed
        );
    }

    #[test]
    fn policy_defaults() {
        let p = Policy::default();
        assert_eq!(p.memory_margin, 0.15);
        assert_eq!(p.cpu_margin, 0.15);
        assert_eq!(p.oom_bump_factor, 1.2);
        assert_eq!(p.oom_bump_min_bytes, 104_857_600);
        assert_eq!(p.min_samples, 100);
        assert_eq!(p.min_history_seconds, 10_800);
        assert_eq!(p.overprovision_factor, 1.5);
        assert_eq!(p.cpu_far_factor, 2.0);
        assert_eq!(p.gpu_underuse_threshold, 0.30);
        assert_eq!(p.gpu_memory_pressure, 0.90);
        assert!(p.guaranteed);
        assert_eq!(p.validate(), Ok(()));
        let bad = Policy {
            memory_margin: -0.1,
            ..Policy::default()
        };
        assert_eq!(
            bad.validate().map_err(|e| e.to_string()),
            Err("policy memory_margin = -0.1 is invalid: expected a number from 0 to 10".into())
        );
        let bad = Policy {
            gpu_memory_pressure: f64::NAN,
            ..Policy::default()
        };
        assert_eq!(
            bad.validate().map_err(|e| e.field),
            Err("gpu_memory_pressure")
        );
    }

    #[test]
    fn memory_from_p99_with_margin() {
        // max(3.1e10 × 1.15, 3.3e10) = 35.65e9 bytes (33.20Gi) -> 34Gi.
        let r = mem(&usage(Some(3.1e10), Some(3.3e10)));
        assert_eq!(r.computed_bytes, 35_650_000_000);
        assert_eq!(r.basis, MemoryBasis::P99WithMargin);
        assert_eq!(r.bytes, 34 * GI);
        assert_eq!(r.quantity, "34Gi");
        assert_memory_bound(r.computed_bytes, r.bytes);
        // 34Gi is 857_222_016 bytes (2.4%) above; 5% would allow 1_782_500_000.
        assert_eq!(r.bytes - r.computed_bytes, 857_222_016);
        assert_eq!(r.p99_bytes, Some(3.1e10));
        assert_eq!(r.max_bytes, Some(3.3e10));
        assert_eq!(r.margin, 0.15);
        assert!(!r.oom_bump_applied());
        assert_eq!(r.oom_floor_bytes, None);
        // The fixed-step helper in quantity.rs would give the same here, but is not bounded
        // by 5% in general (10Gi + 1 byte -> 11Gi is ~10% above).
        assert_eq!(
            crate::quantity::round_up_bytes_readable(10 * GI + 1),
            11 * GI
        );
        assert_eq!(
            round_memory_readable(10 * GI + 1, &Policy::default()),
            10 * GI + 256 * MI
        );
    }

    #[test]
    fn memory_observed_max_wins() {
        // max(1e10 × 1.15, 2e10) = 2e10 (18.63Gi) -> 19Gi.
        let r = mem(&usage(Some(1e10), Some(2e10)));
        assert_eq!(r.computed_bytes, 20_000_000_000);
        assert_eq!(r.basis, MemoryBasis::ObservedMax);
        assert_eq!(r.quantity, "19Gi");
        assert_memory_bound(r.computed_bytes, r.bytes);
    }

    #[test]
    fn memory_without_p99_uses_max_with_margin() {
        // 2.5e8 × 1.15 = 287_500_000 (274.2Mi) -> 320Mi (256Mi steps would be 37% above).
        let r = mem(&usage(None, Some(2.5e8)));
        assert_eq!(r.computed_bytes, 287_500_000);
        assert_eq!(r.basis, MemoryBasis::MaxWithMargin);
        assert_eq!(r.quantity, "320Mi");
        // Fractional bytes round up before the margin: ceil(1000.5) = 1001 -> 1151.15 -> 1152.
        let r = mem(&usage(Some(1000.5), None));
        assert_eq!(r.computed_bytes, 1152);
        assert_eq!(r.quantity, "64Mi");
    }

    /// A container OOMKilled `kills` times, with P99 and max in bytes and the limit it ran with.
    fn oom(kills: u64, p99: f64, max: f64, limit_at_kill: Option<f64>) -> Usage {
        Usage {
            oom_kills: Some(kills),
            memory_limit_bytes: limit_at_kill,
            ..usage(Some(p99), Some(max))
        }
    }

    #[test]
    fn memory_oom_bump() {
        const G: f64 = GI as f64;
        const M: f64 = MI as f64;
        // (case, usage, computed bytes, basis, reference, quantity)
        type Case = (
            &'static str,
            Usage,
            i128,
            MemoryBasis,
            Option<OomReference>,
            &'static str,
        );
        let cases: [Case; 7] = [
            (
                // 16Gi limit at the kill: at least max(16Gi × 1.2, 16Gi + 100Mi) = 19.2Gi.
                "limit at kill known, above usage",
                oom(1, 1.2e10, 1.5e10, Some(16.0 * G)),
                20_615_843_021, // ceil(17179869184 × 1.2)
                MemoryBasis::OomBump,
                Some(OomReference::MeasuredLimit(16 * GI)),
                "20Gi",
            ),
            (
                // The MPIJob worker: killed at 32000Mi while sampling saw 20.8Gi at
                // most. The bump starts from the limit it was killed at, not from usage.
                "limit at kill known, spike missed by sampling",
                oom(1, 19.0 * G, 20.8 * G, Some(32000.0 * M)),
                38400 * MI,
                MemoryBasis::OomBump,
                Some(OomReference::MeasuredLimit(32000 * MI)),
                "38Gi",
            ),
            (
                // Small limit: the +100Mi term wins: max(307.2Mi, 356Mi) = 356Mi -> 384Mi.
                "small limit at kill",
                oom(3, 1e8, 2e8, Some(256.0 * M)),
                356 * MI,
                MemoryBasis::OomBump,
                Some(OomReference::MeasuredLimit(256 * MI)),
                "384Mi",
            ),
            (
                // Usage above the floor: the floor is computed but not binding.
                "usage above the floor",
                oom(1, 3.1e10, 3.3e10, Some(16.0 * G)),
                35_650_000_000,
                MemoryBasis::P99WithMargin,
                Some(OomReference::MeasuredLimit(16 * GI)),
                "34Gi",
            ),
            (
                // The PyTorchJob without a limit: P99 20Gi, max 22Gi, killed (by the
                // node). The bump starts from the observed max: max(26.4Gi, 22Gi + 100Mi).
                "no limit: from the observed max",
                oom(1, 20.0 * G, 22.0 * G, None),
                28_346_784_154, // ceil(22Gi × 1.2)
                MemoryBasis::OomBump,
                Some(OomReference::ObservedMax(22 * GI)),
                "27Gi",
            ),
            (
                // A limit of 0 is no limit.
                "zero limit measured",
                oom(1, 20.0 * G, 22.0 * G, Some(0.0)),
                28_346_784_154,
                MemoryBasis::OomBump,
                Some(OomReference::ObservedMax(22 * GI)),
                "27Gi",
            ),
            (
                // No OOM kill: the limit it ran with is irrelevant.
                "no kill",
                oom(0, 1e9, 1e9, Some(64.0 * G)),
                1_150_000_000,
                MemoryBasis::P99WithMargin,
                None,
                "1152Mi",
            ),
        ];
        for (case, u, computed, basis, reference, quantity) in cases {
            let r = mem(&u);
            assert_eq!(r.computed_bytes, computed, "{case}");
            assert_eq!(r.basis, basis, "{case}");
            assert_eq!(r.oom_reference, reference, "{case}");
            assert_eq!(
                r.oom_bump_applied(),
                basis == MemoryBasis::OomBump,
                "{case}"
            );
            assert_eq!(r.quantity, quantity, "{case}");
            assert_memory_bound(r.computed_bytes, r.bytes);
            // After a kill the recommendation is never below the limit it was killed at.
            if let Some(OomReference::MeasuredLimit(l)) = r.oom_reference {
                assert!(r.bytes > l, "{case}");
            }
        }
        // Absurd limits saturate instead of overflowing or panicking.
        let r = mem(&oom(1, 1e9, 1e9, Some(1e24)));
        assert!(memory(&oom(1, 1e9, 1e9, Some(1e30)), &Policy::default()).is_err());
        assert!(r.bytes >= r.computed_bytes);
        assert!(memory(&oom(1, 1e9, 1e9, Some(f64::NAN)), &Policy::default()).is_err());
    }

    /// The recommendation is a pure function of the measurement: a second `--fix` round or a
    /// later run sees the same usage and gets the same number, whatever the manifest now says.
    #[test]
    fn memory_recommendation_ignores_the_manifest() {
        let u = oom(1, 1.2e10, 1.5e10, Some((16 * GI) as f64));
        let first = mem(&u);
        for _round in 0..3 {
            assert_eq!(mem(&u), first);
        }
    }

    #[test]
    fn no_recommendation_reasons() {
        let p = Policy::default();
        let few = Usage {
            samples: Some(99),
            ..usage(Some(3.1e10), None)
        };
        assert_eq!(
            memory(&few, &p),
            Err(NoRecommendation::TooFewSamples {
                samples: 99,
                min: 100
            })
        );
        assert_eq!(
            memory(&few, &p).map_err(|e| e.to_string()),
            Err("only 99 samples (at least 100 needed)".into())
        );
        let short = Usage {
            history_seconds: Some(5400.0),
            ..usage(Some(3.1e10), None)
        };
        assert_eq!(
            memory(&short, &p).map_err(|e| e.to_string()),
            Err("only 1h30m of history (at least 3h needed)".into())
        );
        // Exactly the minimum is enough.
        let edge = Usage {
            samples: Some(100),
            history_seconds: Some(10_800.0),
            ..usage(Some(3.1e10), None)
        };
        assert!(memory(&edge, &p).is_ok());
        // Unknown counts are not zero: they do not block, and are carried along.
        let unknown = Usage {
            samples: None,
            history_seconds: None,
            ..usage(Some(3.1e10), None)
        };
        let r = mem(&unknown);
        assert_eq!((r.samples, r.history_seconds), (None, None));

        let no_series = Usage {
            memory_bytes: Some(Stats {
                p50: Some(1e9),
                p99: None,
                max: None,
            }),
            ..usage(None, None)
        };
        assert_eq!(
            memory(&no_series, &p).map_err(|e| e.to_string()),
            Err("no memory_bytes P99 or max measured".into())
        );
        let none = Usage {
            memory_bytes: None,
            ..usage(None, None)
        };
        assert!(matches!(
            memory(&none, &p),
            Err(NoRecommendation::NoSeries { .. })
        ));
        assert!(matches!(
            cpu(&none, &p),
            Err(NoRecommendation::NoSeries {
                series: "cpu_cores P99"
            })
        ));
        // A missing series is reported before thin data.
        let both = Usage {
            samples: Some(1),
            ..none.clone()
        };
        assert!(matches!(
            memory(&both, &p),
            Err(NoRecommendation::NoSeries { .. })
        ));
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e30] {
            assert!(matches!(
                memory(&usage(Some(bad), None), &p),
                Err(NoRecommendation::Unusable {
                    series: "memory_bytes.p99",
                    ..
                })
            ));
            assert!(matches!(
                cpu(&cpu_usage(bad * 1e10), &p),
                Err(NoRecommendation::Unusable { .. })
            ));
        }
        assert_eq!(
            memory(&usage(Some(0.0), Some(0.0)), &p),
            Err(NoRecommendation::ZeroUsage {
                series: "memory_bytes"
            })
        );
        let nan_history = Usage {
            history_seconds: Some(f64::NAN),
            ..usage(Some(1e9), None)
        };
        assert!(matches!(
            memory(&nan_history, &p),
            Err(NoRecommendation::Unusable {
                series: "history_seconds",
                ..
            })
        ));
    }

    #[test]
    fn readable_memory_examples() {
        let p = Policy::default();
        let r = |b| round_memory_readable(b, &p);
        assert_eq!(r(1000 * MI), GI);
        assert_eq!(r(300 * MI), 320 * MI);
        assert_eq!(r(100 * MI), 128 * MI);
        assert_eq!(r(1), 64 * MI);
        assert_eq!(r(0), 64 * MI);
        assert_eq!(r(-7), 64 * MI);
        assert_eq!(r(GI), GI);
        assert_eq!(r(1536 * MI), 1536 * MI);
        assert_eq!(r(1537 * MI), 1600 * MI);
        // 5% of 3Gi is 153.6Mi, so 256Mi steps are too coarse here.
        assert_eq!(r(3 * GI + 1), 3 * GI + 64 * MI);
        assert_eq!(r(40 * GI + 1), 41 * GI);
        assert_eq!(format_bytes_binary(r(1537 * MI)), "1600Mi");
        // Every coarser step would overflow: the value itself (never below, never panics).
        assert_eq!(r(i128::MAX), i128::MAX);
        // Tolerance 0 and no minimum slack: only exact-fitting steps, else exact bytes.
        let exact = Policy {
            memory_round_tolerance: 0.0,
            memory_round_min_slack_bytes: 0,
            ..Policy::default()
        };
        assert_eq!(round_memory_readable(GI + 1, &exact), GI + 1);
        assert_eq!(round_memory_readable(5 * GI, &exact), 5 * GI);
    }

    #[test]
    fn cpu_examples() {
        // 3.4 × 1.15 = 3.91 cores -> 4 (2.3% above).
        let r = cpu_rec(3.4);
        assert_eq!(r.computed_millicores, 3910);
        assert_eq!(r.millicores, 4000);
        assert_eq!(r.quantity, "4");
        assert_eq!(r.p99_cores, 3.4);
        assert_eq!(r.margin, 0.15);
        // 5 × 1.15 = 5.75 -> 6 (4.3%).
        assert_eq!(cpu_rec(5.0).quantity, "6");
        // 4.5 × 1.15 = 5.175: 6 would be 16% above -> 5200m.
        let r = cpu_rec(4.5);
        assert_eq!(r.computed_millicores, 5175);
        assert_eq!(r.quantity, "5200m");
        // 1.2 × 1.15 = 1.38 -> 1400m.
        assert_eq!(cpu_rec(1.2).quantity, "1400m");
        // 2.17 × 1.15 = 2.4955 -> 2496m -> 2500m.
        let r = cpu_rec(2.17);
        assert_eq!(r.computed_millicores, 2496);
        assert_eq!(r.quantity, "2500m");
        // 0.05 × 1.15 = 57.5m -> 58m -> 60m (100m would be 72% above).
        let r = cpu_rec(0.05);
        assert_eq!(r.computed_millicores, 58);
        assert_eq!(r.quantity, "60m");
        // Idle: at least 1m, shown as 10m.
        let r = cpu_rec(0.0);
        assert_eq!(r.computed_millicores, 1);
        assert_eq!(r.quantity, "10m");
        // Exact decimal: 0.1 × 1.15 = 115m exactly, not 116m.
        assert_eq!(cpu_rec(0.1).computed_millicores, 115);
        // 3.5 × 1.15 = 4.025: 5 cores would be 24% above -> 4100m.
        assert_eq!(cpu_rec(3.5).quantity, "4100m");
        let few = Usage {
            samples: Some(10),
            ..cpu_usage(1.0)
        };
        assert!(matches!(
            cpu(&few, &Policy::default()),
            Err(NoRecommendation::TooFewSamples { samples: 10, .. })
        ));
    }

    #[test]
    fn plan_follows_guaranteed() {
        let m = mem(&usage(Some(3.1e10), Some(3.3e10)));
        let c = cpu_rec(3.4);
        let guaranteed = plan(Some(&m), Some(&c), &Policy::default());
        assert_eq!(
            guaranteed,
            ResourcePlan {
                memory_request: Some("34Gi".into()),
                memory_limit: Some("34Gi".into()),
                cpu_request: Some("4".into()),
                cpu_limit: Some("4".into()),
            }
        );
        let burstable = plan(
            Some(&m),
            Some(&c),
            &Policy {
                guaranteed: false,
                ..Policy::default()
            },
        );
        assert_eq!(burstable.cpu_request.as_deref(), Some("4"));
        assert_eq!(burstable.cpu_limit, None);
        assert_eq!(burstable.memory_limit.as_deref(), Some("34Gi"));
        assert_eq!(
            plan(None, None, &Policy::default()),
            ResourcePlan::default()
        );
    }

    #[test]
    fn rule_helpers() {
        let p = Policy::default();
        let m = mem(&usage(Some(3.1e10), Some(3.3e10))); // computed 35.65e9
        assert!(!memory_overprovisioned(53_475_000_000, &m, &p)); // exactly 1.5×
        assert!(memory_overprovisioned(53_475_000_001, &m, &p));
        assert!(memory_overprovisioned(64 * GI, &m, &p));
        assert!(!memory_overprovisioned(i128::MIN, &m, &p));
        assert!(memory_overprovisioned(i128::MAX, &m, &p));

        let c = cpu_rec(3.4); // computed 3910m
        assert!(!cpu_far_from(7820, &c, &p));
        assert!(cpu_far_from(7821, &c, &p));
        assert!(!cpu_far_from(1955, &c, &p));
        assert!(cpu_far_from(1954, &c, &p));
        assert!(cpu_far_from(0, &c, &p));

        let gpu = |avg: Option<f64>, p99: Option<f64>, cap: Option<f64>| Usage {
            gpu_utilization: Some(GpuUtilization { avg, p99: None }),
            gpu_memory_bytes: Some(GpuMemory {
                p99,
                max: None,
                capacity: cap,
            }),
            ..usage(None, None)
        };
        assert_eq!(
            gpu_underused(&gpu(Some(0.22), None, None), &p),
            Ok(Some(0.22))
        );
        assert_eq!(gpu_underused(&gpu(Some(0.30), None, None), &p), Ok(None));
        assert!(matches!(
            gpu_underused(&gpu(None, None, None), &p),
            Err(NoRecommendation::NoSeries { .. })
        ));
        assert!(matches!(
            gpu_underused(&gpu(Some(22.0), None, None), &p),
            Err(NoRecommendation::Unusable { .. })
        ));
        let r = gpu_memory_pressure(&gpu(None, Some(7.65e10), Some(8.5e10)), &p);
        assert_eq!(r, Ok(Some(0.9)));
        let r = gpu_memory_pressure(&gpu(None, Some(6.1e10), Some(8.5e10)), &p);
        assert_eq!(r, Ok(None));
        assert!(matches!(
            gpu_memory_pressure(&gpu(None, Some(6.1e10), None), &p),
            Err(NoRecommendation::NoSeries {
                series: "gpu_memory_bytes capacity"
            })
        ));
        assert!(matches!(
            gpu_memory_pressure(&gpu(None, Some(1.0), Some(0.0)), &p),
            Err(NoRecommendation::Unusable { .. })
        ));
        // Engine activity where utilisation is absent, or 0 beside it (a MIG instance).
        let with_engine = |util: Option<f64>, engine: f64| Usage {
            gpu_utilization: util.map(|avg| GpuUtilization {
                avg: Some(avg),
                p99: None,
            }),
            gpu_engine_active: Some(GpuUtilization {
                avg: Some(engine),
                p99: None,
            }),
            ..usage(None, None)
        };
        assert_eq!(gpu_underused(&with_engine(None, 0.12), &p), Ok(Some(0.12)));
        // The message names the figure it judged (issue 25: a MIG slice's engine activity
        // is not "utilisation").
        assert_eq!(
            gpu_underuse(&with_engine(None, 0.12), &p),
            Ok(Some((0.12, "GPU engine activity")))
        );
        assert_eq!(
            gpu_underuse(&with_engine(Some(0.0), 0.12), &p),
            Ok(Some((0.12, "GPU engine activity")))
        );
        assert_eq!(
            gpu_underuse(&with_engine(Some(0.1), 0.55), &p),
            Ok(Some((0.1, "GPU utilisation")))
        );
        assert_eq!(gpu_underused(&with_engine(None, 0.55), &p), Ok(None));
        assert_eq!(gpu_underused(&with_engine(Some(0.0), 0.55), &p), Ok(None));
        assert_eq!(
            gpu_underused(&with_engine(Some(0.1), 0.55), &p),
            Ok(Some(0.1))
        );
        let thin = Usage {
            samples: Some(3),
            ..gpu(Some(0.1), None, None)
        };
        assert!(matches!(
            gpu_underused(&thin, &p),
            Err(NoRecommendation::TooFewSamples { .. })
        ));
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(1_209_600.0), "14d");
        assert_eq!(format_duration(10_800.0), "3h");
        assert_eq!(format_duration(5400.0), "1h30m");
        assert_eq!(format_duration(90_061.0), "1d1h1m1s");
        assert_eq!(format_duration(0.4), "0s");
        assert_eq!(format_duration(f64::NAN), "NaN");
    }

    #[test]
    fn invalid_policies_never_panic_or_go_below() {
        let u = Usage {
            oom_kills: Some(1),
            cpu_cores: Some(Stats {
                p50: None,
                p99: Some(2.0),
                max: None,
            }),
            ..usage(Some(1e9), Some(2e9))
        };
        for x in [f64::NAN, f64::NEG_INFINITY, -5.0, 0.0, 1e300, f64::INFINITY] {
            let p = Policy {
                memory_margin: x,
                cpu_margin: x,
                oom_bump_factor: x,
                memory_round_tolerance: x,
                cpu_round_tolerance: x,
                overprovision_factor: x,
                cpu_far_factor: x,
                oom_bump_min_bytes: -1,
                memory_round_min_slack_bytes: i128::MIN,
                cpu_whole_core_min_millicores: i128::MIN,
                ..Policy::default()
            };
            assert!(p.validate().is_err());
            if let Ok(r) = memory(&u, &p) {
                assert!(r.bytes >= r.computed_bytes && r.computed_bytes >= 2_000_000_000);
                let _ = memory_overprovisioned(r.bytes, &r, &p);
            }
            if let Ok(r) = cpu(&u, &p) {
                assert!(r.millicores >= r.computed_millicores && r.computed_millicores >= 2000);
                let _ = cpu_far_from(r.millicores, &r, &p);
            }
        }
    }

    /// Deterministic xorshift64 generator for std-only property tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn random_memory_rounding_is_bounded_and_readable() {
        let p = Policy::default();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for _ in 0..100_000 {
            // Magnitudes from bytes to petabytes.
            let v = (rng.next() >> rng.below(64)) as i128 & ((1 << 52) - 1);
            let v = v.max(1);
            let r = round_memory_readable(v, &p);
            assert_memory_bound(v, r);
            // Always a whole number of Mi (the finest step needed with a 64Mi slack), and
            // the formatted quantity reads back exactly.
            assert_eq!(r % MI, 0, "{v} -> {r}");
            let q = format_bytes_binary(r);
            assert!(
                q.ends_with("Gi") || q.ends_with("Mi") || q.ends_with("Ti") || q.ends_with("Pi"),
                "{q}"
            );
            assert_eq!(
                q.parse::<Quantity>().ok().and_then(|q| q.ceil_bytes()),
                Some(r)
            );
            // The coarsest step: no coarser step would have fitted.
            for step in MEMORY_STEPS {
                if r % step == 0 {
                    break;
                }
                let coarser = ceil_to(v, step).unwrap_or(i128::MAX);
                assert!(
                    coarser - v > (v / 20).max(64 * MI),
                    "{v}: {step} fits but gave {r}"
                );
            }
        }
    }

    #[test]
    fn random_usage_gives_bounded_recommendations() {
        let p = Policy::default();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let p99 = (rng.next() >> rng.below(64)) as f64 / 7.0;
            let max = p99 * (1.0 + rng.below(100) as f64 / 50.0);
            let u = usage(Some(p99), Some(max));
            if let Ok(r) = memory(&u, &p) {
                let exact_p99 = p99.ceil() as i128 * 115;
                assert!(r.computed_bytes * 100 >= exact_p99, "{p99}");
                assert!(r.computed_bytes >= max.ceil() as i128);
                assert!(
                    r.computed_bytes * 100 < exact_p99 + 100
                        || r.computed_bytes == max.ceil() as i128
                );
                assert_memory_bound(r.computed_bytes, r.bytes);
            }
            let cores = (rng.next() >> rng.below(64)) as f64 / 1e15;
            if let Ok(c) = cpu(&cpu_usage(cores), &p) {
                assert!(c.millicores >= c.computed_millicores);
                assert!(
                    c.millicores - c.computed_millicores < 10
                        || c.millicores - c.computed_millicores <= c.computed_millicores / 20,
                    "{cores}: {} -> {}",
                    c.computed_millicores,
                    c.millicores
                );
                assert!(c.millicores % 10 == 0);
                // Never below P99 × 1.15 (checked in f64 with a tolerance for its rounding).
                assert!(
                    c.computed_millicores as f64 >= cores * 1150.0 * (1.0 - 1e-12),
                    "{cores}"
                );
                assert!(
                    c.computed_millicores as f64 <= cores * 1150.0 + 1.0 + 1e-6,
                    "{cores}"
                );
                assert_eq!(
                    c.quantity
                        .parse::<Quantity>()
                        .ok()
                        .and_then(|q| q.millis_ceil()),
                    Some(c.millicores)
                );
            }
        }
    }

    #[test]
    fn random_cpu_rounding_is_bounded() {
        let p = Policy::default();
        let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
        for _ in 0..100_000 {
            let m = (rng.below(1 << 24) >> rng.below(24)) as i128 + 1;
            let r = round_cpu_readable(m, &p);
            assert!(r >= m, "{m} -> {r}");
            assert_eq!(r % 10, 0, "{m} -> {r}");
            if r % 100 == 0 && r - m >= 10 {
                assert!(r - m <= m / 20, "{m} -> {r}");
            }
            if r % 1000 == 0 && r - m >= 100 {
                assert!(m >= 4000 && r - m <= m / 20, "{m} -> {r}");
            }
            assert!(r - m < 10 || r - m <= m / 20, "{m} -> {r}");
        }
    }
}
