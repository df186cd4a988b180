//! Training end to end: the two devices agree step by step, and both learn the spiral.

use crate::common;

use batchscope::backend::prelude::*;
use batchscope::backend::{Activation, BackendError};
use batchscope::data::dataloader::Augment;
use batchscope::data::{DatasetSpec, Synthetic};
use batchscope::device::Device;
use batchscope::nn::OptimizerKind;
use batchscope::train::{Pipeline, Runner, Session, StepLog, TrainConfig};

fn spiral_config() -> TrainConfig {
    TrainConfig {
        data: DatasetSpec {
            kind: Synthetic::Spiral,
            classes: 3,
            ..DatasetSpec::default()
        },
        source: batchscope::data::source::DataSource::Generated,
        conv: Vec::new(),
        conv_kernel: 3,
        hidden: vec![16, 16],
        model: None,
        activation: Activation::Relu,
        optimizer: OptimizerKind::Adam,
        lr: 0.01,
        batch: 32,
        accumulate: 1,
        checkpoint: 0,
        seed: 1,
        augment: Augment::default(),
        precision: batchscope::precision::Precision::Fp32,
        loss_weight: 1.0,
        // These tests are about the numbers: nothing is recorded.
        pipeline: Pipeline {
            record: false,
            ..Pipeline::default()
        },
    }
}

/// Trains `steps` steps, logging every step (each log reads the loss back).
fn logged_run(
    backend: &mut dyn Backend,
    session: &Session,
    steps: usize,
) -> (Vec<StepLog>, Runner) {
    let mut runner = Runner::new(backend, session).expect("model fits");
    let logs = (0..steps)
        .map(|_| {
            runner.step(backend, false).expect("step");
            runner.log(backend).expect("log")
        })
        .collect();
    (logs, runner)
}

#[test]
fn cpu_and_gpu_losses_agree_at_every_step_in_fp32() {
    let Some(mut gpu) = common::gpu() else { return };
    let mut cpu = common::cpu();
    let session = Session::new(spiral_config()).expect("valid config");
    assert_eq!(
        session.config.model_spec(&session.data).layers,
        vec![2, 16, 16, 3]
    );
    let (cpu_logs, _) = logged_run(&mut cpu, &session, 200);
    let (gpu_logs, _) = logged_run(&mut gpu, &session, 200);
    assert_eq!(cpu_logs.len(), 200);
    for (c, g) in cpu_logs.iter().zip(&gpu_logs) {
        assert_eq!((c.device, g.device), (Device::Cpu, Device::Gpu));
        assert_eq!(c.step, g.step);
        let rel = ((c.loss - g.loss) / c.loss).abs();
        assert!(
            rel <= 1e-4,
            "step {}: cpu loss {} vs gpu loss {} (relative {rel:e})",
            c.step,
            c.loss,
            g.loss
        );
        assert_eq!(c.accuracy, g.accuracy, "step {}", c.step);
    }
    // The loss really moved: agreement of two flat lines would prove nothing.
    assert!(cpu_logs[199].loss < 0.5 * cpu_logs[0].loss);
}

fn reaches_95_percent(backend: &mut dyn Backend) {
    let session = Session::new(spiral_config()).expect("valid config");
    let mut runner = Runner::new(backend, &session).expect("model fits");
    for _ in 0..600 {
        runner.step(backend, false).expect("step");
    }
    let eval = runner.evaluate(backend).expect("eval");
    assert!(
        eval.train.accuracy.unwrap_or(0.0) > 0.95,
        "{:?} train accuracy {}",
        backend.device(),
        eval.train.accuracy.unwrap_or(0.0)
    );
    assert!(
        eval.test.accuracy.unwrap_or(0.0) > 0.9,
        "{:?} test accuracy {}",
        backend.device(),
        eval.test.accuracy.unwrap_or(0.0)
    );
    // The boundary grid covers the data and predicts every class somewhere.
    let grid = runner
        .boundary(backend, 32)
        .expect("grid")
        .expect("2-D data");
    assert_eq!(grid.class.len(), 32 * 32);
    for c in 0..3u8 {
        assert!(grid.class.contains(&c), "class {c} never predicted");
    }
}

