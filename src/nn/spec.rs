//! What a network is, before it is built: its layers, activation and loss ([`ModelSpec`]), and
//! the update rule it trains with ([`OptimizerKind`]).

use serde::{Deserialize, Serialize};

use super::layers::{Footprint, LayerSpec, Shape, footprints};
use crate::backend::{Activation, ConvShape, PoolShape};
use crate::data::{ImageShape, Task};

/// What the output layer's values are compared with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// Softmax over the outputs, then cross-entropy against a class index (classification).
    #[default]
    SoftmaxCrossEntropy,
    /// Mean squared error against target values (regression).
    MeanSquaredError,
}

impl Loss {
    /// The loss a task trains with.
    pub fn for_task(task: Task) -> Self {
        match task {
            Task::Classification => Loss::SoftmaxCrossEntropy,
            Task::Regression => Loss::MeanSquaredError,
        }
    }
}

/// The convolutional blocks before a CNN's dense layers: each a `kernel × kernel` convolution
/// (stride 1, zero padding that keeps the size, bias, the model's activation) followed by 2×2
/// max pooling, over channels-last images.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvStack {
    /// The input images.
    pub image: ImageShape,
    /// Filters of each block, e.g. `[8, 16]`.
    pub channels: Vec<usize>,
    /// Side of every block's kernel: 3 or 5.
    pub kernel: usize,
}

/// Most rows per forward-only evaluation pass (training and test sets, decision-boundary grid):
/// larger sets are evaluated in passes of this many rows.
pub const EVAL_ROWS: usize = 1024;

/// Values of one sample's evaluation buffers a CNN may hold at once: one evaluation pass takes
/// as many rows as fit (its convolutions' outputs are an image each per filter).
const EVAL_VALUES: usize = 8 << 20;

impl ConvStack {
    /// Each block's convolution and pooling geometry, first block first.
    pub fn blocks(&self) -> Vec<(ConvShape, PoolShape)> {
        let (mut height, mut width, mut channels) =
            (self.image.height, self.image.width, self.image.channels);
        self.channels
            .iter()
            .map(|&out| {
                let conv = ConvShape {
                    height,
                    width,
                    channels_in: channels,
                    channels_out: out,
                    kernel: self.kernel,
                };
                let pool = PoolShape {
                    height,
                    width,
                    channels: out,
                };
                (height, width, channels) = (height / 2, width / 2, out);
                (conv, pool)
            })
            .collect()
    }

    /// Values per sample after the last pooling: the dense head's input width.
    pub fn flattened(&self) -> usize {
        self.blocks()
            .last()
            .map_or(self.image.len(), |(_, pool)| pool.image_out())
    }
}

/// Layer widths (input first, outputs last), the hidden activation and the loss; for a CNN, the
/// convolution blocks before the dense layers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// The dense layers' widths `[inputs, hidden..., outputs]`, e.g. `[2, 16, 16, 3]`; after
    /// convolution blocks the first is the flattened output of the last pooling.
    pub layers: Vec<usize>,
    /// Applied after every hidden layer; the output layer is linear (softmax is in the loss).
    pub activation: Activation,
    /// What the outputs are trained against.
    #[serde(default)]
    pub loss: Loss,
    /// Convolution blocks before the dense layers (a CNN), or none (an MLP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conv: Option<ConvStack>,
    /// The model as a list of layers, where it is not the shape above (`LayerNorm`, GELU):
    /// then `layers` holds only its input and output widths. The estimator reads the list; the
    /// simulator's op list does not yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<LayerList>,
}

/// A model given as a list of layers over its input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerList {
    /// One sample as the first layer reads it.
    pub input: Shape,
    /// The layers, first first.
    pub layers: Vec<LayerSpec>,
}

impl ModelSpec {
    /// A multi-layer perceptron.
    pub fn mlp(layers: Vec<usize>, activation: Activation, loss: Loss) -> Self {
        Self {
            layers,
            activation,
            loss,
            conv: None,
            list: None,
        }
    }

    /// A model given as a list of layers over `input`, the hidden activation (for the
    /// initialisation) the first the list names, or why the list does not fit.
    pub fn from_layers(
        input: Shape,
        list: Vec<LayerSpec>,
        loss: Loss,
    ) -> Result<Self, super::layers::ShapeError> {
        LayerSpec::shapes(&list, input)?;
        Ok(Self::of_list(input, list, loss))
    }

    /// A model given as a list of layers over `input`, whether or not the list fits it (the
    /// settings check refuses one that does not before it is built): its outputs are the last
    /// layer's (a dense layer's units where the list breaks before it).
    pub fn of_list(input: Shape, list: Vec<LayerSpec>, loss: Loss) -> Self {
        let inputs = input.values();
        let outputs = match LayerSpec::shapes(&list, input) {
            Ok(shapes) => shapes.last().map_or(inputs, |s| s.values()),
            Err(_) => match list.last() {
                Some(LayerSpec::Dense { units }) => *units,
                _ => inputs,
            },
        };
        let activation = list
            .iter()
            .find_map(|l| match l {
                LayerSpec::Activation { function } => Some(*function),
                _ => None,
            })
            .unwrap_or(Activation::Identity);
        Self {
            layers: vec![inputs, outputs],
            activation,
            loss,
            conv: None,
            list: Some(LayerList {
                input,
                layers: list,
            }),
        }
    }

