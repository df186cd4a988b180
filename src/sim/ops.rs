//! The ops of one training step (and of one inference request) as the cost model counts them,
//! made by looping over the model's built layers: a layer with a product gives its forward
//! product, its weight gradient and (but for the first) its input gradient; a layer that
//! multiplies no matrix gives the element-wise work its module describes
//! ([`PlainCost`](crate::nn::PlainCost)); every layer with parameters gives its updates. No
//! kind of layer is named here.

use serde::Serialize;

use super::efficiency::Product;
use crate::device::Device;
use crate::i18n::LayerKey;
use crate::nn::{Footprint, ModelSpec, OptimizerKind, PlainCost, PlainWork};
use crate::precision::Precision;

/// The name of the step's loss op (forward and gradient in one kernel).
pub const LOSS_OP: &str = "loss and its gradient";

/// What kind of work an op is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A matrix product (with its fused bias and activation).
    MatMul,
    /// Element-wise work: the loss and its gradient, pooling, a normalisation, an activation of
    /// its own.
    Elementwise,
    /// The optimizer's update of one parameter tensor (element-wise, but each rule has its own
    /// arithmetic, so a fitted profile gives each its own curve).
    Update,
    /// A copy over the host link.
    Copy,
}

/// An op of a layer that multiplies no matrix: what the layer is, in each language, and which
/// pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plain {
    /// What the layer is.
    pub what: LayerKey,
    /// Its backward pass rather than its forward one.
    pub gradient: bool,
}

/// One op of a training step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Op {
    /// Its name, as the step's spans call it.
    pub name: String,
    /// What kind of work it is.
    pub kind: OpKind,
    /// Floating-point operations (a multiply-add counts two).
    pub flops: f64,
    /// Bytes read and written in the device's memory (or over the link, for a copy).
    pub bytes: f64,
    /// A matrix product's shape `[m, n, k]`: an `m × k` matrix times a `k × n` one. A product
    /// with a short inner dimension `k`, or a thin output, reaches a smaller share of the peak
    /// than a square one of the same FLOPs (see [`ProductFit`](super::efficiency::ProductFit)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dims: Option<[f64; 3]>,
    /// Which of a layer's products it is, for a matrix product: each is its own kernel, and a
    /// fitted profile may give each its own efficiency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub product: Option<Product>,
    /// The update rule, for an [`OpKind::Update`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<OptimizerKind>,
    /// The layer it belongs to, from 1, where it belongs to one (for names in each language):
    /// layers with products are numbered in order, and a layer without one belongs to the
    /// product before it (the first, before any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<usize>,
    /// For an update: which of the layer's parameters it updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updates: Option<Updated>,
    /// Whether it belongs to a convolution block (its product is a convolution's).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub conv: bool,
    /// For the ops of a layer that multiplies no matrix: what it is.
    #[serde(skip)]
    pub plain: Option<Plain>,
    /// A forward op run again in the backward pass (activation checkpointing).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recomputed: bool,
}

/// Which of a layer's parameters an update op updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Updated {
    Weights,
    Biases,
    /// Both, in one kernel (the GPU's, see `ComputeOps::update_layer`).
    Both,
}

impl Updated {
    /// What the cost model's op names call it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Weights => "weights",
            Self::Biases => "biases",
            Self::Both => "weights and biases",
        }
    }
}

impl Op {
    /// FLOPs per byte moved.
    pub fn intensity(&self) -> f64 {
        self.flops / self.bytes.max(1.0)
    }

    /// An op of no layer and no product.
    fn bare(name: impl Into<String>, kind: OpKind, flops: f64, bytes: f64) -> Self {
        Self {
            name: name.into(),
            kind,
            flops,
            bytes,
            dims: None,
            product: None,
            optimizer: None,
            layer: None,
            updates: None,
            conv: false,
            plain: None,
            recomputed: false,
        }
    }
}

/// Bytes a stored activation or gradient value takes, and a parameter.
fn value_bytes(precision: Precision) -> (f64, f64) {
    match precision {
        Precision::Fp32 => (4.0, 4.0),
        Precision::Fp16 | Precision::Bf16 => (2.0, 2.0),
        // FP16 activations and weight copies; FP32 masters and gradients.
        Precision::Mixed => (2.0, 4.0),
    }
}

