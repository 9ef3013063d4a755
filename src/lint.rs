//! The pipeline: discover → load (parallel) → repo facts → rules (parallel) → findings.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::config::Config;
use crate::deploy::{self, Placement};
use crate::edit::resources::Target;
use crate::k8s::catalog::Catalog;
use crate::k8s::gpu::GpuNames;
use crate::k8s::workload::{objects, objects_in, Workload};
use crate::metrics::recommend::Policy;
use crate::metrics::usage::{ContainerKey, Coverage, UsageSet};
use crate::rules::headroom::usage_key;
use crate::rules::{
    self, Context, Finding, Origin, RepoFacts, Rule, Severity, Suppression, SuppressionKind,
};
use crate::source::discover::{discover, Input};
use crate::source::file::{
    display_path, load_input, load_input_reusing, FileRole, InputError, SourceFile,
};
use crate::source::helm::HelmEngine;
use crate::source::units::{self, HelmUnit, RenderSettings, RenderUnit};
use crate::source::yaml::{Comment, Node, Stream};

pub const IGNORE_ANNOTATION: &str = "gpulint.io/ignore";

/// Which rules to run, from the command line.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// `--select`: only these run (none: all that are on).
    pub select: Vec<Rule>,
    /// `--ignore`: these never run.
    pub ignore: Vec<Rule>,
    /// `--measured-only`: only findings about what was measured (`Finding::is_measured`).
    pub measured_only: bool,
}

impl Selection {
    fn allows(&self, info: &rules::RuleInfo) -> bool {
        (self.select.is_empty() || self.select.contains(&info.rule))
            && !self.ignore.contains(&info.rule)
    }

    /// `--select` names a rule explicitly: it runs even when off by default.
    fn forces(&self, info: &rules::RuleInfo) -> bool {
        self.select.contains(&info.rule)
    }
}

pub struct Run {
    pub files: Vec<SourceFile>,
    /// Rendered Kustomize roots, linted as rendered.
    pub units: Vec<RenderUnit>,
    /// Rendered Helm releases, linted as rendered.
    pub releases: Vec<HelmUnit>,
    pub findings: Vec<Finding>,
    /// What rules looked up across files (queues, quotas, claims, namespaces), per cluster, as
    /// linted: the fix plan and the lint after it use these, not a second pass over every file.
    pub facts: Facts,
    pub errors: Vec<InputError>,
    /// Things worth saying once (e.g. charts skipped without a helm binary).
    pub notes: Vec<String>,
    /// Which cluster applies each plain file (units and releases carry their own).
    pub placement: Placement,
    /// How much of the run's containers the measurements cover (`None` without measurements).
    pub coverage: Option<Coverage>,
    /// The files a folder no cluster applies was linted as, named one by one
    /// (`base_folder_files`); empty for any other run.
    pub named: Vec<PathBuf>,
    /// Findings were narrowed to a scope (named files, `--changed-since`): `--fix` writes the
    /// fixes of those only.
    pub narrowed: bool,
    /// What Kustomize roots read, when named files made the run build it: the fix plan asks
    /// it again instead of reading every kustomization of the repository a second time.
    pub readers: Option<Arc<crate::source::kustomize::ReadersIndex>>,
}

impl Run {
    /// How many files the run linted: manifests, and the files its renders read (not those read
    /// only by renders looked at for a named file and then left out).
    pub fn file_count(&self) -> usize {
        let mut used: BTreeSet<usize> = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.role != FileRole::Support)
            .map(|(i, _)| i)
            .collect();
        for unit in &self.units {
            used.insert(unit.home);
            used.extend(unit.files.iter().copied());
        }
        used.extend(self.releases.iter().map(|r| r.chart_file));
        used.len()
    }

    /// Findings that count (not suppressed) at or above `level`.
    pub fn count_at_or_above(&self, level: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.suppression.is_none() && f.severity >= level)
            .count()
    }
}

/// Everything a lint run needs besides the inputs.
pub struct Linter {
    pub config: Config,
    pub catalog: Catalog,
    pub gpu_names: GpuNames,
    /// The model catalogue: the built-in one and the config's `models:`.
    pub models: crate::k8s::model::Catalogue,
    pub selection: Selection,
    /// Measured usage for the headroom rules.
    pub usage: Option<UsageSet>,
    pub policy: Policy,
    pub render: RenderSettings,
    /// The Helm engine charts are rendered with (`--helm`, `helm:` in the config, or `helm` on
    /// PATH); without one, charts are skipped with a note.
    pub helm: Option<HelmEngine>,
}

/// Each input error once: a broken base fails the render of every overlay reading it, with the
/// same error at the same place, and the file's own parse says it again. Kept: the first at
/// each place and text, the file's own parse error rather than a render's copy of it.
fn once_each(errors: Vec<InputError>) -> Vec<InputError> {
    let core = |e: &InputError| -> String {
        let text = e.message.strip_prefix("kustomize: ").unwrap_or(&e.message);
        text.strip_prefix("invalid YAML: ")
            .unwrap_or(text)
            .to_string()
    };
    let mut out: Vec<InputError> = Vec::with_capacity(errors.len());
    let mut seen: HashMap<(String, usize, usize, String), usize> = HashMap::new();
    for e in errors {
        let key = (e.file.clone(), e.line, e.column, core(&e));
        match seen.get(&key).and_then(|&i| out.get_mut(i)) {
            None => {
                seen.insert(key, out.len());
                out.push(e);
            }
            Some(kept) => {
                if kept.message.starts_with("kustomize: ") && !e.message.starts_with("kustomize: ")
                {
                    *kept = e;
                }
            }
        }
    }
    out
}

