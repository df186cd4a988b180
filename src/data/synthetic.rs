//! Data sets: seeded 2-D generators, the shipped real sets and the user's own files, all
//! standardised and split into train and test the same way.

pub mod file;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

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
        }
    }
}

/// Limits a spec must respect, with the reason in the message.
pub const MAX_SAMPLES: usize = 200_000;
/// Most classes a generator makes.
pub const MAX_CLASSES: usize = 10;

/// A data set ready for training: standardised features, class indices, train and test parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Display name.
    pub name: String,
    /// Features per sample.
    pub features: usize,
    /// Number of classes.
    pub classes: usize,
    /// `[train_rows, features]`, standardised.
    pub train_x: Vec<f32>,
    /// Class index per training row, as `f32` (exact for small integers).
    pub train_y: Vec<f32>,
    /// `[test_rows, features]`, standardised with the training mean and deviation.
    pub test_x: Vec<f32>,
    /// Class index per test row.
    pub test_y: Vec<f32>,
    /// Name of each class, by index.
    pub class_names: Vec<String>,
    /// Name of each feature, by column.
    pub feature_names: Vec<String>,
}

impl Dataset {
    /// Training rows.
    pub fn train_rows(&self) -> usize {
        self.train_y.len()
    }

    /// Test rows.
    pub fn test_rows(&self) -> usize {
        self.test_y.len()
    }

    /// Random Gaussian inputs with random labels, for benchmarks of any layer width: the speed of
    /// a training step does not depend on what the numbers mean. Named "random" everywhere.
    pub fn random(features: usize, classes: usize, rows: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x: Vec<f32> = (0..rows * features).map(|_| gauss(&mut rng)).collect();
        let y: Vec<f32> = (0..rows)
            .map(|_| rng.random_range(0..classes.max(1)) as f32)
            .collect();
        split_and_standardise("random", &x, &y, features, classes, 0.1, &mut rng)
    }

    /// Builds the data set a spec describes, or says which setting is out of range.
    pub fn generate(spec: &DatasetSpec) -> Result<Self, String> {
        let classes = if spec.kind.has_class_choice() {
            spec.classes
        } else {
            2
        };
        if !(2..=MAX_CLASSES).contains(&classes) {
            return Err(format!(
                "{classes} classes: choose between 2 and {MAX_CLASSES}"
            ));
        }
        if spec.samples < 20 || spec.samples > MAX_SAMPLES {
            return Err(format!(
                "{} samples: choose between 20 and {MAX_SAMPLES}",
                spec.samples
            ));
        }
        if !(0.0..=2.0).contains(&spec.noise) {
            return Err(format!("noise {}: choose between 0 and 2", spec.noise));
        }
        if !(0.05..=0.5).contains(&spec.test_fraction) {
            return Err(format!(
                "test share {}: choose between 0.05 and 0.5",
                spec.test_fraction
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        let (x, y) = generate_points(spec.kind, spec.samples, classes, spec.noise, &mut rng);
        Ok(split_and_standardise(
            spec.kind.as_str(),
            &x,
            &y,
            2,
            classes,
            spec.test_fraction,
            &mut rng,
        ))
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

/// Shuffles, holds out the test share, and standardises every feature with the training mean
/// and standard deviation (the test set must not leak into them).
pub fn split_and_standardise(
    name: &str,
    x: &[f32],
    y: &[f32],
    features: usize,
    classes: usize,
    test_fraction: f32,
    rng: &mut ChaCha8Rng,
) -> Dataset {
    let rows = y.len();
    let mut order: Vec<usize> = (0..rows).collect();
    order.shuffle(rng);
    let test_rows = ((rows as f32 * test_fraction).round() as usize).clamp(1, rows - 1);
    let (test_idx, train_idx) = order.split_at(test_rows);
    let gather = |idx: &[usize]| {
        let mut gx = Vec::with_capacity(idx.len() * features);
        let mut gy = Vec::with_capacity(idx.len());
        for &i in idx {
            gx.extend_from_slice(&x[i * features..(i + 1) * features]);
            gy.push(y[i]);
        }
        (gx, gy)
    };
    let (mut train_x, train_y) = gather(train_idx);
    let (mut test_x, test_y) = gather(test_idx);
    for f in 0..features {
        let column = train_x.iter().skip(f).step_by(features);
        let n = train_idx.len() as f64;
        let mean = column.clone().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = column.map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n;
        let std = if var > 1e-12 { var.sqrt() } else { 1.0 };
        for data in [&mut train_x, &mut test_x] {
            for v in data.iter_mut().skip(f).step_by(features) {
                *v = ((f64::from(*v) - mean) / std) as f32;
            }
        }
    }
    Dataset {
        name: name.to_owned(),
        features,
        classes,
        train_x,
        train_y,
        test_x,
        test_y,
        class_names: (0..classes).map(|c| c.to_string()).collect(),
        feature_names: (0..features).map(|f| format!("x{f}")).collect(),
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
            for c in 0..a.classes {
                let n = a
                    .train_y
                    .iter()
                    .chain(&a.test_y)
                    .filter(|&&y| y as usize == c)
                    .count();
                assert!(
                    n >= spec.samples / a.classes - 1,
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
        let err = Dataset::generate(&spec).expect_err("too many classes");
        assert!(err.contains("40 classes"), "{err}");
    }
}