on_both_devices! {
    spiral_reaches_95_percent => super::reaches_95_percent;
}

#[test]
fn tensors_of_two_devices_in_one_op_fail_with_a_clear_error() {
    let Some(mut gpu) = common::gpu() else { return };
    let mut cpu = common::cpu();
    let x_on_cpu = cpu.zeros("input", 4, 2).expect("alloc");
    let w = gpu.zeros("weight", 2, 3).expect("alloc");
    let b = gpu.zeros("bias", 1, 3).expect("alloc");
    let mut out = gpu.zeros("out", 4, 3).expect("alloc");
    let err = gpu
        .linear_forward(&x_on_cpu, &w, &b, Activation::Relu, &mut out)
        .expect_err("mixed devices");
    assert!(matches!(
        err,
        BackendError::DeviceMismatch {
            expected: Device::Gpu,
            found: Device::Cpu,
            ..
        }
    ));
    assert!(
        err.to_string()
            .starts_with("expected all tensors on the same device, found gpu and cpu"),
        "{err}"
    );
    // And the other way round.
    let err = cpu
        .linear_forward(&x_on_cpu, &w, &b, Activation::Relu, &mut out)
        .expect_err("mixed");
    assert!(err.to_string().contains("found cpu and gpu"), "{err}");
}

#[test]
fn kernel_times_come_from_gpu_timestamps() {
    let Some(mut gpu) = common::gpu() else { return };
    if !gpu.adapter().timestamps {
        eprintln!("adapter has no timestamp queries; nothing to check");
        return;
    }
    let session = Session::new(spiral_config()).expect("valid config");
    let mut runner = Runner::new(&mut gpu, &session).expect("model fits");
    let (synced, times) = runner.timed_step(&mut gpu, true).expect("step");
    assert!(synced, "a step timed for the display reads the loss");
    let times = times.expect("timestamps");
    // Forward (3 layers), loss, backward (3 weight grads, 3 bias grads, 2 input grads),
    // and the Adam updates of 6 tensors: each layer's two in one dispatch where the adapter
    // binds eight storage buffers (every WebGPU adapter), else one each.
    let names: Vec<&str> = times.kernels.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names.iter().filter(|n| **n == "linear_forward").count(),
        3,
        "{names:?}"
    );
    let updates = if gpu.kernel_sizes().paired_updates {
        3
    } else {
        6
    };
    assert_eq!(
        names.iter().filter(|n| **n == "adam_step").count(),
        updates,
        "{names:?}"
    );
    assert_eq!(
        times.total_ns,
        times.kernels.iter().map(|(_, ns)| ns).sum::<u64>()
    );
}

#[test]
fn settings_out_of_range_are_refused_with_the_limit() {
    let mut config = spiral_config();
    config.batch = 5000;
    let err = Session::new(config)
        .expect_err("batch larger than the data")
        .to_string();
    assert!(
        err.contains("batch size 5000") && err.contains("720"),
        "{err}"
    );
    let mut config = spiral_config();
    config.lr = f32::NAN;
    assert!(
        Session::new(config)
            .expect_err("NaN")
            .to_string()
            .contains("learning rate")
    );
}

