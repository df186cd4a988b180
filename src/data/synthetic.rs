//! The built-in 2-D generators (spiral, moons, circles, XOR, blobs) and random benchmark data.

use crate::i18n::{DataKey, Said};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use super::dataset::{Dataset, Split, Table, Task};
use crate::setting::SettingError;

/// The built-in 2-D generators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Synthetic {
    /// Interleaved spiral arms, one per class (CS231n).
    Spiral,
    /// Two interleaved half circles (scikit-learn's `make_moons`).
    Moons,
    /// A small circle inside a large one (scikit-learn's `make_circles`, factor 0.5).
    Circles,
    /// Four quadrants, opposite ones in the same class.
    Xor,
    /// Gaussian blobs with centres on a circle, one per class.
    Blobs,
}

impl Synthetic {
    /// All generators, in UI order.
    pub const ALL: [Synthetic; 5] = [
        Synthetic::Spiral,
        Synthetic::Moons,
        Synthetic::Circles,
        Synthetic::Xor,
        Synthetic::Blobs,
    ];

    /// Lower-case name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Synthetic::Spiral => "spiral",
            Synthetic::Moons => "moons",
            Synthetic::Circles => "circles",
            Synthetic::Xor => "xor",
            Synthetic::Blobs => "blobs",
        }
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Whether the number of classes can be chosen (moons, circles and XOR have two).
    pub fn has_class_choice(self) -> bool {
        matches!(self, Synthetic::Spiral | Synthetic::Blobs)
    }
}

/// How to generate a data set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetSpec {
    /// Which generator.
    pub kind: Synthetic,
    /// Points in all, before the split.
    pub samples: usize,
    /// Classes, for the generators that let you choose.
    pub classes: usize,
    /// Noise: the standard deviation of the Gaussian jitter, relative to the shape.
    pub noise: f32,
    /// Share of points held out as the test set.
    pub test_fraction: f32,
    /// Seed of the generator and of the split.
    pub seed: u64,
    /// Standardise the features with the training part's mean and deviation.
    #[serde(default = "yes")]
    pub standardise: bool,
    /// Characters a window of a text (a language model's context length, T).
    #[serde(default = "context")]
    pub context: usize,
}

/// The context length of nanoGPT's baby GPT on a laptop CPU.
fn context() -> usize {
    64
}

fn yes() -> bool {
    true
}

impl Default for DatasetSpec {
    fn default() -> Self {
        Self {
            kind: Synthetic::Spiral,
            samples: 900,
            classes: 3,
            noise: 0.2,
            test_fraction: 0.2,
            seed: 7,
            standardise: true,
            context: context(),
        }
    }
}

impl DatasetSpec {
    /// How any data set is split and scaled under these settings.
    pub fn split(&self) -> Split {
        Split {
            test_fraction: self.test_fraction,
            seed: self.seed,
            standardise: self.standardise,
            context: self.context,
        }
    }

    /// Checks the settings that apply to every source (test share).
    pub fn validate_split(&self) -> Result<(), SettingError> {
        let (min, max) = TEST_SHARES;
        if !(min..=max).contains(&self.test_fraction) {
            return Err(SettingError::TestShare {
                value: self.test_fraction,
                min,
                max,
            });
        }
        Ok(())
    }
}

/// Limits a spec must respect, with the reason in the message.
pub const MAX_SAMPLES: usize = 200_000;
/// Most classes a generator makes.
pub const MAX_CLASSES: usize = 10;
/// Fewest samples a generator makes.
pub const MIN_SAMPLES: usize = 20;
/// Most noise a generator adds.
pub const MAX_NOISE: f32 = 2.0;
/// Smallest and largest share of the rows held out for testing.
pub const TEST_SHARES: (f32, f32) = (0.05, 0.5);

/// A table of `rows` Gaussian inputs with random labels (see `Dataset::random`).
pub(super) fn random_table(features: usize, classes: usize, rows: usize, seed: u64) -> Table {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f32> = (0..rows * features).map(|_| gauss(&mut rng)).collect();
    let y: Vec<f32> = (0..rows)
        .map(|_| rng.random_range(0..classes.max(1)) as f32)
        .collect();
    generated_table("random", features, classes, x, y)
}

/// The points a spec describes, drawn from `rng`, or which setting is out of range.
pub(super) fn generate_table(
    spec: &DatasetSpec,
    rng: &mut ChaCha8Rng,
) -> Result<Table, SettingError> {
    let classes = if spec.kind.has_class_choice() {
        spec.classes
    } else {
        2
    };
    if !(2..=MAX_CLASSES).contains(&classes) {
        return Err(SettingError::Classes {
            value: classes,
            max: MAX_CLASSES,
        });
    }
    if !(MIN_SAMPLES..=MAX_SAMPLES).contains(&spec.samples) {
        return Err(SettingError::Samples {
            value: spec.samples,
            min: MIN_SAMPLES,
            max: MAX_SAMPLES,
        });
    }
    if !(0.0..=MAX_NOISE).contains(&spec.noise) {
        return Err(SettingError::Noise {
            value: spec.noise,
            max: MAX_NOISE,
        });
    }
    spec.validate_split()?;
    let (x, y) = generate_points(spec.kind, spec.samples, classes, spec.noise, rng);
    Ok(generated_table(spec.kind.as_str(), 2, classes, x, y))
}

