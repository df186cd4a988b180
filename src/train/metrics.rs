//! How well a model does, computed on the host in f64 from its outputs: loss, accuracy, R², mean
//! absolute error, the confusion matrix; and the extent of 2-D data for the boundary grid.

use super::report::{Confusion, Score};
use crate::data::{Dataset, Task};

/// The first index of the largest logit and its softmax probability.
pub(super) fn softmax_max(row: &[f32]) -> (usize, f32) {
    let (mut best, mut max) = (0, f32::NEG_INFINITY);
    for (j, &v) in row.iter().enumerate() {
        if v > max {
            best = j;
            max = v;
        }
    }
    let sum: f32 = row.iter().map(|v| (v - max).exp()).sum();
    (best, 1.0 / sum)
}

/// How `outputs` (the model's, one row per target) fare against `targets`, in f64 on the host.
pub fn score(outputs: &[f32], targets: &[f32], data: &Dataset) -> Score {
    match data.task {
        Task::Classification => {
            let (loss, accuracy) = loss_and_accuracy(outputs, targets, data.classes());
            Score {
                loss,
                accuracy: Some(accuracy),
                r2: None,
                mae: None,
            }
        }
        Task::Regression => {
            let n = targets.len().max(1) as f64;
            let mean = targets.iter().map(|&y| f64::from(y)).sum::<f64>() / n;
            let (mut squared, mut total, mut abs) = (0.0f64, 0.0f64, 0.0f64);
            for (&p, &y) in outputs.iter().zip(targets) {
                let e = f64::from(p) - f64::from(y);
                squared += e * e;
                abs += e.abs();
                total += (f64::from(y) - mean).powi(2);
            }
            Score {
                loss: (squared / n) as f32,
                accuracy: None,
                r2: Some(if total > 0.0 {
                    (1.0 - squared / total) as f32
                } else {
                    0.0
                }),
                // The target was standardised for training: its errors scale back by its deviation.
                mae: Some((abs / n * data.target_scale.std) as f32),
            }
        }
    }
}

/// Mean cross-entropy and accuracy of `logits` against `targets`, in f64 on the host.
pub fn loss_and_accuracy(logits: &[f32], targets: &[f32], classes: usize) -> (f32, f32) {
    let rows = targets.len().max(1);
    let mut loss = 0.0f64;
    let mut correct = 0usize;
    for (row, &y) in logits.chunks_exact(classes).zip(targets) {
        let (best, _) = softmax_max(row);
        let max = f64::from(row[best]);
        let sum: f64 = row.iter().map(|&v| (f64::from(v) - max).exp()).sum();
        let target = y as usize;
        loss += sum.ln() - (f64::from(row.get(target).copied().unwrap_or(row[best])) - max);
        correct += usize::from(best == target);
    }
    ((loss / rows as f64) as f32, correct as f32 / rows as f32)
}

/// Counts of (true class, predicted class) over the rows of `logits`.
pub(super) fn confusion(logits: &[f32], targets: &[f32], classes: usize) -> Confusion {
    let mut counts = vec![0u32; classes * classes];
    for (row, &y) in logits.chunks_exact(classes).zip(targets) {
        let (best, _) = softmax_max(row);
        if let Some(c) = counts.get_mut(y as usize * classes + best) {
            *c += 1;
        }
    }
    Confusion { classes, counts }
}

/// The rectangle the boundary grid covers: the data's extent plus a margin.
pub(super) fn extent_of(data: &Dataset) -> ([f32; 2], [f32; 2]) {
    let mut lo = [f32::INFINITY; 2];
    let mut hi = [f32::NEG_INFINITY; 2];
    if data.features == 2 {
        for p in data
            .train_x
            .chunks_exact(2)
            .chain(data.test_x.chunks_exact(2))
        {
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
    }
    let range = |d: usize| {
        if lo[d].is_finite() && hi[d] > lo[d] {
            let margin = 0.1 * (hi[d] - lo[d]);
            [lo[d] - margin, hi[d] + margin]
        } else {
            [-2.0, 2.0]
        }
    };
    (range(0), range(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Scale;

    fn regression_data(std: f64) -> Dataset {
        Dataset {
            name: "r".into(),
            features: 1,
            task: Task::Regression,
            class_names: Vec::new(),
            target_name: "y".into(),
            target_scale: Scale { mean: 50.0, std },
            standardised: true,
            feature_names: vec!["x".into()],
            image: None,
            train_x: Vec::new(),
            train_y: Vec::new(),
            test_x: Vec::new(),
            test_y: Vec::new(),
            text: None,
        }
    }

    #[test]
    fn r2_and_mean_absolute_error_follow_their_definitions() {
        let data = regression_data(10.0);
        let targets = [-1.0, 0.0, 1.0, 2.0];
        let perfect = score(&targets, &targets, &data);
        assert_eq!(
            (perfect.r2, perfect.mae, perfect.accuracy),
            (Some(1.0), Some(0.0), None)
        );
        // Always predicting the mean (0.5) explains nothing: R² = 0.
        let mean = score(&[0.5; 4], &targets, &data);
        assert_eq!(mean.r2, Some(0.0));
        // Errors of 1 standardised unit are 10 units of the target (its deviation).
        let off = score(&[0.0, 1.0, 2.0, 3.0], &targets, &data);
        assert_eq!(off.mae, Some(10.0));
        assert_eq!(off.loss, 1.0);
        // R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)² = 1 − 4 / 5.
        assert!((off.r2.unwrap_or(0.0) - 0.2).abs() < 1e-6);
    }

    #[test]
    fn the_confusion_matrix_counts_true_against_predicted() {
        // Three rows: class 0 predicted 0, class 1 predicted 0, class 1 predicted 1.
        let logits = [2.0, 1.0, 3.0, 0.0, 0.0, 5.0];
        let m = confusion(&logits, &[0.0, 1.0, 1.0], 2);
        assert_eq!(m.counts, [1, 0, 1, 1]);
        assert_eq!((m.count(1, 0), m.count(1, 1)), (1, 1));
    }
}
