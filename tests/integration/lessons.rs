//! The guided lessons run headless: `batchscope lessons --verify` on this machine's adapter and
//! without one. Every headline must be filled from this run's figures in both languages, and a
//! teacher's broken lesson file must be refused with its name and its mistake.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary; a run past `limit` is killed and fails the test, so a hang cannot stall CI.
/// Its output is read while it runs: a report larger than a pipe's buffer would otherwise
/// block the child on writing it.
fn batchscope(args: &[&str], limit: Duration) -> (i32, String, String) {
    use std::io::Read as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::Builder::new()
            .name("test-output".into())
            .spawn(move || {
                let mut text = Vec::new();
                let _ = pipe.read_to_end(&mut text);
                String::from_utf8_lossy(&text).into_owned()
            })
            .expect("a reader thread")
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("batchscope {args:?} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code().unwrap_or(-1),
        stdout.join().expect("stdout read"),
        stderr.join().expect("stderr read"),
    )
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn has_cjk(s: &str) -> bool {
    s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// Each lesson's report passed, and each headline is whole: no placeholder left, a number in
/// it, English in one and Chinese in the other, every simulated figure marked in both.
fn check_reports(stdout: &str) -> Vec<serde_json::Value> {
    let reports: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(
        reports.len(),
        batchscope::lesson::shipped::COUNT,
        "one report per shipped lesson"
    );
    for r in &reports {
        let id = &r["id"];
        assert_eq!(r["passed"], true, "{id}: {r}");
        let headlines: Vec<&serde_json::Value> = r["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .filter(|s| s["kind"] == "explain")
            .collect();
        assert!(!headlines.is_empty(), "{id}");
        for s in headlines {
            let en = s["headline"][0].as_str().expect("English");
            let zh = s["headline"][1].as_str().expect("Chinese");
            for text in [en, zh] {
                assert!(!text.contains('{') && !text.contains('}'), "{id}: {text}");
                assert!(text.chars().any(|c| c.is_ascii_digit()), "{id}: {text}");
            }
            assert!(!has_cjk(en) && has_cjk(zh), "{id}: {en} / {zh}");
            assert_eq!(
                en.matches("(simulated)").count(),
                zh.matches("（模拟）").count(),
                "{id}: {en} / {zh}"
            );
        }
    }
    for r in &reports {
        check_tries(r);
        check_probe_times(r);
    }
    reports
}

/// Every Try step reports each figure's change, its noise and the verdict, and the verdict
/// agrees with the two figures it names: a rise is never called on a fall, and a change
/// inside the noise is never called at all.
fn check_tries(r: &serde_json::Value) {
    let id = &r["id"];
    let tries = r["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter(|s| s["kind"] == "try");
    for s in tries {
        let tried = &s["tried"];
        let changes = tried["changes"]
            .as_array()
            .expect("a try reports its changes");
        assert!(
            !changes.is_empty() || !tried["missing"].as_array().expect("missing").is_empty(),
            "{id}: {s}"
        );
        for c in changes {
            let (before, after) = (
                c["before"]["value"].as_f64().expect("a number before"),
                c["after"]["value"].as_f64().expect("a number after"),
            );
            let noise = c["noise"].as_f64().expect("the noise");
            assert!(noise >= 0.0, "{id}: {c}");
            match c["moved"].as_str().expect("a verdict") {
                "rose" => assert!(after - before > noise, "{id}: {c}"),
                "fell" => assert!(before - after > noise, "{id}: {c}"),
                "too_close" => {}
                other => panic!("{id}: verdict {other}"),
            }
            if (after - before).abs() <= noise {
                assert_eq!(c["moved"], "too_close", "{id}: {c}");
            }
        }
    }
}

/// No probe keeps a class waiting: each probe, and each Try step's two measurements, ends
/// within 15 s on this machine's adapter (a software one included). A busy machine can move
/// these times; the limit leaves room for a 2-core CI runner.
fn check_probe_times(r: &serde_json::Value) {
    let id = &r["id"];
    for t in r["timings"].as_array().expect("probe times") {
        let seconds = t["seconds"].as_f64().expect("seconds");
        assert!(
            seconds < 15.0,
            "{id}: {} took {seconds:.1} s (a busy machine can slow it)",
            t["probe"]
        );
    }
}

#[test]
fn every_lesson_fills_its_headlines_on_this_machines_adapter() {
    // The probes time things for seconds each: alone in the binary.
    let _alone = crate::common::alone();
    let (code, stdout, stderr) =
        batchscope(&["lessons", "--verify", "--json"], Duration::from_secs(400));
    assert_eq!(code, 0, "{stderr}\n{stdout}");
    let reports = check_reports(&stdout);
    let gpu = &reports[0]["gpu"];
    if ci() {
        // CI installs lavapipe: the GPU parts really ran on it, named as a software adapter.
        assert_eq!(gpu, "software", "{stdout}");
    }
    if gpu == "software" {
        // Lesson 2 cannot show a GPU's throughput on a software adapter: its headline says so
        // and gives the simulator's prediction, marked simulated in both languages.
        let design = reports
            .iter()
            .find(|r| r["id"] == "design-goals")
            .expect("lesson 2");
        let step = design["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .find(|s| s["kind"] == "explain")
            .expect("explain");
        let en = step["headline"][0].as_str().expect("English");
        assert!(
            en.contains("software adapter") && en.contains("(simulated)"),
            "{en}"
        );
        assert!(design["figures"]["h100.samples_per_s"]["simulated"] == true);
        assert!(design["figures"]["latency.gpu.step_ms"]["simulated"] == false);
    }
}

#[test]
fn every_lesson_fills_its_headlines_without_a_gpu() {
    // The probes time things for seconds each: alone in the binary.
    let _alone = crate::common::alone();
    let (code, stdout, stderr) = batchscope(
        &["lessons", "--verify", "--json", "--no-gpu"],
        Duration::from_secs(200),
    );
    assert_eq!(code, 0, "{stderr}\n{stdout}");
    for r in check_reports(&stdout) {
        assert_eq!(r["gpu"], "none");
        // Nothing was measured on a GPU that was not there.
        let figures = r["figures"].as_object().expect("figures");
        assert!(figures.keys().all(|k| !k.contains(".gpu.")), "{figures:?}");
    }
}

#[test]
fn a_teachers_lesson_file_is_read_and_a_broken_one_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("batchscope-lessons-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = dir.join("mine.toml");
    let text = r#"
id = "mine"
section = 4
title = { en = "My lesson", zh = "我的课" }
summary = { en = "Batch 8 on the CPU.", zh = "在 CPU 上用批大小 8。" }
[preset]
dataset = "moons"
batch = 8
devices = "cpu"
[[probes]]
kind = "speed"
[[steps]]
kind = "explain"
text = { en = "Measured:", zh = "实测：" }
[[steps.headlines]]
en = "The CPU took {speed.cpu.step_ms} a step."
zh = "CPU 每步 {speed.cpu.step_ms}。"
"#;
    std::fs::write(&good, text).expect("write");
    let path = good.to_str().expect("utf-8 path");
    let (code, stdout, stderr) = batchscope(&["lessons", "--file", path], Duration::from_secs(60));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("mine") && stdout.contains("我的课"),
        "{stdout}"
    );
    let (code, stdout, stderr) = batchscope(
        &["lessons", "--file", path, "--verify"],
        Duration::from_secs(60),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("The CPU took ") && stdout.contains("passed"),
        "{stdout}"
    );

    let broken = dir.join("broken.toml");
    std::fs::write(
        &broken,
        text.replace("speed.cpu.step_ms}。", "speed.cpu.stepms}。"),
    )
    .expect("write");
    let (code, _, stderr) = batchscope(
        &["lessons", "--file", broken.to_str().expect("utf-8 path")],
        Duration::from_secs(60),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("broken.toml") && stderr.contains("speed.cpu.stepms"),
        "{stderr}"
    );
    // Not a lesson at all: a binary blob of the right name.
    std::fs::write(&broken, [0u8, 159, 146, 150, 255, 0, 1]).expect("write");
    let (code, _, stderr) = batchscope(
        &["lessons", "--file", broken.to_str().expect("utf-8 path")],
        Duration::from_secs(60),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("broken.toml"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