/// A layer's product in a step: `m` rows (the batch, or every pixel of the batch for a
/// convolution, each with its patch), `k` inputs per row, `n` outputs, and the values of its
/// inputs it reads (or writes the gradient of): every row's, or a convolution's images (both
/// devices read the patches from them; each value is counted once, as if caches held the `K²`
/// reads of it).
struct Matmul {
    m: f64,
    k: f64,
    n: f64,
    read: f64,
}

/// One built layer's work in a step on `b` samples.
struct LayerWork {
    /// The layer it belongs to in the ops' names (see [`Op::layer`]).
    number: usize,
    /// Whether it belongs to a convolution block.
    conv: bool,
    product: Option<Matmul>,
    plain: Option<PlainCost>,
    /// Values of its weight (or scale) and of its bias (or shift).
    params: Option<(f64, f64)>,
    /// Whether the layer before ran an activation in its epilogue, whose derivative this
    /// layer's input gradient applies.
    after_epilogue: bool,
}

impl LayerWork {
    fn of(footprints: &[Footprint], b: f64) -> Vec<Self> {
        let mut products = 0;
        let mut conv = false;
        let mut after_epilogue = false;
        footprints
            .iter()
            .map(|f| {
                let product = f.param_shapes.filter(|_| f.macs > 0).map(|[(k, n), _]| {
                    let rows = (f.macs / (k * n).max(1)) as f64;
                    let (m, k, n) = (b * rows, k as f64, n as f64);
                    let read = f.convolution.map_or(m * k, |c| b * c.image_in() as f64);
                    Matmul { m, k, n, read }
                });
                if product.is_some() {
                    products += 1;
                    conv = f.convolution.is_some();
                }
                let work = Self {
                    number: products.max(1),
                    conv,
                    product,
                    plain: f.plain,
                    params: f
                        .param_shapes
                        .map(|[(r, c), (br, bc)]| ((r * c) as f64, (br * bc) as f64)),
                    after_epilogue,
                };
                after_epilogue = f.epilogue != crate::backend::Activation::Identity;
                work
            })
            .collect()
    }
}

/// The ops of one training step of `spec` on `batch` rows: the batch's upload, each layer's
/// forward work (a product, or the element-wise work of pooling, a normalisation or an
/// activation of its own), the loss, each layer's backward work from the last (a product's
/// weight gradient and, but for the first layer, its input gradient), and the optimizer's
/// update of every parameter tensor. No device makes patch matrices: a convolution's products
/// read the images, or write their gradient.
pub fn step_ops(spec: &ModelSpec, batch: usize, recipe: Recipe, device: Device) -> Vec<Op> {
    let precision = recipe.precision;
    let b = batch as f64;
    let (act, _) = value_bytes(precision);
    let (inputs, outputs) = (spec.inputs() as f64, spec.outputs() as f64);
    // Inputs as f32, one target per row (a class or each output).
    let upload = 4.0 * b * (inputs + outputs);
    let mut ops = vec![Op::bare("upload batch", OpKind::Copy, 0.0, upload)];
    let layers = LayerWork::of(&spec.footprints(), b);
    forward_ops(&layers, b, precision, &mut ops);
    // Softmax and cross-entropy (or squared error) per output: about five operations.
    let loss_bytes = act * 2.0 * b * outputs + 4.0 * b;
    ops.push(Op::bare(
        LOSS_OP,
        OpKind::Elementwise,
        5.0 * b * outputs,
        loss_bytes,
    ));
    backward_ops(&layers, b, precision, &mut ops);
    update_ops(&layers, recipe, device, &mut ops);
    ops
}

/// The name of the op that joins the micro-batches' gradients.
pub const GRADIENT_SUMS_OP: &str = "gradient sums";