impl Linter {
    pub fn new(config: Config, selection: Selection) -> Linter {
        let mut catalog = Catalog::builtin();
        catalog.extend(config.workloads.clone());
        let gpu_names = GpuNames::new(config.gpu_resources.clone())
            .with_device_classes(config.gpu_device_classes.clone())
            .with_mig_resources(crate::metrics::mig::resource_names());
        let config_policy = config.policy.clone();
        let models = crate::k8s::model::Catalogue::new(config.models.clone());
        Linter {
            config,
            catalog,
            gpu_names,
            models,
            selection,
            usage: None,
            policy: config_policy,
            render: RenderSettings::default(),
            helm: None,
        }
    }

    /// Loads every input and renders the Kustomize roots; unreadable files and render errors
    /// become errors.
    pub fn load(&self, paths: &[PathBuf]) -> Loaded {
        let loaded = self.load_inputs(paths, self.helm.as_ref(), true);
        match base_folder_files(paths, &loaded, &self.config) {
            Some(files) => Loaded {
                named: files.clone(),
                ..self.load_inputs(&files, self.helm.as_ref(), true)
            },
            None => loaded,
        }
    }

    /// [`Linter::load`] with the Helm engine to render charts with, and whether a run that does
    /// not walk its clusters' declarations reads what they apply for the cross-object facts.
    fn load_inputs(
        &self,
        paths: &[PathBuf],
        helm: Option<&HelmEngine>,
        with_context: bool,
    ) -> Loaded {
        let found = discover(paths, &self.config, self.render.boundary.as_deref());
        let mut errors: Vec<InputError> = found
            .errors
            .into_iter()
            .map(|message| InputError {
                source: None,
                file: String::new(),
                line: 0,
                column: 0,
                message,
            })
            .collect();
        let loaded: Vec<Result<SourceFile, InputError>> =
            found.inputs.into_par_iter().map(load_input).collect();
        let mut files = Vec::new();
        for result in loaded {
            match result {
                Ok(file) => files.push(file),
                Err(e) => errors.push(e),
            }
        }
        let units = units::build(
            &found.roots,
            &found.conditional,
            &found.explicit,
            &mut files,
            &self.render,
            &mut errors,
        );
        let mut notes = found.notes;
        let declarations = self.declaration_files(paths, &mut files);
        let root = self
            .render
            .boundary
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        // Argo CD Applications that charts render (app-of-apps) declare like written ones.
        let mut rendered_applications = match helm {
            Some(engine) => units::rendered_applications(
                &found.charts,
                &files,
                &self.config.charts,
                &root,
                engine,
            ),
            None => units::RenderedApplications::default(),
        };
        // Which cluster applies each render and file: before the Helm releases, since a Flux
        // HelmRelease inside a render is declared as its cluster applies it.
        let (mut units, mut placement) = deploy::place(
            &files,
            &declarations,
            &rendered_applications.declarations,
            units,
            &self.render,
            self.render.boundary.as_deref(),
            &self.config.clusters,
            &mut notes,
        );
        for &i in &placement.rendered {
            if let Some(file) = files.get_mut(i) {
                file.role = FileRole::Rendered;
            }
        }
        units::render_components(&mut units, &mut files, &self.render, &mut notes);
        // Declarations are read even when the repository holds no chart or there is no engine:
        // a HelmRelease whose chart is elsewhere is then named in a note.
        let mut releases = units::build_helm(
            &found.charts,
            &units,
            &mut rendered_applications,
            &mut files,
            &self.config.charts,
            &root,
            helm,
            &mut errors,
            &mut notes,
        );
        // Parse errors of the manifests; support files (templates, kustomization files) report
        // through their renders.
        for (index, file) in files.iter().enumerate() {
            if file.role == FileRole::Support {
                continue;
            }
            if let Some(e) = &file.stream.error {
                let (line, column) = file.stream.line_col(e.offset);
                errors.push(InputError {
                    source: Some((index, e.offset)),
                    file: file.name.clone(),
                    line,
                    column,
                    message: e.message.clone(),
                });
            }
        }
        placement.place_releases(&mut releases);
        let mut errors = once_each(errors);
        // Folders holding no manifest at all: a wrong path or an `exclude` too wide, not a clean
        // repository. Files named one by one (pre-commit's staged files) that the config
        // excludes, or that are not manifests, are nothing to lint, and no error.
        let nothing = files.iter().all(|f| f.role == FileRole::Support)
            && units.is_empty()
            && releases.is_empty();
        let folders = paths.is_empty() || paths.iter().any(|p| p.is_dir());
        if nothing && folders && errors.is_empty() {
            let named: Vec<String> = if paths.is_empty() {
                vec!["`.`".into()]
            } else {
                paths
                    .iter()
                    .map(|p| format!("`{}`", display_path(p)))
                    .collect()
            };
            errors.push(InputError {
                source: None,
                file: String::new(),
                line: 0,
                column: 0,
                message: format!(
                    "no Kubernetes manifests found in {}: nothing was linted (gpulint reads \
                     `*.yaml` and `*.yml` files, Kustomize roots and Helm charts; check the paths \
                     and the config's `exclude:`)",
                    named.join(", ")
                ),
            });
        }
        let context = if with_context && !declarations.is_empty() {
            self.context_of(paths, &units, &placement)
        } else {
            None
        };
        Loaded {
            files,
            units,
            releases,
            errors,
            notes,
            placement,
            context,
            named: Vec::new(),
            readers: found.readers,
        }
    }

