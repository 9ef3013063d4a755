//! GPU programs in a container: which engine runs (vLLM, SGLang, TGI, TensorRT-LLM, Triton,
//! torchrun), from its image and command line, and how many GPU ranks its flags start.
//!
//! The table is `rules/engines.yaml`. A command line is the container's `command` then `args`;
//! a shell script (`sh -c "…"`) is split into words the way a POSIX shell would, without
//! expanding anything: a `$VAR` or `{{ … }}` value stays unresolved and is never compared.

use std::sync::OnceLock;

use super::workload::Container;
use crate::source::decode::{builtin_rows, string_list, table_rows, DecodeError, Fields};
use crate::source::yaml::Node;

const BUILTIN: &str = include_str!("../../rules/engines.yaml");

/// One row of `rules/engines.yaml`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Engine {
    pub id: String,
    pub name: String,
    pub images: Vec<String>,
    pub programs: Vec<String>,
    pub modules: Vec<String>,
    /// The flag that sets the reserved share of GPU memory, with its default; `None`: the
    /// engine does not reserve GPU memory up front.
    pub preallocates: Option<String>,
    /// Factors of the rank count, each with its spellings.
    pub parallelism: Vec<Vec<String>>,
    pub env: Vec<String>,
    pub skip_flags: Vec<String>,
    pub per_pod: bool,
    pub kv_cache_metrics: Vec<String>,
    /// KServe `modelFormat.name`s this engine serves when the predictor names no image.
    pub model_formats: Vec<String>,
    /// How it is told the model and its memory settings (`None`: not a model server).
    pub serving: Option<ServingFlags>,
}

/// What the engine's memory share (`--gpu-memory-utilization`) covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FractionCovers {
    /// Weights, activations and the KV cache (vLLM, TGI): the engine's overhead is inside.
    #[default]
    All,
    /// Weights and the KV cache pool only (SGLang's `--mem-fraction-static`).
    WeightsAndKv,
    /// The KV cache only, as a share of the memory left free after the weights, activations
    /// and CUDA context (TensorRT-LLM's `--kv_cache_free_gpu_memory_fraction`): the weights
    /// may use the whole GPU.
    KvOfFree,
}

/// The `serving:` block of an engine row: the spellings of each setting (flags, and
/// environment variable names without a leading dash).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServingFlags {
    pub model: Vec<String>,
    pub model_after: Option<String>,
    /// `model_after` is the program itself (`trtllm-serve MODEL`), not its first word
    /// (`vllm serve MODEL`).
    pub model_after_program: bool,
    /// Subcommands that may stand between `model_after` and the model (`trtllm-serve serve
    /// MODEL`).
    pub model_subcommands: Vec<String>,
    pub storage_uri: bool,
    pub dtype: Vec<String>,
    pub quantization: Vec<String>,
    pub kv_cache_dtype: Vec<String>,
    pub context: Vec<String>,
    /// Without a context flag the engine takes the model's whole context (and checks it).
    pub context_from_model: bool,
    pub memory_fraction: Vec<String>,
    pub memory_fraction_default: f64,
    pub fraction_covers: FractionCovers,
    pub max_seqs: Vec<String>,
    /// Without these flags the engine does not refuse a context one sequence of which does not
    /// fit its KV cache: it shrinks the context to what fits (TensorRT-LLM). Empty: it refuses.
    pub context_shrinks_unless: Vec<String>,
    /// Flags that set the engine's sizing from a file gpulint does not read (TensorRT-LLM's
    /// `--extra_llm_api_options`): not judged, said by FIT005.
    pub overrides: Vec<String>,
    /// The flag that chooses the engine's backend, and the backends the arithmetic is for:
    /// another backend is not judged (FIT005 says so).
    pub backend: Vec<String>,
    pub backends: Vec<String>,
}

