//! FP16 and BF16 rounding and 16-bit storage on the GPU path give the bits the `half` crate gives
//! on the CPU; training in each precision.

use crate::common;

use batchscope::backend::prelude::*;

use batchscope::precision::{Half, Precision, RoundingCensus};

/// Values that probe every branch of a conversion, then random bit patterns and magnitudes.
fn sweep() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        // Ties: halfway between 1 and the next FP16 (2^-10 apart) rounds to even, either side.
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        // Ties for BF16 (2^-7 apart near 1).
        1.0 + 2f32.powi(-8),
        1.0 + 3.0 * 2f32.powi(-8),
        // FP16's largest finite value, the last value that rounds down to it, and overflow.
        65504.0,
        65519.996,
        65520.0,
        -65520.0,
        1e6,
        // FP16's normal and subnormal edges, and a tie at the smallest subnormal.
        6.103_515_6e-5,
        6.09e-5,
        5.960_464_5e-8,
        2.980_232_2e-8,
        4.470_348_4e-8,
        1e-9,
        // BF16's edges and f32 subnormals (which a GPU may flush if it loads them as floats).
        3.389_531_4e38,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40,
        -1e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0x7f80_0001), // a signalling NaN
        f32::from_bits(0xffc1_2345),
    ];
    // Random bit patterns cover every exponent, and random magnitudes the useful range densely.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        v.push(f32::from_bits(next() as u32));
    }
    for _ in 0..20_000 {
        let r = next();
        let magnitude = ((r >> 32) % 60) as i32 - 40;
        let mantissa = (r as u32 as f32) / u32::MAX as f32 + 1.0;
        let sign = if r & 1 == 0 { 1.0 } else { -1.0 };
        v.push(sign * mantissa * 2f32.powi(magnitude));
    }
    v
}

