//! Every GPU matrix-product kernel variant against an f64 reference (as the dense layers' and
//! as the convolutions' products, which read their patches from the images), and against the
//! CPU over a short training run, whichever the adapter would choose; and the tuning that
//! chooses among them. On lavapipe in CI; on a real GPU through `scripts/gpu-check.sh`.

use crate::common;

use batchscope::backend::gpu::GpuBackend;
use batchscope::backend::gpu::tuning::{TuningCache, apply_or_tune, tuning_key};
use batchscope::backend::{Activation, Backend, ConvShape, MatmulChoice, MatmulTuning};
use batchscope::train::{Runner, Session, TrainConfig};
use common::reference::dense64;
use common::{Rng64, act64, assert_close, upload};

/// The GPU with its large products forced to `choice`, or `None` without an adapter or where
/// this adapter cannot run the variant (said on stderr).
fn gpu_with(choice: MatmulChoice) -> Option<GpuBackend> {
    let mut gpu = common::gpu()?;
    if !gpu.matmul_variants().contains(&choice) {
        eprintln!("this adapter cannot run {}: not tested", choice.as_str());
        return None;
    }
    gpu.set_matmul(choice).expect("a variant it runs");
    assert_eq!(gpu.kernel_sizes().matmul, choice);
    Some(gpu)
}

/// The three products of a dense layer on `(rows, fan_in, fan_out)` with `act`: forward with
/// bias and activation, weight gradient (`xᵀ · dz`), input gradient (`dz · wᵀ ⊙ act'`).
fn products_case(b: &mut dyn Backend, (rows, fan_in, fan_out): (usize, usize, usize)) {
    let act = Activation::Tanh;
    let mut rng = Rng64::new((rows * 7 + fan_in * 3 + fan_out) as u64);
    let x = rng.vec(rows * fan_in, 1.0);
    let w = rng.vec(fan_in * fan_out, 0.5);
    let bias = rng.vec(fan_out, 0.3);
    let dz = rng.vec(rows * fan_out, 1.0);
    // `a_prev` as the previous layer's tanh output, so act' means something.
    let a_prev: Vec<f64> = x.iter().map(|v| v.tanh()).collect();
    let name = format!("{rows}x{fan_in}x{fan_out}");

    let tx = upload(b, "x", rows, fan_in, &x);
    let tw = upload(b, "w", fan_in, fan_out, &w);
    let tb = upload(b, "b", 1, fan_out, &bias);
    let tdz = upload(b, "dz", rows, fan_out, &dz);
    let ta = upload(b, "a_prev", rows, fan_in, &a_prev);
    let mut out = b.zeros("out", rows, fan_out).expect("alloc");
    let mut dw = b.zeros("dw", fan_in, fan_out).expect("alloc");
    let mut db = b.zeros("db", 1, fan_out).expect("alloc");
    let mut dx = b.zeros("dx", rows, fan_in).expect("alloc");
    b.linear_forward(&tx, &tw, &tb, act, &mut out)
        .expect("forward");
    b.linear_backward_params(&tx, &tdz, &mut dw, &mut db)
        .expect("params");
    b.linear_backward_input(&tdz, &tw, &ta, act, &mut dx)
        .expect("input");

    let want_out: Vec<f64> = dense64(&x, &w, &bias, fan_in, fan_out)
        .into_iter()
        .map(|z| act64(act, z))
        .collect();
    let mut want_dw = vec![0.0; fan_in * fan_out];
    let mut want_dx = vec![0.0; rows * fan_in];
    for r in 0..rows {
        for i in 0..fan_in {
            for o in 0..fan_out {
                let g = dz[r * fan_out + o];
                want_dw[i * fan_out + o] += x[r * fan_in + i] * g;
                want_dx[r * fan_in + i] += w[i * fan_out + o] * g;
            }
        }
    }
    for (r, row) in want_dx.chunks_exact_mut(fan_in).enumerate() {
        for (i, v) in row.iter_mut().enumerate() {
            let a = a_prev[r * fan_in + i];
            *v *= 1.0 - a * a;
        }
    }
    let want_db: Vec<f64> = (0..fan_out)
        .map(|o| (0..rows).map(|r| dz[r * fan_out + o]).sum())
        .collect();
    // Sums of up to a few hundred products of values near 1: f32 rounding grows with them.
    let tolerance = |k: usize| 1e-5 * k as f64;
    let read = |b: &mut dyn Backend, t| b.read(t).expect("read");
    let out_f = read(b, &out);
    assert_close(
        &format!("{name} forward"),
        &out_f,
        &want_out,
        tolerance(fan_in),
        1e-5,
    );
    let dw_f = read(b, &dw);
    assert_close(
        &format!("{name} dw"),
        &dw_f,
        &want_dw,
        tolerance(rows),
        1e-5,
    );
    let db_f = read(b, &db);
    assert_close(
        &format!("{name} db"),
        &db_f,
        &want_db,
        tolerance(rows),
        1e-5,
    );
    let dx_f = read(b, &dx);
    assert_close(
        &format!("{name} dx"),
        &dx_f,
        &want_dx,
        tolerance(fan_out),
        1e-5,
    );
}

