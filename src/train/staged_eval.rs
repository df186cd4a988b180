//! The whole-set evaluation with every read started and none waited for: a browser's GPU
//! answers a read only between two of the page's frames, so a page's worker starts the
//! evaluation's passes and reads, goes on drawing, and takes the report in at a later slice
//! (see `State::step_then_read`). The same passes and the same assembly as
//! [`Runner::evaluate`], [`Runner::boundary`] and [`Runner::value_histograms`]; a text model's
//! writing, which samples a character at a time from what it read back, is left out.

use std::sync::Arc;

use super::Runner;
use super::evaluation::{evaluated, first_image};
use crate::backend::{Backend, BackendError, PendingReads};
use crate::nn::{FirstLayer, FirstLayerReads, Predicting};
use crate::train::report::{BoundaryGrid, EvalReport, ValueHistograms};

/// What a staged evaluation gives: the report, the boundary (2-D data sets) and the value
/// histograms.
pub type Evaluated = (EvalReport, Option<BoundaryGrid>, ValueHistograms);

/// An evaluation on its way (see [`Runner::start_evaluation`]): each part, then its values
/// once they are in.
#[derive(Debug)]
pub struct StagedEval {
    /// The training set's, the test set's and the boundary grid's predictions.
    sets: Vec<Part<Predicting, Vec<f32>>>,
    /// The boundary grid's resolution, where the data set has one.
    resolution: Option<usize>,
    /// The weights, the gradients and the activations, for the histograms.
    values: Vec<Part<PendingReads, Vec<Vec<f32>>>>,
    /// A CNN's first layer.
    first_layer: Option<Part<FirstLayerReads, FirstLayer>>,
}

/// Reads on their way, or what they came to.
#[derive(Debug)]
enum Part<R, V> {
    Reading(R),
    In(V),
}

impl<R, V> Part<R, V> {
    /// Takes the values in if they have come (`None`: not yet).
    fn settle(
        &mut self,
        finish: impl FnOnce(&mut R) -> Option<Result<V, BackendError>>,
    ) -> Option<Result<(), BackendError>> {
        if let Part::Reading(reads) = self {
            *self = Part::In(match finish(reads)? {
                Ok(values) => values,
                Err(e) => return Some(Err(e)),
            });
        }
        Some(Ok(()))
    }

    fn take(self) -> Option<V> {
        match self {
            Part::In(values) => Some(values),
            Part::Reading(_) => None,
        }
    }
}

impl Runner {
    /// Starts the whole-set evaluation, the boundary over a `resolution²` grid (2-D data
    /// sets), a CNN's first layer and the value histograms: every pass and every read
    /// submitted, none waited for.
    pub fn start_evaluation(
        &mut self,
        backend: &mut dyn Backend,
        resolution: usize,
    ) -> Result<StagedEval, BackendError> {
        let data = Arc::clone(&self.data);
        let (train_x, _) = evaluated(&data, &data.train_x, &data.train_y);
        let (test_x, _) = evaluated(&data, &data.test_x, &data.test_y);
        let mut sets = vec![
            Part::Reading(self.model.start_predict(backend, train_x)?),
            Part::Reading(self.model.start_predict(backend, test_x)?),
        ];
        let points = self.boundary_points(resolution);
        if let Some(points) = &points {
            sets.push(Part::Reading(self.model.start_predict(backend, points)?));
        }
        let first_layer = match first_image(&data) {
            Some(image) => self.model.start_first_layer(backend, image)?,
            None => None,
        };
        let mut values = Vec::new();
        for tensors in self.model.value_tensors() {
            let reads = tensors
                .into_iter()
                .map(|t| backend.start_read(t))
                .collect::<Result<_, _>>()?;
            values.push(Part::Reading(PendingReads::new(reads)));
        }
        Ok(StagedEval {
            sets,
            resolution: points.map(|_| resolution),
            values,
            first_layer: first_layer.map(Part::Reading),
        })
    }

    /// What the evaluation came to, once every read of `eval` is in (`None`: not yet, look
    /// again later).
    pub fn finish_evaluation(
        &mut self,
        backend: &mut dyn Backend,
        eval: &mut StagedEval,
    ) -> Option<Result<Evaluated, BackendError>> {
        let mut settled = Vec::new();
        for set in &mut eval.sets {
            settled.push(set.settle(|p| p.finish(backend)));
        }
        for values in &mut eval.values {
            settled.push(values.settle(|r| r.finish(|read| backend.finish_read(read))));
        }
        if let Some(first) = &mut eval.first_layer {
            settled.push(first.settle(|r| r.finish(backend)));
        }
        // An error at once; otherwise nothing until every part is in.
        let mut all_in = true;
        for part in settled {
            match part {
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(())) => {}
                None => all_in = false,
            }
        }
        if !all_in {
            return None;
        }
        let mut sets = std::mem::take(&mut eval.sets).into_iter().map(Part::take);
        let (train, test) = (sets.next()??, sets.next()??);
        let grid = match eval.resolution {
            Some(resolution) => Some(self.boundary_grid(resolution, &sets.next()??)),
            None => None,
        };
        let first_layer = eval.first_layer.take().and_then(Part::take);
        let report = self.eval_report(&train, &test, first_layer, None);
        let mut values: [Vec<f32>; 3] = Default::default();
        for (part, out) in std::mem::take(&mut eval.values)
            .into_iter()
            .zip(&mut values)
        {
            *out = part.take()?.concat();
        }
        Some(Ok((report, grid, self.histograms_of(values))))
    }
}
