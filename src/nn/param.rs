//! A parameter tensor with its gradient and optimizer state, and its update.

use super::layers::ParamInit;
use super::spec::OptimizerKind;
use crate::backend::{AdamHyper, Backend, BackendError, ParamTensors, Tensor, UpdateStep};
use crate::memory::Role;
use crate::precision::DType;

/// A parameter tensor with its gradient and optimizer state.
pub(super) struct Param {
    pub(super) value: Tensor,
    pub(super) grad: Tensor,
    pub(super) state: Vec<Tensor>,
    /// The sum of the gradients of an update's micro-batches so far, while accumulating.
    pub(super) sum: Option<Tensor>,
}

impl Param {
    pub(super) fn new(
        backend: &mut dyn Backend,
        name: &str,
        rows: usize,
        cols: usize,
        init: &[f32],
        optimizer: OptimizerKind,
        dtype: DType,
    ) -> Result<Self, BackendError> {
        let shape = (rows, cols);
        let mut value = backend.alloc_as(Role::Parameters, name, shape, dtype)?;
        backend.write(&mut value, init)?;
        let label = format!("{name}.grad");
        let grad = backend.alloc_as(Role::Gradients, &label, shape, dtype)?;
        let state = (0..optimizer.state_tensors())
            .map(|i| {
                let label = format!("{name}.{}", ["m", "v"][i]);
                backend.alloc_as(Role::OptimizerState, &label, shape, dtype)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            value,
            grad,
            state,
            sum: None,
        })
    }

    /// The tensors an update takes.
    fn tensors(&mut self) -> ParamTensors<'_> {
        ParamTensors {
            value: &mut self.value,
            grad: &self.grad,
            state: &mut self.state,
        }
    }
}

/// The update `optimizer` makes at learning rate `lr` as update number `step` (Adam's bias
/// correction counts from it).
pub(super) fn rule(optimizer: OptimizerKind, lr: f32, step: u32) -> UpdateStep {
    match optimizer {
        OptimizerKind::Sgd => UpdateStep::Sgd { lr },
        OptimizerKind::Momentum => UpdateStep::Momentum {
            lr,
            momentum: OptimizerKind::MOMENTUM,
        },
        OptimizerKind::Adam => UpdateStep::Adam(AdamHyper::defaults(lr, step)),
        OptimizerKind::AdamW => UpdateStep::Adam(AdamHyper {
            weight_decay: OptimizerKind::WEIGHT_DECAY,
            ..AdamHyper::defaults(lr, step)
        }),
    }
}

/// One update of a layer's weights and biases by `rule`.
pub(super) fn update_layer(
    backend: &mut dyn Backend,
    rule: UpdateStep,
    weights: &mut Param,
    biases: &mut Param,
) -> Result<(), BackendError> {
    backend.update_layer(rule, [weights.tensors(), biases.tensors()])
}

/// One layer's parameters: its weight (or scale) and bias (or shift), and in mixed precision
/// their FP16 copies, which the passes read.
pub(super) struct LayerParams {
    pub(super) weight: Param,
    pub(super) bias: Param,
    half: Option<(Tensor, Tensor)>,
}

impl LayerParams {
    /// Allocates `name.weight` and `name.bias` from `init`, stored as `master`, with optimizer
    /// state for `optimizer` and, with `half`, copies in that type for the passes.
    pub(super) fn new(
        backend: &mut dyn Backend,
        name: &str,
        init: ParamInit,
        (optimizer, master, half): (OptimizerKind, DType, Option<DType>),
    ) -> Result<Self, BackendError> {
        let ParamInit {
            shapes: [(wr, wc), (br, bc)],
            values: [w, b],
        } = init;
        let label = format!("{name}.weight");
        let weight = Param::new(backend, &label, wr, wc, &w, optimizer, master)?;
        let label = format!("{name}.bias");
        let bias = Param::new(backend, &label, br, bc, &b, optimizer, master)?;
        let half = match half {
            Some(dtype) => {
                let label = format!("{name}.weight (fp16 copy)");
                let hw = backend.alloc_as(Role::Parameters, &label, (wr, wc), dtype)?;
                let label = format!("{name}.bias (fp16 copy)");
                let hb = backend.alloc_as(Role::Parameters, &label, (br, bc), dtype)?;
                Some((hw, hb))
            }
            None => None,
        };
        Ok(Self { weight, bias, half })
    }

    /// Copies the master values into the FP16 copies (the copy rounds).
    pub(super) fn refresh_half(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        if let Some((hw, hb)) = &mut self.half {
            backend.copy(&self.weight.value, hw)?;
            backend.copy(&self.bias.value, hb)?;
        }
        Ok(())
    }

    /// The values the training passes read: the FP16 copies where there are, else the masters.
    pub(super) fn pass_values(&self) -> (&Tensor, &Tensor) {
        match &self.half {
            Some((hw, hb)) => (hw, hb),
            None => self.master_values(),
        }
    }

    /// The master values (what evaluation reads).
    pub(super) fn master_values(&self) -> (&Tensor, &Tensor) {
        (&self.weight.value, &self.bias.value)
    }

    /// The passes' values beside the gradients, to write.
    pub(super) fn split(&mut self) -> ((&Tensor, &Tensor), (&mut Tensor, &mut Tensor)) {
        let values = match &self.half {
            Some((hw, hb)) => (hw, hb),
            None => (&self.weight.value, &self.bias.value),
        };
        (values, (&mut self.weight.grad, &mut self.bias.grad))
    }
}
