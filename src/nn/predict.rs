//! Predictions over a whole set, and a CNN's first layer for its view: forward-only passes of the evaluation rows, chunk after
//! chunk, with the current parameters. Read back as they are computed ([`Network::predict`]),
//! or with every chunk's read started and the values looked at later
//! ([`Network::start_predict`]): a browser's GPU answers a read only between two of the page's
//! frames, so a page's evaluation cannot wait for one.

use super::Network;
use super::first_layer::{FirstLayer, FirstLayerReads};
use super::predicting::Predicting;
use crate::backend::{Backend, BackendError, ConvShape, PendingReads, Tensor};

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
        let (mut reads, mut rows) = (Vec::new(), Vec::new());
        self.each_chunk(backend, inputs, |backend, out, n| {
            reads.push(backend.start_read(out)?);
            rows.push(n);
            Ok(())
        })?;
        Ok(Predicting {
            reads: PendingReads::new(reads),
            rows,
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

impl Network {
    /// A CNN's first-layer filters and what they make of `image` (one sample's pixels), read
    /// back: `None` for a model without a convolution. Runs one forward pass of the evaluation
    /// rows.
    pub fn first_layer(
        &mut self,
        backend: &mut dyn Backend,
        image: &[f32],
    ) -> Result<Option<FirstLayer>, BackendError> {
        let read = |backend: &mut dyn Backend, t: &Tensor| backend.read(t);
        Ok(self
            .first_layer_with(backend, image, read)?
            .map(|(conv, weights, maps)| FirstLayer::of(conv, weights, maps)))
    }

    /// [`Network::first_layer`] with both reads started and neither waited for.
    pub fn start_first_layer(
        &mut self,
        backend: &mut dyn Backend,
        image: &[f32],
    ) -> Result<Option<FirstLayerReads>, BackendError> {
        let start = |backend: &mut dyn Backend, t: &Tensor| backend.start_read(t);
        Ok(self
            .first_layer_with(backend, image, start)?
            .map(|(conv, weights, maps)| FirstLayerReads {
                conv,
                reads: PendingReads::new(vec![weights, maps]),
            }))
    }

    /// The first convolution's shape, then `read` of its filters and, after one pass over
    /// `image`, of its output (`None` for a model without a convolution).
    fn first_layer_with<R>(
        &mut self,
        backend: &mut dyn Backend,
        image: &[f32],
        mut read: impl FnMut(&mut dyn Backend, &Tensor) -> Result<R, BackendError>,
    ) -> Result<Option<(ConvShape, R, R)>, BackendError> {
        let Some((at, conv)) = self.first_conv() else {
            return Ok(None);
        };
        let Some(filters) = self.params[at].as_ref() else {
            return Ok(None);
        };
        let weights = read(backend, &filters.weight.value)?;
        self.image_pass(backend, image)?;
        let maps = read(backend, &self.eval.outputs[at])?;
        Ok(Some((conv, weights, maps)))
    }

    /// The first convolution: its place among the layers, and its shape.
    fn first_conv(&self) -> Option<(usize, ConvShape)> {
        self.layers
            .iter()
            .enumerate()
            .find_map(|(i, l)| l.convolution().map(|c| (i, c)))
    }

    /// One evaluation pass over `image` alone (the other rows zero).
    fn image_pass(&mut self, backend: &mut dyn Backend, image: &[f32]) -> Result<(), BackendError> {
        let mut chunk = vec![0.0f32; self.eval_rows * self.spec.inputs()];
        let n = image.len().min(chunk.len());
        chunk[..n].copy_from_slice(&image[..n]);
        self.eval_pass(backend, &chunk)
    }
}
