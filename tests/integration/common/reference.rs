//! f64 references written from the definitions, for the gradient checks.

use batchscope::backend::{Activation, ConvShape, PoolShape};

use super::act64;

/// A convolution's weight and input gradients in f64, summed tap by tap from the definitions
/// (channels-last images, zero outside them).
pub fn conv_gradients64(
    x: &[f64],
    w: &[f64],
    dz: &[f64],
    s: ConvShape,
    batch: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (h, wd, ci, co, k) = (s.height, s.width, s.channels_in, s.channels_out, s.kernel);
    let pad = k / 2;
    let mut dw = vec![0.0; s.patch() * co];
    let mut dx = vec![0.0; batch * s.image_in()];
    for b in 0..batch {
        for y in 0..h {
            for xo in 0..wd {
                let out_at = ((b * h + y) * wd + xo) * co;
                for ky in 0..k {
                    for kx in 0..k {
                        let (Some(yy), Some(xx)) =
                            ((y + ky).checked_sub(pad), (xo + kx).checked_sub(pad))
                        else {
                            continue;
                        };
                        if yy >= h || xx >= wd {
                            continue;
                        }
                        let in_at = ((b * h + yy) * wd + xx) * ci;
                        for c in 0..ci {
                            let row = (ky * k + kx) * ci + c;
                            for o in 0..co {
                                dw[row * co + o] += x[in_at + c] * dz[out_at + o];
                                dx[in_at + c] += dz[out_at + o] * w[row * co + o];
                            }
                        }
                    }
                }
            }
        }
    }
    (dw, dx)
}

/// `act(conv(x, w) + b)` by the definition, channels last, zero padding, stride 1. `w` is
/// `[(ky·K + kx)·C_in + ci, co]`.
pub fn conv64(x: &[f64], w: &[f64], b: &[f64], s: ConvShape, act: Activation) -> Vec<f64> {
    let batch = x.len() / s.image_in();
    let (hh, ww, ci_n, co_n, k) = (
        s.height as isize,
        s.width as isize,
        s.channels_in,
        s.channels_out,
        s.kernel as isize,
    );
    let pad = k / 2;
    let mut out = Vec::with_capacity(batch * s.image_out());
    for n in 0..batch {
        for y in 0..hh {
            for xx in 0..ww {
                for (co, &bias) in b.iter().enumerate().take(co_n) {
                    let mut z = bias;
                    for ky in 0..k {
                        for kx in 0..k {
                            let (sy, sx) = (y + ky - pad, xx + kx - pad);
                            if sy < 0 || sy >= hh || sx < 0 || sx >= ww {
                                continue;
                            }
                            for ci in 0..ci_n {
                                let xi = n * s.image_in() + ((sy * ww + sx) as usize) * ci_n + ci;
                                let wi = ((ky * k + kx) as usize * ci_n + ci) * co_n + co;
                                z += x[xi] * w[wi];
                            }
                        }
                    }
                    out.push(act64(act, z));
                }
            }
        }
    }
    out
}

/// 2×2 max pooling by the definition, channels last, an odd edge left out.
pub fn pool64(a: &[f64], s: PoolShape) -> Vec<f64> {
    let batch = a.len() / s.image_in();
    let mut out = Vec::with_capacity(batch * s.image_out());
    for n in 0..batch {
        for oy in 0..s.out_height() {
            for ox in 0..s.out_width() {
                for c in 0..s.channels {
                    let at = |y: usize, x: usize| {
                        a[n * s.image_in() + (y * s.width + x) * s.channels + c]
                    };
                    let m = [(0, 0), (0, 1), (1, 0), (1, 1)]
                        .iter()
                        .map(|&(dy, dx)| at(2 * oy + dy, 2 * ox + dx))
                        .fold(f64::NEG_INFINITY, f64::max);
                    out.push(m);
                }
            }
        }
    }
    out
}

/// `x · w + b` in f64, `x` is `[rows, fan_in]`.
pub fn dense64(x: &[f64], w: &[f64], b: &[f64], fan_in: usize, fan_out: usize) -> Vec<f64> {
    let rows = x.len() / fan_in;
    let mut out = vec![0.0; rows * fan_out];
    for r in 0..rows {
        for j in 0..fan_out {
            out[r * fan_out + j] = (0..fan_in)
                .map(|k| x[r * fan_in + k] * w[k * fan_out + j])
                .sum::<f64>()
                + b[j];
        }
    }
    out
}

/// Mean softmax cross-entropy in f64.
pub fn cross_entropy64(logits: &[f64], targets: &[usize], classes: usize) -> f64 {
    let rows = targets.len();
    let mut loss = 0.0;
    for (r, &t) in targets.iter().enumerate() {
        let row = &logits[r * classes..(r + 1) * classes];
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
        loss += sum.ln() - (row[t] - max);
    }
    loss / rows as f64
}
