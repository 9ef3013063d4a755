//! The model catalogue (`rules/models.yaml`, plus the config's `models:`): what an inference
//! engine's GPU memory need depends on, per model. Pure data and lookups; the arithmetic is in
//! `rules/model_fit.rs`.

use std::sync::OnceLock;

use crate::source::decode::{builtin_rows, table_rows, DecodeError, Fields};
use crate::source::yaml::Node;

const BUILTIN: &str = include_str!("../../rules/models.yaml");

/// Weights' (or KV cache's) number format, as a model is published or an engine flag asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    Fp32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
    Int4,
    /// OCP microscaling fp4 (gpt-oss): 4.25 bits a parameter.
    Mxfp4,
}

impl Dtype {
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Fp32 => 4.0,
            Dtype::Bf16 | Dtype::Fp16 => 2.0,
            Dtype::Fp8 | Dtype::Int8 => 1.0,
            Dtype::Int4 => 0.5,
            Dtype::Mxfp4 => 4.25 / 8.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Fp8 => "fp8",
            Dtype::Int8 => "int8",
            Dtype::Int4 => "int4",
            Dtype::Mxfp4 => "mxfp4",
        }
    }

    /// A catalogue dtype, an engine's `--dtype` value (`bfloat16`, `half`, `float`) or a KV
    /// cache dtype (`fp8_e4m3`). `auto` and unknown values are `None`.
    pub fn parse(text: &str) -> Option<Dtype> {
        match text.trim().to_ascii_lowercase().as_str() {
            "fp32" | "float32" | "float" => Some(Dtype::Fp32),
            "bf16" | "bfloat16" => Some(Dtype::Bf16),
            "fp16" | "float16" | "half" => Some(Dtype::Fp16),
            "fp8" | "fp8_e4m3" | "fp8_e5m2" | "fp8_inc" | "float8_e4m3fn" | "float8_e5m2" => {
                Some(Dtype::Fp8)
            }
            "int8" => Some(Dtype::Int8),
            "int4" => Some(Dtype::Int4),
            "mxfp4" => Some(Dtype::Mxfp4),
            _ => None,
        }
    }

    /// The weights' format a quantization method gives (`--quantization awq`, TGI's
    /// `--quantize bitsandbytes-nf4`); `None` for a method gpulint does not size.
    pub fn of_quantization(method: &str) -> Option<Dtype> {
        let m = method.trim().to_ascii_lowercase();
        match m.as_str() {
            "awq"
            | "awq_marlin"
            | "gptq"
            | "gptq_marlin"
            | "marlin"
            | "bitsandbytes-nf4"
            | "bitsandbytes-fp4"
            | "bitsandbytes_4bit"
            | "compressed-tensors-w4a16"
            | "eetq4"
            | "exl2"
            | "hqq" => Some(Dtype::Int4),
            "fp8" | "fbgemm_fp8" | "modelopt" | "ptpc_fp8" | "w8a8_fp8" => Some(Dtype::Fp8),
            "bitsandbytes" | "eetq" | "int8" | "w8a8_int8" | "smoothquant" => Some(Dtype::Int8),
            "mxfp4" => Some(Dtype::Mxfp4),
            _ => None,
        }
    }
}

/// Multi-head latent attention: one latent vector a token and layer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mla {
    pub kv_lora_rank: u64,
    pub qk_rope_head_dim: u64,
}

/// One row of the catalogue.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub id: String,
    pub aliases: Vec<String>,
    /// NVIDIA NIM images serving these weights: the path under `nvcr.io/nim/`
    /// (`meta/llama-3.1-8b-instruct`), lower case.
    pub nim: Vec<String>,
    pub params_b: f64,
    pub active_params_b: Option<f64>,
    pub layers: u64,
    pub full_attention_layers: Option<u64>,
    pub kv_heads: u64,
    pub head_dim: u64,
    pub mla: Option<Mla>,
    pub context: u64,
    pub dtype: Dtype,
    pub weights_gib: Option<f64>,
    pub source: String,
}

impl Model {
    /// Its display name: the id without the organisation.
    pub fn name(&self) -> &str {
        self.id.rsplit('/').next().unwrap_or(&self.id)
    }
}

fn positive(f: &mut Fields, key: &'static str, at: &Node) -> Result<Option<f64>, DecodeError> {
    match f.number(key)? {
        Some(v) if v > 0.0 && v < 1e9 => Ok(Some(v)),
        Some(_) => Err(DecodeError {
            offset: at.get(key).map_or(at.span.start(), |n| n.span.start()),
            message: format!("`{key}`: expected a number above 0"),
        }),
        None => Ok(None),
    }
}

