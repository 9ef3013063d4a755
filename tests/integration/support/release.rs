//! The one release build of a test run, and the wheel made from it.
//!
//! Every test that needs an optimised gpulint shares one build: maturin (`GPULINT_MATURIN`,
//! installed by scripts/test) builds the wheel with the release profile in the test run's own
//! target dir, the dir `cargo build --release` (the benches) uses too, so whichever runs
//! second finds every unit fresh and only packs (maturin calls `cargo rustc --release` with
//! nothing that changes a fingerprint). The pre-commit hook test's `cargo install` uses the
//! same target dir for the same reason.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

/// The cargo target dir of this test run (CARGO_TARGET_TMPDIR is `<target dir>/tmp`).
pub fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).to_path_buf()
}

/// Removes what `cargo test` adds to a test's environment (CARGO_MANIFEST_DIR, CARGO_PKG_*,
/// ...) and the flags that change every unit, so a cargo run from a test sees the environment
/// of a shell: a build script that tracks one of them (ring's `rerun-if-env-changed` on
/// CARGO_MANIFEST_DIR) would otherwise rebuild ring and everything above it, gpulint included.
pub fn cargo_env_of_a_shell(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let keep = matches!(&*name, "CARGO_HOME" | "CARGO_TARGET_DIR");
        if (name.starts_with("CARGO_") && !keep)
            || matches!(
                &*name,
                "RUSTFLAGS" | "OUT_DIR" | "RUSTC_WRAPPER" | "RUSTDOCFLAGS"
            )
        {
            cmd.env_remove(&*name);
        }
    }
}

/// An executable named by `var` (exported by scripts/test). Missing, the test FAILS.
pub fn tool(var: &str) -> PathBuf {
    let exe = match std::env::var_os(var) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => panic!("{var} is not set: run scripts/test, which installs it and exports {var}"),
    };
    assert!(
        exe.is_file(),
        "{var}={} does not exist: run scripts/test to (re)install it",
        exe.display()
    );
    exe
}

/// A folder named by `var` (exported by scripts/test). Missing, the test FAILS.
pub fn tool_dir(var: &str) -> PathBuf {
    let dir = PathBuf::from(std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} is not set: run scripts/test, which fills it and exports {var}")
    }));
    assert!(
        dir.is_dir(),
        "{var}={} is not a folder: run scripts/test",
        dir.display()
    );
    dir
}

/// The gpulint wheel, built once per test process from this checkout: the path of the .whl.
pub fn wheel() -> &'static Path {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL.get_or_init(build_wheel)
}

fn build_wheel() -> PathBuf {
    let maturin = tool("GPULINT_MATURIN");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dist/wheels");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let start = Instant::now();
    let mut cmd = Command::new(&maturin);
    cargo_env_of_a_shell(&mut cmd);
    let result = cmd
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--release", "--quiet", "--out"])
        .arg(&out)
        .env("CARGO_TARGET_DIR", target_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("maturin runs");
    assert!(
        result.status.success(),
        "maturin build failed:\n{}{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "one wheel: {wheels:?}");
    eprintln!(
        "maturin build --release: {} in {:.1?} (target dir {})",
        wheels[0].display(),
        start.elapsed(),
        target_dir().display()
    );
    wheels[0].clone()
}