fn same(format: Half, got: &[f32], inputs: &[f32]) {
    let mut mismatches = Vec::new();
    for (&g, &x) in got.iter().zip(inputs) {
        let want = format.round(x);
        let equal = if want.is_nan() {
            g.is_nan()
        } else {
            g.to_bits() == want.to_bits()
        };
        if !equal {
            mismatches.push(format!(
                "{x:e} ({:#010x}): got {:#010x}, half gives {:#010x}",
                x.to_bits(),
                g.to_bits(),
                want.to_bits()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{format:?}: {} of {} differ, e.g. {:?}",
        mismatches.len(),
        inputs.len(),
        &mismatches[..mismatches.len().min(5)]
    );
}

fn round_on(backend: &mut dyn Backend, format: Half, inputs: &[f32]) -> Vec<f32> {
    let mut t = backend.zeros("values", 1, inputs.len()).expect("alloc");
    backend.write(&mut t, inputs).expect("write");
    backend.round_to(&mut t, format).expect("round");
    backend.read(&t).expect("read")
}

#[test]
fn gpu_rounding_gives_the_bits_of_the_half_crate() {
    let Some(mut gpu) = common::gpu() else { return };
    let inputs = sweep();
    for format in [Half::Fp16, Half::Bf16] {
        let got = round_on(&mut gpu, format, &inputs);
        same(format, &got, &inputs);
    }
}

/// Stored in 16 bits on the GPU (f32 values narrowed by `shaders/convert.wgsl`, then widened
/// back by it), the sweep keeps the `half` crate's bits.
#[test]
fn gpu_16_bit_storage_gives_the_bits_of_the_half_crate() {
    use batchscope::memory::Role;
    use batchscope::precision::DType;
    let Some(mut gpu) = common::gpu() else { return };
    let inputs = sweep();
    for dtype in [DType::F16, DType::Bf16] {
        let format = dtype.half().expect("16-bit");
        let mut wide = gpu.zeros("values", 1, inputs.len()).expect("alloc");
        gpu.write(&mut wide, &inputs).expect("write");
        let shape = (1, inputs.len());
        let mut stored = gpu
            .alloc_as(Role::Workspace, "stored", shape, dtype)
            .expect("alloc");
        gpu.copy(&wide, &mut stored).expect("narrow");
        let mut back = gpu.zeros("back", 1, inputs.len()).expect("alloc");
        gpu.copy(&stored, &mut back).expect("widen");
        same(format, &gpu.read(&back).expect("read"), &inputs);
        same(format, &gpu.read(&stored).expect("read"), &inputs);
    }
}

/// The CPU path rounds with `half`; these expectations are worked out by hand from the formats.
fn rounds_to_nearest_even(backend: &mut dyn Backend) {
    let p = |e: i32| 2f32.powi(e);
    let fp16 = [
        // (input, expected) — FP16 has 10 mantissa bits: near 1 the step is 2^-10.
        (1.0 + p(-11), 1.0),                   // tie: to the even neighbour, 1
        (1.0 + 3.0 * p(-11), 1.0 + p(-9)),     // tie: to the even neighbour, 1 + 2·2^-10
        (1.0 + p(-11) + p(-20), 1.0 + p(-10)), // above the tie: up
        (65504.0, 65504.0),                    // the largest finite value
        (65519.0, 65504.0),                    // below the midpoint to the next step: down
        (65520.0, f32::INFINITY),              // the midpoint rounds to even, which is overflow
        (p(-24), p(-24)),                      // the smallest subnormal
        (p(-25), 0.0),                         // half of it: a tie, to even zero
        (3.0 * p(-26), p(-24)),                // above the tie: up to the smallest subnormal
        (-p(-30), -0.0),                       // underflow keeps the sign
    ];
    let bf16 = [
        // BF16 has 7 mantissa bits: near 1 the step is 2^-7.
        (1.0 + p(-8), 1.0),
        (1.0 + 3.0 * p(-8), 1.0 + p(-6)),
        (f32::MAX, f32::INFINITY), // rounds up past BF16's largest finite value
        // An f32 subnormal: 1e-40 is 0x000116c2, its low half below the tie: down to 0x00010000.
        (1e-40, f32::from_bits(0x0001_0000)),
        (f32::from_bits(0x0001_8001), f32::from_bits(0x0002_0000)), // above the tie: up
    ];
    for (format, cases) in [(Half::Fp16, &fp16[..]), (Half::Bf16, &bf16[..])] {
        let inputs: Vec<f32> = cases.iter().map(|c| c.0).collect();
        let got = round_on(backend, format, &inputs);
        for ((x, want), g) in cases.iter().zip(&got) {
            assert_eq!(
                g.to_bits(),
                want.to_bits(),
                "{format:?} {x:e}: got {g:e}, expected {want:e}"
            );
        }
        let nan = round_on(backend, format, &[f32::NAN]);
        assert!(nan[0].is_nan());
    }
}

/// Loss scaling's multiply: powers of two scale exactly, and overflow gives infinity, on both.
fn scales_exactly(backend: &mut dyn Backend) {
    let values = [1.0, -3.5e-7, 6.0e-8, 1e35, 0.0, 123.456];
    let mut t = backend.zeros("g", 1, values.len()).expect("alloc");
    backend.write(&mut t, &values).expect("write");
    backend.scale(&mut t, 65536.0).expect("scale");
    let up = backend.read(&t).expect("read");
    for (u, v) in up.iter().zip(values) {
        assert_eq!(u.to_bits(), (v * 65536.0).to_bits(), "{v:e}");
    }
    assert_eq!(up[3], f32::INFINITY);
    backend.scale(&mut t, 1.0 / 65536.0).expect("scale");
    let back = backend.read(&t).expect("read");
    for (b, v) in back.iter().zip(values).filter(|(_, v)| v.abs() < 1e30) {
        assert_eq!(b.to_bits(), v.to_bits(), "{v:e} scaled up and down again");
    }
}

/// `GradScaler`'s check, made on the device: the count of NaN and infinite values over several
/// tensors, f32 and 16-bit (where 1e5 is already infinite in FP16), and zero when all are finite.
fn counts_values_that_are_not_finite(backend: &mut dyn Backend) {
    use batchscope::memory::Role;
    use batchscope::precision::DType;
    let mut a = backend.zeros("a", 1, 5).expect("alloc");
    backend
        .write(
            &mut a,
            &[1.0, f32::NAN, f32::INFINITY, -2.0, f32::NEG_INFINITY],
        )
        .expect("write");
    let mut b = backend
        .alloc_as(Role::Gradients, "b", (1, 3), DType::F16)
        .expect("alloc");
    backend.write(&mut b, &[1e5, 0.5, f32::NAN]).expect("write");
    let mut c = backend
        .alloc_as(Role::Gradients, "c", (1, 3), DType::Bf16)
        .expect("alloc");
    backend.write(&mut c, &[1e5, 0.5, -3.0]).expect("write");
    assert_eq!(backend.count_non_finite(&[&a, &b, &c]).expect("count"), 5);
    // Counted afresh each time.
    assert_eq!(backend.count_non_finite(&[&c]).expect("count"), 0);
    assert_eq!(backend.count_non_finite(&[&b]).expect("count"), 2);
}

on_both_devices! {
    non_finite_count => super::counts_values_that_are_not_finite;
    fp16_and_bf16_round_to_nearest_even => super::rounds_to_nearest_even;
    loss_scaling_multiplies_exactly => super::scales_exactly;
}

/// 600 steps of the spiral (2,16,16,3, Adam) in `precision` with the loss multiplied by
/// `loss_weight`.
struct SpiralRun {
    /// Mean loss of the last 50 steps.
    loss: f32,
    /// The loss scale at the end (mixed precision).
    scale: Option<f32>,
    /// Updates skipped (mixed precision).
    skipped: Option<u64>,
    /// What 16-bit storage lost over the run.
    rounding: RoundingCensus,
}

fn spiral(backend: &mut dyn Backend, precision: Precision, loss_weight: f32) -> SpiralRun {
    use batchscope::train::{Pipeline, Runner, Session, TrainConfig};
    let config = TrainConfig {
        precision,
        loss_weight,
        pipeline: Pipeline {
            record: false,
            ..Pipeline::default()
        },
        ..TrainConfig::default()
    };
    let session = Session::new(config).expect("valid");
    let mut runner = Runner::new(backend, &session).expect("fits");
    for _ in 0..550 {
        runner.step(backend, false).expect("step");
    }
    let _ = runner.log(backend).expect("log");
    for _ in 0..50 {
        runner.step(backend, false).expect("step");
    }
    let log = runner.log(backend).expect("log");
    SpiralRun {
        loss: log.loss,
        scale: log.loss_scale,
        skipped: log.skipped_steps,
        rounding: *runner.rounding_total(),
    }
}

/// Mixed precision with loss scaling trains like FP32 (within 10%); BF16 trains without scaling;
/// the scaler starts at 65536, meets an overflow in the first steps, skips them and backs off.
fn mixed_precision_trains_like_fp32(backend: &mut dyn Backend) {
    let fp32 = spiral(backend, Precision::Fp32, 1.0);
    assert_eq!(fp32.scale, None);
    assert!(fp32.rounding.is_empty(), "FP32 rounds nothing");
    let mixed = spiral(backend, Precision::Mixed, 1.0);
    assert!(
        (mixed.loss - fp32.loss).abs() <= 0.1 * fp32.loss,
        "mixed {} against FP32 {}",
        mixed.loss,
        fp32.loss
    );
    let (scale, skipped) = (
        mixed.scale.expect("a scale"),
        mixed.skipped.expect("a count"),
    );
    assert!(
        skipped >= 1 && scale < 65536.0,
        "scale {scale}, {skipped} skipped"
    );
    // The overflow that made it back off was counted where the scaled gradient was stored.
    assert!(mixed.rounding.gradients().overflow >= 1);
    // BF16 trains without any scaling (its range is f32's); its 8 significant bits stop the loss
    // short of FP32's (here about 1.7 times it after 600 steps), far below the start (ln 3).
    let bf16 = spiral(backend, Precision::Bf16, 1.0);
    assert!(
        bf16.loss < 0.1 * 3f32.ln(),
        "BF16 {} against FP32 {}",
        bf16.loss,
        fp32.loss
    );
}

/// The designed case of tiny gradients: the loss (and so every gradient) multiplied by 1e-6.
/// Adam's steps do not depend on the gradients' size, so FP32 trains as usual. Pure FP16 loses
/// most of the gradient values to zero as they are stored and does not train (the few that
/// survive as subnormals give Adam steps of noise). Mixed precision scales the loss by 65536 first
/// and trains like FP32; BF16 has f32's range and loses none, without any scaling.
fn tiny_gradients_need_loss_scaling_in_fp16(backend: &mut dyn Backend) {
    const WEIGHT: f32 = 1e-6;
    let start = 3f32.ln();
    let fp32 = spiral(backend, Precision::Fp32, WEIGHT);
    assert!(fp32.loss < 0.1 * start, "FP32 trains: {}", fp32.loss);

    let fp16 = spiral(backend, Precision::Fp16, WEIGHT);
    let lost = fp16.rounding.gradients();
    assert!(
        lost.underflow_share() > 0.5,
        "FP16 loses most gradient values to zero: {lost:?}"
    );
    assert!(
        fp16.loss > 0.9 * start,
        "FP16 does not train: loss {} (start {start})",
        fp16.loss
    );

    let mixed = spiral(backend, Precision::Mixed, WEIGHT);
    assert!(
        (mixed.loss - fp32.loss).abs() <= 0.1 * fp32.loss,
        "mixed {} against FP32 {}",
        mixed.loss,
        fp32.loss
    );
    let lost = mixed.rounding.gradients();
    assert!(
        lost.underflow_share() < 0.05,
        "scaled, few gradient values are lost: {lost:?}"
    );

    let bf16 = spiral(backend, Precision::Bf16, WEIGHT);
    assert_eq!(bf16.scale, None, "no loss scaling");
    let lost = bf16.rounding.gradients();
    assert!(
        lost.nonzero > 0 && lost.underflow == 0,
        "BF16 loses none: {lost:?}"
    );
    assert!(bf16.loss < 0.1 * start, "BF16 trains: {}", bf16.loss);
}

on_both_devices! {
    mixed_precision => super::mixed_precision_trains_like_fp32;
    tiny_gradients => super::tiny_gradients_need_loss_scaling_in_fp16;
}
