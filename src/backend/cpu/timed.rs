//! The CPU's ops as the [`ComputeOps`] trait calls them: each op's body (in `ops.rs` and
//! `spatial.rs`), timed by the host clock in the steps whose kernels are timed, under the label
//! the GPU's kernel of the same work has, so the two devices' kernels group alike.

use web_time::Instant;

use super::CpuBackend;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, AdamHyper, ConvShape, PoolShape};
use crate::backend::tensor::Tensor;
use crate::backend::traits::ComputeOps;
use crate::precision::Half;

impl CpuBackend {
    /// The start of an op, when this step's kernels are timed.
    pub(super) fn op_start(&self) -> Option<Instant> {
        self.kernels.timing.then(Instant::now)
    }

    /// Records the op started at `start` as `label`.
    pub(super) fn op_end(&mut self, label: &'static str, start: Option<Instant>) {
        if let (Some(start), Some(times)) = (start, self.kernels.times.as_mut()) {
            let ns = start.elapsed().as_nanos() as u64;
            times.kernels.push((label.to_owned(), ns));
            times.total_ns += ns;
        }
    }

    /// Runs `op`, timed as one kernel called `label`.
    pub(super) fn timed<R>(&mut self, label: &'static str, op: impl FnOnce(&mut Self) -> R) -> R {
        let start = self.op_start();
        let result = op(self);
        self.op_end(label, start);
        result
    }
}

impl ComputeOps for CpuBackend {
    fn copy(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        self.timed("copy", |s| s.copy_op(src, dst))
    }

    fn linear_forward(
        &mut self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("linear_forward", |s| s.linear_forward_op(x, w, b, act, out))
    }

    fn linear_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        a_prev: &Tensor,
        act_prev: Activation,
        dz_prev: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("linear_backward_input", |s| {
            s.linear_backward_input_op(dz, w, a_prev, act_prev, dz_prev)
        })
    }

    fn linear_backward_params(
        &mut self,
        x: &Tensor,
        dz: &Tensor,
        dw: &mut Tensor,
        db: &mut Tensor,
    ) -> Result<(), BackendError> {
        // Times its product and its column sums itself.
        self.linear_backward_params_op(x, dz, dw, db)
    }

    fn conv_forward(
        &mut self,
        x: &Tensor,
        shape: ConvShape,
        params: (&Tensor, &Tensor, Activation),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("conv_forward", |s| s.conv_forward_op(x, shape, params, out))
    }

    fn conv_backward_params(
        &mut self,
        x: &Tensor,
        shape: ConvShape,
        dz: &Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        // Times its two kernels itself, as `linear_backward_params` does.
        self.conv_backward_params_op(x, shape, dz, grads)
    }

    fn conv_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        shape: ConvShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("conv_backward_input", |s| {
            s.conv_backward_input_op(dz, w, shape, dx)
        })
    }

    fn max_pool(
        &mut self,
        x: &Tensor,
        shape: PoolShape,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("max_pool", |s| s.max_pool_op(x, shape, out))
    }

    fn max_pool_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        shape: PoolShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("max_pool_backward", |s| {
            s.max_pool_backward_op(x, dout, act, shape, dx)
        })
    }

    fn activation_forward(
        &mut self,
        x: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("activation_forward", |s| {
            s.activation_forward_op(x, act, out)
        })
    }

    fn activation_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("activation_backward", |s| {
            s.activation_backward_op(x, dout, act, dx)
        })
    }

    fn layer_norm(
        &mut self,
        x: &Tensor,
        params: (&Tensor, &Tensor),
        out: &mut Tensor,
        stats: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.timed("layer_norm", |s| s.layer_norm_op(x, params, out, stats))
    }

    fn layer_norm_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        saved: (&Tensor, &Tensor),
        dx: &mut Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        self.timed("layer_norm_backward", |s| {
            s.layer_norm_backward_op(x, dout, saved, dx, grads)
        })
    }

    fn softmax_cross_entropy(
        &mut self,
        logits: &Tensor,
        targets: &Tensor,
        dlogits: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        self.timed("softmax_cross_entropy", |s| {
            s.softmax_cross_entropy_op(logits, targets, dlogits, stats, grad_scale)
        })
    }

    fn mse_loss(
        &mut self,
        pred: &Tensor,
        targets: &Tensor,
        dpred: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        self.timed("mse_loss", |s| {
            s.mse_loss_op(pred, targets, dpred, stats, grad_scale)
        })
    }

    fn sgd_step(&mut self, param: &mut Tensor, grad: &Tensor, lr: f32) -> Result<(), BackendError> {
        self.timed("sgd_step", |s| s.sgd_step_op(param, grad, lr))
    }

    fn momentum_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        velocity: &mut Tensor,
        lr: f32,
        momentum: f32,
    ) -> Result<(), BackendError> {
        self.timed("momentum_step", |s| {
            s.momentum_step_op(param, grad, velocity, lr, momentum)
        })
    }

    fn adam_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        m: &mut Tensor,
        v: &mut Tensor,
        hyper: AdamHyper,
    ) -> Result<(), BackendError> {
        self.timed("adam_step", |s| s.adam_step_op(param, grad, m, v, hyper))
    }

    fn round_to(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError> {
        let label = match format {
            Half::Fp16 => "round_fp16",
            Half::Bf16 => "round_bf16",
        };
        self.timed(label, |s| s.round_to_op(t, format))
    }

    fn scale(&mut self, t: &mut Tensor, factor: f32) -> Result<(), BackendError> {
        self.timed("scale", |s| s.scale_op(t, factor))
    }

    fn count_non_finite(&mut self, tensors: &[&Tensor]) -> Result<u64, BackendError> {
        self.timed("count_non_finite", |_| Self::count_non_finite_op(tensors))
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
}