fn decode_serving(node: &Node) -> Result<ServingFlags, DecodeError> {
    let mut f = Fields::new(node, "`serving`")?;
    let bad = |message: String| DecodeError {
        offset: node.span.start(),
        message,
    };
    let s = ServingFlags {
        model: f.string_list("model")?,
        model_after: f.string("model_after")?,
        model_after_program: f.bool("model_after_program")?.unwrap_or(false),
        model_subcommands: f.string_list("model_subcommands")?,
        storage_uri: f.bool("storage_uri")?.unwrap_or(false),
        dtype: f.string_list("dtype")?,
        quantization: f.string_list("quantization")?,
        kv_cache_dtype: f.string_list("kv_cache_dtype")?,
        context: f.string_list("context")?,
        context_from_model: match f.string("context_default")?.as_deref() {
            Some("model") => true,
            Some("none") | None => false,
            Some(other) => {
                return Err(bad(format!(
                    "`context_default`: expected `model` or `none`, found {other:?}"
                )))
            }
        },
        memory_fraction: f.string_list("memory_fraction")?,
        memory_fraction_default: f
            .number("memory_fraction_default")?
            .filter(|v| *v > 0.0 && *v <= 1.0)
            .ok_or_else(|| bad("`memory_fraction_default`: expected a number in (0, 1]".into()))?,
        fraction_covers: match f.string("fraction_covers")?.as_deref() {
            Some("all") | None => FractionCovers::All,
            Some("weights_and_kv") => FractionCovers::WeightsAndKv,
            Some("kv_of_free") => FractionCovers::KvOfFree,
            Some(other) => {
                return Err(bad(format!(
                    "`fraction_covers`: expected `all`, `weights_and_kv` or `kv_of_free`, found {other:?}"
                )))
            }
        },
        max_seqs: f.string_list("max_seqs")?,
        context_shrinks_unless: f.string_list("context_shrinks_unless")?,
        overrides: f.string_list("overrides")?,
        backend: f.string_list("backend")?,
        backends: f.string_list("backends")?,
    };
    f.finish()?;
    Ok(s)
}

fn decode_engine(node: &Node) -> Result<Engine, DecodeError> {
    let mut f = Fields::new(node, "an engine")?;
    let mut e = Engine {
        id: f.required_string("id")?,
        name: f.required_string("name")?,
        images: f.string_list("images")?,
        programs: f.string_list("programs")?,
        modules: f.string_list("modules")?,
        preallocates: f.string("preallocates")?,
        env: f.string_list("env")?,
        skip_flags: f.string_list("skip_flags")?,
        per_pod: f.bool("per_pod")?.unwrap_or(true),
        kv_cache_metrics: f.string_list("kv_cache_metrics")?,
        model_formats: f.string_list("model_formats")?,
        serving: f.take("serving").map(decode_serving).transpose()?,
        ..Engine::default()
    };
    for factor in f.seq("parallelism")?.unwrap_or_default() {
        e.parallelism
            .push(string_list(factor, "a parallelism factor")?);
    }
    f.finish()?;
    Ok(e)
}

/// Decodes `{engines: [...]}`.
pub fn decode(root: &Node) -> Result<Vec<Engine>, DecodeError> {
    table_rows(root, "the engine table", "engines", decode_engine)
}

/// The built-in table (a unit test keeps it valid).
pub fn table() -> &'static [Engine] {
    static TABLE: OnceLock<Vec<Engine>> = OnceLock::new();
    TABLE.get_or_init(|| builtin_rows(BUILTIN, decode))
}

pub fn by_id(id: &str) -> Option<&'static Engine> {
    table().iter().find(|e| e.id == id)
}

/// One word of a container's command line and the YAML scalar it was written in (the whole
/// script for a word of a shell script).
#[derive(Clone, Debug)]
pub struct Word<'a> {
    pub text: String,
    pub node: &'a Node,
}

/// Shell control operators end a simple command; kept as words so that a program name is only
/// recognised at the start of a command.
const OPERATORS: &[&str] = &[";", "&&", "||", "|", "&", "\n", "(", ")"];

fn is_shell(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    matches!(base, "sh" | "bash" | "dash" | "ash" | "zsh" | "ksh")
}

/// `-c`, `-lc`, `-ec`, `-xec`…: the next word is a script.
fn is_script_flag(word: &str) -> bool {
    word.len() >= 2
        && word.starts_with('-')
        && !word.starts_with("--")
        && word.ends_with('c')
        && word[1..].bytes().all(|b| b.is_ascii_alphabetic())
}