/// Shapes below, at and above the 64 × 64 and 128 × 128 tiles, with partial tiles and `k`
/// not a multiple of the 8- or 16-value step, through every variant.
#[test]
fn every_matmul_kernel_computes_the_products() {
    for choice in MatmulChoice::ALL {
        let Some(mut gpu) = gpu_with(choice) else {
            continue;
        };
        for shape in [
            (64, 64, 64),
            (130, 70, 96),
            (200, 17, 129),
            (65, 300, 64),
            (7, 5, 3),
            (256, 784, 10),
            (128, 128, 128),
            (300, 41, 259),
            (129, 9, 140),
            // A thin weight gradient with a long `k`: split along it (39 stretches).
            (20_000, 9, 8),
            (3000, 72, 16),
        ] {
            products_case(&mut gpu, shape);
        }
    }
}

/// A convolution's three passes through every variant, split along `k` and not: each pass is
/// a product reading its patches from the images (its own pipelines), so each variant is
/// checked reading them. 128 channels in and out over 8 images of 4 × 4 fill the 128 × 128
/// tiles in all three passes; 8 → 16 channels over 14 × 14 runs the one-output kernel with a
/// long weight-gradient sum; a 5 × 5 kernel over 70 filters leaves partial tiles.
#[test]
fn every_matmul_kernel_computes_the_convolutions() {
    let shapes = [
        (conv_shape(3, 128, 128, 4, 4), 8),
        (conv_shape(3, 8, 16, 14, 14), 8),
        (conv_shape(5, 3, 70, 9, 11), 3),
    ];
    for choice in MatmulChoice::ALL {
        let Some(mut gpu) = gpu_with(choice) else {
            continue;
        };
        for split in [false, true] {
            gpu.set_split_k(split);
            for (s, batch) in shapes {
                conv_case(&mut gpu, s, batch, &format!("{choice:?} split {split}"));
            }
        }
    }
}

fn conv_shape(kernel: usize, c_in: usize, c_out: usize, height: usize, width: usize) -> ConvShape {
    ConvShape {
        height,
        width,
        channels_in: c_in,
        channels_out: c_out,
        kernel,
    }
}

/// Forward (ReLU), parameter and input gradients of one convolution against f64 sums.
fn conv_case(b: &mut dyn Backend, s: ConvShape, batch: usize, variant: &str) {
    let seed = (s.kernel * 1000 + s.channels_in * 10 + s.channels_out) as u64;
    let passes = common::conv_passes(b, s, Activation::Relu, batch, seed);
    // Sums of up to a thousand products of values near 1: f32 rounding grows with their
    // length, which differs by pass.
    let rows = batch * s.pixels();
    let taps = s.kernel * s.kernel * s.channels_out;
    let lengths = [s.patch(), rows, rows, taps];
    for (((got, want), pass), k) in passes.iter().zip(common::CONV_PASSES).zip(lengths) {
        let name = format!("{variant} {s:?} {pass}");
        assert_close(&name, got, want, 1e-5 * k as f64, 1e-5);
    }
}

/// A network with layers wide enough for every variant's tiles (128 × 160, 160 × 130) trains as
/// the CPU does, step by step, through every variant.
#[test]
fn every_matmul_kernel_trains_as_the_cpu_does() {
    let config = TrainConfig {
        source: batchscope::data::source::DataSource::Shipped("digits".into()),
        hidden: vec![160, 130],
        batch: 128,
        lr: 0.01,
        optimizer: batchscope::nn::OptimizerKind::Momentum,
        ..TrainConfig::default()
    };
    let session = Session::new(config).expect("valid");
    let mut cpu = common::cpu();
    let cpu_losses = losses(&mut cpu, &session);
    for choice in MatmulChoice::ALL {
        let Some(mut gpu) = gpu_with(choice) else {
            continue;
        };
        for (step, (c, g)) in cpu_losses
            .iter()
            .zip(losses(&mut gpu, &session))
            .enumerate()
        {
            let rel = ((c - g) / c).abs();
            assert!(rel <= 1e-4, "{choice:?} step {step}: cpu {c} gpu {g}");
        }
    }
}

fn losses(b: &mut dyn Backend, session: &Session) -> Vec<f32> {
    let mut runner = Runner::new(b, session).expect("fits");
    (0..30)
        .map(|_| {
            runner.step(b, false).expect("step");
            runner.log(b).expect("log").loss
        })
        .collect()
}

