//! A sequence model's ops on the CPU: the embedding's gather and scatter-add, causal
//! multi-head attention, and the residual sums. Attention runs a sample a task over the pool
//! (each sample's rows of `out` and `dqkv`, and its heads' probabilities, are its own), its
//! heads one after another; within a head the loops read the keys and values row by row, as
//! they lie.

use rayon::prelude::*;

use super::CpuBackend;
use super::values::{host, host_mut, put, widened};
use crate::backend::error::BackendError;
use crate::backend::sequence::{
    AttentionShape, SequenceOps, check_add, check_attention, check_embedding,
};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// One sample's attention forward: `qkv` its `[T, 3d]` rows, `probs` its `[H · T, T]`, `out`
/// its `[T, d]`.
fn attention_sample(s: AttentionShape, qkv: &[f32], probs: &mut [f32], out: &mut [f32]) {
    let (t_len, d, dh, scale) = (s.len, s.width, s.head_width(), s.scale());
    for h in 0..s.heads {
        for i in 0..t_len {
            let q = &qkv[i * 3 * d + h * dh..][..dh];
            let row = &mut probs[(h * t_len + i) * t_len..][..t_len];
            let mut max = f32::NEG_INFINITY;
            for (j, p) in row[..=i].iter_mut().enumerate() {
                let k = &qkv[j * 3 * d + d + h * dh..][..dh];
                *p = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
                max = max.max(*p);
            }
            let mut sum = 0.0f32;
            for p in &mut row[..=i] {
                *p = (*p - max).exp();
                sum += *p;
            }
            for p in &mut row[..=i] {
                *p /= sum;
            }
            row[i + 1..].fill(0.0);
            let o = &mut out[i * d + h * dh..][..dh];
            o.fill(0.0);
            for (j, &p) in row[..=i].iter().enumerate() {
                let v = &qkv[j * 3 * d + 2 * d + h * dh..][..dh];
                for (o, &v) in o.iter_mut().zip(v) {
                    *o += p * v;
                }
            }
        }
    }
}

/// One sample's attention backward into its `[T, 3d]` rows of `dqkv`, from its `qkv`, `probs`
/// and `dout` (`[T, d]`); `ds` is a row of scratch.
fn attention_sample_backward(
    s: AttentionShape,
    (qkv, probs, dout): (&[f32], &[f32], &[f32]),
    dqkv: &mut [f32],
) {
    let (t_len, d, dh, scale) = (s.len, s.width, s.head_width(), s.scale());
    dqkv.fill(0.0);
    let mut ds = vec![0.0f32; t_len];
    for h in 0..s.heads {
        for i in 0..t_len {
            let row = &probs[(h * t_len + i) * t_len..][..=i];
            let dout_i = &dout[i * d + h * dh..][..dh];
            // dP_ij = dO_i · V_j, and the row's Σ_j P_ij dP_ij.
            let mut dot = 0.0f32;
            for (j, (&p, g)) in row.iter().zip(&mut ds).enumerate() {
                let v = &qkv[j * 3 * d + 2 * d + h * dh..][..dh];
                *g = dout_i.iter().zip(v).map(|(a, b)| a * b).sum::<f32>();
                dot += p * *g;
            }
            for (j, (&p, g)) in row.iter().zip(&mut ds).enumerate() {
                // dS_ij, scaled as the scores were.
                let g = p * (*g - dot) * scale;
                let (q_at, k_at, v_at) = (i * 3 * d + h * dh, j * 3 * d + d + h * dh, j * 3 * d);
                for c in 0..dh {
                    dqkv[q_at + c] += g * qkv[k_at + c];
                    dqkv[k_at + c] += g * qkv[q_at + c];
                    // dV_j += P_ij dO_i.
                    dqkv[v_at + 2 * d + h * dh + c] += p * dout_i[c];
                }
            }
        }
    }
}

/// One sample's `((qkv, probs), dout)` and its rows of `dqkv`, as the pool hands them out.
type SampleBackward<'a> = (((&'a [f32], &'a [f32]), &'a [f32]), &'a mut [f32]);

impl CpuBackend {
    fn attention_op(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        check_attention(Device::Cpu, "attention", shape, (&[qkv], &[out]), probs)?;
        let qkv_f = widened(qkv);
        let mut out_f = vec![0.0f32; out.len()];
        let (t_len, d) = (shape.len, shape.width);
        let per = shape.probs_per_sample();
        let probs_f = host_mut(probs);
        let work = |((qkv, probs), out): ((&[f32], &mut [f32]), &mut [f32])| {
            attention_sample(shape, qkv, probs, out);
        };
        if self.parallel(probs_f.len() * shape.head_width()) {
            self.pool.install(|| {
                qkv_f
                    .par_chunks(t_len * 3 * d)
                    .zip(probs_f.par_chunks_mut(per))
                    .zip(out_f.par_chunks_mut(t_len * d))
                    .for_each(work);
            });
        } else {
            qkv_f
                .chunks(t_len * 3 * d)
                .zip(probs_f.chunks_mut(per))
                .zip(out_f.chunks_mut(t_len * d))
                .for_each(work);
        }
        put(out, &out_f, &mut self.census);
        Ok(())
    }