/// Splits a shell script into words and operators, removing quotes and backslashes the way a
/// POSIX shell does, expanding nothing (`$TP` stays `$TP`). Comments are dropped.
pub fn split_shell(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    // A word can be empty but quoted (`""`): track that one was started.
    let mut started = false;
    let mut chars = script.chars().peekable();
    let flush = |word: &mut String, started: &mut bool, out: &mut Vec<String>| {
        if *started {
            out.push(std::mem::take(word));
            *started = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => {
                    word.push(n);
                    started = true;
                }
            },
            '\'' => {
                started = true;
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    word.push(n);
                }
            }
            '"' => {
                started = true;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some(&e @ ('"' | '\\' | '$' | '`')) => {
                                word.push(e);
                                chars.next();
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => word.push('\\'),
                        },
                        _ => word.push(n),
                    }
                }
            }
            '#' if !started => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push("\n".into());
                        break;
                    }
                }
            }
            ' ' | '\t' | '\r' => flush(&mut word, &mut started, &mut out),
            '\n' | ';' | '(' | ')' => {
                flush(&mut word, &mut started, &mut out);
                out.push(c.to_string());
            }
            '&' | '|' => {
                flush(&mut word, &mut started, &mut out);
                if chars.peek() == Some(&c) {
                    chars.next();
                    out.push(format!("{c}{c}"));
                } else {
                    out.push(c.to_string());
                }
            }
            _ => {
                word.push(c);
                started = true;
            }
        }
    }
    flush(&mut word, &mut started, &mut out);
    out
}

/// The scalars of a list field (`command`, `args`); a single string is one word.
fn list_items(node: Option<&Node>) -> Vec<&Node> {
    match node {
        Some(n) => match n.as_seq() {
            Some(items) => items.iter().filter(|i| i.as_scalar().is_some()).collect(),
            None if n.as_scalar().is_some() && !n.is_null() => vec![n],
            None => Vec::new(),
        },
        None => Vec::new(),
    }
}

/// The container's command line: `command` then `args`, with every `sh -c` script split.
pub fn words<'a>(c: &Container<'a>) -> Vec<Word<'a>> {
    let mut raw: Vec<&'a Node> = list_items(c.node.get("command"));
    raw.extend(list_items(c.node.get("args")));
    let mut out = Vec::new();
    let mut shell = false;
    let mut script_next = false;
    for node in raw {
        let text = node.text().unwrap_or_default();
        if script_next {
            out.extend(
                split_shell(text)
                    .into_iter()
                    .map(|t| Word { text: t, node }),
            );
            out.push(Word {
                text: "\n".into(),
                node,
            });
            script_next = false;
            continue;
        }
        if out.is_empty() && is_shell(text) {
            shell = true;
        } else if shell && is_script_flag(text) {
            script_next = true;
        }
        out.push(Word {
            text: text.to_string(),
            node,
        });
    }
    out
}

/// A container's image: `image: repo:tag`, or the NIM operator's `image: {repository, tag}`
/// (a `NIMService`'s spec) as `repository:tag`.
pub fn image(c: &Container) -> Option<String> {
    let node = c.node.get("image")?;
    if let Some(text) = node.text() {
        return Some(text.to_string());
    }
    let repository = node.get_str("repository")?;
    Some(match node.get("tag").and_then(Node::text) {
        Some(tag) => format!("{repository}:{tag}"),
        None => repository.to_string(),
    })
}

/// The image repository, registry kept, lower case, tag and digest removed: `nvcr.io/nim/meta/
/// llama3-8b-instruct`.
pub fn image_repository_of(c: &Container) -> Option<String> {
    image(c).map(|i| image_repository(&i))
}

/// The image repository without registry-free noise: lower case, tag and digest removed.
fn image_repository(image: &str) -> String {
    let image = image.split('@').next().unwrap_or(image);
    let repo = match image.rfind(':') {
        Some(i) if !image[i..].contains('/') => &image[..i],
        _ => image,
    };
    repo.to_ascii_lowercase()
}

