//! A whole CNN on both devices: every parameter gradient against central differences of an f64
//! reference written from the definitions, the two devices' losses step by step on the 8×8
//! digits, and its memory as the estimator predicts it, in every precision.

use crate::common;

use batchscope::backend::{Activation, Backend};
use batchscope::data::ImageShape;
use batchscope::data::source::DataSource;
use batchscope::device::Device;
use batchscope::memory::Role;
use batchscope::nn::{ConvStack, Loss, ModelSpec, Network, OptimizerKind};
use batchscope::precision::Precision;
use batchscope::sim::estimate;
use batchscope::train::{Pipeline, Runner, Session, TrainConfig, eval_rows};
use common::reference::{conv64, cross_entropy64, dense64, pool64};
use common::{Params64, Rng64, act64, assert_layer_gradients, gradient_check_parameters, to_f32};

const H: f64 = 1e-4;
const ABS: f64 = 2e-4;
const REL: f64 = 2e-3;

/// The network's loss in f64: each block's convolution and pooling, then the dense layers (the
/// last without activation), then the mean softmax cross-entropy.
fn loss64(spec: &ModelSpec, params: &Params64, x: &[f64], targets: &[usize]) -> f64 {
    let blocks = spec
        .conv
        .as_ref()
        .map(ConvStack::blocks)
        .unwrap_or_default();
    let mut h = x.to_vec();
    for ((conv, pool), (w, b)) in blocks.iter().zip(params) {
        h = pool64(&conv64(&h, w, b, *conv, spec.activation), *pool);
    }
    let dense = &params[blocks.len()..];
    for (d, (w, b)) in dense.iter().enumerate() {
        h = dense64(&h, w, b, spec.layers[d], spec.layers[d + 1]);
        if d + 1 < dense.len() {
            h = h.into_iter().map(|z| act64(spec.activation, z)).collect();
        }
    }
    cross_entropy64(&h, targets, spec.outputs())
}

/// Every gradient of a CNN of `blocks` filters with `kernel`-sized kernels and a hidden dense
/// layer of 5 over 3 classes, on `image`, against central differences.
fn whole_cnn_case(
    b: &mut dyn Backend,
    image: ImageShape,
    (blocks, kernel): (&[usize], usize),
    activation: Activation,
) {
    let conv = ConvStack {
        image,
        channels: blocks.to_vec(),
        kernel,
    };
    let spec = ModelSpec::cnn(conv, &[5, 3], activation, Loss::SoftmaxCrossEntropy);
    let rows = 3;
    let mut model = Network::new(b, &spec, OptimizerKind::Sgd, rows, 42).expect("model");
    let mut rng = Rng64::new(5);
    let x = rng.vec(rows * image.len(), 1.0);
    let targets: Vec<usize> = (0..rows).map(|r| r % 3).collect();
    let y: Vec<f32> = targets.iter().map(|&t| t as f32).collect();
    let params = gradient_check_parameters(&mut model, b);
    model.load_batch(b, &to_f32(&x), &y).expect("batch");
    model.forward(b).expect("forward");
    model.backward(b).expect("backward");
    let stats = model.take_stats(b).expect("stats");
    let name = format!("{blocks:?} k{kernel} {}", activation.as_str());
    let want = loss64(&spec, &params, &x, &targets);
    assert!(
        (f64::from(stats.loss) - want).abs() <= 1e-4 * want.abs().max(1.0),
        "{name}: loss {} against {want}",
        stats.loss
    );
    let grads = model.read_gradients(b).expect("grads");
    assert_eq!(
        grads.len(),
        blocks.len() + 2,
        "{name}: a gradient per layer"
    );
    let loss = |p: &Params64| loss64(&spec, p, &x, &targets);
    assert_layer_gradients(&name, &grads, &params, loss, (H, ABS, REL));
}

/// Two 3×3 blocks over a two-channel image with an odd width, tanh.
fn two_blocks_tanh(b: &mut dyn Backend) {
    let image = ImageShape {
        width: 7,
        height: 6,
        channels: 2,
    };
    whole_cnn_case(b, image, (&[3, 4], 3), Activation::Tanh);
}

/// Two 3×3 blocks over a grey image, ReLU as a CNN has it.
fn two_blocks_relu(b: &mut dyn Backend) {
    let image = ImageShape {
        width: 8,
        height: 8,
        channels: 1,
    };
    whole_cnn_case(b, image, (&[2, 3], 3), Activation::Relu);
}

/// One 5×5 block over a three-channel image, sigmoid.
fn one_block_5x5_sigmoid(b: &mut dyn Backend) {
    let image = ImageShape {
        width: 6,
        height: 5,
        channels: 3,
    };
    whole_cnn_case(b, image, (&[4], 5), Activation::Sigmoid);
}

on_both_devices! {
    cnn_two_blocks_tanh_gradients => super::two_blocks_tanh;
    cnn_two_blocks_relu_gradients => super::two_blocks_relu;
    cnn_one_block_5x5_sigmoid_gradients => super::one_block_5x5_sigmoid;
}

