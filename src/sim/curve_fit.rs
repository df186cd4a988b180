//! Fitting the cost model to measurements: efficiency curves from probe timings.
//!
//! A probe is an op of known size timed on the device. Its efficiency is the share of the peak
//! (or of the bandwidth) its time implies once the launch overhead is taken off. The curve is
//! the median efficiency of the probes in each quarter-decade of size; a product's curve is made
//! non-decreasing (a larger product never uses the chip worse in this model) by pooling
//! neighbours that disagree, so one noisy probe does not bend it.

use super::efficiency::{Curve, ProductFit};

/// Whether a curve may fall as ops grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trend {
    /// Never falls: a larger product never uses the chip worse. Pooling neighbours that
    /// disagree keeps one noisy probe from bending the curve.
    Rising,
    /// Free: on a CPU, memory efficiency rises with size until the data no longer fits in a
    /// cache, then falls to the memory's own rate.
    Free,
}

/// One timed probe: its size (FLOPs or bytes) and the seconds it took.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Probe {
    /// FLOPs (for the compute curve) or bytes (for the memory curve).
    pub size: f64,
    /// Seconds per call, launch included.
    pub seconds: f64,
}

/// The efficiency curve that explains `probes` at `rate` (FLOP/s or bytes/s) after taking
/// `dispatch_s` off each time. Efficiencies are kept within `(0, cap]`: a memory curve may pass
/// 1 where the data sits in caches faster than the memory `rate` measures.
pub fn fit_curve(probes: &[Probe], rate: f64, dispatch_s: f64, cap: f64, trend: Trend) -> Curve {
    let points: Vec<(f64, f64)> = probes
        .iter()
        .filter(|p| p.size > 0.0 && p.seconds > 0.0)
        .map(|p| (p.size, efficiency(p, rate, dispatch_s).clamp(1e-6, cap)))
        .collect();
    curve_through(points, trend)
}

/// The share of `rate` that `probe`'s time implies once `dispatch_s` is taken off.
fn efficiency(probe: &Probe, rate: f64, dispatch_s: f64) -> f64 {
    probe.size / own_seconds(probe, dispatch_s) / rate
}

/// A probe's time less the launch: at least a tenth of the measured time is the op's own, so a
/// probe hardly slower than a launch still has a finite, small efficiency.
fn own_seconds(probe: &Probe, dispatch_s: f64) -> f64 {
    (probe.seconds - dispatch_s).max(probe.seconds * 0.1)
}

/// A matrix-product probe: FLOPs and seconds, and the product's shape `[m, n, k]`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ShapedProbe {
    /// The FLOPs and the time.
    pub probe: Probe,
    /// `m × k` times `k × n`.
    pub dims: [f64; 3],
}

/// The efficiency table of a product kernel from `probes` on a device of `peak` FLOP/s with
/// launches of `dispatch_s`: each probe's share of the peak, its launch taken off; probes of one
/// shape keep their median.
pub fn fit_product(probes: &[ShapedProbe], peak: f64, dispatch_s: f64) -> ProductFit {
    let mut table: Vec<([f64; 3], Vec<f64>)> = Vec::new();
    for p in probes
        .iter()
        .filter(|p| p.probe.size > 0.0 && p.probe.seconds > 0.0)
    {
        let e = efficiency(&p.probe, peak, dispatch_s).clamp(1e-6, 1.0);
        match table.iter_mut().find(|(dims, _)| *dims == p.dims) {
            Some((_, effs)) => effs.push(e),
            None => table.push((p.dims, vec![e])),
        }
    }
    ProductFit {
        table: table
            .into_iter()
            .map(|(dims, mut effs)| {
                effs.sort_by(f64::total_cmp);
                (dims, median(&effs))
            })
            .collect(),
    }
}

/// The median efficiency of the points in each quarter-decade of size, made non-decreasing for
/// [`Trend::Rising`].
fn curve_through(mut points: Vec<(f64, f64)>, trend: Trend) -> Curve {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Median per quarter-decade of size, with the number of probes in it.
    let mut binned: Vec<(f64, f64, f64)> = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let bin = (points[i].0.log10() * 4.0).floor();
        let mut j = i;
        while j < points.len() && (points[j].0.log10() * 4.0).floor() == bin {
            j += 1;
        }
        let mut sizes: Vec<f64> = points[i..j].iter().map(|p| p.0.log10()).collect();
        let mut effs: Vec<f64> = points[i..j].iter().map(|p| p.1).collect();
        sizes.sort_by(f64::total_cmp);
        effs.sort_by(f64::total_cmp);
        binned.push((median(&sizes), median(&effs), (j - i) as f64));
        i = j;
    }
    match trend {
        Trend::Rising => Curve(non_decreasing(&binned)),
        Trend::Free => Curve(binned.iter().map(|b| (10f64.powf(b.0), b.1)).collect()),
    }
}

