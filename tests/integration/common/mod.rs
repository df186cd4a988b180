//! Helpers shared by the integration tests.

pub mod child;
pub mod reference;

use batchscope::backend::cpu::CpuBackend;
use batchscope::backend::gpu::GpuBackend;
use batchscope::backend::{Activation, Backend, ConvShape, Tensor};
use batchscope::nn::Network;

/// Tests that time things or load the machine (GPU work runs on the CPU on a software adapter;
/// a benchmark or a lesson's probes run flat out) take this first: one of them at a time in the
/// whole binary, since on a 2-core machine a neighbour's load shows up in the timings. Under
/// cargo-nextest, where each test is a process, the same tests form the `timing` test group
/// (.config/nextest.toml; scripts/check-test-groups.py keeps the two lists one).
pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The CPU backend with two threads, so the parallel paths run too.
pub fn cpu() -> CpuBackend {
    CpuBackend::new(2).expect("a rayon pool starts")
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
                    $case(&mut $crate::common::cpu());
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

/// Seeded test inputs.
pub struct Rng64(rand_chacha::ChaCha8Rng);

impl Rng64 {
    pub fn new(seed: u64) -> Self {
        use rand::SeedableRng;
        Self(rand_chacha::ChaCha8Rng::seed_from_u64(seed))
    }

    /// Uniform in [-1, 1).
    pub fn next(&mut self) -> f64 {
        use rand::Rng;
        self.0.random_range(-1.0..1.0)
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

/// An activation in f64, for the references the backends are checked against.
pub fn act64(a: Activation, z: f64) -> f64 {
    match a {
        Activation::Identity => z,
        Activation::Relu => z.max(0.0),
        Activation::Tanh => z.tanh(),
        Activation::Sigmoid => 1.0 / (1.0 + (-z).exp()),
        // PyTorch's GELU(approximate="tanh"), from its definition.
        Activation::Gelu => {
            let u = (2.0 / std::f64::consts::PI).sqrt() * (z + 0.044_715 * z.powi(3));
            0.5 * z * (1.0 + u.tanh())
        }
    }
}

/// A new workspace tensor on `b` holding `v` (rounded to f32).
pub fn upload(b: &mut dyn Backend, label: &str, rows: usize, cols: usize, v: &[f64]) -> Tensor {
    let mut t = b.zeros(label, rows, cols).expect("alloc");
    b.write(&mut t, &to_f32(v)).expect("write");
    t
}

/// Parameters per layer in f64, `(weights, biases)`.
pub type Params64 = Vec<(Vec<f64>, Vec<f64>)>;

/// The model's seeded weights and small non-zero biases (`0.1·sin(layer + j)`, so their
/// gradients mean something), written to the model, as f64 holding exactly the f32 values the
/// device computes with.
pub fn gradient_check_parameters(model: &mut Network, b: &mut dyn Backend) -> Params64 {
    let exact = |v: &[f64]| -> Vec<f64> { to_f32(v).iter().map(|&x| f64::from(x)).collect() };
    let params: Params64 = model
        .read_parameters(b)
        .expect("read")
        .into_iter()
        .enumerate()
        .map(|(l, (w, bias))| {
            let w = w.iter().map(|&v| f64::from(v)).collect();
            let bias: Vec<f64> = (0..bias.len())
                .map(|j| 0.1 * ((l + j) as f64).sin())
                .collect();
            (w, exact(&bias))
        })
        .collect();
    let as_f32: Vec<_> = params
        .iter()
        .map(|(w, bias)| (to_f32(w), to_f32(bias)))
        .collect();
    model.write_parameters(b, &as_f32).expect("write");
    params
}

/// Every layer's weight and bias gradients in `grads` against central differences (step `h`)
/// of `loss` around `params`, within `abs + rel·|want|`.
pub fn assert_layer_gradients(
    name: &str,
    grads: &[(Vec<f32>, Vec<f32>)],
    params: &Params64,
    loss: impl Fn(&Params64) -> f64,
    (h, abs, rel): (f64, f64, f64),
) {
    assert_eq!(grads.len(), params.len(), "{name}: a gradient per layer");
    for l in 0..params.len() {
        let dw = central_differences(&params[l].0, h, |v| {
            let mut p = params.clone();
            p[l].0 = v.to_vec();
            loss(&p)
        });
        let db = central_differences(&params[l].1, h, |v| {
            let mut p = params.clone();
            p[l].1 = v.to_vec();
            loss(&p)
        });
        assert_close(&format!("{name} layer {l} dw"), &grads[l].0, &dw, abs, rel);
        assert_close(&format!("{name} layer {l} db"), &grads[l].1, &db, abs, rel);
    }
}

/// What [`conv_passes`] compares, in its order.
pub const CONV_PASSES: [&str; 4] = [
    "forward",
    "weight gradient",
    "bias gradient",
    "input gradient",
];

/// One convolution's three passes on `b` (forward with `act`, parameter gradients, input
/// gradient) over `batch` random images, and the same from the definitions in f64: for each of
/// [`CONV_PASSES`], the device's values and the reference's.
pub fn conv_passes(
    b: &mut dyn Backend,
    s: ConvShape,
    act: Activation,
    batch: usize,
    seed: u64,
) -> [(Vec<f32>, Vec<f64>); 4] {
    let mut rng = Rng64::new(seed);
    let rows = batch * s.pixels();
    let x = rng.vec(batch * s.image_in(), 1.0);
    let w = rng.vec(s.patch() * s.channels_out, 0.5);
    let bias = rng.vec(s.channels_out, 0.3);
    let dz = rng.vec(rows * s.channels_out, 1.0);
    let tx = upload(b, "x", batch, s.image_in(), &x);
    let tw = upload(b, "w", s.patch(), s.channels_out, &w);
    let tb = upload(b, "b", 1, s.channels_out, &bias);
    let tdz = upload(b, "dz", rows, s.channels_out, &dz);
    let mut out = b.zeros("out", rows, s.channels_out).expect("alloc");
    let mut dw = b.zeros("dw", s.patch(), s.channels_out).expect("alloc");
    let mut db = b.zeros("db", 1, s.channels_out).expect("alloc");
    let mut dx = b.zeros("dx", batch, s.image_in()).expect("alloc");
    b.conv_forward(&tx, s, (&tw, &tb, act), &mut out)
        .expect("forward");
    b.conv_backward_params(&tx, s, &tdz, (&mut dw, &mut db))
        .expect("parameter gradients");
    b.conv_backward_input(&tdz, &tw, s, &mut dx)
        .expect("input gradient");
    let (want_dw, want_dx) = reference::conv_gradients64(&x, &w, &dz, s, batch);
    let want_db: Vec<f64> = (0..s.channels_out)
        .map(|o| dz.iter().skip(o).step_by(s.channels_out).sum())
        .collect();
    let mut read = |t: &Tensor| b.read(t).expect("read");
    [
        (read(&out), reference::conv64(&x, &w, &bias, s, act)),
        (read(&dw), want_dw),
        (read(&db), want_db),
        (read(&dx), want_dx),
    ]
}
