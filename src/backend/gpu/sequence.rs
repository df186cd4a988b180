//! A sequence model's ops on the GPU: `shaders/sequence.wgsl` (the embedding, the residual
//! sums) and `shaders/attention.wgsl`, through working copies for 16-bit tensors as every op
//! here. Attention's probabilities are f32 always.

use super::GpuBackend;
use super::dispatch::Binding;
use super::kernels::{KernelId, SequenceKernel, SequenceParams};
use crate::backend::error::BackendError;
use crate::backend::sequence::{
    AttentionShape, SequenceOps, check_add, check_attention, check_attention_step, check_cache,
    check_embedding, check_embedding_at,
};
use crate::backend::tensor::Tensor;
use crate::device::Device;

/// A count as a kernel's `u32`, or why a tensor is too large for one.
fn count(n: usize, op: &'static str) -> Result<u32, BackendError> {
    u32::try_from(n).map_err(|_| BackendError::Shape {
        op,
        detail: format!("{n} values are more than one pass of a kernel can count"),
    })
}

impl GpuBackend {
    /// Records `kernel` over `bindings`, an invocation each of `params.len`.
    fn sequence_pass(
        &mut self,
        kernel: SequenceKernel,
        mut params: SequenceParams,
        bindings: &[Binding],
    ) -> Result<(), BackendError> {
        let groups = self.stream.groups(params.len);
        params.groups_x = groups.0;
        self.stream.dispatch(
            &mut self.recorder,
            KernelId::Sequence(kernel),
            kernel.entry_point(),
            &params,
            bindings,
            groups,
        )
    }

    /// The attention kernels' parameters for `batch` samples of `shape`, covering `len`.
    fn attention_params(shape: AttentionShape, batch: usize, len: usize) -> SequenceParams {
        SequenceParams {
            len: len as u32,
            rows: (batch * shape.len) as u32,
            width: shape.width as u32,
            positions: shape.len as u32,
            heads: shape.heads as u32,
            scale: shape.scale(),
            ..SequenceParams::default()
        }
    }
}

impl SequenceOps for GpuBackend {
    fn embedding(
        &mut self,
        ids: &Tensor,
        (table, positions): (&Tensor, &Tensor),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "embedding";
        let (rows, d, vocab, len) =
            check_embedding(Device::Gpu, OP, (ids, &[out]), (table, positions))?;
        self.prepare(&[out, table, positions])?;
        let bindings = [
            Binding::of(ids)?,
            self.output(out, 1, false)?,
            self.operand(table, 2)?,
            self.operand(positions, 3)?,
        ];
        let params = SequenceParams {
            len: count(rows * d, OP)?,
            rows: rows as u32,
            width: d as u32,
            positions: len as u32,
            vocab: count(vocab, OP)?,
            ..SequenceParams::default()
        };
        self.sequence_pass(SequenceKernel::Embedding, params, &bindings)?;
        self.store(out, 1)
    }

