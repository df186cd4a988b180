//! The ops of sequence models (a GPT): token and position embedding, causal multi-head
//! self-attention, and the residual connection's sums. A sequence of `len` positions of
//! `width` values is laid out as `len` rows of a tensor, sample after sample, so the products,
//! `LayerNorm` and GELU run over it unchanged, a row a position.

use super::error::BackendError;
use super::tensor::{Tensor, check_device, check_shape};
use crate::device::Device;
use crate::precision::DType;

/// The geometry of causal multi-head self-attention over a batch of sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionShape {
    /// Positions a sequence (the context length `T`).
    pub len: usize,
    /// Heads, each over `width / heads` of the values.
    pub heads: usize,
    /// Values a position (`d`, the model's width).
    pub width: usize,
}

impl AttentionShape {
    /// Values a head reads of each query, key and value (`d / heads`).
    pub fn head_width(self) -> usize {
        self.width / self.heads.max(1)
    }

    /// `1 / √(d / heads)`, what the scores are scaled by.
    pub fn scale(self) -> f32 {
        1.0 / (self.head_width().max(1) as f32).sqrt()
    }

    /// Probabilities a sample keeps for backward: a `T × T` matrix a head.
    pub fn probs_per_sample(self) -> usize {
        self.heads * self.len * self.len
    }
}