/// A CNN on the shipped 8×8 digits: conv 4, 8 (3×3), then 10 classes.
fn digits_cnn(batch: usize, precision: Precision, optimizer: OptimizerKind) -> TrainConfig {
    TrainConfig {
        source: DataSource::Shipped("digits".into()),
        conv: vec![4, 8],
        hidden: Vec::new(),
        optimizer,
        batch,
        precision,
        pipeline: Pipeline {
            record: false,
            ..Pipeline::default()
        },
        ..TrainConfig::default()
    }
}

/// Momentum, not Adam: Adam's first steps move each weight by about the learning rate whatever
/// its gradient's size, and on these digits one first-layer weight's gradient is a sum that
/// cancels to about 1e-8, Adam's ε, where the two devices' summation orders give -8e-8 and
/// -2e-8: the same weight then moves by 0.009 on one and 0.007 on the other, and the losses
/// part by 3e-5 after one step (measured). With momentum every gradient agrees to 1e-5 of its
/// size and so do the steps. The GPU runs with its thin weight gradients whole and split along
/// `k` (the first block's 9 × 4 outputs over 2,048 pixels go in four stretches).
#[test]
fn cpu_and_gpu_cnn_losses_agree_at_every_step_in_fp32() {
    let Some(mut gpu) = common::gpu() else { return };
    let mut cpu = common::cpu();
    let config = TrainConfig {
        lr: 0.05,
        ..digits_cnn(32, Precision::Fp32, OptimizerKind::Momentum)
    };
    let session = Session::new(config).expect("ok");
    let spec = session.config.model_spec(&session.data);
    assert!(spec.conv.is_some(), "digits are images: a CNN");
    // 8×8 → 4×4 → 2×2 pixels of 8 channels.
    assert_eq!(spec.layers, [32, 10]);
    let run = |backend: &mut dyn Backend| -> Vec<_> {
        let mut runner = Runner::new(backend, &session).expect("fits");
        (0..100)
            .map(|_| {
                runner.step(backend, false).expect("step");
                runner.log(backend).expect("log")
            })
            .collect()
    };
    let mut logs = vec![run(&mut cpu)];
    for split in [false, true] {
        gpu.set_split_k(split);
        logs.push(run(&mut gpu));
    }
    for (c, g) in logs[0]
        .iter()
        .zip(&logs[1])
        .chain(logs[0].iter().zip(&logs[2]))
    {
        assert_eq!((c.device, g.device), (Device::Cpu, Device::Gpu));
        let rel = ((c.loss - g.loss) / c.loss).abs();
        assert!(
            rel <= 1e-4,
            "step {}: cpu loss {} vs gpu loss {} (relative {rel:e})",
            c.step,
            c.loss,
            g.loss
        );
    }
    // It learned: two flat lines agreeing would prove nothing.
    assert!(logs[0][99].loss < 0.5 * logs[0][0].loss);
}

/// The estimator equals what each device allocates for a CNN, role by role, in every
/// precision; 16-bit formats store half the bytes of the convolution's tensors too.
fn cnn_memory_as_estimated(backend: &mut dyn Backend) {
    let mut activations = Vec::new();
    for precision in [
        Precision::Fp32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Mixed,
    ] {
        let session = Session::new(digits_cnn(16, precision, OptimizerKind::Adam)).expect("ok");
        let spec = session.config.model_spec(&session.data);
        let c = &session.config;
        let rows = eval_rows(&session.data);
        let e = estimate::network(&spec, c.optimizer, c.batch, c.precision, rows);
        let mut runner = Runner::new(backend, &session).expect("fits");
        // A step through every op (the 16-bit working copies grow to what it needs).
        runner.step(backend, true).expect("step");
        let m = backend.memory();
        for line in &e.lines {
            assert_eq!(
                line.bytes,
                m.role(line.role),
                "{precision:?} {}: estimated by {}",
                line.role.as_str(),
                line.formula
            );
        }
        activations.push(m.role(Role::Activations));
        drop(runner);
    }
    assert_eq!(activations[1] * 2, activations[0], "FP16 halves them");
    assert_eq!(activations[2] * 2, activations[0], "BF16 halves them");
    assert_eq!(
        activations[3] * 2,
        activations[0],
        "mixed stores them in FP16"
    );
}

on_both_devices! {
    cnn_memory_is_what_the_estimator_says => super::cnn_memory_as_estimated;
}

#[test]
fn convolution_blocks_are_refused_on_data_without_images() {
    let config = TrainConfig {
        source: DataSource::Shipped("iris".into()),
        conv: vec![8],
        ..TrainConfig::default()
    };
    let e = Session::new(config).expect_err("iris rows are not images");
    assert!(e.to_string().contains("need images"), "{e}");
    let config = TrainConfig {
        conv: vec![4, 4, 4, 4],
        ..digits_cnn(16, Precision::Fp32, OptimizerKind::Sgd)
    };
    let e = Session::new(config).expect_err("8×8 halved four times");
    assert!(e.to_string().contains("no pixel"), "{e}");
}

