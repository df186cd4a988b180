//! Memory as it really is: the bytes of every role on both devices, the estimator against them,
//! the GPU's caching pool, the budget's out-of-memory error, and the leak lesson.

use crate::common;

use std::process::Command;

use batchscope::backend::prelude::*;
use batchscope::backend::{Backend, BackendError};
use batchscope::data::source::DataSource;
use batchscope::device::Device;
use batchscope::memory::Role;
use batchscope::nn::OptimizerKind;
use batchscope::precision::Precision;
use batchscope::sim::estimate;
use batchscope::train::{Pipeline, Runner, Session, TrainConfig, eval_rows};

fn mnist(batch: usize, optimizer: OptimizerKind) -> TrainConfig {
    TrainConfig {
        source: DataSource::Shipped("mnist".into()),
        hidden: vec![128],
        optimizer,
        batch,
        pipeline: Pipeline {
            record: false,
            ..Pipeline::default()
        },
        ..TrainConfig::default()
    }
}

/// MLP 784,128,10 with Adam in FP32: the parameters are 4 × 101,770 bytes, the gradients the
/// same, Adam's moments twice that; activations grow linearly with the batch.
fn roles_of_the_mnist_mlp(backend: &mut dyn Backend) {
    let session = Session::new(mnist(32, OptimizerKind::Adam)).expect("valid");
    assert_eq!(
        session.config.model_spec(&session.data).layers,
        [784, 128, 10]
    );
    let runner = Runner::new(backend, &session).expect("fits");
    let m = backend.memory();
    assert_eq!(m.role(Role::Parameters), 4 * 101_770);
    assert_eq!(m.role(Role::Gradients), 4 * 101_770);
    assert_eq!(m.role(Role::OptimizerState), 2 * 4 * 101_770);
    let at_32 = m.role(Role::Activations);
    assert_eq!(at_32, 32 * (128 + 10) * 4);
    drop(runner);
    let session = Session::new(mnist(64, OptimizerKind::Adam)).expect("valid");
    let _runner = Runner::new(backend, &session).expect("fits");
    let m = backend.memory();
    assert_eq!(
        m.role(Role::Activations),
        2 * at_32,
        "twice the batch, twice the activations"
    );
    assert_eq!(
        m.role(Role::Parameters),
        4 * 101_770,
        "parameters do not grow"
    );
}

/// The estimator's figures equal the measured ones, role by role, for three models.
fn the_estimator_predicts_what_is_allocated(backend: &mut dyn Backend) {
    let cases = [
        mnist(64, OptimizerKind::Adam),
        TrainConfig {
            hidden: vec![16, 16],
            optimizer: OptimizerKind::Sgd,
            batch: 8,
            ..mnist(8, OptimizerKind::Sgd)
        },
        TrainConfig {
            source: DataSource::Shipped("autompg".into()),
            hidden: vec![32],
            optimizer: OptimizerKind::Momentum,
            batch: 16,
            ..mnist(16, OptimizerKind::Momentum)
        },
    ];
    let precisions = [
        Precision::Fp32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Mixed,
    ];
    for (config, precision) in cases
        .into_iter()
        .flat_map(|c| precisions.map(|p| (c.clone(), p)))
    {
        let config = TrainConfig {
            precision,
            ..config
        };
        let session = Session::new(config).expect("valid");
        let spec = session.config.model_spec(&session.data);
        let c = &session.config;
        let rows = eval_rows(&session.data);
        let e = estimate::network(&spec, c.optimizer, c.batch, c.precision, rows);
        let runner = Runner::new(backend, &session).expect("fits");
        let m = backend.memory();
        for line in &e.lines {
            let measured = m.role(line.role) as f64;
            let off = (line.bytes as f64 - measured).abs() / measured.max(1.0);
            assert!(
                off <= 0.05,
                "{:?} {precision:?} {}: estimated {} measured {measured} ({})",
                spec.layers,
                line.role.as_str(),
                line.bytes,
                line.formula
            );
        }
        drop(runner);
    }
}

