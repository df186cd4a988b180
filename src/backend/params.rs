//! What ops take besides tensors: the activation a layer applies, Adam's hyper-parameters, how
//! values travel to a GPU, and the kernel times a step took.

use super::tensor::Tensor;

/// The element-wise non-linearity after a dense layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// `f(z) = z`, used for the output layer (the loss applies softmax).
    Identity,
    /// `f(z) = max(z, 0)`.
    Relu,
    /// `f(z) = tanh(z)`.
    Tanh,
    /// `f(z) = 1 / (1 + e^-z)`.
    Sigmoid,
    /// GELU in the tanh approximation, PyTorch's `GELU(approximate="tanh")`:
    /// `f(z) = z/2 · (1 + tanh(√(2/π) · (z + 0.044715 z³)))`. Its derivative cannot be had from
    /// its output, so it is never fused into the product before it: it is a layer of its own
    /// ([`ComputeOps::activation_forward`](crate::backend::ComputeOps::activation_forward)),
    /// which keeps its input for backward.
    Gelu,
}

/// `LayerNorm`'s ε, PyTorch's default.
pub const LAYER_NORM_EPS: f32 = 1e-5;

/// √(2/π), GELU's tanh approximation's scale.
const GELU_SCALE: f32 = 0.797_884_6;
/// The cubic term's weight in GELU's tanh approximation.
const GELU_CUBIC: f32 = 0.044_715;

/// `tanh(√(2/π) · (z + 0.044715 z³))`, its argument held within ±15 (where tanh is ±1 in f32
/// already) as the GPU's shader holds it, whose tanh may overflow beyond.
#[inline]
fn gelu_tanh(z: f32) -> f32 {
    fast_tanh((GELU_SCALE * (z + GELU_CUBIC * z * z * z)).clamp(-15.0, 15.0))
}

/// `tanh(x)` as a rational function of `x` (Eigen's `ptanh` for f32: a degree-13 odd numerator
/// over a degree-6 even denominator, within 4e-7 of the true value, held at ±7.9 where tanh is
/// 1 to that precision), written with plain multiplies and adds (`mul_add` is a library call
/// where the target does not promise FMA), so a loop over a tensor has no call into the maths
/// library. With libm's `tanhf`, GELU took about 11 ns a value: 18 ms forward and 17 ms
/// backward of the baby GPT's CPU step at batch 12 (kernel timing, release build, 2-core VM);
/// with this the whole step went from 98 and 78 ms to 76 and 74 ms in two alternating runs
/// there (a noisy machine: the gain is real but its size is not pinned down).
#[inline]
#[expect(
    clippy::excessive_precision,
    reason = "Eigen's coefficients, kept as published"
)]
pub fn fast_tanh(x: f32) -> f32 {
    const CLAMP: f32 = 7.905_311;
    let x = x.clamp(-CLAMP, CLAMP);
    let x2 = x * x;
    let mut p = -2.760_768_477_423_55e-16_f32;
    p = x2 * p + 2.000_187_904_824_77e-13;
    p = x2 * p + -8.604_671_522_137_35e-11;
    p = x2 * p + 5.122_297_090_371_14e-8;
    p = x2 * p + 1.485_722_357_179_79e-5;
    p = x2 * p + 6.372_619_288_754_36e-4;
    p = x2 * p + 4.893_524_558_917_86e-3;
    let mut q = 1.198_258_394_667_02e-6_f32;
    q = x2 * q + 1.185_347_056_866_54e-4;
    q = x2 * q + 2.268_434_632_439_00e-3;
    q = x2 * q + 4.893_525_185_543_85e-3;
    let t = x * p / q;
    // Below 4e-4 tanh(x) is x to f32's precision.
    if x.abs() < 4e-4 { x } else { t }
}

impl Activation {
    /// The hidden-layer activations a user can choose.
    pub const CHOICES: [Activation; 3] = [Activation::Relu, Activation::Tanh, Activation::Sigmoid];

    /// Code shared with the shaders (`act` field of their parameter blocks).
    pub fn code(self) -> u32 {
        match self {
            Activation::Identity => 0,
            Activation::Relu => 1,
            Activation::Tanh => 2,
            Activation::Sigmoid => 3,
            Activation::Gelu => 4,
        }
    }

    /// Every activation, for the shaders' codes.
    pub const ALL: [Activation; 5] = [
        Activation::Identity,
        Activation::Relu,
        Activation::Tanh,
        Activation::Sigmoid,
        Activation::Gelu,
    ];

