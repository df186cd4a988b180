//! Generation a token at a time with a key-value cache, as language models are served: after a
//! whole window's forward pass has filled each attention layer's cache with the window's keys
//! and values, each new position of each sequence runs the layers over one row (its embedding,
//! its products, its attention against the cache) instead of the whole window again.

use super::Network;
use super::layers;
use super::param::LayerParams;
use crate::backend::{Backend, BackendError, Tensor};
use crate::memory::Role;

/// A network's tensors for generating a token at a time for `rows` sequences: the new
/// position's ids, each layer's output for it, and what each layer keeps between positions
/// (the attention layers' caches, `rows · T` positions each).
pub struct Decoder {
    rows: usize,
    input: Tensor,
    outputs: Vec<Tensor>,
    saved: Vec<Vec<Tensor>>,
}

impl Decoder {
    /// Sequences it generates at once.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Bytes of its key-value caches (the attention layers' `cache` tensors; not the few values
    /// a `LayerNorm` keeps for the new position).
    pub fn cache_bytes(&self) -> usize {
        self.saved
            .iter()
            .flatten()
            .filter(|t| t.label().rsplit('.').next() == Some("cache"))
            .map(Tensor::size_in_bytes)
            .sum()
    }
}

/// Why a network cannot generate a token at a time.
fn refused(detail: String) -> BackendError {
    BackendError::Shape {
        op: "decoder",
        detail,
    }
}

impl Network {
    /// The tensors to generate for `rows` sequences at once: only for a model that reads token
    /// ids and evaluates exactly `rows` windows a pass (the cache is filled from one).
    pub fn decoder(&self, backend: &mut dyn Backend, rows: usize) -> Result<Decoder, BackendError> {
        if !self.layers.first().is_some_and(|l| l.reads_indices()) {
            return Err(refused(
                "only a model that reads token ids generates a token at a time".to_owned(),
            ));
        }
        if rows == 0 || rows != self.eval_rows {
            return Err(refused(format!(
                "{rows} sequences with a model that evaluates {} at a time",
                self.eval_rows
            )));
        }
        let input = layers::alloc(backend, Role::Inputs, "decode.ids", (rows, 1), None)?;
        let mut outputs = Vec::with_capacity(self.layers.len());
        let mut saved = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let label = format!("{}.decode", layer.name());
            let shape = (rows, layer.shape().row_width());
            outputs.push(layers::alloc(
                backend,
                Role::Activations,
                &label,
                shape,
                None,
            )?);
            let mut kept = Vec::new();
            for (suffix, shape) in layer.decode_saved(rows) {
                let label = format!("{}.{suffix}", layer.name());
                kept.push(layers::alloc(
                    backend,
                    Role::Activations,
                    &label,
                    shape,
                    None,
                )?);
            }
            saved.push(kept);
        }
        Ok(Decoder {
            rows,
            input,
            outputs,
            saved,
        })
    }

    /// A whole forward pass of `windows` (`decoder.rows()` windows of the model's `T` ids, each
    /// padded after its text) that fills every cache with their keys and values, and returns
    /// the logits of every position (`[rows · T, vocab]`), read back.
    pub fn prefill(
        &mut self,
        backend: &mut dyn Backend,
        decoder: &mut Decoder,
        windows: &[f32],
    ) -> Result<Vec<f32>, BackendError> {
        self.eval_pass(backend, windows)?;
        for (i, layer) in self.layers.iter().enumerate() {
            let input = if i == 0 {
                &self.eval.input
            } else {
                &self.eval.outputs[i - 1]
            };
            layer.fill_cache(backend, input, &mut decoder.saved[i])?;
        }
        backend.read(self.eval.last())
    }

    /// One new position, `position` of every sequence (the caches hold the positions before
    /// it), from each sequence's token `ids` there: the logits of the next token,
    /// `[rows, vocab]`, read back.
    pub fn decode(
        &mut self,
        backend: &mut dyn Backend,
        decoder: &mut Decoder,
        ids: &[f32],
        position: usize,
    ) -> Result<Vec<f32>, BackendError> {
        backend.write(&mut decoder.input, ids)?;
        let Decoder {
            input,
            outputs,
            saved,
            ..
        } = decoder;
        for (i, layer) in self.layers.iter().enumerate() {
            let (done, rest) = outputs.split_at_mut(i);
            let input = done.last().unwrap_or(input);
            let skip = layer.skip().and_then(|s| done.get(s));
            let params = self.params[i].as_ref().map(LayerParams::master_values);
            layer.decode(
                backend,
                (input, skip),
                params,
                &mut saved[i],
                position,
                &mut rest[0],
            )?;
        }
        backend.read(outputs.last().unwrap_or(input))
    }
}