/// Tuning times every variant the adapter runs, keeps the fastest, and says so; a tuning made
/// for another adapter is not used; the cache hands the choice to the next backend untimed.
#[test]
fn tuning_keeps_the_fastest_variant_and_the_cache_hands_it_on() {
    let Some(mut gpu) = common::gpu() else {
        return;
    };
    let tuning = gpu.tune_matmul().expect("the variants run");
    let timed: Vec<MatmulChoice> = tuning.rates.iter().map(|r| r.0).collect();
    assert_eq!(timed, gpu.matmul_variants());
    assert!(tuning.rates.iter().all(|r| r.1.is_finite() && r.1 > 0.0));
    let fastest = tuning
        .rates
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("rates")
        .0;
    assert_eq!(tuning.chosen, fastest);
    assert_eq!(gpu.kernel_sizes().matmul, fastest);
    assert!(tuning.split_rates.iter().all(|r| r.is_finite() && *r > 0.0));
    assert_eq!(
        tuning.split_k,
        tuning.split_rates[1] > tuning.split_rates[0]
    );
    assert_eq!(gpu.kernel_sizes().split_k, tuning.split_k);
    assert_eq!(gpu.adapter().matmul_tuning.as_deref(), Some(&tuning));
    let elsewhere = MatmulTuning {
        key: "another GPU".into(),
        chosen: MatmulChoice::OnePerInvocation,
        ..tuning.clone()
    };
    assert!(!gpu.use_tuning(&elsewhere));
    assert_eq!(gpu.kernel_sizes().matmul, fastest);

    let dir = std::env::temp_dir().join(format!("batchscope-tune-{}", std::process::id()));
    let path = dir.join("gpu-kernels.json");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(apply_or_tune(&mut gpu, &path, false).is_empty());
    let (cache, problem) = TuningCache::load(&path);
    assert!(problem.is_none());
    let kept = cache
        .find(&tuning_key(gpu.adapter()))
        .expect("kept under this adapter")
        .clone();
    let mut next = common::gpu().expect("opened a moment ago");
    assert!(apply_or_tune(&mut next, &path, false).is_empty());
    assert_eq!(next.adapter().matmul_tuning.as_deref(), Some(&kept));
    assert_eq!(next.kernel_sizes().matmul, kept.chosen);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without timestamp queries the tuning times the variants by the host's clock and says so.
#[test]
fn tuning_without_timestamps_uses_the_host_clock() {
    let Some(mut gpu) = common::gpu() else {
        return;
    };
    gpu.disable_timestamps().expect("submitted");
    let tuning = gpu.tune_matmul().expect("the variants run");
    assert!(!tuning.gpu_timestamps);
    assert_eq!(tuning.rates.len(), gpu.matmul_variants().len());
    assert!(tuning.rates.iter().all(|r| r.1.is_finite() && r.1 > 0.0));
    assert_eq!(gpu.kernel_sizes().matmul, tuning.chosen);
}

/// A thin weight gradient with a long `k` is split along it, and its bias gradient's column sums
/// along the rows (one more dispatch each: the partial sums added), and both still compute the
/// sums; a wide product is not split.
#[test]
fn thin_weight_gradients_are_split_along_k() {
    use batchscope::backend::DeviceInfo as _;
    let Some(mut gpu) = common::gpu() else {
        return;
    };
    gpu.set_split_k(true);
    let launched = |gpu: &mut GpuBackend, shape| {
        let before = gpu.kernels_launched().expect("counted");
        products_case(gpu, shape);
        gpu.kernels_launched().expect("counted") - before
    };
    // Forward, weight gradient, bias gradient, input gradient: four kernels, six when both
    // sums are split.
    assert_eq!(launched(&mut gpu, (256, 64, 64)), 4);
    assert_eq!(launched(&mut gpu, (20_000, 9, 8)), 6);
    gpu.set_split_k(false);
    assert_eq!(launched(&mut gpu, (20_000, 9, 8)), 4);
}

/// A kernel choice that cannot be kept (the cache's path is a folder: it cannot be read, and
/// the new choice cannot be written over it) costs a timing, not the run, and the opened
/// backend says both, for the GPU column.
#[test]
fn an_unusable_tuning_cache_is_said_and_the_gpu_still_opens() {
    use batchscope::backend::{DeviceInfo as _, TuningNote, open_gpu};
    if common::gpu().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("batchscope-tune-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let gpu = open_gpu(Some(&dir)).expect("the GPU opens all the same");
    let notes = gpu.tuning_notes();
    assert!(
        matches!(notes.first(), Some(TuningNote::Unreadable { path, .. }) if *path == dir.display().to_string()),
        "{notes:?}"
    );
    assert!(
        matches!(notes.get(1), Some(TuningNote::NotSaved { .. })),
        "{notes:?}"
    );
    assert!(gpu.adapter().matmul_tuning.is_some(), "timed this run");
    let _ = std::fs::remove_dir_all(&dir);
}
