//! The docs are complete and their links resolve: every key of `.gpulint.yaml` (the parser's
//! own list, `gpulint::config::CONFIG_KEYS`), every subcommand, flag and environment variable
//! of the real command line (clap's `Cli::command()`) and every rule of the registry is
//! documented in `docs/`; every relative link and `#anchor` of README.md, ARCHITECTURE.md,
//! docs/*.md, rules/*.md and the bench, fuzz and demo READMEs points at a file that exists and a
//! heading it has (GitHub's slugs);
//! and the README's first run is what the demo prints.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use clap::CommandFactory;
use gpulint::cli::Cli;
use gpulint::config::{Config, CONFIG_KEYS, REFUSED_KEYS};
use gpulint::rules::RULES;

use crate::support::common::{gpulint, output};
use crate::support::rule_docs::{read, root};

/// Every page of docs/, by its path from the crate root.
fn docs_pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.ends_with(".md").then(|| format!("docs/{name}"))
        })
        .collect();
    pages.sort();
    pages
}

/// All of docs/ as one text.
fn all_docs() -> String {
    docs_pages()
        .iter()
        .map(|p| read(p))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The documented name of a config key: `exclude`, `charts[].values`, `rules.<ID>.severity`.
fn dotted(section: &str, key: &str) -> String {
    if section.is_empty() {
        key.to_string()
    } else {
        format!("{section}.{key}")
    }
}

/// The keys docs/configuration.md documents: the first cell of its tables' rows.
fn documented_keys(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cell = l.trim_start_matches("| `");
            cell.split_once("` |").map(|(key, _)| key.to_string())
        })
        .collect()
}

fn schema_keys() -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = CONFIG_KEYS
        .iter()
        .flat_map(|(section, keys)| keys.iter().map(|k| dotted(section, k)))
        .collect();
    keys.extend(REFUSED_KEYS.iter().map(|k| k.to_string()));
    keys
}

/// Every key the parser reads has a row in docs/configuration.md, and every row is a key the
/// parser reads (or refuses with its own error).
#[test]
fn every_config_key_is_documented() {
    let documented = documented_keys(&read("docs/configuration.md"));
    let schema = schema_keys();
    // A section whose entries are keys of their own (`rules:`, `charts:`) has a row too.
    let sections: BTreeSet<String> = CONFIG_KEYS
        .iter()
        .map(|(section, _)| section.trim_end_matches("[]").to_string())
        .filter(|s| !s.is_empty() && !s.contains('.'))
        .collect();
    let missing: Vec<&String> = schema.iter().filter(|k| !documented.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "docs/configuration.md does not document {missing:?}"
    );
    // `helm` has a section of its own rather than a row: it is refused.
    let unknown: Vec<&String> = documented
        .iter()
        .filter(|k| !schema.contains(*k) && !sections.contains(*k))
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/configuration.md documents keys the config does not have: {unknown:?}"
    );
}

/// docs/configuration.md's example is a valid config that sets every key but the refused ones.
#[test]
fn the_configuration_example_parses_and_sets_every_key() {
    let text = read("docs/configuration.md");
    let example = text
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("docs/configuration.md opens with a yaml example");
    for (section, keys) in CONFIG_KEYS {
        for key in *keys {
            if REFUSED_KEYS.contains(&dotted(section, key).as_str()) {
                continue;
            }
            assert!(
                example.contains(&format!("{key}:")),
                "the example of docs/configuration.md does not set `{}`",
                dotted(section, key)
            );
        }
    }
    // The files it names, so that it parses as it would in a repository.
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    for file in ["metrics.json", "certs/ca.pem", "envs/prod.yaml"] {
        let path = repo.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "{}\n").unwrap();
    }
    let path = repo.path().join(".gpulint.yaml");
    std::fs::write(&path, example).unwrap();
    if let Err(e) = Config::parse(example, &path) {
        panic!("the example of docs/configuration.md: {e:?}");
    }
}

/// Every subcommand of the real command line, every long and short flag, and every
/// environment variable an option reads, is named in docs/.
#[test]
fn every_command_and_flag_is_documented() {
    let docs = all_docs();
    let mut missing = Vec::new();
    fn walk(cmd: &clap::Command, path: &str, docs: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                let flag = format!("--{long}");
                if !docs.contains(&format!("`{flag}")) && !docs.contains(&format!(" {flag}")) {
                    missing.push(format!("{path} {flag}"));
                }
            }
            if let Some(short) = arg.get_short() {
                if !docs.contains(&format!("`-{short}")) {
                    missing.push(format!("{path} -{short}"));
                }
            }
            if let Some(env) = arg.get_env() {
                let env = env.to_string_lossy();
                if !docs.contains(&*env) {
                    missing.push(format!("{path}: environment variable {env}"));
                }
            }
        }
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            if name == "help" {
                continue;
            }
            let path = format!("{path} {name}");
            if !docs.contains(&path) {
                missing.push(format!("the command `{path}`"));
            }
            walk(sub, &path, docs, missing);
        }
    }
    let cli = Cli::command();
    walk(&cli, "gpulint", &docs, &mut missing);
    assert!(missing.is_empty(), "not documented in docs/: {missing:#?}");
}

