//! Distribution (docs/install.md): the wheel built by maturin and installed with pip into a
//! fresh venv, the release workflow (actionlint, zizmor), the Dockerfile (hadolint), the
//! crate's package list, and the shell completions and man page. Every tool is the pinned
//! one scripts/test installs (GPULINT_MATURIN, GPULINT_ACTIONLINT, GPULINT_ZIZMOR,
//! GPULINT_HADOLINT): a missing one FAILS the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::support::common::{gpulint, output, GPULINT_ENV};
use crate::support::release::{tool, wheel};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fresh venv with the wheel installed from the file alone (no index): its `bin/` folder.
fn venv_with_wheel(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "python3 -m venv: {}", text(&out));
    let start = Instant::now();
    let out = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--no-index",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .arg(wheel())
        .env_remove("PIP_FIND_LINKS")
        .output()
        .expect("pip runs");
    assert!(
        out.status.success(),
        "pip install the wheel: {}",
        text(&out)
    );
    eprintln!("pip install {}: {:.1?}", wheel().display(), start.elapsed());
    venv.join("bin")
}

#[test]
fn the_wheel_installs_a_stripped_gpulint_that_lints_the_demo_as_cargo_built_it() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = venv_with_wheel(tmp.path());
    let exe = bin.join("gpulint");
    // Nothing but the binary and the package's metadata (bindings = "bin").
    let listing = Command::new("python3")
        .args(["-m", "zipfile", "-l"])
        .arg(wheel())
        .output()
        .unwrap();
    let files: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    let scripts: Vec<&String> = files.iter().filter(|f| f.contains(".data/")).collect();
    assert_eq!(
        scripts.len(),
        1,
        "one file outside dist-info, the binary: {files:?}"
    );
    assert!(scripts[0].ends_with(".data/scripts/gpulint"), "{files:?}");

    let out = Command::new(&exe).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("gpulint {}", env!("CARGO_PKG_VERSION"))
    );
    // The release profile strips (Cargo.toml): no DWARF and no symbol table section.
    let sections = Command::new("readelf")
        .args(["-S", "-W"])
        .arg(&exe)
        .output()
        .expect("readelf runs");
    let sections = String::from_utf8_lossy(&sections.stdout);
    assert!(sections.contains(".text"), "{sections}");
    for section in [".debug_line", ".debug_info", ".symtab"] {
        assert!(
            !sections.contains(section),
            "the wheel's binary has {section}:\n{sections}"
        );
    }

    // The demo, linted by the wheel's binary and by the one cargo built for the tests: the
    // same findings, the same exit code.
    let args = ["testdata/demo", "--format", "json"];
    let mut from_wheel = Command::new(&exe);
    from_wheel.current_dir(root()).args(args);
    for var in GPULINT_ENV {
        from_wheel.env_remove(var);
    }
    let wheel_run = output(&mut from_wheel);
    let cargo_run = output(gpulint().args(args));
    assert_eq!(wheel_run.0, 1, "the demo has findings:\n{}", wheel_run.2);
    assert_eq!(wheel_run, cargo_run);
    let json: serde_json::Value = serde_json::from_str(&wheel_run.1).unwrap();
    assert!(
        json["findings"].as_array().map_or(0, Vec::len) > 50,
        "the demo's findings"
    );
}

/// actionlint (and the shell scripts in it) and zizmor's auditor persona find nothing in
/// the release workflow; both do find a broken copy, so the checks can fail.
#[test]
fn the_release_workflow_passes_actionlint_and_zizmor() {
    let workflow = root().join(".github/workflows/release.yml");
    let actionlint = tool("GPULINT_ACTIONLINT");
    let out = Command::new(&actionlint)
        .arg("-no-color")
        .arg(&workflow)
        .current_dir(root())
        .output()
        .expect("actionlint runs");
    assert!(out.status.success(), "actionlint:\n{}", text(&out));

    let zizmor = tool("GPULINT_ZIZMOR");
    let audit = |path: &Path| {
        Command::new(&zizmor)
            .args(["--offline", "--persona", "auditor", "--no-progress"])
            .arg(path)
            .env("NO_COLOR", "1")
            .output()
            .expect("zizmor runs")
    };
    let out = audit(&workflow);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("No findings"),
        "zizmor:\n{}",
        text(&out)
    );

    let yaml = std::fs::read_to_string(&workflow).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".github/workflows");
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.yml");
    std::fs::write(
        &broken,
        yaml.replace(
            "needs: [binaries, wheels, sdist]",
            "needs: [binaries, wheel, sdist]",
        ),
    )
    .unwrap();
    let out = Command::new(&actionlint)
        .arg("-no-color")
        .arg(&broken)
        .output()
        .unwrap();
    assert!(
        !out.status.success() && text(&out).contains("wheel"),
        "actionlint missed an unknown job in needs:\n{}",
        text(&out)
    );
    let unpinned = dir.join("unpinned.yml");
    std::fs::write(
        &unpinned,
        yaml.replace(
            "actions/attest-build-provenance@a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32",
            "actions/attest-build-provenance@v4",
        ),
    )
    .unwrap();
    let out = audit(&unpinned);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("unpinned-uses"),
        "{}",
        text(&out)
    );
}

