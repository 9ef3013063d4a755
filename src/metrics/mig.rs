//! MIG profiles per GPU model (`rules/mig-profiles.yaml`) and the choice of the smallest one a
//! measured container fits in. Pure functions of the table and the measurement: the message,
//! the JSON and the fix of GPU013 all come from one [`Fit`].

use std::fmt;
use std::sync::OnceLock;

use crate::source::decode::{builtin_rows, string, table_rows, DecodeError, Fields};
use crate::source::yaml::Node;

const BUILTIN: &str = include_str!("../../rules/mig-profiles.yaml");

/// One MIG profile of a model.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// `1g.10gb`.
    pub name: String,
    pub compute_slices: u32,
    pub memory_slices: u32,
    /// The GB in the name (10 for `1g.10gb`).
    pub memory_gb: u32,
}

/// A MIG-capable GPU model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub name: String,
    pub matches: Vec<String>,
    pub memory_gb: u32,
    pub compute_slices: u32,
    pub memory_slices: u32,
    /// Smallest first: by compute slices, then memory slices.
    pub profiles: Vec<Profile>,
}

/// `1g.10gb` -> 10.
fn memory_gb_of(name: &str) -> Option<u32> {
    name.split_once("g.")?.1.strip_suffix("gb")?.parse().ok()
}

fn small_number(node: &Node, what: &str) -> Result<u32, DecodeError> {
    node.text()
        .and_then(|t| t.parse::<u32>().ok())
        .filter(|n| (1..=64).contains(n))
        .ok_or_else(|| DecodeError {
            offset: node.span.start(),
            message: format!("{what}: expected a whole number from 1 to 64"),
        })
}

fn decode_model(node: &Node) -> Result<Model, DecodeError> {
    let mut f = Fields::new(node, "a GPU model")?;
    let name = f.required_string("name")?;
    let matches = f.string_list("match")?;
    let number = |f: &mut Fields, key: &'static str| -> Result<u32, DecodeError> {
        let v = f.number(key)?.unwrap_or(0.0);
        if v >= 1.0 && v.fract() == 0.0 && v < 10_000.0 {
            Ok(v as u32)
        } else {
            Err(DecodeError {
                offset: node.span.start(),
                message: format!("`{key}`: expected a whole number above 0"),
            })
        }
    };
    let memory_gb = number(&mut f, "memory_gb")?;
    let compute_slices = number(&mut f, "compute_slices")?;
    let memory_slices = number(&mut f, "memory_slices")?;
    let mut profiles = Vec::new();
    for p in f.seq("profiles")?.unwrap_or_default() {
        let bad = || DecodeError {
            offset: p.span.start(),
            message: "a profile: expected [name, compute slices, memory slices]".into(),
        };
        let [n, c, m] = p.as_seq().ok_or_else(bad)? else {
            return Err(bad());
        };
        let name = string(n)?;
        let profile = Profile {
            memory_gb: memory_gb_of(&name).ok_or_else(bad)?,
            compute_slices: small_number(c, "compute slices")?,
            memory_slices: small_number(m, "memory slices")?,
            name,
        };
        if profile.compute_slices >= compute_slices || profile.memory_slices > memory_slices {
            return Err(DecodeError {
                offset: p.span.start(),
                message: format!("profile {} is not smaller than the whole GPU", profile.name),
            });
        }
        profiles.push(profile);
    }
    f.finish()?;
    profiles.sort_by_key(|p| (p.compute_slices, p.memory_slices));
    Ok(Model {
        name,
        matches,
        memory_gb,
        compute_slices,
        memory_slices,
        profiles,
    })
}

/// Decodes `{models: [...]}`.
pub fn decode(root: &Node) -> Result<Vec<Model>, DecodeError> {
    table_rows(root, "the MIG table", "models", decode_model)
}

/// The built-in table (a unit test keeps it valid).
pub fn table() -> &'static [Model] {
    static TABLE: OnceLock<Vec<Model>> = OnceLock::new();
    TABLE.get_or_init(|| builtin_rows(BUILTIN, decode))
}

