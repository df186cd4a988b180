//! The headless interface: JSON output, and exit code 2 with a clear message on bad input.

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary; a run past two minutes is killed and fails the test, so a hang cannot stall CI.
fn batchscope(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("batchscope {args:?} did not finish in two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

#[test]
fn version_names_the_commit_day_target_and_gpu_backends() {
    let info = batchscope::build_info::this_build();
    let (code, stdout, stderr) = batchscope(&["--version"]);
    assert_eq!(code, 0, "{stderr}");
    let expected = format!("batchscope {}\n", info.long());
    assert_eq!(stdout, expected);
    assert!(stdout.contains(env!("CARGO_PKG_VERSION")) && stdout.contains("GPU backends: "));
    // `-V`: the one line.
    let (code, stdout, _) = batchscope(&["-V"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, format!("batchscope {}\n", info.line()));
}

#[test]
fn train_prints_one_json_line_per_logged_step_and_a_summary() {
    let (code, stdout, stderr) = batchscope(&[
        "train",
        "--device",
        "cpu",
        "--steps",
        "50",
        "--log-every",
        "10",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    for (i, line) in lines[..5].iter().enumerate() {
        assert_eq!(line["device"], "cpu");
        assert_eq!(line["step"], (i as u64 + 1) * 10);
        assert!(line["loss"].as_f64().expect("loss") > 0.0);
        assert!((0.0..=1.0).contains(&line["accuracy"].as_f64().expect("accuracy")));
        assert!(line["samples_per_s"].as_f64().expect("rate") > 0.0);
        assert_energy(line, 32.0);
    }
    // The energy so far grows log by log.
    let totals: Vec<f64> = lines[..5]
        .iter()
        .map(|l| l["energy_total_j"].as_f64().expect("total"))
        .collect();
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "{totals:?}");
    assert_eq!(lines[5]["summary"], true);
    assert_eq!(lines[5]["steps"], 50);
    let total = lines[5]["energy_total_j"].as_f64().expect("run's energy");
    assert!(total >= totals[4], "{total} against {totals:?}");
    let per_step = lines[5]["energy_per_step_j"].as_f64().expect("a step's");
    assert!(
        (per_step - total / 50.0).abs() <= 1e-12 * total,
        "{}",
        lines[5]
    );
    assert!(
        lines[5]["energy_basis"]
            .as_str()
            .is_some_and(|b| !b.is_empty())
    );
}

#[test]
fn train_on_both_devices_reports_each() {
    let (code, stdout, stderr) = batchscope(&["train", "--steps", "20", "--json"]);
    let summaries: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["summary"] == true || v.get("error").is_some())
        .collect();
    assert_eq!(summaries[0]["device"], "cpu");
    assert_eq!(summaries[0]["summary"], true);
    if ci() || summaries.len() == 2 && summaries[1]["summary"] == true {
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(summaries[1]["device"], "gpu", "{stdout}");
        assert_eq!(summaries[1]["summary"], true, "{stdout}");
    } else {
        // No adapter: the GPU says why, the CPU result stands, and the exit code says a device failed.
        assert_eq!(code, 1, "{stderr}");
        let reason = summaries[1]["error"].as_str().expect("reason");
        assert!(reason.contains("mesa-vulkan-drivers"), "{reason}");
    }
}

#[test]
fn epochs_count_full_passes_over_the_training_set() {
    // 900 samples, 20% held out: 720 training rows, 22 full batches of 32 per epoch.
    let (code, stdout, stderr) = batchscope(&[
        "train",
        "--device",
        "cpu",
        "--epochs",
        "2",
        "--log-every",
        "1000",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let last: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("summary")).expect("JSON");
    assert_eq!(last["steps"], 44, "{stdout}");
}

#[test]
fn bad_options_exit_with_2_and_say_what_was_wrong() {
    let cases: [(&[&str], &str); 6] = [
        (&["train", "--layers", "2,x,3"], "--layers"),
        (&["train", "--layers", "3,16,3"], "must start with 2"),
        (&["train", "--dataset", "nope"], "choose one of spiral"),
        (&["train", "--device", "tpu"], "choose cpu, gpu or both"),
        (&["train", "--batch", "100000"], "batch size 100000"),
        (&["train", "--lr", "abc"], "--lr"),
    ];
    for (args, expected) in cases {
        let (code, _, stderr) = batchscope(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn devices_lists_adapters_as_json() {
    let (code, stdout, stderr) = batchscope(&["devices", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert!(v["cpu"]["threads"].as_u64().expect("threads") >= 1);
    let adapters = v["adapters"].as_array().expect("array");
    if ci() {
        assert!(
            adapters.iter().any(|a| a["usable_for_training"] == true),
            "CI installs lavapipe: {stdout}"
        );
    }
    for a in adapters {
        for key in [
            "name",
            "backend",
            "device_type",
            "software",
            "timestamps",
            "shader_f16",
            "max_buffer_size_bytes",
        ] {
            assert!(a.get(key).is_some(), "{key} missing in {a}");
        }
        if a["name"].as_str().is_some_and(|n| n.contains("llvmpipe")) {
            assert_eq!(a["software"], true);
        }
    }
}

/// `bench --json` of 20-32-4 at batch 16 on `device`: 3 warm-up steps, 3 runs of 5 steps.
fn bench_20_32_4(device: &str) -> (i32, String, String) {
    batchscope(&[
        "bench",
        "--device",
        device,
        "--dataset",
        "random",
        "--layers",
        "20,32,4",
        "--batch",
        "16",
        "--warmup",
        "3",
        "--repeats",
        "3",
        "--steps-per-run",
        "5",
        "--json",
    ])
}

#[test]
fn bench_reports_statistics_per_device() {
    let (code, stdout, stderr) = bench_20_32_4("cpu");
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(v["device"], "cpu");
    assert_eq!(v["data"], "random");
    assert_eq!(v["repeats"], 3);
    assert_eq!(v["steps_per_run"], 5);
    let (min, median, max) = (
        v["step_time_min_ms"].as_f64().expect("min"),
        v["step_time_median_ms"].as_f64().expect("median"),
        v["step_time_max_ms"].as_f64().expect("max"),
    );
    assert!(0.0 < min && min <= median && median <= max, "{v}");
    // samples/s and GFLOP/s follow from the median step time.
    let rate = v["samples_per_s"].as_f64().expect("rate");
    assert!((rate - 16.0 / (median / 1e3)).abs() / rate < 1e-9, "{v}");
    let flops = 2.0 * 16.0 * f64::from(3 * (20 * 32 + 32 * 4) - 20 * 32);
    let gflops = v["gflop_per_s"].as_f64().expect("gflops");
    assert!(
        (gflops - flops / (median / 1e3) / 1e9).abs() / gflops < 1e-9,
        "{v}"
    );
    assert!(
        v["dispatches_per_step"].is_null(),
        "the CPU dispatches no kernels: {v}"
    );
    assert_energy(&v, 16.0);
}

/// A line's energy: a step's joules, measured by a counter or labelled estimated (CI's machine
/// has no readable counter), and samples per joule that follow from them. A counter may not
/// have ticked over a few short steps; an estimate always counts.
fn assert_energy(v: &serde_json::Value, batch: f64) {
    let source = v["energy_source"].as_str().expect("energy_source");
    assert!(["rapl", "nvml", "estimated"].contains(&source), "{v}");
    let joules = v["energy_j"].as_f64().expect("energy_j");
    assert!(
        joules > 0.0 || source != "estimated" && joules == 0.0,
        "{v}"
    );
    let per_j = v["samples_per_j"].as_f64().expect("samples_per_j");
    if joules > 0.0 {
        assert!((per_j - batch / joules).abs() / per_j < 1e-9, "{v}");
    }
}

/// On the GPU, `bench` counts the kernels a step dispatches: for 20-32-4 with Adam in FP32,
/// ten (two forward products, the loss, two weight gradients and their two column sums, one
/// input gradient, and one update of each layer's weights and biases together) in every step.
#[test]
fn bench_counts_the_kernels_a_gpu_step_dispatches() {
    if !ci() {
        return;
    }
    let (code, stdout, stderr) = bench_20_32_4("gpu");
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    let d = v["dispatches_per_step"]
        .as_f64()
        .expect("counted on the GPU");
    assert_eq!(d, 10.0, "{v}");
}

#[test]
fn bench_kernels_compares_products_with_the_measured_peak() {
    let (code, stdout, stderr) = batchscope(&[
        "bench",
        "--kernels",
        "--device",
        "cpu",
        "--dataset",
        "random",
        "--layers",
        "64,32,4",
        "--batch",
        "16",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert!(
        v["fma_peak_per_core"]["gflop_per_s"]
            .as_f64()
            .expect("peak")
            > 0.0
    );
    let products = v["products"].as_array().expect("products");
    // One thread and all threads, three products per layer, two layers.
    assert_eq!(products[0]["threads"], 1);
    assert_eq!(products[0]["rates"].as_array().expect("rates").len(), 6);
}

#[test]
fn data_inspect_summarises_a_file_or_says_what_is_wrong() {
    let (code, stdout, stderr) = batchscope(&["data", "inspect", "iris", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(v["rows"], 150);
    assert_eq!(v["features"], 4);
    assert_eq!(v["class_counts"], serde_json::json!([50, 50, 50]));
    // A numeric target with fractions is read as regression, with the reason.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/autompg/autompg.csv");
    let (code, stdout, stderr) = batchscope(&["data", "inspect", path]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("task: regression (the label column holds fractions")
            && stdout.contains("target: from 9 to 46.6")
            && stdout.contains("column `car_name` left out"),
        "{stdout}"
    );
    // Forced to be classes, its 127 distinct values are refused with the limit, exit code 2.
    let (code, _, stderr) = batchscope(&["data", "inspect", path, "--task", "classification"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("autompg.csv")
            && stderr.contains("`mpg`")
            && stderr.contains("more than the 100 classes"),
        "{stderr}"
    );
    // A malformed file names its line.
    let dir = std::env::temp_dir().join(format!("batchscope-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.csv");
    let mut text = String::from("a,b,label\n");
    for i in 0..20 {
        let _ = writeln!(text, "{i},{i},{}", i % 2);
    }
    text.push_str("1,2\n");
    std::fs::write(&bad, text).expect("write");
    let (code, _, stderr) = batchscope(&["data", "inspect", bad.to_str().expect("utf-8 path")]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("line 22") && stderr.contains("2 fields"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn train_on_a_shipped_set_and_check_the_layers_against_it() {
    let (code, stdout, stderr) = batchscope(&[
        "train",
        "--dataset",
        "iris",
        "--device",
        "cpu",
        "--steps",
        "300",
        "--log-every",
        "300",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("summary")).expect("JSON");
    assert!(
        summary["test_accuracy"].as_f64().expect("accuracy") > 0.8,
        "{summary}"
    );
    let (code, _, stderr) = batchscope(&["train", "--dataset", "iris", "--layers", "2,16,3"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("4 features and 3 outputs"), "{stderr}");
}

/// The summary of a 16-bit run reports what storing in 16 bits lost and the loss scaler's end:
/// mixed precision's first steps overflow at the initial scale of 65536, so the scaler backs off
/// and skips them; the overflowing values are counted where they were stored.
#[test]
fn the_summary_reports_rounding_losses_and_the_final_loss_scale() {
    let (code, stdout, stderr) = batchscope(&[
        "train",
        "--device",
        "cpu",
        "--precision",
        "mixed",
        "--steps",
        "40",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|v: &serde_json::Value| v["summary"] == true)
        .expect("a summary line");
    assert_eq!(summary["precision"], "mixed");
    let skipped = summary["skipped_steps"].as_u64().expect("skipped steps");
    let scale = summary["final_loss_scale"].as_f64().expect("final scale");
    assert!(skipped >= 1 && scale < 65536.0, "{summary}");
    assert!(summary["gradient_overflow_share"].as_f64().expect("share") > 0.0);
    assert!(summary["gradient_underflow_share"].as_f64().is_some());
    assert!(
        summary["rounding"]["activations"]["values"]
            .as_u64()
            .expect("count")
            > 0
    );
    // `bench` measures a 16-bit precision against FP32 in the same run and gives the ratio.
    let (code, stdout, stderr) = batchscope(&[
        "bench",
        "--device",
        "cpu",
        "--precision",
        "bf16",
        "--warmup",
        "2",
        "--repeats",
        "3",
        "--steps-per-run",
        "5",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let bench: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(bench["precision"], "bf16");
    let ratio = bench["step_time_ratio_to_fp32"].as_f64().expect("a ratio");
    let (bf16, fp32) = (
        bench["step_time_median_ms"].as_f64().expect("bf16 time"),
        bench["fp32_step_time_median_ms"]
            .as_f64()
            .expect("fp32 time"),
    );
    assert!((ratio - bf16 / fp32).abs() < 1e-9 && ratio > 0.0, "{bench}");
    // The text form says the same in a line of its own.
    let (code, stdout, _) = batchscope(&[
        "train",
        "--device",
        "cpu",
        "--precision",
        "fp16",
        "--steps",
        "20",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("cpu fp16: of ") && l.contains("became 0")),
        "{stdout}"
    );
}

/// `batchscope devices | head -n 1` in a shell with `pipefail`, as `scripts/test.sh` runs it:
/// `head` closes the pipe after the first line, and the command must end quietly with exit
/// code 0 every time (it used to panic about one time in three on a machine with two adapters).
#[test]
fn devices_piped_into_head_exits_0_a_hundred_times_in_a_row() {
    let bin = env!("CARGO_BIN_EXE_batchscope");
    // Four shells at a time: the runs are independent, and 100 in a row take a while.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for _ in 0..25 {
                        let out = Command::new("bash")
                            .args(["-c", "set -o pipefail; \"$0\" devices | head -n 1", bin])
                            .output()
                            .expect("bash runs");
                        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                        if !out.status.success() || stderr.contains("panicked") {
                            failures.push(format!("{:?}: {stderr}", out.status));
                        }
                    }
                    failures
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("no panic"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of 100 failed: {failures:?}",
        failures.len()
    );
}

/// Every subcommand, with its reader gone before it prints anything: it ends quietly, with exit
/// code 0 and no panic, as Unix tools do.
#[test]
fn every_subcommand_ends_quietly_when_its_reader_has_gone() {
    let trace = std::env::temp_dir().join(format!("bs-closed-pipe-{}.json", std::process::id()));
    let trace = trace.to_string_lossy().into_owned();
    let cases: [&[&str]; 12] = [
        &["devices"],
        &["devices", "--json"],
        &["data", "inspect", "iris"],
        &["data", "inspect", "iris", "--json"],
        &[
            "train",
            "--device",
            "cpu",
            "--steps",
            "20",
            "--log-every",
            "5",
        ],
        &[
            "train",
            "--device",
            "both",
            "--steps",
            "20",
            "--log-every",
            "5",
            "--json",
        ],
        &[
            "bench",
            "--device",
            "cpu",
            "--repeats",
            "1",
            "--warmup",
            "1",
            "--steps-per-run",
            "5",
        ],
        &["memory", "--device", "cpu", "--steps", "1"],
        &["memory", "--device", "cpu", "--steps", "1", "--json"],
        &[
            "trace", "--device", "cpu", "--steps", "5", "--warmup", "1", "--out", &trace,
        ],
        &["--help"],
        &["train", "--help"],
    ];
    for args in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_batchscope"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        // The reader goes away before the command has printed anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("it ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn train_stops_at_a_target_and_reports_the_time_to_it_end_to_end() {
    let summary = |args: &[&str]| -> serde_json::Value {
        let (code, stdout, stderr) = batchscope(args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str(stdout.lines().last().expect("a summary")).expect("JSON")
    };
    let s = summary(&[
        "train",
        "--dataset",
        "iris",
        "--device",
        "cpu",
        "--until-accuracy",
        "0.9",
        "--steps",
        "6000",
        "--log-every",
        "100000",
        "--json",
    ]);
    let target = &s["target"];
    assert_eq!(target["target"], "test_accuracy");
    assert_eq!(target["value"], 0.9);
    assert_eq!(target["reached"], true, "{s}");
    assert!(target["score"].as_f64().is_some_and(|a| a >= 0.9), "{s}");
    // End to end: at least the training loop's own time, since it includes setting up the model.
    let to_target = target["time_to_target_s"].as_f64().expect("time");
    assert!(to_target > 0.0 && to_target >= s["elapsed_s"].as_f64().expect("elapsed") * 0.99);
    assert!(
        s["steps"].as_u64().is_some_and(|n| n < 6000),
        "stopped early: {s}"
    );
    // Not reached within the steps: said, with the last score.
    let s = summary(&[
        "train",
        "--dataset",
        "iris",
        "--device",
        "cpu",
        "--until-accuracy",
        "1",
        "--steps",
        "6",
        "--json",
    ]);
    assert_eq!(s["target"]["reached"], false, "{s}");
    assert!(s["target"].get("time_to_target_s").is_none(), "{s}");
    // A number of epochs.
    let s = summary(&[
        "train",
        "--dataset",
        "iris",
        "--device",
        "cpu",
        "--until-epochs",
        "4",
        "--json",
    ]);
    assert_eq!(s["target"]["epochs"], 4, "{s}");
    assert_eq!(
        s["steps"], 12,
        "iris: 120 training rows, 32 a batch: 3 steps an epoch"
    );
    let (code, _, stderr) = batchscope(&["train", "--until-accuracy", "90"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("0.9 for 90%"), "{stderr}");
}

#[test]
fn infer_times_single_requests_and_batches_on_each_device_with_their_copies() {
    let gpu = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args(["devices", "--json"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    let device = if gpu || ci() { "both" } else { "cpu" };
    let (code, stdout, stderr) = batchscope(&[
        "infer",
        "--dataset",
        "iris",
        "--device",
        device,
        "--requests",
        "40",
        "--train-steps",
        "50",
        "--batch",
        "16",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let reports: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(
        reports.len(),
        if device == "both" { 2 } else { 1 },
        "{stdout}"
    );
    for r in &reports {
        for (case, rows) in [("single", 1), ("batched", 16)] {
            let l = &r[case];
            assert_eq!(l["rows"], rows, "{r}");
            assert_eq!(l["requests"], 40);
            let (p50, p99) = (
                l["p50_ms"].as_f64().expect("p50"),
                l["p99_ms"].as_f64().expect("p99"),
            );
            assert!(p50 > 0.0 && p99 >= p50, "{r}");
            assert!(l["rows_per_s"].as_f64().is_some_and(|v| v > 0.0));
            // Every request copies its rows in and its answer out: the recorded spans show it.
            let memcpy = l["spans_per_request"]
                .as_array()
                .expect("spans")
                .iter()
                .find(|s| s[0] == "Memcpy")
                .and_then(|s| s[1].as_u64());
            assert!(
                memcpy.is_some_and(|n| n >= 2),
                "{case} on {}: {r}",
                r["device"]
            );
        }
        if r["device"] == "gpu" {
            let kinds: Vec<&str> = r["single"]["spans_per_request"]
                .as_array()
                .expect("spans")
                .iter()
                .filter_map(|s| s[0].as_str())
                .collect();
            assert!(kinds.contains(&"Kernel") && kinds.contains(&"Sync"), "{r}");
        }
    }
}

#[test]
fn profiles_list_every_figure_with_its_source_and_simulate_labels_its_predictions() {
    let (code, stdout, stderr) = batchscope(&["profiles", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let profiles: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    // Every profile the shipped file holds, counted in the file.
    let shipped = include_str!("../../assets/profiles.toml")
        .lines()
        .filter(|l| l.trim() == "[[profile]]")
        .count();
    assert_eq!(profiles.len(), shipped, "{stdout}");
    for p in &profiles {
        let source = p["fp32_tflops"]["source"].as_str().expect("source");
        assert!(!source.is_empty(), "{p}");
        assert!(p["fp32_tflops"]["confidence"].is_string(), "{p}");
    }
    let (code, stdout, stderr) = batchscope(&[
        "simulate",
        "--dataset",
        "mnist",
        "--layers",
        "784,4096,4096,10",
        "--batch",
        "1024",
        "--profile",
        "nvidia-t4",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(line["simulated"], true, "{line}");
    assert_eq!(line["bound"], "compute", "{line}");
    assert!(
        line["predicted_step_time_ms"]
            .as_f64()
            .is_some_and(|t| t > 0.0)
    );
    assert!(
        line["predicted_samples_per_s"]
            .as_f64()
            .is_some_and(|s| s > 0.0)
    );
    let ops = line["ops"].as_array().expect("ops");
    assert!(
        ops.iter()
            .any(|o| o["name"] == "layer 2 forward" && o["bound"] == "compute")
    );
    // Memory on the profile, and the largest preset spread over 8 GPUs with ZeRO.
    let (code, stdout, stderr) = batchscope(&[
        "simulate",
        "--dataset",
        "spiral",
        "--profile",
        "nvidia-t4",
        "--gpus",
        "8",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(line["memory"]["fits"], true, "{line}");
    assert_eq!(
        line["memory"]["capacity_bytes"], 16_000_000_000_u64,
        "{line}"
    );
    let psi = line["zero"]["parameters"].as_f64().expect("parameters");
    let per_gpu: Vec<f64> = line["zero"]["per_gpu_bytes"]
        .as_array()
        .expect("stages")
        .iter()
        .map(|s| s[1].as_f64().expect("bytes"))
        .collect();
    // The ZeRO paper's formulas with K = 12 (Adam, mixed precision): 16Ψ, 4Ψ + 12Ψ/N,
    // 2Ψ + 14Ψ/N, 16Ψ/N.
    let want = [
        16.0 * psi,
        4.0 * psi + 1.5 * psi,
        2.0 * psi + 1.75 * psi,
        2.0 * psi,
    ];
    for (got, want) in per_gpu.iter().zip(want) {
        assert!((got - want).abs() <= 1.0, "{per_gpu:?} vs {want}");
    }
    // The text says simulated (or, for memory, estimated) on every line that has a figure.
    let (code, stdout, _) = batchscope(&["simulate", "--dataset", "spiral", "--gpus", "4"]);
    assert_eq!(code, 0);
    assert!(
        stdout
            .lines()
            .skip(1)
            .all(|l| l.contains("(simulated)") || l.contains("(estimated)")),
        "{stdout}"
    );
    // With --gpus every profile gets the ZeRO line.
    assert_eq!(
        stdout.matches("model states per GPU").count(),
        stdout.matches("samples/s").count(),
        "{stdout}"
    );
    assert!(stdout.starts_with("SIMULATED (not measured)"));
    // An unknown profile names the ones there are.
    let (code, _, stderr) = batchscope(&["simulate", "--profile", "nvidia-b200"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("nvidia-h100-sxm"), "{stderr}");
}

#[test]
fn calibrate_writes_a_local_profile_that_simulate_reads() {
    // Calibration times probes: alone in the binary.
    let _alone = crate::common::alone();
    let dir = std::env::temp_dir().join(format!("batchscope-calibrate-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("local.toml");
    let path_text = path.to_str().expect("utf-8 path");
    let (code, stdout, stderr) =
        batchscope(&["calibrate", "--seconds", "0.005", "--out", path_text]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("measured in this run"), "{stdout}");
    let (code, stdout, stderr) = batchscope(&[
        "simulate",
        "--profile",
        path_text,
        "--dataset",
        "spiral",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(line["profile"], "local-cpu");
    assert_eq!(line["simulated"], true);
    assert!(
        line["predicted_step_time_ms"]
            .as_f64()
            .is_some_and(|t| t > 0.0)
    );
    // The GPU adapter is calibrated too, a software one named as such; an unknown device is
    // refused with the choices.
    let (code, _, stderr) = batchscope(&["calibrate", "--device", "tpu"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cpu, gpu or both"), "{stderr}");
    let gpu_path = dir.join("gpu.toml");
    let gpu_text = gpu_path.to_str().expect("utf-8 path");
    let (code, stdout, stderr) = batchscope(&[
        "calibrate",
        "--device",
        "gpu",
        "--seconds",
        "0.005",
        "--out",
        gpu_text,
    ]);
    if code != 0 && !ci() && stderr.contains("cannot calibrate") {
        eprintln!("no GPU adapter here: {stderr}");
    } else {
        assert_eq!(code, 0, "{stderr}");
        let software = stdout.contains("llvmpipe") || stdout.contains("lavapipe");
        assert_eq!(software, stdout.contains("a software adapter"), "{stdout}");
        let (code, stdout, stderr) = batchscope(&[
            "simulate",
            "--profile",
            gpu_text,
            "--dataset",
            "spiral",
            "--json",
        ]);
        assert_eq!(code, 0, "{stderr}");
        let line: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
        assert_eq!(line["profile"], "local-gpu");
        assert_eq!(line["simulated"], true);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn conv_blocks_train_a_cnn_and_are_measured_and_estimated_headless() {
    // Training on both devices: the summary names each; the losses are logged.
    let (code, stdout, stderr) = batchscope(&[
        "train",
        "--dataset",
        "digits",
        "--conv",
        "4,8",
        "--steps",
        "20",
        "--log-every",
        "10",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let devices = if ci() { 2 } else { 1 };
    assert!(lines.iter().filter(|l| l["summary"] == true).count() >= devices);
    assert!(
        lines
            .iter()
            .filter(|l| l["step"] == 20)
            .all(|l| l["loss"].as_f64().is_some_and(f64::is_finite))
    );
    // bench --kernels: each block's convolution kernels as the CPU's step runs them (the first
    // block has no input gradient), three products per dense layer.
    let (code, stdout, stderr) = batchscope(&[
        "bench",
        "--kernels",
        "--device",
        "cpu",
        "--dataset",
        "digits",
        "--conv",
        "4",
        "--batch",
        "8",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(v["model"], "8×8×1 conv 4 (3×3) → 64-10");
    let rates = v["products"][0]["rates"].as_array().expect("rates");
    let names: Vec<&str> = rates.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "convolution 0",
            "conv weight_grad 0",
            "forward 1",
            "weight_grad 1",
            "input_grad 1"
        ]
    );
    assert_eq!(rates[0]["shape"], serde_json::json!([8 * 64, 9, 4]));
    // memory: measured and estimated bytes agree for every role of the CNN.
    let (code, stdout, stderr) = batchscope(&[
        "memory",
        "--device",
        "cpu",
        "--dataset",
        "digits",
        "--conv",
        "4,8",
        "--conv-kernel",
        "5",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let roles = stdout.lines().filter(|l| l.contains(" measured ")).count();
    assert!(roles >= 6, "{stdout}");
    for line in stdout.lines().filter(|l| l.contains(" estimated ")) {
        let numbers: Vec<&str> = line.split_whitespace().collect();
        if numbers.get(3) != Some(&"-") && numbers[0] != "internal" {
            assert_eq!(numbers[1], numbers[3], "{line}");
        }
    }
    // Blocks on rows of numbers, or an absurd block: exit 2 and the reason.
    for (args, says) in [
        (&["--dataset", "iris", "--conv", "8"][..], "need images"),
        (
            &["--dataset", "digits", "--conv", "8,x"][..],
            "--conv `8,x`",
        ),
        (
            &["--dataset", "digits", "--conv", "8", "--conv-kernel", "7"][..],
            "choose 3×3 or 5×5",
        ),
        (
            &["--dataset", "digits", "--conv", "2,2,2,2"][..],
            "no pixel",
        ),
    ] {
        let mut all = vec!["train", "--device", "cpu", "--steps", "1"];
        all.extend_from_slice(args);
        let (code, _, stderr) = batchscope(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `tune` times every kernel variant, keeps the fastest in the data directory, and `devices`
/// then names it as timed; a corrupted file is reported and replaced, not fatal.
#[test]
fn tune_keeps_the_fastest_kernel_and_devices_names_it() {
    let data = std::env::temp_dir().join(format!("batchscope-cli-tune-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_batchscope"))
            .args(args)
            .env("XDG_DATA_HOME", &data)
            .output()
            .expect("the binary runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = run(&["tune", "--json"]);
    if code != 0 && !ci() {
        eprintln!("skipping: no GPU to tune ({stderr})");
        return;
    }
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let rates = report["tuning"]["rates"].as_array().expect("rates");
    assert!(rates.len() >= 2, "{stdout}");
    let fastest = rates
        .iter()
        .max_by(|a, b| {
            a[1].as_f64()
                .unwrap_or(0.0)
                .total_cmp(&b[1].as_f64().unwrap_or(0.0))
        })
        .expect("a rate");
    assert_eq!(report["tuning"]["chosen"], fastest[0]);
    let cache = std::path::PathBuf::from(report["cache"].as_str().expect("kept"));
    assert!(cache.starts_with(&data), "{}", cache.display());

    let (code, stdout, stderr) = run(&["devices"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("timed fastest on"), "{stdout}");
    // lavapipe binds eight storage buffers a kernel: each layer's update is one dispatch.
    assert!(
        stdout.contains("optimizer updates: a layer's weights and biases in one dispatch"),
        "{stdout}"
    );
    // The adapter's type in words, not wgpu's name for it.
    assert!(stdout.contains("software: runs on the CPU"), "{stdout}");
    assert!(!stdout.contains("] Cpu"), "{stdout}");

    std::fs::write(&cache, "not json").expect("write");
    let (code, _, stderr) = run(&["train", "--device", "gpu", "--steps", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("could not be used"), "{stderr}");
    let text = std::fs::read_to_string(&cache).expect("rewritten");
    assert!(text.contains("\"chosen\""), "{text}");
    let _ = std::fs::remove_dir_all(&data);
}

/// `model` prints a model's layers with their shapes and parameters, from a preset or a model
/// file, and `train --model FILE` trains it; a file whose layer cannot take its input is
/// refused with the layer named; the simulator predicts its layers' ops.
#[test]
fn a_model_file_or_preset_is_summarised_and_trained() {
    let (code, stdout, stderr) = batchscope(&[
        "model",
        "--model",
        "mlp-layernorm",
        "--dataset",
        "iris",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    let kinds: Vec<&str> = summary["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["kind"].as_str().unwrap_or_default())
        .collect();
    let want = [
        "dense",
        "layer_norm",
        "gelu",
        "dense",
        "layer_norm",
        "gelu",
        "dense",
    ];
    assert_eq!(kinds, want);
    // Iris: 4 features, 3 classes; 4·64+64 + 2·64 + 64·64+64 + 2·64 + 64·3+3.
    assert_eq!(summary["parameters"], 4_931);
    let file = std::env::temp_dir().join(format!("batchscope-model-{}.toml", std::process::id()));
    let model = "[[layers]]\nkind = \"dense\"\nunits = 24\n\n[[layers]]\nkind = \"layer_norm\"\n\n\
                 [[layers]]\nkind = \"activation\"\nfunction = \"gelu\"\n";
    std::fs::write(&file, model).expect("write");
    let path = file.to_str().expect("UTF-8 path");
    let (code, stdout, stderr) = batchscope(&[
        "train", "--model", path, "--device", "cpu", "--steps", "300", "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"summary\":true"), "{stdout}");
    let bad = "[[layers]]\nkind = \"conv2d\"\nfilters = 4\nkernel = 3\n";
    std::fs::write(&file, bad).expect("write");
    let (code, _, stderr) = batchscope(&["train", "--model", path, "--steps", "5"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("Layer 1 of the model"), "{stderr}");
    std::fs::remove_file(&file).ok();
    // The simulator's op list reads the layers: LayerNorm's and GELU's own ops are predicted.
    let (code, stdout, stderr) = batchscope(&[
        "simulate",
        "--model",
        "mlp-layernorm",
        "--dataset",
        "iris",
        "--profile",
        "nvidia-t4",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let prediction: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
    let ops: Vec<&str> = prediction["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .map(|op| op["name"].as_str().unwrap_or_default())
        .collect();
    for name in [
        "layer 1 layer norm",
        "layer 2 gelu gradient",
        "layer 2 layer norm update weights and biases",
    ] {
        assert!(ops.contains(&name), "{name}: {ops:?}");
    }
}
