//! Fitting the cost model to measurements: efficiency curves from probe timings.
//!
//! A probe is an op of known size timed on the device. Its efficiency is the share of the peak
//! (or of the bandwidth) its time implies once the launch overhead is taken off. The curve is
//! the median efficiency of the probes in each quarter-decade of size, made non-decreasing (a
//! larger op never uses the chip worse in this model) by pooling neighbours that disagree, so
//! one noisy probe does not bend it.

use super::efficiency::Curve;

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
pub fn fit_curve(probes: &[Probe], rate: f64, dispatch_s: f64, cap: f64) -> Curve {
    let mut points: Vec<(f64, f64)> = probes
        .iter()
        .filter(|p| p.size > 0.0 && p.seconds > 0.0)
        .map(|p| {
            // At least a tenth of the measured time is the op's own: a probe hardly slower
            // than a launch still has a finite, small efficiency.
            let own = (p.seconds - dispatch_s).max(p.seconds * 0.1);
            (p.size, (p.size / own / rate).clamp(1e-6, cap))
        })
        .collect();
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
    Curve(non_decreasing(&binned))
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

fn median(sorted: &[f64]) -> f64 {
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
        let fitted = fit_curve(&probes, rate, launch, 1.0);
        for size in [3e4, 1e6, 3e7, 1e9, 1e10] {
            let (want, got) = (truth.at(size), fitted.at(size));
            assert!(
                (got / want - 1.0).abs() < 0.12,
                "at {size:e}: fitted {got:.4}, true {want:.4}"
            );
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
        let c = fit_curve(&probes, 1e12, 0.0, 1.0);
        assert!(c.at(1e8) >= c.at(1e6));
        assert!((c.at(1.1e8) - 0.11).abs() < 0.02, "{c:?}");
    }
}