/// Every MIG resource the GPU operator's `mixed` strategy can advertise for the table's models:
/// each profile, and each model's whole GPU (`nvidia.com/mig-7g.80gb`), sorted, no repeats.
pub fn resource_names() -> Vec<String> {
    let mut names: Vec<String> = table()
        .iter()
        .flat_map(|m| {
            let whole = format!("{}g.{}gb", m.compute_slices, m.memory_gb);
            m.profiles
                .iter()
                .map(|p| p.name.clone())
                .chain(std::iter::once(whole))
                .map(|p| format!("nvidia.com/mig-{p}"))
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The table's models that have the MIG profile `profile` (`3g.20gb`), whole-GPU profile
/// (`7g.40gb`) included, in table order.
pub fn models_offering(profile: &str) -> Vec<&'static Model> {
    table()
        .iter()
        .filter(|m| {
            m.profiles.iter().any(|p| p.name == profile)
                || format!("{}g.{}gb", m.compute_slices, m.memory_gb) == profile
        })
        .collect()
}

/// Whether `needle` occurs in `hay` as whole words (`A30` in `NVIDIA A30`, not in `A3000`;
/// `B200` not in `GB200`). Both lower case.
fn contains_words(hay: &str, needle: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    hay.match_indices(needle).any(|(i, _)| {
        !word(hay[..i].chars().next_back()) && !word(hay[i + needle.len()..].chars().next())
    })
}

/// The table's model for DCGM's `modelName` (`NVIDIA H100 80GB HBM3`).
pub fn model_of(model_name: &str) -> Option<&'static Model> {
    model_in(table(), model_name)
}

fn model_in<'t>(table: &'t [Model], model_name: &str) -> Option<&'t Model> {
    let hay = model_name.to_ascii_lowercase();
    table.iter().find(|m| {
        m.matches
            .iter()
            .any(|s| contains_words(&hay, &s.to_ascii_lowercase()))
    })
}

/// A fraction of a GPU, reduced: `6/7`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub num: u32,
    pub den: u32,
}

impl Share {
    fn new(num: u32, den: u32) -> Share {
        fn gcd(a: u32, b: u32) -> u32 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let g = gcd(num, den).max(1);
        Share {
            num: num / g,
            den: den / g,
        }
    }

