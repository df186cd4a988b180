//! Generation a token at a time: a key-value cache gives the logits the whole window gives, and
//! writes the same text, prompts of different lengths in one batch included, on both devices.

use crate::common;
use batchscope::backend::Backend;
use batchscope::nn::{
    GptShape, LayerSpec, Loss, ModelSpec, Network, OptimizerKind, Shape, gpt_layers,
};
use batchscope::train::generate::{Sampling, generate, writer};

/// A GPT over windows of `len`, its weights a seeded start (larger than nanoGPT's, so the
/// attention is not uniform and the text depends on what came before).
fn model(b: &mut dyn Backend, len: usize, rows: usize) -> (ModelSpec, Network) {
    let shape = GptShape {
        vocab: 9,
        width: 16,
        heads: 4,
        blocks: 2,
    };
    let mut list = gpt_layers(shape);
    list.push(LayerSpec::Dense { units: shape.vocab });
    let spec =
        ModelSpec::from_layers(Shape::Flat(len), list, Loss::SoftmaxCrossEntropy).expect("fits");
    let net = Network::new(b, &spec, OptimizerKind::Sgd, 1, 21).expect("model");
    let mut params = net.read_parameters(b).expect("parameters");
    for (w, bias) in &mut params {
        for v in w.iter_mut().chain(bias.iter_mut()) {
            *v *= 12.0;
        }
    }
    let net = writer(b, &spec, &params, rows).expect("writer");
    (spec, net)
}

