//! What `batchscope --version` and the About box say of this build: the commit it was built
//! from and the day it was built. Both are read here because neither is known to the compiler;
//! the target and the wgpu backends are (`TARGET`, `wgpu::Instance::enabled_backend_features`).
//! Without git (a source archive) the commit is "unknown"; `SOURCE_DATE_EPOCH` sets the day for
//! a reproducible build.
//!
//! For Windows it also embeds the icon and the version information Explorer shows (by
//! `winresource`, with mingw-w64's `windres` when cross-compiling).

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    println!("cargo:rustc-env=BATCHSCOPE_COMMIT={commit}");
    println!("cargo:rustc-env=BATCHSCOPE_BUILD_DATE={}", day(seconds));
    println!(
        "cargo:rustc-env=BATCHSCOPE_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    // Run again when HEAD moves (a commit, a checkout), not on every edit. Only files that
    // exist are watched: cargo reruns a script on every build for a missing one (a fresh
    // clone keeps its branches in packed-refs).
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-changed=build.rs");
    // A Windows build gets its resources from mingw-w64's windres (cross-compiled with the GNU
    // toolchain, as scripts/package.sh does) or from the SDK's rc.exe on Windows. An MSVC target
    // checked from another system (scripts/check-targets.sh) has neither and links nothing.
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "windows"
        && (var("CARGO_CFG_TARGET_ENV") == "gnu" || var("HOST").contains("windows"))
    {
        windows_resources();
    }
}

/// The `.exe`'s icon, and its name and description beside the version `Cargo.toml` gives.
fn windows_resources() {
    let icon = "packaging/icons/batchscope.ico";
    println!("cargo:rerun-if-changed={icon}");
    let mut resource = winresource::WindowsResource::new();
    resource
        .set_icon(icon)
        .set("ProductName", "BatchScope")
        .set(
            "FileDescription",
            "BatchScope: deep learning on a CPU and a GPU, side by side",
        )
        .set("LegalCopyright", "MIT OR Apache-2.0");
    if let Err(e) = resource.compile() {
        // A Windows build without its icon and version would ship unnoticed: stop instead.
        panic!("the Windows resources (icon, version) could not be compiled: {e}");
    }
}

/// What `git args` prints, trimmed, if git runs and succeeds.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The UTC day of `seconds` since 1970 as YYYY-MM-DD (Howard Hinnant's `civil_from_days`: a
/// date crate as a build dependency would be compiled a second time, for the host).
fn day(seconds: u64) -> String {
    let z = (seconds / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
