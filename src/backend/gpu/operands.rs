//! How an op reaches its operands' values in f32: an f32 tensor is bound as it is; a 16-bit one
//! is widened into a working copy first, and a 16-bit result is rounded back from one (what the
//! rounding loses counted by the kernel into the census).

use super::GpuBackend;
use super::dispatch::Binding;
use super::kernels::{ConvertParams, KernelId};
use super::working::is_working_view;
use crate::backend::error::BackendError;
use crate::backend::tensor::{Tensor, WORKING_COPIES, WORKING_LABELS, largest_half};
use crate::backend::traits::DeviceMemory;
use crate::memory::Role;
use crate::precision::{DType, Half};

impl GpuBackend {
    /// Makes the working copies hold at least `len` values each. New copies are new buffers, so
    /// the cached bind groups of the old ones are dropped.
    pub(super) fn ensure_working(&mut self, len: usize) -> Result<(), BackendError> {
        if len == 0 || self.working.hold(len) {
            return Ok(());
        }
        self.forget_working();
        let mut copies = Vec::with_capacity(WORKING_COPIES);
        for label in WORKING_LABELS {
            copies.push(self.alloc_as(Role::Workspace, label, (1, len), DType::F32)?);
        }
        self.working.replace(copies);
        Ok(())
    }

    /// Drops the working copies and every cached dispatch that binds one.
    pub(super) fn forget_working(&mut self) {
        self.working.clear();
        self.stream.forget_dispatches(is_working_view);
    }

    /// Makes the working copies large enough for the 16-bit tensors among `operands`, before an
    /// op binds any of them.
    pub(super) fn prepare(&mut self, operands: &[&Tensor]) -> Result<(), BackendError> {
        self.ensure_working(largest_half(operands))
    }

    /// `t` as an op reads it in f32: its own buffer, or working copy `slot` with its values
    /// widened in (16-bit `t`).
    pub(super) fn operand(&mut self, t: &Tensor, slot: usize) -> Result<Binding, BackendError> {
        self.output(t, slot, true)
    }

    /// Where an op writes `t` in f32: its own buffer, or working copy `slot` (16-bit `t`; with
    /// its values widened in first when `load`, for ops that update in place). [`Self::store`]
    /// rounds the result back.
    pub(super) fn output(
        &mut self,
        t: &Tensor,
        slot: usize,
        load: bool,
    ) -> Result<Binding, BackendError> {
        let Some(format) = t.dtype().half() else {
            return Binding::of(t);
        };
        let copy = self.working.binding(t, slot)?;
        if load {
            self.convert(
                KernelId::Widen,
                t.role(),
                format,
                t.len(),
                Binding::of(t)?,
                copy.clone(),
            )?;
        }
        Ok(copy)
    }

    /// Rounds an op's result in working copy `slot` into a 16-bit `t` (nothing for f32 `t`).
    pub(super) fn store(&mut self, t: &Tensor, slot: usize) -> Result<(), BackendError> {
        let Some(format) = t.dtype().half() else {
            return Ok(());
        };
        let copy = self.working.binding(t, slot)?;
        self.convert(
            KernelId::Narrow,
            t.role(),
            format,
            t.len(),
            copy,
            Binding::of(t)?,
        )
    }

    /// One pass of `shaders/convert.wgsl`: 16-bit values widened into f32 ones, or f32 values
    /// rounded into 16-bit ones (what that loses counted under `role`).
    pub(super) fn convert(
        &mut self,
        kernel: KernelId,
        role: Role,
        format: Half,
        len: usize,
        src: Binding,
        dst: Binding,
    ) -> Result<(), BackendError> {
        let label = match (kernel, format) {
            (KernelId::Widen, Half::Fp16) => "widen_fp16",
            (KernelId::Widen, Half::Bf16) => "widen_bf16",
            (_, Half::Fp16) => "narrow_fp16",
            (_, Half::Bf16) => "narrow_bf16",
        };
        // Narrowing runs one invocation per word (two values).
        let invocations = if kernel == KernelId::Widen {
            len
        } else {
            len.div_ceil(2)
        };
        let (groups_x, groups_y) = self.stream.groups(invocations as u32);
        let params = ConvertParams {
            len: len as u32,
            format: format.code(),
            groups_x,
            slot: role.index() as u32,
        };
        let groups = (groups_x, groups_y);
        if kernel == KernelId::Widen {
            let bindings = [src, dst];
            return self.stream.dispatch(
                &mut self.recorder,
                kernel,
                label,
                &params,
                &bindings,
                groups,
            );
        }
        self.census.counts.role_mut(role).values += len as u64;
        let bindings = [src, dst, self.census.binding()];
        self.stream.dispatch(
            &mut self.recorder,
            kernel,
            label,
            &params,
            &bindings,
            groups,
        )
    }
}