    /// A CNN: `conv`'s blocks, then dense layers of the widths `dense` (hidden widths and the
    /// outputs) after the flattened last pooling.
    pub fn cnn(conv: ConvStack, dense: &[usize], activation: Activation, loss: Loss) -> Self {
        let mut layers = vec![conv.flattened()];
        layers.extend_from_slice(dense);
        Self {
            layers,
            activation,
            loss,
            conv: Some(conv),
            list: None,
        }
    }

    /// The model as a list of layers: each convolution block as a convolution, its activation
    /// and 2×2 max pooling, then a flattening; each dense layer, with the activation after
    /// every hidden one (the output layer is linear: softmax is in the loss).
    pub fn layer_specs(&self) -> Vec<LayerSpec> {
        if let Some(list) = &self.list {
            return list.layers.clone();
        }
        let act = LayerSpec::Activation {
            function: self.activation,
        };
        let mut specs = Vec::new();
        if let Some(conv) = &self.conv {
            for &filters in &conv.channels {
                let kernel = conv.kernel;
                specs.extend([
                    LayerSpec::Conv2d { filters, kernel },
                    act,
                    LayerSpec::MaxPool2d,
                ]);
            }
            specs.push(LayerSpec::Flatten);
        }
        let dense = self.layers.iter().skip(1);
        let hidden = self.layers.len().saturating_sub(2);
        for (i, &units) in dense.enumerate() {
            specs.push(LayerSpec::Dense { units });
            if i < hidden {
                specs.push(act);
            }
        }
        specs
    }

    /// What one sample is as the first layer reads it: an image for a CNN, a row otherwise.
    pub fn input_shape(&self) -> Shape {
        match (&self.list, &self.conv) {
            (Some(list), _) => list.input,
            (None, Some(c)) => Shape::Image(c.image),
            (None, None) => Shape::Flat(self.inputs()),
        }
    }

    /// Every built layer's footprint (empty for a list that does not fit its input, which the
    /// settings refuse before a model is built).
    pub fn footprints(&self) -> Vec<Footprint> {
        footprints(&self.layer_specs(), self.input_shape()).unwrap_or_default()
    }

    /// The activation of the hidden layers, which the weights' initialisation suits.
    pub fn hidden_activation(&self) -> Activation {
        self.activation
    }

    /// The architecture in a few characters: `784-128-10`, or for a CNN
    /// `28×28×1 conv 8,16 (3×3) → 784-10` (the same in both languages).
    pub fn describe(&self) -> String {
        let widths = |w: &[usize]| w.iter().map(usize::to_string).collect::<Vec<_>>().join("-");
        if self.list.is_some() {
            let kinds: Vec<String> = self
                .footprints()
                .into_iter()
                .map(|f| format!("{} {}", f.kind_label(), f.shape))
                .collect();
            return format!("{} → {}", self.input_shape(), kinds.join(", "));
        }
        match &self.conv {
            None => widths(&self.layers),
            Some(c) => format!(
                "{}×{}×{} conv {} ({k}×{k}) → {}",
                c.image.width,
                c.image.height,
                c.image.channels,
                c.channels
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                widths(&self.layers),
                k = c.kernel
            ),
        }
    }

    /// Values of one input sample (an image's pixels for a CNN).
    pub fn inputs(&self) -> usize {
        match &self.conv {
            Some(c) => c.image.len(),
            None => self.layers.first().copied().unwrap_or(0),
        }
    }

    /// Outputs per sample.
    pub fn outputs(&self) -> usize {
        self.layers.last().copied().unwrap_or(0)
    }

    /// Every layer's weight shape `[k, n]`, convolutions first (a convolution's is
    /// `[K²·C_in, C_out]`); each layer has `n` biases.
    pub fn weight_shapes(&self) -> Vec<(usize, usize)> {
        self.products()
            .into_iter()
            .map(|(_, k, n)| (k, n))
            .collect()
    }

    /// Each layer's matrix product per sample, `(rows, k, n)`, convolutions first: a dense
    /// layer multiplies one row of `k` inputs by `k × n` weights, a convolution every pixel's
    /// patch of `K² · C_in` values by its `[K² · C_in, C_out]` filters.
    pub fn products(&self) -> Vec<(usize, usize, usize)> {
        self.footprints()
            .into_iter()
            .filter(|f| f.macs > 0)
            .filter_map(|f| {
                let [(k, n), _] = f.param_shapes?;
                Some((f.macs / (k * n).max(1), k, n))
            })
            .collect()
    }

    /// Number of trainable values over every layer, saturating (an absurd layer list asked of
    /// the settings check must not overflow).
    pub fn parameter_count(&self) -> usize {
        self.footprints()
            .iter()
            .fold(0, |sum, f| sum.saturating_add(f.params))
    }