/// docs/rules.md links every rule's page, and no rule is left out of docs/.
#[test]
fn every_rule_links_its_page_from_docs() {
    let rules = read("docs/rules.md");
    for r in RULES {
        assert!(
            rules.contains(&format!("| [{0}](../rules/{0}.md) | {1} |", r.id, r.name)),
            "docs/rules.md has no row linking rules/{}.md",
            r.id
        );
    }
}

/// GitHub's heading anchor: the heading's text without markup, lowercased, with every
/// character but letters, digits, `-`, `_` and spaces dropped and spaces made `-`
/// (github-slugger); a repeated one gets `-1`, `-2`, ….
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // A link's text stands for the link.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").zip(after.find(')')) {
            Some((close, end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown file's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose_lines(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim());
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The lines of a markdown text outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The targets of the inline links and images of a markdown text (outside code blocks and
/// code spans).
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        // Drop code spans: `[x](y)` inside backticks is no link.
        let mut prose = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                prose.push_str(part);
            }
        }
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

/// Lexically normalized `base/target`.
fn join(base: &Path, target: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(target).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The markdown files whose links are checked, by their path from the crate root.
fn linked_pages() -> Vec<String> {
    let mut pages: Vec<String> = [
        "README.md",
        "ARCHITECTURE.md",
        "bench/README.md",
        "fuzz/README.md",
        "testdata/demo/README.md",
    ]
    .map(String::from)
    .to_vec();
    pages.extend(docs_pages());
    for entry in std::fs::read_dir(root().join("rules")).expect("rules/") {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(format!("rules/{name}"));
        }
    }
    pages
}

/// The broken relative links of `pages` (files under `base`): `page: target (why)`.
fn broken_links(base: &Path, pages: &[String]) -> Vec<String> {
    let mut broken = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(base.join(page)).unwrap_or_default();
        let dir = Path::new(page).parent().unwrap_or(Path::new(""));
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                PathBuf::from(page)
            } else {
                join(dir, file)
            };
            let full = base.join(&path);
            if !full.exists() {
                broken.push(format!(
                    "{page}: {target} ({} does not exist)",
                    path.display()
                ));
                continue;
            }
            if let Some(anchor) = anchor {
                let heads = anchors(&std::fs::read_to_string(&full).unwrap_or_default());
                if !heads.contains(anchor) {
                    broken.push(format!(
                        "{page}: {target} ({} has no heading #{anchor})",
                        path.display()
                    ));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let broken = broken_links(root(), &linked_pages());
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The checker itself finds a missing file and a missing anchor, and reads anchors as GitHub
/// writes them.
#[test]
fn the_link_checker_finds_broken_links() {
    assert_eq!(
        slug("Measured headroom: `--metrics`"),
        "measured-headroom---metrics"
    );
    assert_eq!(
        slug("Clusters: lint each cluster's repository as it applies it"),
        "clusters-lint-each-clusters-repository-as-it-applies-it"
    );
    assert_eq!(
        slug("`charts:`: releases the config declares"),
        "charts-releases-the-config-declares"
    );
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("docs")).unwrap();
    std::fs::write(tmp.path().join("docs/a.md"), "# A\n\n## Same\n\n## Same\n").unwrap();
    std::fs::write(
        tmp.path().join("README.md"),
        "[ok](docs/a.md#same-1) [gone](docs/b.md) [no anchor](docs/a.md#same-2) \
         `[code](docs/c.md)` [self](#a-title)\n\n# A title\n",
    )
    .unwrap();
    let broken = broken_links(tmp.path(), &["README.md".into()]);
    assert_eq!(
        broken,
        [
            "README.md: docs/b.md (docs/b.md does not exist)",
            "README.md: docs/a.md#same-2 (docs/a.md has no heading #same-2)"
        ]
    );
}

/// The README's first run is an excerpt of what its first set-up command prints: each part
/// between `…` lines is a run of consecutive lines of the demo's real output, in order.
#[test]
fn the_readme_first_run_is_the_demo_output() {
    let readme = read("README.md");
    let shown = readme
        .split("\n## A first run\n")
        .nth(1)
        .and_then(|s| s.split("```text\n").nth(1))
        .and_then(|s| s.split("\n```").next())
        .expect("README has a first run in a ```text block");
    let (code, stdout, stderr) = output(gpulint().current_dir(root()).arg("testdata/demo"));
    assert_eq!(code, 1, "{stderr}");
    let real: Vec<&str> = stdout.lines().collect();
    let mut from = 0;
    for part in shown.split("\n…\n") {
        let lines: Vec<&str> = part.lines().collect();
        let at = (from..=real.len().saturating_sub(lines.len()))
            .find(|&i| real[i..i + lines.len()] == lines[..])
            .unwrap_or_else(|| {
                panic!("the README's first run shows\n{part}\nwhich the demo does not print (after line {from}):\n{stdout}")
            });
        from = at + lines.len();
    }
}
