//! Convolution and pooling on both devices against an f64 reference written from the
//! definitions: the forward values, and every gradient against central finite differences,
//! kernel sizes 3 and 5, several channel counts, padding at every border, an odd edge left out
//! by the pooling, and ties inside a pooling window; and each of a convolution's three passes
//! over shapes that reach every path of both devices' kernels (the CPU's register tiles, the
//! GPU's one-output and register-tiled products).

use crate::common;

use batchscope::backend::{Activation, Backend, ConvShape, PoolShape, Tensor};
use common::reference::{conv64, dense64, pool64};
use common::{Rng64, assert_close, central_differences, upload};

const H: f64 = 1e-4;
const ABS: f64 = 2e-4;
const REL: f64 = 2e-3;

/// A case's name in a failure: the kernel, the channels, the image and the activation.
fn case_name(s: ConvShape, act: Activation) -> String {
    format!(
        "{}x{} {}→{} {}x{} {}",
        s.kernel,
        s.kernel,
        s.channels_in,
        s.channels_out,
        s.height,
        s.width,
        act.as_str()
    )
}

/// A convolution block (conv with `act`, then 2×2 max pooling) and a linear layer, under the
/// loss `L = Σ out ⊙ R`: the forward values and ∂L/∂(w, b, w2, b2, x), the way a training step
/// composes the ops (the device's convolution, pooling, the dense product, and back).
fn conv_block_case(b: &mut dyn Backend, s: ConvShape, act: Activation, batch: usize) {
    let pool = PoolShape {
        height: s.height,
        width: s.width,
        channels: s.channels_out,
    };
    let n_out = 3;
    let mut rng = Rng64::new((s.kernel * 100 + s.channels_in * 10 + s.channels_out) as u64);
    let x = rng.vec(batch * s.image_in(), 1.0);
    let w = rng.vec(s.patch() * s.channels_out, 0.5);
    let bias = rng.vec(s.channels_out, 0.3);
    let w2 = rng.vec(pool.image_out() * n_out, 0.5);
    let b2 = rng.vec(n_out, 0.3);
    let r = rng.vec(batch * n_out, 1.0);
    let forward = |x: &[f64], w: &[f64], bias: &[f64], w2: &[f64], b2: &[f64]| {
        let pooled = pool64(&conv64(x, w, bias, s, act), pool);
        dense64(&pooled, w2, b2, pool.image_out(), n_out)
    };
    let loss = |x: &[f64], w: &[f64], bias: &[f64], w2: &[f64], b2: &[f64]| -> f64 {
        let out = forward(x, w, bias, w2, b2);
        out.iter().zip(&r).map(|(o, r)| o * r).sum()
    };

    let rows = batch * s.pixels();
    let tx = upload(b, "x", batch, s.image_in(), &x);
    let tw = upload(b, "w", s.patch(), s.channels_out, &w);
    let tb = upload(b, "b", 1, s.channels_out, &bias);
    let tw2 = upload(b, "w2", pool.image_out(), n_out, &w2);
    let tb2 = upload(b, "b2", 1, n_out, &b2);
    let dz2 = upload(b, "dz2", batch, n_out, &r);
    let mut a1 = b.zeros("a1", rows, s.channels_out).expect("alloc");
    let mut pooled = b.zeros("pooled", batch, pool.image_out()).expect("alloc");
    let mut out = b.zeros("out", batch, n_out).expect("alloc");
    let mut dpooled = b.zeros("dpooled", batch, pool.image_out()).expect("alloc");
    let mut dz1 = b.zeros("dz1", rows, s.channels_out).expect("alloc");
    let mut dx = b.zeros("dx", batch, s.image_in()).expect("alloc");
    let mut dw = b.zeros("dw", s.patch(), s.channels_out).expect("alloc");
    let mut db = b.zeros("db", 1, s.channels_out).expect("alloc");
    let mut dw2 = b.zeros("dw2", pool.image_out(), n_out).expect("alloc");
    let mut db2 = b.zeros("db2", 1, n_out).expect("alloc");

    b.conv_forward(&tx, s, (&tw, &tb, act), &mut a1)
        .expect("conv");
    b.max_pool(&a1, pool, &mut pooled).expect("pool");
    b.linear_forward(&pooled, &tw2, &tb2, Activation::Identity, &mut out)
        .expect("dense");
    b.linear_backward_params(&pooled, &dz2, &mut dw2, &mut db2)
        .expect("dense params");
    // The pooled values have no activation of their own: the pooling's backward applies the
    // convolution's.
    b.linear_backward_input(&dz2, &tw2, &pooled, Activation::Identity, &mut dpooled)
        .expect("dense input");
    b.max_pool_backward(&a1, &dpooled, act, pool, &mut dz1)
        .expect("pool backward");
    b.conv_backward_params(&tx, s, &dz1, (&mut dw, &mut db))
        .expect("conv params");
    b.conv_backward_input(&dz1, &tw, s, &mut dx)
        .expect("conv input");

    let name = case_name(s, act);
    let conv = conv64(&x, &w, &bias, s, act);
    assert_close(
        &format!("{name} conv"),
        &b.read(&a1).expect("read"),
        &conv,
        ABS,
        REL,
    );
    assert_close(
        &format!("{name} pooled"),
        &b.read(&pooled).expect("read"),
        &pool64(&conv, pool),
        ABS,
        REL,
    );
    assert_close(
        &format!("{name} out"),
        &b.read(&out).expect("read"),
        &forward(&x, &w, &bias, &w2, &b2),
        ABS,
        REL,
    );
    let checks: [(&str, &Tensor, Vec<f64>); 5] = [
        (
            "dw",
            &dw,
            central_differences(&w, H, |v| loss(&x, v, &bias, &w2, &b2)),
        ),
        (
            "db",
            &db,
            central_differences(&bias, H, |v| loss(&x, &w, v, &w2, &b2)),
        ),
        (
            "dw2",
            &dw2,
            central_differences(&w2, H, |v| loss(&x, &w, &bias, v, &b2)),
        ),
        (
            "db2",
            &db2,
            central_differences(&b2, H, |v| loss(&x, &w, &bias, &w2, v)),
        ),
        (
            "dx",
            &dx,
            central_differences(&x, H, |v| loss(v, &w, &bias, &w2, &b2)),
        ),
    ];
    for (what, tensor, numeric) in checks {
        assert_close(
            &format!("{name} {what}"),
            &b.read(tensor).expect("read"),
            &numeric,
            ABS,
            REL,
        );
    }
}

