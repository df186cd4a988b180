//! The ops of a training step on the GPU: each checks its tensors, binds them (through working
//! copies for 16-bit ones, see `operands.rs`) and records one pass of its kernel.

use super::GpuBackend;
use super::census::NON_FINITE_SLOT;
use super::dispatch::{Binding, SCRATCH_BYTES};
use super::kernels::{
    COLUMN_SUM_COLS, ColumnSumParams, ElementwiseMode, ElementwiseParams, Epilogue, KernelId,
    LossParams, MatmulParams, OptimizerParams, Read, Reads, UpdateRule, split_k,
};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{
    Activation, AdamHyper, ConvShape, ParamTensors, PoolShape, UpdateStep,
};
use crate::backend::tensor::{Storage, Tensor, check_device};
use crate::backend::traits::{ComputeOps, update_one};
use crate::device::Device;
use crate::precision::Half;

impl GpuBackend {
    /// `c = epilogue(op(a) · op(b))`, each operand read with strides (transposes) or as a
    /// convolution's (see [`Read`]).
    pub(super) fn matmul(
        &mut self,
        label: &'static str,
        (a, a_read): (Binding, Read),
        (b, b_read): (Binding, Read),
        aux: Option<Binding>,
        epilogue: Epilogue,
        (m, n, k): (usize, usize, usize),
        c: Binding,
    ) -> Result<(), BackendError> {
        let (a_strides, b_strides) = (a_read.strides(), b_read.strides());
        // A convolution's images: height, width, channels and kernel side (unread otherwise).
        let images = a_read.shape().or(b_read.shape()).map_or([0; 4], |s| {
            [s.height, s.width, s.channels_in, s.kernel].map(|v| v as u32)
        });
        let mut params = MatmulParams {
            m: m as u32,
            n: n as u32,
            k: k as u32,
            epilogue: epilogue.code(),
            a_row_stride: a_strides.0 as u32,
            a_col_stride: a_strides.1 as u32,
            b_row_stride: b_strides.0 as u32,
            b_col_stride: b_strides.1 as u32,
            act: epilogue.activation().code(),
            k_chunk: k as u32,
            height: images[0],
            width: images[1],
            channels: images[2],
            kernel: images[3],
            ..MatmulParams::default()
        };
        let aux = aux.unwrap_or_else(|| self.stream.dummy_read());
        // The adapter's chosen variant where the product fills its tiles, a smaller one or the
        // one-output kernel where it does not.
        let sizes = self.stream.sizes;
        let (kernel, (tile_m, tile_n)) =
            self.stream
                .kernels()
                .product(sizes.matmul, (m, n), Reads::of(a_read, b_read));
        let groups = ((n as u32).div_ceil(tile_n), (m as u32).div_ceil(tile_m));
        let splits = if sizes.split_k
            && epilogue == Epilogue::Sum
            && matches!(kernel, KernelId::Matmul(_))
        {
            split_k((m, n, k), tile_m as usize, SCRATCH_BYTES)
        } else {
            1
        };
        if splits == 1 {
            return self.stream.dispatch(
                &mut self.recorder,
                kernel,
                label,
                &params,
                &[a, b, aux, c],
                groups,
            );
        }
        // Split along `k`: each stretch's partial sums into its layer of the scratch buffer,
        // then the layers added in order into `c`.
        params.k_chunk = k.div_ceil(splits) as u32;
        let scratch = self.stream.scratch();
        self.stream.dispatch_3d(
            &mut self.recorder,
            kernel,
            label,
            &params,
            &[a, b, aux, scratch.clone()],
            (groups.0, groups.1, splits as u32),
        )?;
        // At most 64 rows: never split itself, so the scratch buffer is only read here.
        self.column_sums(("split_k_sum", "split_k_sum"), scratch, (splits, m * n), c)
    }