/// A folder of colour images, one sub-folder per class: the red ones brighter on the left, the
/// blue ones on the right.
fn colour_folder() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("batchscope-cnn-rgb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (class, left) in [("left", true), ("right", false)] {
        let sub = dir.join(class);
        std::fs::create_dir_all(&sub).expect("folder");
        for i in 0..16u32 {
            let image = image::RgbImage::from_fn(12, 12, |x, y| {
                let bright = if (x < 6) == left { 200 } else { 40 };
                let noise = ((x * 7 + y * 13 + i * 29) % 23) as u8;
                image::Rgb([bright + noise, 60 + noise, 255 - bright - noise])
            });
            image.save(sub.join(format!("{i}.png"))).expect("write png");
        }
    }
    dir
}

/// A user's colour image folder keeps its height, width and three channels, so a CNN sees
/// images: both devices train it, their losses agree, and it learns.
#[test]
fn a_cnn_trains_on_a_folder_of_colour_images() {
    use batchscope::data::formats::{LoadOptions, load};
    let dir = colour_folder();
    let mut options = LoadOptions::default();
    options.image.side = 12;
    options.image.rgb = true;
    let table = load(&dir, &options).expect("the folder loads");
    assert_eq!(
        table.image,
        Some(ImageShape {
            width: 12,
            height: 12,
            channels: 3
        })
    );
    let config = TrainConfig {
        conv: vec![4],
        hidden: Vec::new(),
        optimizer: OptimizerKind::Momentum,
        lr: 0.05,
        batch: 8,
        pipeline: Pipeline {
            record: false,
            ..Pipeline::default()
        },
        ..TrainConfig::default()
    };
    let session = Session::from_table(config, &table).expect("valid");
    let spec = session.config.model_spec(&session.data);
    let conv = spec.conv.as_ref().expect("a CNN");
    assert_eq!(conv.image.channels, 3);
    // 12×12 pooled to 6×6 of 4 filters, then 2 classes.
    assert_eq!(spec.layers, [144, 2]);
    let mut runs = Vec::new();
    let mut cpu = common::cpu();
    let mut gpu = common::gpu();
    let mut backends: Vec<&mut dyn Backend> = vec![&mut cpu];
    if let Some(g) = gpu.as_mut() {
        backends.push(g);
    }
    for backend in backends {
        let mut runner = Runner::new(backend, &session).expect("fits");
        let losses: Vec<f32> = (0..30)
            .map(|_| {
                runner.step(backend, false).expect("step");
                runner.log(backend).expect("log").loss
            })
            .collect();
        runs.push(losses);
    }
    for run in &runs[1..] {
        for (step, (c, g)) in runs[0].iter().zip(run).enumerate() {
            assert!((c - g).abs() <= 1e-4 * c.abs(), "step {step}: {c} vs {g}");
        }
    }
    let first: f32 = runs[0][..5].iter().sum();
    let last: f32 = runs[0][25..].iter().sum();
    assert!(last < 0.5 * first, "it learns: {first} then {last}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each device times a CNN step's ops under labels that have a kind, and every product of the
/// step (the convolutions' passes too, each device's own kernels) is paired with the op it did,
/// so the roofline and the breakdown by kind of op show them.
fn cnn_kernels_pair_with_their_ops(backend: &mut dyn Backend) {
    use batchscope::sim::cost::step_ops;
    use batchscope::sim::groups::{OpGroup, measured_ops};
    let mut config = digits_cnn(16, Precision::Fp32, OptimizerKind::Adam);
    config.pipeline.kernel_timing_every = 1;
    let session = Session::new(config.clone()).expect("ok");
    let spec = session.config.model_spec(&session.data);
    let mut runner = Runner::new(backend, &session).expect("fits");
    let mut kernels = None;
    for _ in 0..40 {
        runner.step(backend, false).expect("step");
        runner.step(backend, true).expect("step");
        if let Some(k) = runner.log(backend).expect("log").kernels {
            kernels = Some(k);
            break;
        }
    }
    let Some(kernels) = kernels else {
        eprintln!("no timed step (an adapter without timestamp queries)");
        return;
    };
    for (label, _) in &kernels.kernels {
        assert_ne!(OpGroup::of_kernel(label), OpGroup::Other, "{label}");
    }
    let rule = config.recipe();
    let ops = step_ops(&spec, config.batch, rule, backend.device());
    let measured: Vec<usize> = measured_ops(&ops, &kernels)
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    let products: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].product.is_some())
        .collect();
    assert_eq!(
        products.len(),
        3 * 3 - 1,
        "three layers' products, no dx for the first"
    );
    for i in products {
        assert!(
            measured.contains(&i),
            "{} not paired: {kernels:?}",
            ops[i].name
        );
    }
}

on_both_devices! {
    cnn_step_kernels_pair_with_their_ops => super::cnn_kernels_pair_with_their_ops;
}
