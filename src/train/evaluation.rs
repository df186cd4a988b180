//! The whole-set evaluation, read back as it is computed: loss and accuracy (or R² and error)
//! on the training and test sets, a CNN's first layer, a text model's writing, and the decision
//! boundary of a 2-D set. Its staged twin (`staged_eval.rs`) starts the same passes and reads
//! and shares the assembly here.

use std::sync::Arc;

use super::super::metrics::{confusion, score, softmax_max};
use super::super::report::{BoundaryGrid, EvalReport, MAX_PREDICTION_POINTS, SAMPLE_GRID};
use super::Runner;
use crate::backend::{Backend, BackendError};
use crate::data::{Dataset, Task};

impl Runner {
    /// Loss and accuracy (or R² and error) on the whole training and test sets.
    pub fn evaluate(&mut self, backend: &mut dyn Backend) -> Result<EvalReport, BackendError> {
        let data = Arc::clone(&self.data);
        let (train_x, _) = evaluated(&data, &data.train_x, &data.train_y);
        let (test_x, _) = evaluated(&data, &data.test_x, &data.test_y);
        let train = self.model.predict(backend, train_x)?;
        let test = self.model.predict(backend, test_x)?;
        let first_layer = match first_image(&data) {
            Some(image) => self.model.first_layer(backend, image)?,
            None => None,
        };
        let writing = if data.is_text() {
            let params = self.model.read_parameters(backend)?;
            let spec = self.model.spec().clone();
            let seed = self.seed;
            Some(super::super::generate::writing(
                backend,
                (&spec, &params),
                &data,
                seed,
            )?)
        } else {
            None
        };
        Ok(self.eval_report(&train, &test, first_layer, writing))
    }

    /// The evaluation's report from the logits of the training and the test sets (as
    /// [`evaluated`] cuts them), and the views that need passes of their own.
    pub(super) fn eval_report(
        &self,
        train: &[f32],
        test: &[f32],
        first_layer: Option<crate::nn::FirstLayer>,
        writing: Option<super::super::report::Writing>,
    ) -> EvalReport {
        let data = &*self.data;
        let (_, train_y) = evaluated(data, &data.train_x, &data.train_y);
        let (_, test_y) = evaluated(data, &data.test_x, &data.test_y);
        // A text's classes are its characters: thousands for Chinese, no matrix to show.
        let confusion = (data.task == Task::Classification && !data.is_text())
            .then(|| confusion(test, test_y, data.classes()));
        let predictions = match data.task {
            Task::Regression => test
                .iter()
                .zip(&data.test_y)
                .take(MAX_PREDICTION_POINTS)
                .map(|(&p, &y)| {
                    let scale = data.target_scale;
                    [scale.invert(y) as f32, scale.invert(p) as f32]
                })
                .collect(),
            Task::Classification => Vec::new(),
        };
        let images = data.image.is_some() && data.task == Task::Classification;
        let samples = if images {
            test.chunks_exact(data.classes().max(1))
                .take(SAMPLE_GRID)
                .map(|row| softmax_max(row).0 as u8)
                .collect()
        } else {
            Vec::new()
        };
        EvalReport {
            writing,
            device: self.device,
            step: self.steps(),
            train: score(train, train_y, data),
            test: score(test, test_y, data),
            confusion,
            predictions,
            samples,
            first_layer,
        }
    }

    /// The predicted class over a `resolution²` grid (2-D data sets only).
    pub fn boundary(
        &mut self,
        backend: &mut dyn Backend,
        resolution: usize,
    ) -> Result<Option<BoundaryGrid>, BackendError> {
        let Some(points) = self.boundary_points(resolution) else {
            return Ok(None);
        };
        let logits = self.model.predict(backend, &points)?;
        Ok(Some(self.boundary_grid(resolution, &logits)))
    }

    /// The points of the boundary's `resolution²` grid, row by row (`None`: not a 2-D
    /// classification).
    pub(super) fn boundary_points(&self, resolution: usize) -> Option<Vec<f32>> {
        if self.data.features != 2 || self.data.task != Task::Classification {
            return None;
        }
        let (xr, yr) = self.extent;
        let mut points = Vec::with_capacity(resolution * resolution * 2);
        for iy in 0..resolution {
            for ix in 0..resolution {
                let fx = (ix as f32 + 0.5) / resolution as f32;
                let fy = (iy as f32 + 0.5) / resolution as f32;
                points.push(xr[0] + fx * (xr[1] - xr[0]));
                points.push(yr[0] + fy * (yr[1] - yr[0]));
            }
        }
        Some(points)
    }

    /// The boundary from the `logits` of [`Runner::boundary_points`].
    pub(super) fn boundary_grid(&self, resolution: usize, logits: &[f32]) -> BoundaryGrid {
        let classes = self.data.classes();
        let mut class = Vec::with_capacity(resolution * resolution);
        let mut confidence = Vec::with_capacity(resolution * resolution);
        for row in logits.chunks_exact(classes) {
            let (best, p) = softmax_max(row);
            class.push(best as u8);
            confidence.push(p);
        }
        BoundaryGrid {
            resolution,
            x_range: self.extent.0,
            y_range: self.extent.1,
            class,
            confidence,
        }
    }
}

/// The first test image, for a CNN's first-layer view (a set of images to classify only).
pub(super) fn first_image(data: &Dataset) -> Option<&[f32]> {
    let images = data.image.is_some() && data.task == Task::Classification;
    data.test_x.get(..data.features).filter(|_| images)
}

/// The part of a set (`x`, `y`) an evaluation reads: all of it, or a text's first
/// [`EVAL_WINDOWS`](crate::data::text_data::EVAL_WINDOWS) windows (its losses are estimates on
/// that many, as nanoGPT's are on 200 batches).
pub(super) fn evaluated<'a>(data: &Dataset, x: &'a [f32], y: &'a [f32]) -> (&'a [f32], &'a [f32]) {
    use crate::data::text_data::{EVAL_LOGITS, EVAL_WINDOWS};
    if !data.is_text() {
        return (x, y);
    }
    let (f, per) = (data.features, data.targets_per_row());
    // The logits of every position are read back: a large vocabulary evaluates fewer windows.
    let windows = EVAL_WINDOWS
        .min(EVAL_LOGITS / (per * data.classes()).max(1))
        .max(1);
    (
        &x[..x.len().min(windows * f)],
        &y[..y.len().min(windows * per)],
    )
}