fn generated_table(name: &str, features: usize, classes: usize, x: Vec<f32>, y: Vec<f32>) -> Table {
    Table {
        name: name.to_owned(),
        path: String::new(),
        format: "generated",
        feature_names: (0..features).map(|f| format!("x{f}")).collect(),
        columns: Vec::new(),
        task: Task::Classification,
        task_reason: Said::default(),
        class_names: (0..classes).map(|c| c.to_string()).collect(),
        label_column: "class".to_owned(),
        label_reason: Said::new(DataKey::GeneratorClass, &[]),
        notes: Vec::new(),
        rows_with_missing_values: 0,
        rows: y.len(),
        image: None,
        x,
        y,
    }
}

fn gauss(rng: &mut ChaCha8Rng) -> f32 {
    rng.sample(StandardNormal)
}

fn generate_points(
    kind: Synthetic,
    samples: usize,
    classes: usize,
    noise: f32,
    rng: &mut ChaCha8Rng,
) -> (Vec<f32>, Vec<f32>) {
    let mut x = Vec::with_capacity(samples * 2);
    let mut y = Vec::with_capacity(samples);
    for i in 0..samples {
        let class = i % classes;
        // Position along the shape, in [0, 1).
        let t = (i / classes) as f32 / (samples / classes).max(1) as f32;
        let (px, py) = match kind {
            Synthetic::Spiral => {
                let r = t;
                let angle = class as f32 * std::f32::consts::TAU / classes as f32
                    + 4.0 * t
                    + gauss(rng) * noise;
                (r * angle.sin(), r * angle.cos())
            }
            Synthetic::Moons => {
                let a = std::f32::consts::PI * t;
                let (mx, my) = if class == 0 {
                    (a.cos(), a.sin())
                } else {
                    (1.0 - a.cos(), 0.5 - a.sin())
                };
                (mx + gauss(rng) * noise, my + gauss(rng) * noise)
            }
            Synthetic::Circles => {
                let a = std::f32::consts::TAU * rng.random::<f32>();
                let r = if class == 0 { 1.0 } else { 0.5 };
                (
                    r * a.cos() + gauss(rng) * noise * 0.5,
                    r * a.sin() + gauss(rng) * noise * 0.5,
                )
            }
            Synthetic::Xor => {
                let px: f32 = rng.random_range(-1.0..1.0);
                let mut py: f32 = rng.random_range(-1.0..1.0);
                // Put the point in a quadrant of its class: class 0 where x·y > 0.
                if (px * py > 0.0) != (class == 0) {
                    py = -py;
                }
                (px + gauss(rng) * noise * 0.5, py + gauss(rng) * noise * 0.5)
            }
            Synthetic::Blobs => {
                let a = class as f32 * std::f32::consts::TAU / classes as f32;
                (
                    3.0 * a.cos() + gauss(rng) * (0.5 + 2.0 * noise),
                    3.0 * a.sin() + gauss(rng) * (0.5 + 2.0 * noise),
                )
            }
        };
        x.push(px);
        x.push(py);
        y.push(class as f32);
    }
    (x, y)
}

impl Dataset {
    /// Random Gaussian inputs with random labels, for benchmarks of any layer width: the speed of
    /// a training step does not depend on what the numbers mean. Named "random" everywhere.
    pub fn random(features: usize, classes: usize, rows: usize, seed: u64) -> Self {
        random_table(features, classes, rows, seed).to_dataset(Split {
            test_fraction: 0.1,
            seed,
            standardise: true,
            context: context(),
        })
    }

    /// Builds the data set a spec describes, or says which setting is out of range.
    pub fn generate(spec: &DatasetSpec) -> Result<Self, SettingError> {
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        let table = generate_table(spec, &mut rng)?;
        Ok(table.split_with(spec.split(), &mut rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_seeded_balanced_and_standardised() {
        for kind in Synthetic::ALL {
            let spec = DatasetSpec {
                kind,
                ..DatasetSpec::default()
            };
            let a = Dataset::generate(&spec).expect("valid spec");
            let b = Dataset::generate(&spec).expect("valid spec");
            assert_eq!(a, b, "{kind:?} is not reproducible");
            assert_eq!(a.train_rows() + a.test_rows(), spec.samples);
            let mean: f32 = a.train_x.iter().step_by(2).sum::<f32>() / a.train_rows() as f32;
            assert!(mean.abs() < 1e-4, "{kind:?} mean {mean}");
            for c in 0..a.classes() {
                let n = a
                    .train_y
                    .iter()
                    .chain(&a.test_y)
                    .filter(|&&y| y as usize == c)
                    .count();
                assert!(
                    n >= spec.samples / a.classes() - 1,
                    "{kind:?} class {c} has {n}"
                );
            }
        }
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let spec = DatasetSpec {
            classes: 40,
            ..DatasetSpec::default()
        };
        let err = Dataset::generate(&spec)
            .expect_err("too many classes")
            .to_string();
        assert!(err.contains("40 classes"), "{err}");
    }
}