    /// What the clusters of a run that does not walk their declarations (a named file's, as
    /// pre-commit runs, or a subfolder's) apply besides what the run read: loaded for the
    /// cross-object facts only (the ClusterQueue under `infrastructure/` that decides whether a
    /// staged Job is ever admitted), never linted, and without Helm (a commit hook renders no
    /// chart it was not asked about). Its own errors are not the run's.
    fn context_of(
        &self,
        paths: &[PathBuf],
        units: &[RenderUnit],
        placement: &Placement,
    ) -> Option<Box<Loaded>> {
        let walked: Vec<PathBuf> = paths
            .iter()
            .map(|p| crate::source::kustomize::normalize(p))
            .collect();
        let rendered: BTreeSet<&Path> = units.iter().map(|u| u.dir.as_path()).collect();
        let folders: Vec<PathBuf> = placement
            .applied_folders()
            .into_iter()
            .filter(|f| f.is_dir())
            .filter(|f| !walked.iter().any(|w| f.starts_with(w)) && !rendered.contains(f.as_path()))
            .collect();
        if folders.is_empty() {
            return None;
        }
        Some(Box::new(self.load_inputs(&folders, None, false)))
    }

    /// The GitOps declarations of a run that does not walk them: a named file or a subfolder
    /// is applied by the clusters that `clusters/` folders above it (up to the repository's
    /// root) declare. Their manifests are read (not linted: `FileRole::Support`) and appended to
    /// `files`; returns their indices. A handful of small files per cluster, so a pre-commit
    /// run stays cheap.
    fn declaration_files(&self, paths: &[PathBuf], files: &mut Vec<SourceFile>) -> Vec<usize> {
        let Some(boundary) = self.render.boundary.as_deref() else {
            return Vec::new();
        };
        let boundary = crate::source::kustomize::normalize(boundary);
        let walked: Vec<PathBuf> = paths
            .iter()
            .map(|p| crate::source::kustomize::normalize(p))
            .collect();
        let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
        for path in &walked {
            for dir in path.ancestors().skip(1) {
                if !dir.starts_with(&boundary) {
                    break;
                }
                let clusters = dir.join("clusters");
                let inside_walk = walked.iter().any(|w| clusters.starts_with(w));
                if !inside_walk && clusters.is_dir() {
                    folders.insert(clusters);
                }
            }
        }
        if folders.is_empty() {
            return Vec::new();
        }
        let known: BTreeSet<PathBuf> = files
            .iter()
            .filter_map(|f| match &f.input {
                Input::File(p) => Some(crate::source::kustomize::normalize(p)),
                Input::Stdin => None,
            })
            .collect();
        let folders: Vec<PathBuf> = folders.into_iter().collect();
        let found = discover(&folders, &self.config, Some(&boundary));
        let mut added = Vec::new();
        for input in found.inputs {
            let Input::File(p) = &input else { continue };
            if known.contains(&crate::source::kustomize::normalize(p)) {
                continue;
            }
            if let Ok(mut file) = load_input(input) {
                file.role = FileRole::Support;
                added.push(files.len());
                files.push(file);
            }
        }
        added
    }

