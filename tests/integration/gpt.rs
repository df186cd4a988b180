//! A whole GPT on both devices: a two-block model's gradients against central differences of a
//! reference written from the definitions in f64, and a small GPT's losses on the CPU and the
//! GPU step by step.

use crate::attention::attention64;
use crate::common;

use batchscope::backend::{Activation, AttentionShape, Backend};
use batchscope::nn::{
    GptShape, LayerSpec, Loss, ModelSpec, Network, OptimizerKind, Shape, gpt_layers,
};
use common::reference::{cross_entropy64, dense64};
use common::{Params64, Rng64, act64, assert_layer_gradients, gradient_check_parameters};

const H: f64 = 1e-4;
const ABS: f64 = 3e-4;
const REL: f64 = 3e-3;

/// `LayerNorm` over each row of `n` (ε = 1e-5, the biased variance) in f64.
fn layer_norm64(x: &[f64], (gamma, beta): (&[f64], &[f64]), n: usize) -> Vec<f64> {
    x.chunks(n)
        .flat_map(|row| {
            let mean = row.iter().sum::<f64>() / n as f64;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
            let r = 1.0 / (var + 1e-5).sqrt();
            row.iter()
                .zip(gamma.iter().zip(beta))
                .map(move |(v, (g, b))| (v - mean) * r * g + b)
        })
        .collect()
}

/// The mean cross-entropy of a GPT of `shape` over `ids` (`batch` sequences of `len`) against
/// `targets`, its parameters `p` in the network's order: the embedding's table and positions,
/// then per block ln1, qkv, proj, ln2, fc, fc2, then the final `LayerNorm` and the head.
fn gpt_loss64(p: &Params64, shape: GptShape, len: usize, ids: &[usize], targets: &[usize]) -> f64 {
    let GptShape {
        vocab,
        width: d,
        heads,
        blocks,
    } = shape;
    let rows = ids.len();
    let mut x: Vec<f64> = (0..rows * d)
        .map(|i| p[0].0[ids[i / d] * d + i % d] + p[0].1[((i / d) % len) * d + i % d])
        .collect();
    let add = |x: &mut Vec<f64>, y: &[f64]| x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
    for block in 0..blocks {
        let at = 1 + 6 * block;
        let h = layer_norm64(&x, (&p[at].0, &p[at].1), d);
        let qkv = dense64(&h, &p[at + 1].0, &p[at + 1].1, d, 3 * d);
        let (att, _) = attention64(
            &qkv,
            AttentionShape {
                len,
                heads,
                width: d,
            },
        );
        add(&mut x, &dense64(&att, &p[at + 2].0, &p[at + 2].1, d, d));
        let h = layer_norm64(&x, (&p[at + 3].0, &p[at + 3].1), d);
        let fc = dense64(&h, &p[at + 4].0, &p[at + 4].1, d, 4 * d);
        let fc: Vec<f64> = fc.iter().map(|&v| act64(Activation::Gelu, v)).collect();
        add(&mut x, &dense64(&fc, &p[at + 5].0, &p[at + 5].1, 4 * d, d));
    }
    let last = 1 + 6 * blocks;
    let h = layer_norm64(&x, (&p[last].0, &p[last].1), d);
    let logits = dense64(&h, &p[last + 1].0, &p[last + 1].1, d, vocab);
    cross_entropy64(&logits, targets, vocab)
}

/// A GPT of `shape` over sequences of `len`, with its vocabulary head.
fn gpt_spec(shape: GptShape, len: usize) -> ModelSpec {
    let mut list = gpt_layers(shape);
    list.push(LayerSpec::Dense { units: shape.vocab });
    ModelSpec::from_layers(Shape::Flat(len), list, Loss::SoftmaxCrossEntropy).expect("fits")
}

/// `batch` sequences of `len` seeded token ids and their next tokens.
fn tokens(vocab: usize, batch: usize, len: usize, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut rng = Rng64::new(seed);
    let text: Vec<usize> = (0..batch * (len + 1))
        .map(|_| ((rng.next() + 1.0) * 0.5 * vocab as f64) as usize % vocab)
        .collect();
    let (mut ids, mut next) = (Vec::new(), Vec::new());
    for s in text.chunks(len + 1) {
        ids.extend_from_slice(&s[..len]);
        next.extend_from_slice(&s[1..]);
    }
    (ids, next)
}

fn as_f32(v: &[usize]) -> Vec<f32> {
    v.iter().map(|&t| t as f32).collect()
}