/// Each position decoded from the cache gives the logits the whole window's pass gives for it.
fn cached_logits_match_the_window(b: &mut dyn Backend) {
    let (len, rows, vocab) = (8, 2, 9);
    let (_, mut net) = model(b, len, rows);
    let window: Vec<f32> = [3, 1, 4, 1, 5, 2, 6, 5, 8, 7, 0, 2, 3, 4, 1, 6]
        .iter()
        .map(|&t: &u16| f32::from(t))
        .collect();
    let whole = net.predict(b, &window).expect("predict");
    let mut decoder = net.decoder(b, rows).expect("decoder");
    // The cache filled from the first three positions (the rest of the windows padded).
    let mut first = vec![0.0f32; rows * len];
    for s in 0..rows {
        first[s * len..s * len + 3].copy_from_slice(&window[s * len..s * len + 3]);
    }
    let prefilled = net.prefill(b, &mut decoder, &first).expect("prefill");
    assert_eq!(prefilled.len(), rows * len * vocab);
    for p in 3..len {
        let ids: Vec<f32> = (0..rows).map(|s| window[s * len + p]).collect();
        let got = net.decode(b, &mut decoder, &ids, p).expect("decode");
        for s in 0..rows {
            let want = &whole[(s * len + p) * vocab..][..vocab];
            for (g, w) in got[s * vocab..][..vocab].iter().zip(want) {
                assert!(
                    (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                    "position {p}: {g} vs {w}"
                );
            }
        }
    }
    assert!(decoder.cache_bytes() == 2 * rows * len * 2 * 16 * 4);
    // A position beyond the window is refused, not written out of bounds.
    let err = net
        .decode(b, &mut decoder, &[0.0, 0.0], len)
        .expect_err("beyond the window");
    assert!(err.to_string().contains("position"), "{err}");
}

/// Three prompts at once, one longer than the window, at a temperature and greedily: the cache
/// and the whole window write the same characters (past several window restarts), and more
/// than one character of them (the text is not a constant).
fn cache_writes_what_the_window_writes(b: &mut dyn Backend) {
    let (len, vocab) = (8, 9);
    let prompts: Vec<Vec<u16>> = vec![vec![1], vec![2, 3, 4], (0..11).map(|i| i % 9).collect()];
    let (_, mut net) = model(b, len, prompts.len());
    for temperature in [0.0, 0.9] {
        let how = Sampling {
            tokens: 30,
            temperature,
            seed: 4,
        };
        let off = generate(b, &mut net, (len, vocab), &prompts, (how, false)).expect("off");
        let on = generate(b, &mut net, (len, vocab), &prompts, (how, true)).expect("on");
        assert_eq!(off.texts, on.texts, "temperature {temperature}");
        assert!(off.texts.iter().all(|t| t.len() == 30));
        let distinct: std::collections::BTreeSet<u16> = on.texts.concat().into_iter().collect();
        assert!(distinct.len() > 2, "{:?}", on.texts);
        // The whole window every position without a cache; with one, a window's first pass.
        assert!(
            on.window_passes * 3 < off.window_passes,
            "{} vs {}",
            on.window_passes,
            off.window_passes
        );
        assert!(on.cache_bytes > 0 && off.cache_bytes == 0);
    }
}

/// A model without token ids, or a batch other than the writer's rows, is refused in words.
fn decoder_refuses_what_it_cannot_serve(b: &mut dyn Backend) {
    let (_, net) = model(b, 4, 2);
    let err = net.decoder(b, 3).err().expect("3 rows on a 2-row writer");
    assert!(err.to_string().contains("3 sequences"), "{err}");
    let mlp = ModelSpec::from_layers(
        Shape::Flat(4),
        vec![LayerSpec::Dense { units: 3 }],
        Loss::SoftmaxCrossEntropy,
    )
    .expect("fits");
    let net = Network::new(b, &mlp, OptimizerKind::Sgd, 1, 1).expect("model");
    let err = net.decoder(b, 1).err().expect("an MLP");
    assert!(err.to_string().contains("token ids"), "{err}");
}

on_both_devices! {
    cached_logits => super::cached_logits_match_the_window;
    cached_text => super::cache_writes_what_the_window_writes;
    decoder_refusals => super::decoder_refuses_what_it_cannot_serve;
}

/// `infer` on a GPT: each device writes one prompt and a batch of prompts, with and without the
/// cache, reports characters a second and the wait a character, and writes the same text both
/// ways; the cache's runs make far fewer whole-window passes.
#[test]
fn infer_serves_a_language_model_with_and_without_the_cache() {
    let devices = if common::gpu().is_some() {
        "both"
    } else {
        "cpu"
    };
    let args = [
        "infer",
        "--dataset",
        "shakespeare",
        "--model",
        "gpt-tiny",
        "--context",
        "16",
        "--batch",
        "3",
        "--train-steps",
        "5",
        "--requests",
        "3",
        "--tokens",
        "24",
        "--device",
        devices,
        "--json",
    ];
    let reports = common::child::json_lines(&args, std::time::Duration::from_secs(300));
    assert_eq!(reports.len(), if devices == "both" { 2 } else { 1 });
    for report in &reports {
        let runs = report["generation"].as_array().expect("generation");
        let shape: Vec<(u64, bool)> = runs
            .iter()
            .map(|g| (g["prompts"].as_u64().unwrap_or(0), g["kv_cache"] == true))
            .collect();
        assert_eq!(shape, [(1, false), (1, true), (3, false), (3, true)]);
        for g in runs {
            assert!(g["tokens_per_s"].as_f64() > Some(0.0), "{g}");
            assert!(g["p50_ms_per_token"].as_f64() > Some(0.0), "{g}");
            assert_eq!(
                g["text"].as_str().map(|t| t.chars().count()),
                Some(24),
                "{g}"
            );
        }
        for pair in runs.chunks(2) {
            assert_eq!(pair[0]["text"], pair[1]["text"], "{pair:?}");
            let passes = |g: &serde_json::Value| g["window_passes"].as_u64().unwrap_or(0);
            assert!(passes(&pair[1]) * 4 <= passes(&pair[0]), "{pair:?}");
            assert!(pair[1]["cache_bytes"].as_u64() > Some(0));
        }
    }
    let refused = common::child::run(
        &[
            "infer",
            "--dataset",
            "shakespeare",
            "--model",
            "gpt-tiny",
            "--tokens",
            "0",
        ],
        std::time::Duration::from_secs(60),
    );
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("--tokens 0"), "{}", refused.stderr);
}
