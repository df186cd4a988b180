//! What a CNN's first layer learned, read back for the views.

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
