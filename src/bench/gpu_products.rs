//! `bench --kernels --device gpu`: each matrix-product kernel of the GPU on square products of
//! growing size, and the one the adapter chose. Timed by the host clock around calls that each
//! wait for the GPU (`time_op`), so a small product's rate includes its dispatch and wait:
//! that is what a step pays for it too.

use serde::Serialize;

use super::time_op;
use crate::backend::gpu::GpuBackend;
use crate::backend::{Activation, Backend, BackendError, DeviceMemory as _, MatmulChoice};

/// Square sizes tried, in order; a size is skipped once the one before took longer than
/// [`MAX_CALL_S`] a call (a software adapter would take minutes at 4096³).
pub const SIZES: [usize; 5] = [256, 512, 1024, 2048, 4096];

/// The longest one call of the previous size may take for the next to be tried, seconds.
pub const MAX_CALL_S: f64 = 1.0;

/// One kernel's rate on one size.
#[derive(Clone, Debug, Serialize)]
pub struct GpuProductRate {
    /// Which kernel ran it.
    pub kernel: MatmulChoice,
    /// `n` of the `n × n × n` product (forward pass with bias and ReLU fused).
    pub size: usize,
    /// Median GFLOP/s (`2n³` per call).
    pub gflop_per_s: f64,
}

/// Each kernel variant `gpu` runs, its GFLOP/s on each size of [`SIZES`] that fits the time;
/// `gpu` runs its chosen variant again afterwards.
pub fn measure(
    gpu: &mut GpuBackend,
    seconds_each: f64,
) -> Result<Vec<GpuProductRate>, BackendError> {
    let chosen = gpu.kernel_sizes().matmul;
    let mut rates = Vec::new();
    for kernel in gpu.matmul_variants() {
        gpu.set_matmul(kernel)?;
        for &n in &SIZES {
            let seconds = time_square(gpu, n, seconds_each)?;
            rates.push(GpuProductRate {
                kernel,
                size: n,
                gflop_per_s: 2.0 * (n as f64).powi(3) / seconds / 1e9,
            });
            if seconds > MAX_CALL_S {
                break;
            }
        }
        gpu.release_cached()?;
    }
    gpu.set_matmul(chosen)?;
    Ok(rates)
}

/// What one kernel launch and the link to the GPU cost, measured.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Overheads {
    /// A 1 × 1 × 1 product submitted and waited for: the round trip a step pays for each
    /// synchronisation, µs (median).
    pub dispatch_sync_us: f64,
    /// The same product queued 256 times, then waited for once: the cost of one more kernel
    /// in a step that does not wait, µs per dispatch (median of 5).
    pub dispatch_queued_us: f64,
    /// 64 MiB written from the host and waited for, GB/s (median of 5).
    pub upload_gb_per_s: f64,
    /// 64 MiB read back to the host, GB/s (median of 5).
    pub readback_gb_per_s: f64,
}

/// Values of the bandwidth probes' buffer: 64 MiB.
const VALUES: usize = 16 << 20;

/// Measures [`Overheads`] on `gpu`.
pub fn overheads(gpu: &mut dyn Backend) -> Result<Overheads, BackendError> {
    use web_time::Instant;
    let x = gpu.filled("x", 1, 1)?;
    let w = gpu.filled("w", 1, 1)?;
    let b = gpu.filled("b", 1, 1)?;
    let mut out = gpu.zeros("out", 1, 1)?;
    let mut one = |g: &mut dyn Backend| g.linear_forward(&x, &w, &b, Activation::Relu, &mut out);
    let dispatch_sync_us = time_op(gpu, 0.3, &mut one)? * 1e6;
    let mut queued = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..256 {
            one(gpu)?;
        }
        gpu.flush()?;
        queued.push(start.elapsed().as_secs_f64() / 256.0 * 1e6);
    }
    let values = vec![0.5f32; VALUES];
    let mut big = gpu.zeros("bandwidth", VALUES / 1024, 1024)?;
    let (mut up, mut down) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let start = Instant::now();
        gpu.write(&mut big, &values)?;
        gpu.flush()?;
        up.push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let back = gpu.read(&big)?;
        down.push(start.elapsed().as_secs_f64());
        if back.len() != VALUES {
            return Err(BackendError::Setup("the readback came back short".into()));
        }
    }
    let gb_per_s = |mut s: Vec<f64>| (VALUES * 4) as f64 / median(&mut s) / 1e9;
    Ok(Overheads {
        dispatch_sync_us,
        dispatch_queued_us: median(&mut queued),
        upload_gb_per_s: gb_per_s(up),
        readback_gb_per_s: gb_per_s(down),
    })
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Median seconds of one `n × n × n` forward product with bias and ReLU.
fn time_square(gpu: &mut dyn Backend, n: usize, seconds_each: f64) -> Result<f64, BackendError> {
    let x = gpu.filled("x", n, n)?;
    let w = gpu.filled("w", n, n)?;
    let b = gpu.filled("b", 1, n)?;
    let mut out = gpu.zeros("out", n, n)?;
    time_op(gpu, seconds_each, &mut |g| {
        g.linear_forward(&x, &w, &b, Activation::Relu, &mut out)
    })
}
