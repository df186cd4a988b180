//! Generation a token at a time with a key-value cache, as language models are served: after a
//! whole window's forward pass has filled each attention layer's cache with the window's keys
//! and values, each new position of each sequence runs the layers over one row (its embedding,
//! its products, its attention against the cache) instead of the whole window again.

use super::layers::{self, Layer};
use super::pass::{Pass, chain};
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
pub(super) fn refused(detail: String) -> BackendError {
    BackendError::Shape {
        op: "decoder",
        detail,
    }
}

/// The tensors to generate for `rows` sequences with `layers` at once.
pub(super) fn alloc(
    backend: &mut dyn Backend,
    layers: &[Box<dyn Layer>],
    rows: usize,
) -> Result<Decoder, BackendError> {
    let input = layers::alloc(backend, Role::Inputs, "decode.ids", (rows, 1), None)?;
    let mut outputs = Vec::with_capacity(layers.len());
    let mut saved = Vec::with_capacity(layers.len());
    for layer in layers {
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

/// Each layer's cache filled from a whole window's `pass`.
pub(super) fn fill(
    backend: &mut dyn Backend,
    layers: &[Box<dyn Layer>],
    pass: &Pass,
    decoder: &mut Decoder,
) -> Result<(), BackendError> {
    for (i, layer) in layers.iter().enumerate() {
        layer.fill_cache(backend, pass.input_of(i), &mut decoder.saved[i])?;
    }
    Ok(())
}

/// One new position, `position` of every sequence, through `layers` with `params(i)` layer
/// `i`'s parameters: the logits, read back.
pub(super) fn step<'p>(
    backend: &mut dyn Backend,
    layers: &[Box<dyn Layer>],
    params: impl Fn(usize) -> Option<(&'p Tensor, &'p Tensor)>,
    decoder: &mut Decoder,
    (ids, position): (&[f32], usize),
) -> Result<Vec<f32>, BackendError> {
    backend.write(&mut decoder.input, ids)?;
    let Decoder {
        input,
        outputs,
        saved,
        ..
    } = decoder;
    chain(
        layers,
        0..layers.len(),
        input,
        outputs,
        |i, layer, inputs, out| {
            layer.decode(backend, inputs, params(i), &mut saved[i], position, out)
        },
    )?;
    backend.read(outputs.last().unwrap_or(input))
}