    fn attention_backward_op(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &Tensor,
        dout: &Tensor,
        dqkv: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "attention_backward";
        check_attention(Device::Cpu, OP, shape, (&[qkv, dqkv], &[dout]), probs)?;
        let (qkv_f, dout_f) = (widened(qkv), widened(dout));
        let mut dqkv_f = vec![0.0f32; dqkv.len()];
        let (t_len, d) = (shape.len, shape.width);
        let per = shape.probs_per_sample();
        let probs_f = host(probs);
        let work = |(((qkv, probs), dout), dqkv): SampleBackward<'_>| {
            attention_sample_backward(shape, (qkv, probs, dout), dqkv);
        };
        if self.parallel(probs_f.len() * shape.head_width()) {
            self.pool.install(|| {
                qkv_f
                    .par_chunks(t_len * 3 * d)
                    .zip(probs_f.par_chunks(per))
                    .zip(dout_f.par_chunks(t_len * d))
                    .zip(dqkv_f.par_chunks_mut(t_len * 3 * d))
                    .for_each(work);
            });
        } else {
            qkv_f
                .chunks(t_len * 3 * d)
                .zip(probs_f.chunks(per))
                .zip(dout_f.chunks(t_len * d))
                .zip(dqkv_f.chunks_mut(t_len * 3 * d))
                .for_each(work);
        }
        put(dqkv, &dqkv_f, &mut self.census);
        Ok(())
    }

    fn embedding_op(
        &mut self,
        ids: &Tensor,
        (table, positions): (&Tensor, &Tensor),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (_, d, vocab, len) =
            check_embedding(Device::Cpu, "embedding", (ids, &[out]), (table, positions))?;
        let (table_f, positions_f) = (widened(table), widened(positions));
        let mut out_f = vec![0.0f32; out.len()];
        for (r, (o, &id)) in out_f.chunks_mut(d).zip(host(ids)).enumerate() {
            let token = token(id, vocab);
            let (e, p) = (
                &table_f[token * d..][..d],
                &positions_f[(r % len) * d..][..d],
            );
            for ((o, &e), &p) in o.iter_mut().zip(e).zip(p) {
                *o = e + p;
            }
        }
        put(out, &out_f, &mut self.census);
        Ok(())
    }

    fn embedding_backward_op(
        &mut self,
        ids: &Tensor,
        dout: &Tensor,
        (dtable, dpositions): (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        let (_, d, vocab, len) = check_embedding(
            Device::Cpu,
            "embedding_backward",
            (ids, &[dout]),
            (dtable, dpositions),
        )?;
        let dout_f = widened(dout);
        let (mut dt, mut dp) = (vec![0.0f32; vocab * d], vec![0.0f32; len * d]);
        for (r, (g, &id)) in dout_f.chunks(d).zip(host(ids)).enumerate() {
            let token = token(id, vocab);
            for (t, &g) in dt[token * d..][..d].iter_mut().zip(g) {
                *t += g;
            }
            for (p, &g) in dp[(r % len) * d..][..d].iter_mut().zip(g) {
                *p += g;
            }
        }
        put(dtable, &dt, &mut self.census);
        put(dpositions, &dp, &mut self.census);
        Ok(())
    }

    fn add_op(&mut self, a: &Tensor, b: &Tensor, out: &mut Tensor) -> Result<(), BackendError> {
        check_add(Device::Cpu, "add", &[a, b, out])?;
        let (a_f, b_f) = (widened(a), widened(b));
        let sum: Vec<f32> = a_f.iter().zip(&b_f).map(|(x, y)| x + y).collect();
        put(out, &sum, &mut self.census);
        Ok(())
    }

    fn add_into_op(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        check_add(Device::Cpu, "add_into", &[src, dst])?;
        let (s_f, d_f) = (widened(src), widened(dst));
        let sum: Vec<f32> = d_f.iter().zip(&s_f).map(|(x, y)| x + y).collect();
        put(dst, &sum, &mut self.census);
        Ok(())
    }
}

/// A token id as an index: the data pipeline checks every id against the vocabulary, so an id
/// out of range (or not a whole number) is read as token 0 rather than out of bounds, as the
/// GPU's kernel clamps it.
fn token(id: f32, vocab: usize) -> usize {
    if id >= 0.0 && (id as usize) < vocab {
        id as usize
    } else {
        0
    }
}

impl SequenceOps for CpuBackend {
    fn embedding(
        &mut self,
        ids: &Tensor,
        params: (&Tensor, &Tensor),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("embedding", |s| s.embedding_op(ids, params, out))
    }

    fn embedding_backward(
        &mut self,
        ids: &Tensor,
        dout: &Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        self.timed("embedding_backward", |s| {
            s.embedding_backward_op(ids, dout, grads)
        })
    }

    fn attention(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("attention", |s| s.attention_op(qkv, shape, probs, out))
    }

    fn attention_backward(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &mut Tensor,
        dout: &Tensor,
        dqkv: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("attention_backward", |s| {
            s.attention_backward_op(qkv, shape, probs, dout, dqkv)
        })
    }

    fn add(&mut self, a: &Tensor, b: &Tensor, out: &mut Tensor) -> Result<(), BackendError> {
        self.timed("add", |s| s.add_op(a, b, out))
    }

    fn add_into(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        self.timed("add_into", |s| s.add_into_op(src, dst))
    }
}