fn shape(kernel: usize, channels_in: usize, channels_out: usize, h: usize, w: usize) -> ConvShape {
    ConvShape {
        height: h,
        width: w,
        channels_in,
        channels_out,
        kernel,
    }
}

/// 3×3, one input channel (a grey image), an odd height whose last row the pooling leaves out.
fn conv3_grey_tanh(b: &mut dyn Backend) {
    conv_block_case(b, shape(3, 1, 4, 5, 6), Activation::Tanh, 2);
}
/// 3×3 over several channels, with ReLU as a CNN has it.
fn conv3_channels_relu(b: &mut dyn Backend) {
    conv_block_case(b, shape(3, 3, 2, 6, 4), Activation::Relu, 3);
}
/// 5×5 on an image smaller than twice the kernel: most taps are padding.
fn conv5_sigmoid(b: &mut dyn Backend) {
    conv_block_case(b, shape(5, 2, 3, 4, 5), Activation::Sigmoid, 2);
}
/// Large enough that the CPU splits its rows over the pool and takes `gemm`'s path, and the
/// GPU runs many workgroups.
fn conv3_large_relu(b: &mut dyn Backend) {
    conv_block_case(b, shape(3, 4, 8, 12, 12), Activation::Relu, 4);
}

/// Each pass alone over shapes that reach every path of both devices' kernels: filters fewer
/// than, equal to and more than one or two vectors hold (AVX2 8, AVX-512 16 lanes), whole
/// vectors (two rows at a time) with odd and even heights, images narrower than the kernel,
/// widths that leave pixels after the last whole tile of 4 or 8, both kernel sizes, every
/// activation, and 64 channels in and out (the GPU's register-tiled products in all three
/// passes). The forward values against the definition; the weight gradient
/// `dw[(ky·K + kx)·C_in + c, o] = Σ x[y + ky − pad, x + kx − pad, c] · dz[y, x, o]` and the
/// input gradient `dx[y, x, c] = Σ dz[y − ky + pad, x − kx + pad, o] · w[(ky·K + kx)·C_in + c, o]`
/// against the same sums in f64.
fn conv_passes_shapes(b: &mut dyn Backend) {
    let cases = [
        (shape(3, 1, 8, 28, 28), Activation::Relu),
        (shape(3, 8, 16, 14, 14), Activation::Relu),
        (shape(3, 2, 17, 5, 13), Activation::Tanh),
        (shape(5, 3, 40, 9, 11), Activation::Sigmoid),
        (shape(5, 1, 3, 2, 3), Activation::Identity),
        (shape(3, 5, 33, 3, 1), Activation::Relu),
        (shape(3, 4, 64, 6, 21), Activation::Identity),
        (shape(3, 2, 16, 5, 9), Activation::Relu),
        (shape(5, 3, 32, 7, 10), Activation::Tanh),
        (shape(3, 64, 64, 6, 7), Activation::Relu),
    ];
    for (i, (s, act)) in cases.into_iter().enumerate() {
        let passes = common::conv_passes(b, s, act, 2, 40 + i as u64);
        for ((got, want), pass) in passes.iter().zip(common::CONV_PASSES) {
            let name = format!("{s:?} {} {pass}", act.as_str());
            assert_close(&name, got, want, ABS, REL);
        }
    }
}