    /// What the rules see for one document of a file.
    pub fn context<'a>(
        &'a self,
        facts: &'a RepoFacts,
        text: &'a str,
        document: usize,
        default_namespace: &'a str,
        cluster: Option<&'a str>,
    ) -> Context<'a> {
        Context {
            gpu_names: &self.gpu_names,
            facts,
            kueue_required: self.config.kueue_required,
            target: Target::local(text, document),
            usage: self.usage.as_ref(),
            policy: &self.policy,
            default_namespace,
            cluster,
            models: &self.models,
        }
    }

    /// The namespace of a file's manifests that name none.
    pub fn default_namespace(&self, file: &SourceFile) -> &str {
        match &file.input {
            Input::File(path) => self.config.namespace_for(path),
            Input::Stdin => self
                .config
                .default_namespace
                .as_deref()
                .unwrap_or("default"),
        }
    }

    /// The namespace of a render's objects that name none.
    pub fn unit_namespace(&self, unit: &RenderUnit) -> &str {
        self.config.namespace_for(&unit.dir)
    }

    /// The metrics identities of every named container of every workload linted, in the
    /// cluster that applies it: plain files as written, Kustomize roots as rendered (each
    /// overlay under its own namespace and name).
    pub fn container_keys(&self, loaded: &Loaded) -> Vec<ContainerKey> {
        let mut keys = BTreeSet::new();
        for (index, file) in loaded.files.iter().enumerate() {
            for cluster in loaded.placement.file_clusters(index) {
                let ns = self.plain_namespace(&loaded.placement, index, file, cluster.as_deref());
                keys.extend(self.file_keys(file, ns, cluster.as_deref()));
            }
        }
        for unit in &loaded.units {
            keys.extend(self.unit_keys(unit));
        }
        for release in &loaded.releases {
            keys.extend(self.release_keys(release));
        }
        keys.into_iter().collect()
    }

    /// The namespace of a plain file's objects that name none, as `cluster` applies it: its
    /// applier's (Argo CD's `destination.namespace`), else the config's for its path.
    pub fn plain_namespace<'a>(
        &'a self,
        placement: &'a Placement,
        index: usize,
        file: &SourceFile,
        cluster: Option<&str>,
    ) -> &'a str {
        placement
            .file_namespace(index, cluster)
            .unwrap_or_else(|| self.default_namespace(file))
    }

    /// The metrics identities of a plain file's workloads (none for a file linted through a
    /// render), in namespace `ns` when they name none.
    pub fn file_keys(
        &self,
        file: &SourceFile,
        ns: &str,
        cluster: Option<&str>,
    ) -> Vec<ContainerKey> {
        if file.role != FileRole::Plain {
            return Vec::new();
        }
        file.stream
            .documents
            .iter()
            .flat_map(|doc| self.keys_of(&doc.root, ns, cluster))
            .collect()
    }

    /// The metrics identities of a render's workloads, as rendered.
    pub fn unit_keys(&self, unit: &RenderUnit) -> Vec<ContainerKey> {
        let ns = self.unit_namespace(unit);
        unit.objects
            .iter()
            .flat_map(|o| self.keys_of(o, ns, unit.cluster.as_deref()))
            .collect()
    }

    /// The metrics identities of a Helm release's workloads (in the release's namespace).
    pub fn release_keys(&self, release: &HelmUnit) -> Vec<ContainerKey> {
        let ns = release.release.namespace.as_str();
        release
            .rendered
            .stream
            .documents
            .iter()
            .flat_map(|d| self.keys_of(&d.root, ns, release.cluster.as_deref()))
            .collect()
    }

    fn keys_of(&self, root: &Node, ns: &str, cluster: Option<&str>) -> Vec<ContainerKey> {
        let mut keys = Vec::new();
        for object in objects_in(root) {
            if let Some(w) = Workload::of(object, &self.catalog) {
                keys.extend(
                    w.containers
                        .iter()
                        .filter_map(|c| usage_key(&w, c, ns, cluster)),
                );
            }
        }
        keys
    }

    /// The object as the rules see it: a workload, or, for the few kinds checked on their
    /// own (a LocalQueue), a view without pods.
    fn view<'a>(&self, object: crate::k8s::workload::Object<'a>) -> Option<Workload<'a>> {
        rules::view(object, &self.catalog)
    }

    /// Which of the run's containers the measurements cover (`None` without measurements): those
    /// the measured rules judge (not init or Spark containers), each in the cluster and
    /// namespace that apply it, as the rules look them up.
    fn coverage(
        &self,
        files: &[SourceFile],
        units: &[RenderUnit],
        releases: &[HelmUnit],
        placement: &Placement,
    ) -> Option<Coverage> {
        let usage = self.usage.as_ref()?;
        let mut judged: BTreeMap<ContainerKey, bool> = BTreeMap::new();
        let mut add = |root: &Node, ns: &str, cluster: Option<&str>| {
            for object in objects_in(root) {
                let Some(w) = Workload::of(object, &self.catalog) else {
                    continue;
                };
                for c in w.containers.iter().filter(|c| c.spark.is_none() && !c.init) {
                    if let Some(key) = usage_key(&w, c, ns, cluster) {
                        *judged.entry(key).or_default() |= rules::requests_gpus(&self.gpu_names, c);
                    }
                }
            }
        };
        for (index, file) in files.iter().enumerate() {
            if file.role != FileRole::Plain {
                continue;
            }
            for cluster in placement.file_clusters(index) {
                let ns = self.plain_namespace(placement, index, file, cluster.as_deref());
                for doc in &file.stream.documents {
                    add(&doc.root, ns, cluster.as_deref());
                }
            }
        }
        for unit in units {
            let ns = self.unit_namespace(unit);
            for o in &unit.objects {
                add(o, ns, unit.cluster.as_deref());
            }
        }
        for release in releases {
            let ns = release.release.namespace.as_str();
            for d in &release.rendered.stream.documents {
                add(&d.root, ns, release.cluster.as_deref());
            }
        }
        Some(usage.coverage(judged.iter().map(|(k, gpu)| (k, *gpu))))
    }

    pub fn run(&self, paths: &[PathBuf]) -> Run {
        self.lint_loaded(self.load(paths))
    }

    /// Lints what [`Linter::load`] read (a caller that needed the inputs first, e.g. to ask
    /// Prometheus about their workloads, does not load and render them twice).
    pub fn lint_loaded(&self, loaded: Loaded) -> Run {
        let Loaded {
            files,
            units,
            releases,
            errors,
            notes,
            placement,
            context,
            named,
            readers,
        } = loaded;
        if let Some(usage) = &self.usage {
            usage.several_clusters.set(placement.several());
        }
        let mut parts = vec![FactSource {
            files: &files,
            units: &units,
            releases: &releases,
            placement: &placement,
        }];
        parts.extend(context.as_deref().map(|c| FactSource {
            files: &c.files,
            units: &c.units,
            releases: &c.releases,
            placement: &c.placement,
        }));
        let facts = Facts::of_sources(&parts);
        let mut notes = notes;
        notes.extend(files.iter().flat_map(unknown_ids_in_ignore_comments));
        notes.extend(files.iter().flat_map(unknown_ids_in_ignore_annotations));
        let per_file: Vec<Vec<Finding>> = files
            .par_iter()
            .enumerate()
            .filter(|(_, file)| file.role == FileRole::Plain)
            .map(|(index, file)| self.lint_file(&facts, &placement, index, file))
            .collect();
        let texts: Vec<Arc<str>> = files.iter().map(|f| f.stream.text.clone()).collect();
        let per_unit: Vec<Vec<Finding>> = units
            .par_iter()
            .enumerate()
            .map(|(index, unit)| self.lint_unit(&facts, &files, &texts, index, unit))
            .collect();
        let per_release: Vec<Vec<Finding>> = releases
            .par_iter()
            .enumerate()
            .map(|(index, release)| self.lint_release(&facts, &files, index, release))
            .collect();
        let coverage = self.coverage(&files, &units, &releases, &placement);
        Run {
            coverage,
            files,
            units,
            releases,
            findings: per_file
                .into_iter()
                .flatten()
                .chain(per_unit.into_iter().flatten())
                .chain(per_release.into_iter().flatten())
                .collect(),
            facts,
            errors,
            notes,
            placement,
            named,
            narrowed: false,
            readers,
        }
    }

    /// The run again after `--fix` changed the files at `changed`: only those files are read and
    /// linted again when that cannot change any other finding, else the whole input (`paths`).
    pub fn relint(&self, run: Run, changed: &[PathBuf], paths: &[PathBuf]) -> Run {
        self.relint_reusing(run, changed, &HashMap::new(), paths)
    }

    /// [`Linter::relint`], taking the parse in `parsed` of a changed file that holds exactly its
    /// text (the fix plan's parse of what `--fix` wrote) instead of parsing the file again.
    pub fn relint_reusing(
        &self,
        run: Run,
        changed: &[PathBuf],
        parsed: &HashMap<PathBuf, Arc<Stream>>,
        paths: &[PathBuf],
    ) -> Run {
        match self.relint_plain_files(run, changed, parsed) {
            Ok(run) => run,
            Err(NeedsWholeRun) => self.run(paths),
        }
    }

    /// Re-reads and lints the changed files alone. Another file's findings depend on a changed
    /// file only through renders that read it and through the repo facts, so this holds when
    /// every changed file is a plain manifest of the run (no render reads it) whose own facts
    /// are the same before and after. A parse error before or after (whose place in the errors
    /// follows the whole load) or a file gone also asks for the whole run.
    fn relint_plain_files(
        &self,
        mut run: Run,
        changed: &[PathBuf],
        parsed: &HashMap<PathBuf, Arc<Stream>>,
    ) -> Result<Run, NeedsWholeRun> {
        let by_path: HashMap<&std::path::Path, usize> = run
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match &f.input {
                Input::File(p) if f.role == FileRole::Plain => Some((p.as_path(), i)),
                _ => None,
            })
            .collect();
        let indices: BTreeSet<usize> = changed
            .iter()
            .map(|p| by_path.get(p.as_path()).copied().ok_or(NeedsWholeRun))
            .collect::<Result<_, _>>()?;
        let reloaded: Vec<(usize, SourceFile)> = indices
            .par_iter()
            .map(|&i| {
                let input = run.files[i].input.clone();
                let known = match &input {
                    Input::File(p) => parsed.get(p),
                    Input::Stdin => None,
                };
                let file = load_input_reusing(input, known).map_err(|_| NeedsWholeRun)?;
                Ok((i, file))
            })
            .collect::<Result<_, NeedsWholeRun>>()?;
        let before = || indices.iter().map(|&i| &run.files[i]);
        let after = || reloaded.iter().map(|(_, f)| f);
        if before().chain(after()).any(|f| f.stream.error.is_some())
            || facts_of(before().flat_map(roots_of)) != facts_of(after().flat_map(roots_of))
        {
            return Err(NeedsWholeRun);
        }
        for (i, mut file) in reloaded {
            file.role = run.files[i].role;
            run.files[i] = file;
        }
        // The facts are the run's: the changed files' own are the same as before.
        let fresh: Vec<Finding> = indices
            .par_iter()
            .flat_map_iter(|&i| self.lint_file(&run.facts, &run.placement, i, &run.files[i]))
            .collect();
        // A whole run lists plain files' findings first, by file, then the renders'.
        let (mut of_files, of_renders): (Vec<Finding>, Vec<Finding>) =
            std::mem::take(&mut run.findings)
                .into_iter()
                .filter(|f| !(f.origin == Origin::File && indices.contains(&f.file)))
                .partition(|f| f.origin == Origin::File);
        of_files.extend(fresh);
        of_files.sort_by_key(|f| f.file);
        run.findings = of_files.into_iter().chain(of_renders).collect();
        run.coverage = self.coverage(&run.files, &run.units, &run.releases, &run.placement);
        Ok(run)
    }

    /// Lints a rendered Helm release. A finding on a value that comes from the values lands on
    /// that values leaf (the file a fix edits); otherwise on the template line that writes the
    /// field (see `HelmUnit::location`).
    pub fn lint_release(
        &self,
        facts: &Facts,
        files: &[SourceFile],
        index: usize,
        unit: &HelmUnit,
    ) -> Vec<Finding> {
        let facts = facts.of(unit.cluster.as_deref());
        let mut comments = CommentCache::default();
        let ns = unit.release.namespace.as_str();
        let mut findings = Vec::new();
        for (document, doc) in unit.rendered.stream.documents.iter().enumerate() {
            let cx = self.context(
                facts,
                &unit.rendered.text,
                document,
                ns,
                unit.cluster.as_deref(),
            );
            for object in objects(doc) {
                let Some(workload) = self.view(object) else {
                    continue;
                };
                for mut hit in rules::check_workload(&cx, &workload) {
                    hit.message = format!("{} [{}]", hit.message, unit.name);
                    let (file, span) = self.helm_location(unit, document, &hit, files);
                    let Some(shown_in) = files.get(file).map(Borrow::borrow) else {
                        continue;
                    };
                    let comments = comments.of(files, file);
                    if let Some(mut f) = self.finding(
                        hit,
                        &workload,
                        file,
                        span,
                        shown_in,
                        comments,
                        Origin::Helm(index),
                    ) {
                        f.namespace = f.object.effective_namespace(ns);
                        f.cluster = unit.cluster.clone();
                        findings.push(f);
                    }
                }
            }
        }
        findings.sort_by_key(|f| (f.file, f.span.start(), f.rule.id));
        findings
    }

    /// Where a finding on a rendered Helm object is shown (see `HelmUnit::location`).
    fn helm_location(
        &self,
        unit: &HelmUnit,
        document: usize,
        hit: &rules::Hit,
        files: &[SourceFile],
    ) -> (usize, crate::source::yaml::Span) {
        use crate::edit::FieldChange;
        let fix_fields: Vec<&[crate::source::document::Segment]> = hit
            .fix
            .iter()
            .flat_map(|fix| {
                fix.changes.iter().filter_map(|c| match c {
                    FieldChange::Set { path, .. } => Some(path.as_slice()),
                    FieldChange::Rename { .. } => None,
                })
            })
            .collect();
        let field = unit
            .rendered
            .stream
            .documents
            .get(document)
            .map(|d| crate::source::helm::node_path_at(&d.root, hit.span.start()))
            .unwrap_or_default();
        unit.location(self.helm.as_ref(), document, &fix_fields, &field, files)
    }

    /// Lints the rendered objects of a unit; findings land in the files that wrote the fields.
    pub fn lint_unit<F: Borrow<SourceFile>>(
        &self,
        facts: &Facts,
        files: &[F],
        texts: &[Arc<str>],
        index: usize,
        unit: &RenderUnit,
    ) -> Vec<Finding> {
        let facts = facts.of(unit.cluster.as_deref());
        let mut comments = CommentCache::default();
        let mut findings = Vec::new();
        for (document, root) in unit.objects.iter().enumerate() {
            let cx = Context {
                target: Target {
                    text: "",
                    document,
                    files: texts,
                },
                ..self.context(
                    facts,
                    "",
                    document,
                    self.unit_namespace(unit),
                    unit.cluster.as_deref(),
                )
            };
            for object in objects_in(root) {
                let Some(workload) = self.view(object) else {
                    continue;
                };
                for mut hit in rules::check_workload(&cx, &workload) {
                    // Overlays of one base share its lines: say which render this is.
                    hit.message = format!("{} [render of {}]", hit.message, unit.name);
                    // A node the renderer made up has no file of its own: the kustomization.
                    let file = hit.span.file_or(unit.home);
                    let Some(shown_in) = files.get(file).map(Borrow::borrow) else {
                        continue;
                    };
                    let span = if hit.span.source.index().is_some() {
                        hit.span
                    } else {
                        crate::source::yaml::Span::new(0, 0)
                    };
                    let comments = comments.of(files, file);
                    if let Some(mut f) = self.finding(
                        hit,
                        &workload,
                        file,
                        span,
                        shown_in,
                        comments,
                        Origin::Kustomize(index),
                    ) {
                        f.namespace = f.object.effective_namespace(cx.default_namespace);
                        f.cluster = unit.cluster.clone();
                        findings.push(f);
                    }
                }
            }
        }
        findings.sort_by_key(|f| (f.file, f.span.start(), f.rule.id));
        findings
    }

    /// Lints one file for every cluster that applies it (`placement`); `index` is its place in
    /// the run's file list.
    pub fn lint_file(
        &self,
        facts: &Facts,
        placement: &Placement,
        index: usize,
        file: &SourceFile,
    ) -> Vec<Finding> {
        let mut findings = Vec::new();
        for cluster in placement.file_clusters(index) {
            let facts = facts.of(cluster.as_deref());
            let ns = self.plain_namespace(placement, index, file, cluster.as_deref());
            findings.extend(self.lint_file_in(facts, index, file, ns, cluster.as_deref()));
        }
        findings
    }

    /// Lints one file as one cluster applies it.
    fn lint_file_in(
        &self,
        facts: &RepoFacts,
        index: usize,
        file: &SourceFile,
        namespace: &str,
        cluster: Option<&str>,
    ) -> Vec<Finding> {
        let comments = suppression_comments(&file.stream.comments);
        // Pre-rendered Helm output (`helm template … | gpulint -`): name each object's template.
        let pre_rendered = file
            .stream
            .comments
            .iter()
            .any(|c| c.text.trim_start().starts_with("Source:"));
        let templates = if pre_rendered {
            crate::source::helm::source_templates(&file.stream)
        } else {
            Vec::new()
        };
        let mut findings = Vec::new();
        for (document, doc) in file.stream.documents.iter().enumerate() {
            let cx = self.context(facts, &file.stream.text, document, namespace, cluster);
            let template = templates.get(document).cloned().flatten();
            for object in objects(doc) {
                let Some(workload) = self.view(object) else {
                    continue;
                };
                for mut hit in rules::check_workload(&cx, &workload) {
                    if let Some(t) = &template {
                        hit.message = format!("{} [template {t}]", hit.message);
                    }
                    let span = hit.span;
                    if let Some(mut f) = self.finding(
                        hit,
                        &workload,
                        index,
                        span,
                        file,
                        Some(&comments),
                        Origin::File,
                    ) {
                        f.namespace = f.object.effective_namespace(cx.default_namespace);
                        f.cluster = cluster.map(str::to_string);
                        findings.push(f);
                    }
                }
            }
        }
        findings.sort_by_key(|f| (f.span.start(), f.rule.id));
        findings
    }

    /// A rule's hit as a finding in `file`, unless the rule is off; with its suppression.
    #[allow(clippy::too_many_arguments)]
    fn finding(
        &self,
        hit: rules::Hit,
        workload: &Workload,
        index: usize,
        span: crate::source::yaml::Span,
        file: &SourceFile,
        comments: Option<&HashMap<usize, IgnoreComment>>,
        from: Origin,
    ) -> Option<Finding> {
        let info = hit.rule.info();
        let enabled = self.selection.forces(info) || self.config.rule_enabled(info);
        if !enabled || !self.selection.allows(info) {
            return None;
        }
        let annotated = workload
            .annotations(IGNORE_ANNOTATION)
            .iter()
            .flat_map(|v| v.split(','))
            .any(|s| rules::Rule::parse(s.trim()) == Some(info.rule));
        // The anchor is in the same text as the span unless the span was moved to another file
        // (a Helm value's origin).
        let lines: Vec<usize> = std::iter::once(span)
            .chain(hit.comment_anchor.filter(|_| span == hit.span))
            .map(|s| file.stream.line_col(s.start()).0)
            .collect();
        let suppression = comments
            .and_then(|c| comment_suppression(c, &lines, info))
            .or_else(|| {
                annotated.then_some(Suppression {
                    kind: SuppressionKind::Annotation,
                    justification: None,
                })
            })
            .or_else(|| self.config_suppression(file, info));
        let finding = Finding {
            rule: info,
            severity: self.config.severity(info),
            message: hit.message,
            label: hit.label,
            help: hit.help,
            file: index,
            span,
            object: workload.object.id.clone(),
            container: hit.container,
            fix: hit.fix,
            recommended: hit.recommended,
            frees: hit.frees,
            fit: hit.fit,
            suppression,
            origin: from,
            namespace: None,
            cluster: None,
            fix_status: None,
        };
        (!self.selection.measured_only || finding.is_measured()).then_some(finding)
    }

    fn config_suppression(&self, file: &SourceFile, info: &rules::RuleInfo) -> Option<Suppression> {
        let Input::File(path) = &file.input else {
            return None;
        };
        self.config
            .ignored(path, info.rule)
            .map(|entry| Suppression {
                kind: SuppressionKind::Config,
                justification: Some(format!("ignored by config for path {}", entry.pattern)),
            })
    }
}