/// Pool-adjacent-violators: the closest non-decreasing sequence (weighted least squares) to the
/// efficiencies of `(log10 size, efficiency, weight)` bins; each pooled block keeps its bins'
/// sizes.
fn non_decreasing(bins: &[(f64, f64, f64)]) -> Vec<(f64, f64)> {
    // Blocks of (mean efficiency, weight, how many bins).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for &(_, e, w) in bins {
        blocks.push((e, w, 1));
        while blocks.len() > 1 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
            let (e2, w2, n2) = blocks.pop().unwrap_or_default();
            if let Some(last) = blocks.last_mut() {
                let w = last.1 + w2;
                *last = ((last.0 * last.1 + e2 * w2) / w, w, last.2 + n2);
            }
        }
    }
    let mut out = Vec::with_capacity(bins.len());
    let mut k = 0;
    for (e, _, n) in blocks {
        for bin in &bins[k..k + n] {
            out.push((10f64.powf(bin.0), e));
        }
        k += n;
    }
    out
}

/// The median of `sorted` values (NaN for none).
pub(crate) fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        f64::midpoint(sorted[n / 2 - 1], sorted[n / 2])
    }
}

/// The launch overhead: the median time of probes too small to cost anything else.
pub fn fit_dispatch(tiny_seconds: &[f64]) -> f64 {
    let mut v = tiny_seconds.to_vec();
    v.sort_by(f64::total_cmp);
    median(&v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probes timed as the model says a device with this curve, peak and launch would take.
    fn synthetic(curve: &Curve, rate: f64, dispatch_s: f64, sizes: &[f64]) -> Vec<Probe> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| {
                // ±3% of deterministic noise.
                let noise = 1.0 + 0.03 * ((i * 7919 % 13) as f64 / 6.0 - 1.0);
                Probe {
                    size,
                    seconds: (dispatch_s + size / (rate * curve.at(size))) * noise,
                }
            })
            .collect()
    }

    #[test]
    fn calibration_recovers_a_known_curve_peak_and_launch_from_synthetic_timings() {
        let truth = Curve(vec![(1e4, 0.02), (1e6, 0.1), (1e8, 0.5), (1e10, 0.8)]);
        let (rate, dispatch_s) = (2e11, 3e-6);
        let sizes: Vec<f64> = (0..=24).map(|k| 10f64.powf(4.0 + k as f64 / 4.0)).collect();
        let probes = synthetic(&truth, rate, dispatch_s, &sizes);
        let launch = fit_dispatch(&[3.1e-6, 2.9e-6, 3.0e-6, 9e-6]);
        assert!((launch - dispatch_s).abs() < 0.11e-6, "{launch}");
        let fitted = fit_curve(&probes, rate, launch, 1.0, Trend::Rising);
        for size in [3e4, 1e6, 3e7, 1e9, 1e10] {
            let (want, got) = (truth.at(size), fitted.at(size));
            assert!(
                (got / want - 1.0).abs() < 0.12,
                "at {size:e}: fitted {got:.4}, true {want:.4}"
            );
        }
    }

    #[test]
    fn the_product_table_reads_between_probed_shapes() {
        // A device whose products slow with a short inner dimension and a thin output, as
        // Hockney's half-performance lengths have it, and whose arithmetic grows with size.
        let truth = |[m, n, k]: [f64; 3]| {
            let size = (2.0 * m * n * k).log10();
            let curve = (0.05 + 0.1 * (size - 3.0)).clamp(0.05, 0.8);
            curve * (k / (k + 8.0)) * (m.min(n) / (m.min(n) + 2.0))
        };
        let (peak, dispatch_s) = (4e11, 1e-6);
        let mut probes = Vec::new();
        for b in [2.0, 24.0, 200.0, 2000.0] {
            for (i, o) in [
                (3.0, 24.0),
                (24.0, 24.0),
                (96.0, 96.0),
                (384.0, 384.0),
                (96.0, 3.0),
            ] {
                let dims = [b, o, i];
                let flops = 2.0 * b * i * o;
                probes.push(ShapedProbe {
                    probe: Probe {
                        size: flops,
                        seconds: dispatch_s + flops / (peak * truth(dims)),
                    },
                    dims,
                });
            }
        }
        let fitted = fit_product(&probes, peak, dispatch_s);
        // At the probes, within 25% of what they measured (the fit is smooth, the truth has
        // kinks); between them (shapes the fit was not given, one a one-row product whose
        // efficiency is far below its neighbours'), within 35% of the truth.
        let miss = |dims: [f64; 3]| fitted.at(dims) / truth(dims) - 1.0;
        for p in &probes {
            assert!(
                miss(p.dims).abs() < 0.25,
                "{:?}: {:+.3}",
                p.dims,
                miss(p.dims)
            );
        }
        for dims in [
            [16.0, 64.0, 64.0],
            [256.0, 256.0, 256.0],
            [1000.0, 16.0, 2.0],
            [1.0, 384.0, 384.0],
        ] {
            assert!(miss(dims).abs() < 0.35, "{dims:?}: {:+.3}", miss(dims));
        }
    }

    #[test]
    fn a_noisy_slow_probe_does_not_bend_the_curve_down() {
        let probes = [
            Probe {
                size: 1e6,
                seconds: 1e-4,
            },
            Probe {
                size: 1e8,
                seconds: 1e-3,
            },
            // A probe disturbed by another process: ten times slower than its size suggests.
            Probe {
                size: 1.2e8,
                seconds: 1e-2,
            },
            Probe {
                size: 1.1e8,
                seconds: 1e-3,
            },
        ];
        let c = fit_curve(&probes, 1e12, 0.0, 1.0, Trend::Rising);
        assert!(c.at(1e8) >= c.at(1e6));
        assert!((c.at(1.1e8) - 0.11).abs() < 0.02, "{c:?}");
    }
}
