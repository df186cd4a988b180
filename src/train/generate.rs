//! Text from a language model: the trained weights copied into a model of a few rows, then one
//! character at a time, each drawn from the softmax of the last position's logits (divided by
//! the temperature) with a seeded generator, so two devices whose weights agree write the same
//! text. Several prompts are written at once, in step: position `p` of every sequence in the
//! same pass.
//!
//! The window: a model with learned positions sees at most `T` of them. While the text fits,
//! the window is the whole text; when it is full, it restarts from the last half of it (a
//! position's keys depend on where it sits in the window, so a cache could not slide a position
//! at a time: nanoGPT's one-position slide re-reads the window every character). Both ways of
//! computing the logits below see exactly these windows, so they write the same text:
//! - without a key-value cache, every character runs the whole window again (nanoGPT's
//!   `generate`);
//! - with one, a window's first pass fills each attention layer's cache with its keys and
//!   values, and every further character runs the layers over one row per sequence.

use std::time::Duration;
use web_time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::backend::{Backend, BackendError};
use crate::nn::{Decoder, LayerValues, ModelSpec, Network, OptimizerKind, Training};
use crate::precision::Precision;
use crate::train::report::ATTENTION_SHOWN;

/// Most characters one call of a command writes after a prompt.
pub const MAX_TOKENS: usize = 10_000;

/// How to draw each character.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// Characters to write after each prompt.
    pub tokens: usize,
    /// The logits are divided by it; 0 takes the likeliest character every time.
    pub temperature: f32,
    /// Seeds the draws (sequence `b`'s with `seed + b`).
    pub seed: u64,
}

/// What a model wrote, and how long it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// Each sequence's characters after its prompt, as the vocabulary numbers them.
    pub texts: Vec<Vec<u16>>,
    /// Wall time of the writing (every pass and its read-back).
    pub elapsed: Duration,
    /// Wall time of each position that drew a character (a character of each sequence still
    /// writing): what a reader waits between two characters.
    pub steps: Vec<Duration>,
    /// Passes over whole windows (every position without a cache; a window's first with one).
    pub window_passes: usize,
    /// Bytes of the key-value caches (0 without).
    pub cache_bytes: usize,
}

impl Generated {
    /// The first sequence's characters.
    pub fn ids(&self) -> &[u16] {
        self.texts.first().map_or(&[], Vec::as_slice)
    }

    /// Characters written, all sequences together.
    pub fn tokens(&self) -> usize {
        self.texts.iter().map(Vec::len).sum()
    }