/// A re-lint that cannot be limited to the changed files.
struct NeedsWholeRun;

/// The files of folders that the repository's clusters never apply themselves but read
/// through their overlays (`gpulint apps/base`): such a folder is linted as its files named
/// one by one are, each through the renders of the clusters that read it (prod's and staging's
/// overlays), rather than as a render of no cluster with no measurement. `None` for any other
/// run: a path that is a file or stdin, no declared cluster, or anything of the run placed in
/// one.
fn base_folder_files(paths: &[PathBuf], loaded: &Loaded, config: &Config) -> Option<Vec<PathBuf>> {
    let folders = !paths.is_empty() && paths.iter().all(|p| p.as_os_str() != "-" && p.is_dir());
    let placed = !loaded.placement.files.is_empty()
        || loaded.units.iter().any(|u| u.cluster.is_some())
        || loaded.releases.iter().any(|r| r.cluster.is_some());
    if !folders || loaded.placement.clusters.is_empty() || placed || loaded.units.is_empty() {
        return None;
    }
    let found = discover(paths, config, None);
    let mut files: Vec<PathBuf> = found
        .inputs
        .into_iter()
        .filter_map(|i| match i {
            Input::File(p) => Some(p),
            Input::Stdin => None,
        })
        .collect();
    files.extend(found.roots.iter().filter_map(|root| {
        crate::source::kustomize::KUSTOMIZATION_FILE_NAMES
            .iter()
            .map(|n| root.join(n))
            .find(|f| f.is_file())
    }));
    (!files.is_empty()).then_some(files)
}

