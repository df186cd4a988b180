//! Choosing the matrix-product kernel by timing every variant on this adapter, and keeping the
//! choice per adapter and driver in a small JSON file in the user's data directory.
//!
//! Which tile and block sizes are fastest depends on the GPU: its registers per invocation,
//! workgroup memory and how its compiler schedules the loops (a software adapter runs them on
//! the CPU's vector units). Limits alone cannot say, so each variant this adapter runs computes
//! the same square products, timed by the GPU's timestamps where the adapter has them, and the
//! fastest is used for every large product from then on. The sizes grow from 256³ while a call
//! stays short, so a fast GPU is timed on products near its real work and a software adapter
//! is done in about a second.

use std::path::Path;
use web_time::Instant;

use serde::{Deserialize, Serialize};

use super::GpuBackend;
use crate::backend::error::BackendError;
use crate::backend::identity::{AdapterSummary, MatmulChoice, MatmulTuning, TuningNote};
use crate::backend::params::Activation;
use crate::backend::traits::{ComputeOps, DeviceMemory};

/// Square sizes timed, smallest first; the next is tried while the slowest variant's call took
/// less than [`GROW_WHILE_S`].
const SIZES: [usize; 4] = [256, 512, 1024, 2048];
const GROW_WHILE_S: f64 = 0.03;
/// Timed calls per variant and size (after one untimed call): the median is kept.
const REPS: usize = 3;
/// Adapters one cache file remembers (the most recently tuned).
const MAX_ENTRIES: usize = 32;

/// What the tuning is kept under: the same GPU with another driver version is timed again.
pub fn tuning_key(adapter: &AdapterSummary) -> String {
    format!(
        "{} | {} | {} | {}",
        adapter.name, adapter.backend, adapter.driver, adapter.driver_info
    )
}

/// Gives `adapter` the kernels `tuning` chose, if it was made for this adapter and driver and its
/// choice runs there; says whether it did. (The one place a tuning is applied: to a backend's
/// adapter, and to the adapters `devices` lists.)
pub fn apply_tuning(adapter: &mut AdapterSummary, tuning: &MatmulTuning) -> bool {
    if tuning.key != tuning_key(adapter) || !adapter.matmul_variants.contains(tuning.chosen) {
        return false;
    }
    adapter.kernel_sizes.matmul = tuning.chosen;
    adapter.kernel_sizes.split_k = tuning.split_k;
    adapter.matmul_tuning = Some(Box::new(tuning.clone()));
    true
}

impl GpuBackend {
    /// The matrix-product variants compiled for this adapter, in [`MatmulChoice::ALL`] order.
    pub fn matmul_variants(&self) -> Vec<MatmulChoice> {
        std::iter::once(MatmulChoice::OnePerInvocation)
            .chain(self.stream.kernels().tiled_variants())
            .collect()
    }

    /// Runs the large products with `choice` from now on (an error if this adapter cannot).
    pub fn set_matmul(&mut self, choice: MatmulChoice) -> Result<(), BackendError> {
        if !self.matmul_variants().contains(&choice) {
            return Err(BackendError::Setup(format!(
                "the matrix-product kernel “{}” does not run on {}",
                choice.as_str(),
                self.summary.name
            )));
        }
        self.stream.sizes.matmul = choice;
        self.summary.kernel_sizes.matmul = choice;
        Ok(())
    }

    /// Splits thin weight gradients along `k` from now on, or not.
    pub fn set_split_k(&mut self, on: bool) {
        self.stream.sizes.split_k = on;
        self.summary.kernel_sizes.split_k = on;
    }

    /// Uses a tuning made earlier (from the cache) if it was made for this adapter and driver
    /// and its choice runs here; says whether it did.
    pub fn use_tuning(&mut self, tuning: &MatmulTuning) -> bool {
        if !apply_tuning(&mut self.summary, tuning) {
            return false;
        }
        self.stream.sizes = self.summary.kernel_sizes;
        true
    }

