//! Hostile inputs, round 2 (issue 35): the files added after the data loaders (lessons, session
//! files, the GPU kernel cache, hardware profiles, `--out` destinations), the limits a process
//! lives under, and the values that enter through them. Each test runs the real binary in a
//! child process and checks its exit code, that its message names the file and the reason, its
//! peak memory, and a deadline that catches a hang.

// The named pipes, devices and process limits are Unix's: so are the tests that use these.
#[cfg(unix)]
use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;

#[cfg(target_os = "linux")]
use common::child::refused_by;
#[cfg(unix)]
use common::child::run_with;
use common::child::{MIB, refused, run, s, scratch, write};

/// A named pipe with no writer at `path`.
#[cfg(unix)]
fn fifo(path: &Path) -> PathBuf {
    let _ = std::fs::remove_file(path);
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
    path.to_path_buf()
}

/// The README's example lesson, which reads and checks.
fn example_lesson() -> String {
    let readme = include_str!("../../docs/guide/src/en/lessons-and-presenter.md");
    let start = readme.find("```toml\nid = ").expect("the example") + "```toml\n".len();
    let end = start + readme[start..].find("```").expect("its end");
    readme[start..end].to_owned()
}

/// Whether a GPU adapter is here (with `CI=true` its absence fails the test).
fn has_gpu() -> bool {
    common::gpu().is_some()
}