/// [`step_ops`] of one update over `levers.micro_batches` micro-batches of `batch` rows: each
/// micro-batch's upload, passes and loss, then the joining of their gradients (the first copied
/// into the sums, the others added: one read and one write of every gradient, and a read of
/// the sum for each add), then one update.
pub fn step_ops_with(
    spec: &ModelSpec,
    batch: usize,
    recipe: Recipe,
    device: Device,
    levers: super::estimate::Levers,
) -> Vec<Op> {
    let mut ops = step_ops(spec, batch, recipe, device);
    if levers.checkpoint > 0 {
        // The segments' forward passes again, before the backward ops (each in fact just
        // before its own segment's; the order does not change the step's sum).
        let at = ops
            .iter()
            .position(|o| o.name == LOSS_OP)
            .map_or(ops.len(), |i| i + 1);
        let again = recompute_ops(spec, batch, recipe.precision, levers.checkpoint);
        ops.splice(at..at, again);
    }
    let n = f64::from(levers.micro_batches.max(1));
    if n <= 1.0 {
        return ops;
    }
    let (update, passes): (Vec<Op>, Vec<Op>) =
        ops.into_iter().partition(|op| op.kind == OpKind::Update);
    let mut all = Vec::with_capacity(passes.len() * levers.micro_batches as usize + update.len());
    for _ in 0..levers.micro_batches {
        all.extend(passes.iter().cloned());
    }
    let p = spec.parameter_count() as f64;
    let g = if matches!(recipe.precision, Precision::Fp16 | Precision::Bf16) {
        2.0
    } else {
        4.0
    };
    all.push(Op::bare(
        GRADIENT_SUMS_OP,
        OpKind::Elementwise,
        (n - 1.0) * p,
        2.0 * g * p + (n - 1.0) * 3.0 * g * p,
    ));
    all.extend(update);
    all
}

/// The forward ops a checkpointed step runs again: each recomputed segment's layers, marked.
fn recompute_ops(spec: &ModelSpec, batch: usize, precision: Precision, blocks: u32) -> Vec<Op> {
    let layers = LayerWork::of(&spec.footprints(), batch as f64);
    let mut ops = Vec::new();
    for range in crate::nn::recomputed_layers(spec, batch, blocks) {
        let Some(segment) = layers.get(range) else {
            continue;
        };
        forward_ops(segment, batch as f64, precision, &mut ops);
    }
    for op in &mut ops {
        op.recomputed = true;
        op.name.push_str(" (recomputed)");
    }
    ops
}

/// How a step trains: its update rule and its number format.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recipe {
    /// The update rule.
    pub optimizer: OptimizerKind,
    /// The number format of the passes and the parameters.
    pub precision: Precision,
}

impl Recipe {
    /// `optimizer` in FP32.
    pub fn fp32(optimizer: OptimizerKind) -> Self {
        Self {
            optimizer,
            precision: Precision::Fp32,
        }
    }
}

/// An op's arithmetic and memory traffic.
#[derive(Clone, Copy)]
struct Work {
    flops: f64,
    bytes: f64,
}

/// A product of `layer`: `dims` as `[m, n, k]` of its kernel, `work` its FLOPs and bytes.
fn product_op(layer: &LayerWork, name: &str, product: Product, dims: [f64; 3], work: Work) -> Op {
    Op {
        dims: Some(dims),
        product: Some(product),
        layer: Some(layer.number),
        conv: layer.conv,
        ..Op::bare(
            format!("layer {} {name}", layer.number),
            OpKind::MatMul,
            work.flops,
            work.bytes,
        )
    }
}

/// A pass of a layer that multiplies no matrix, on `b` samples.
fn plain_op(layer: &LayerWork, cost: &PlainCost, gradient: bool, b: f64, p: Precision) -> Op {
    let (act, par) = value_bytes(p);
    let PlainWork {
        flops,
        values,
        params,
    } = if gradient {
        cost.backward
    } else {
        cost.forward
    };
    let suffix = if gradient { " gradient" } else { "" };
    Op {
        layer: Some(layer.number),
        conv: layer.conv,
        plain: Some(Plain {
            what: cost.what,
            gradient,
        }),
        ..Op::bare(
            format!("layer {} {}{suffix}", layer.number, cost.name),
            OpKind::Elementwise,
            b * flops as f64,
            act * b * values as f64 + par * params as f64,
        )
    }
}

