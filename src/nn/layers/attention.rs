//! Causal multi-head self-attention, the part of a GPT block between its two products: it reads
//! each position's query, key and value (the dense layer before it makes all three in one
//! product, `[T, 3d]`) and writes the heads' weighted sums side by side (`[T, d]`); the dense
//! layer after it is the output projection. It keeps the probabilities, `T × T` a head, for
//! backward: the activations that grow with the square of the context.

use super::dense::missing;
use super::layer::{Backward, Layer, Need, PlainCost, PlainWork, Shape};
use crate::backend::{AttentionShape, Backend, BackendError, Tensor};
use crate::memory::Role;

/// The output's shape: a third of the input's width, which the heads must divide.
pub(super) fn output(input: Shape, heads: usize) -> Result<Shape, Need> {
    match input {
        Shape::Sequence { len, width }
            if heads > 0 && width > 0 && width % 3 == 0 && (width / 3) % heads == 0 =>
        {
            Ok(Shape::Sequence {
                len,
                width: width / 3,
            })
        }
        Shape::Sequence { .. } => Err(Need::Heads),
        _ => Err(Need::Sequence),
    }
}

/// A built attention layer.
pub struct Attention {
    name: String,
    shape: AttentionShape,
}

impl Attention {
    pub(super) fn new(name: String, len: usize, heads: usize, width: usize) -> Self {
        Self {
            name,
            shape: AttentionShape { len, heads, width },
        }
    }
}

impl Layer for Attention {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "attention"
    }

    fn shape(&self) -> Shape {
        Shape::Sequence {
            len: self.shape.len,
            width: self.shape.width,
        }
    }

    /// The probabilities, `[H · T, T]` a sample, stored as the passes store activations: half
    /// the bytes in the 16-bit modes. (PyTorch's autocast would run the softmax in f32 and keep
    /// its output so; a fused attention, `FlashAttention`'s way, keeps none and recomputes them.)
    fn saved(&self, rows: usize) -> Vec<(Role, &'static str, (usize, usize))> {
        let AttentionShape { len, heads, .. } = self.shape;
        vec![(Role::Activations, "probs", (rows * heads * len, len))]
    }

    fn saved_in_pass_format(&self) -> bool {
        true
    }

    fn plain_cost(&self) -> Option<PlainCost> {
        let AttentionShape { len, heads, width } = self.shape;
        // Causal: each head's query i reads i + 1 keys, T(T+1)/2 pairs a head.
        let pairs = heads * len * (len + 1) / 2;
        let dh = self.shape.head_width();
        Some(PlainCost {
            name: "attention",
            what: crate::i18n::LayerKey::WhatAttention,
            // Q·K and P·V (2 · 2 · dh a pair) and the softmax (about 5 a pair): reads qkv,
            // writes the probabilities and the output.
            forward: PlainWork {
                flops: pairs * (4 * dh + 5),
                values: 3 * len * width + heads * len * len + len * width,
                params: 0,
            },
            // dV, dP (again for the row sums), dS, dQ and dK: five products of 2 · dh a pair
            // and the softmax's gradient; reads qkv, the probabilities and dO, writes dS and
            // dqkv.
            backward: PlainWork {
                flops: pairs * (12 * dh + 4),
                values: 3 * len * width + 2 * heads * len * len + len * width + 3 * len * width,
                params: 0,
            },
        })
    }

    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        _skip: Option<&Tensor>,
        _params: Option<(&Tensor, &Tensor)>,
        saved: &mut [Tensor],
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let probs = saved.first_mut().ok_or_else(|| missing(&self.name))?;
        backend.attention(input, self.shape, probs, out)
    }

    /// The keys and values of every position so far, side by side: `[rows · T, 2d]`.
    fn decode_saved(&self, rows: usize) -> Vec<(&'static str, (usize, usize))> {
        let AttentionShape { len, width, .. } = self.shape;
        vec![("cache", (rows * len, 2 * width))]
    }

    fn decode(
        &self,
        backend: &mut dyn Backend,
        (input, _): (&Tensor, Option<&Tensor>),
        _params: Option<(&Tensor, &Tensor)>,
        saved: &mut [Tensor],
        position: usize,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let cache = saved.first_mut().ok_or_else(|| missing(&self.name))?;
        backend.attention_step(input, self.shape, position, cache, out)
    }

    fn fill_cache(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        saved: &mut [Tensor],
    ) -> Result<(), BackendError> {
        let cache = saved.first_mut().ok_or_else(|| missing(&self.name))?;
        backend.fill_cache(input, cache)
    }

    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        crate::backend::check_identity("attention_backward", pass.input_epilogue)?;
        let probs = pass.saved.first_mut().ok_or_else(|| missing(&self.name))?;
        let dqkv = pass.dinput.ok_or_else(|| missing(&self.name))?;
        backend.attention_backward(pass.input, self.shape, probs, pass.dout, dqkv)
    }
}