/// Every platform the Action downloads a binary for is one the release workflow builds, and
/// the wheels cover the same platforms.
#[test]
fn the_release_builds_every_target_the_action_downloads() {
    let install = std::fs::read_to_string(root().join("scripts/action/install.sh")).unwrap();
    let workflow = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let targets: Vec<&str> = install
        .lines()
        .filter_map(|l| l.split("target=").nth(1))
        .filter_map(|t| t.split_whitespace().next())
        .filter(|t| t.contains('-'))
        .collect();
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin",
            "x86_64-pc-windows-msvc"
        ]
    );
    let binaries = workflow
        .split("\n  binaries:\n")
        .nth(1)
        .and_then(|s| s.split("\n  wheels:\n").next())
        .unwrap();
    let wheels = workflow
        .split("\n  wheels:\n")
        .nth(1)
        .and_then(|s| s.split("\n  sdist:\n").next())
        .unwrap();
    for target in targets {
        assert!(
            binaries.contains(&format!("target: {target} }}")),
            "no binary for {target}"
        );
        let arch = target.split('-').next().unwrap();
        assert!(
            wheels.contains(&format!("target: {target},"))
                || wheels.contains(&format!("target: {arch},")),
            "no wheel for {target}"
        );
    }
}

#[test]
fn the_dockerfile_passes_hadolint() {
    let hadolint = tool("GPULINT_HADOLINT");
    let out = Command::new(&hadolint)
        .arg(root().join("Dockerfile"))
        .output()
        .expect("hadolint runs");
    assert!(out.status.success(), "hadolint:\n{}", text(&out));
    // And it can fail: an unpinned apt-get install is DL3008.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("Dockerfile");
    let docker = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    std::fs::write(&bad, docker.replace("musl-tools=1.2.3-1", "musl-tools")).unwrap();
    let out = Command::new(&hadolint).arg(&bad).output().unwrap();
    assert!(
        !out.status.success() && text(&out).contains("DL3008"),
        "{}",
        text(&out)
    );
    // The image builds what the Action and the release ship: the build inputs, and only them.
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    for input in ["Cargo.toml", "Cargo.lock", "rules/", "src/"] {
        assert!(
            ignore.contains(&format!("!{input}")),
            ".dockerignore drops {input}"
        );
        assert!(
            docker.contains(&format!("COPY {}", input.trim_end_matches('/')))
                || docker.contains(input),
            "{input}"
        );
    }
}

/// What `cargo publish` would upload: the build's sources and the README, no tests or
/// testdata (`include` in Cargo.toml), and the metadata crates.io shows.
#[test]
fn the_crate_packages_its_sources_and_metadata() {
    let out = Command::new(env!("CARGO"))
        .args([
            "package",
            "--list",
            "--allow-dirty",
            "--locked",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo package --list:\n{}",
        text(&out)
    );
    let files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    for must in [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "LICENSE",
        "src/main.rs",
        "src/lib.rs",
        "rules/GPU002.md",
        "rules/workloads.yaml",
    ] {
        assert!(
            files.iter().any(|f| f == must),
            "{must} not packaged: {files:?}"
        );
    }
    for f in &files {
        assert!(
            f.starts_with("src/") || f.starts_with("rules/") || !f.contains('/'),
            "{f} should not be packaged"
        );
    }
    // And crates.io's checks of the manifest pass (--no-verify: the verify build would be a
    // full debug build of the packaged copy, minutes of CI for what `cargo test` built).
    let out = Command::new(env!("CARGO"))
        .args([
            "publish",
            "--dry-run",
            "--no-verify",
            "--allow-dirty",
            "--locked",
        ])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success() && text(&out).contains("aborting upload due to dry run"),
        "cargo publish --dry-run:\n{}",
        text(&out)
    );
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    for key in [
        "repository = ",
        "keywords = ",
        "categories = ",
        "readme = ",
        "license = ",
        "description = ",
    ] {
        assert!(manifest.contains(key), "Cargo.toml has no {key}");
    }
}

#[test]
fn completions_and_man_page_cover_every_subcommand() {
    let subcommands = [
        "inventory",
        "rules",
        "snapshot",
        "render",
        "explain",
        "completions",
        "man",
    ];
    for (shell, marker) in [
        ("bash", "_gpulint()"),
        ("zsh", "#compdef gpulint"),
        ("fish", "complete -c gpulint"),
    ] {
        let (code, script, err) = output(gpulint().args(["completions", shell]));
        assert_eq!(code, 0, "{err}");
        assert!(script.contains(marker), "{shell}: {script}");
        for sub in subcommands {
            assert!(script.contains(sub), "{shell} does not complete {sub}");
        }
        assert!(script.contains("fail-on"), "{shell} lacks --fail-on");
    }
    // The bash script works in a real bash: loaded, it completes `gpulint ren` to `render`.
    let (_, script, _) = output(gpulint().args(["completions", "bash"]));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("gpulint.bash");
    std::fs::write(&path, &script).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(
            "source \"$1\" && COMP_WORDS=(gpulint ren) COMP_CWORD=1 && _gpulint gpulint ren gpulint \
             && printf '%s\\n' \"${COMPREPLY[@]}\"",
        )
        .arg("bash")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "render",
        "{}",
        text(&out)
    );

    let (code, page, err) = output(gpulint().arg("man"));
    assert_eq!(code, 0, "{err}");
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH gpulint 1"),
        "{page}"
    );
    for sub in subcommands {
        assert!(
            page.contains(&format!("gpulint\\-{sub}")) || page.contains(sub),
            "man page lacks {sub}"
        );
    }
    // groff renders it without a warning.
    let man = tmp.path().join("gpulint.1");
    std::fs::write(&man, &page).unwrap();
    let out = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(&man)
        .output()
        .expect("groff runs");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "groff:\n{}",
        text(&out)
    );

    let (code, _, err) = output(gpulint().args(["completions", "tcsh"]));
    assert_eq!(code, 2, "an unknown shell is a usage error: {err}");
}
