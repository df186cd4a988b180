//! Text from a language model: the trained weights copied into a model of one row, then one
//! character at a time, each drawn from the softmax of the last position's logits (divided by
//! the temperature) with a seeded generator, so two devices whose weights agree write the same
//! text. Without a key-value cache: each new character runs the whole window again, as
//! nanoGPT's `generate` does.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::backend::{Backend, BackendError};
use crate::nn::{LayerValues, ModelSpec, Network, OptimizerKind, Training};
use crate::precision::Precision;

/// How to draw each character.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// Characters to write after the prompt.
    pub tokens: usize,
    /// The logits are divided by it; 0 takes the likeliest character every time.
    pub temperature: f32,
    /// Seeds the draws.
    pub seed: u64,
}

/// What a model wrote, and how long it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// The characters written after the prompt, as the vocabulary numbers them.
    pub ids: Vec<u16>,
    /// Wall time of the writing (every forward pass and its read-back).
    pub elapsed: Duration,
}

impl Generated {
    /// Characters written a second.
    pub fn tokens_per_s(&self) -> f64 {
        self.ids.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A model of `spec` that evaluates one sequence at a time, holding `params`.
pub fn writer(
    backend: &mut dyn Backend,
    spec: &ModelSpec,
    params: &LayerValues,
) -> Result<Network, BackendError> {
    let training = Training {
        optimizer: OptimizerKind::Sgd,
        batch: 1,
        seed: 0,
        precision: Precision::Fp32,
        eval_rows: 1,
    };
    let mut model = Network::with_precision(backend, spec, training)?;
    model.write_parameters(backend, params)?;
    Ok(model)
}

/// `how.tokens` characters after `prompt` from `model` (made by [`writer`]) over windows of
/// `context` characters: the prompt and what follows it, cropped to the last `context`, set at
/// the first positions (the causal mask keeps the padding after them from mattering), and the
/// next character drawn from the last one's logits.
pub fn generate(
    backend: &mut dyn Backend,
    model: &mut Network,
    (context, vocab): (usize, usize),
    prompt: &[u16],
    how: Sampling,
) -> Result<Generated, BackendError> {
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(how.seed);
    let mut text: Vec<u16> = prompt.to_vec();
    if text.is_empty() {
        text.push(0);
    }
    let mut window = vec![0.0f32; context];
    let mut ids = Vec::with_capacity(how.tokens);
    for _ in 0..how.tokens {
        let start = text.len().saturating_sub(context);
        let seen = &text[start..];
        window.fill(0.0);
        for (w, &t) in window.iter_mut().zip(seen) {
            *w = f32::from(t);
        }
        let logits = model.predict(backend, &window)?;
        let last = seen.len() - 1;
        let row = logits
            .get(last * vocab..(last + 1) * vocab)
            .unwrap_or_default();
        let next = draw(row, how.temperature, &mut rng);
        ids.push(next);
        text.push(next);
    }
    Ok(Generated {
        ids,
        elapsed: started.elapsed(),
    })
}

/// Characters an evaluation writes.
pub const WRITING_CHARS: usize = 120;
/// The temperature an evaluation writes at.
pub const WRITING_TEMPERATURE: f32 = 0.8;
/// Characters of the validation text an evaluation's writing starts from.
const PROMPT_CHARS: usize = 8;

/// What a language model with `params` writes after the first characters of `data`'s validation
/// part (seeded with `seed`), and its first attention head's pattern over the last window.
pub fn writing(
    backend: &mut dyn Backend,
    (spec, params): (&ModelSpec, &LayerValues),
    data: &crate::data::Dataset,
    seed: u64,
) -> Result<crate::train::report::Writing, BackendError> {
    let (context, vocab) = (data.features, data.classes());
    let prompt: Vec<u16> = data
        .test_x
        .iter()
        .chain(&data.train_x)
        .take(PROMPT_CHARS.min(context))
        .map(|&v| v as u16)
        .collect();
    let mut model = writer(backend, spec, params)?;
    let how = Sampling {
        tokens: WRITING_CHARS,
        temperature: WRITING_TEMPERATURE,
        seed,
    };
    let written = generate(backend, &mut model, (context, vocab), &prompt, how)?;
    let all: Vec<u16> = prompt.iter().chain(&written.ids).copied().collect();
    let window = &all[all.len().saturating_sub(context)..];
    let ids: Vec<f32> = window.iter().map(|&t| f32::from(t)).collect();
    let n = window.len();
    let attention = model
        .attention_map(backend, &ids, (0, 0))?
        .map(|full| {
            // The window's own rows and columns (the padding after it is not shown).
            (0..n)
                .flat_map(|i| full[i * context..i * context + n].to_vec())
                .collect()
        })
        .unwrap_or_default();
    let name = |t: &u16| {
        data.class_names
            .get(usize::from(*t))
            .cloned()
            .unwrap_or_else(|| "\u{fffd}".to_owned())
    };
    Ok(crate::train::report::Writing {
        prompt: prompt.iter().map(name).collect(),
        text: written.ids.iter().map(name).collect(),
        temperature: WRITING_TEMPERATURE,
        window: window.iter().map(name).collect(),
        attention,
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