/// A two-block GPT's every parameter gradient (the embeddings, `LayerNorm`s, the attention's
/// products, the MLP's and the head's) against central differences of the f64 reference.
fn two_blocks(b: &mut dyn Backend) {
    let shape = GptShape {
        vocab: 7,
        width: 8,
        heads: 2,
        blocks: 2,
    };
    let (batch, len) = (2, 5);
    let spec = gpt_spec(shape, len);
    let mut model = Network::new(b, &spec, OptimizerKind::Sgd, batch, 11).expect("model");
    let params = gradient_check_parameters(&mut model, b);
    let (ids, next) = tokens(shape.vocab, batch, len, 3);
    model
        .load_batch(b, &as_f32(&ids), &as_f32(&next))
        .expect("batch");
    model.forward(b).expect("forward");
    model.backward(b).expect("backward");
    let grads = model.read_gradients(b).expect("gradients");
    let loss = |p: &Params64| gpt_loss64(p, shape, len, &ids, &next);
    assert_layer_gradients("two-block GPT", &grads, &params, loss, (H, ABS, REL));
}

/// One position only (each query sees just itself) trains too.
fn one_position(b: &mut dyn Backend) {
    let shape = GptShape {
        vocab: 5,
        width: 4,
        heads: 2,
        blocks: 1,
    };
    let (batch, len) = (3, 1);
    let spec = gpt_spec(shape, len);
    let mut model = Network::new(b, &spec, OptimizerKind::Sgd, batch, 2).expect("model");
    let params = gradient_check_parameters(&mut model, b);
    let (ids, next) = tokens(shape.vocab, batch, len, 9);
    model
        .load_batch(b, &as_f32(&ids), &as_f32(&next))
        .expect("batch");
    model.forward(b).expect("forward");
    model.backward(b).expect("backward");
    let grads = model.read_gradients(b).expect("gradients");
    let loss = |p: &Params64| gpt_loss64(p, shape, len, &ids, &next);
    assert_layer_gradients("one-position GPT", &grads, &params, loss, (H, ABS, REL));
}

on_both_devices! {
    gpt_gradients => super::two_blocks;
    gpt_one_position => super::one_position;
}

/// A small GPT, 100 steps of `AdamW` in FP32 on each device from the same weights over the same
/// batches: the losses agree within 1e-4 relative at every step, and they fall.
#[test]
fn a_small_gpt_trains_alike_on_both_devices() {
    let Some(mut gpu) = common::gpu() else { return };
    let mut cpu = common::cpu();
    let shape = GptShape {
        vocab: 11,
        width: 16,
        heads: 2,
        blocks: 2,
    };
    let (batch, len) = (4, 8);
    let spec = gpt_spec(shape, len);
    let batches: Vec<(Vec<f32>, Vec<f32>)> = (0..4)
        .map(|k| {
            // A text with structure: each token is the one before plus one, now and then
            // jumping, so the next token can be learned from the last.
            let (ids, _) = tokens(shape.vocab, batch, len + 1, 40 + k);
            let ids: Vec<usize> = ids
                .chunks(len + 1)
                .flat_map(|s| (0..=len).map(move |i| (s[0] + i) % shape.vocab))
                .collect();
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for s in ids.chunks(len + 1) {
                x.extend(as_f32(&s[..len]));
                y.extend(as_f32(&s[1..]));
            }
            (x, y)
        })
        .collect();
    let run = |b: &mut dyn Backend| -> Vec<f32> {
        let mut net = Network::new(b, &spec, OptimizerKind::AdamW, batch, 5).expect("model");
        (0..100)
            .map(|step| {
                let (x, y) = &batches[step % batches.len()];
                net.load_batch(b, x, y).expect("batch");
                net.train_step(b, 3e-3).expect("step");
                net.take_stats(b).expect("stats").loss
            })
            .collect()
    };
    let (on_cpu, on_gpu) = (run(&mut cpu), run(&mut gpu));
    for (step, (c, g)) in on_cpu.iter().zip(&on_gpu).enumerate() {
        let rel = ((c - g) / c).abs();
        assert!(
            rel <= 1e-4,
            "step {step}: cpu {c} gpu {g} (relative {rel:e})"
        );
    }
    assert!(
        on_cpu[99] < 0.5 * on_cpu[0],
        "{} → {}",
        on_cpu[0],
        on_cpu[99]
    );
}

/// The JSON lines `batchscope args…` printed (it must exit 0 within 5 minutes).
fn json_lines(args: &[&str]) -> Vec<serde_json::Value> {
    common::child::json_lines(args, std::time::Duration::from_secs(300))
}

