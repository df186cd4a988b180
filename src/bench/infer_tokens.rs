//! Serving a language model: characters generated one at a time after a prompt, with and
//! without a key-value cache, for one prompt and for a batch of prompts at once, timed on the
//! host clock. Latency per character is what a reader waits between two characters; the
//! characters a second count every sequence of the batch.

use serde::Serialize;

use super::{median_of_sorted, percentile_of_sorted};
use crate::backend::{Backend, BackendError};
use crate::nn::LayerValues;
use crate::train::Session;
use crate::train::generate::{Sampling, generate, prompts, spell, writer};

/// Characters written untimed first (pipelines, the allocator).
const WARMUP_CHARS: usize = 4;

/// One way of generating, timed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Generation {
    /// Prompts written at once.
    pub prompts: usize,
    /// Whether the keys and values were kept between characters.
    pub kv_cache: bool,
    /// Characters written, every prompt together.
    pub tokens: usize,
    /// Characters written a second, every prompt together.
    pub tokens_per_s: f64,
    /// Median wait between two characters of one sequence, ms.
    pub p50_ms_per_token: f64,
    /// Its 99th percentile (nearest rank), ms.
    pub p99_ms_per_token: f64,
    /// Its interquartile range (nearest ranks), ms: the noise a comparison must exceed.
    pub iqr_ms_per_token: f64,
    /// Passes over a whole window of `T` positions.
    pub window_passes: usize,
    /// Bytes the key-value caches hold (0 without).
    pub cache_bytes: usize,
    /// What the first prompt's sequence became.
    pub text: String,
}

/// Times `tokens` characters after `rows` prompts with `trained` weights, for each of `caches`.
pub fn time_generation(
    backend: &mut dyn Backend,
    session: &Session,
    trained: &LayerValues,
    (rows, tokens): (usize, usize),
    caches: &[bool],
) -> Result<Vec<Generation>, BackendError> {
    let spec = session.config.model_spec(&session.data);
    let shape = (session.data.features, session.data.classes());
    let prompts = prompts(&session.data, rows);
    let mut model = writer(backend, &spec, trained, rows)?;
    let mut timed = Vec::with_capacity(caches.len());
    for &kv_cache in caches {
        let how = Sampling {
            tokens: WARMUP_CHARS,
            temperature: 0.8,
            seed: session.config.seed,
        };
        generate(backend, &mut model, shape, &prompts, (how, kv_cache))?;
        let how = Sampling { tokens, ..how };
        let written = generate(backend, &mut model, shape, &prompts, (how, kv_cache))?;
        let mut ms: Vec<f64> = written
            .steps
            .iter()
            .map(|d| d.as_secs_f64() * 1e3)
            .collect();
        ms.sort_by(f64::total_cmp);
        let names = &session.data.class_names;
        timed.push(Generation {
            prompts: rows,
            kv_cache,
            tokens: written.tokens(),
            tokens_per_s: written.tokens_per_s(),
            p50_ms_per_token: median_of_sorted(&ms),
            p99_ms_per_token: percentile_of_sorted(&ms, 0.99),
            iqr_ms_per_token: percentile_of_sorted(&ms, 0.75) - percentile_of_sorted(&ms, 0.25),
            window_passes: written.window_passes,
            cache_bytes: written.cache_bytes,
            text: spell(names, written.ids()),
        });
    }
    Ok(timed)
}

/// Whether every way of generating for the same prompts wrote the same first sequence.
pub fn same_text(runs: &[Generation]) -> bool {
    runs.iter().all(|a| {
        runs.iter()
            .filter(|b| b.prompts == a.prompts)
            .all(|b| b.text == a.text)
    })
}

/// What keeping the cache did to the wait per character, for one device and batch of prompts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheVerdict {
    /// The wait fell by more than the noise, this many times.
    Faster(f64),
    /// The wait rose by more than the noise.
    Slower,
    /// The change is inside the noise: too close to call on this machine.
    TooClose,
}

/// Smallest noise assumed between two timed medians, as a share of the larger (as the lessons'
/// verdicts assume: the machine drifts between two measurements more than either one's spread
/// shows).
const NOISE_FLOOR: f64 = 0.02;

/// The cache's effect from the medians `with` and `without` (ms a character), called only when
/// their difference exceeds the wider interquartile range (and the floor).
pub fn cache_verdict(with: &Generation, without: &Generation) -> CacheVerdict {
    let (w, wo) = (with.p50_ms_per_token, without.p50_ms_per_token);
    let noise = with
        .iqr_ms_per_token
        .max(without.iqr_ms_per_token)
        .max(NOISE_FLOOR * w.max(wo));
    if !(w > 0.0 && wo > 0.0) || (wo - w).abs() <= noise {
        CacheVerdict::TooClose
    } else if w < wo {
        CacheVerdict::Faster(wo / w)
    } else {
        CacheVerdict::Slower
    }
}
