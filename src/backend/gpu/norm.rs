//! Layer normalisation and the activations that are layers of their own (GELU) on the GPU:
//! `shaders/norm.wgsl`, through working copies for 16-bit tensors as every op here. The
//! statistics `[rows, 2]` are f32 always, as PyTorch keeps `LayerNorm`'s.

use super::GpuBackend;
use super::dispatch::Binding;
use super::kernels::{KernelId, NormParams};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, LAYER_NORM_EPS};
use crate::backend::tensor::Tensor;
use crate::device::Device;

impl GpuBackend {
    /// Records `kernel` over `bindings` with `params`, in `groups` workgroups.
    fn norm_pass(
        &mut self,
        (kernel, label): (KernelId, &'static str),
        mut params: NormParams,
        bindings: &[Binding],
        (groups_x, groups_y): (u32, u32),
    ) -> Result<(), BackendError> {
        params.groups_x = groups_x;
        params.eps = LAYER_NORM_EPS;
        self.stream.dispatch(
            &mut self.recorder,
            kernel,
            label,
            &params,
            bindings,
            (groups_x, groups_y),
        )
    }

    pub(super) fn activation_forward_op(
        &mut self,
        x: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "activation_forward";
        checks::activation(Device::Gpu, OP, &[x, out])?;
        self.prepare(&[x, out])?;
        let len = out.len() as u32;
        let bindings = [self.operand(x, 0)?, self.output(out, 1, false)?];
        let params = NormParams {
            len,
            act: act.code(),
            ..NormParams::default()
        };
        let groups = self.stream.groups(len);
        self.norm_pass((KernelId::ActivationForward, OP), params, &bindings, groups)?;
        self.store(out, 1)
    }

    pub(super) fn activation_backward_op(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "activation_backward";
        checks::activation(Device::Gpu, OP, &[x, dout, dx])?;
        self.prepare(&[x, dout, dx])?;
        let len = dx.len() as u32;
        let bindings = [
            self.operand(x, 0)?,
            self.output(dx, 1, false)?,
            self.operand(dout, 2)?,
        ];
        let params = NormParams {
            len,
            act: act.code(),
            ..NormParams::default()
        };
        let groups = self.stream.groups(len);
        self.norm_pass(
            (KernelId::ActivationBackward, OP),
            params,
            &bindings,
            groups,
        )?;
        self.store(dx, 1)
    }

    pub(super) fn layer_norm_op(
        &mut self,
        x: &Tensor,
        (gamma, beta): (&Tensor, &Tensor),
        out: &mut Tensor,
        stats: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "layer_norm";
        let (rows, n) = checks::layer_norm(Device::Gpu, OP, (&[x, out], &[gamma, beta]), stats)?;
        self.prepare(&[x, out, gamma, beta])?;
        let bindings = [
            self.operand(x, 0)?,
            self.output(out, 1, false)?,
            self.operand(gamma, 2)?,
            self.operand(beta, 3)?,
            Binding::of(stats)?,
        ];
        let params = NormParams {
            len: rows as u32,
            cols: n as u32,
            ..NormParams::default()
        };
        let groups = self.stream.workgroups(rows as u32);
        self.norm_pass((KernelId::LayerNorm, OP), params, &bindings, groups)?;
        self.store(out, 1)
    }

    pub(super) fn layer_norm_backward_op(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        (gamma, stats): (&Tensor, &Tensor),
        dx: &mut Tensor,
        (dgamma, dbeta): (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        const OP: &str = "layer_norm_backward";
        let (rows, n) = checks::layer_norm(
            Device::Gpu,
            OP,
            (&[x, dout, dx], &[gamma, dgamma, dbeta]),
            stats,
        )?;
        self.prepare(&[x, dout, dx, gamma, dgamma, dbeta])?;
        let bindings = [
            self.operand(x, 0)?,
            self.output(dx, 1, false)?,
            self.operand(dout, 2)?,
            self.operand(gamma, 3)?,
            Binding::of(stats)?,
        ];
        let params = NormParams {
            len: rows as u32,
            cols: n as u32,
            ..NormParams::default()
        };
        let groups = self.stream.workgroups(rows as u32);
        self.norm_pass((KernelId::LayerNormBackward, OP), params, &bindings, groups)?;
        self.store(dx, 1)?;
        // The parameters' gradients: a column an invocation, down the rows.
        let bindings = [
            self.operand(x, 0)?,
            self.output(dgamma, 1, false)?,
            self.operand(dout, 2)?,
            Binding::of(stats)?,
            self.output(dbeta, 3, false)?,
        ];
        let params = NormParams {
            len: n as u32,
            cols: n as u32,
            rows: rows as u32,
            ..NormParams::default()
        };
        let groups = self.stream.groups(n as u32);
        let id = (KernelId::LayerNormParamsGrad, "layer_norm_params_grad");
        self.norm_pass(id, params, &bindings, groups)?;
        self.store(dgamma, 1)?;
        self.store(dbeta, 3)
    }
}
