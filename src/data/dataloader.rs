//! The training data loader: real threads doing real per-sample work, as PyTorch's `DataLoader`
//! does with `num_workers`, `prefetch_factor` and a `collate_fn`.
//!
//! Batch `k` of the run is made by worker `k mod W` (or by the training thread when there are no
//! workers) in four stages: a read (with an optional storage delay, which is simulated and says
//! so), decode (samples stored deflate-compressed are inflated back to `f32`; stored plain they
//! are copied), augmentation (noise, flips, shifts), and collation into one contiguous batch.
//! Each worker keeps up to `prefetch` finished batches in a bounded queue, and the training
//! thread takes them in order, so the batches — and the training — are the same whatever the
//! number of workers. Shuffling and augmentation are seeded by the epoch and the sample.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Duration;
use web_time::Instant;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::dataset::{Dataset, ImageShape};
use crate::setting::SettingError;
use crate::trace::{Category, Clock, Lane, Recorder, Span, ns_since};

/// Most loader worker threads.
pub const MAX_WORKERS: usize = 16;
/// Most batches queued per worker.
pub const MAX_PREFETCH: usize = 16;
/// Longest simulated storage delay per batch, in ms.
pub const MAX_STORAGE_LATENCY_MS: f32 = 1000.0;
/// Most bytes of finished batches the workers' queues may hold together.
pub const MAX_QUEUED_BYTES: u64 = 1 << 30;

/// Largest shift of image augmentation, in pixels.
pub const MAX_SHIFT_PX: u8 = 4;
/// Largest augmentation noise (standard deviation).
pub const MAX_AUGMENT_NOISE: f32 = 1.0;

/// Random changes to each training sample (PyTorch's `transforms`). They change what the model
/// sees, so both devices must use the same ones: they are part of the training settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Augment {
    /// Standard deviation of Gaussian noise added to every feature (0: none).
    pub noise: f32,
    /// Mirror images left to right with probability ½ (image data only).
    pub flip: bool,
    /// Shift images by up to this many pixels in each direction, repeating the edge (images only).
    pub shift_px: u8,
}

impl Augment {
    /// Whether any change is made.
    pub fn is_active(&self) -> bool {
        self.noise > 0.0 || self.flip || self.shift_px > 0
    }

    /// Checks the ranges; the message names the setting and its limit.
    pub fn validate(&self) -> Result<(), SettingError> {
        if !(self.noise.is_finite() && (0.0..=MAX_AUGMENT_NOISE).contains(&self.noise)) {
            return Err(SettingError::AugmentNoise {
                value: self.noise,
                max: MAX_AUGMENT_NOISE,
            });
        }
        if self.shift_px > MAX_SHIFT_PX {
            return Err(SettingError::AugmentShift {
                value: self.shift_px,
                max: MAX_SHIFT_PX,
            });
        }
        Ok(())
    }
}

/// How the loader runs: settings that change the speed of training, never its numbers, so they
/// can change while a model trains.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoaderConfig {
    /// Worker threads (0: the training thread makes each batch when it needs it).
    pub workers: usize,
    /// Finished batches each worker may keep waiting (PyTorch's `prefetch_factor`).
    pub prefetch: usize,
    /// A delay before each batch's read, standing in for slow storage (simulated), in ms.
    pub storage_latency_ms: f32,
    /// Keep samples deflate-compressed in memory and inflate each one when it is loaded, as a
    /// real loader decodes PNG or JPEG files; otherwise samples are stored as `f32`.
    pub compressed: bool,
}

impl Default for LoaderConfig {
    fn default() -> Self {
        Self {
            workers: 0,
            prefetch: 2,
            storage_latency_ms: 0.0,
            compressed: false,
        }
    }
}

impl LoaderConfig {
    /// Checks that the queues cannot hold more than [`MAX_QUEUED_BYTES`] of batches of
    /// `batch_bytes` each.
    pub fn check_queues(&self, batch_bytes: u64) -> Result<(), SettingError> {
        let queued = (self.workers * self.prefetch) as u64 * batch_bytes;
        if queued > MAX_QUEUED_BYTES {
            return Err(SettingError::QueuedBatches {
                workers: self.workers,
                prefetch: self.prefetch,
                batch_bytes,
                queued_bytes: queued,
                max_bytes: MAX_QUEUED_BYTES,
            });
        }
        Ok(())
    }