    /// Times every variant on square products and runs the fastest from now on.
    pub fn tune_matmul(&mut self) -> Result<MatmulTuning, BackendError> {
        let variants = self.matmul_variants();
        let was = self.stream.sizes.matmul;
        let split_rates = self.time_split()?;
        let mut timed = None;
        for &n in &SIZES {
            let x = self.filled("tune x", n, n)?;
            let w = self.filled("tune w", n, n)?;
            let b = self.zeros("tune b", 1, n)?;
            let mut out = self.zeros("tune out", n, n)?;
            let mut rates = Vec::new();
            let mut slowest: f64 = 0.0;
            for &variant in &variants {
                self.set_matmul(variant)?;
                let seconds = self.time_passes(&mut |gpu| {
                    gpu.linear_forward(&x, &w, &b, Activation::Relu, &mut out)
                })?;
                slowest = slowest.max(seconds);
                rates.push((variant, 2.0 * (n as f64).powi(3) / seconds / 1e9));
            }
            timed = Some((n, rates));
            if slowest >= GROW_WHILE_S {
                break;
            }
        }
        self.release_cached()?;
        if let Some(ts) = self.stream.timestamps.as_mut() {
            ts.forget_steps();
        }
        self.set_matmul(was)?;
        // The largest size timed decides.
        let (size, rates) = timed.ok_or_else(|| BackendError::Setup("no size was timed".into()))?;
        let chosen = rates
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(was, |r| r.0);
        let tuning = MatmulTuning {
            key: tuning_key(&self.summary),
            chosen,
            size,
            rates,
            split_k: split_rates[1] > split_rates[0],
            split_rates,
            gpu_timestamps: self.stream.timestamps.is_some(),
            tuned_at_s: web_time::SystemTime::now()
                .duration_since(web_time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        if !self.use_tuning(&tuning) {
            return Err(BackendError::Setup(format!(
                "the kernel timed fastest, “{}”, could not be used",
                chosen.as_str()
            )));
        }
        Ok(tuning)
    }

    /// A thin weight gradient's GFLOP/s unsplit and split along `k` (the shape of a 3×3
    /// convolution's of 8 into 16 channels over 16,384 pixels, 72 × 16 outputs, read as a
    /// stored matrix); the split setting is kept.
    fn time_split(&mut self) -> Result<[f64; 2], BackendError> {
        const ROWS: usize = 16_384;
        let (m, n) = (72, 16);
        let x = self.filled("tune x", ROWS, m)?;
        let dz = self.filled("tune dz", ROWS, n)?;
        let mut dw = self.zeros("tune dw", m, n)?;
        let mut db = self.zeros("tune db", 1, n)?;
        let was = self.stream.sizes.split_k;
        let mut rates = [0.0; 2];
        for (split, rate) in [false, true].into_iter().zip(&mut rates) {
            self.set_split_k(split);
            let seconds =
                self.time_passes(&mut |gpu| gpu.linear_backward_params(&x, &dz, &mut dw, &mut db))?;
            *rate = 2.0 * (ROWS * m * n) as f64 / seconds / 1e9;
        }
        self.set_split_k(was);
        Ok(rates)
    }

    /// Median seconds of [`REPS`] calls of `op`, each waited for, after one untimed call: the
    /// GPU's own time for its kernels where it has timestamps, else the host's from submission
    /// to completion.
    fn time_passes(
        &mut self,
        op: &mut dyn FnMut(&mut Self) -> Result<(), BackendError>,
    ) -> Result<f64, BackendError> {
        let mut times = Vec::with_capacity(REPS);
        for rep in 0..=REPS {
            let timed_before = self.stream.timestamps.as_ref().map(|ts| ts.on);
            if let Some(ts) = self.stream.timestamps.as_mut() {
                ts.on = true;
            }
            let start = Instant::now();
            op(self)?;
            self.stream.finish(&mut self.recorder)?;
            let host = start.elapsed().as_secs_f64();
            let gpu = match self.stream.timestamps.as_mut() {
                Some(ts) => {
                    ts.on = timed_before.unwrap_or(false);
                    let passes = ts.collect(&self.stream.device)?;
                    let ns: f64 = passes.iter().map(|p| p.gpu_ns[1] - p.gpu_ns[0]).sum();
                    (ns > 0.0).then_some(ns * 1e-9)
                }
                None => None,
            };
            if rep > 0 {
                times.push(gpu.unwrap_or(host));
            }
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}

/// The tunings kept in the user's data directory, one per adapter and driver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TuningCache {
    pub adapters: Vec<MatmulTuning>,
}

impl TuningCache {
    /// Reads the cache at `path`: empty when there is none; empty with the reason when it cannot
    /// be read or is not one this app wrote (then the variants are timed again and the file
    /// replaced).
    pub fn load(path: &Path) -> (Self, Option<TuningNote>) {
        let problem = |why: String| {
            Some(TuningNote::Unreadable {
                path: path.display().to_string(),
                why,
            })
        };
        if std::fs::symlink_metadata(path).is_err() {
            return (Self::default(), None);
        }
        // The one door for a user's files: a named pipe or a device here would otherwise block
        // every GPU start, or fill the memory.
        let text = match crate::files::read_text(path, crate::files::FileKind::KernelCache) {
            Ok(text) => text,
            Err(why) => return (Self::default(), problem(why.to_string())),
        };
        match serde_json::from_str::<Self>(&text) {
            Ok(cache) => (cache, None),
            Err(e) => {
                let why = crate::files::parse_error_at_line(
                    &path.display().to_string(),
                    &text,
                    e.line(),
                    e.column(),
                    &e.to_string(),
                );
                (Self::default(), problem(why.to_string()))
            }
        }
    }

    /// The tuning kept for `key`.
    pub fn find(&self, key: &str) -> Option<&MatmulTuning> {
        self.adapters.iter().find(|t| t.key == key)
    }

    /// Keeps `tuning`, replacing the one of the same key, and drops the oldest past
    /// `MAX_ENTRIES` (32).
    pub fn put(&mut self, tuning: MatmulTuning) {
        self.adapters.retain(|t| t.key != tuning.key);
        self.adapters.push(tuning);
        let over = self.adapters.len().saturating_sub(MAX_ENTRIES);
        self.adapters.drain(..over);
    }

    /// Writes the cache to `path` (its directory made if missing), whole or not at all.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        crate::files::write_atomic(path, text.as_bytes()).map_err(|e| e.to_string())
    }
}

/// Gives `gpu` the tuning kept in the cache at `path` for its adapter, or times the variants
/// (always when `retune`) and keeps the result there. Returns what the user should know: a cache
/// that could not be read or written (the tuning still applies to this run).
pub fn apply_or_tune(gpu: &mut GpuBackend, path: &Path, retune: bool) -> Vec<TuningNote> {
    let (mut cache, problem) = TuningCache::load(path);
    let mut notes: Vec<TuningNote> = problem.into_iter().collect();
    let key = tuning_key(gpu.adapter());
    if !retune && cache.find(&key).is_some_and(|t| gpu.use_tuning(t)) {
        return notes;
    }
    match gpu.tune_matmul() {
        Ok(tuning) => {
            cache.put(tuning);
            if let Err(why) = cache.save(path) {
                notes.push(TuningNote::NotSaved { why });
            }
        }
        Err(e) => notes.push(TuningNote::TimingFailed { why: e.to_string() }),
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuning(key: &str, chosen: MatmulChoice) -> MatmulTuning {
        MatmulTuning {
            key: key.to_owned(),
            chosen,
            size: 256,
            rates: vec![(MatmulChoice::OnePerInvocation, 1.0), (chosen, 2.0)],
            split_k: true,
            split_rates: [1.0, 2.0],
            gpu_timestamps: true,
            tuned_at_s: 1,
        }
    }

    #[test]
    fn the_cache_round_trips_and_survives_a_bad_file() {
        let dir = std::env::temp_dir().join(format!("batchscope-tuning-{}", std::process::id()));
        let path = dir.join("gpu-kernels.json");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(TuningCache::load(&path), (TuningCache::default(), None));
        let mut cache = TuningCache::default();
        cache.put(tuning("a", MatmulChoice::Blocks4x4));
        cache.put(tuning("b", MatmulChoice::Blocks8x8));
        cache.put(tuning("a", MatmulChoice::Blocks8x4));
        assert_eq!(cache.adapters.len(), 2);
        assert_eq!(
            cache.find("a").map(|t| t.chosen),
            Some(MatmulChoice::Blocks8x4)
        );
        cache.save(&path).expect("save");
        assert_eq!(TuningCache::load(&path), (cache, None));
        std::fs::write(&path, "{\"adapters\": [{\"key\": 3}]}").expect("write");
        let (empty, problem) = TuningCache::load(&path);
        assert!(empty.adapters.is_empty());
        assert!(problem.is_some_and(|p| p.to_string().contains("timed again")));
        let mut many = TuningCache::default();
        for i in 0..MAX_ENTRIES + 5 {
            many.put(tuning(&i.to_string(), MatmulChoice::Blocks4x4));
        }
        assert_eq!(many.adapters.len(), MAX_ENTRIES);
        assert!(many.find("0").is_none() && many.find("36").is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
