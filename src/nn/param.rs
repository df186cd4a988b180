//! A parameter tensor with its gradient and optimizer state, and its update.

use super::spec::OptimizerKind;
use crate::backend::{AdamHyper, Backend, BackendError, Tensor};
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
        (optimizer, dtype): (OptimizerKind, DType),
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

    pub(super) fn update(
        &mut self,
        backend: &mut dyn Backend,
        optimizer: OptimizerKind,
        lr: f32,
        step: u32,
    ) -> Result<(), BackendError> {
        let Self { value, grad, state } = self;
        match (optimizer, state.as_mut_slice()) {
            (OptimizerKind::Sgd, _) => backend.sgd_step(value, grad, lr),
            (OptimizerKind::Momentum, [velocity]) => {
                backend.momentum_step(value, grad, velocity, lr, OptimizerKind::MOMENTUM)
            }
            (OptimizerKind::Adam, [m, v]) => {
                backend.adam_step(value, grad, m, v, AdamHyper::defaults(lr, step))
            }
            _ => Err(BackendError::Shape {
                op: "optimizer",
                detail: format!(
                    "{} needs {} state tensors",
                    optimizer.as_str(),
                    optimizer.state_tensors()
                ),
            }),
        }
    }
}

/// Layer `l`'s weight and bias values, as a pass reads them (a lookup, not a list: the step
/// allocates nothing).
pub(super) fn values<'a>(
    weights: &'a [Param],
    biases: &'a [Param],
) -> impl Fn(usize) -> (&'a Tensor, &'a Tensor) {
    |l| (&weights[l].value, &biases[l].value)
}