    /// `out = act(op(x) · op(w) + b)`, `(m, n, k)`: a dense layer's forward pass, or a
    /// convolution's with `x` read as its patches.
    pub(super) fn forward_product(
        &mut self,
        label: &'static str,
        ((x, x_read), (w, w_read)): ((&Tensor, Read), (&Tensor, Read)),
        b: &Tensor,
        act: Activation,
        dims: (usize, usize, usize),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.prepare(&[x, w, b, out])?;
        let (xb, wb, bb) = (
            self.operand(x, 0)?,
            self.operand(w, 1)?,
            self.operand(b, 2)?,
        );
        let ob = self.output(out, 3, false)?;
        self.matmul(
            label,
            (xb, x_read),
            (wb, w_read),
            Some(bb),
            Epilogue::BiasActivation(act),
            dims,
            ob,
        )?;
        self.store(out, 3)
    }

    /// `dw = op(x) · dz`, `(m, n, k)`, and `db = Σ dz` over its `k` rows: a dense layer's
    /// parameter gradients (`op(x) = xᵀ`), or a convolution's (its patches transposed), as
    /// two kernels.
    pub(super) fn parameter_grads(
        &mut self,
        (x, x_read): (&Tensor, Read),
        dz: &Tensor,
        (dw, db): (&mut Tensor, &mut Tensor),
        (m, n, k): (usize, usize, usize),
    ) -> Result<(), BackendError> {
        self.prepare(&[x, dz, dw, db])?;
        let (xb, dzb) = (self.operand(x, 0)?, self.operand(dz, 1)?);
        let dz_again = dzb.clone();
        let (dwb, dbb) = (self.output(dw, 2, false)?, self.output(db, 3, false)?);
        self.matmul(
            "weight_grad",
            (xb, x_read),
            (dzb, Read::Strides(n, 1)),
            None,
            Epilogue::Sum,
            (m, n, k),
            dwb,
        )?;
        self.store(dw, 2)?;
        self.column_sums(("bias_grad", "bias_grad_sum"), dz_again, (k, n), dbb)?;
        self.store(db, 3)
    }

    /// `out[j] = Σ_r x[r, j]` over `rows × cols` values. A sum of many rows into few columns
    /// is split across workgroups along the rows as a thin product is along `k`: each
    /// stretch's sums into a row of the scratch buffer, then those added in order
    /// (`labels`: the first pass's and the second's).
    fn column_sums(
        &mut self,
        labels: (&'static str, &'static str),
        x: Binding,
        (rows, cols): (usize, usize),
        out: Binding,
    ) -> Result<(), BackendError> {
        let groups = (cols as u32).div_ceil(COLUMN_SUM_COLS);
        let chunks = if self.stream.sizes.split_k {
            split_k((1, cols, rows), COLUMN_SUM_COLS as usize, SCRATCH_BYTES)
        } else {
            1
        };
        let mut params = ColumnSumParams {
            rows: rows as u32,
            cols: cols as u32,
            row_chunk: rows as u32,
            ..ColumnSumParams::default()
        };
        if chunks == 1 {
            return self.stream.dispatch(
                &mut self.recorder,
                KernelId::ColumnSum,
                labels.0,
                &params,
                &[x, out],
                (groups, 1),
            );
        }
        params.row_chunk = rows.div_ceil(chunks) as u32;
        let scratch = self.stream.scratch();
        self.stream.dispatch_3d(
            &mut self.recorder,
            KernelId::ColumnSum,
            labels.0,
            &params,
            &[x, scratch.clone()],
            (groups, 1, chunks as u32),
        )?;
        let sum = ColumnSumParams {
            rows: chunks as u32,
            cols: cols as u32,
            row_chunk: chunks as u32,
            ..ColumnSumParams::default()
        };
        self.stream.dispatch(
            &mut self.recorder,
            KernelId::ColumnSum,
            labels.1,
            &sum,
            &[scratch, out],
            (groups, 1),
        )
    }

