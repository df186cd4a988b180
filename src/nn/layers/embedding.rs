//! Token and learned position embedding, GPT's first layer: each position's token id picks a
//! row of the table (`weight`, `[vocab, d]`, PyTorch's `Embedding(vocab, d)`), to which the
//! position's own row (`[T, d]`, stored as the layer's second tensor) is added. Both start at
//! `N(0, 0.02²)`, as nanoGPT's do.

use rand_chacha::ChaCha8Rng;

use super::dense::missing;
use super::layer::{Backward, Layer, Need, ParamInit, PlainCost, PlainWork, Shape};
use crate::backend::{Activation, Backend, BackendError, Tensor};

/// nanoGPT's initial deviation of the embeddings.
const INIT_STD: f32 = 0.02;

/// The output's shape: a sequence of `width` values a position, from a row of token ids.
pub(super) fn output(input: Shape, vocab: usize, width: usize) -> Result<Shape, Need> {
    match input {
        _ if vocab == 0 || width == 0 => Err(Need::Units),
        Shape::Flat(len) if len > 0 => Ok(Shape::Sequence { len, width }),
        _ => Err(Need::Tokens),
    }
}

/// A built embedding.
pub struct Embedding {
    name: String,
    vocab: usize,
    len: usize,
    width: usize,
}

impl Embedding {
    pub(super) fn new(name: String, vocab: usize, len: usize, width: usize) -> Self {
        Self {
            name,
            vocab,
            len,
            width,
        }
    }
}

/// `n` values drawn from `N(0, INIT_STD²)`.
fn normal(rng: &mut ChaCha8Rng, n: usize) -> Vec<f32> {
    use rand_distr::{Distribution, Normal};
    let normal = Normal::new(0.0, INIT_STD).unwrap_or_else(|_| unreachable!());
    (0..n).map(|_| normal.sample(rng)).collect()
}

impl Layer for Embedding {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "embedding"
    }

    fn shape(&self) -> Shape {
        Shape::Sequence {
            len: self.len,
            width: self.width,
        }
    }

    fn param_shapes(&self) -> Option<[(usize, usize); 2]> {
        Some([(self.vocab, self.width), (self.len, self.width)])
    }

    /// The token table decays under `AdamW` as nanoGPT's does (the positions, stored where a
    /// bias is, do not: `update_layer` never decays the second tensor).
    fn decays(&self) -> bool {
        true
    }

    fn params(&self, rng: &mut ChaCha8Rng, _hidden: Activation) -> Option<ParamInit> {
        let table = normal(rng, self.vocab * self.width);
        let positions = normal(rng, self.len * self.width);
        Some(ParamInit {
            shapes: self.param_shapes()?,
            values: [table, positions],
        })
    }

    fn reads_indices(&self) -> bool {
        true
    }

    fn plain_cost(&self) -> Option<PlainCost> {
        let (t, d) = (self.len, self.width);
        Some(PlainCost {
            name: "embedding",
            what: crate::i18n::LayerKey::WhatEmbedding,
            // A gather and an add a value: reads the ids and writes the rows; reads a row of
            // the table and of the positions for each.
            forward: PlainWork {
                flops: t * d,
                values: t * d + t,
                params: 2 * t * d,
            },
            // The scatter-add: reads the ids and the output's gradient, writes the table's and
            // the positions' gradients.
            backward: PlainWork {
                flops: 2 * t * d,
                values: t * d + t,
                params: (self.vocab + t) * d,
            },
        })
    }

    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        _skip: Option<&Tensor>,
        params: Option<(&Tensor, &Tensor)>,
        _saved: &mut [Tensor],
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let params = params.ok_or_else(|| missing(&self.name))?;
        backend.embedding(input, params, out)
    }

    /// The tables' rows for one token of each sequence at `position`.
    fn decode(
        &self,
        backend: &mut dyn Backend,
        (input, _): (&Tensor, Option<&Tensor>),
        params: Option<(&Tensor, &Tensor)>,
        _saved: &mut [Tensor],
        position: usize,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let params = params.ok_or_else(|| missing(&self.name))?;
        backend.embedding_at(input, params, position, out)
    }

    /// The tables' gradients; the ids have none.
    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError> {
        let grads = pass.grads.ok_or_else(|| missing(&self.name))?;
        backend.embedding_backward(pass.input, pass.dout, grads)
    }
}