    /// Characters written a second, all sequences together.
    pub fn tokens_per_s(&self) -> f64 {
        self.tokens() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A model of `spec` holding `params` that evaluates `rows` sequences a pass.
pub fn writer(
    backend: &mut dyn Backend,
    spec: &ModelSpec,
    params: &LayerValues,
    rows: usize,
) -> Result<Network, BackendError> {
    let training = Training {
        optimizer: OptimizerKind::Sgd,
        batch: 1,
        seed: 0,
        precision: Precision::Fp32,
        eval_rows: rows,
        checkpoint: 0,
    };
    let mut model = Network::with_precision(backend, spec, training)?;
    model.write_parameters(backend, params)?;
    Ok(model)
}

/// `how.tokens` characters after each of `prompts` (an empty one starts from character 0) from
/// `model` (made by [`writer`] for that many rows), whose windows hold `context` characters over
/// a vocabulary of `vocab`; with `kv_cache`, through key-value caches.
pub fn generate(
    backend: &mut dyn Backend,
    model: &mut Network,
    (context, vocab): (usize, usize),
    prompts: &[Vec<u16>],
    (how, kv_cache): (Sampling, bool),
) -> Result<Generated, BackendError> {
    let started = Instant::now();
    let rows = prompts.len();
    let mut texts: Vec<Vec<u16>> = prompts
        .iter()
        .map(|p| if p.is_empty() { vec![0] } else { p.clone() })
        .collect();
    let ends: Vec<usize> = texts.iter().map(|t| t.len() + how.tokens).collect();
    let mut rngs: Vec<ChaCha8Rng> = (0..rows as u64)
        .map(|b| ChaCha8Rng::seed_from_u64(how.seed.wrapping_add(b)))
        .collect();
    let mut decoder = if kv_cache && rows > 0 {
        Some(model.decoder(backend, rows)?)
    } else {
        None
    };
    let keep = (context / 2).max(1);
    // The window is `texts[b][start..=p]`; `cached` is the position the caches hold up to.
    let (mut start, mut cached) = (0usize, None::<usize>);
    let mut windows = vec![0.0f32; rows * context];
    let mut steps = Vec::with_capacity(how.tokens);
    let mut window_passes = 0;
    let first = texts.iter().map(Vec::len).min().unwrap_or(1) - 1;
    let last = ends.iter().copied().max().unwrap_or(0);
    for p in first..last.saturating_sub(1) {
        let step_started = Instant::now();
        if p - start >= context {
            start = p + 1 - keep;
            cached = None;
        }
        let at = p - start;
        let logits = match (decoder.as_mut(), cached) {
            (Some(decoder), Some(c)) if c + 1 == p => {
                let ids: Vec<f32> = texts
                    .iter()
                    .map(|t| t.get(p).map_or(0.0, |&c| f32::from(c)))
                    .collect();
                model.decode(backend, decoder, &ids, at)?
            }
            (decoder, _) => {
                fill_windows(&texts, (start, p), context, &mut windows);
                window_passes += 1;
                let all = match decoder {
                    Some(decoder) => model.prefill(backend, decoder, &windows)?,
                    None => model.predict(backend, &windows)?,
                };
                // Each window's row `at`.
                (0..rows)
                    .flat_map(|b| {
                        let row = (b * context + at) * vocab;
                        all.get(row..row + vocab).unwrap_or_default().to_vec()
                    })
                    .collect()
            }
        };
        cached = decoder.is_some().then_some(p);
        let mut drew = false;
        for (b, text) in texts.iter_mut().enumerate() {
            // Still writing, and past its prompt.
            if text.len() == p + 1 && text.len() < ends[b] {
                let row = logits.get(b * vocab..(b + 1) * vocab).unwrap_or_default();
                text.push(draw(row, how.temperature, &mut rngs[b]));
                drew = true;
            }
        }
        if drew {
            steps.push(step_started.elapsed());
        }
    }
    let cache_bytes = decoder.as_ref().map_or(0, Decoder::cache_bytes);
    Ok(Generated {
        texts: texts
            .into_iter()
            .zip(prompts)
            .map(|(t, prompt)| t[prompt.len().max(1)..].to_vec())
            .collect(),
        elapsed: started.elapsed(),
        steps,
        window_passes,
        cache_bytes,
    })
}

/// `windows` (`[rows, context]`) set to each text's positions `start..=p` (a sequence shorter
/// than `p` repeats character 0, which nothing reads), zero after them.
fn fill_windows(
    texts: &[Vec<u16>],
    (start, p): (usize, usize),
    context: usize,
    windows: &mut [f32],
) {
    windows.fill(0.0);
    for (w, text) in windows.chunks_mut(context).zip(texts) {
        for (w, pos) in w.iter_mut().zip(start..=p) {
            *w = text.get(pos).map_or(0.0, |&c| f32::from(c));
        }
    }
}

/// Characters an evaluation writes.
pub const WRITING_CHARS: usize = 120;
/// The temperature an evaluation writes at.
pub const WRITING_TEMPERATURE: f32 = 0.8;
/// Characters of the validation text a prompt is.
const PROMPT_CHARS: usize = 8;

/// The text prompts and the attention maps' windows come from: the validation part, or the
/// training text where it has none.
fn validation_text(data: &crate::data::Dataset) -> &[f32] {
    if data.test_rows() > 0 {
        &data.test_x
    } else {
        &data.train_x
    }
}

/// `rows` prompts: the first characters of as many windows of `data`'s validation text (the
/// training text where it has none), in turn.
pub fn prompts(data: &crate::data::Dataset, rows: usize) -> Vec<Vec<u16>> {
    let pool = validation_text(data);
    let context = data.features.max(1);
    let windows = (pool.len() / context).max(1);
    (0..rows)
        .map(|r| {
            pool.iter()
                .skip((r % windows) * context)
                .take(PROMPT_CHARS.min(context))
                .map(|&v| v as u16)
                .collect()
        })
        .collect()
}

/// `ids` as the characters `names` (a text's vocabulary) gives them; an id past it as `�`.
pub fn spell(names: &[String], ids: &[u16]) -> String {
    ids.iter()
        .map(|&i| names.get(usize::from(i)).map_or("\u{fffd}", String::as_str))
        .collect()
}

/// Windows of the validation text an evaluation maps attention over, beside the model's own
/// writing.
pub const VALIDATION_SAMPLES: usize = 3;

/// What a language model with `params` writes after the first characters of `data`'s validation
/// part (seeded with `seed`), and every attention head's pattern over the last window of it and
/// over the first [`VALIDATION_SAMPLES`] windows of the validation text.
pub fn writing(
    backend: &mut dyn Backend,
    (spec, params): (&ModelSpec, &LayerValues),
    data: &crate::data::Dataset,
    seed: u64,
) -> Result<crate::train::report::Writing, BackendError> {
    use crate::train::report::{AttentionSample, SampleFrom, Writing};
    let (context, vocab) = (data.features, data.classes());
    let prompts = prompts(data, 1);
    let mut model = writer(backend, spec, params, 1)?;
    let how = Sampling {
        tokens: WRITING_CHARS,
        temperature: WRITING_TEMPERATURE,
        seed,
    };
    let written = generate(
        backend,
        &mut model,
        (context, vocab),
        &prompts,
        (how, false),
    )?;
    let prompt = &prompts[0];
    let all: Vec<u16> = prompt.iter().chain(written.ids()).copied().collect();
    let mut windows = vec![(
        SampleFrom::Written,
        all[all.len().saturating_sub(context)..].to_vec(),
    )];
    let text = validation_text(data);
    windows.extend(
        text.chunks_exact(context.max(1))
            .take(VALIDATION_SAMPLES)
            .enumerate()
            .map(|(k, w)| {
                let ids = w.iter().map(|&v| v as u16).collect();
                (SampleFrom::Validation(k + 1), ids)
            }),
    );
    let names = &data.class_names;
    let mut samples = Vec::with_capacity(windows.len());
    let mut heads = 0;
    for (from, window) in windows {
        let ids: Vec<f32> = window.iter().map(|&t| f32::from(t)).collect();
        let (maps, h) = model.attention_maps(backend, &ids)?;
        heads = h;
        // The rows and columns of the window's last characters (the padding after a short
        // window is not shown).
        let n = window.len();
        let first = n.saturating_sub(ATTENTION_SHOWN);
        let attention = maps
            .iter()
            .map(|full| {
                (first..n)
                    .flat_map(|i| full[i * context + first..i * context + n].to_vec())
                    .collect()
            })
            .collect();
        samples.push(AttentionSample {
            from,
            window: window[first..]
                .iter()
                .map(|&t| spell(names, &[t]))
                .collect(),
            attention,
        });
    }
    Ok(Writing {
        prompt: spell(names, prompt),
        text: spell(names, written.ids()),
        temperature: WRITING_TEMPERATURE,
        samples,
        heads,
    })
}

/// A character drawn from `softmax(logits / temperature)` (in f64), or the likeliest one at
/// temperature 0.
fn draw(logits: &[f32], temperature: f32, rng: &mut ChaCha8Rng) -> u16 {
    let likeliest = logits
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    // The draw is taken whatever the temperature, so the sequence of draws does not depend on it.
    let u: f64 = rng.random();
    if temperature <= 0.0 || !temperature.is_finite() {
        return likeliest as u16;
    }
    let max = f64::from(logits[likeliest]);
    let t = f64::from(temperature);
    let weights: Vec<f64> = logits
        .iter()
        .map(|&l| ((f64::from(l) - max) / t).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut at = u * total;
    for (i, w) in weights.iter().enumerate() {
        if at < *w {
            return i as u16;
        }
        at -= w;
    }
    likeliest as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Temperature 0 takes the likeliest; a high temperature spreads the draws; a very low one
    /// almost always takes the likeliest.
    #[test]
    fn draws_follow_the_softmax_of_the_tempered_logits() {
        let logits = [0.0f32, 2.0, 1.0];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(draw(&logits, 0.0, &mut rng), 1);
        let count = |t: f32| {
            let mut rng = ChaCha8Rng::seed_from_u64(2);
            let mut counts = [0usize; 3];
            for _ in 0..10_000 {
                counts[usize::from(draw(&logits, t, &mut rng))] += 1;
            }
            counts
        };
        // At temperature 1: e⁰, e², e¹ over their sum = 9.0%, 66.5%, 24.5%.
        let c = count(1.0);
        for (got, want) in c.iter().zip([0.090, 0.665, 0.245]) {
            assert!((*got as f64 / 10_000.0 - want).abs() < 0.015, "{c:?}");
        }
        assert!(count(0.05)[1] > 9_990);
    }
}