/// What `Linter::load` read: the files, the rendered units, and the errors.
pub struct Loaded {
    pub files: Vec<SourceFile>,
    pub units: Vec<RenderUnit>,
    pub releases: Vec<HelmUnit>,
    pub errors: Vec<InputError>,
    pub notes: Vec<String>,
    pub placement: Placement,
    /// What the run's clusters apply that it did not read, for the facts only
    /// (`Linter::context_of`).
    pub context: Option<Box<Loaded>>,
    /// The files a folder no cluster applies was loaded as (`base_folder_files`).
    pub named: Vec<PathBuf>,
    /// What found the named files' roots (`Discovered::readers`).
    pub readers: Option<Arc<crate::source::kustomize::ReadersIndex>>,
}

/// Inputs the repo facts are read from: a run's own, or its context's.
pub struct FactSource<'a> {
    pub files: &'a [SourceFile],
    pub units: &'a [RenderUnit],
    pub releases: &'a [HelmUnit],
    pub placement: &'a Placement,
}

impl<'a> FactSource<'a> {
    /// Every object: plain files as written, renders as rendered.
    fn objects(&self) -> impl Iterator<Item = &'a Node> {
        let plain = self
            .files
            .iter()
            .filter(|f| f.role == FileRole::Plain)
            .flat_map(roots_of);
        let rendered = self.units.iter().flat_map(|u| u.objects.iter());
        let charts = self
            .releases
            .iter()
            .flat_map(|r| r.rendered.stream.documents.iter().map(|d| &d.root));
        plain.chain(rendered).chain(charts)
    }

    /// The objects `cluster` applies, and those no declaration places.
    fn objects_of(&self, cluster: &'a str) -> impl Iterator<Item = &'a Node> {
        let applies = move |c: &Option<String>| c.as_deref().is_none_or(|c| c == cluster);
        let placement = self.placement;
        let plain = self
            .files
            .iter()
            .enumerate()
            .filter(move |(i, f)| {
                f.role == FileRole::Plain
                    && placement
                        .files
                        .get(i)
                        .is_none_or(|names| names.iter().any(|n| n == cluster))
            })
            .flat_map(|(_, f)| roots_of(f));
        let rendered = self
            .units
            .iter()
            .filter(move |u| applies(&u.cluster))
            .flat_map(|u| u.objects.iter());
        let charts = self
            .releases
            .iter()
            .filter(move |r| applies(&r.cluster))
            .flat_map(|r| r.rendered.stream.documents.iter().map(|d| &d.root));
        plain.chain(rendered).chain(charts)
    }
}