/// Whether `i` starts a simple command (after an operator, `exec`, `nohup`, `env`, a
/// `NAME=value` assignment or a Python interpreter).
fn at_command_start(words: &[Word], i: usize) -> bool {
    let mut j = i;
    while j > 0 {
        let prev = words[j - 1].text.as_str();
        let base = prev.rsplit('/').next().unwrap_or(prev);
        if OPERATORS.contains(&prev) {
            return true;
        }
        let skip = matches!(base, "exec" | "nohup" | "env" | "time" | "then" | "do")
            || base.starts_with("python")
            || (prev.contains('=') && !prev.starts_with('-'))
            || is_shell(prev)
            || is_script_flag(prev);
        if !skip {
            return false;
        }
        j -= 1;
    }
    true
}

/// The engine a container runs: from its command line first (a program name or `python -m
/// module`), then from its image, then (a KServe predictor without an image) from its
/// `modelFormat`.
pub fn detect(c: &Container) -> Option<&'static Engine> {
    detect_in(table(), &words(c), &image(c).unwrap_or_default()).or_else(|| {
        if c.node.get("image").is_some() {
            return None;
        }
        let format = c.node.get_path(&["modelFormat", "name"])?.text()?;
        table().iter().find(|e| {
            e.model_formats
                .iter()
                .any(|m| m.eq_ignore_ascii_case(format))
        })
    })
}

/// Whether the container's engine runs from what its command line says: its program or
/// module is named there, or there is no `command` (the image's entrypoint gets the `args`).
/// An engine image running another program (`lm_eval --model vllm` in a vLLM image) does not.
pub fn runs_engine(c: &Container, engine: &Engine) -> bool {
    if c.node.get("command").is_none() {
        return true;
    }
    detect_in(table(), &words(c), "").is_some_and(|e| e.id == engine.id)
}

fn detect_in<'e>(table: &'e [Engine], words: &[Word], image: &str) -> Option<&'e Engine> {
    for (i, w) in words.iter().enumerate() {
        let base = w.text.rsplit('/').next().unwrap_or(&w.text);
        let module = (i > 0 && words[i - 1].text == "-m").then_some(w.text.as_str());
        for e in table {
            if module.is_some_and(|m| e.modules.iter().any(|x| x == m)) {
                return Some(e);
            }
            if e.programs.iter().any(|p| p == base) && at_command_start(words, i) {
                return Some(e);
            }
        }
    }
    let repo = image_repository(image);
    if repo.is_empty() {
        return None;
    }
    table
        .iter()
        .find(|e| e.images.iter().any(|i| repo.contains(i.as_str())))
}

/// A factor of the rank count as written.
#[derive(Clone, Debug)]
pub struct Factor<'a> {
    /// The flag as written (`--tensor-parallel-size`, `-tp`, `NUM_SHARD`).
    pub flag: String,
    /// The value as written.
    pub value: String,
    /// `Some(n)` for a whole number above zero; `None` for a value that is not one (a shell
    /// variable, a template, `auto`).
    pub count: Option<u64>,
    /// Where it is written.
    pub node: &'a Node,
}

/// The value of `flag` in `words`: `--flag N`, `--flag=N`. The last one wins, as in argparse.
fn flag_value<'w, 'a>(words: &'w [Word<'a>], flag: &str) -> Option<(&'w str, &'a Node)> {
    let mut found = None;
    for (i, w) in words.iter().enumerate() {
        if w.text == flag {
            if let Some(next) = words.get(i + 1) {
                if !OPERATORS.contains(&next.text.as_str()) {
                    found = Some((next.text.as_str(), next.node));
                }
            }
        } else if let Some(v) = w
            .text
            .strip_prefix(flag)
            .and_then(|rest| rest.strip_prefix('='))
        {
            found = Some((v, w.node));
        }
    }
    found
}