fn whole(f: &mut Fields, key: &'static str, at: &Node) -> Result<Option<u64>, DecodeError> {
    match positive(f, key, at)? {
        Some(v) if v.fract() == 0.0 => Ok(Some(v as u64)),
        Some(_) => Err(DecodeError {
            offset: at.get(key).map_or(at.span.start(), |n| n.span.start()),
            message: format!("`{key}`: expected a whole number"),
        }),
        None => Ok(None),
    }
}

fn missing(node: &Node, what: &str) -> DecodeError {
    DecodeError {
        offset: node.span.start(),
        message: format!("a model: missing required key `{what}`"),
    }
}

/// One model entry (the catalogue's, or the config's `models:`).
/// The keys of a model (`rules/models.yaml`, the config's `models:`), and of its `mla` mapping.
pub const MODEL_KEYS: &[&str] = &[
    "id",
    "aliases",
    "nim",
    "params_b",
    "active_params_b",
    "layers",
    "full_attention_layers",
    "kv_heads",
    "head_dim",
    "mla",
    "context",
    "dtype",
    "weights_gib",
    "source",
];
pub const MLA_KEYS: &[&str] = &["kv_lora_rank", "qk_rope_head_dim"];

pub fn decode_model(node: &Node) -> Result<Model, DecodeError> {
    let mut f = Fields::with_keys(node, "a model", MODEL_KEYS)?;
    // Every key is read before any is required: a misspelt key is named with its correction
    // rather than reported as a missing one.
    let id = f.string("id")?;
    let aliases = f.string_list("aliases")?;
    let nim = f
        .string_list("nim")?
        .into_iter()
        .map(|n| n.to_ascii_lowercase())
        .collect();
    let params_b = positive(&mut f, "params_b", node)?;
    let active_params_b = positive(&mut f, "active_params_b", node)?;
    let layers = whole(&mut f, "layers", node)?;
    let full_attention_layers = whole(&mut f, "full_attention_layers", node)?;
    let kv_heads = whole(&mut f, "kv_heads", node)?;
    let head_dim = whole(&mut f, "head_dim", node)?;
    let mla = match f.take("mla") {
        None => None,
        Some(m) => {
            let mut g = Fields::with_keys(m, "`mla`", MLA_KEYS)?;
            let kv_lora_rank = whole(&mut g, "kv_lora_rank", m)?;
            let qk_rope_head_dim = whole(&mut g, "qk_rope_head_dim", m)?;
            g.finish()?;
            Some(Mla {
                kv_lora_rank: kv_lora_rank.ok_or_else(|| missing(m, "kv_lora_rank"))?,
                qk_rope_head_dim: qk_rope_head_dim.ok_or_else(|| missing(m, "qk_rope_head_dim"))?,
            })
        }
    };
    let context = whole(&mut f, "context", node)?;
    let dtype_node = f.take("dtype");
    let dtype_text = f.string("dtype")?;
    let weights_gib = positive(&mut f, "weights_gib", node)?;
    let source = f.string("source")?;
    f.finish()?;
    let id = id.ok_or_else(|| missing(node, "id"))?;
    let params_b = params_b.ok_or_else(|| missing(node, "params_b"))?;
    let layers = layers.ok_or_else(|| missing(node, "layers"))?;
    let context = context.ok_or_else(|| missing(node, "context"))?;
    let source = source.ok_or_else(|| missing(node, "source"))?;
    let dtype_text = dtype_text.ok_or_else(|| missing(node, "dtype"))?;
    let dtype = Dtype::parse(&dtype_text).ok_or_else(|| DecodeError {
        offset: dtype_node.map_or(node.span.start(), |n| n.span.start()),
        message: format!(
            "`dtype`: expected one of bf16, fp16, fp32, fp8, int8, int4, mxfp4, found {dtype_text:?}"
        ),
    })?;
    let (kv_heads, head_dim) = match (mla, kv_heads, head_dim) {
        (Some(_), None, None) => (0, 0),
        (None, Some(k), Some(h)) => (k, h),
        _ => {
            return Err(DecodeError {
                offset: node.span.start(),
                message: format!(
                    "model {id}: give either `kv_heads` and `head_dim`, or `mla` (latent attention)"
                ),
            })
        }
    };
    if full_attention_layers.is_some_and(|n| n > layers) {
        return Err(DecodeError {
            offset: node.span.start(),
            message: format!("model {id}: `full_attention_layers` is above `layers`"),
        });
    }
    Ok(Model {
        id,
        aliases,
        nim,
        params_b,
        active_params_b,
        layers,
        full_attention_layers,
        kv_heads,
        head_dim,
        mla,
        context,
        dtype,
        weights_gib,
        source,
    })
}