/// FP16 and BF16 store parameters, gradients, optimizer state and activations in half the
/// bytes of FP32; mixed precision halves the activations but keeps FP32 masters, gradients and
/// optimizer state and adds FP16 copies of the weights (parameters: 1.5 times FP32's).
fn sixteen_bit_storage_halves_the_bytes(backend: &mut dyn Backend) {
    let roles = [
        Role::Parameters,
        Role::Gradients,
        Role::OptimizerState,
        Role::Activations,
    ];
    let mut bytes = |precision| {
        let config = TrainConfig {
            precision,
            ..mnist(32, OptimizerKind::Adam)
        };
        let session = Session::new(config).expect("valid");
        let mut runner = Runner::new(backend, &session).expect("fits");
        // A step through every op, then the figures (nothing more is allocated).
        runner.step(backend, true).expect("step");
        let m = backend.memory();
        drop(runner);
        roles.map(|r| m.role(r))
    };
    let fp32 = bytes(Precision::Fp32);
    assert_eq!(fp32, [407_080, 407_080, 814_160, 32 * 138 * 4]);
    for precision in [Precision::Fp16, Precision::Bf16] {
        assert_eq!(
            bytes(precision),
            fp32.map(|b| b / 2),
            "{precision:?}: every role in half the bytes"
        );
    }
    let [params, grads, state, activations] = bytes(Precision::Mixed);
    assert_eq!(
        params,
        fp32[0] + fp32[0] / 2,
        "FP32 masters plus FP16 copies"
    );
    assert_eq!(
        (grads, state),
        (fp32[1], fp32[2]),
        "FP32 gradients and Adam"
    );
    assert_eq!(activations, fp32[3] / 2, "FP16 activations");
}

/// A 16-bit tensor stores the `half` crate's bits on both devices: written from the host,
/// converted from f32 on the device (the GPU's narrowing kernel), and read back, for the sweep
/// of values (odd lengths leave half a word unused on the GPU).
fn sixteen_bit_tensors_hold_the_half_crates_bits(backend: &mut dyn Backend) {
    use batchscope::precision::DType;
    let mut values = vec![
        0.0, -0.0, 1.0, 65504.0, 65520.0, -1e6, 6.1e-5, 5.96e-8, 2.98e-8, 1e-9, 3.4e38, 1e-40,
    ];
    values.extend((0..1001).map(|i| (i as f32 - 500.0) * 1.37e-3));
    values.push(f32::NAN);
    for dtype in [DType::F16, DType::Bf16] {
        let format = dtype.half().expect("16-bit");
        let want: Vec<u32> = values.iter().map(|&v| format.round(v).to_bits()).collect();
        let shape = (1, values.len());
        let mut direct = backend
            .alloc_as(Role::Workspace, "direct", shape, dtype)
            .expect("alloc");
        backend.write(&mut direct, &values).expect("write");
        let mut wide = backend.zeros("wide", 1, values.len()).expect("alloc");
        backend.write(&mut wide, &values).expect("write");
        let mut narrowed = backend
            .alloc_as(Role::Workspace, "narrowed", shape, dtype)
            .expect("alloc");
        backend.copy(&wide, &mut narrowed).expect("narrow");
        let mut back = backend.zeros("back", 1, values.len()).expect("alloc");
        backend.copy(&narrowed, &mut back).expect("widen");
        for (name, t) in [
            ("written", &direct),
            ("narrowed", &narrowed),
            ("widened", &back),
        ] {
            let got: Vec<u32> = backend
                .read(t)
                .expect("read")
                .iter()
                .map(|v| {
                    if v.is_nan() {
                        f32::NAN.to_bits()
                    } else {
                        v.to_bits()
                    }
                })
                .collect();
            let want: Vec<u32> = want
                .iter()
                .map(|&b| {
                    if f32::from_bits(b).is_nan() {
                        f32::NAN.to_bits()
                    } else {
                        b
                    }
                })
                .collect();
            assert_eq!(got, want, "{dtype:?} {name}");
        }
        assert_eq!(direct.size_in_bytes(), 2 * values.len());
        // What the two roundings (the upload, the narrowing copy) lost was counted, the same on
        // both devices: the GPU's kernel counts as the host does.
        let census = backend.take_rounding_census().expect("census");
        let lost = census.role(Role::Workspace);
        let finite: Vec<f32> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v != 0.0)
            .collect();
        let to_zero = finite.iter().filter(|&&v| format.round(v) == 0.0).count() as u64;
        let to_inf = finite
            .iter()
            .filter(|&&v| format.round(v).is_infinite())
            .count() as u64;
        assert_eq!(
            (lost.values, lost.nonzero, lost.underflow, lost.overflow),
            (
                2 * values.len() as u64,
                2 * finite.len() as u64,
                2 * to_zero,
                2 * to_inf
            ),
            "{dtype:?}"
        );
        if dtype == DType::F16 {
            assert!(to_zero > 0 && to_inf > 0, "the values probe both losses");
        }
    }
}

