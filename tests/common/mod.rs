//! Helpers shared by the integration tests.
#![allow(dead_code)]

use batchscope::backend::cpu::CpuBackend;
use batchscope::backend::gpu::GpuBackend;

/// The CPU backend with two threads, so the parallel paths run too.
pub fn cpu() -> Option<CpuBackend> {
    Some(CpuBackend::new(2).expect("a rayon pool starts"))
}

/// The GPU backend, or `None` with the reason printed. With `CI=true` a missing adapter fails
/// the test instead: CI installs lavapipe, so no adapter there means a broken setup.
pub fn gpu() -> Option<GpuBackend> {
    match GpuBackend::new() {
        Ok(backend) => Some(backend),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true and no GPU adapter: {}", e.reason)
        }
        Err(e) => {
            eprintln!("skipping GPU test: {}", e.reason);
            None
        }
    }
}

/// Emits `name_cpu` and `name_gpu` tests that run `case(&mut backend)` on each device.
#[macro_export]
macro_rules! on_both_devices {
    ($($name:ident => $case:path;)*) => {
        $(
            mod $name {
                #[test]
                fn cpu() {
                    if let Some(mut b) = $crate::common::cpu() {
                        $case(&mut b);
                    }
                }
                #[test]
                fn gpu() {
                    if let Some(mut b) = $crate::common::gpu() {
                        $case(&mut b);
                    }
                }
            }
        )*
    };
}

/// A small deterministic generator for test inputs (no need for a seeded crate here).
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }

    /// Uniform in [-1, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    pub fn vec(&mut self, n: usize, scale: f64) -> Vec<f64> {
        (0..n).map(|_| self.next() * scale).collect()
    }
}

pub fn to_f32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

/// Asserts `got` (f32 from a backend) matches `want` (f64 reference) within `abs + rel·|want|`.
pub fn assert_close(what: &str, got: &[f32], want: &[f64], abs: f64, rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(g) - w).abs();
        assert!(
            err <= abs + rel * w.abs(),
            "{what}[{i}]: got {g}, expected {w} (error {err:e})"
        );
    }
}

/// Central difference of `f` with respect to every element of `x`, in f64:
/// `∂f/∂x_i ≈ (f(x + h·e_i) − f(x − h·e_i)) / 2h`.
pub fn central_differences(x: &[f64], h: f64, mut f: impl FnMut(&[f64]) -> f64) -> Vec<f64> {
    let mut x = x.to_vec();
    (0..x.len())
        .map(|i| {
            let keep = x[i];
            x[i] = keep + h;
            let up = f(&x);
            x[i] = keep - h;
            let down = f(&x);
            x[i] = keep;
            (up - down) / (2.0 * h)
        })
        .collect()
}