    /// An optimizer update of `tensors` (parameter, gradient, and up to two state tensors),
    /// through working copies for 16-bit ones. `scalars`: learning rate, β1 (or μ), β2, ε,
    /// Adam's two bias corrections and `AdamW`'s shrink.
    fn optimizer(
        &mut self,
        label: &'static str,
        rule: UpdateRule,
        tensors: (&Tensor, &Tensor, Option<&Tensor>, Option<&Tensor>),
        scalars: [f32; 7],
    ) -> Result<(), BackendError> {
        let (param, grad, state1, state2) = tensors;
        let all: Vec<&Tensor> = [Some(param), Some(grad), state1, state2]
            .into_iter()
            .flatten()
            .collect();
        self.prepare(&all)?;
        let len = param.len() as u32;
        let (groups_x, groups_y) = self.stream.groups(len);
        let params = optimizer_params(rule, scalars, len, len, groups_x);
        let p = self.output(param, 0, true)?;
        let g = self.operand(grad, 1)?;
        let s1 = match state1 {
            Some(t) => self.output(t, 2, true)?,
            None => self.stream.dummy_write(0),
        };
        let s2 = match state2 {
            Some(t) => self.output(t, 3, true)?,
            None => self.stream.dummy_write(1),
        };
        self.stream.dispatch(
            &mut self.recorder,
            KernelId::Optimizer,
            label,
            &params,
            &[p, g, s1, s2],
            (groups_x, groups_y),
        )?;
        self.store(param, 0)?;
        for (t, slot) in [(state1, 2), (state2, 3)] {
            if let Some(t) = t {
                self.store(t, slot)?;
            }
        }
        Ok(())
    }

    /// One update of two tensors in one dispatch of `optimizer.wgsl`'s `step_pair`: the
    /// first tensor's values, then the second's. Only for tensors stored in f32 (16-bit ones
    /// go through working copies, one tensor at a time).
    fn paired_update(
        &mut self,
        rule: UpdateStep,
        [a, b]: [ParamTensors<'_>; 2],
    ) -> Result<(), BackendError> {
        let (label, code, scalars) = update_scalars(rule);
        for p in [&a, &b] {
            let states: Vec<&Tensor> = p.state.iter().collect();
            checks::elementwise(
                Device::Gpu,
                label,
                p.value,
                &[&[p.grad][..], &states].concat(),
            )?;
        }
        let first_len = a.value.len() as u32;
        let len = first_len + b.value.len() as u32;
        let (groups_x, groups_y) = self.stream.groups(len);
        let params = optimizer_params(code, scalars, len, first_len, groups_x);
        let mut bindings = Vec::with_capacity(8);
        let mut dummies = 0;
        for p in [&a, &b] {
            bindings.push(Binding::of(p.value)?);
            bindings.push(Binding::of(p.grad)?);
            for i in 0..2 {
                let state = if let Some(t) = p.state.get(i) {
                    Binding::of(t)?
                } else {
                    dummies += 1;
                    self.stream.dummy_write(dummies - 1)
                };
                bindings.push(state);
            }
        }
        self.stream.dispatch(
            &mut self.recorder,
            KernelId::OptimizerPair,
            label,
            &params,
            &bindings,
            (groups_x, groups_y),
        )
    }

    /// One pass of `shaders/elementwise.wgsl` over `t`: round, scale, or count what is not
    /// finite.
    fn elementwise(
        &mut self,
        t: &Tensor,
        label: &'static str,
        mode: ElementwiseMode,
        factor: f32,
    ) -> Result<(), BackendError> {
        check_device(Device::Gpu, label, &[t])?;
        self.prepare(&[t])?;
        let len = t.len() as u32;
        let (groups_x, groups_y) = self.stream.groups(len);
        let slot = if mode == ElementwiseMode::CountNonFinite {
            NON_FINITE_SLOT
        } else {
            t.role().index() as u32
        };
        let params = ElementwiseParams {
            len,
            mode: mode.code(),
            groups_x,
            factor,
            slot,
            ..ElementwiseParams::default()
        };
        if matches!(mode, ElementwiseMode::Round(_)) {
            self.census.counts.role_mut(t.role()).values += u64::from(len);
        }
        let values = self.output(t, 0, true)?;
        let census = self.census.binding();
        self.stream.dispatch(
            &mut self.recorder,
            KernelId::Elementwise,
            label,
            &params,
            &[values, census],
            (groups_x, groups_y),
        )?;
        if mode == ElementwiseMode::CountNonFinite {
            // Counting only reads the values: nothing to round back.
            return Ok(());
        }
        self.store(t, 0)
    }

    /// A loss kernel over `[outputs, targets, gradient, stats]` (the gradient written, the
    /// stats added to), through working copies for 16-bit ones.
    fn loss(
        &mut self,
        kernel: KernelId,
        label: &'static str,
        params: LossParams,
        [outputs, targets, gradient, stats]: [&Tensor; 4],
    ) -> Result<(), BackendError> {
        self.prepare(&[outputs, targets, gradient, stats])?;
        let bindings = [
            self.operand(outputs, 0)?,
            self.operand(targets, 1)?,
            self.output(gradient, 2, false)?,
            self.output(stats, 3, true)?,
        ];
        self.stream.dispatch(
            &mut self.recorder,
            kernel,
            label,
            &params,
            &bindings,
            (1, 1),
        )?;
        self.store(gradient, 2)?;
        self.store(stats, 3)
    }
}

impl ComputeOps for GpuBackend {
    fn copy(&mut self, src: &Tensor, dst: &mut Tensor) -> Result<(), BackendError> {
        checks::copy(Device::Gpu, src, dst)?;
        let len = src.len();
        match (src.dtype().half(), dst.dtype().half()) {
            (None, None) => {}
            (Some(a), Some(b)) if a == b => {}
            (Some(format), None) | (None, Some(format)) => {
                let kernel = if src.dtype().half().is_some() {
                    KernelId::Widen
                } else {
                    KernelId::Narrow
                };
                let (from, to) = (Binding::of(src)?, Binding::of(dst)?);
                return self.convert(kernel, dst.role(), format, len, from, to);
            }
            (Some(from), Some(to)) => {
                self.prepare(&[src])?;
                let copy = self.working.binding(src, 0)?;
                self.convert(
                    KernelId::Widen,
                    src.role(),
                    from,
                    len,
                    Binding::of(src)?,
                    copy.clone(),
                )?;
                return self.convert(
                    KernelId::Narrow,
                    dst.role(),
                    to,
                    len,
                    copy,
                    Binding::of(dst)?,
                );
            }
        }
        let (Storage::Gpu(from), Storage::Gpu(to)) = (src.storage(), dst.storage()) else {
            return Ok(());
        };
        let size = src.word_bytes() as u64;
        let encoder = self.stream.encoder("training-step");
        encoder.copy_buffer_to_buffer(from, 0, to, 0, size);
        self.stream.uses([src.id(), dst.id()]);
        Ok(())
    }