/// Without the leak setting, memory is flat after the first step; with it, it grows each step,
/// and turning it off gives the memory back.
fn keeping_each_steps_graph_leaks_until_turned_off(backend: &mut dyn Backend) {
    let mut config = mnist(16, OptimizerKind::Adam);
    config.hidden = vec![32];
    let session = Session::new(config).expect("valid");
    let mut runner = Runner::new(backend, &session).expect("fits");
    runner.step(backend, true).expect("step");
    let after_first = backend.memory().allocated_bytes;
    for _ in 0..5 {
        runner.step(backend, true).expect("step");
        assert_eq!(
            backend.memory().allocated_bytes,
            after_first,
            "flat without the leak"
        );
    }
    let mut pipeline = runner.pipeline();
    pipeline.keep_graphs = true;
    runner.set_pipeline(backend, pipeline).expect("set");
    let mut last = backend.memory().role(Role::Activations);
    for _ in 0..5 {
        runner.step(backend, true).expect("step");
        let now = backend.memory().role(Role::Activations);
        // Each step keeps 16 × (32 + 10) more values.
        assert_eq!(now - last, 16 * 42 * 4);
        last = now;
    }
    assert_eq!(runner.kept_tensors(), 10);
    pipeline.keep_graphs = false;
    runner.set_pipeline(backend, pipeline).expect("set");
    assert_eq!(backend.memory().allocated_bytes, after_first, "freed");
}

/// With the leak on and a budget, a run reaches the out-of-memory error; nothing panics and the
/// message says what was asked for and what to do.
fn the_leak_runs_out_of_a_budget(backend: &mut dyn Backend) {
    let device = backend.device();
    let mut config = mnist(16, OptimizerKind::Sgd);
    config.hidden = vec![32];
    config.pipeline.keep_graphs = true;
    let budget = 8 << 20;
    config.pipeline.vram_budget_bytes = Some(budget);
    config.pipeline.host_budget_bytes = Some(budget);
    let session = Session::new(config).expect("valid");
    let mut runner = Runner::new(backend, &session).expect("fits at first");
    let mut steps = 0;
    let error = loop {
        match runner.step(backend, false) {
            Ok(_) => steps += 1,
            Err(e) => break e,
        }
        assert!(steps < 100_000, "never ran out");
    };
    let BackendError::OutOfMemory(oom) = &error else {
        panic!("expected out of memory, got {error}");
    };
    assert_eq!(oom.device, device);
    assert_eq!(oom.role, Role::Activations);
    assert_eq!(oom.budget_bytes, budget);
    assert!(oom.label.contains("(kept)"));
    let text = error.to_string();
    assert!(text.contains("out of memory: tried to allocate"), "{text}");
    assert!(text.contains("keep every step's"), "{text}");
    assert!(steps > 10, "it ran {steps} steps first");
}