/// Each layer's forward work: its product with its bias and activation, or its element-wise
/// pass.
fn forward_ops(layers: &[LayerWork], b: f64, precision: Precision, ops: &mut Vec<Op>) {
    let (act, par) = value_bytes(precision);
    for w in layers {
        if let Some(Matmul { m, k, n, read }) = w.product {
            // The product, then the bias and the activation on each output.
            let work = Work {
                flops: 2.0 * m * k * n + 2.0 * m * n,
                bytes: act * (read + m * n) + par * (k * n + n),
            };
            ops.push(product_op(w, "forward", Product::Forward, [m, n, k], work));
        }
        if let Some(cost) = &w.plain {
            ops.push(plain_op(w, cost, false, b, precision));
        }
    }
}

/// The layers from the last: an element-wise layer's gradient, or a product's weight gradient
/// and (but for the first layer, which reads the batch) its input gradient.
fn backward_ops(layers: &[LayerWork], b: f64, precision: Precision, ops: &mut Vec<Op>) {
    let (act, par) = value_bytes(precision);
    for (l, w) in layers.iter().enumerate().rev() {
        if let Some(cost) = &w.plain {
            ops.push(plain_op(w, cost, true, b, precision));
        }
        let Some(Matmul { m, k, n, read }) = w.product else {
            continue;
        };
        let work = Work {
            flops: 2.0 * m * k * n + m * n,
            bytes: act * (read + m * n) + par * (k * n + n),
        };
        let product = Product::WeightGradient;
        ops.push(product_op(w, "weight gradient", product, [k, n, m], work));
        if l == 0 {
            continue;
        }
        // The product, then the previous layer's epilogue derivative on each input, where it
        // ran one (a layer of its own applies its derivative in its own gradient).
        let derivative = if w.after_epilogue { m * k } else { 0.0 };
        let work = Work {
            flops: 2.0 * m * k * n + derivative,
            bytes: act * (m * n + 2.0 * read) + par * k * n,
        };
        let product = Product::InputGradient;
        ops.push(product_op(w, "input gradient", product, [m, k, n], work));
    }
}

/// Each layer's weights, then its biases: the order the model updates them in. The GPU updates
/// both in one dispatch where they are stored in f32 (`ComputeOps::update_layer`).
fn update_ops(layers: &[LayerWork], recipe: Recipe, device: Device, ops: &mut Vec<Op>) {
    let Recipe {
        optimizer,
        precision,
    } = recipe;
    let (flops_per, touches) = update_work(optimizer);
    // Optimizer state and master values are FP32 except in pure 16-bit formats.
    let f32_params = !matches!(precision, Precision::Fp16 | Precision::Bf16);
    let state = if f32_params { 4.0 } else { 2.0 };
    let paired = device == Device::Gpu && f32_params;
    for w in layers {
        let Some((weights, biases)) = w.params else {
            continue;
        };
        let parts: &[(Updated, f64)] = if paired {
            &[(Updated::Both, weights + biases)]
        } else {
            &[(Updated::Weights, weights), (Updated::Biases, biases)]
        };
        // An element-wise layer's parameters (a `LayerNorm`'s) are named by its kind.
        let of = w.plain.map_or(String::new(), |c| format!(" {}", c.name));
        for &(what, n) in parts {
            ops.push(Op {
                optimizer: Some(optimizer),
                layer: Some(w.number),
                updates: Some(what),
                plain: w.plain.map(|c| Plain {
                    what: c.what,
                    gradient: false,
                }),
                ..Op::bare(
                    format!("layer {}{of} update {}", w.number, what.as_str()),
                    OpKind::Update,
                    flops_per * n,
                    touches * state * n,
                )
            });
        }
    }
}

/// One request of `rows` rows answered by a trained model: the rows copied in and the forward
/// pass (its products and element-wise layers); the cost model adds reading the answer back.
pub fn request_ops(spec: &ModelSpec, rows: usize, precision: Precision, device: Device) -> Vec<Op> {
    step_ops(
        spec,
        rows,
        Recipe {
            optimizer: OptimizerKind::Sgd,
            precision,
        },
        device,
    )
    .into_iter()
    .filter(|op| {
        op.kind == OpKind::Copy
            || op.product == Some(Product::Forward)
            || op.plain.is_some_and(|p| !p.gradient) && op.kind == OpKind::Elementwise
    })
    .collect()
}