/// Decodes `{models: [...]}`.
pub fn decode(root: &Node) -> Result<Vec<Model>, DecodeError> {
    table_rows(root, "the model catalogue", "models", decode_model)
}

/// The built-in catalogue (a unit test keeps it valid).
pub fn builtin() -> &'static [Model] {
    static TABLE: OnceLock<Vec<Model>> = OnceLock::new();
    TABLE.get_or_init(|| builtin_rows(BUILTIN, decode))
}

/// Suffixes of repositories that publish a quantized copy of a catalogued model's weights
/// (`Qwen/Qwen2.5-72B-Instruct-AWQ`): the shape is the original's, the weights the method's.
const QUANTIZED_SUFFIXES: &[(&str, Dtype)] = &[
    ("-awq", Dtype::Int4),
    ("-gptq-int4", Dtype::Int4),
    ("-gptq-int8", Dtype::Int8),
    ("-gptq", Dtype::Int4),
    ("-bnb-4bit", Dtype::Int4),
    ("-int4", Dtype::Int4),
    ("-int8", Dtype::Int8),
    ("-w4a16", Dtype::Int4),
    ("-w8a8", Dtype::Int8),
    ("-fp8-dynamic", Dtype::Fp8),
    ("-fp8", Dtype::Fp8),
];

/// A served name for people: its last path segment as written (`gemma-7b-AWQ`), a Hugging Face
/// cache folder's repository name.
pub fn display_name(name: &str) -> String {
    let last = name
        .trim()
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(name);
    match last.strip_prefix("models--") {
        Some(cache) => cache.rsplit("--").next().unwrap_or(cache).to_string(),
        None => last.to_string(),
    }
}

/// A name as compared: lower case, the organisation (or a local path's folders) removed; a
/// Hugging Face cache folder (`models--Qwen--Qwen1.5-7B-Chat`) is its repository's name.
fn key(name: &str) -> String {
    display_name(name).to_ascii_lowercase()
}

/// The models a run knows: the config's first (they may shadow a built-in id), then the
/// built-in ones.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    pub extra: Vec<Model>,
}

/// A model found for a name, and the weights' format its repository implies.
#[derive(Clone, Copy, Debug)]
pub struct Found<'a> {
    pub model: &'a Model,
    /// `Some` for a quantized copy (`…-AWQ`): what its name says the weights are.
    pub quantized: Option<Dtype>,
}

impl Catalogue {
    pub fn new(extra: Vec<Model>) -> Catalogue {
        Catalogue { extra }
    }

    fn models(&self) -> impl Iterator<Item = &Model> {
        self.extra.iter().chain(builtin())
    }

    fn exact(&self, k: &str) -> Option<&Model> {
        self.models()
            .find(|m| key(&m.id) == k || m.aliases.iter().any(|a| key(a) == k))
    }

    /// The model an NVIDIA NIM image serves, by its path under `nim/` (`meta/llama3-8b-instruct`,
    /// any case).
    pub fn find_nim(&self, path: &str) -> Option<&Model> {
        let path = path.to_ascii_lowercase();
        self.models().find(|m| m.nim.contains(&path))
    }

