//! Predictions over a whole set: forward-only passes of the evaluation rows, chunk after
//! chunk, with the current parameters. Read back as they are computed ([`Network::predict`]),
//! or with every chunk's read started and the values looked at later
//! ([`Network::start_predict`]): a browser's GPU answers a read only between two of the page's
//! frames, so a page's evaluation cannot wait for one.

use super::Network;
use crate::backend::{Backend, BackendError, PendingRead, Tensor};

/// A prediction whose reads are on their way, one per chunk of the evaluation rows (see
/// [`Network::start_predict`]).
#[derive(Debug)]
pub struct Predicting {
    /// Each chunk's read and its rows in use (the last chunk is zero-padded).
    reads: Vec<(PendingRead, usize)>,
    /// The chunks' logits that are in, in order.
    done: Vec<Option<Vec<f32>>>,
    classes: usize,
}

impl Network {
    /// Logits for `inputs` (`[rows, features]`), computed on the device with the current
    /// parameters in forward-only passes of the model's evaluation rows, and read back.
    pub fn predict(
        &mut self,
        backend: &mut dyn Backend,
        inputs: &[f32],
    ) -> Result<Vec<f32>, BackendError> {
        let classes = self.spec.outputs();
        let mut logits = Vec::with_capacity(inputs.len() / self.spec.inputs().max(1) * classes);
        self.each_chunk(backend, inputs, |backend, out, n| {
            logits.extend_from_slice(&backend.read(out)?[..n * classes]);
            Ok(())
        })?;
        Ok(logits)
    }

    /// [`Network::predict`] with each chunk's read started and none waited for: the passes
    /// and the reads are submitted in order, so each read holds its own chunk's logits.
    pub fn start_predict(
        &mut self,
        backend: &mut dyn Backend,
        inputs: &[f32],
    ) -> Result<Predicting, BackendError> {
        let mut reads = Vec::new();
        self.each_chunk(backend, inputs, |backend, out, n| {
            reads.push((backend.start_read(out)?, n));
            Ok(())
        })?;
        Ok(Predicting {
            done: vec![None; reads.len()],
            reads,
            classes: self.spec.outputs(),
        })
    }

    /// Runs the evaluation pass over each chunk of `inputs`, then `take` on its output and the
    /// rows of it in use.
    fn each_chunk(
        &mut self,
        backend: &mut dyn Backend,
        inputs: &[f32],
        mut take: impl FnMut(&mut dyn Backend, &Tensor, usize) -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        let features = self.spec.inputs();
        let rows = inputs.len() / features.max(1);
        let mut chunk = vec![0.0f32; self.eval_rows * features];
        for start in (0..rows).step_by(self.eval_rows) {
            let n = (rows - start).min(self.eval_rows);
            chunk.fill(0.0);
            chunk[..n * features]
                .copy_from_slice(&inputs[start * features..(start + n) * features]);
            self.eval_pass(backend, &chunk)?;
            take(backend, self.eval.last(), n)?;
        }
        Ok(())
    }
}

impl Predicting {
    /// The logits, once every chunk's read is in (`None`: not yet, look again later).
    pub fn finish(&mut self, backend: &mut dyn Backend) -> Option<Result<Vec<f32>, BackendError>> {
        for ((read, n), done) in self.reads.iter_mut().zip(&mut self.done) {
            if done.is_some() {
                continue;
            }
            match backend.finish_read(read)? {
                Ok(mut values) => {
                    values.truncate(*n * self.classes);
                    *done = Some(values);
                }
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(self
            .done
            .iter_mut()
            .flat_map(|d| d.take().unwrap_or_default())
            .collect()))
    }
}
