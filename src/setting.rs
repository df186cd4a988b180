//! A setting the run cannot use, as a typed finding: which setting, the value given and the
//! limit it broke, rendered in the user's language by [`SettingError::text`] (the command line
//! prints the English text). The limits travel in the error, so this module, below everything
//! that validates settings, needs none of their constants.

use crate::i18n::{Key, Lang};
use crate::units::format_bytes;

/// A setting outside what the run can use.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.text(Lang::En))]
pub enum SettingError {
    /// The learning rate is not a number above 0 and at most `max`.
    LearningRate {
        /// The value given.
        value: f32,
        /// The largest accepted.
        max: f32,
    },
    /// The loss weight is outside `min..=1`.
    LossWeight {
        /// The value given.
        value: f32,
        /// The smallest accepted.
        min: f32,
    },
    /// The batch size is 0 or above `max`.
    BatchSize {
        /// The value given.
        value: usize,
        /// The largest accepted.
        max: usize,
    },
    /// Micro-batches an update 0, or more than `max` (the most accepted, or the most whose
    /// rows the training set holds).
    Accumulate {
        /// The value given.
        value: u32,
        /// The largest accepted.
        max: u32,
    },
    /// Checkpointed segments of more blocks than accepted.
    Checkpoint {
        /// The value given.
        value: u32,
        /// The largest accepted.
        max: u32,
    },
    /// The batch holds more rows than the training part of the data set.
    BatchLargerThanData {
        /// The batch size given.
        batch: usize,
        /// Training rows of the data set.
        rows: usize,
        /// The data set's name.
        data: String,
    },
    /// A hidden layer is 0 or wider than `max`.
    LayerWidth {
        /// The width given.
        value: usize,
        /// The widest accepted.
        max: usize,
    },
    /// Neither device is chosen to train.
    NoDevice,
    /// More hidden layers than `max`.
    Depth {
        /// The number given.
        value: usize,
        /// The most accepted.
        max: usize,
    },
    /// A layer of a model given as a list cannot take what the layer before gives: the
    /// finding in each language (the model, above this module, words it).
    ModelShape {
        /// In English.
        en: String,
        /// In Simplified Chinese.
        zh: String,
    },
    /// Convolution blocks asked of a data set whose samples are not images.
    ConvNeedsImages {
        /// The data set's name.
        data: String,
    },
    /// More convolution blocks than `max`.
    ConvBlocks {
        /// The number given.
        value: usize,
        /// The most accepted.
        max: usize,
    },
    /// A convolution block with no filters or more than `max`.
    ConvChannels {
        /// The number given.
        value: usize,
        /// The most accepted.
        max: usize,
    },
    /// A convolution kernel other than 3×3 or 5×5.
    ConvKernel {
        /// The side given.
        value: usize,
    },
    /// The images are too small for the blocks: each 2×2 pooling halves them.
    ConvImageTooSmall {
        /// Blocks asked for.
        blocks: usize,
        /// Image width.
        width: usize,
        /// Image height.
        height: usize,
    },
    /// The model has more parameters than `max`.
    Parameters {
        /// The model's parameters.
        value: u64,
        /// The most accepted.
        max: u64,
    },
    /// What the run is estimated to need is more than the host's memory can give it.
    HostMemory {
        /// Estimated bytes of the model, its optimizer state, the activations and the data set.
        needs: u64,
        /// Bytes the system reports as available.
        available: u64,
    },
    /// The augmentation noise is outside `0..=max`.
    AugmentNoise {
        /// The value given.
        value: f32,
        /// The largest accepted.
        max: f32,
    },
    /// The augmentation shift is more than `max` pixels.
    AugmentShift {
        /// The value given.
        value: u8,
        /// The largest accepted.
        max: u8,
    },
    /// A memory budget below `min_bytes`.
    MemoryBudget {
        /// The budget given.
        bytes: u64,
        /// The smallest accepted.
        min_bytes: u64,
    },
    /// Kernel timing every more than `max` steps.
    KernelTiming {
        /// The value given.
        every: u32,
        /// The largest accepted.
        max: u32,
    },
    /// A stop condition out of range: what was given.
    StopAt(String),
    /// Reading the loss every 0 or more than `max` steps.
    SyncEvery {
        /// The value given.
        every: u32,
        /// The largest accepted.
        max: u32,
    },
    /// More loader workers than `max`.
    LoaderWorkers {
        /// The value given.
        value: usize,
        /// The most accepted.
        max: usize,
    },
    /// A prefetch depth of 0 or above `max`.
    PrefetchDepth {
        /// The value given.
        value: usize,
        /// The largest accepted.
        max: usize,
    },
    /// A storage latency outside `0..=max_ms`.
    StorageLatency {
        /// The value given, in ms.
        ms: f32,
        /// The largest accepted, in ms.
        max_ms: f32,
    },
    /// The loader's queues could hold more than `max_bytes` of batches.
    QueuedBatches {
        /// Loader workers.
        workers: usize,
        /// Prefetch depth per worker.
        prefetch: usize,
        /// Bytes of one batch.
        batch_bytes: u64,
        /// Bytes the queues could hold.
        queued_bytes: u64,
        /// The most accepted.
        max_bytes: u64,
    },
    /// The test share is outside `min..=max`.
    TestShare {
        /// The value given.
        value: f32,
        /// The smallest accepted.
        min: f32,
        /// The largest accepted.
        max: f32,
    },
    /// A generator asked for fewer than 2 or more than `max` classes.
    Classes {
        /// The value given.
        value: usize,
        /// The most accepted.
        max: usize,
    },
    /// A generator asked for a number of samples outside `min..=max`.
    Samples {
        /// The value given.
        value: usize,
        /// The fewest accepted.
        min: usize,
        /// The most accepted.
        max: usize,
    },
    /// A generator's noise outside `0..=max`.
    Noise {
        /// The value given.
        value: f32,
        /// The largest accepted.
        max: f32,
    },
}