    /// Multiply-adds of one forward pass per sample: `Σ in · out` over the dense layers, and
    /// `H · W · K² · C_in · C_out` over the convolutions (saturating).
    pub fn forward_macs_per_sample(&self) -> usize {
        self.footprints()
            .iter()
            .fold(0, |sum, f| sum.saturating_add(f.macs))
    }

    /// The largest weight matrix, in f32 bytes, and its name: `(bytes, "the 784 × 4096
    /// weights")`. A convolution's is `[K²·C_in, C_out]`.
    pub fn largest_weights(&self) -> (u64, String) {
        self.weight_shapes()
            .into_iter()
            .map(|(k, n)| {
                let bytes = (k as u64).saturating_mul(n as u64).saturating_mul(4);
                (bytes, format!("the {k} × {n} weights"))
            })
            .max_by_key(|(bytes, _)| *bytes)
            .unwrap_or_default()
    }

    /// The most f32 bytes one row (sample) puts into a single buffer, and what that buffer is:
    /// the input or a layer's output (a convolution's is an image per filter). A buffer of `r`
    /// rows of it takes `r` times as much.
    pub fn largest_row(&self) -> (u64, String) {
        let input = self.input_shape();
        let outputs = self.footprints().into_iter().map(|f| {
            let what = format!(
                "{}'s output ({}), {} values a row",
                f.name,
                f.kind_label(),
                f.shape
            );
            (f.shape.values(), what)
        });
        std::iter::once((input.values(), format!("the input, {input} values a row")))
            .chain(outputs)
            .map(|(values, what)| ((values as u64).saturating_mul(4), what))
            .max_by_key(|(bytes, _)| *bytes)
            .unwrap_or_default()
    }

    /// Values per sample of every forward-only evaluation buffer: the input, and each layer's
    /// output and what it keeps.
    pub fn eval_values_per_row(&self) -> usize {
        self.footprints().iter().fold(self.inputs(), |sum, f| {
            sum + f.shape.values() + f.saved + f.saved_pass
        })
    }

    /// Rows per evaluation pass when `requested` are asked for: at most [`EVAL_ROWS`], and for
    /// images and sequences at most what keeps the evaluation buffers within 32 MiB of values.
    pub fn eval_rows(&self, requested: usize) -> usize {
        let rows = requested.clamp(1, EVAL_ROWS);
        // A language model reads a row of token ids and keeps a sequence a layer, attention's
        // T² a head among them: bounded as an image's buffers are.
        let tokens = self
            .list
            .as_ref()
            .is_some_and(|l| super::gpt::reads_tokens(&l.layers));
        match self.input_shape() {
            Shape::Flat(_) if !tokens => rows,
            _ => rows
                .min(EVAL_VALUES / self.eval_values_per_row().max(1))
                .max(1),
        }
    }

    /// Parses `2,16,16,3`.
    pub fn parse_layers(text: &str) -> Result<Vec<usize>, String> {
        let layers: Result<Vec<usize>, _> =
            text.split(',').map(|p| p.trim().parse::<usize>()).collect();
        match layers {
            Ok(l) if l.len() >= 2 && l.iter().all(|&w| w > 0) => Ok(l),
            Ok(_) => Err(format!(
                "`{text}`: give at least an input and an output width, all above zero, e.g. 2,16,16,3"
            )),
            Err(e) => Err(format!(
                "`{text}`: {e}; expected widths separated by commas, e.g. 2,16,16,3"
            )),
        }
    }
}

/// Which update rule, with its own hyper-parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// Plain stochastic gradient descent.
    Sgd,
    /// SGD with momentum 0.9.
    Momentum,
    /// Adam with β1 = 0.9, β2 = 0.999, ε = 1e-8.
    Adam,
    /// Adam with decoupled weight decay ([`Self::WEIGHT_DECAY`], PyTorch's `AdamW` default) on
    /// the weight matrices of the layers with a product; biases and `LayerNorm`'s scale and
    /// shift do not decay, as nanoGPT sets it up.
    AdamW,
}

impl OptimizerKind {
    /// All choices, in UI order.
    pub const ALL: [OptimizerKind; 4] = [
        OptimizerKind::Sgd,
        OptimizerKind::Momentum,
        OptimizerKind::Adam,
        OptimizerKind::AdamW,
    ];

    /// Momentum's μ.
    pub const MOMENTUM: f32 = 0.9;

    /// `AdamW`'s weight decay: `torch.optim.AdamW`'s default.
    pub const WEIGHT_DECAY: f32 = 0.01;

    /// Lower-case name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            OptimizerKind::Sgd => "sgd",
            OptimizerKind::Momentum => "momentum",
            OptimizerKind::Adam => "adam",
            OptimizerKind::AdamW => "adamw",
        }
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == name)
    }

    /// Optimizer-state tensors per parameter tensor (0, 1 or 2).
    pub fn state_tensors(self) -> usize {
        match self {
            OptimizerKind::Sgd => 0,
            OptimizerKind::Momentum => 1,
            OptimizerKind::Adam | OptimizerKind::AdamW => 2,
        }
    }
}