/// FLOPs and values read or written per parameter by `rule`'s update: SGD reads the value and
/// the gradient and writes the value; momentum adds one state tensor read and written; Adam two.
pub fn update_work(rule: OptimizerKind) -> (f64, f64) {
    match rule {
        OptimizerKind::Sgd => (2.0, 3.0),
        OptimizerKind::Momentum => (4.0, 5.0),
        OptimizerKind::Adam => (12.0, 7.0),
        // Adam's, and the value's shrink by 1 − lr · decay.
        OptimizerKind::AdamW => (13.0, 7.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Activation;
    use crate::data::ImageShape;
    use crate::nn::{ConvStack, LayerSpec, Loss, Shape};

    fn names(ops: &[Op]) -> Vec<&str> {
        ops.iter().map(|op| op.name.as_str()).collect()
    }

    /// Four micro-batches of 16 do the products of one batch of 64, add one op joining their
    /// gradients, and update once.
    #[test]
    fn an_accumulated_update_repeats_the_passes_and_updates_once() {
        use crate::sim::estimate::Levers;
        let spec = ModelSpec::mlp(vec![5, 32, 3], Activation::Tanh, Loss::SoftmaxCrossEntropy);
        let recipe = Recipe::fp32(OptimizerKind::Adam);
        let levers = Levers {
            micro_batches: 4,
            ..Levers::NONE
        };
        let parts = step_ops_with(&spec, 16, recipe, Device::Gpu, levers);
        let whole = step_ops(&spec, 64, recipe, Device::Gpu);
        let flops = |ops: &[Op], kind| {
            ops.iter()
                .filter(|o| o.kind == kind)
                .map(|o| o.flops)
                .sum::<f64>()
        };
        let (a, b) = (flops(&parts, OpKind::MatMul), flops(&whole, OpKind::MatMul));
        assert!((a - b).abs() <= 1e-9 * b, "{a} against {b}");
        let updates = |ops: &[Op]| ops.iter().filter(|o| o.kind == OpKind::Update).count();
        assert_eq!(updates(&parts), updates(&whole));
        let sums: Vec<&Op> = parts
            .iter()
            .filter(|o| o.name == GRADIENT_SUMS_OP)
            .collect();
        assert_eq!(sums.len(), 1);
        // Three adds of every one of the 5·32+32 + 32·3+3 parameters.
        assert_eq!(sums[0].flops, 3.0 * 291.0);
        assert_eq!(
            step_ops_with(&spec, 16, recipe, Device::Gpu, Levers::NONE),
            step_ops(&spec, 16, recipe, Device::Gpu)
        );
    }

    /// Checkpointed, a step runs the forward ops of each recomputed segment again, marked, and
    /// nothing else more: an MLP of four hidden layers in segments of two recomputes the second
    /// layer's product (the segment's last layer keeps nothing but its output).
    #[test]
    fn a_checkpointed_step_runs_the_recomputed_forward_ops_again() {
        use crate::sim::estimate::Levers;
        let spec = ModelSpec::mlp(
            vec![5, 16, 16, 16, 16, 3],
            Activation::Tanh,
            Loss::SoftmaxCrossEntropy,
        );
        let recipe = Recipe::fp32(OptimizerKind::Adam);
        let levers = Levers {
            checkpoint: 1,
            ..Levers::NONE
        };
        let plain = step_ops(&spec, 8, recipe, Device::Cpu);
        let checked = step_ops_with(&spec, 8, recipe, Device::Cpu, levers);
        let again: Vec<&Op> = checked.iter().filter(|o| o.recomputed).collect();
        assert_eq!(names(&checked).len(), plain.len() + again.len());
        assert_eq!(
            again.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
            ["layer 2 forward (recomputed)"]
        );
        let first = plain
            .iter()
            .find(|o| o.name == "layer 2 forward")
            .expect("op");
        assert_eq!((again[0].flops, again[0].bytes), (first.flops, first.bytes));
    }

    /// A CNN and an MLP given by their shorthands and by the same list of layers make the same
    /// ops, figure for figure: the op list reads the layers, not the shorthand.
    #[test]
    fn a_list_of_layers_gives_the_ops_of_its_shorthand() {
        let conv = ConvStack {
            image: ImageShape {
                width: 12,
                height: 12,
                channels: 3,
            },
            channels: vec![4, 8],
            kernel: 3,
        };
        let loss = Loss::SoftmaxCrossEntropy;
        let cnn = ModelSpec::cnn(conv, &[16, 10], Activation::Relu, loss);
        let mlp = ModelSpec::mlp(vec![5, 32, 32, 3], Activation::Tanh, loss);
        for shorthand in [cnn, mlp] {
            let list = ModelSpec::of_list(shorthand.input_shape(), shorthand.layer_specs(), loss);
            for (device, precision) in [
                (Device::Gpu, Precision::Fp32),
                (Device::Cpu, Precision::Mixed),
            ] {
                let recipe = Recipe {
                    optimizer: OptimizerKind::Adam,
                    precision,
                };
                let ops = step_ops(&shorthand, 8, recipe, device);
                assert_eq!(step_ops(&list, 8, recipe, device), ops);
                assert!(
                    ops.iter()
                        .any(|op| op.product == Some(Product::InputGradient))
                );
            }
        }
    }

    /// `LayerNorm` and GELU, which multiply no matrix, each give a forward op and a gradient op
    /// with the work their modules count, belong to the dense layer before them, and
    /// `LayerNorm`'s scale and shift are updated after that layer's weights.
    #[test]
    fn layers_without_a_product_give_their_passes_and_their_updates() {
        let d = 6;
        let list = vec![
            LayerSpec::Dense { units: d },
            LayerSpec::LayerNorm,
            LayerSpec::Activation {
                function: Activation::Gelu,
            },
            LayerSpec::Dense { units: 2 },
        ];
        let spec = ModelSpec::of_list(Shape::Flat(3), list, Loss::SoftmaxCrossEntropy);
        let batch = 4;
        let ops = step_ops(&spec, batch, Recipe::fp32(OptimizerKind::Sgd), Device::Cpu);
        assert_eq!(
            names(&ops),
            [
                "upload batch",
                "layer 1 forward",
                "layer 1 layer norm",
                "layer 1 gelu",
                "layer 2 forward",
                LOSS_OP,
                "layer 2 weight gradient",
                "layer 2 input gradient",
                "layer 1 gelu gradient",
                "layer 1 layer norm gradient",
                "layer 1 weight gradient",
                "layer 1 update weights",
                "layer 1 update biases",
                "layer 1 layer norm update weights",
                "layer 1 layer norm update biases",
                "layer 2 update weights",
                "layer 2 update biases",
            ]
        );
        let op = |name: &str| ops.iter().find(|op| op.name == name).expect(name);
        let b = batch as f64;
        // LayerNorm: 8 operations a feature forward; reads and writes the rows and their two
        // statistics, reads γ and β.
        let norm = op("layer 1 layer norm");
        assert_eq!(norm.flops, b * 8.0 * d as f64);
        assert_eq!(
            norm.bytes,
            4.0 * (b * (2.0 * d as f64 + 2.0) + 2.0 * d as f64)
        );
        // GELU's gradient reads its input and the gradient, writes the input's gradient.
        let gelu = op("layer 1 gelu gradient");
        assert_eq!(gelu.bytes, 4.0 * b * 3.0 * d as f64);
        assert_eq!(gelu.plain.map(|p| p.gradient), Some(true));
        // The second dense layer reads GELU's output, a layer of its own: no derivative to
        // apply in its input gradient (2·m·k·n only).
        let input_gradient = op("layer 2 input gradient");
        assert_eq!(input_gradient.flops, 2.0 * b * d as f64 * 2.0);
        let update = op("layer 1 layer norm update weights");
        assert_eq!(update.flops, 2.0 * d as f64);
        // An inference request runs the forward ops only.
        let request = request_ops(&spec, 1, Precision::Fp32, Device::Cpu);
        assert_eq!(
            names(&request),
            [
                "upload batch",
                "layer 1 forward",
                "layer 1 layer norm",
                "layer 1 gelu",
                "layer 2 forward"
            ]
        );
    }
}