/// What a sequence model's layers ask of a device, besides the products, `LayerNorm` and the
/// activations of [`ComputeOps`](super::ComputeOps).
pub trait SequenceOps {
    /// `out[r] = table[ids[r]] + positions[r mod len]`: each row's token embedding (a row of
    /// `table`, `[vocab, d]`, chosen by the token id stored in `ids`, `rows` of them in f32) plus
    /// its position's (`positions`, `[len, d]`).
    fn embedding(
        &mut self,
        ids: &Tensor,
        params: (&Tensor, &Tensor),
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// The embedding's gradients: `dtable[v] = Σ_{r: ids[r] = v} dout[r]` (the scatter-add),
    /// `dpositions[t] = Σ_{r mod len = t} dout[r]`, each sum taken in the rows' order.
    fn embedding_backward(
        &mut self,
        ids: &Tensor,
        dout: &Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError>;

    /// Causal multi-head self-attention: `qkv` `[batch · T, 3d]` holds each position's query,
    /// key and value (head `h` reads columns `h·d/H ..` of each); per head,
    /// `P = softmax(Q Kᵀ / √(d/H))` with the keys after each query masked out, written into
    /// `probs` (`[batch · H · T, T]`, zero above the diagonal; computed in f32, stored as `probs`
    /// stores values), and `out = P V` (from the f32 probabilities), the heads
    /// side by side (`[batch · T, d]`).
    fn attention(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// Attention's backward pass into `dqkv` (`[batch · T, 3d]`): `dV = Pᵀ dO`,
    /// `dS = P ⊙ (dO Vᵀ − rowsum(P ⊙ dO Vᵀ))`, `dQ = dS K / √(d/H)`, `dK = dSᵀ Q / √(d/H)`.
    /// `probs` may be overwritten (the GPU keeps `dS` there): the next forward pass writes it
    /// again.
    fn attention_backward(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &mut Tensor,
        dout: &Tensor,
        dqkv: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// One new position of each of `rows` sequences, the same position `position` of every one
    /// (generation a token at a time): `out[r] = table[ids[r]] + positions[position]`.
    fn embedding_at(
        &mut self,
        ids: &Tensor,
        params: (&Tensor, &Tensor),
        position: usize,
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// A key-value cache filled from a whole window: `cache` (f32, `[batch · T, 2d]`) takes each
    /// row's key and value (the last two thirds of `qkv`'s `[batch · T, 3d]` rows).
    fn fill_cache(&mut self, qkv: &Tensor, cache: &mut Tensor) -> Result<(), BackendError>;

    /// Attention for one new position of each sequence with a key-value cache: row `b` of `qkv`
    /// (`[batch, 3d]`) is position `position` of sequence `b`; its key and value are written into
    /// the cache's row `b · T + position` (`cache` f32 `[batch · T, 2d]`, `T = shape.len`) and its
    /// query attends to its sequence's cached rows `0..=position`, the heads side by side in
    /// `out` (`[batch, d]`). The same sums as [`attention`](SequenceOps::attention)'s row
    /// `position`, over one row instead of the window.
    fn attention_step(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        position: usize,
        cache: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// `out = a + b`, value by value (a residual connection's sum).
    fn add(&mut self, a: &Tensor, b: &Tensor, out: &mut Tensor) -> Result<(), BackendError>;

    /// `dst += src`, value by value (a residual connection's gradient joining its source's).
    fn add_into(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError>;
}

/// `embedding` and its backward pass: `rows` ids in f32 (a token id is exact there, not in 16
/// bits; the batch's `[batch, T]` or a column), `rows_like` `[rows, d]`, the table `[vocab, d]` and the positions `[len, d]`
/// with `rows` a whole number of sequences. Returns `(rows, d, vocab, len)`.
pub(crate) fn check_embedding(
    device: Device,
    op: &'static str,
    (ids, rows_like): (&Tensor, &[&Tensor]),
    (table, positions): (&Tensor, &Tensor),
) -> Result<(usize, usize, usize, usize), BackendError> {
    let mut all = vec![ids, table, positions];
    all.extend(rows_like);
    check_device(device, op, &all)?;
    let d = table.cols();
    let rows = rows_like.first().map_or(ids.len(), |t| t.rows());
    let (vocab, len) = (table.rows(), positions.rows());
    check_shape(op, positions, len, d)?;
    for t in rows_like {
        check_shape(op, t, rows, d)?;
    }
    if ids.dtype() != DType::F32 || ids.len() != rows || len == 0 || rows % len != 0 || vocab == 0 {
        return Err(BackendError::Shape {
            op,
            detail: format!(
                "`{}` must be f32 and {rows} rows whole sequences of {len} positions over a \
                 vocabulary of {vocab}",
                ids.label()
            ),
        });
    }
    Ok((rows, d, vocab, len))
}

/// `attention` and its backward pass: `qkv` (and `dqkv`) `[batch · T, 3d]`, `out` (and
/// `dout`) `[batch · T, d]`, `probs` `[batch · H · T, T]`, `d` a multiple of the heads.
/// Returns the batch.
pub(crate) fn check_attention(
    device: Device,
    op: &'static str,
    shape: AttentionShape,
    (qkv_like, out_like): (&[&Tensor], &[&Tensor]),
    probs: &Tensor,
) -> Result<usize, BackendError> {
    let all: Vec<&Tensor> = qkv_like
        .iter()
        .chain(out_like)
        .chain(std::iter::once(&probs))
        .copied()
        .collect();
    check_device(device, op, &all)?;
    let AttentionShape { len, heads, width } = shape;
    let rows = qkv_like.first().map_or(0, |t| t.rows());
    if len == 0 || heads == 0 || width % heads != 0 || rows % len != 0 {
        return Err(BackendError::Shape {
            op,
            detail: format!(
                "{rows} rows of {len} positions, {width} values over {heads} heads: the rows must \
                 be whole sequences and the width a multiple of the heads"
            ),
        });
    }
    for t in qkv_like {
        check_shape(op, t, rows, 3 * width)?;
    }
    for t in out_like {
        check_shape(op, t, rows, width)?;
    }
    let batch = rows / len;
    check_shape(op, probs, batch * heads * len, len)?;
    Ok(batch)
}

/// `embedding_at`: `rows` ids in f32, `out` `[rows, d]`, the table `[vocab, d]`, the positions
/// `[len, d]` and `position` one of them. Returns `(d, vocab)`.
pub(crate) fn check_embedding_at(
    device: Device,
    (ids, out): (&Tensor, &Tensor),
    (table, positions): (&Tensor, &Tensor),
    position: usize,
) -> Result<(usize, usize), BackendError> {
    const OP: &str = "embedding_at";
    check_device(device, OP, &[ids, out, table, positions])?;
    let (d, vocab, len) = (table.cols(), table.rows(), positions.rows());
    check_shape(OP, positions, len, d)?;
    check_shape(OP, out, ids.len(), d)?;
    if ids.dtype() != DType::F32 || position >= len || vocab == 0 {
        return Err(BackendError::Shape {
            op: OP,
            detail: format!(
                "`{}` must be f32 and position {position} one of {len} over a vocabulary of                  {vocab}",
                ids.label()
            ),
        });
    }
    Ok((d, vocab))
}

/// `fill_cache` and `attention_step`: `qkv` `[rows, 3d]`, `out` `[rows, d]` (a step's), the
/// cache f32 `[rows_per_cache, 2d]`.
pub(crate) fn check_cache(
    device: Device,
    op: &'static str,
    (qkv, out): (&Tensor, Option<&Tensor>),
    cache: &Tensor,
    cache_rows: usize,
) -> Result<(), BackendError> {
    let mut all = vec![qkv, cache];
    all.extend(out);
    check_device(device, op, &all)?;
    let d = qkv.cols() / 3;
    check_shape(op, qkv, qkv.rows(), 3 * d)?;
    check_shape(op, cache, cache_rows, 2 * d)?;
    if let Some(out) = out {
        check_shape(op, out, qkv.rows(), d)?;
    }
    if cache.dtype() != DType::F32 || d == 0 {
        return Err(BackendError::Shape {
            op,
            detail: format!(
                "`{}` must be f32 and `{}` a query, key and value a row",
                cache.label(),
                qkv.label()
            ),
        });
    }
    Ok(())
}

/// `attention_step`: as [`check_cache`] with `T` cached rows a sequence, `position` one of
/// them and the width a multiple of the heads. Returns the batch.
pub(crate) fn check_attention_step(
    device: Device,
    (qkv, out): (&Tensor, &Tensor),
    shape: AttentionShape,
    position: usize,
    cache: &Tensor,
) -> Result<usize, BackendError> {
    const OP: &str = "attention_step";
    let AttentionShape { len, heads, width } = shape;
    let batch = qkv.rows();
    if heads == 0 || width % heads != 0 || position >= len || qkv.cols() != 3 * width {
        return Err(BackendError::Shape {
            op: OP,
            detail: format!(
                "position {position} of {len}, {width} values over {heads} heads: the position                  must be cached and the width a multiple of the heads"
            ),
        });
    }
    check_cache(device, OP, (qkv, Some(out)), cache, batch * len)?;
    Ok(batch)
}

/// `add` and `add_into`: every tensor on `device`, all one shape.
pub(crate) fn check_add(
    device: Device,
    op: &'static str,
    tensors: &[&Tensor],
) -> Result<(), BackendError> {
    super::checks::activation(device, op, tensors)
}
