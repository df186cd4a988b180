//! What this build is: its version, the commit and day it was built from (read by `build.rs`),
//! the target it was built for, and the wgpu backends compiled into it — for `--version` and
//! the About box, so a bug report or a class's handout can name the build exactly.

/// This build's identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    /// The version in `Cargo.toml`.
    pub version: &'static str,
    /// The commit, abbreviated, or "unknown" where it was built without git.
    pub commit: &'static str,
    /// The UTC day it was built, YYYY-MM-DD.
    pub date: &'static str,
    /// The target triple, e.g. `x86_64-pc-windows-gnu`.
    pub target: &'static str,
    /// The GPU APIs wgpu can use in this build (whether this machine has them is asked at run
    /// time: `batchscope devices`).
    pub backends: Vec<&'static str>,
}

/// This build.
pub fn this_build() -> BuildInfo {
    let compiled = wgpu::Instance::enabled_backend_features();
    let names = [
        (wgpu::Backends::VULKAN, "Vulkan"),
        (wgpu::Backends::METAL, "Metal"),
        (wgpu::Backends::DX12, "DirectX 12"),
        (wgpu::Backends::GL, "OpenGL"),
        (wgpu::Backends::BROWSER_WEBGPU, "WebGPU"),
    ];
    BuildInfo {
        version: env!("CARGO_PKG_VERSION"),
        commit: env!("BATCHSCOPE_COMMIT"),
        date: env!("BATCHSCOPE_BUILD_DATE"),
        target: env!("BATCHSCOPE_TARGET"),
        backends: names
            .into_iter()
            .filter(|(b, _)| compiled.contains(*b))
            .map(|(_, name)| name)
            .collect(),
    }
}

impl BuildInfo {
    /// One line: `0.1.0 (commit 1a2b3c4d5e6f, built 2026-12-06, x86_64-unknown-linux-gnu)`.
    pub fn line(&self) -> String {
        format!(
            "{} (commit {}, built {}, {})",
            self.version, self.commit, self.date, self.target
        )
    }

    /// The line, then the GPU backends.
    pub fn long(&self) -> String {
        format!(
            "{}\nGPU backends: {}",
            self.line(),
            self.backends.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_names_its_version_day_target_and_backends() {
        let info = this_build();
        assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
        assert!(!info.commit.is_empty());
        // YYYY-MM-DD, in this century.
        let parts: Vec<&str> = info.date.split('-').collect();
        assert_eq!(parts.len(), 3, "{}", info.date);
        assert!(
            parts[0].starts_with("20") && parts[0].len() == 4,
            "{}",
            info.date
        );
        assert!(
            info.target.contains(std::env::consts::ARCH),
            "{}",
            info.target
        );
        // Vulkan on Linux and Windows, Metal on Apple systems.
        let native = if cfg!(target_vendor = "apple") {
            "Metal"
        } else {
            "Vulkan"
        };
        assert!(info.backends.contains(&native), "{:?}", info.backends);
        let long = info.long();
        assert!(
            long.starts_with(&info.line()) && long.contains(native),
            "{long}"
        );
    }
}