/// A pipe or an endless device where a lesson, a profile or a session is expected: refused at
/// once, named, in little memory (they used to block forever or read until killed).
#[cfg(unix)]
#[test]
fn a_pipe_or_a_device_as_a_lesson_or_a_profile_is_refused_at_once() {
    let dir = scratch("files-special");
    let pipe = fifo(&dir.join("lesson.toml"));
    for (path, what) in [(s(&pipe), "named pipe (FIFO)"), ("/dev/zero", "device")] {
        for args in [
            vec!["lessons", "--file", path],
            vec!["simulate", "--profile", path, "--dataset", "mnist"],
            vec!["sweep", "--vary", "batch=16", "--profile", path],
        ] {
            refused(&args, path, &[what, "not a regular file"], 100 * MIB);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The GPU's kernel cache as a pipe or a device: every command that opens the GPU goes on,
/// says what the file is, and times the kernels again.
#[cfg(unix)]
#[test]
fn a_pipe_or_a_device_as_the_kernel_cache_is_named_and_the_gpu_still_trains() {
    if !has_gpu() {
        return;
    }
    let dir = scratch("files-cache");
    let cache = dir.join("batchscope").join("gpu-kernels.json");
    std::fs::create_dir_all(cache.parent().expect("folder")).expect("folder");
    for make in [
        (|p: &Path| {
            fifo(p);
        }) as fn(&Path),
        |p: &Path| {
            let _ = std::fs::remove_file(p);
            std::os::unix::fs::symlink("/dev/zero", p).expect("symlink");
        },
    ] {
        make(&cache);
        for args in [
            &["devices"][..],
            &["train", "--device", "gpu", "--steps", "2"],
        ] {
            let outcome = run_with(args, Duration::from_secs(120), |c| {
                c.env("XDG_DATA_HOME", &dir);
            });
            assert_eq!(outcome.code, Some(0), "{args:?}: {}", outcome.stderr);
            assert!(
                outcome.peak < 1024 * MIB,
                "{args:?}: {} MiB",
                outcome.peak / MIB
            );
            if args[0] == "train" {
                assert!(
                    outcome.stderr.contains("gpu-kernels.json")
                        && outcome.stderr.contains("not a regular file"),
                    "{}",
                    outcome.stderr
                );
                assert!(outcome.stdout.contains("gpu done"), "{}", outcome.stdout);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files larger than any real one of their kind, and a parse error on a 200 KB line: refused at
/// their budget, and the message stays a line long.
#[test]
fn a_file_over_its_budget_or_a_monster_line_is_refused_in_a_short_message() {
    let dir = scratch("files-budget");
    let mut big = example_lesson();
    big.push_str("# ");
    big.push_str(&"x".repeat(300 << 10));
    big.push('\n');
    let big = write(&dir, "big.toml", big.as_bytes());
    refused(
        &["lessons", "--file", s(&big)],
        "big.toml",
        &["256.0 KiB"],
        100 * MIB,
    );
    let nested = format!("id = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let nested = write(&dir, "nested.toml", nested.as_bytes());
    let outcome = refused(
        &["lessons", "--file", s(&nested)],
        "nested.toml",
        &["line 1, column"],
        100 * MIB,
    );
    assert!(
        outcome.stderr.len() < 1024,
        "{} bytes",
        outcome.stderr.len()
    );
    let bad_utf8 = write(&dir, "latin1.toml", b"id = \"caf\xe9\"\n");
    refused(
        &["lessons", "--file", s(&bad_utf8)],
        "latin1.toml",
        &["line 1, column 10"],
        100 * MIB,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lesson's preset, probes and Try changes go through the setup's checks: impossible values
/// are refused naming the file, the step and the setting.
#[test]
fn a_lesson_with_impossible_settings_is_refused_naming_the_place() {
    let dir = scratch("files-lesson");
    let lesson = example_lesson();
    assert!(lesson.contains("\nbatch = 8\n") && lesson.contains("set = { batch = 256 }"));
    let deep = format!("hidden = [{}]", vec!["1"; 100_000].join(","));
    for (name, text, says) in [
        (
            "huge-batch.toml",
            lesson.replace("\nbatch = 8\n", "\nbatch = 1000000000\n"),
            &["preset", "batch size 1000000000", "65536"][..],
        ),
        (
            "deep.toml",
            lesson.replace("hidden = [64, 64]", &deep),
            &["preset", "100000 hidden layers", "at most 32"],
        ),
        (
            "nan.toml",
            lesson.replace("\nbatch = 8\n", "\nbatch = 8\nlr = nan\n"),
            &["preset", "learning rate NaN"],
        ),
        (
            "try.toml",
            lesson.replace("set = { batch = 256 }", "set = { batch = 0 }"),
            &["step 4", "batch size 0"],
        ),
        (
            "ratio.toml",
            lesson.replace(
                "{speed.cpu.samples_per_s}",
                "{speed.cpu.samples_per_s / adapter.name}",
            ),
            &["step 3", "`adapter.name` is a name, not a number"],
        ),
    ] {
        assert_ne!(text, lesson, "{name}: the change applies");
        let path = write(&dir, name, text.as_bytes());
        refused(&["lessons", "--file", s(&path)], name, says, 300 * MIB);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A profile whose figures or efficiency table are impossible, or a file with no profile in it,
/// is refused naming the figure; nothing is predicted from it.
#[test]
fn a_profile_with_impossible_figures_is_refused_naming_them() {
    let dir = scratch("files-profile");
    let shipped = include_str!("../../assets/profiles.toml");
    let start = shipped.find("[[profile]]").expect("a profile");
    let end = shipped[start + 1..]
        .find("[[profile]]")
        .map_or(shipped.len(), |e| start + 1 + e);
    let one = &shipped[start..end];
    let fp32 = one
        .lines()
        .find(|l| l.starts_with("fp32_tflops"))
        .expect("fp32_tflops");
    let efficiency = |share: &str| {
        format!(
            "{one}\n[profile.efficiency]\ncompute = [[100.0, {share}], [1000.0, 0.5]]\n\
             memory = [[100.0, 0.5], [1000.0, 0.5]]\n"
        )
    };
    let cases = [
        (
            "tiny.toml",
            one.replace(
                fp32,
                "fp32_tflops = { value = 1e-308, source = \"x\", confidence = \"estimate\" }",
            ),
            "fp32_tflops",
        ),
        ("empty.toml", String::new(), "profile"),
        ("other.toml", "[settings]\nx = 1\n".to_owned(), "line 1"),
        (
            "negative.toml",
            efficiency("-0.5"),
            "efficiency.compute, point 1",
        ),
        ("nan.toml", efficiency("nan"), "efficiency.compute, point 1"),
        (
            "zero.toml",
            efficiency("0.0"),
            "efficiency.compute, point 1",
        ),
    ];
    for (name, text, says) in cases {
        let path = write(&dir, name, text.as_bytes());
        let outcome = refused(
            &["simulate", "--profile", s(&path), "--dataset", "mnist"],
            name,
            &[says],
            100 * MIB,
        );
        assert!(outcome.stdout.is_empty(), "{name}: {}", outcome.stdout);
    }
    // The same table with a plausible share predicts.
    let path = write(&dir, "fine.toml", efficiency("0.4").as_bytes());
    let outcome = run(
        &["simulate", "--profile", s(&path), "--dataset", "mnist"],
        Duration::from_secs(60),
    );
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Values that used to be taken without a word, or said in the wrong words.
#[test]
fn values_that_cannot_apply_are_refused_and_every_number_prints_short() {
    // A sweep whose every value is refused measured nothing: not a success.
    let outcome = refused(
        &[
            "sweep",
            "--vary",
            "batch=100000000,200000000",
            "--device",
            "cpu",
        ],
        "batch=100000000",
        &["measured nothing", "choose between 1 and 65536"],
        200 * MIB,
    );
    assert!(!outcome.stdout.contains("crossover"), "{}", outcome.stdout);
    // The image options of a folder, given for a shipped set.
    refused(
        &["train", "--dataset", "mnist", "--image-side", "14"],
        "--image-side 14",
        &["folder of images", "mnist"],
        200 * MIB,
    );
    // An overflow of --until-epochs is said as --until-epochs.
    refused(
        &[
            "train",
            "--until-epochs",
            "18446744073709551615",
            "--device",
            "cpu",
        ],
        "--until-epochs 18446744073709551615",
        &["choose at most"],
        100 * MIB,
    );
    // A tiny target prints in a few characters, not 300 digits.
    let outcome = run(
        &[
            "train",
            "--device",
            "cpu",
            "--until-accuracy",
            "1e-300",
            "--steps",
            "3",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    assert!(outcome.stdout.contains("1.00e-300"), "{}", outcome.stdout);
    assert!(
        outcome.stdout.lines().all(|l| l.len() < 300),
        "{}",
        outcome.stdout
    );
}

/// A buffer over the GPU's binding limit is refused before the run, naming the setting to
/// change and the most rows that fit (exit 2, as for any setting).
#[test]
fn a_buffer_over_the_gpus_binding_limit_names_the_setting_and_what_fits() {
    if !has_gpu() {
        return;
    }
    let devices = run(&["devices", "--json"], Duration::from_secs(60));
    let listed: serde_json::Value =
        serde_json::from_str(devices.stdout.trim()).expect("devices --json");
    // The adapter training opens: the first usable one.
    let limit_mib: u64 = listed["adapters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["usable_for_training"] == true)
        .find_map(|a| {
            let bytes = a["max_storage_buffer_binding_size_bytes"].as_u64()?;
            Some(bytes.min(a["max_buffer_size_bytes"].as_u64()?) >> 20)
        })
        .unwrap_or_else(|| panic!("no adapter limits in {}", devices.stdout));
    // 28×28 pixels × 64 filters × 4 bytes a row: enough rows to pass the limit (at most 65,536).
    let rows = ((limit_mib << 20) / (28 * 28 * 64 * 4) + 1).min(65_536);
    if rows * 28 * 28 * 64 * 4 <= limit_mib << 20 {
        eprintln!("this adapter binds {limit_mib} MiB: no batch passes it");
        return;
    }
    let rows = rows.to_string();
    let args = [
        "train",
        "--dataset",
        "mnist",
        "--conv",
        "64",
        "--batch",
        &rows,
        "--device",
        "gpu",
    ];
    let outcome = refused(
        &args,
        &format!("--batch {rows}"),
        &[
            "conv0's output (conv2d + relu), 28×28×64 values a row",
            "or fewer",
        ],
        2048 * MIB,
    );
    assert!(!outcome.stdout.contains("gpu step"), "{}", outcome.stdout);
    let request = (limit_mib << 20) / (784 * 4) + 1;
    if request <= 65_536 {
        let request = request.to_string();
        refused(
            &[
                "infer",
                "--dataset",
                "mnist",
                "--device",
                "gpu",
                "--train-steps",
                "2",
                "--request-rows",
                &request,
            ],
            &format!("--request-rows {request}"),
            &["or fewer"],
            2048 * MIB,
        );
    }
}

/// An `--out` that cannot be written is refused before the work, in a moment, not after it.
#[test]
fn an_unwritable_out_is_refused_before_any_work() {
    let dir = scratch("files-out");
    let file = write(&dir, "plain.txt", b"x");
    let missing = dir.join("no-such-folder").join("out.csv");
    let through_file = file.join("out.csv");
    for out in [missing.as_path(), through_file.as_path(), dir.as_path()] {
        for args in [
            vec!["calibrate", "--out", s(out)],
            vec![
                "sweep",
                "--vary",
                "batch=16,32",
                "--device",
                "cpu",
                "--out",
                s(out),
            ],
            vec!["trace", "--device", "cpu", "--out", s(out)],
        ] {
            let start = Instant::now();
            let outcome = run(&args, Duration::from_secs(60));
            assert_eq!(outcome.code, Some(2), "{args:?}: {}", outcome.stderr);
            assert!(
                outcome.stderr.contains(s(out)),
                "{args:?}: {}",
                outcome.stderr
            );
            assert!(
                outcome.stdout.is_empty(),
                "{args:?} worked first: {}",
                outcome.stdout
            );
            assert!(start.elapsed() < Duration::from_secs(20), "{args:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A disk that fills during each `--out` write (a file-size limit, `RLIMIT_FSIZE`, with
/// `SIGXFSZ` ignored so the write fails instead of killing the process): the command fails, and
/// neither the file nor a part of it is left behind.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_during_an_out_write_leaves_no_file() {
    let dir = scratch("files-full");
    for (name, args) in [
        (
            "sweep.csv",
            &["sweep", "--vary", "batch=16,32", "--device", "cpu"][..],
        ),
        ("trace.json", &["trace", "--device", "cpu", "--steps", "5"]),
        ("local.toml", &["calibrate", "--seconds", "0.005"]),
    ] {
        let out = dir.join(name);
        let mut all = args.to_vec();
        all.extend(["--out", s(&out)]);
        let outcome = common::child::run_limited("--fsize=256", &all, 300);
        let stderr = &outcome.stderr;
        assert_eq!(outcome.code, Some(1), "{name}: {stderr}");
        assert!(stderr.contains(name), "{name}: {stderr}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("read the folder")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert!(left.is_empty(), "{name}: left behind {left:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run the estimator says cannot fit under the address-space limit the process lives under
/// (`RLIMIT_AS`, as `ulimit -v` sets) is refused with the memory message and exit 2, never
/// aborted by the allocator; a run that fits still trains.
#[cfg(target_os = "linux")]
#[test]
fn a_run_too_large_for_the_memory_limit_is_refused_not_aborted() {
    let under_limit = |args: &[&str]| common::child::run_limited("--as=4294967296", args, 300);
    let args = [
        "train",
        "--dataset",
        "mnist",
        "--conv",
        "256,256,256,256",
        "--batch",
        "4096",
        "--device",
        "cpu",
    ];
    let outcome = refused_by(
        under_limit(&args),
        &args,
        "this run needs about",
        &["may use now"],
        u64::MAX,
    );
    // The figure said is what the limit leaves, not the machine's free memory.
    let available = outcome
        .stderr
        .split("more than the ")
        .nth(1)
        .and_then(|t| t.split(" GiB").next())
        .and_then(|g| g.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no figure in {}", outcome.stderr));
    assert!(available <= 4.0, "{}", outcome.stderr);
    let fits = under_limit(&["train", "--device", "cpu", "--steps", "3"]);
    assert_eq!(fits.code, Some(0), "{}", fits.stderr);
}