    /// Checks the ranges; the message names the setting and its limit.
    pub fn validate(&self) -> Result<(), SettingError> {
        if self.workers > MAX_WORKERS {
            return Err(SettingError::LoaderWorkers {
                value: self.workers,
                max: MAX_WORKERS,
            });
        }
        if self.prefetch == 0 || self.prefetch > MAX_PREFETCH {
            return Err(SettingError::PrefetchDepth {
                value: self.prefetch,
                max: MAX_PREFETCH,
            });
        }
        if !(self.storage_latency_ms.is_finite()
            && (0.0..=MAX_STORAGE_LATENCY_MS).contains(&self.storage_latency_ms))
        {
            return Err(SettingError::StorageLatency {
                ms: self.storage_latency_ms,
                max_ms: MAX_STORAGE_LATENCY_MS,
            });
        }
        Ok(())
    }
}

/// The training rows as the loader stores them.
enum Stored {
    /// `[rows, features]` as `f32`: decoding is a copy.
    Plain,
    /// Each row's `f32` bytes, deflate-compressed.
    Deflate(Vec<Box<[u8]>>),
}

/// What every worker reads: the data set and its stored form.
struct Source {
    data: Arc<Dataset>,
    batch: usize,
    seed: u64,
    augment: Augment,
    stored: Stored,
}

/// One batch, collated: `x` is `[batch, features]` row-major, `y` a target per row.
#[derive(Debug)]
pub struct Batch {
    /// 0-based index of the batch in the run (the step it feeds is `index + 1`).
    pub index: u64,
    /// Full passes over the training set before this batch.
    pub epoch: u64,
    /// Features.
    pub x: Vec<f32>,
    /// Targets.
    pub y: Vec<f32>,
    /// Loader spans of this batch (when recording).
    spans: Vec<Span>,
}

/// The order of the training rows in `epoch`: a seeded shuffle of its own per epoch.
pub fn epoch_order(seed: u64, epoch: u64, rows: usize) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(
        seed ^ 0x5eed_0fba_7c00 ^ epoch.wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
    let mut order: Vec<usize> = (0..rows).collect();
    order.shuffle(&mut rng);
    order
}

/// Spans a batch-maker writes: the lane, the clock's epoch, whether to keep them at all.
struct Stamp<'a> {
    lane: Lane,
    epoch: Instant,
    recording: bool,
    spans: &'a mut Vec<Span>,
    step: u64,
}

impl Stamp<'_> {
    fn now(&self) -> u64 {
        if self.recording {
            ns_since(self.epoch)
        } else {
            0
        }
    }

    fn span(&mut self, name: &'static str, start_ns: u64, bytes: u64) {
        if self.recording {
            self.spans.push(Span {
                lane: self.lane,
                category: Category::DataLoader,
                name,
                start_ns,
                duration_ns: ns_since(self.epoch).saturating_sub(start_ns),
                bytes,
                step: self.step,
                clock: Clock::Host,
            });
        }
    }
}

impl Source {
    fn batches_per_epoch(&self) -> u64 {
        (self.data.train_rows() / self.batch).max(1) as u64
    }

