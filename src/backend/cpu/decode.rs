//! Generation a token at a time on the CPU: the embedding of one position, and attention of one
//! new query against a key-value cache (the keys and values of the positions before it, kept
//! from step to step instead of recomputed). A step's work is a few rows, so it runs on the
//! calling thread: the pool's hand-off would cost more than the sums.

use super::CpuBackend;
use super::sequence::{axpy, dot, embed_rows};
use super::values::{host, host_mut, read_f32, write_f32};
use crate::backend::error::BackendError;
use crate::backend::sequence::{
    AttentionShape, check_attention_step, check_cache, check_embedding_at,
};
use crate::backend::tensor::Tensor;
use crate::device::Device;

impl CpuBackend {
    pub(super) fn embedding_at_op(
        &mut self,
        ids: &Tensor,
        (table, positions): (&Tensor, &Tensor),
        position: usize,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (d, vocab) = check_embedding_at(Device::Cpu, (ids, out), (table, positions), position)?;
        let (table_f, positions_f) = (read_f32(table), read_f32(positions));
        let at = &positions_f[position * d..][..d];
        write_f32(out, &mut self.census, |out_f| {
            embed_rows(out_f, host(ids), (&table_f, d, vocab), |_| at);
        });
        Ok(())
    }

    pub(super) fn fill_cache_op(qkv: &Tensor, cache: &mut Tensor) -> Result<(), BackendError> {
        check_cache(Device::Cpu, "fill_cache", (qkv, None), cache, qkv.rows())?;
        let d = qkv.cols() / 3;
        let qkv_f = read_f32(qkv);
        for (row, kv) in qkv_f.chunks(3 * d).zip(host_mut(cache).chunks_mut(2 * d)) {
            kv.copy_from_slice(&row[d..]);
        }
        Ok(())
    }

    pub(super) fn attention_step_op(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        position: usize,
        cache: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        check_attention_step(Device::Cpu, (qkv, out), shape, position, cache)?;
        let (t_len, d) = (shape.len, shape.width);
        let qkv_f = read_f32(qkv);
        let cache_f = host_mut(cache);
        let mut scores = vec![0.0f32; position + 1];
        write_f32(out, &mut self.census, |out_f| {
            for ((row, o), kv) in qkv_f
                .chunks(3 * d)
                .zip(out_f.chunks_mut(d))
                .zip(cache_f.chunks_mut(t_len * 2 * d))
            {
                attend_cached(shape, position, (row, kv), o, &mut scores);
            }
        });
        Ok(())
    }
}

/// One sequence's step: its new `row` of qkv (`[3d]`) written into its cache `kv` (`[T, 2d]`)
/// at `position`, then each head's query against the cached rows `0..=position` into `o`
/// (`[d]`); `scores` is a row of scratch.
fn attend_cached(
    shape: AttentionShape,
    position: usize,
    (row, kv): (&[f32], &mut [f32]),
    o: &mut [f32],
    scores: &mut [f32],
) {
    let (d, dh, scale) = (shape.width, shape.head_width(), shape.scale());
    kv[position * 2 * d..][..2 * d].copy_from_slice(&row[d..]);
    // The heads' weighted sums accumulate from zero.
    o.fill(0.0);
    for h in 0..shape.heads {
        let q = &row[h * dh..][..dh];
        // As the whole window's pass does: scaled dots, the softmax from the largest.
        for (j, s) in scores.iter_mut().enumerate() {
            *s = dot(q, &kv[j * 2 * d + h * dh..][..dh]) * scale;
        }
        let m = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for s in scores.iter_mut() {
            *s = (*s - m).exp();
            sum += *s;
        }
        let o = &mut o[h * dh..][..dh];
        for (j, s) in scores.iter().enumerate() {
            axpy(o, s / sum, &kv[j * 2 * d + d + h * dh..][..dh]);
        }
    }
}