    /// The model a container names (`meta-llama/Llama-3.1-8B-Instruct`, `llama-3.1-8b-instruct`,
    /// `/models/Llama-3.1-8B-Instruct`, `hf://Qwen/Qwen2.5-7B-Instruct-AWQ`).
    pub fn find(&self, name: &str) -> Option<Found<'_>> {
        let k = key(name);
        if k.is_empty() {
            return None;
        }
        if let Some(model) = self.exact(&k) {
            return Some(Found {
                model,
                quantized: None,
            });
        }
        QUANTIZED_SUFFIXES.iter().find_map(|(suffix, dtype)| {
            let base = k.strip_suffix(suffix)?;
            Some(Found {
                model: self.exact(base)?,
                quantized: Some(*dtype),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::yaml::Stream;

    #[test]
    fn the_builtin_catalogue_decodes_and_every_entry_has_a_source() {
        let stream = Stream::parse(BUILTIN);
        let models = decode(&stream.documents[0].root).expect("rules/models.yaml is valid");
        assert_eq!(models.len(), builtin().len());
        assert!(models.len() >= 40, "{}", models.len());
        for m in &models {
            assert!(m.source.starts_with("https://huggingface.co/"), "{}", m.id);
            assert!(m.source.contains(m.id.as_str()), "{}", m.id);
        }
        // Every id and alias names one model.
        let mut keys: Vec<String> = models
            .iter()
            .flat_map(|m| std::iter::once(&m.id).chain(&m.aliases).map(|a| key(a)))
            .collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "an id or alias is listed twice");
        // Every NIM image names one model.
        let mut nims: Vec<&String> = models.iter().flat_map(|m| &m.nim).collect();
        let n = nims.len();
        nims.sort();
        nims.dedup();
        assert_eq!(nims.len(), n, "a NIM image is listed twice");
        assert!(n >= 6, "{n}");
    }

    #[test]
    fn nim_images_name_their_model_in_any_case() {
        let c = Catalogue::default();
        let m = c
            .find_nim("Meta/Llama3-8B-Instruct")
            .expect("llama3-8b-instruct");
        assert_eq!(m.id, "meta-llama/Meta-Llama-3-8B-Instruct");
        let m = c
            .find_nim("mistralai/mixtral-8x7b-instruct-v01")
            .expect("mixtral");
        assert_eq!(m.id, "mistralai/Mixtral-8x7B-Instruct-v0.1");
        // Only the image path: a model id is not a NIM image.
        assert!(c.find_nim("meta-llama/Meta-Llama-3-8B-Instruct").is_none());
        assert!(c.find_nim("llama3-8b-instruct").is_none());
    }

    #[test]
    fn names_match_with_and_without_the_organisation_in_any_case() {
        let c = Catalogue::default();
        for name in [
            "meta-llama/Llama-3.1-8B-Instruct",
            "llama-3.1-8b-instruct",
            "META-LLAMA/META-LLAMA-3.1-8B-INSTRUCT",
            "/models/Llama-3.1-8B-Instruct/",
            "hf://meta-llama/Llama-3.1-8B",
            "/models--meta-llama--Llama-3.1-8B-Instruct",
        ] {
            let found = c.find(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(found.model.id, "meta-llama/Llama-3.1-8B-Instruct", "{name}");
            assert_eq!(found.quantized, None);
        }
        let awq = c
            .find("Qwen/Qwen2.5-72B-Instruct-AWQ")
            .expect("a quantized copy");
        assert_eq!(awq.model.id, "Qwen/Qwen2.5-72B-Instruct");
        assert_eq!(awq.quantized, Some(Dtype::Int4));
        assert!(c.find("acme/secret-model-13b").is_none());
        assert!(c.find("").is_none());
        assert!(c.find("$(MODEL_ID)").is_none());
    }

    #[test]
    fn private_models_come_first_and_are_checked() {
        let text = "models:\n- {id: acme/llama-3.1-8b-instruct, params_b: 9, layers: 32, kv_heads: 8, head_dim: 128, context: 8192, dtype: bf16, source: x}\n";
        let stream = Stream::parse(text);
        let extra = decode(&stream.documents[0].root).unwrap();
        let c = Catalogue::new(extra);
        let found = c.find("Llama-3.1-8B-Instruct").unwrap();
        assert_eq!(found.model.params_b, 9.0);
        for (bad, wanted) in [
            ("{id: a, params_b: 1, layers: 2, context: 3, dtype: bf16, source: x}", "either `kv_heads`"),
            ("{id: a, params_b: 0, layers: 2, kv_heads: 1, head_dim: 1, context: 3, dtype: bf16, source: x}", "`params_b`: expected a number above 0"),
            ("{id: a, params_b: 1, layers: 2.5, kv_heads: 1, head_dim: 1, context: 3, dtype: bf16, source: x}", "`layers`: expected a whole number"),
            ("{id: a, params_b: 1, layers: 2, kv_heads: 1, head_dim: 1, context: 3, dtype: bf61, source: x}", "`dtype`: expected one of"),
            ("{id: a, params_b: 1, layer: 2, kv_heads: 1, head_dim: 1, context: 3, dtype: bf16, source: x}", "did you mean `layers`"),
        ] {
            let stream = Stream::parse(bad);
            let e = decode_model(&stream.documents[0].root).unwrap_err();
            assert!(e.message.contains(wanted), "{bad}: {}", e.message);
        }
    }
}