    /// Makes batch `index` (reads, decodes, augments, collates), stamping its stages.
    fn make(
        &self,
        index: u64,
        orders: &mut (u64, Vec<usize>),
        latency: Duration,
        stamp: &mut Stamp<'_>,
    ) -> Batch {
        let per_epoch = self.batches_per_epoch();
        let epoch = index / per_epoch;
        if orders.0 != epoch || orders.1.is_empty() {
            *orders = (epoch, epoch_order(self.seed, epoch, self.data.train_rows()));
        }
        let first = (index % per_epoch) as usize * self.batch;
        let rows = &orders.1[first..first + self.batch];
        let f = self.data.features;
        let sample_bytes = (f * 4) as u64;

        let t = stamp.now();
        if !latency.is_zero() {
            std::thread::sleep(latency);
            stamp.span("storage read (simulated delay)", t, 0);
        }

        // Each sample is decoded straight into its row of the batch: the stacking a collate
        // step would copy again (1.6 MB for 512 MNIST images, 0.11 ms of a 3.3 ms step on this
        // machine) is done as the samples arrive, and collation gathers their labels.
        let t = stamp.now();
        let mut x = Vec::with_capacity(self.batch * f);
        for &row in rows {
            self.decode_onto(row, &mut x);
        }
        let stored_bytes = match &self.stored {
            Stored::Plain => sample_bytes * self.batch as u64,
            Stored::Deflate(blobs) => rows.iter().map(|&r| blobs[r].len() as u64).sum(),
        };
        stamp.span(
            match self.stored {
                Stored::Plain => "decode (copy f32 samples)",
                Stored::Deflate(_) => "decode (inflate samples)",
            },
            t,
            stored_bytes,
        );

        if self.augment.is_active() {
            let t = stamp.now();
            for (sample, &row) in x.chunks_exact_mut(f).zip(rows) {
                augment(sample, self.augment, self.data.image, self.seed, epoch, row);
            }
            stamp.span("augment", t, sample_bytes * self.batch as u64);
        }

        let t = stamp.now();
        let per = self.data.targets_per_row();
        let mut y = Vec::with_capacity(self.batch * per);
        for &row in rows {
            y.extend_from_slice(&self.data.train_y[row * per..(row + 1) * per]);
        }
        stamp.span("collate", t, (per * 4 * self.batch) as u64);
        Batch {
            index,
            epoch,
            x,
            y,
            spans: Vec::new(),
        }
    }

    /// Appends row `row`'s features to `x`.
    fn decode_onto(&self, row: usize, x: &mut Vec<f32>) {
        let f = self.data.features;
        let plain = &self.data.train_x[row * f..(row + 1) * f];
        match &self.stored {
            Stored::Plain => x.extend_from_slice(plain),
            Stored::Deflate(blobs) => {
                let mut bytes = Vec::with_capacity(f * 4);
                let inflated = flate2::read::DeflateDecoder::new(&blobs[row][..])
                    .read_to_end(&mut bytes)
                    .is_ok();
                if inflated && bytes.len() == f * 4 {
                    x.extend(
                        bytes
                            .chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                    );
                } else {
                    // Unreachable: the blobs were compressed from these very rows.
                    x.extend_from_slice(plain);
                }
            }
        }
    }
}

/// Applies `augment` to one sample, with a generator seeded by the epoch and the row so the
/// result does not depend on which thread made the batch.
fn augment(
    sample: &mut [f32],
    augment: Augment,
    image: Option<ImageShape>,
    seed: u64,
    epoch: u64,
    row: usize,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(
        seed ^ 0xa06_0e47
            ^ epoch.rotate_left(32)
            ^ (row as u64).wrapping_mul(0x2545_f491_4f6c_dd1d),
    );
    if let Some(shape) = image.filter(|s| s.len() == sample.len()) {
        let flip = augment.flip && rng.random_bool(0.5);
        let s = i32::from(augment.shift_px);
        let (dx, dy) = if s > 0 {
            (rng.random_range(-s..=s), rng.random_range(-s..=s))
        } else {
            (0, 0)
        };
        if flip || dx != 0 || dy != 0 {
            let source = sample.to_vec();
            let (w, h, c) = (shape.width as i32, shape.height as i32, shape.channels);
            for yy in 0..h {
                for xx in 0..w {
                    // Output pixel (xx, yy) reads the shifted (and mirrored) input pixel, the
                    // nearest edge pixel where that falls outside.
                    let sx = (xx - dx).clamp(0, w - 1);
                    let sx = if flip { w - 1 - sx } else { sx };
                    let sy = (yy - dy).clamp(0, h - 1);
                    let to = (yy * w + xx) as usize * c;
                    let from = (sy * w + sx) as usize * c;
                    sample[to..to + c].copy_from_slice(&source[from..from + c]);
                }
            }
        }
    }
    if augment.noise > 0.0 {
        for v in sample.iter_mut() {
            let z: f32 = StandardNormal.sample(&mut rng);
            *v += augment.noise * z;
        }
    }
}

