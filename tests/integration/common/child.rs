//! Running the real `batchscope` binary in a child process: exit code, output, peak memory and a
//! deadline that catches a hang.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What a child did.
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Peak resident memory in bytes.
    pub peak: u64,
}

pub const MIB: u64 = 1 << 20;

/// A fresh folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("batchscope-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// The JSON lines `batchscope args…` printed; it must exit 0 within `deadline`.
pub fn json_lines(args: &[&str], deadline: Duration) -> Vec<serde_json::Value> {
    let outcome = run(args, deadline);
    assert_eq!(outcome.code, Some(0), "{args:?}: {}", outcome.stderr);
    outcome
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// Runs `batchscope args…` to the end (killed after `deadline`), with its peak memory as the
/// child itself reads it from the system when it exits (`BATCHSCOPE_PEAK_MEMORY`).
pub fn run(args: &[&str], deadline: Duration) -> Outcome {
    run_with(args, deadline, |_| {})
}

/// [`run`], with the command changed first by `configure` (its environment, its limits).
pub fn run_with(
    args: &[&str],
    deadline: Duration,
    configure: impl FnOnce(&mut Command),
) -> Outcome {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = scratch(&format!("run{}", NEXT.fetch_add(1, Ordering::Relaxed)));
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_batchscope"));
    command
        .args(args)
        .env("BATCHSCOPE_PEAK_MEMORY", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"));
    configure(&mut command);
    let mut child = command.spawn().expect("batchscope starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("batchscope {args:?} still ran after {deadline:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let mut stderr = read(&err_path);
    let peak = stderr.lines().find_map(|l| {
        l.strip_prefix("peak memory: ")?
            .strip_suffix(" bytes")?
            .parse()
            .ok()
    });
    if let Some(at) = stderr.find("peak memory: ") {
        stderr.truncate(at);
    }
    let outcome = Outcome {
        code: status.code(),
        stdout: read(&out_path),
        stderr,
        // Where the system does not say (not Linux), no bound can be checked.
        peak: if cfg!(target_os = "linux") {
            peak.unwrap_or_else(|| panic!("{args:?}: no peak memory reported"))
        } else {
            0
        },
    };
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// Runs and asserts exit code 2 with a message naming `file` (and containing each of `says`),
/// and a peak memory under `bound` bytes.
pub fn refused(args: &[&str], file: &str, says: &[&str], bound: u64) -> Outcome {
    refused_by(run(args, Duration::from_secs(120)), args, file, says, bound)
}

/// Asserts that `outcome` of `args` is [`refused`]'s refusal.
pub fn refused_by(
    outcome: Outcome,
    args: &[&str],
    file: &str,
    says: &[&str],
    bound: u64,
) -> Outcome {
    assert_eq!(
        outcome.code,
        Some(2),
        "{args:?}: exit {:?}\nstdout: {}\nstderr: {}",
        outcome.code,
        outcome.stdout,
        outcome.stderr
    );
    assert!(
        outcome.stderr.contains(file),
        "{args:?}: the message does not name {file}: {}",
        outcome.stderr
    );
    for s in says {
        assert!(
            outcome.stderr.contains(s),
            "{args:?}: no `{s}` in {}",
            outcome.stderr
        );
    }
    assert!(
        outcome.peak < bound,
        "{args:?}: peak memory {} MiB, bound {} MiB",
        outcome.peak / MIB,
        bound / MIB
    );
    outcome
}

pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

pub fn s(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Runs `batchscope args…` under a resource limit that `prlimit` sets (`limit`, such as
/// `--as=4294967296` or `--fsize=256`), with `SIGXFSZ` ignored so that a write past a file-size
/// limit fails instead of killing the process, and standard output and error on pipes, which
/// such a limit does not touch. `timeout` kills it after `deadline_s` seconds (exit code 124).
/// Its peak memory is not measured (0).
#[cfg(target_os = "linux")]
pub fn run_limited(limit: &str, args: &[&str], deadline_s: u32) -> Outcome {
    let out = Command::new("timeout")
        .arg(deadline_s.to_string())
        .args([
            "sh",
            "-c",
            "trap '' XFSZ; exec prlimit \"$0\" -- \"$@\"",
            limit,
        ])
        .arg(env!("CARGO_BIN_EXE_batchscope"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("timeout, sh and prlimit run");
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        peak: 0,
    }
}