#[test]
fn the_small_workgroups_of_weaker_adapters_compute_the_same() {
    use batchscope::backend::KernelSizes;
    use batchscope::backend::gpu::GpuBackend;
    if common::gpu().is_none() {
        return;
    }
    let small = KernelSizes {
        matmul_tile: 8,
        elementwise: 64,
        column_sum: 32,
        matmul: batchscope::backend::MatmulChoice::OnePerInvocation,
        split_k: true,
        // Each tensor updated by a dispatch of its own, as where eight storage buffers
        // cannot be bound.
        paired_updates: false,
    };
    let mut gpu = GpuBackend::with_sizes(Some(small)).expect("the adapter opened a moment ago");
    assert_eq!(gpu.kernel_sizes(), small);
    let mut cpu = common::cpu();
    // An MLP, and a CNN whose convolutions run the 8 × 8 one-output kernel reading patches
    // (momentum: see tests/cnn.rs for why not Adam in a parity test).
    let cnn = TrainConfig {
        source: batchscope::data::source::DataSource::Shipped("digits".into()),
        conv: vec![4, 8],
        hidden: Vec::new(),
        optimizer: OptimizerKind::Momentum,
        batch: 16,
        ..spiral_config()
    };
    for config in [spiral_config(), cnn] {
        let session = Session::new(config).expect("valid config");
        let (cpu_logs, _) = logged_run(&mut cpu, &session, 50);
        let (gpu_logs, _) = logged_run(&mut gpu, &session, 50);
        for (c, g) in cpu_logs.iter().zip(&gpu_logs) {
            let rel = ((c.loss - g.loss) / c.loss).abs();
            assert!(
                rel <= 1e-4,
                "{}: step {}: cpu {} vs gpu {} with small workgroups",
                session.data.name,
                c.step,
                c.loss,
                g.loss
            );
        }
    }
}

/// A learning rate far too high: the loss overflows, the run stops with an explanation that
/// names the learning rate, and nothing panics.
fn too_high_a_learning_rate_diverges_with_an_explanation(backend: &mut dyn Backend) {
    let config = TrainConfig {
        source: batchscope::data::source::DataSource::Shipped("autompg".into()),
        optimizer: OptimizerKind::Sgd,
        lr: 10.0,
        batch: 16,
        ..spiral_config()
    };
    let session = Session::new(config).expect("valid settings");
    let mut runner = Runner::new(backend, &session).expect("model fits");
    let error = (0..2000)
        .find_map(|_| runner.step(backend, true).err())
        .expect("the loss overflows");
    let BackendError::Diverged { loss, lr, .. } = error else {
        panic!("expected divergence, got {error}");
    };
    assert!(!loss.is_finite());
    assert_eq!(lr, 10.0);
    let text = error.to_string();
    assert!(
        text.contains("learning rate too high") && text.contains("(10)"),
        "{text}"
    );
}

/// Pure FP16 with Adam diverges on MNIST at a learning rate that mixed precision trains with:
/// the explanation blames FP16's range, not the learning rate, and names the way out.
fn pure_fp16_with_adam_diverges_and_says_why(backend: &mut dyn Backend) {
    let run = |precision, backend: &mut dyn Backend| {
        let config = TrainConfig {
            source: batchscope::data::source::DataSource::Shipped("mnist".into()),
            optimizer: OptimizerKind::Adam,
            lr: 0.001,
            precision,
            ..TrainConfig::default()
        };
        let session = Session::new(config).expect("valid settings");
        let mut runner = Runner::new(backend, &session).expect("model fits");
        (0..200).find_map(|_| runner.step(backend, true).err())
    };
    let mixed = run(batchscope::precision::Precision::Mixed, backend);
    assert!(mixed.is_none(), "mixed precision trains: {mixed:?}");
    let error = run(batchscope::precision::Precision::Fp16, backend).expect("FP16 diverges");
    let BackendError::Diverged { fp16_adam, .. } = error else {
        panic!("expected divergence, got {error}");
    };
    assert!(fp16_adam);
    let text = error.to_string();
    assert!(
        text.contains("not the learning rate (0.001) but FP16's range")
            && text.contains("mixed precision"),
        "{text}"
    );
}

on_both_devices! {
    divergence => super::too_high_a_learning_rate_diverges_with_an_explanation;
    pure_fp16_adam_divergence => super::pure_fp16_with_adam_diverges_and_says_why;
}