/// Ties in a pooling window: the gradient goes to the first of the largest values in row-major
/// order and to none of the others, so it is not counted twice; an odd column gets none.
fn pooling_ties(b: &mut dyn Backend) {
    let s = PoolShape {
        height: 2,
        width: 5,
        channels: 2,
    };
    // Channel 0: all four equal in the first window; in the second, the last two tie.
    // Channel 1: the second value wins alone, then the first two tie.
    #[rustfmt::skip]
    let x = [
        1.0, 0.0,   1.0, 5.0,   2.0, 3.0,   2.0, 3.0,   9.0, 9.0,
        1.0, 0.0,   1.0, 0.0,   4.0, 1.0,   4.0, 0.0,   9.0, 9.0,
    ];
    let tx = upload(b, "x", 1, 20, &x);
    let dout = upload(b, "dout", 1, 4, &[10.0, 20.0, 30.0, 40.0]);
    let mut pooled = b.zeros("pooled", 1, 4).expect("alloc");
    let mut dx = b.zeros("dx", 1, 20).expect("alloc");
    b.max_pool(&tx, s, &mut pooled).expect("pool");
    b.max_pool_backward(&tx, &dout, Activation::Identity, s, &mut dx)
        .expect("pool backward");
    assert_eq!(b.read(&pooled).expect("read"), [1.0, 5.0, 4.0, 3.0]);
    #[rustfmt::skip]
    let want = [
        10.0, 0.0,   0.0, 20.0,   0.0, 40.0,   0.0, 0.0,   0.0, 0.0,
        0.0, 0.0,    0.0, 0.0,    30.0, 0.0,   0.0, 0.0,   0.0, 0.0,
    ];
    assert_eq!(b.read(&dx).expect("read"), want);
}

/// A shape that does not fit is refused with the op named, on both devices.
fn mismatched_shapes_are_refused(b: &mut dyn Backend) {
    let s = shape(3, 2, 4, 4, 4);
    let (w, bias) = (
        b.zeros("w", 18, 4).expect("alloc"),
        b.zeros("b", 1, 4).expect("alloc"),
    );
    let mut out = b.zeros("out", 32, 4).expect("alloc");
    let x = b.zeros("x", 2, 31).expect("alloc");
    let e = b
        .conv_forward(&x, s, (&w, &bias, Activation::Relu), &mut out)
        .expect_err("31 values are not images of 32");
    assert!(e.to_string().contains("conv_forward"), "{e}");
    let even = shape(4, 2, 4, 4, 4);
    let x = b.zeros("x", 1, 32).expect("alloc");
    let e = b
        .conv_forward(&x, even, (&w, &bias, Activation::Relu), &mut out)
        .expect_err("an even kernel");
    assert!(e.to_string().contains("odd"), "{e}");
    let x = b.zeros("x", 2, 32).expect("alloc");
    let three = b.zeros("b", 1, 3).expect("alloc");
    let e = b
        .conv_forward(&x, s, (&w, &three, Activation::Relu), &mut out)
        .expect_err("3 biases for 4 filters");
    assert!(e.to_string().contains("conv_forward"), "{e}");
    let dz = b.zeros("dz", 32, 3).expect("alloc");
    let mut dx = b.zeros("dx", 2, 32).expect("alloc");
    let e = b
        .conv_backward_input(&dz, &w, s, &mut dx)
        .expect_err("3 channels of gradient for 4 filters");
    assert!(e.to_string().contains("conv_backward_input"), "{e}");
    let tiny = PoolShape {
        height: 1,
        width: 8,
        channels: 1,
    };
    let x = b.zeros("x", 1, 8).expect("alloc");
    let mut out = b.zeros("out", 1, 1).expect("alloc");
    let e = b
        .max_pool(&x, tiny, &mut out)
        .expect_err("one row cannot be pooled 2×2");
    assert!(e.to_string().contains("too small"), "{e}");
}

on_both_devices! {
    conv3_grey_tanh_gradients => super::conv3_grey_tanh;
    conv3_channels_relu_gradients => super::conv3_channels_relu;
    conv5_sigmoid_gradients => super::conv5_sigmoid;
    conv3_large_relu_gradients => super::conv3_large_relu;
    conv_passes_match_the_definitions => super::conv_passes_shapes;
    pooling_gives_a_tie_to_the_first => super::pooling_ties;
    convolution_shapes_are_checked => super::mismatched_shapes_are_refused;
}