/// The repo facts each cluster's objects see. A cluster's workloads see the objects that
/// cluster applies and those no declaration places (which may be applied anywhere); objects
/// in no declared cluster see every object, as in a repository without GitOps declarations.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub all: RepoFacts,
    pub by_cluster: std::collections::BTreeMap<String, RepoFacts>,
}

impl Facts {
    pub fn of_run(
        files: &[SourceFile],
        units: &[RenderUnit],
        releases: &[HelmUnit],
        placement: &Placement,
    ) -> Facts {
        Facts::of_sources(&[FactSource {
            files,
            units,
            releases,
            placement,
        }])
    }

    /// The facts of several sources together: a run and its context.
    pub fn of_sources(sources: &[FactSource]) -> Facts {
        let all = facts_of(sources.iter().flat_map(|s| s.objects()));
        let clusters: BTreeSet<&String> = sources
            .iter()
            .flat_map(|s| s.placement.clusters.iter())
            .collect();
        let by_cluster = clusters
            .into_iter()
            .map(|cluster| {
                let objects = sources.iter().flat_map(|s| s.objects_of(cluster));
                (cluster.clone(), facts_of(objects))
            })
            .collect();
        Facts { all, by_cluster }
    }

    /// The facts of a cluster's objects (`None`: the implicit cluster, which sees all).
    pub fn of(&self, cluster: Option<&str>) -> &RepoFacts {
        cluster
            .and_then(|c| self.by_cluster.get(c))
            .unwrap_or(&self.all)
    }
}