/// Kernel timing is sampled (one sync window in 16 on a software adapter), so most logged
/// intervals time no step; once one step has been timed, every log still reports the latest timed
/// step's kernel time ("GPU kernels (last timed step)" never falls back to "no step timed yet").
#[test]
fn once_a_step_is_timed_every_log_reports_a_kernel_time() {
    let Some(mut gpu) = common::gpu() else { return };
    if !gpu.adapter().timestamps {
        eprintln!("adapter has no timestamp queries; nothing to check");
        return;
    }
    for record in [true, false] {
        let mut config = spiral_config();
        config.pipeline.record = record;
        config.pipeline.kernel_timing_every = 16;
        let session = Session::new(config).expect("valid config");
        let mut runner = Runner::new(&mut gpu, &session).expect("model fits");
        let mut timed = 0;
        for interval in 0..40 {
            for _ in 0..3 {
                runner.step(&mut gpu, false).expect("step");
            }
            assert!(
                runner.step(&mut gpu, true).expect("step"),
                "a shown step syncs"
            );
            drop(runner.take_trace(&mut gpu));
            let log = runner.log(&mut gpu).expect("log");
            if timed > 0 {
                assert!(
                    log.kernel_time_ms.is_some(),
                    "recording {record}: interval {interval}, {timed} timed before"
                );
            }
            timed += usize::from(log.kernel_time_ms.is_some());
        }
        assert!(timed > 0, "recording {record}: no step was ever timed");
    }
}

/// The kernels of one timed step, as the log reports them, on `b` (up to 40 logged intervals:
/// the GPU's timing is sampled).
fn timed_labels(b: &mut dyn Backend) -> Option<Vec<String>> {
    let mut config = spiral_config();
    config.pipeline.kernel_timing_every = 1;
    let session = Session::new(config).expect("valid config");
    let mut runner = Runner::new(b, &session).expect("model fits");
    for _ in 0..40 {
        runner.step(b, false).expect("step");
        runner.step(b, true).expect("step");
        let log = runner.log(b).expect("log");
        if let Some(k) = log.kernels {
            let mut labels: Vec<String> = k.kernels.into_iter().map(|(l, _)| l).collect();
            labels.sort();
            return Some(labels);
        }
    }
    None
}

/// Both devices time the same step's ops under the same labels, and every label has its kind:
/// the journey's grouping by kind of op compares like with like.
#[test]
fn both_devices_time_the_ops_of_a_step_under_the_same_labels() {
    use batchscope::sim::groups::OpGroup;
    let cpu = timed_labels(&mut common::cpu()).expect("the CPU times the ops of a shown step");
    assert!(cpu.iter().any(|l| l == "linear_forward"), "{cpu:?}");
    assert!(cpu.iter().any(|l| l == "adam_step"), "{cpu:?}");
    for label in &cpu {
        assert_ne!(OpGroup::of_kernel(label), OpGroup::Other, "{label}");
    }
    let Some(mut gpu) = common::gpu() else { return };
    if !gpu.adapter().timestamps {
        eprintln!("adapter has no timestamp queries; the CPU's labels only");
        return;
    }
    let paired = gpu.kernel_sizes().paired_updates;
    let gpu_labels = timed_labels(&mut gpu).expect("the GPU times a step within 40 logs");
    // The same labels; where the GPU updates each layer's weights and biases in one dispatch,
    // half as many updates.
    let (cpu_ops, cpu_updates) = split_updates(&cpu);
    let (gpu_ops, gpu_updates) = split_updates(&gpu_labels);
    assert_eq!(cpu_ops, gpu_ops);
    assert!(gpu_updates > 0, "{gpu_labels:?}");
    let per_dispatch = if paired { 2 } else { 1 };
    assert_eq!(
        cpu_updates,
        per_dispatch * gpu_updates,
        "{cpu:?} {gpu_labels:?}"
    );
}

/// `labels` without the optimizer updates, and how many updates there were.
fn split_updates(labels: &[String]) -> (Vec<&String>, usize) {
    use batchscope::sim::groups::OpGroup;
    let update = |l: &&String| OpGroup::of_kernel(l) == OpGroup::Optimizer;
    let ops = labels.iter().filter(|l| !update(l)).collect();
    (ops, labels.iter().filter(update).count())
}
