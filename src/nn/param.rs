//! A parameter tensor with its gradient and optimizer state, and its update.

use super::spec::OptimizerKind;
use crate::backend::{AdamHyper, Backend, BackendError, ParamTensors, Tensor, UpdateStep};
use crate::memory::Role;
use crate::precision::DType;

/// A parameter tensor with its gradient and optimizer state.
pub(super) struct Param {
    pub(super) value: Tensor,
    pub(super) grad: Tensor,
    pub(super) state: Vec<Tensor>,
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
        Ok(Self { value, grad, state })
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

/// Layer `l`'s weight and bias values, as a pass reads them (a lookup, not a list: the step
/// allocates nothing).
pub(super) fn values<'a>(
    weights: &'a [Param],
    biases: &'a [Param],
) -> impl Fn(usize) -> (&'a Tensor, &'a Tensor) {
    |l| (&weights[l].value, &biases[l].value)
}