/// The last written of several spellings of one flag: (value, its node, the spelling).
fn last_flag<'w, 'a>(
    words: &'w [Word<'a>],
    spellings: &'w [String],
) -> Option<(&'w str, &'a Node, &'w String)> {
    let mut best: Option<(usize, (&'w str, &'a Node, &'w String))> = None;
    for flag in spellings.iter().filter(|f| f.starts_with('-')) {
        let Some((value, node)) = flag_value(words, flag) else {
            continue;
        };
        let at = words
            .iter()
            .rposition(|w| w.text == *flag || w.text.starts_with(&format!("{flag}=")))
            .unwrap_or(0);
        if best.as_ref().is_none_or(|(b, _)| at >= *b) {
            best = Some((at, (value, node, flag)));
        }
    }
    best.map(|(_, v)| v)
}

/// A setting as written: the flag or variable, the value as written, where, and the value
/// with the container's environment references resolved (`None` when one is not a literal).
#[derive(Clone, Debug)]
pub struct Setting<'a> {
    pub flag: String,
    pub written: String,
    pub value: Option<String>,
    pub node: &'a Node,
}

/// The literal `env` values of a container (`valueFrom` ones are left out).
pub(crate) fn env_values(env: Option<&Node>) -> Vec<(&str, &str)> {
    env.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some((e.get_str("name")?, e.get("value")?.text()?)))
        .collect()
}

/// `$(VAR)` (Kubernetes' expansion of `command`/`args`), `${VAR}` and `$VAR` (a script's shell)
/// replaced by the container's literal `env` value; `None` when a reference is left.
pub fn expand(value: &str, env: &[(&str, &str)]) -> Option<String> {
    if !value.contains('$') {
        return Some(value.to_string());
    }
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(inner) = after.strip_prefix('(') {
            let end = inner.find(')')?;
            (&inner[..end], end + 2)
        } else if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}')?;
            (&inner[..end], end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        let (_, v) = env.iter().rev().find(|(n, _)| *n == name)?;
        if v.contains('$') {
            return None;
        }
        out.push_str(v);
        rest = &after[len..];
    }
    out.push_str(rest);
    Some(out)
}

/// Whether a container's command line writes one of these switches (flags without a value:
/// `--fail_fast_on_attention_window_too_large`).
pub fn switch(c: &Container, spellings: &[String]) -> bool {
    words(c).iter().any(|w| spellings.contains(&w.text))
}

/// One setting of a container: the last written flag of `spellings`, else the first of its
/// environment variables the container sets.
pub fn setting<'a>(c: &Container<'a>, spellings: &[String]) -> Option<Setting<'a>> {
    setting_in(&words(c), c.node.get("env"), spellings)
}

fn setting_in<'a>(
    words: &[Word<'a>],
    env_node: Option<&'a Node>,
    spellings: &[String],
) -> Option<Setting<'a>> {
    let env = env_values(env_node);
    if let Some((written, node, flag)) = last_flag(words, spellings) {
        return Some(Setting {
            flag: flag.clone(),
            value: expand(written, &env),
            written: written.to_string(),
            node,
        });
    }
    for name in spellings.iter().filter(|f| !f.starts_with('-')) {
        let var = env_node
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|e| e.get_str("name") == Some(name.as_str()));
        if let Some(node) = var.and_then(|v| v.get("value")) {
            let written = node.text().unwrap_or_default().to_string();
            return Some(Setting {
                flag: name.clone(),
                value: expand(&written, &env),
                written,
                node,
            });
        }
    }
    None
}

/// The model a container's engine serves, as written: its flag or variable, else the word
/// after `model_after` (`vllm serve MODEL`), else KServe's `storageUri: hf://org/model`.
pub fn model_setting<'a>(c: &Container<'a>, flags: &ServingFlags) -> Option<Setting<'a>> {
    let words = words(c);
    let env_node = c.node.get("env");
    if let Some(s) = setting_in(&words, env_node, &flags.model) {
        return Some(s);
    }
    if let Some(after) = &flags.model_after {
        let env = env_values(env_node);
        for (i, w) in words.iter().enumerate() {
            // `vllm serve MODEL`: `after` is the program's first word; `trtllm-serve MODEL`:
            // `after` is the program.
            let base = w.text.rsplit('/').next().unwrap_or(&w.text);
            let mut flag = if flags.model_after_program {
                if base != after || !at_command_start(&words, i) {
                    continue;
                }
                w.text.clone()
            } else if w.text == *after && i > 0 && at_command_start(&words, i - 1) {
                format!("{} {after}", words[i - 1].text)
            } else {
                continue;
            };
            let mut at = i + 1;
            if let Some(sub) = words
                .get(at)
                .filter(|s| flags.model_subcommands.contains(&s.text))
            {
                flag = format!("{flag} {}", sub.text);
                at += 1;
            }
            if let Some(next) = words.get(at) {
                if !next.text.starts_with('-') && !OPERATORS.contains(&next.text.as_str()) {
                    return Some(Setting {
                        flag,
                        value: expand(&next.text, &env),
                        written: next.text.clone(),
                        node: next.node,
                    });
                }
            }
        }
    }
    if flags.storage_uri {
        let node = c.node.get("storageUri")?;
        let written = node.text()?;
        let id = written.strip_prefix("hf://")?;
        return Some(Setting {
            flag: "storageUri".into(),
            written: written.to_string(),
            value: Some(id.to_string()),
            node,
        });
    }
    None
}