    fn embedding_backward(
        &mut self,
        ids: &Tensor,
        dout: &Tensor,
        (dtable, dpositions): (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        const OP: &str = "embedding_backward";
        let (rows, d, vocab, len) =
            check_embedding(Device::Gpu, OP, (ids, &[dout]), (dtable, dpositions))?;
        self.prepare(&[dout, dtable, dpositions])?;
        let base = SequenceParams {
            rows: rows as u32,
            width: d as u32,
            positions: len as u32,
            vocab: count(vocab, OP)?,
            ..SequenceParams::default()
        };
        let bindings = [
            Binding::of(ids)?,
            self.output(dtable, 1, false)?,
            self.operand(dout, 2)?,
        ];
        let params = SequenceParams {
            len: count(vocab * d, OP)?,
            ..base
        };
        self.sequence_pass(SequenceKernel::EmbeddingTableGrad, params, &bindings)?;
        self.store(dtable, 1)?;
        let bindings = [self.operand(dout, 2)?, self.output(dpositions, 3, false)?];
        let params = SequenceParams {
            len: count(len * d, OP)?,
            ..base
        };
        self.sequence_pass(SequenceKernel::EmbeddingPositionGrad, params, &bindings)?;
        self.store(dpositions, 3)
    }

    fn attention(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "attention";
        let batch = check_attention(Device::Gpu, OP, shape, (&[qkv], &[out]), probs)?;
        self.prepare(&[qkv, out, probs])?;
        let bindings = [
            self.operand(qkv, 0)?,
            self.output(out, 1, false)?,
            self.output(probs, 2, false)?,
        ];
        let queries = count(batch * shape.heads * shape.len, OP)?;
        let params = Self::attention_params(shape, batch, queries as usize);
        self.sequence_pass(SequenceKernel::Attention, params, &bindings)?;
        self.store(out, 1)?;
        self.store(probs, 2)
    }

    fn attention_backward(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        probs: &mut Tensor,
        dout: &Tensor,
        dqkv: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "attention_backward";
        let batch = check_attention(Device::Gpu, OP, shape, (&[qkv, dqkv], &[dout]), probs)?;
        self.prepare(&[qkv, dout, dqkv, probs])?;
        // A 16-bit `probs` is widened into working copy 3; the scores' gradient written over it
        // there is scratch, never rounded back (the next forward pass writes `probs` again).
        let with_dout = [
            self.operand(qkv, 0)?,
            self.output(dqkv, 1, false)?,
            self.operand(probs, 3)?,
            self.operand(dout, 2)?,
        ];
        let queries = count(batch * shape.heads * shape.len, OP)?;
        let values = count(batch * shape.len * shape.width, OP)?;
        let per_value = Self::attention_params(shape, batch, values as usize);
        let per_query = Self::attention_params(shape, batch, queries as usize);
        // dV reads P before the scores' gradient overwrites it with dS.
        self.sequence_pass(SequenceKernel::AttentionValuesGrad, per_value, &with_dout)?;
        self.sequence_pass(SequenceKernel::AttentionScoresGrad, per_query, &with_dout)?;
        let bindings = &with_dout[..3];
        self.sequence_pass(SequenceKernel::AttentionQueriesGrad, per_value, bindings)?;
        self.sequence_pass(SequenceKernel::AttentionKeysGrad, per_value, bindings)?;
        self.store(dqkv, 1)
    }

    fn embedding_at(
        &mut self,
        ids: &Tensor,
        (table, positions): (&Tensor, &Tensor),
        position: usize,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "embedding_at";
        let (d, vocab) = check_embedding_at(Device::Gpu, (ids, out), (table, positions), position)?;
        self.prepare(&[out, table, positions])?;
        let bindings = [
            Binding::of(ids)?,
            self.output(out, 1, false)?,
            self.operand(table, 2)?,
            self.operand(positions, 3)?,
        ];
        let params = SequenceParams {
            len: count(out.len(), OP)?,
            width: d as u32,
            vocab: count(vocab, OP)?,
            position: count(position, OP)?,
            ..SequenceParams::default()
        };
        self.sequence_pass(SequenceKernel::EmbeddingAt, params, &bindings)?;
        self.store(out, 1)
    }

    fn fill_cache(&mut self, qkv: &Tensor, cache: &mut Tensor) -> Result<(), BackendError> {
        const OP: &str = "fill_cache";
        check_cache(Device::Gpu, OP, (qkv, None), cache, qkv.rows())?;
        self.prepare(&[qkv])?;
        let bindings = [self.operand(qkv, 0)?, Binding::of(cache)?];
        let params = SequenceParams {
            len: count(cache.len(), OP)?,
            width: (qkv.cols() / 3) as u32,
            ..SequenceParams::default()
        };
        self.sequence_pass(SequenceKernel::FillCache, params, &bindings)
    }

    fn attention_step(
        &mut self,
        qkv: &Tensor,
        shape: AttentionShape,
        position: usize,
        cache: &mut Tensor,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "attention_step";
        let batch = check_attention_step(Device::Gpu, (qkv, out), shape, position, cache)?;
        self.prepare(&[qkv, out])?;
        let bindings = [
            self.operand(qkv, 0)?,
            self.output(out, 1, false)?,
            Binding::of(cache)?,
        ];
        let params = SequenceParams {
            position: count(position, OP)?,
            ..Self::attention_params(shape, batch, batch * shape.heads)
        };
        self.sequence_pass(SequenceKernel::AttentionStep, params, &bindings)?;
        self.store(out, 1)
    }

    fn add(&mut self, a: &Tensor, b: &Tensor, out: &mut Tensor) -> Result<(), BackendError> {
        const OP: &str = "add";
        check_add(Device::Gpu, OP, &[a, b, out])?;
        self.prepare(&[a, b, out])?;
        let bindings = [
            self.operand(a, 0)?,
            self.output(out, 1, false)?,
            self.operand(b, 2)?,
        ];
        let params = SequenceParams {
            len: count(out.len(), OP)?,
            ..SequenceParams::default()
        };
        self.sequence_pass(SequenceKernel::Add, params, &bindings)?;
        self.store(out, 1)
    }

    fn add_into(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        const OP: &str = "add_into";
        check_add(Device::Gpu, OP, &[src, dst])?;
        self.prepare(&[src, dst])?;
        let bindings = [self.operand(src, 0)?, self.output(dst, 1, true)?];
        let params = SequenceParams {
            len: count(dst.len(), OP)?,
            ..SequenceParams::default()
        };
        self.sequence_pass(SequenceKernel::AddInto, params, &bindings)?;
        self.store(dst, 1)
    }
}