    fn linear_forward(
        &mut self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_forward(Device::Gpu, x, w, b, out)?;
        self.forward_product(
            "linear_forward",
            (
                (x, Read::Strides(fan_in, 1)),
                (w, Read::Strides(fan_out, 1)),
            ),
            b,
            act,
            (batch, fan_out, fan_in),
            out,
        )
    }

    fn linear_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        a_prev: &Tensor,
        act_prev: Activation,
        dz_prev: &mut Tensor,
    ) -> Result<(), BackendError> {
        const OP: &str = "linear_backward_input";
        let (batch, fan_in, fan_out) =
            checks::linear_backward_input(Device::Gpu, dz, w, a_prev, dz_prev)?;
        checks::fused_activation("linear_backward_input", act_prev)?;
        self.prepare(&[dz, w, a_prev, dz_prev])?;
        let (dzb, wb) = (self.operand(dz, 0)?, self.operand(w, 1)?);
        let ab = self.operand(a_prev, 2)?;
        let outb = self.output(dz_prev, 3, false)?;
        // op(b) = wᵀ: element (kk, j) of wᵀ is w[j, kk] = w[j * fan_out + kk].
        self.matmul(
            OP,
            (dzb, Read::Strides(fan_out, 1)),
            (wb, Read::Strides(1, fan_out)),
            Some(ab),
            Epilogue::ActivationGrad(act_prev),
            (batch, fan_in, fan_out),
            outb,
        )?;
        self.store(dz_prev, 3)
    }