fn roots_of(file: &SourceFile) -> impl Iterator<Item = &Node> {
    file.stream.documents.iter().map(|d| &d.root)
}

/// The repo facts of these objects (and of the objects inside any `List`).
fn facts_of<'a>(roots: impl Iterator<Item = &'a Node>) -> RepoFacts {
    let mut facts = RepoFacts::default();
    for root in roots {
        for object in objects_in(root) {
            facts.add(&object);
        }
    }
    facts
}

/// The suppression comments of the files rendered findings land in, read once per file and
/// only for files that get a finding (a render reads few of the run's files).
#[derive(Default)]
struct CommentCache(HashMap<usize, HashMap<usize, IgnoreComment>>);

impl CommentCache {
    fn of<F: Borrow<SourceFile>>(
        &mut self,
        files: &[F],
        file: usize,
    ) -> Option<&HashMap<usize, IgnoreComment>> {
        let source = files.get(file)?.borrow();
        Some(
            self.0
                .entry(file)
                .or_insert_with(|| suppression_comments(&source.stream.comments)),
        )
    }
}

/// A `# gpulint: ignore[ID, ID] reason` comment.
struct IgnoreComment {
    rules: Vec<String>,
    reason: Option<String>,
}

fn parse_ignore_comment(text: &str) -> Option<IgnoreComment> {
    let rest = text.trim_start().strip_prefix("gpulint:")?.trim_start();
    let rest = rest.strip_prefix("ignore[")?;
    let (ids, after) = rest.split_once(']')?;
    let rules = ids
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let reason = after.trim().trim_start_matches(['-', ':']).trim();
    Some(IgnoreComment {
        rules,
        reason: (!reason.is_empty()).then(|| reason.to_string()),
    })
}

/// A `gpulint: ignore[…]` comment naming a rule that does not exist suppresses nothing: say
/// so, where it is, with the nearest rule (config and flags refuse an unknown id outright; a
/// comment only gets a note, so a typo in one manifest does not fail the run).
fn unknown_ids_in_ignore_comments(file: &SourceFile) -> Vec<String> {
    let mut notes = Vec::new();
    for comment in &file.stream.comments {
        let Some(ignore) = parse_ignore_comment(&comment.text) else {
            continue;
        };
        for id in &ignore.rules {
            if let Err(message) = rules::Rule::parse_or_suggest(id) {
                notes.push(format!(
                    "{}:{}: `gpulint: ignore` comment: {message} (it suppresses nothing)",
                    file.name, comment.line
                ));
            }
        }
    }
    notes
}

/// The same for a `gpulint.io/ignore` annotation, wherever it is written (the object's own
/// metadata, a pod template's, a values file that a chart copies into annotations): noted at
/// the annotation's value.
fn unknown_ids_in_ignore_annotations(file: &SourceFile) -> Vec<String> {
    // Most files never name the annotation: skip their walk.
    if !file.stream.text.contains(IGNORE_ANNOTATION) {
        return Vec::new();
    }
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut stack: Vec<&Node> = file.stream.documents.iter().map(|d| &d.root).collect();
    while let Some(node) = stack.pop() {
        if let Some(items) = node.as_seq() {
            stack.extend(items);
        }
        for entry in node.as_map().unwrap_or_default() {
            if entry.key.text() != Some(IGNORE_ANNOTATION) {
                stack.push(&entry.value);
                continue;
            }
            let value = entry.value.text().unwrap_or_default();
            for id in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if let Err(message) = rules::Rule::parse_or_suggest(id) {
                    let at = entry.value.span.start();
                    let (line, column) = file.stream.line_col(at);
                    found.push((
                        at,
                        format!(
                            "{}:{line}:{column}: `{IGNORE_ANNOTATION}` annotation: {message} (it suppresses nothing)",
                            file.name
                        ),
                    ));
                }
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, note)| note).collect()
}

fn suppression_comments(comments: &[Comment]) -> HashMap<usize, IgnoreComment> {
    comments
        .iter()
        .filter_map(|c| Some((c.line, parse_ignore_comment(&c.text)?)))
        .collect()
}

/// A suppression comment on one of the finding's lines (its own, and its comment anchor's) or
/// the line above.
fn comment_suppression(
    comments: &HashMap<usize, IgnoreComment>,
    lines: &[usize],
    info: &rules::RuleInfo,
) -> Option<Suppression> {
    lines
        .iter()
        .flat_map(|&line| [Some(line), line.checked_sub(1)])
        .flatten()
        .filter_map(|l| comments.get(&l))
        .find(|c| {
            c.rules
                .iter()
                .any(|r| rules::Rule::parse(r) == Some(info.rule))
        })
        .map(|c| Suppression {
            kind: SuppressionKind::Comment,
            justification: c.reason.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_comments_parse() {
        let c = parse_ignore_comment(" gpulint: ignore[GPU002, QOS001] shared node pool").unwrap();
        assert_eq!(c.rules, ["GPU002", "QOS001"]);
        assert_eq!(c.reason.as_deref(), Some("shared node pool"));
        assert!(parse_ignore_comment(" just a comment").is_none());
        assert!(parse_ignore_comment(" gpulint: ignore GPU002").is_none());
    }
}
