//! The tensors one pass through the network writes (the input, every layer's output and what
//! it keeps for backward), and the forward pass over them.

use std::ops::Range;

use super::layers::{self, Layer};
use super::segments::{Place, Plan};
use crate::backend::{Backend, BackendError, Tensor};
use crate::memory::Role;
use crate::precision::{DType, Half};

/// Everything a forward pass of some rows writes.
pub(super) struct Pass {
    /// The batch (or evaluation rows).
    pub(super) input: Tensor,
    /// Layer `i`'s output.
    pub(super) outputs: Vec<Tensor>,
    /// What layer `i` keeps for backward besides its output.
    pub(super) saved: Vec<Vec<Tensor>>,
}

impl Pass {
    /// The tensors of a pass of `rows` rows of `inputs` values: stored in `dtype` and counted
    /// by their roles (training), or f32 workspace (evaluation, `dtype` none).
    pub(super) fn alloc(
        backend: &mut dyn Backend,
        layers: &[Box<dyn Layer>],
        (inputs, rows): (usize, usize),
        dtype: Option<DType>,
        plan: Option<&Plan>,
    ) -> Result<Self, BackendError> {
        // Token ids stay f32 whatever the precision: 16 bits hold them exactly only so far.
        let reads_indices = layers.first().is_some_and(|l| l.reads_indices());
        let input_dtype = dtype.map(|d| if reads_indices { DType::F32 } else { d });
        let input = layers::alloc(backend, Role::Inputs, "input", (rows, inputs), input_dtype)?;
        let shared = |i: usize, j: Option<usize>| {
            plan.is_some_and(|p| {
                let place = match j {
                    None => p.outputs.get(i),
                    Some(j) => p.saved.get(i).and_then(|s| s.get(j)),
                };
                matches!(place, Some(Place::Work(_)))
            })
        };
        let (outputs, saved) = layers::alloc_outputs(backend, layers, rows, dtype, &shared)?;
        Ok(Self {
            input,
            outputs,
            saved,
        })
    }

    /// The last layer's output (the logits, or the predictions), or the input of a model
    /// without layers.
    pub(super) fn last(&self) -> &Tensor {
        self.outputs.last().unwrap_or(&self.input)
    }

    /// Every tensor the backward pass reads besides the input: each layer's output and what it
    /// kept.
    pub(super) fn kept(&self) -> Vec<&Tensor> {
        self.outputs
            .iter()
            .zip(&self.saved)
            .flat_map(|(out, saved)| std::iter::once(out).chain(saved))
            .collect()
    }

    /// Layer `i`'s input in this pass: the output of the layer before it, or the input.
    pub(super) fn input_of(&self, i: usize) -> &Tensor {
        i.checked_sub(1)
            .and_then(|before| self.outputs.get(before))
            .unwrap_or(&self.input)
    }

    /// The forward pass with `params` (layer `i`'s parameters as the pass reads them), each
    /// output rounded to `format` where one is given.
    pub(super) fn run<'p>(
        &mut self,
        backend: &mut dyn Backend,
        layers: &[Box<dyn Layer>],
        params: impl Fn(usize) -> Option<(&'p Tensor, &'p Tensor)>,
        format: Option<Half>,
    ) -> Result<(), BackendError> {
        self.run_range(backend, (layers, 0..layers.len()), params, format)
    }

    /// [`Pass::run`] over the layers `range` only (a checkpointed segment).
    pub(super) fn run_range<'p>(
        &mut self,
        backend: &mut dyn Backend,
        (layers, range): (&[Box<dyn Layer>], Range<usize>),
        params: impl Fn(usize) -> Option<(&'p Tensor, &'p Tensor)>,
        format: Option<Half>,
    ) -> Result<(), BackendError> {
        let Pass {
            input,
            outputs,
            saved,
        } = self;
        chain(
            layers,
            range,
            input,
            outputs,
            |i, layer, (input, skip), out| {
                layer.forward(backend, input, skip, params(i), &mut saved[i], out)?;
                round(backend, format, out)
            },
        )
    }
}

/// Runs `layer(i, …)` for each of `layers` in `range` (all of them, or a checkpointed segment),
/// in order, writing `outputs[i]`: each reads the output of the layer before it (`input` for the
/// first) and, for a residual connection, the earlier output it adds.
pub(super) fn chain(
    layers: &[Box<dyn Layer>],
    range: Range<usize>,
    input: &Tensor,
    outputs: &mut [Tensor],
    mut layer: impl FnMut(
        usize,
        &dyn Layer,
        (&Tensor, Option<&Tensor>),
        &mut Tensor,
    ) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    for (i, l) in layers.iter().enumerate().take(range.end).skip(range.start) {
        let (done, rest) = outputs.split_at_mut(i);
        let input = done.last().unwrap_or(input);
        let skip = l.skip().and_then(|s| done.get(s));
        layer(i, l.as_ref(), (input, skip), &mut rest[0])?;
    }
    Ok(())
}

/// Rounds an f32 tensor's values to `format` (a 16-bit tensor's are already rounded).
pub(super) fn round(
    backend: &mut dyn Backend,
    format: Option<Half>,
    t: &mut Tensor,
) -> Result<(), BackendError> {
    match format {
        Some(f) if t.dtype() == DType::F32 => backend.round_to(t, f),
        _ => Ok(()),
    }
}
