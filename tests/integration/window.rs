//! The real window under Xvfb: it opens, both columns train, and the boundary is drawn.
//!
//! Needs `xvfb-run` (Debian package `xvfb`). With `CI=true` its absence fails the test;
//! elsewhere the test says why it is skipped.

use std::process::Command;

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Whether `xvfb-run` is here (with `CI=true` its absence fails the test).
fn has_xvfb() -> bool {
    let has = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            !ci(),
            "CI=true and xvfb-run is missing: install the xvfb package"
        );
        eprintln!("skipping the window test: xvfb-run not found (sudo apt-get install xvfb)");
    }
    has
}

/// Runs the app in a virtual screen with `args` and the environment `env`, and returns the
/// summary it prints when it closes itself.
fn window(args: &[&str], env: &[(&str, &std::path::Path)]) -> serde_json::Value {
    // `timeout` ends a hung window, so a hang fails the test instead of stalling CI.
    let out = Command::new("timeout")
        .args(["120", "xvfb-run", "-a", "-s", "-screen 0 1400x900x24"])
        .arg(env!("CARGO_BIN_EXE_batchscope"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("xvfb-run runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the app failed ({:?}): {stderr}",
        out.status
    );
    stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no summary printed; stdout: {stdout}; stderr: {stderr}"))
}

#[test]
fn the_window_opens_and_both_columns_train() {
    if !has_xvfb() {
        return;
    }
    let ci = ci();
    let summary = window(&["--autorun", "--exit-after-secs", "15"], &[]);
    let columns = summary["columns"].as_array().expect("columns");
    let cpu = &columns[0];
    assert!(cpu["steps"].as_u64().expect("steps") > 0, "{summary}");
    assert_eq!(cpu["has_boundary"], true, "{summary}");
    let gpu = &columns[1];
    let gpu_ready = gpu["status"]
        .as_str()
        .is_some_and(|s| s.starts_with("ready"));
    if ci || gpu_ready {
        assert!(gpu_ready, "{summary}");
        assert!(gpu["steps"].as_u64().expect("steps") > 0, "{summary}");
        assert_eq!(gpu["has_boundary"], true, "{summary}");
    } else {
        eprintln!(
            "no GPU adapter: only the CPU column was checked ({})",
            gpu["status"]
        );
    }
}

/// A named pipe and an endless device given as the session file, kept as the GPU's kernel cache
/// and as the saved settings: the window says what each is, keeps working and closes when asked.
#[cfg(unix)]
#[test]
fn a_pipe_or_a_device_as_session_file_or_kernel_cache_is_named_and_the_window_closes() {
    if !has_xvfb() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("batchscope-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("batchscope")).expect("data folder");
    let cache = data.join("batchscope").join("gpu-kernels.json");
    let session = dir.join("class.batchscope");
    let settings = data.join("batchscope").join("app.ron");
    let fifo = |path: &std::path::Path| {
        let _ = std::fs::remove_file(path);
        let made = Command::new("mkfifo").arg(path).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {path:?}");
    };
    let device = |path: &std::path::Path| {
        let _ = std::fs::remove_file(path);
        std::os::unix::fs::symlink("/dev/zero", path).expect("symlink");
    };
    for (what, make) in [
        ("pipe", &fifo as &dyn Fn(&std::path::Path)),
        ("device", &device),
    ] {
        make(&cache);
        make(&session);
        make(&settings);
        let summary = window(
            &[session.to_str().expect("utf-8"), "--exit-after-secs", "10"],
            &[("XDG_DATA_HOME", &data)],
        );
        let notes = summary["notes"].to_string();
        assert!(
            notes.contains("class.batchscope") && notes.contains("not a regular file"),
            "{what}: {summary}"
        );
        assert!(notes.contains("app.ron"), "{what}: {summary}");
        let gpu = &summary["columns"][1];
        if gpu["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("ready"))
        {
            let tuning = gpu["tuning_notes"].to_string();
            assert!(
                tuning.contains("gpu-kernels.json") && tuning.contains("not a regular file"),
                "{what}: {summary}"
            );
        } else {
            assert!(!ci(), "{what}: with CI=true the GPU must start: {summary}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
