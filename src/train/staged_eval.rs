//! The whole-set evaluation with every read started and none waited for: a browser's GPU
//! answers a read only between two of the page's frames, so a page's worker starts the
//! evaluation's passes and reads, goes on drawing, and takes the report in at a later slice
//! (see `State::step_then_read`). The same passes and the same assembly as
//! [`Runner::evaluate`] and [`Runner::boundary`].

use std::sync::Arc;

use super::{Runner, evaluated};
use crate::backend::{Backend, BackendError};
use crate::nn::Predicting;
use crate::train::report::{BoundaryGrid, EvalReport};

/// An evaluation on its way (see [`Runner::start_evaluation`]).
#[derive(Debug)]
pub struct StagedEval {
    /// The training set's, the test set's and the boundary grid's predictions, each with its
    /// logits once they are in.
    sets: Vec<(Predicting, Option<Vec<f32>>)>,
    /// The boundary grid's resolution, where the data set has one.
    resolution: Option<usize>,
}

impl Runner {
    /// Starts the whole-set evaluation and, for a 2-D data set, the boundary over a
    /// `resolution²` grid: every pass and every read submitted, none waited for.
    pub fn start_evaluation(
        &mut self,
        backend: &mut dyn Backend,
        resolution: usize,
    ) -> Result<StagedEval, BackendError> {
        let data = Arc::clone(&self.data);
        let (train_x, _) = evaluated(&data, &data.train_x, &data.train_y);
        let (test_x, _) = evaluated(&data, &data.test_x, &data.test_y);
        let mut sets = vec![
            (self.model.start_predict(backend, train_x)?, None),
            (self.model.start_predict(backend, test_x)?, None),
        ];
        let points = self.boundary_points(resolution);
        if let Some(points) = &points {
            sets.push((self.model.start_predict(backend, points)?, None));
        }
        Ok(StagedEval {
            sets,
            resolution: points.map(|_| resolution),
        })
    }

    /// The report and the boundary once every read of `eval` is in (`None`: not yet, look
    /// again later). A CNN's first-layer filters and a text's writing need passes that read
    /// back as they go, so a staged evaluation leaves them out.
    pub fn finish_evaluation(
        &mut self,
        backend: &mut dyn Backend,
        eval: &mut StagedEval,
    ) -> Option<Result<(EvalReport, Option<BoundaryGrid>), BackendError>> {
        for (predicting, logits) in &mut eval.sets {
            if logits.is_none() {
                match predicting.finish(backend)? {
                    Ok(values) => *logits = Some(values),
                    Err(e) => return Some(Err(e)),
                }
            }
        }
        let mut logits = eval
            .sets
            .iter_mut()
            .map(|(_, l)| l.take().unwrap_or_default());
        let (train, test) = (logits.next()?, logits.next()?);
        let report = self.eval_report(&train, &test, None, None);
        let grid = eval
            .resolution
            .zip(logits.next())
            .map(|(resolution, grid)| self.boundary_grid(resolution, &grid));
        Some(Ok((report, grid)))
    }
}
