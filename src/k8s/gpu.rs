//! GPU resource names: the known ones, the ones that only look like a GPU, and placeholders.

/// Device-plugin resource names that count whole GPUs (or GPU slices).
pub const KNOWN_GPU_RESOURCES: &[&str] = &[
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
];

/// GPU-related resources that are not device counts (memory/core shares of vGPU and Intel
/// plugins): not flagged as unknown, not treated as a GPU request.
const RELATED_RESOURCES: &[&str] = &[
    "gpu.intel.com/millicores",
    "gpu.intel.com/memory.max",
    "gpu.intel.com/tiles",
    "nvidia.com/gpumem",
    "nvidia.com/gpumem-percentage",
    "nvidia.com/gpucores",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuName {
    /// A known GPU device resource.
    Known,
    /// Looks like a GPU resource but no device plugin advertises it (a typo).
    Unknown,
    /// Not a GPU resource.
    Other,
}

/// Known GPU resource names, the built-in ones plus the config's.
#[derive(Clone, Debug, Default)]
pub struct GpuNames {
    extra: Vec<String>,
    /// DRA device classes whose devices are GPUs, besides the built-in ones (config
    /// `gpu_device_classes`).
    device_classes: Vec<String>,
    /// The MIG resources a device plugin advertises (`nvidia.com/mig-3g.40gb`, from the MIG
    /// table): what a misspelt MIG name is matched against.
    mig_resources: Vec<String>,
}

/// `nvidia.com/mig-<g>g.<mem>gb` (MIG mixed strategy), e.g. `nvidia.com/mig-1g.5gb`.
fn is_mig(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("nvidia.com/mig-") else {
        return false;
    };
    let Some((g, mem)) = rest.split_once("g.") else {
        return false;
    };
    let Some(mem) = mem.strip_suffix("gb") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(g) && digits(mem)
}

impl GpuNames {
    pub fn new(extra: Vec<String>) -> Self {
        GpuNames {
            extra,
            device_classes: Vec::new(),
            mig_resources: Vec::new(),
        }
    }

    pub fn with_mig_resources(mut self, names: Vec<String>) -> Self {
        self.mig_resources = names;
        self
    }

    pub fn with_device_classes(mut self, classes: Vec<String>) -> Self {
        self.device_classes = classes;
        self
    }

    /// Whether a DRA device class hands out GPUs (`gpu.nvidia.com`, `mig.nvidia.com`, …).
    pub fn is_gpu_device_class(&self, class: &str) -> bool {
        super::dra::GPU_DEVICE_CLASSES.contains(&class)
            || self.device_classes.iter().any(|c| c == class)
    }

    pub fn classify(&self, name: &str) -> GpuName {
        if KNOWN_GPU_RESOURCES.contains(&name)
            || is_mig(name)
            || self.extra.iter().any(|e| e == name)
        {
            return GpuName::Known;
        }
        if RELATED_RESOURCES.contains(&name) {
            return GpuName::Other;
        }
        let lower = name.to_ascii_lowercase();
        let gpu_like = lower.contains("gpu")
            || lower.contains("/mig-")
            || lower.starts_with("mig-")
            || (lower.starts_with("nvidia") && lower != "nvidia.com/gpu");
        if gpu_like {
            GpuName::Unknown
        } else {
            GpuName::Other
        }
    }

    pub fn is_gpu(&self, name: &str) -> bool {
        self.classify(name) != GpuName::Other
    }

    /// The known name closest to a misspelt one. A MIG name gets the one MIG resource within
    /// two edits of it (`mig-3g.20gbx` → `nvidia.com/mig-3g.20gb`); when there is none, or two
    /// as near, the pattern (which names no resource, so no fix is written from it).
    pub fn suggest(&self, name: &str) -> Option<String> {
        let lower = name.to_ascii_lowercase();
        if lower.contains("mig-") {
            let scored: Vec<(usize, &String)> = self
                .mig_resources
                .iter()
                .map(|m| (strsim::damerau_levenshtein(&lower, m), m))
                .collect();
            let best = scored.iter().map(|(d, _)| *d).min();
            let nearest: Vec<&String> = scored
                .iter()
                .filter(|(d, _)| Some(*d) == best && *d <= 2)
                .map(|(_, m)| *m)
                .collect();
            return Some(match nearest.as_slice() {
                [one] => (*one).clone(),
                _ => "nvidia.com/mig-<g>g.<mem>gb (e.g. nvidia.com/mig-1g.5gb)".into(),
            });
        }
        let candidates = KNOWN_GPU_RESOURCES
            .iter()
            .copied()
            .chain(self.extra.iter().map(String::as_str));
        candidates
            .map(|c| (strsim::damerau_levenshtein(&lower, c), c))
            .min_by_key(|(d, _)| *d)
            .map(|(_, c)| c.to_string())
    }
}

/// A value that is an unrendered template expression: `${GPU}`, `$GPUS`, `{{ .Values.x }}`.
pub fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    t.contains("{{")
        || t.contains("${")
        || t.contains("$(")
        || t.strip_prefix('$')
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_names() {
        let names = GpuNames::new(vec!["example.com/accel".into()]);
        for known in [
            "nvidia.com/gpu",
            "nvidia.com/gpu.shared",
            "nvidia.com/mig-1g.5gb",
            "nvidia.com/mig-7g.80gb",
            "amd.com/gpu",
            "gpu.intel.com/i915",
            "gpu.intel.com/xe",
            "example.com/accel",
        ] {
            assert_eq!(names.classify(known), GpuName::Known, "{known}");
        }
        for unknown in [
            "nvidia.com/gpus",
            "nvidia/gpu",
            "gpu",
            "nvidia.com/mig-1g",
            "amd.com/gpus",
        ] {
            assert_eq!(names.classify(unknown), GpuName::Unknown, "{unknown}");
        }
        for other in [
            "cpu",
            "memory",
            "ephemeral-storage",
            "gpu.intel.com/millicores",
        ] {
            assert_eq!(names.classify(other), GpuName::Other, "{other}");
        }
    }

    #[test]
    fn suggests_the_closest_known_name() {
        let names = GpuNames::default();
        assert_eq!(
            names.suggest("nvidia.com/gpus").as_deref(),
            Some("nvidia.com/gpu")
        );
        assert_eq!(
            names.suggest("nvidia/gpu").as_deref(),
            Some("nvidia.com/gpu")
        );
        assert_eq!(names.suggest("amd/gpu").as_deref(), Some("amd.com/gpu"));
    }

    #[test]
    fn a_misspelt_mig_name_gets_the_one_profile_near_it() {
        let names = GpuNames::default().with_mig_resources(vec![
            "nvidia.com/mig-1g.10gb".into(),
            "nvidia.com/mig-3g.20gb".into(),
            "nvidia.com/mig-3g.40gb".into(),
        ]);
        let pattern = "nvidia.com/mig-<g>g.<mem>gb (e.g. nvidia.com/mig-1g.5gb)";
        let cases = [
            ("nvidia.com/mig-3g.20gbx", "nvidia.com/mig-3g.20gb"),
            ("NVIDIA.com/mig-1g.10GB", "nvidia.com/mig-1g.10gb"),
            ("nvidia.com/mig-3g.40g", "nvidia.com/mig-3g.40gb"),
            // As near to 3g.20gb as to 3g.40gb: no guess.
            ("nvidia.com/mig-3g.30gb", pattern),
            // Nothing within two edits.
            ("nvidia.com/mig-big", pattern),
        ];
        for (name, want) in cases {
            assert_eq!(names.suggest(name).as_deref(), Some(want), "{name}");
        }
    }

    #[test]
    fn recognises_placeholders() {
        for p in ["${GPU}", "$GPUS", "{{ .Values.gpu }}", "$(NUM_GPUS)"] {
            assert!(is_placeholder(p), "{p}");
        }
        for v in ["1", "0.5", "", "$", "$1"] {
            assert!(!is_placeholder(v), "{v}");
        }
    }
}