/// A budget smaller than the model: the model itself does not fit.
fn a_budget_below_the_model_is_refused(backend: &mut dyn Backend) {
    let mut config = mnist(64, OptimizerKind::Adam);
    config.pipeline.vram_budget_bytes = Some(1 << 20);
    config.pipeline.host_budget_bytes = Some(1 << 20);
    let session = Session::new(config).expect("valid");
    let error = Runner::new(backend, &session).err().expect("does not fit");
    assert!(matches!(error, BackendError::OutOfMemory(_)), "{error}");
    assert!(
        error.to_string().contains("the budget is 1.0 MiB"),
        "{error}"
    );
    // The device stays usable: without the budget the same model fits.
    let session = Session::new(mnist(64, OptimizerKind::Adam)).expect("valid");
    assert!(Runner::new(backend, &session).is_ok());
}

on_both_devices! {
    roles => super::roles_of_the_mnist_mlp;
    estimator => super::the_estimator_predicts_what_is_allocated;
    sixteen_bit_storage => super::sixteen_bit_storage_halves_the_bytes;
    sixteen_bit_bits => super::sixteen_bit_tensors_hold_the_half_crates_bits;
    leak => super::keeping_each_steps_graph_leaks_until_turned_off;
    leak_to_oom => super::the_leak_runs_out_of_a_budget;
    budget_below_the_model => super::a_budget_below_the_model_is_refused;
}

#[test]
fn the_gpu_pool_caches_freed_buffers_until_released() {
    let Some(mut gpu) = common::gpu() else { return };
    let session = Session::new(mnist(32, OptimizerKind::Adam)).expect("valid");
    let before = gpu.memory();
    let runner = Runner::new(&mut gpu, &session).expect("fits");
    let live = gpu.memory();
    assert!(live.allocated_bytes > before.allocated_bytes);
    drop(runner);
    let cached = gpu.memory();
    // The tensors are gone, their buffers are not: allocated falls back, reserved stays.
    assert_eq!(cached.allocated_bytes, before.allocated_bytes);
    assert_eq!(cached.reserved_bytes, live.reserved_bytes);
    assert_eq!(cached.role(Role::Parameters), 0);
    // The same model again reuses them: nothing more is reserved.
    let runner = Runner::new(&mut gpu, &session).expect("fits");
    assert_eq!(gpu.memory().reserved_bytes, live.reserved_bytes);
    assert_eq!(gpu.device(), Device::Gpu);
    drop(runner);
    gpu.release_cached().expect("release");
    let released = gpu.memory();
    assert_eq!(released.reserved_bytes, released.allocated_bytes);
    assert!(released.peak_reserved_bytes >= live.reserved_bytes);
}

#[test]
fn headless_out_of_memory_is_exit_code_2_with_the_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args([
            "train",
            "--dataset",
            "mnist",
            "--layers",
            "784,128,10",
            "--batch",
            "64",
            "--steps",
            "3",
            "--device",
            "cpu",
            "--host-budget",
            "2MiB",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    // The error goes to standard error, so that a pipe of the results sees only results.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("error: cpu: CPU out of memory: tried to allocate"),
        "{stderr}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args(["train", "--device", "cpu", "--host-budget", "lots"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--host-budget `lots`"));
}

#[test]
fn memory_prints_measured_and_estimated_bytes_per_role() {
    let output = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args([
            "memory",
            "--dataset",
            "mnist",
            "--layers",
            "784,128,10",
            "--batch",
            "64",
            "--device",
            "cpu",
            "--json",
        ])
        .output()
        .expect("runs");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first: serde_json::Value =
        serde_json::from_str(stdout.lines().next().unwrap_or_default()).expect("JSON");
    let params = &first["roles"]["parameters"];
    assert_eq!(params["measured_bytes"], 407_080);
    assert_eq!(params["estimated_bytes"], 407_080);
    assert_eq!(first["roles"]["optimizer_state"]["measured_bytes"], 814_160);
    // The large models come after, each labelled as estimated.
    let presets: Vec<serde_json::Value> = stdout
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(presets.len(), 6);
    assert!(presets.iter().all(|p| p["estimated"] == true));
}
