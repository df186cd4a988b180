//! The CPU's fused multiply-add peak on one core, measured: the yardstick for "what share of
//! the hardware does the matrix multiply use".
//!
//! A loop of independent FMAs on enough accumulators to hide the instruction latency runs at
//! the core's FMA throughput. It must be compiled for the widest vector unit the CPU has, which
//! a portable binary cannot assume, so the loop exists in an AVX-512, an AVX2+FMA and a baseline
//! version, and the widest one the CPU reports is called.
#![cfg_attr(
    target_arch = "x86_64",
    expect(
        unsafe_code,
        reason = "target_feature functions, called only where the CPU reports the feature"
    )
)]

use std::hint::black_box;
use web_time::Instant;

/// Accumulators in flight: more than FMA latency × FMA ports, so the loop is throughput-bound.
const ACCUMULATORS: usize = 16;

/// The measured peak of one core.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FmaPeak {
    /// Which instruction set the loop ran with.
    pub isa: &'static str,
    /// Single-precision FLOP/s of one core (an FMA counts as two), in GFLOP/s.
    pub gflop_per_s: f64,
}

/// The portable fallback: plain multiply-adds, which the compiler may or may not fuse.
fn mul_add_baseline(iterations: u64) -> f32 {
    let mut acc = [[1.0f32; 4]; ACCUMULATORS];
    let x = black_box([0.999_99f32; 4]);
    let y = black_box([1e-6f32; 4]);
    for _ in 0..iterations {
        for a in &mut acc {
            for l in 0..4 {
                a[l] = a[l] * x[l] + y[l];
            }
        }
    }
    acc.iter().flatten().sum()
}

// The vector loops use the FMA intrinsics themselves: written as plain `mul_add` the compiler
// kept them scalar here, which measured a thirtieth of the peak.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fma_avx512(iterations: u64) -> f32 {
    use std::arch::x86_64::{
        __m512, _mm512_add_ps, _mm512_fmadd_ps, _mm512_reduce_add_ps, _mm512_set1_ps,
    };
    let x = _mm512_set1_ps(black_box(0.999_99));
    let y = _mm512_set1_ps(black_box(1e-6));
    let mut acc: [__m512; ACCUMULATORS] = [_mm512_set1_ps(1.0); ACCUMULATORS];
    for _ in 0..iterations {
        for a in &mut acc {
            *a = _mm512_fmadd_ps(*a, x, y);
        }
    }
    let mut sum = _mm512_set1_ps(0.0);
    for a in acc {
        sum = _mm512_add_ps(sum, a);
    }
    _mm512_reduce_add_ps(sum)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn fma_avx2(iterations: u64) -> f32 {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_fmadd_ps, _mm256_set1_ps, _mm256_storeu_ps,
    };
    let x = _mm256_set1_ps(black_box(0.999_99));
    let y = _mm256_set1_ps(black_box(1e-6));
    let mut acc: [__m256; ACCUMULATORS] = [_mm256_set1_ps(1.0); ACCUMULATORS];
    for _ in 0..iterations {
        for a in &mut acc {
            *a = _mm256_fmadd_ps(*a, x, y);
        }
    }
    let mut sum = _mm256_set1_ps(0.0);
    for a in acc {
        sum = _mm256_add_ps(sum, a);
    }
    let mut lanes = [0.0f32; 8];
    // SAFETY: `lanes` holds exactly the 8 floats one unaligned 256-bit store writes.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sum) };
    lanes.iter().sum()
}

/// Runs the widest loop this CPU supports for `iterations`; returns (isa, FLOPs done).
fn run(iterations: u64) -> (&'static str, f64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU reports AVX-512F and FMA, the features this function is compiled for.
            black_box(unsafe { fma_avx512(iterations) });
            return ("avx512+fma", flops(iterations, 16));
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU reports AVX2 and FMA, the features this function is compiled for.
            black_box(unsafe { fma_avx2(iterations) });
            return ("avx2+fma", flops(iterations, 8));
        }
    }
    black_box(mul_add_baseline(iterations));
    ("baseline multiply-add", flops(iterations, 4))
}

fn flops(iterations: u64, lanes: usize) -> f64 {
    iterations as f64 * (ACCUMULATORS * lanes * 2) as f64
}

/// Measures the single-core FMA peak: the best of several runs of about `seconds` each.
pub fn measure(seconds: f64) -> FmaPeak {
    let mut iterations = 1u64 << 16;
    // Grow the run until it lasts long enough to time.
    loop {
        let start = Instant::now();
        run(iterations);
        if start.elapsed().as_secs_f64() > seconds / 4.0 || iterations > 1 << 34 {
            break;
        }
        iterations *= 2;
    }
    let mut best = 0.0f64;
    let mut isa = "";
    for _ in 0..5 {
        let start = Instant::now();
        let (name, flops) = run(iterations);
        best = best.max(flops / start.elapsed().as_secs_f64() / 1e9);
        isa = name;
    }
    FmaPeak {
        isa,
        gflop_per_s: best,
    }
}