fn count_of(value: &str) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok().filter(|&n| n > 0)
}

/// The parallelism flags a container sets for its engine.
#[derive(Clone, Debug, Default)]
pub struct Parallelism<'a> {
    pub factors: Vec<Factor<'a>>,
    /// A flag in `skip_flags` is set: the factors do not count one pod's GPUs.
    pub skip_flag: Option<String>,
}

impl Parallelism<'_> {
    /// The rank count, when every factor is a number; `None` without factors.
    pub fn ranks(&self) -> Option<u64> {
        if self.factors.is_empty() {
            return None;
        }
        self.factors
            .iter()
            .try_fold(1u64, |acc, f| acc.checked_mul(f.count?))
    }

    /// `--tensor-parallel-size=4 × --pipeline-parallel-size=2`, for messages.
    pub fn describe(&self) -> String {
        self.factors
            .iter()
            .map(|f| format!("{} {}", f.flag, f.value))
            .collect::<Vec<_>>()
            .join(" × ")
    }
}

/// Reads the engine's parallelism flags (and environment variables) from a container.
pub fn parallelism<'a>(engine: &Engine, c: &Container<'a>) -> Parallelism<'a> {
    parallelism_in(engine, &words(c), c.node.get("env"))
}

fn parallelism_in<'a>(
    engine: &Engine,
    words: &[Word<'a>],
    env: Option<&'a Node>,
) -> Parallelism<'a> {
    let mut out = Parallelism::default();
    for spellings in &engine.parallelism {
        // Several spellings of one factor: the last written one wins.
        if let Some((value, node, flag)) = last_flag(words, spellings) {
            out.factors.push(Factor {
                flag: flag.clone(),
                value: value.to_string(),
                count: count_of(value),
                node,
            });
        }
    }
    for name in &engine.env {
        let var = env
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .find(|e| e.get_str("name") == Some(name.as_str()));
        if let Some(value) = var.and_then(|v| v.get("value")) {
            // A flag on the command line wins over the variable.
            if out.factors.is_empty() {
                let text = value.text().unwrap_or_default().to_string();
                out.factors.push(Factor {
                    flag: name.clone(),
                    count: count_of(&text),
                    value: text,
                    node: value,
                });
            }
        }
    }
    out.skip_flag = engine
        .skip_flags
        .iter()
        .find(|f| flag_value(words, f).is_some() || words.iter().any(|w| w.text == **f))
        .cloned();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::yaml::Stream;

    #[test]
    fn the_builtin_table_decodes() {
        let stream = Stream::parse(BUILTIN);
        let engines = decode(&stream.documents[0].root).expect("rules/engines.yaml is valid");
        let ids: Vec<&str> = engines.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "nim",
                "vllm",
                "ray-serve-llm",
                "sglang",
                "tgi",
                "kserve-huggingface",
                "trtllm",
                "triton",
                "torchrun"
            ]
        );
        assert_eq!(table().len(), 9);
        assert!(by_id("torchrun").is_some_and(|e| e.preallocates.is_none()));
        assert!(by_id("vllm").is_some_and(|e| e.preallocates.is_some()));
    }

    #[test]
    fn an_unknown_key_in_the_table_is_an_error() {
        let stream = Stream::parse("engines:\n- id: x\n  name: X\n  imgs: [x]\n");
        let e = decode(&stream.documents[0].root).unwrap_err();
        assert!(e.message.contains("unknown key `imgs`"), "{}", e.message);
    }

    #[test]
    fn shell_scripts_split_like_a_shell() {
        assert_eq!(
            split_shell(
                "pip install x && exec vllm serve m --tensor-parallel-size=\"4\" -pp '2' # c\nnext"
            ),
            [
                "pip",
                "install",
                "x",
                "&&",
                "exec",
                "vllm",
                "serve",
                "m",
                "--tensor-parallel-size=4",
                "-pp",
                "2",
                "\n",
                "next"
            ]
        );
        assert_eq!(
            split_shell("a \\\n  --tp $TP; b \"x\\\"y\" ''"),
            ["a", "--tp", "$TP", ";", "b", "x\"y", ""]
        );
        assert_eq!(
            split_shell("a|b||c&d"),
            ["a", "|", "b", "||", "c", "&", "d"]
        );
    }

    /// The words and the engine of the first container of a Pod manifest.
    fn pod(containers: &str) -> Stream {
        Stream::parse(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n{containers}"
        ))
    }

    fn with_container<R>(containers: &str, f: impl FnOnce(&Container) -> R) -> R {
        let stream = pod(containers);
        let catalog = crate::k8s::catalog::Catalog::builtin();
        let objects = crate::k8s::workload::objects(&stream.documents[0]);
        let w = crate::k8s::workload::Workload::of(objects[0].clone(), &catalog)
            .expect("a Pod is a workload");
        f(&w.containers[0])
    }

    fn ranks(containers: &str) -> (Option<String>, Option<u64>, String) {
        with_container(containers, |c| {
            let e = detect(c);
            let p = e.map(|e| parallelism(e, c)).unwrap_or_default();
            (e.map(|e| e.id.clone()), p.ranks(), p.describe())
        })
    }

    #[test]
    fn nim_images_are_nim_as_strings_and_as_the_operators_mappings() {
        let id = |containers: &str| with_container(containers, |c| detect(c).map(|e| e.id.clone()));
        assert_eq!(
            id("  - {name: a, image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0}\n").as_deref(),
            Some("nim")
        );
        // A mirror keeps the path; a repository merely named `nim` is not NIM.
        assert_eq!(
            id("  - {name: a, image: registry.example.com/nvcr/nim/meta/llama3-8b-instruct:1.0.0}\n").as_deref(),
            Some("nim")
        );
        assert_eq!(id("  - {name: a, image: nimlang/nim:2.0}\n"), None);
        // A NIMService's spec.image is {repository, tag}.
        let stream = Stream::parse(
            "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata: {name: n}\nspec:\n  image: {repository: nvcr.io/nim/meta/llama-3.1-8b-instruct, tag: \"1.3.3\"}\n  resources: {limits: {nvidia.com/gpu: 1}}\n",
        );
        let catalog = crate::k8s::catalog::Catalog::builtin();
        let objects = crate::k8s::workload::objects(&stream.documents[0]);
        let w = crate::k8s::workload::Workload::of(objects[0].clone(), &catalog)
            .expect("a NIMService is a workload");
        let c = &w.containers[0];
        assert_eq!(
            image(c).as_deref(),
            Some("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3")
        );
        assert_eq!(detect(c).map(|e| e.id.as_str()), Some("nim"));
        // Its spec is its pod's spec too: the container belongs to it.
        assert_eq!(c.pod, Some(0));
        // vLLM run from a NIM image is vLLM.
        assert_eq!(
            id("  - {name: a, image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0, command: [vllm, serve, m]}\n").as_deref(),
            Some("vllm")
        );
    }

    #[test]
    fn flags_are_read_in_every_spelling() {
        // Separate words, `=`-joined, short forms, quoted YAML scalars.
        assert_eq!(
            ranks("  - name: a\n    image: vllm/vllm-openai:v0.10.0\n    args: [\"--model\", \"m\", \"--tensor-parallel-size\", \"4\", \"-pp=2\"]\n"),
            (Some("vllm".into()), Some(8), "--tensor-parallel-size 4 × -pp 2".into())
        );
        assert_eq!(
            ranks("  - name: a\n    image: docker.io/vllm/vllm-openai@sha256:abc\n    args: ['--tensor-parallel-size=2', '-tp', '4']\n"),
            (Some("vllm".into()), Some(4), "-tp 4".into()),
            "the last spelling written wins"
        );
        // vLLM reads `_` as `-` in long options (issue 26: 4 × 2 on 8 GPUs was "4 idle").
        assert_eq!(
            ranks("  - name: a\n    image: vllm/vllm-openai:v0.10.0\n    args: [\"--tensor-parallel-size\", \"4\", \"--pipeline_parallel_size\", \"2\"]\n"),
            (
                Some("vllm".into()),
                Some(8),
                "--tensor-parallel-size 4 × --pipeline_parallel_size 2".into()
            )
        );
        assert_eq!(
            ranks("  - name: a\n    image: python:3.11\n    command: [python3, -m, sglang.launch_server]\n    args: [--tp, \"2\"]\n"),
            (Some("sglang".into()), Some(2), "--tp 2".into())
        );
        assert_eq!(
            ranks("  - name: a\n    image: ghcr.io/huggingface/text-generation-inference:3.0\n    env:\n    - {name: NUM_SHARD, value: \"2\"}\n"),
            (Some("tgi".into()), Some(2), "NUM_SHARD 2".into())
        );
        assert_eq!(
            ranks("  - name: a\n    image: pytorch/pytorch\n    command: [torchrun, --nproc_per_node=8, train.py]\n"),
            (Some("torchrun".into()), Some(8), "--nproc_per_node 8".into())
        );
    }

    #[test]
    fn shell_strings_are_read() {
        assert_eq!(
            ranks("  - name: a\n    image: vllm/vllm-openai\n    command: [/bin/sh, -c]\n    args:\n    - |\n      set -e\n      exec vllm serve meta-llama/Llama-3.1-8B \\\n        --tensor-parallel-size \"2\" --max-model-len=8192\n"),
            (Some("vllm".into()), Some(2), "--tensor-parallel-size 2".into())
        );
        // The program found in the script, not the image.
        assert_eq!(
            ranks("  - name: a\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    command: [bash, -lc, \"cd /w && torchrun --nnodes=2 --nproc-per-node 4 train.py\"]\n"),
            (Some("torchrun".into()), Some(4), "--nproc-per-node 4".into())
        );
    }

    #[test]
    fn unresolved_and_non_numeric_values_give_no_count() {
        for v in ["$(TP)", "${TP}", "auto", "gpu", "0", "{{ .Values.tp }}"] {
            let (_, n, _) = ranks(&format!(
                "  - name: a\n    image: vllm/vllm-openai\n    args: [\"--tensor-parallel-size={v}\"]\n"
            ));
            assert_eq!(n, None, "{v}");
        }
        // No flag: no count (the engine's default is not guessed).
        assert_eq!(
            ranks("  - name: a\n    image: vllm/vllm-openai\n    args: [--model, m]\n").1,
            None
        );
    }

    #[test]
    fn a_program_name_counts_only_at_the_start_of_a_command() {
        // `vllm` as a flag value is not the program.
        assert_eq!(
            ranks("  - name: a\n    image: busybox\n    args: [--served-model-name, vllm]\n").0,
            None
        );
        assert_eq!(
            ranks("  - name: a\n    image: busybox\n    command: [sh, -c, \"echo go; /usr/local/bin/vllm serve m -tp 2\"]\n"),
            (Some("vllm".into()), Some(2), "-tp 2".into())
        );
    }

    #[test]
    fn skip_flags_are_noticed() {
        with_container(
            "  - name: a\n    image: lmsysorg/sglang\n    command: [python3, -m, sglang.launch_server, --tp, \"16\", --nnodes, \"2\"]\n",
            |c| {
                let e = detect(c).unwrap();
                assert_eq!(parallelism(e, c).skip_flag.as_deref(), Some("--nnodes"));
            },
        );
    }
}
