//! What a CNN's first layer learned, read back for the views: as it is computed, or with its
//! reads started and taken in later (a page's evaluation, see `predict.rs`).

use crate::backend::{Backend, BackendError, ConvShape, PendingReads};

/// What a CNN's first layer learned, for drawing small: its filters, and what they make of one
/// test image.
#[derive(Clone, Debug, PartialEq)]
pub struct FirstLayer {
    /// Side of each filter.
    pub kernel: usize,
    /// Channels each filter reads.
    pub channels_in: usize,
    /// Filters.
    pub filters: usize,
    /// The weights `[K² · C_in, filters]`, row `(ky · K + kx) · C_in + c`.
    pub weights: Vec<f32>,
    /// The image's height and width in pixels.
    pub height: usize,
    /// Width in pixels.
    pub width: usize,
    /// The first test image's activated feature maps, `[H · W, filters]` (channels last).
    pub maps: Vec<f32>,
}

/// A CNN's first layer on its way (see [`Network::start_first_layer`](super::Network::start_first_layer)): the filters' read and
/// the maps' read after one pass.
#[derive(Debug)]
pub struct FirstLayerReads {
    pub(super) conv: ConvShape,
    pub(super) reads: PendingReads,
}

impl FirstLayerReads {
    /// The first layer, once both reads are in (`None`: not yet, look again later).
    pub fn finish(
        &mut self,
        backend: &mut dyn Backend,
    ) -> Option<Result<FirstLayer, BackendError>> {
        let values = self.reads.finish(|r| backend.finish_read(r))?;
        Some(values.map(|mut values| {
            let maps = values.pop().unwrap_or_default();
            let weights = values.pop().unwrap_or_default();
            FirstLayer::of(self.conv, weights, maps)
        }))
    }
}

impl FirstLayer {
    /// The view of a convolution of shape `conv` from its filters' `weights` and the `maps`
    /// of the evaluation pass's output (its first image's kept).
    pub(super) fn of(conv: ConvShape, weights: Vec<f32>, mut maps: Vec<f32>) -> Self {
        maps.truncate(conv.pixels() * conv.channels_out);
        Self {
            kernel: conv.kernel,
            channels_in: conv.channels_in,
            filters: conv.channels_out,
            weights,
            height: conv.height,
            width: conv.width,
            maps,
        }
    }
}