impl SettingError {
    /// [`SettingError::text`] of the levers' settings: accumulation and checkpointing.
    fn lever_text(&self, lang: Lang) -> String {
        use crate::i18n::LeverKey;
        let (key, value, max) = match *self {
            Self::Accumulate { value, max } => (LeverKey::BadAccumulate, value, max),
            Self::Checkpoint { value, max } => (LeverKey::BadCheckpoint, value, max),
            _ => return String::new(),
        };
        lang.fmt(key, &[("value", &value), ("max", &max)])
    }

    /// The setting, the value and what to choose instead, in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        use SettingError as E;
        match self {
            E::LearningRate { value, max } => {
                lang.fmt(Key::BadLearningRate, &[("value", value), ("max", max)])
            }
            E::LossWeight { value, min } => lang.fmt(
                Key::BadLossWeight,
                &[("value", value), ("min", &format!("{min:e}"))],
            ),
            E::BatchSize { value, max } => {
                lang.fmt(Key::BadBatchSize, &[("value", value), ("max", max)])
            }
            E::Accumulate { .. } | E::Checkpoint { .. } => self.lever_text(lang),
            E::BatchLargerThanData { batch, rows, data } => lang.fmt(
                Key::BadBatchForData,
                &[("batch", batch), ("rows", rows), ("data", data)],
            ),
            E::LayerWidth { value, max } => {
                lang.fmt(Key::BadLayerWidth, &[("value", value), ("max", max)])
            }
            E::NoDevice => lang.tr(Key::BadNoDevice).to_owned(),
            E::Depth { value, max } => lang.fmt(Key::BadDepth, &[("value", value), ("max", max)]),
            E::ConvNeedsImages { data } => lang.fmt(Key::BadConvData, &[("data", data)]),
            E::ModelShape { en, zh } => match lang {
                Lang::En => en.clone(),
                Lang::Zh => zh.clone(),
            },
            E::ConvBlocks { value, max } => {
                lang.fmt(Key::BadConvBlocks, &[("value", value), ("max", max)])
            }
            E::ConvChannels { value, max } => {
                lang.fmt(Key::BadConvChannels, &[("value", value), ("max", max)])
            }
            E::ConvKernel { value } => lang.fmt(Key::BadConvKernel, &[("value", value)]),
            E::ConvImageTooSmall {
                blocks,
                width,
                height,
            } => lang.fmt(
                Key::BadConvImage,
                &[("blocks", blocks), ("width", width), ("height", height)],
            ),
            E::Parameters { value, max } => lang.fmt(
                Key::BadParameters,
                &[
                    ("value", &crate::units::grouped(*value)),
                    ("max", &crate::units::grouped(*max)),
                ],
            ),
            E::HostMemory { needs, available } => lang.fmt(
                Key::BadHostMemory,
                &[
                    ("needs", &format_bytes(*needs)),
                    ("available", &format_bytes(*available)),
                ],
            ),
            E::AugmentNoise { value, max } => {
                lang.fmt(Key::BadAugmentNoise, &[("value", value), ("max", max)])
            }
            E::AugmentShift { value, max } => {
                lang.fmt(Key::BadAugmentShift, &[("value", value), ("max", max)])
            }
            E::MemoryBudget { bytes, min_bytes } => lang.fmt(
                Key::BadMemoryBudget,
                &[
                    ("bytes", bytes),
                    ("min", min_bytes),
                    ("shown", &format_bytes(*min_bytes)),
                ],
            ),
            E::KernelTiming { every, max } => {
                lang.fmt(Key::BadKernelTiming, &[("value", every), ("max", max)])
            }
            E::StopAt(given) => lang.fmt(Key::BadStopAt, &[("value", given)]),
            E::SyncEvery { every, max } => {
                lang.fmt(Key::BadSyncEvery, &[("value", every), ("max", max)])
            }
            E::LoaderWorkers { value, max } => {
                lang.fmt(Key::BadLoaderWorkers, &[("value", value), ("max", max)])
            }
            E::PrefetchDepth { value, max } => {
                lang.fmt(Key::BadPrefetch, &[("value", value), ("max", max)])
            }
            E::StorageLatency { ms, max_ms } => {
                lang.fmt(Key::BadStorageLatency, &[("value", ms), ("max", max_ms)])
            }
            E::QueuedBatches {
                workers,
                prefetch,
                batch_bytes,
                queued_bytes,
                max_bytes,
            } => lang.fmt(
                Key::BadQueuedBatches,
                &[
                    ("workers", workers),
                    ("prefetch", prefetch),
                    ("batch", &format_bytes(*batch_bytes)),
                    ("queued", &format_bytes(*queued_bytes)),
                    ("max", &format_bytes(*max_bytes)),
                ],
            ),
            E::TestShare { value, min, max } => lang.fmt(
                Key::BadTestShare,
                &[("value", value), ("min", min), ("max", max)],
            ),
            E::Classes { value, max } => {
                lang.fmt(Key::BadClasses, &[("value", value), ("max", max)])
            }
            E::Samples { value, min, max } => lang.fmt(
                Key::BadSamples,
                &[("value", value), ("min", min), ("max", max)],
            ),
            E::Noise { value, max } => lang.fmt(Key::BadNoise, &[("value", value), ("max", max)]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_error_names_the_setting_its_value_and_its_limit_in_both_languages() {
        let e = SettingError::BatchLargerThanData {
            batch: 500,
            rows: 160,
            data: "small.csv".into(),
        };
        assert_eq!(
            e.to_string(),
            "batch size 500 is larger than the 160 training rows of small.csv: choose at most 160"
        );
        let zh = e.text(Lang::Zh);
        assert!(
            zh.contains("500") && zh.contains("160") && zh.contains("small.csv"),
            "{zh}"
        );
        let e = SettingError::LossWeight {
            value: 2.0,
            min: 1e-12,
        };
        assert_eq!(
            e.to_string(),
            "loss weight 2: choose a value from 1e-12 to 1"
        );
    }
}