/// One worker thread's queue.
struct WorkerQueue {
    batches: Receiver<Batch>,
}

/// Makes the batches of a run, on worker threads or on the calling thread.
pub struct BatchLoader {
    source: Arc<Source>,
    config: LoaderConfig,
    epoch_clock: Instant,
    recording: Arc<AtomicBool>,
    /// Raised when the loader is dropped or rebuilt, so its workers stop.
    stop: Arc<AtomicBool>,
    queues: Vec<WorkerQueue>,
    /// Index of the next batch to hand out.
    next: u64,
    /// The order of the current epoch, for batches made on the calling thread.
    orders: (u64, Vec<usize>),
}

impl BatchLoader {
    /// A loader over `data`'s training rows in batches of `batch`, starting at batch `next`,
    /// stamping spans against `epoch_clock` while `recording` is raised.
    pub fn new(
        data: Arc<Dataset>,
        batch: usize,
        seed: u64,
        augment: Augment,
        config: LoaderConfig,
        epoch_clock: Instant,
        recording: Arc<AtomicBool>,
    ) -> std::io::Result<Self> {
        let stored = if config.compressed {
            Stored::Deflate(compress_rows(&data))
        } else {
            Stored::Plain
        };
        let source = Arc::new(Source {
            data,
            batch,
            seed,
            augment,
            stored,
        });
        let mut loader = Self {
            source,
            config,
            epoch_clock,
            recording,
            stop: Arc::new(AtomicBool::new(false)),
            queues: Vec::new(),
            next: 0,
            orders: (0, Vec::new()),
        };
        loader.start_workers()?;
        Ok(loader)
    }

    /// The settings it runs with.
    pub fn config(&self) -> LoaderConfig {
        self.config
    }

    /// Index of the next batch.
    pub fn position(&self) -> u64 {
        self.next
    }

    /// Full passes over the training set before the next batch.
    pub fn epoch(&self) -> u64 {
        self.next / self.source.batches_per_epoch()
    }

    /// Runs with new settings from the next batch on (the batches stay the same).
    pub fn reconfigure(&mut self, config: LoaderConfig) -> std::io::Result<()> {
        if config == self.config {
            return Ok(());
        }
        self.stop.store(true, Ordering::Relaxed);
        self.queues.clear();
        if config.compressed != self.config.compressed {
            let source = Source {
                data: Arc::clone(&self.source.data),
                batch: self.source.batch,
                seed: self.source.seed,
                augment: self.source.augment,
                stored: if config.compressed {
                    Stored::Deflate(compress_rows(&self.source.data))
                } else {
                    Stored::Plain
                },
            };
            self.source = Arc::new(source);
        }
        self.config = config;
        self.stop = Arc::new(AtomicBool::new(false));
        self.start_workers()
    }

    fn start_workers(&mut self) -> std::io::Result<()> {
        let workers = self.config.workers as u64;
        for w in 0..workers {
            let (tx, rx) = sync_channel(self.config.prefetch.max(1));
            let worker = Worker {
                source: Arc::clone(&self.source),
                lane: Lane::Loader(w as u16),
                first: self.next + w,
                stride: workers,
                latency: latency(self.config),
                epoch_clock: self.epoch_clock,
                recording: Arc::clone(&self.recording),
                stop: Arc::clone(&self.stop),
            };
            std::thread::Builder::new()
                .name(format!("loader-{w}"))
                .spawn(move || worker.run(&tx))?;
            self.queues.push(WorkerQueue { batches: rx });
        }
        Ok(())
    }