    /// Whether its derivative can be had from its output, so a product's epilogue can apply it
    /// and the backward pass of the next layer its derivative (all but GELU).
    pub fn fuses(self) -> bool {
        self != Activation::Gelu
    }

    /// Lower-case name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Activation::Identity => "identity",
            Activation::Relu => "relu",
            Activation::Tanh => "tanh",
            Activation::Sigmoid => "sigmoid",
            Activation::Gelu => "gelu",
        }
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Identity, Self::Relu, Self::Tanh, Self::Sigmoid]
            .into_iter()
            .find(|a| a.as_str() == name)
    }

    /// `f(z)`.
    #[inline]
    pub fn apply(self, z: f32) -> f32 {
        match self {
            Activation::Identity => z,
            Activation::Relu => z.max(0.0),
            Activation::Tanh => z.tanh(),
            Activation::Sigmoid => 1.0 / (1.0 + (-z).exp()),
            Activation::Gelu => 0.5 * z * (1.0 + gelu_tanh(z)),
        }
    }

    /// `f'(z)`, from the input `z`: what an activation layer of its own applies in backward.
    #[inline]
    pub fn derivative(self, z: f32) -> f32 {
        match self {
            Activation::Gelu => {
                let t = gelu_tanh(z);
                let du = GELU_SCALE * (1.0 + 3.0 * GELU_CUBIC * z * z);
                0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * du
            }
            fused => fused.derivative_from_output(fused.apply(z)),
        }
    }

    /// `f'(z)` written in terms of the output `a = f(z)`, which is what the forward pass keeps.
    #[inline]
    pub fn derivative_from_output(self, a: f32) -> f32 {
        match self {
            Activation::Identity => 1.0,
            Activation::Relu => {
                if a > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Activation::Tanh => 1.0 - a * a,
            Activation::Sigmoid => a * (1.0 - a),
            // Never asked: the op checks refuse GELU where the derivative comes from the output
            // (`fuses`); NaN makes a slip loud rather than a quietly wrong gradient.
            Activation::Gelu => f32::NAN,
        }
    }
}

/// One optimizer update rule with its hyper-parameters, as
/// [`ComputeOps::update_layer`](crate::backend::ComputeOps::update_layer) applies it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UpdateStep {
    /// `p -= lr · g`.
    Sgd { lr: f32 },
    /// PyTorch's SGD with momentum.
    Momentum { lr: f32, momentum: f32 },
    /// Adam.
    Adam(AdamHyper),
}

impl UpdateStep {
    /// The rule's name, as the settings call it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sgd { .. } => "sgd",
            Self::Momentum { .. } => "momentum",
            Self::Adam(_) => "adam",
        }
    }

    /// The same rule without weight decay: a layer's biases (and any vector) never decay.
    #[must_use]
    pub fn without_decay(self) -> Self {
        match self {
            Self::Adam(hyper) => Self::Adam(AdamHyper {
                weight_decay: 0.0,
                ..hyper
            }),
            other => other,
        }
    }

    /// Optimizer-state tensors per parameter tensor the rule needs.
    pub fn state_tensors(self) -> usize {
        match self {
            Self::Sgd { .. } => 0,
            Self::Momentum { .. } => 1,
            Self::Adam(_) => 2,
        }
    }
}

/// A parameter tensor as an update takes it: its values, its gradient, and its optimizer
/// state ([`UpdateStep::state_tensors`] of them).
pub struct ParamTensors<'a> {
    pub value: &'a mut Tensor,
    pub grad: &'a Tensor,
    pub state: &'a mut [Tensor],
}

/// Hyper-parameters of one Adam update, PyTorch semantics: `torch.optim.Adam`, or
/// `torch.optim.AdamW` with a weight decay (decoupled: the value shrinks by `1 − lr · decay`
/// before the step, whatever the gradient).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamHyper {
    /// Learning rate.
    pub lr: f32,
    /// Decay of the first moment.
    pub beta1: f32,
    /// Decay of the second moment.
    pub beta2: f32,
    /// Added to the denominator.
    pub eps: f32,
    /// 1-based step count, for bias correction.
    pub step: u32,
    /// `AdamW`'s decoupled weight decay (0: Adam).
    pub weight_decay: f32,
}

impl AdamHyper {
    /// PyTorch's defaults (β1 = 0.9, β2 = 0.999, ε = 1e-8) at learning rate `lr`, update
    /// number `step`.
    pub fn defaults(lr: f32, step: u32) -> Self {
        Self {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            step,
            weight_decay: 0.0,
        }
    }