/// `train` on the shipped Shakespeare with the tiny GPT: the summary carries the characters a
/// second and the validation loss (nats and bits a character, below the uniform guess's
/// ln 75 = 4.3 after a few steps), and a text without a language model is refused in words.
#[test]
fn train_on_a_text_reports_characters_per_second_and_the_validation_loss() {
    let lines = json_lines(&[
        "train",
        "--dataset",
        "shakespeare",
        "--model",
        "gpt-tiny",
        "--context",
        "16",
        "--batch",
        "4",
        "--optimizer",
        "adamw",
        "--lr",
        "0.003",
        "--steps",
        "20",
        "--log-every",
        "10",
        "--device",
        "cpu",
        "--json",
    ]);
    let summary = lines.last().expect("a summary");
    let tokens = summary["tokens_per_s"].as_f64().expect("tokens_per_s");
    let samples = summary["samples_per_s"].as_f64().expect("samples_per_s");
    assert!((tokens / samples - 16.0).abs() < 1e-6, "{summary}");
    let loss = summary["val_loss"].as_f64().expect("val_loss");
    let bits = summary["val_bits_per_char"].as_f64().expect("bits");
    assert!(loss > 0.0 && loss < 75f64.ln(), "{summary}");
    assert!(
        (bits - loss / std::f64::consts::LN_2).abs() < 1e-4,
        "{summary}"
    );
    assert!(lines[0]["tokens_per_s"].as_f64().is_some(), "{}", lines[0]);
    let refused = common::child::run(
        &[
            "train",
            "--dataset",
            "shakespeare",
            "--steps",
            "1",
            "--device",
            "cpu",
        ],
        std::time::Duration::from_secs(60),
    );
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("Embedding"), "{}", refused.stderr);
}

/// `sample` after 20 seeded training steps writes the same characters on the CPU and the GPU
/// (their weights agree, and the draws share one seed), all of them the text's, after the
/// prompt; a prompt with a character the text lacks is refused.
#[test]
fn sample_writes_the_same_text_on_both_devices() {
    if common::gpu().is_none() {
        return;
    }
    let lines = json_lines(&[
        "sample",
        "--dataset",
        "shakespeare",
        "--model",
        "gpt-tiny",
        "--context",
        "16",
        "--batch",
        "4",
        "--optimizer",
        "adamw",
        "--lr",
        "0.003",
        "--train-steps",
        "20",
        "--tokens",
        "40",
        "--prompt",
        "ROMEO:",
        "--device",
        "both",
        "--json",
    ]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let text = |i: usize| lines[i]["text"].as_str().expect("text").to_owned();
    assert_eq!(text(0).chars().count(), 40);
    assert_eq!(text(0), text(1), "cpu and gpu wrote differently");
    assert!(lines.iter().all(|l| l["tokens_per_s"].as_f64() > Some(0.0)));
    let refused = common::child::run(
        &[
            "sample",
            "--dataset",
            "shakespeare",
            "--model",
            "gpt-tiny",
            "--prompt",
            "日",
            "--device",
            "cpu",
        ],
        std::time::Duration::from_secs(60),
    );
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("not a character"),
        "{}",
        refused.stderr
    );
}

