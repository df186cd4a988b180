//! How much of a device's peak an op reaches, by its size: the curves the cost model uses and
//! a calibration fits.

use serde::{Deserialize, Serialize};

/// Efficiency against op size: `(size, share of the peak)` points, interpolated linearly in
/// log10 of the size and held flat beyond the ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve(pub Vec<(f64, f64)>);

impl Curve {
    /// The share of the peak an op of `size` reaches.
    pub fn at(&self, size: f64) -> f64 {
        let points = &self.0;
        let Some(&(first_size, first)) = points.first() else {
            return 1.0;
        };
        if size <= first_size {
            return first;
        }
        for w in points.windows(2) {
            let ((s0, e0), (s1, e1)) = (w[0], w[1]);
            if size <= s1 {
                let t = (size.log10() - s0.log10()) / (s1.log10() - s0.log10());
                return e0 + t * (e1 - e0);
            }
        }
        points.last().map_or(1.0, |p| p.1)
    }
}

/// The efficiencies a prediction uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Efficiency {
    /// Share of the arithmetic peak a matrix product reaches, by its FLOPs.
    pub compute: Curve,
    /// Share of the memory bandwidth an op reaches, by the bytes it moves.
    pub memory: Curve,
    /// Share of the arithmetic peak a narrow product reaches (see `cost::Op::narrow`), by its
    /// FLOPs, where fitted; `compute` otherwise.
    #[serde(default)]
    pub narrow: Option<Curve>,
}

impl Default for Efficiency {
    /// Estimates in the shape Calculon's GEMM tables have (a few percent for kernels of
    /// thousands of FLOPs, most of the peak for billions), until a calibration replaces them.
    fn default() -> Self {
        Self {
            compute: Curve(vec![
                (1e4, 0.01),
                (1e6, 0.05),
                (1e8, 0.30),
                (1e9, 0.60),
                (1e11, 0.80),
            ]),
            memory: Curve(vec![(1e3, 0.02), (1e5, 0.20), (1e7, 0.70), (1e9, 0.85)]),
            narrow: None,
        }
    }
}
