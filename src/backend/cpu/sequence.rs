//! A sequence model's ops on the CPU: the embedding's gather and scatter-add, causal
//! multi-head attention, and the residual sums. Attention runs a sample a task over the pool
//! (each sample's rows of `out` and `dqkv`, and its heads' probabilities, are its own), its
//! heads one after another, each head's queries, keys and values gathered into contiguous rows
//! and read a row at a time with vectorisable dots and updates. Not yet done: blocking `Q Kᵀ`
//! and `P V` into register-tiled products, as the dense layers' `gemm` is.

use rayon::prelude::*;

use super::CpuBackend;
use super::values::{host, host_mut, put, read_f32, write_f32};
use crate::backend::error::BackendError;
use crate::backend::sequence::{
    AttentionShape, SequenceOps, check_add, check_attention, check_embedding,
};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// `a · b` in eight running sums, so the compiler keeps them in one vector register (a single
/// running sum is a chain of dependent adds it may not reorder). With the heads gathered into
/// contiguous rows below, the baby GPT's whole CPU step at batch 12 went from 78 and 81 ms to 78
/// and 73 ms in two alternating runs on a 2-core VM: within the noise there; attention is not
/// yet blocked into products (see the module's notes).
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// `y += a · x`.
pub(super) fn axpy(y: &mut [f32], a: f32, x: &[f32]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// Head `h`'s part `part` (0 query, 1 key, 2 value) of every position of one sample's `qkv`,
/// gathered into `out` (`[T, dh]`, contiguous).
fn gather_head(s: AttentionShape, qkv: &[f32], (part, h): (usize, usize), out: &mut [f32]) {
    let (d, dh) = (s.width, s.head_width());
    for (t, row) in out.chunks_exact_mut(dh).enumerate() {
        row.copy_from_slice(&qkv[t * 3 * d + part * d + h * dh..][..dh]);
    }
}

/// One sample's attention forward: `qkv` its `[T, 3d]` rows, `probs` its `[H · T, T]`, `out`
/// its `[T, d]`.
fn attention_sample(s: AttentionShape, qkv: &[f32], probs: &mut [f32], out: &mut [f32]) {
    let (t_len, d, dh, scale) = (s.len, s.width, s.head_width(), s.scale());
    let (mut q, mut k, mut v) = (
        vec![0.0; t_len * dh],
        vec![0.0; t_len * dh],
        vec![0.0; t_len * dh],
    );
    for h in 0..s.heads {
        gather_head(s, qkv, (0, h), &mut q);
        gather_head(s, qkv, (1, h), &mut k);
        gather_head(s, qkv, (2, h), &mut v);
        for i in 0..t_len {
            let q_i = &q[i * dh..][..dh];
            let row = &mut probs[(h * t_len + i) * t_len..][..t_len];
            let mut max = f32::NEG_INFINITY;
            for (p, k_j) in row[..=i].iter_mut().zip(k.chunks_exact(dh)) {
                *p = dot(q_i, k_j) * scale;
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
            for (&p, v_j) in row[..=i].iter().zip(v.chunks_exact(dh)) {
                axpy(o, p, v_j);
            }
        }
    }
}

/// One sample's attention backward into its `[T, 3d]` rows of `dqkv`, from its `qkv`, `probs`
/// and `dout` (`[T, d]`): per head into contiguous `dQ`, `dK`, `dV`, then into place.
fn attention_sample_backward(
    s: AttentionShape,
    (qkv, probs, dout): (&[f32], &[f32], &[f32]),
    dqkv: &mut [f32],
) {
    let (t_len, d, dh, scale) = (s.len, s.width, s.head_width(), s.scale());
    let n = t_len * dh;
    let (mut q, mut k, mut v) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut dq, mut dk, mut dv) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut ds = vec![0.0f32; t_len];
    for h in 0..s.heads {
        gather_head(s, qkv, (0, h), &mut q);
        gather_head(s, qkv, (1, h), &mut k);
        gather_head(s, qkv, (2, h), &mut v);
        for buffer in [&mut dq, &mut dk, &mut dv] {
            buffer.fill(0.0);
        }
        for i in 0..t_len {
            let row = &probs[(h * t_len + i) * t_len..][..=i];
            let dout_i = &dout[i * d + h * dh..][..dh];
            // dP_ij = dO_i · V_j, and the row's Σ_j P_ij dP_ij.
            let mut rowdot = 0.0f32;
            for ((&p, g), v_j) in row.iter().zip(&mut ds).zip(v.chunks_exact(dh)) {
                *g = dot(dout_i, v_j);
                rowdot += p * *g;
            }
            let q_i = &q[i * dh..][..dh];
            for (j, (&p, &g)) in row.iter().zip(&ds).enumerate() {
                // dS_ij, scaled as the scores were.
                let g = p * (g - rowdot) * scale;
                axpy(&mut dq[i * dh..][..dh], g, &k[j * dh..][..dh]);
                axpy(&mut dk[j * dh..][..dh], g, q_i);
                // dV_j += P_ij dO_i.
                axpy(&mut dv[j * dh..][..dh], p, dout_i);
            }
        }
        for (t, row) in dqkv.chunks_exact_mut(3 * d).enumerate() {
            for (part, grad) in [&dq, &dk, &dv].into_iter().enumerate() {
                row[part * d + h * dh..][..dh].copy_from_slice(&grad[t * dh..][..dh]);
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
        let qkv_f = read_f32(qkv);
        let (t_len, d) = (shape.len, shape.width);
        let per = shape.probs_per_sample();
        let parallel = self.parallel(probs.len() * shape.head_width());
        // A 16-bit `probs` is computed in f32 and rounded into place afterwards.
        let half = probs.dtype() != crate::precision::DType::F32;
        let mut probs_scratch = if half {
            vec![0.0f32; probs.len()]
        } else {
            Vec::new()
        };
        let probs_f: &mut [f32] = if half {
            &mut probs_scratch
        } else {
            host_mut(probs)
        };
        let pool = &self.pool;
        let work = |((qkv, probs), out): ((&[f32], &mut [f32]), &mut [f32])| {
            attention_sample(shape, qkv, probs, out);
        };
        write_f32(out, &mut self.census, |out_f| {
            if parallel {
                pool.install(|| {
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
        });
        if half {
            put(probs, &probs_scratch, &mut self.census);
        }
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
        let (qkv_f, dout_f) = (read_f32(qkv), read_f32(dout));
        let (t_len, d) = (shape.len, shape.width);
        let per = shape.probs_per_sample();
        let probs_f = read_f32(probs);
        let parallel = self.parallel(probs_f.len() * shape.head_width());
        let pool = &self.pool;
        let work = |(((qkv, probs), dout), dqkv): SampleBackward<'_>| {
            attention_sample_backward(shape, (qkv, probs, dout), dqkv);
        };
        write_f32(dqkv, &mut self.census, |dqkv_f| {
            if parallel {
                pool.install(|| {
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
        });
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
        let (table_f, positions_f) = (read_f32(table), read_f32(positions));
        write_f32(out, &mut self.census, |out_f| {
            embed_rows(out_f, host(ids), (&table_f, d, vocab), |r| {
                &positions_f[(r % len) * d..][..d]
            });
        });
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
        let dout_f = read_f32(dout);
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
        let (a_f, b_f) = (read_f32(a), read_f32(b));
        write_f32(out, &mut self.census, |out_f| {
            for ((o, x), y) in out_f.iter_mut().zip(a_f.iter()).zip(b_f.iter()) {
                *o = x + y;
            }
        });
        Ok(())
    }

    fn add_into_op(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        check_add(Device::Cpu, "add_into", &[src, dst])?;
        let s_f = read_f32(src);
        if matches!(dst.dtype(), crate::precision::DType::F32) {
            for (d, s) in host_mut(dst).iter_mut().zip(s_f.iter()) {
                *d += s;
            }
        } else {
            let sum: Vec<f32> = read_f32(dst)
                .iter()
                .zip(s_f.iter())
                .map(|(x, y)| x + y)
                .collect();
            put(dst, &sum, &mut self.census);
        }
        Ok(())
    }
}

/// `out[r] = table[ids[r]] + position(r)`, a row of `d` values each: the embedding's gather,
/// whichever position each row sits at.
pub(super) fn embed_rows<'p>(
    out: &mut [f32],
    ids: &[f32],
    (table, d, vocab): (&[f32], usize, usize),
    position: impl Fn(usize) -> &'p [f32],
) {
    for (r, (o, &id)) in out.chunks_mut(d).zip(ids).enumerate() {
        let e = &table[token(id, vocab) * d..][..d];
        for ((o, &e), &p) in o.iter_mut().zip(e).zip(position(r)) {
            *o = e + p;
        }
    }
}

/// A token id as an index: the data pipeline checks every id against the vocabulary, so an id
/// out of range (or not a whole number) is read as token 0 rather than out of bounds, as the
/// GPU's kernel clamps it.
pub(super) fn token(id: f32, vocab: usize) -> usize {
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

    fn embedding_at(
        &mut self,
        ids: &Tensor,
        params: (&Tensor, &Tensor),
        position: usize,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("embedding_at", |s| {
            s.embedding_at_op(ids, params, position, out)
        })
    }

    fn fill_cache(&mut self, qkv: &Tensor, cache: &mut Tensor) -> Result<(), BackendError> {
        self.timed("fill_cache", |_| Self::fill_cache_op(qkv, cache))
    }

    fn attention_step(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        position: usize,
        cache: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("attention_step", |s| {
            s.attention_step_op(qkv, shape, position, cache, out)
        })
    }

    fn add(&mut self, a: &Tensor, b: &Tensor, out: &mut Tensor) -> Result<(), BackendError> {
        self.timed("add", |s| s.add_op(a, b, out))
    }

    fn add_into(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        self.timed("add_into", |s| s.add_into_op(src, dst))
    }
}