    pub fn value(self) -> f64 {
        f64::from(self.num) / f64::from(self.den.max(1))
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// The smallest profile a container fits in.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub model: &'static Model,
    pub profile: &'static Profile,
    /// P99 framebuffer × (1 + margin), in bytes.
    pub memory_needed: f64,
    /// P99 engine activity, 0 to 1 of the whole GPU.
    pub compute_needed: f64,
    /// What the slice leaves to others: the smaller of the compute and memory shares left.
    pub frees: Share,
}

/// Why no profile is recommended.
#[derive(Clone, Debug, PartialEq)]
pub enum NoFit {
    /// The model is not in the table (no MIG, or not known to gpulint).
    NotMigCapable(String),
    /// Neither engine activity nor utilisation was measured: compute cannot be judged.
    ComputeUnknown,
    /// Even the largest profile below the whole GPU is too small.
    TooBig,
}

/// The smallest profile of `model_name` whose memory holds `p99_bytes × (1 + margin)` and whose
/// compute share holds `compute_p99` (a fraction of the whole GPU). Memory is compared with the
/// GB in the profile name (10^9 bytes), which is at or below what the slice really has. A need
/// exactly at a profile's size fits it.
pub fn choose(
    model_name: &str,
    p99_bytes: f64,
    margin: f64,
    compute_p99: Option<f64>,
) -> Result<Fit, NoFit> {
    choose_among(model_name, p99_bytes, margin, compute_p99, |_| true)
}

/// [`choose`] among the profiles `offered` accepts (those the cluster's nodes offer).
pub fn choose_among(
    model_name: &str,
    p99_bytes: f64,
    margin: f64,
    compute_p99: Option<f64>,
    offered: impl Fn(&Profile) -> bool,
) -> Result<Fit, NoFit> {
    let model = model_of(model_name).ok_or_else(|| NoFit::NotMigCapable(model_name.to_string()))?;
    let compute_needed = compute_p99
        .filter(|c| c.is_finite())
        .ok_or(NoFit::ComputeUnknown)?
        .clamp(0.0, 1.0);
    let memory_needed = p99_bytes.max(0.0) * (1.0 + margin.max(0.0));
    // Compare in whole bytes: a need exactly at 10 GB fits a 10gb profile whatever the float
    // product's last digit says.
    let need_bytes = memory_needed.round();
    let profile = model
        .profiles
        .iter()
        .find(|p| {
            offered(p)
                && need_bytes <= f64::from(p.memory_gb) * 1e9
                && compute_needed * f64::from(model.compute_slices)
                    <= f64::from(p.compute_slices) + 1e-9
        })
        .ok_or(NoFit::TooBig)?;
    let compute_left = Share::new(
        model.compute_slices - profile.compute_slices,
        model.compute_slices,
    );
    let memory_left = Share::new(
        model.memory_slices - profile.memory_slices,
        model.memory_slices,
    );
    let frees = if compute_left.value() <= memory_left.value() {
        compute_left
    } else {
        memory_left
    };
    Ok(Fit {
        model,
        profile,
        memory_needed,
        compute_needed,
        frees,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::yaml::Stream;

    const GB: f64 = 1e9;

    #[test]
    fn the_builtin_table_decodes_and_covers_the_issue_models() {
        let models = decode(&Stream::parse(BUILTIN).documents[0].root).expect("valid table");
        let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "A100 80GB",
                "A100 40GB",
                "A30",
                "H100 NVL",
                "H100 80GB",
                "H200 141GB",
                "GB200",
                "B200"
            ]
        );
        assert_eq!(table().len(), 8);
        for m in table() {
            // Every profile's GB is at or below its memory share of the whole GPU, rounded up.
            for p in &m.profiles {
                let share = f64::from(m.memory_gb) * f64::from(p.memory_slices)
                    / f64::from(m.memory_slices);
                assert!(
                    f64::from(p.memory_gb) <= share.ceil(),
                    "{} {}",
                    m.name,
                    p.name
                );
            }
        }
    }

    #[test]
    fn dcgm_model_names_find_their_model() {
        for (dcgm, model) in [
            ("NVIDIA A100-SXM4-80GB", "A100 80GB"),
            ("NVIDIA A100 80GB PCIe", "A100 80GB"),
            ("NVIDIA A100-SXM4-40GB", "A100 40GB"),
            ("NVIDIA A100-PCIE-40GB", "A100 40GB"),
            ("NVIDIA A30", "A30"),
            ("NVIDIA H100 80GB HBM3", "H100 80GB"),
            ("NVIDIA H100 PCIe", "H100 80GB"),
            ("NVIDIA H100 NVL", "H100 NVL"),
            ("NVIDIA H200", "H200 141GB"),
            ("NVIDIA H200 NVL", "H200 141GB"),
            ("NVIDIA B200", "B200"),
            ("NVIDIA GB200", "GB200"),
        ] {
            assert_eq!(
                model_of(dcgm).map(|m| m.name.as_str()),
                Some(model),
                "{dcgm}"
            );
        }
        for no_mig in [
            "NVIDIA L4",
            "NVIDIA L40S",
            "Tesla T4",
            "NVIDIA RTX A3000",
            "NVIDIA A10G",
            "",
        ] {
            assert_eq!(model_of(no_mig), None, "{no_mig}");
        }
    }

    fn pick(model: &str, gb: f64, compute: f64) -> Result<String, NoFit> {
        choose(model, gb * GB, 0.0, Some(compute))
            .map(|f| format!("{} frees {}", f.profile.name, f.frees))
    }

    #[test]
    fn the_smallest_fitting_profile_on_every_model() {
        // (model, GB, compute) -> profile: a small need, a memory-bound one, a compute-bound one.
        let cases = [
            (
                "NVIDIA A100-SXM4-80GB",
                [
                    ("1g.10gb frees 6/7", 4.0, 0.1),
                    ("1g.20gb frees 3/4", 15.0, 0.1),
                    ("3g.40gb frees 1/2", 15.0, 0.4),
                ],
            ),
            (
                "NVIDIA A100-SXM4-40GB",
                [
                    ("1g.5gb frees 6/7", 4.0, 0.1),
                    ("1g.10gb frees 3/4", 8.0, 0.1),
                    ("3g.20gb frees 1/2", 8.0, 0.4),
                ],
            ),
            (
                "NVIDIA A30",
                [
                    ("1g.6gb frees 3/4", 5.0, 0.2),
                    ("2g.12gb frees 1/2", 8.0, 0.2),
                    ("2g.12gb frees 1/2", 1.0, 0.5),
                ],
            ),
            (
                "NVIDIA H100 NVL",
                [
                    ("1g.12gb frees 6/7", 11.0, 0.1),
                    ("1g.24gb frees 3/4", 20.0, 0.1),
                    ("4g.47gb frees 3/7", 20.0, 0.5),
                ],
            ),
            (
                "NVIDIA H100 80GB HBM3",
                [
                    ("1g.10gb frees 6/7", 9.0, 0.14),
                    ("1g.20gb frees 3/4", 19.0, 0.1),
                    ("3g.40gb frees 1/2", 39.0, 0.2),
                ],
            ),
            (
                "NVIDIA H200",
                [
                    ("1g.18gb frees 6/7", 17.0, 0.1),
                    ("1g.35gb frees 3/4", 30.0, 0.1),
                    ("3g.71gb frees 1/2", 30.0, 0.3),
                ],
            ),
            (
                "NVIDIA GB200",
                [
                    ("1g.24gb frees 6/7", 20.0, 0.1),
                    ("1g.47gb frees 3/4", 40.0, 0.1),
                    ("4g.95gb frees 3/7", 90.0, 0.5),
                ],
            ),
            (
                "NVIDIA B200",
                [
                    ("1g.23gb frees 6/7", 20.0, 0.1),
                    ("1g.45gb frees 3/4", 40.0, 0.1),
                    ("2g.45gb frees 5/7", 40.0, 0.2),
                ],
            ),
        ];
        for (model, picks) in cases {
            for (want, gb, compute) in picks {
                assert_eq!(
                    pick(model, gb, compute),
                    Ok(want.to_string()),
                    "{model} {gb} GB {compute}"
                );
            }
        }
    }

    #[test]
    fn a_need_exactly_at_a_profile_size_fits_it() {
        assert_eq!(
            pick("NVIDIA H100 80GB HBM3", 10.0, 1.0 / 7.0),
            Ok("1g.10gb frees 6/7".into())
        );
        // With the margin: 8.695652… GB × 1.15 = 10 GB exactly.
        let fit = choose("NVIDIA H100 80GB HBM3", 10.0 * GB / 1.15, 0.15, Some(0.05)).unwrap();
        assert_eq!(fit.profile.name, "1g.10gb");
        // One byte more does not fit.
        let offered = choose_among("NVIDIA H100 80GB HBM3", 9.0 * GB, 0.0, Some(0.05), |p| {
            p.name == "3g.40gb"
        })
        .unwrap();
        assert_eq!(offered.profile.name, "3g.40gb");
        assert_eq!(
            choose_among("NVIDIA H100 80GB HBM3", 9.0 * GB, 0.0, Some(0.05), |_| {
                false
            }),
            Err(NoFit::TooBig)
        );
        let fit = choose("NVIDIA H100 80GB HBM3", 10.0 * GB + 1.0, 0.0, Some(0.05)).unwrap();
        assert_eq!(fit.profile.name, "1g.20gb");
    }

    #[test]
    fn too_big_unknown_compute_and_no_mig_recommend_nothing() {
        assert_eq!(pick("NVIDIA H100 80GB HBM3", 41.0, 0.1), Err(NoFit::TooBig));
        assert_eq!(pick("NVIDIA H100 80GB HBM3", 5.0, 0.9), Err(NoFit::TooBig));
        assert_eq!(
            choose("NVIDIA H100 80GB HBM3", 5.0 * GB, 0.15, None),
            Err(NoFit::ComputeUnknown)
        );
        assert_eq!(
            choose("NVIDIA H100 80GB HBM3", 5.0 * GB, 0.15, Some(f64::NAN)),
            Err(NoFit::ComputeUnknown)
        );
        assert_eq!(
            pick("NVIDIA L4", 5.0, 0.1),
            Err(NoFit::NotMigCapable("NVIDIA L4".into()))
        );
    }

    #[test]
    fn bad_tables_are_errors() {
        for (text, want) in [
            ("models:\n- {name: X, match: [X], memory_gb: 80, compute_slices: 7, memory_slices: 8, profiles: [[7g.80gb, 7, 8]]}\n", "not smaller"),
            ("models:\n- {name: X, match: [X], memory_gb: 80, compute_slices: 7, memory_slices: 8, profiles: [[big, 1, 1]]}\n", "expected [name"),
            ("models:\n- {name: X, memory_gb: 0, compute_slices: 7, memory_slices: 8}\n", "memory_gb"),
        ] {
            let e = decode(&Stream::parse(text).documents[0].root).unwrap_err();
            assert!(e.message.contains(want), "{}", e.message);
        }
    }
}
