//! Activation checkpointing's passes (the article's sixth section): the forward pass a
//! segment at a time, and the backward pass a segment at a time, last first, each segment but
//! the last run forward again just before its backward. The plan and the shared workspace are
//! [`segments`](super::segments)'.

use std::ops::Range;

use super::Network;
use super::param::LayerParams;
use super::segments::Checkpointing;
use crate::backend::{Backend, BackendError};

impl Network {
    /// Whether the passes are checkpointed.
    pub fn checkpoints(&self) -> bool {
        self.checkpoint.is_some()
    }

    /// Each segment's layers, where the passes are checkpointed.
    pub fn checkpoint_segments(&self) -> Option<&[Range<usize>]> {
        self.checkpoint.as_ref().map(Checkpointing::segments)
    }

    /// The forward pass, a segment at a time, each in the shared workspace.
    pub(super) fn forward_segments(
        &mut self,
        backend: &mut dyn Backend,
        c: &mut Checkpointing,
    ) -> Result<(), BackendError> {
        let format = self.precision.format();
        for (s, segment) in c.segments().to_vec().into_iter().enumerate() {
            c.lend((&mut self.pass.outputs, &mut self.pass.saved), s, false);
            let params = |i: usize| self.params[i].as_ref().map(LayerParams::pass_values);
            let ran = self
                .pass
                .run_range(backend, (&self.layers, segment), params, format);
            c.lend((&mut self.pass.outputs, &mut self.pass.saved), s, true);
            ran?;
        }
        Ok(())
    }

    /// The backward pass, a segment at a time, last first: each segment but the last runs its
    /// forward pass again into the shared workspace (a span of its own), then its backward.
    pub(super) fn backward_segments(
        &mut self,
        backend: &mut dyn Backend,
        c: &mut Checkpointing,
    ) -> Result<(), BackendError> {
        for (s, segment) in c.segments().to_vec().into_iter().enumerate().rev() {
            c.lend((&mut self.pass.outputs, &mut self.pass.saved), s, false);
            let done = self.segment_backward(backend, c.recomputed(s), segment);
            c.lend((&mut self.pass.outputs, &mut self.pass.saved), s, true);
            done?;
        }
        Ok(())
    }

    fn segment_backward(
        &mut self,
        backend: &mut dyn Backend,
        recompute: Option<Range<usize>>,
        segment: Range<usize>,
    ) -> Result<(), BackendError> {
        let format = self.precision.format();
        if let Some(range) = recompute {
            let t = backend.recorder().now_ns();
            let params = |i: usize| self.params[i].as_ref().map(LayerParams::pass_values);
            self.pass
                .run_range(backend, (&self.layers, range), params, format)?;
            span(
                backend,
                ("recompute forward", "record recompute forward"),
                t,
            );
        }
        let t = backend.recorder().now_ns();
        for i in segment.rev() {
            self.backward_layer(backend, i)?;
        }
        span(backend, ("backward", "record backward"), t);
        Ok(())
    }
}

/// Records a span of the training step's phases from `start_ns` to now, named as the CPU runs
/// the phase or as the GPU path records it, on the lane the runner puts its phases on.
pub(crate) fn span(
    backend: &mut dyn Backend,
    (cpu, gpu): (&'static str, &'static str),
    start_ns: u64,
) {
    use crate::trace::{Category, Lane};
    let (lane, category, name) = if backend.device() == crate::device::Device::Gpu {
        (Lane::Main, Category::CpuExec, gpu)
    } else {
        (Lane::Kernels, Category::Kernel, cpu)
    };
    backend.recorder().span(lane, category, name, start_ns, 0);
}