    /// `1 − lr · weight_decay`, in f32 as both devices use it (1 for Adam).
    pub fn shrink(&self) -> f32 {
        1.0 - self.lr * self.weight_decay
    }

    /// `(1 − β1^t, 1 − β2^t)`, in f32 as both devices use them.
    pub fn bias_corrections(&self) -> (f32, f32) {
        let t = self.step as i32;
        (1.0 - self.beta1.powi(t), 1.0 - self.beta2.powi(t))
    }
}

/// Kernel times of the last timed step, from GPU timestamp queries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTimes {
    /// `(kernel label, duration_ns)` in submission order.
    pub kernels: Vec<(String, u64)>,
    /// Sum of the kernel durations.
    pub total_ns: u64,
}

/// How [`DeviceMemory::write`](super::DeviceMemory::write) moves values to a GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UploadMode {
    /// `queue.write_buffer`: wgpu copies the values into a staging buffer of its own, then into
    /// the tensor when the work is submitted.
    #[default]
    WriteBuffer,
    /// A ring of buffers the host keeps mapped (the analogue of CUDA's pinned memory): values are
    /// copied straight into one, and a copy command moves them into the tensor.
    StagingRing,
}

/// The geometry of a 2-D convolution over channels-last images (each row of a batch holds
/// `height · width · channels_in` values, a pixel's channels side by side): stride 1, zero
/// padding of `kernel / 2` on every side, so the output has the input's height and width.
///
/// Channels last, because then a convolution is a dense layer over image patches: the patch
/// matrix (`im2col`'s) has one row of `kernel² · channels_in` values per output pixel, and its
/// product with weights `[kernel² · channels_in, channels_out]` is `[batch · pixels,
/// channels_out]`, the output image, channels last, with nothing to permute. (Neither device
/// makes that matrix: the GPU's products read it from the images, the CPU's kernels never form
/// it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ConvShape {
    /// Image height in pixels.
    pub height: usize,
    /// Image width in pixels.
    pub width: usize,
    /// Channels of the input image.
    pub channels_in: usize,
    /// Filters, the channels of the output.
    pub channels_out: usize,
    /// Side of the square kernel: odd (3 or 5).
    pub kernel: usize,
}

impl ConvShape {
    /// Zero padding on each side.
    pub fn pad(&self) -> usize {
        self.kernel / 2
    }

    /// Pixels of one image.
    pub fn pixels(&self) -> usize {
        self.height * self.width
    }

    /// Values of one patch: a row of `im2col`, a row of the weights.
    pub fn patch(&self) -> usize {
        self.kernel * self.kernel * self.channels_in
    }

    /// Values of one input image.
    pub fn image_in(&self) -> usize {
        self.pixels() * self.channels_in
    }

    /// Values of one output image.
    pub fn image_out(&self) -> usize {
        self.pixels() * self.channels_out
    }
}

/// The geometry of a 2×2 max pooling with stride 2 over channels-last images. An odd last row
/// or column is left out, as `torch.nn.MaxPool2d(2)` leaves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PoolShape {
    /// Input height in pixels.
    pub height: usize,
    /// Input width in pixels.
    pub width: usize,
    /// Channels, the same in and out.
    pub channels: usize,
}

impl PoolShape {
    /// Output height.
    pub fn out_height(&self) -> usize {
        self.height / 2
    }

    /// Output width.
    pub fn out_width(&self) -> usize {
        self.width / 2
    }

    /// Values of one input image.
    pub fn image_in(&self) -> usize {
        self.height * self.width * self.channels
    }

    /// Values of one output image.
    pub fn image_out(&self) -> usize {
        self.out_height() * self.out_width() * self.channels
    }
}

#[cfg(test)]
mod fast_tanh_tests {
    use super::fast_tanh;

    /// Within 4e-7 of f64's tanh over the whole range (6 ulps of 1), odd, and as near ±1 far out.
    #[test]
    fn fast_tanh_follows_tanh() {
        let mut worst = 0.0f64;
        for k in -200_000..=200_000 {
            let x = k as f32 * 1e-4;
            let err = (f64::from(fast_tanh(x)) - f64::from(x).tanh()).abs();
            worst = worst.max(err);
            assert_eq!(fast_tanh(-x), -fast_tanh(x));
        }
        assert!(worst < 4e-7, "worst error {worst:e}");
        assert!((1.0 - fast_tanh(30.0)) < 4e-7 && fast_tanh(-30.0) == -fast_tanh(30.0));
    }
}