    fn linear_backward_params(
        &mut self,
        x: &Tensor,
        dz: &Tensor,
        dw: &mut Tensor,
        db: &mut Tensor,
    ) -> Result<(), BackendError> {
        let (batch, fan_in, fan_out) = checks::linear_backward_params(Device::Gpu, x, dz, dw, db)?;
        // op(a) = xᵀ: element (i, kk) of xᵀ is x[kk, i] = x[kk * fan_in + i].
        let x_read = Read::Strides(1, fan_in);
        self.parameter_grads((x, x_read), dz, (dw, db), (fan_in, fan_out, batch))
    }

    fn conv_forward(
        &mut self,
        x: &Tensor,
        shape: ConvShape,
        params: (&Tensor, &Tensor, Activation),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.conv_forward_op(x, shape, params, out)
    }

    fn conv_backward_params(
        &mut self,
        x: &Tensor,
        shape: ConvShape,
        dz: &Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        self.conv_backward_params_op(x, shape, dz, grads)
    }

    fn conv_backward_input(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        shape: ConvShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.conv_backward_input_op(dz, w, shape, dx)
    }

    fn max_pool(
        &mut self,
        x: &Tensor,
        shape: PoolShape,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.max_pool_op(x, shape, out)
    }

    fn max_pool_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        shape: PoolShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.max_pool_backward_op(x, dout, act, shape, dx)
    }

    fn activation_forward(
        &mut self,
        x: &Tensor,
        act: Activation,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.activation_forward_op(x, act, out)
    }

    fn activation_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        act: Activation,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.activation_backward_op(x, dout, act, dx)
    }

    fn layer_norm(
        &mut self,
        x: &Tensor,
        params: (&Tensor, &Tensor),
        out: &mut Tensor,
        stats: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.layer_norm_op(x, params, out, stats)
    }

    fn layer_norm_backward(
        &mut self,
        x: &Tensor,
        dout: &Tensor,
        saved: (&Tensor, &Tensor),
        dx: &mut Tensor,
        grads: (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        self.layer_norm_backward_op(x, dout, saved, dx, grads)
    }

    fn softmax_cross_entropy(
        &mut self,
        logits: &Tensor,
        targets: &Tensor,
        dlogits: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        const OP: &str = "softmax_cross_entropy";
        let (batch, classes) =
            checks::softmax_cross_entropy(Device::Gpu, logits, targets, dlogits, stats)?;
        let params = LossParams {
            batch: batch as u32,
            classes: classes as u32,
            grad_scale,
            ..LossParams::default()
        };
        self.loss(
            KernelId::SoftmaxCrossEntropy,
            OP,
            params,
            [logits, targets, dlogits, stats],
        )
    }

    fn mse_loss(
        &mut self,
        pred: &Tensor,
        targets: &Tensor,
        dpred: &mut Tensor,
        stats: &mut Tensor,
        grad_scale: f32,
    ) -> Result<(), BackendError> {
        let (batch, outputs) = checks::mse_loss(Device::Gpu, pred, targets, dpred, stats)?;
        let params = LossParams {
            batch: batch as u32,
            classes: outputs as u32,
            grad_scale,
            ..LossParams::default()
        };
        self.loss(
            KernelId::Mse,
            "mse_loss",
            params,
            [pred, targets, dpred, stats],
        )
    }

    fn sgd_step(&mut self, param: &mut Tensor, grad: &Tensor, lr: f32) -> Result<(), BackendError> {
        checks::elementwise(Device::Gpu, "sgd_step", param, &[grad])?;
        let (label, rule, scalars) = update_scalars(UpdateStep::Sgd { lr });
        self.optimizer(label, rule, (param, grad, None, None), scalars)
    }

    fn momentum_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        velocity: &mut Tensor,
        lr: f32,
        momentum: f32,
    ) -> Result<(), BackendError> {
        checks::elementwise(Device::Gpu, "momentum_step", param, &[grad, velocity])?;
        let (label, rule, scalars) = update_scalars(UpdateStep::Momentum { lr, momentum });
        self.optimizer(label, rule, (param, grad, Some(velocity), None), scalars)
    }

    fn adam_step(
        &mut self,
        param: &mut Tensor,
        grad: &Tensor,
        m: &mut Tensor,
        v: &mut Tensor,
        hyper: AdamHyper,
    ) -> Result<(), BackendError> {
        checks::elementwise(Device::Gpu, "adam_step", param, &[grad, m, v])?;
        let (label, rule, scalars) = update_scalars(UpdateStep::Adam(hyper));
        self.optimizer(label, rule, (param, grad, Some(m), Some(v)), scalars)
    }

    fn update_layer(
        &mut self,
        rule: UpdateStep,
        layer: [ParamTensors<'_>; 2],
    ) -> Result<(), BackendError> {
        let f32_only = layer
            .iter()
            .flat_map(|p| [&*p.value, p.grad].into_iter().chain(p.state.iter()))
            .all(|t| t.dtype().half().is_none());
        let states_fit = layer.iter().all(|p| p.state.len() == rule.state_tensors());
        if f32_only && states_fit && self.stream.sizes.paired_updates {
            return self.paired_update(rule, layer);
        }
        let [weights, biases] = layer;
        update_one(self, rule, weights)?;
        update_one(self, rule.without_decay(), biases)
    }

    fn round_to(&mut self, t: &mut Tensor, format: Half) -> Result<(), BackendError> {
        let label = match format {
            Half::Fp16 => "round_fp16",
            Half::Bf16 => "round_bf16",
        };
        self.elementwise(t, label, ElementwiseMode::Round(format), 1.0)
    }

    fn scale(&mut self, t: &mut Tensor, factor: f32) -> Result<(), BackendError> {
        self.elementwise(t, "scale", ElementwiseMode::Scale, factor)
    }

    fn count_non_finite(&mut self, tensors: &[&Tensor]) -> Result<u64, BackendError> {
        for t in tensors {
            self.elementwise(t, "count_non_finite", ElementwiseMode::CountNonFinite, 1.0)?;
        }
        let census = self.census.binding().buffer;
        let offset = u64::from(NON_FINITE_SLOT) * 4;
        let bytes = self.stream.read_back(
            &mut self.recorder,
            &self.staging,
            &census,
            (offset, 4),
            true,
        )?;
        let count: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
        Ok(count.first().copied().map_or(0, u64::from))
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        self.stream.submit(&mut self.recorder)
    }
}

