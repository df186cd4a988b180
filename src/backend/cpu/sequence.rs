//! A sequence model's ops on the CPU: the embedding's gather and scatter-add, causal
//! multi-head attention, and the residual sums. Attention runs a sample a task over the pool
//! (each sample's rows of `out` and `dqkv`, and its heads' probabilities, are its own), its
//! heads one after another, each head's products through `gemm` on its queries, keys and
//! values where they lie in the sample's rows.

use rayon::prelude::*;

use super::CpuBackend;
use super::matmul::{View, gemm_view};
use super::values::{host, host_mut, put, read_f32, write_f32};
use crate::backend::error::BackendError;
use crate::backend::sequence::{
    AttentionShape, SequenceOps, check_add, check_attention, check_embedding,
};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// `a · b` in eight running sums, so the compiler keeps them in one vector register (a single
/// running sum is a chain of dependent adds it may not reorder): a decode step's one query
/// against each cached key.
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

/// Head `h`'s part `part` (0 query, 1 key, 2 value) of one sample's `[T, 3d]` rows, as a
/// `[T, dh]` matrix read in place.
fn head(s: AttentionShape, qkv: &[f32], (part, h): (usize, usize)) -> View<'_> {
    let (d, dh) = (s.width, s.head_width());
    View::rows(&qkv[part * d + h * dh..], s.len, dh, 3 * d)
}

/// The causal softmax of each row of `scores` (`[T, T]`, already scaled) in place: row `i` over
/// its first `i + 1` values, zero after them.
fn causal_softmax(scores: &mut [f32], t_len: usize) {
    for (i, row) in scores.chunks_exact_mut(t_len).enumerate() {
        let max = row[..=i].iter().fold(f32::NEG_INFINITY, |m, &p| m.max(p));
        let mut sum = 0.0f32;
        for p in &mut row[..=i] {
            *p = (*p - max).exp();
            sum += *p;
        }
        let inv = 1.0 / sum;
        for p in &mut row[..=i] {
            *p *= inv;
        }
        row[i + 1..].fill(0.0);
    }
}

/// One sample's attention forward: `qkv` its `[T, 3d]` rows, `probs` its `[H · T, T]`, `out`
/// its `[T, d]`. Each head's two products run through `gemm` reading the queries, keys and values
/// where they lie: the scores `Q Kᵀ / √dh` straight into the head's probabilities, then
/// `P V` into the head's columns of `out`.
///
/// Chosen by measurement (baby GPT, batch 12, 2 threads): a loop of a dot product per pair and
/// an update per row took about 13% of the CPU step (forward 5%, backward 8%, by `perf`), its
/// short dots (`dh` = 32) paying a horizontal sum each; `gemm`'s register-tiled AVX-512
/// kernels do the same products as blocks. The causal half above the diagonal is computed and
/// discarded: at these sizes a triangle-aware loop would save less than it costs.
fn attention_sample(s: AttentionShape, qkv: &[f32], probs: &mut [f32], out: &mut [f32]) {
    let (t_len, d) = (s.len, s.width);
    for (h, scores) in probs.chunks_exact_mut(t_len * t_len).enumerate() {
        let keys = head(s, qkv, (1, h)).t();
        gemm_view(
            head(s, qkv, (0, h)),
            keys,
            (scores, t_len),
            s.scale(),
            false,
        );
        causal_softmax(scores, t_len);
        let p = View::rows(scores, t_len, t_len, t_len);
        let o = &mut out[h * s.head_width()..];
        gemm_view(p, head(s, qkv, (2, h)), (o, d), 1.0, false);
    }
}

/// One sample's attention backward into its `[T, 3d]` rows of `dqkv`, from its `qkv`, `probs`
/// and `dout` (`[T, d]`), a head at a time, every product through `gemm` in place (see
/// [`attention_sample`]): `dP = dO Vᵀ`, the softmax's gradient `dS = P ⊙ (dP − rowsum(P ⊙ dP))`
/// scaled as the scores were, then `dV = Pᵀ dO`, `dQ = dS K` and `dK = dSᵀ Q` straight into
/// the head's columns of `dqkv`.
fn attention_sample_backward(
    s: AttentionShape,
    (qkv, probs, dout): (&[f32], &[f32], &[f32]),
    dqkv: &mut [f32],
) {
    let (t_len, d, dh, scale) = (s.len, s.width, s.head_width(), s.scale());
    let mut ds = vec![0.0f32; t_len * t_len];
    for (h, p) in probs.chunks_exact(t_len * t_len).enumerate() {
        let d_out = View::rows(&dout[h * dh..], t_len, dh, d);
        gemm_view(
            d_out,
            head(s, qkv, (2, h)).t(),
            (&mut ds, t_len),
            1.0,
            false,
        );
        for (i, (g, p)) in ds
            .chunks_exact_mut(t_len)
            .zip(p.chunks_exact(t_len))
            .enumerate()
        {
            let rowdot: f32 = g[..=i].iter().zip(&p[..=i]).map(|(g, p)| g * p).sum();
            for (g, &p) in g[..=i].iter_mut().zip(&p[..=i]) {
                *g = p * (*g - rowdot) * scale;
            }
            g[i + 1..].fill(0.0);
        }
        let p = View::rows(p, t_len, t_len, t_len);
        let d_s = View::rows(&ds, t_len, t_len, t_len);
        let at = |part: usize| part * d + h * dh;
        gemm_view(p.t(), d_out, (&mut dqkv[at(2)..], 3 * d), 1.0, false);
        gemm_view(
            d_s,
            head(s, qkv, (1, h)),
            (&mut dqkv[at(0)..], 3 * d),
            1.0,
            false,
        );
        gemm_view(
            d_s.t(),
            head(s, qkv, (0, h)),
            (&mut dqkv[at(1)..], 3 * d),
            1.0,
            false,
        );
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
