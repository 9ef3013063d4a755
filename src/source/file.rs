//! The run's files: each input read and parsed once (`SourceFile`), its part in the run
//! (`FileRole`), an input that could not be read (`InputError`), and the run index that
//! `SourceId`s point into (`find_file`, `file_index`).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::source::discover::Input;
use crate::source::kustomize::normalize;
use crate::source::yaml::Stream;

/// One input file, parsed.
pub struct SourceFile {
    pub input: Input,
    /// The name shown in findings (the path as walked).
    pub name: String,
    pub stream: Arc<Stream>,
    pub role: FileRole,
}

/// How a file takes part in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileRole {
    /// A manifest linted as written.
    Plain,
    /// A manifest (or patch) that a rendered kustomization reads: linted through the render.
    Rendered,
    /// Read only for renders (kustomization files, bases outside the linted folders).
    Support,
}

/// An input that could not be read or parsed, placed where it went wrong.
#[derive(Clone, Debug, serde::Serialize)]
pub struct InputError {
    /// Index of the file in the run's file list, when it was read (for the source snippet).
    #[serde(skip)]
    pub source: Option<(usize, usize)>,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Reads and parses one input (a file of bounded size, or stdin).
pub fn load_input(input: Input) -> Result<SourceFile, InputError> {
    load_input_reusing(input, None)
}

/// [`load_input`], taking `known` as the parse when the input's bytes are exactly its text
/// (a parse is a pure function of the text: the same tree, without parsing again).
pub fn load_input_reusing(
    input: Input,
    known: Option<&Arc<Stream>>,
) -> Result<SourceFile, InputError> {
    let name = input.display();
    let bytes = match &input {
        // A regular file of bounded size (a FIFO would block forever).
        Input::File(path) => {
            crate::source::repo::read_file(path, None).map_err(std::io::Error::from)
        }
        Input::Stdin => {
            let mut buf = Vec::new();
            std::io::stdin().read_to_end(&mut buf).map(|_| buf)
        }
    }
    .map_err(|e| InputError {
        source: None,
        file: name.clone(),
        line: 0,
        column: 0,
        message: format!("cannot read: {e}"),
    })?;
    let stream = match known {
        Some(s) if s.text.as_bytes() == bytes.as_slice() => s.clone(),
        _ => Arc::new(Stream::parse_bytes(&bytes)),
    };
    Ok(SourceFile {
        stream,
        input,
        name,
        role: FileRole::Plain,
    })
}

/// A name for people: the path relative to the working directory when it is below it.
pub fn display_path(path: &Path) -> String {
    let cwd = std::env::current_dir().ok().map(|c| normalize(&c));
    match cwd.as_ref().and_then(|c| path.strip_prefix(c).ok()) {
        Some(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

/// The run index of the file at `path`, however either is spelled.
pub fn find_file(files: &[SourceFile], path: &Path) -> Option<usize> {
    let wanted = normalize(path);
    files.iter().position(|f| match &f.input {
        Input::File(p) => normalize(p) == wanted,
        Input::Stdin => false,
    })
}

/// The run index of the file at `path`, reading it (as a support file, through the repository
/// boundary `root`) when the run does not have it yet.
pub fn file_index(files: &mut Vec<SourceFile>, path: &Path, root: &Path) -> Option<usize> {
    if let Some(found) = find_file(files, path) {
        return Some(found);
    }
    let wanted = normalize(path);
    let bytes = crate::source::repo::read_file(&wanted, Some(root)).ok()?;
    files.push(SourceFile {
        name: display_path(&wanted),
        input: Input::File(wanted),
        stream: Arc::new(Stream::parse_bytes(&bytes)),
        role: FileRole::Support,
    });
    Some(files.len() - 1)
}
