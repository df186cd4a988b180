//! Gradient accumulation (the article's fourth section: when a batch does not fit, sum the
//! gradients of several smaller ones before each update). Each parameter gains a second
//! gradient tensor, the sum so far, counted as gradients; each micro-batch's backward writes its
//! own share (its loss's gradient divided by the number of micro-batches), and the shares are
//! added on the device: the first copied into the sum, the middle ones added to it, and the sum
//! added into the last one's gradient, which the update then reads as one batch's.

use super::Network;
use crate::backend::{Backend, BackendError};
use crate::memory::Role;

impl Network {
    /// Micro-batches each update sums from now on: the sums are allocated (or freed, for 1).
    ///
    /// # Errors
    /// A zero count, or the sums not fitting the device's memory budget.
    pub fn set_micro_batches(
        &mut self,
        backend: &mut dyn Backend,
        micro_batches: u32,
    ) -> Result<(), BackendError> {
        if micro_batches == 0 {
            return Err(BackendError::Setup(
                "accumulation needs at least one micro-batch".into(),
            ));
        }
        for p in self.params.iter_mut().flatten() {
            for param in [&mut p.weight, &mut p.bias] {
                param.sum = if micro_batches > 1 {
                    let g = &param.grad;
                    let label = format!("{} (sum)", g.label());
                    let shape = (g.rows(), g.cols());
                    Some(backend.alloc_as(Role::Gradients, &label, shape, g.dtype())?)
                } else {
                    None
                };
            }
        }
        self.micro_batches = micro_batches;
        Ok(())
    }

    /// Micro-batches each update sums.
    pub fn micro_batches(&self) -> u32 {
        self.micro_batches
    }

    /// Forward and backward of the loaded batch as micro-batch `micro` (from 0) of an update,
    /// its gradients joined to the sum of those before it; after the last, the parameters'
    /// gradients hold the whole update's, ready for [`Network::update`].
    ///
    /// # Errors
    /// A micro-batch past the count set, or the device's.
    pub fn accumulate(
        &mut self,
        backend: &mut dyn Backend,
        micro: u32,
    ) -> Result<(), BackendError> {
        self.forward(backend)?;
        self.sum_gradients(backend, micro)
    }

    /// The backward half of [`Network::accumulate`], after a forward pass already run: the
    /// runner times the two as spans of their own.
    ///
    /// # Errors
    /// A micro-batch past the count set, or the device's.
    pub fn sum_gradients(
        &mut self,
        backend: &mut dyn Backend,
        micro: u32,
    ) -> Result<(), BackendError> {
        let n = self.micro_batches;
        if micro >= n {
            return Err(BackendError::Setup(format!(
                "micro-batch {} of an update of {n}",
                micro + 1
            )));
        }
        self.backward(backend)?;
        if n == 1 {
            return Ok(());
        }
        for p in self.params.iter_mut().flatten() {
            for param in [&mut p.weight, &mut p.bias] {
                let Some(sum) = param.sum.as_mut() else {
                    continue;
                };
                if micro == 0 {
                    backend.copy(&param.grad, sum)?;
                } else if micro + 1 < n {
                    backend.add_into(&param.grad, sum)?;
                } else {
                    backend.add_into(sum, &mut param.grad)?;
                }
            }
        }
        Ok(())
    }
}