/// A user's own `.txt` file trains through the command line, and a hostile one is refused with
/// what was wrong and where (exit 2), in bounded memory: bytes that are not UTF-8 (named at
/// their offset), an empty file, a single character repeated.
#[test]
fn a_users_text_file_trains_or_is_refused_in_words() {
    use common::child::{MIB, s, scratch, write};
    let dir = scratch("gpt-text");
    let good = "To be, or not to be, that is the question:\n".repeat(20);
    let path = write(&dir, "hamlet.txt", good.as_bytes());
    let lines = json_lines(&[
        "train",
        "--dataset",
        s(&path),
        "--model",
        "gpt-tiny",
        "--context",
        "16",
        "--batch",
        "4",
        "--steps",
        "3",
        "--device",
        "cpu",
        "--json",
    ]);
    assert!(
        lines
            .last()
            .is_some_and(|l| l["val_loss"].as_f64().is_some())
    );
    let mut bad = good.clone().into_bytes();
    bad[100] = 0xff;
    for (name, bytes, says) in [
        ("latin1.txt", bad, "byte 100"),
        ("empty.txt", Vec::new(), "empty"),
        ("one.txt", b"a".repeat(1000), "only one character"),
    ] {
        let path = write(&dir, name, &bytes);
        let outcome = common::child::run(
            &[
                "train",
                "--dataset",
                s(&path),
                "--model",
                "gpt-tiny",
                "--device",
                "cpu",
            ],
            std::time::Duration::from_secs(60),
        );
        assert_eq!(outcome.code, Some(2), "{name}: {}", outcome.stderr);
        assert!(outcome.stderr.contains(says), "{name}: {}", outcome.stderr);
        assert!(outcome.peak < 400 * MIB, "{name}: {} bytes", outcome.peak);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// In every 16-bit mode a GPT keeps attention's probabilities in 16 bits as its other
/// activations (half the bytes of FP32), trains a few steps to a finite loss on each device, and
/// its activations take exactly half FP32's bytes where every activation is 16-bit.
fn sixteen_bit_probabilities(open: &dyn Fn() -> Box<dyn Backend>) {
    use batchscope::memory::Role;
    use batchscope::nn::Training;
    use batchscope::precision::{DType, Precision};
    let shape = GptShape {
        vocab: 9,
        width: 8,
        heads: 2,
        blocks: 1,
    };
    let (batch, len) = (3, 6);
    let spec = gpt_spec(shape, len);
    let (ids, next) = tokens(shape.vocab, batch, len, 5);
    let probs_bytes = |b: &mut dyn Backend, precision| {
        let training = Training {
            optimizer: OptimizerKind::AdamW,
            batch,
            seed: 3,
            precision,
            eval_rows: batch,
            checkpoint: 0,
        };
        let mut net = Network::with_precision(b, &spec, training).expect("model");
        for _ in 0..3 {
            net.load_batch(b, &as_f32(&ids), &as_f32(&next))
                .expect("batch");
            net.train_step(b, 1e-3).expect("step");
        }
        let loss = net.take_stats(b).expect("stats").loss;
        assert!(loss.is_finite(), "{precision:?}: {loss}");
        let probs: Vec<(DType, usize)> = net
            .activations()
            .iter()
            .filter(|t| t.label().rsplit('.').next() == Some("probs"))
            .map(|t| (t.dtype(), t.size_in_bytes()))
            .collect();
        assert_eq!(probs.len(), 1, "{precision:?}");
        (probs[0], b.memory().role(Role::Activations))
    };
    // A fresh backend for each precision: its memory ledger counts that model alone.
    let ((f32_type, f32_bytes), f32_all) = probs_bytes(open().as_mut(), Precision::Fp32);
    assert_eq!(f32_type, DType::F32);
    for precision in [Precision::Fp16, Precision::Bf16, Precision::Mixed] {
        let ((dtype, bytes), all) = probs_bytes(open().as_mut(), precision);
        assert_eq!(dtype, DType::of(precision.format()), "{precision:?}");
        assert_eq!(2 * bytes, f32_bytes, "{precision:?}");
        // Besides the probabilities only the `LayerNorm`s' statistics stay f32.
        assert!(
            2 * all > f32_all && all < f32_all,
            "{precision:?}: {all} vs {f32_all}"
        );
    }
}

#[test]
fn sixteen_bit_probabilities_on_the_cpu() {
    sixteen_bit_probabilities(&|| Box::new(common::cpu()));
}

#[test]
fn sixteen_bit_probabilities_on_the_gpu() {
    if common::gpu().is_none() {
        return;
    }
    sixteen_bit_probabilities(&|| Box::new(common::gpu().expect("a GPU, as a moment ago")));
}

/// Every kernel of a GPT's step, timed one by one, falls in a named kind of op on both devices
/// (none in "Other"), and attention is a kind of its own: its share of the FLOPs counted, its
/// kernels' time measured, as the journey tab's table and the first lesson show them.
#[test]
fn a_gpt_steps_kernels_each_fall_in_a_kind_attention_its_own() {
    use batchscope::data::source::DataSource;
    use batchscope::sim::groups::{OpGroup, shares};
    use batchscope::train::{Pipeline, Runner, Session, TrainConfig};
    let mut config = TrainConfig {
        source: DataSource::Shipped("shakespeare".into()),
        batch: 4,
        pipeline: Pipeline {
            kernel_timing_every: 1,
            ..Pipeline::default()
        },
        ..TrainConfig::default()
    };
    config.data.context = 16;
    config.suit_data(true);
    config.batch = 4;
    let session = Session::new(config).expect("valid settings");
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(common::cpu())];
    backends.extend(common::gpu().map(|g| Box::new(g) as Box<dyn Backend>));
    for mut backend in backends {
        let b = backend.as_mut();
        let mut runner = Runner::new(b, &session).expect("model fits");
        for _ in 0..3 {
            runner.step(b, false).expect("step");
        }
        runner.sync(b).expect("sync");
        let kernels = b.kernel_times().expect("every step timed").clone();
        let device = b.device();
        for (label, _) in &kernels.kernels {
            assert_ne!(
                OpGroup::of_kernel(label),
                OpGroup::Other,
                "{device:?}: kernel {label} in no kind"
            );
        }
        let c = &session.config;
        let ops = batchscope::sim::cost::step_ops(
            &c.model_spec(&session.data),
            c.batch,
            c.recipe(),
            device,
        );
        let rows = shares(&ops, Some(&kernels));
        let attention = rows
            .iter()
            .find(|r| r.group == OpGroup::Attention)
            .expect("an attention row");
        assert!(attention.flops_share > 0.0 && attention.flops_share < 0.5);
        assert!(attention.time_ns.is_some_and(|ns| ns > 0), "{device:?}");
        let total: f64 = rows.iter().filter_map(|r| r.time_share).sum();
        assert!(
            (total - 1.0).abs() < 1e-9,
            "{device:?}: time shares add to {total}"
        );
    }
}