    /// The next batch: waited for from its worker, or made here. The time it took is recorded
    /// on the training thread's lane as `DataLoader` time, and the worker's stages on its lane.
    pub fn next_batch(&mut self, recorder: &mut Recorder) -> Batch {
        let index = self.next;
        self.next += 1;
        let step = index + 1;
        let start = recorder.now_ns();
        if !self.queues.is_empty() {
            let slot = (index % self.queues.len() as u64) as usize;
            if let Ok(mut batch) = self.queues[slot].batches.recv() {
                recorder.span(Lane::Main, Category::DataLoader, "wait for batch", start, 0);
                for span in batch.spans.drain(..) {
                    recorder.push(span);
                }
                return batch;
            }
            // A worker can only be gone if its thread died; make the batch here instead.
        }
        let mut spans = Vec::new();
        let mut stamp = Stamp {
            lane: Lane::Main,
            epoch: recorder.epoch(),
            recording: recorder.enabled(),
            spans: &mut spans,
            step,
        };
        let batch = self
            .source
            .make(index, &mut self.orders, latency(self.config), &mut stamp);
        for span in spans {
            recorder.push(span);
        }
        batch
    }
}

impl Drop for BatchLoader {
    fn drop(&mut self) {
        // The workers see the flag (or their closed queue) and end on their own; joining them
        // here could wait out a simulated storage delay on the training thread.
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn latency(config: LoaderConfig) -> Duration {
    Duration::from_secs_f64(f64::from(config.storage_latency_ms.max(0.0)) / 1e3)
}

/// Deflate-compresses each training row's `f32` bytes.
fn compress_rows(data: &Dataset) -> Vec<Box<[u8]>> {
    use rayon::prelude::*;
    use std::io::Write;
    let f = data.features.max(1);
    data.train_x
        .par_chunks(f)
        .map(|row| {
            let mut encoder =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            let bytes: &[u8] = bytemuck::cast_slice(row);
            // Writing to a Vec cannot fail.
            let _ = encoder.write_all(bytes);
            encoder.finish().unwrap_or_default().into_boxed_slice()
        })
        .collect()
}

/// A loader worker: makes every `stride`-th batch from `first` on until told to stop.
struct Worker {
    source: Arc<Source>,
    lane: Lane,
    first: u64,
    stride: u64,
    latency: Duration,
    epoch_clock: Instant,
    recording: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Worker {
    fn run(self, queue: &SyncSender<Batch>) {
        let mut orders = (0, Vec::new());
        let mut index = self.first;
        while !self.stop.load(Ordering::Relaxed) {
            let mut spans = Vec::new();
            let mut stamp = Stamp {
                lane: self.lane,
                epoch: self.epoch_clock,
                recording: self.recording.load(Ordering::Relaxed),
                spans: &mut spans,
                step: index + 1,
            };
            let mut batch = self
                .source
                .make(index, &mut orders, self.latency, &mut stamp);
            batch.spans = spans;
            // Blocks while the queue is full; fails once the loader is gone.
            if queue.send(batch).is_err() {
                return;
            }
            index += self.stride;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DatasetSpec, Synthetic};

    fn data() -> Arc<Dataset> {
        let spec = DatasetSpec {
            kind: Synthetic::Spiral,
            samples: 200,
            ..DatasetSpec::default()
        };
        Arc::new(Dataset::generate(&spec).unwrap_or_else(|e| panic!("{e}")))
    }

    fn batches(config: LoaderConfig, augment: Augment, n: usize) -> Vec<(Vec<f32>, Vec<f32>)> {
        let mut recorder = Recorder::default();
        let mut loader = BatchLoader::new(
            data(),
            16,
            7,
            augment,
            config,
            Instant::now(),
            Arc::new(AtomicBool::new(false)),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        (0..n)
            .map(|_| {
                let b = loader.next_batch(&mut recorder);
                (b.x, b.y)
            })
            .collect()
    }

    #[test]
    fn workers_compression_and_prefetch_do_not_change_the_batches() {
        let augment = Augment {
            noise: 0.1,
            ..Augment::default()
        };
        // 30 batches of 16 from 160 training rows: three epochs, each reshuffled.
        let plain = batches(LoaderConfig::default(), augment, 30);
        let threaded = batches(
            LoaderConfig {
                workers: 3,
                prefetch: 1,
                compressed: true,
                ..LoaderConfig::default()
            },
            augment,
            30,
        );
        assert_eq!(plain, threaded);
        // Each epoch uses every row once: the targets of epoch 0 and 1 are permutations.
        let targets = |epoch: usize| {
            let mut y: Vec<i32> = plain[epoch * 10..(epoch + 1) * 10]
                .iter()
                .flat_map(|(_, y)| y.iter().map(|&v| v as i32))
                .collect();
            y.sort_unstable();
            y
        };
        assert_eq!(targets(0), targets(1));
        assert_ne!(plain[0], plain[10], "a new epoch is reshuffled");
    }

    #[test]
    fn a_flip_mirrors_each_image_row_and_a_shift_repeats_the_edge() {
        let shape = ImageShape {
            width: 3,
            height: 2,
            channels: 1,
        };
        let image = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        // Find a row whose draw flips without shifting, and check the mirror.
        let flip = Augment {
            flip: true,
            ..Augment::default()
        };
        let mut flipped = 0;
        for row in 0..20 {
            let mut s = image;
            augment(&mut s, flip, Some(shape), 1, 0, row);
            if s != image {
                assert_eq!(s, [3.0, 2.0, 1.0, 6.0, 5.0, 4.0]);
                flipped += 1;
            }
        }
        assert!((4..=16).contains(&flipped), "about half flip: {flipped}");
        let shift = Augment {
            shift_px: 1,
            ..Augment::default()
        };
        for row in 0..20 {
            let mut s = image;
            augment(&mut s, shift, Some(shape), 1, 0, row);
            // Every output pixel is some input pixel, and each row keeps its order.
            assert!(s.iter().all(|v| image.contains(v)));
            assert!(s[0] <= s[1] && s[1] <= s[2] && s[3] <= s[4] && s[4] <= s[5]);
        }
    }

    #[test]
    fn the_storage_delay_is_spent_and_stamped_on_the_worker_lane() {
        let recording = Arc::new(AtomicBool::new(true));
        let mut recorder = Recorder::default();
        recorder.start(Instant::now());
        let config = LoaderConfig {
            workers: 1,
            storage_latency_ms: 20.0,
            ..LoaderConfig::default()
        };
        let mut loader = BatchLoader::new(
            data(),
            16,
            1,
            Augment::default(),
            config,
            recorder.epoch(),
            Arc::clone(&recording),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let start = Instant::now();
        for _ in 0..3 {
            let _ = loader.next_batch(&mut recorder);
        }
        assert!(start.elapsed() >= Duration::from_millis(60));
        let spans = recorder.drain();
        let reads: Vec<&Span> = spans
            .iter()
            .filter(|s| s.name == "storage read (simulated delay)")
            .collect();
        assert_eq!(reads.len(), 3);
        assert!(reads.iter().all(|s| s.lane == Lane::Loader(0)));
        assert!(reads.iter().all(|s| s.duration_ns >= 20_000_000));
        let waits = spans.iter().filter(|s| s.name == "wait for batch").count();
        assert_eq!(waits, 3);
    }

    #[test]
    fn out_of_range_settings_are_refused_with_their_limit() {
        let bad = LoaderConfig {
            workers: 99,
            ..LoaderConfig::default()
        };
        assert!(
            bad.validate()
                .expect_err("too many")
                .to_string()
                .contains("at most 16")
        );
        let bad = LoaderConfig {
            prefetch: 0,
            ..LoaderConfig::default()
        };
        assert!(
            bad.validate()
                .expect_err("none")
                .to_string()
                .contains("between 1 and 16")
        );
        let bad = Augment {
            noise: f32::NAN,
            ..Augment::default()
        };
        assert!(bad.validate().is_err());
        // 16 workers × 16 batches of 8 MiB would queue 2 GiB.
        let many = LoaderConfig {
            workers: 16,
            prefetch: 16,
            ..LoaderConfig::default()
        };
        let message = many
            .check_queues(8 << 20)
            .expect_err("too much queued")
            .to_string();
        assert!(
            message.contains("2.0 GiB") && message.contains("1.0 GiB"),
            "{message}"
        );
        assert!(many.check_queues(1 << 20).is_ok());
    }
}