/// An update rule's label, shader code and scalars (learning rate, β1 or μ, β2, ε, Adam's two
/// bias corrections, computed on the host in the same f32 arithmetic as the CPU's).
fn update_scalars(rule: UpdateStep) -> (&'static str, UpdateRule, [f32; 7]) {
    match rule {
        UpdateStep::Sgd { lr } => (
            "sgd_step",
            UpdateRule::Sgd,
            [lr, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        ),
        UpdateStep::Momentum { lr, momentum } => (
            "momentum_step",
            UpdateRule::Momentum,
            [lr, momentum, 0.0, 0.0, 1.0, 1.0, 1.0],
        ),
        UpdateStep::Adam(hyper) => {
            let (bias1, bias2) = hyper.bias_corrections();
            let AdamHyper {
                lr,
                beta1,
                beta2,
                eps,
                ..
            } = hyper;
            (
                "adam_step",
                UpdateRule::Adam,
                [lr, beta1, beta2, eps, bias1, bias2, hyper.shrink()],
            )
        }
    }
}

/// `optimizer.wgsl`'s uniform block: `len` values in all, `first_len` of them the first
/// tensor's (all of them for one tensor), `groups_x` workgroups along x.
fn optimizer_params(
    rule: UpdateRule,
    [lr, beta1, beta2, eps, bias1, bias2, shrink]: [f32; 7],
    len: u32,
    first_len: u32,
    groups_x: u32,
) -> OptimizerParams {
    OptimizerParams {
        len,
        rule: rule.code(),
        groups_x,
        first_len,
        lr,
        beta1,
        beta2,
        eps,
        bias1,
        bias2,
        shrink,
        ..OptimizerParams::default()
    }
}
