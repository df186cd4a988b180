//! The guided lessons run headless: `batchscope lessons --verify` on this machine's adapter and
//! without one. Every headline must be filled from this run's figures in both languages, and a
//! teacher's broken lesson file must be refused with its name and its mistake.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary; a run past `limit` is killed and fails the test, so a hang cannot stall CI.
fn batchscope(args: &[&str], limit: Duration) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("batchscope {args:?} did not finish in {limit:?}");
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
    assert_eq!(reports.len(), 10, "one report per shipped lesson");
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
    reports
}

#[test]
fn every_lesson_fills_its_headlines_on_this_machines_adapter() {
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
