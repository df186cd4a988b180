//! One module a kind of layer. A model is a list of [`LayerSpec`]s; each kind's module says what
//! its output's shape is for an input's (or why it cannot take that input), which parameters it
//! has and how they start, and runs its forward and backward passes through
//! [`ComputeOps`](crate::backend::ComputeOps) on either device. The network
//! ([`Network`](super::Network)) loops over the built layers and never names a kind.
//!
//! **Fusion.** An activation right after a dense layer or a convolution runs in that product's
//! epilogue (its output written once), where the layer after it can apply the activation's
//! derivative in its own backward pass (a dense layer's input gradient, max pooling's) and the
//! derivative can be had from the output (all but GELU). Otherwise the activation is a layer of
//! its own, which keeps its input for backward.

mod activation;
mod attention;
mod conv;
mod dense;
mod embedding;
mod layer;
mod norm;
mod pool;
mod residual;

use serde::{Deserialize, Serialize};

use crate::backend::{Activation, Backend, BackendError, Tensor};
use crate::memory::Role;
use crate::precision::DType;

pub use layer::{Need, PlainCost, PlainWork, Shape};

pub(crate) use layer::{Backward, Layer, ParamInit};

use activation::ActivationLayer;
use attention::Attention;
use conv::Conv;
use dense::Dense;
use embedding::Embedding;
use norm::LayerNorm;
use pool::MaxPool;
use residual::Residual;

/// One layer of a model, before it is built: what model files and presets list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LayerSpec {
    /// A fully connected layer of `units` outputs with a bias, over rows of values.
    Dense { units: usize },
    /// A `kernel × kernel` convolution of `filters` filters with a bias over channels-last
    /// images: stride 1, zero padding that keeps the size.
    Conv2d { filters: usize, kernel: usize },
    /// 2×2 max pooling with stride 2 (an odd last row or column is left out).
    MaxPool2d,
    /// An image's values as one row, channels last: no value changes.
    Flatten,
    /// An element-wise non-linearity.
    Activation { function: Activation },
    /// Layer normalisation over a row's features (each position's, in a sequence), with a
    /// learned scale and shift.
    LayerNorm,
    /// Token ids (a row of them) to a sequence of `width` values a position: a token's row of a
    /// learned table plus its position's learned row. Only ever first.
    Embedding {
        /// Set from the data set where a file or a preset leaves it out.
        #[serde(default)]
        vocab: usize,
        width: usize,
    },
    /// Causal multi-head self-attention over queries, keys and values side by side (a dense
    /// layer of 3 × the width before it).
    Attention { heads: usize },
    /// Adds the output of layer `from` (counted from 0 in this list, before this one, of the
    /// same shape) to its input: a residual connection.
    Residual { from: usize },
}

/// Why a layer cannot take what the layer before it gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    /// The layer's position in the list (0 = the first).
    pub layer: usize,
    /// What it was given.
    pub input: Shape,
    /// What it needs.
    pub needs: Need,
}

impl ShapeError {
    /// What went wrong, in `lang`.
    pub fn text(&self, lang: crate::i18n::Lang) -> String {
        lang.fmt(
            crate::i18n::Key::ModelLayerShape,
            &[
                ("layer", &(self.layer + 1)),
                ("values", &self.input.values()),
                ("shape", &self.input),
                ("needs", &self.needs.text(lang)),
            ],
        )
    }
}

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(crate::i18n::Lang::En))
    }
}

impl LayerSpec {
    /// The output's shape for `input`, or what this layer needs instead.
    pub fn output(&self, input: Shape) -> Result<Shape, Need> {
        match *self {
            LayerSpec::Dense { units } => dense::output(input, units),
            LayerSpec::Conv2d { filters, kernel } => conv::output(input, filters, kernel),
            LayerSpec::MaxPool2d => pool::output(input),
            LayerSpec::Flatten => Ok(Shape::Flat(input.values())),
            LayerSpec::Activation { .. } | LayerSpec::Residual { .. } => Ok(input),
            LayerSpec::LayerNorm => norm::output(input),
            LayerSpec::Embedding { vocab, width } => embedding::output(input, vocab, width),
            LayerSpec::Attention { heads } => attention::output(input, heads),
        }
    }

    /// Every layer's output shape from `input`, first layer first, or the first layer that
    /// cannot take its input.
    pub fn shapes(layers: &[LayerSpec], input: Shape) -> Result<Vec<Shape>, ShapeError> {
        let mut shape = input;
        let mut shapes = Vec::with_capacity(layers.len());
        for (layer, spec) in layers.iter().enumerate() {
            let fail = |needs| ShapeError {
                layer,
                input: shape,
                needs,
            };
            match *spec {
                // Adds an earlier layer's output of its own shape.
                LayerSpec::Residual { from }
                    if shapes.get(from) != Some(&shape) || from >= layer =>
                {
                    return Err(fail(Need::Residual));
                }
                // Token ids are the model's input, not a layer's output.
                LayerSpec::Embedding { .. } if layer > 0 => return Err(fail(Need::Tokens)),
                _ => {}
            }
            shape = spec.output(shape).map_err(fail)?;
            shapes.push(shape);
        }
        Ok(shapes)
    }
}

/// A layer's tensor labels number each kind on its own (`conv0`, `conv1`, `layer0`): the names
/// the memory view and traces have always shown.
#[derive(Default)]
struct Names {
    dense: usize,
    conv: usize,
    norm: usize,
    act: usize,
    embedding: usize,
    attention: usize,
    residual: usize,
}

impl Names {
    fn next(counter: &mut usize, stem: &str) -> String {
        let name = format!("{stem}{counter}");
        *counter += 1;
        name
    }
}

/// The layers of `specs` built over `input`, activations fused where they can be (see the
/// module's notes), flattening left out (it changes no value).
pub(crate) fn build(specs: &[LayerSpec], input: Shape) -> Result<Vec<Box<dyn Layer>>, ShapeError> {
    Ok(build_indexed(specs, input)?
        .into_iter()
        .map(|built| built.layer)
        .collect())
}

/// A built layer with where it stands in the list and what it reads.
pub(crate) struct Built {
    /// Its position in the list of [`LayerSpec`]s (an activation fused into it is the next).
    pub index: usize,
    /// The shape it reads.
    pub input: Shape,
    /// Where it reads a flattened image's values (channels last), that image.
    pub flattened: Option<crate::data::ImageShape>,
    pub layer: Box<dyn Layer>,
}

/// [`build`], each layer with its position in the list and its input's shape.
pub(crate) fn build_indexed(specs: &[LayerSpec], input: Shape) -> Result<Vec<Built>, ShapeError> {
    let shapes = LayerSpec::shapes(specs, input)?;
    let mut names = Names::default();
    let mut layers: Vec<Box<dyn Layer>> = Vec::with_capacity(specs.len());
    let mut built: Vec<(usize, Shape, Option<crate::data::ImageShape>)> =
        Vec::with_capacity(specs.len());
    // The image whose values (channels last) the current rows are, since a flattening.
    let mut flattened = None;
    let mut shape_in = input;
    let mut i = 0;
    while i < specs.len() {
        let spec = specs[i];
        let shape = shapes[i];
        // The activation right after, if this layer's epilogue can take it (and no residual
        // connection reads this layer's output before it).
        let fused = match specs.get(i + 1) {
            Some(LayerSpec::Activation { function })
                if function.fuses()
                    && applies_epilogue(&specs[i + 2..])
                    && !read_by_residual(specs, i) =>
            {
                Some(*function)
            }
            _ => None,
        };
        let epilogue = fused.unwrap_or(Activation::Identity);
        let layer: Option<Box<dyn Layer>> = match spec {
            LayerSpec::Dense { units } => {
                let name = Names::next(&mut names.dense, "layer");
                Some(Box::new(Dense::new(name, shape_in, units, epilogue)))
            }
            LayerSpec::Conv2d { filters, kernel } => {
                let name = Names::next(&mut names.conv, "conv");
                let Shape::Image(image) = shape_in else {
                    return Err(not_an_image(i, shape_in));
                };
                Some(Box::new(Conv::new(name, image, filters, kernel, epilogue)))
            }
            LayerSpec::MaxPool2d => {
                // Named for the convolution it pools, as its tensors always were.
                let name = format!("conv{}", names.conv.saturating_sub(1));
                let Shape::Image(image) = shape_in else {
                    return Err(not_an_image(i, shape_in));
                };
                Some(Box::new(MaxPool::new(name, image)))
            }
            LayerSpec::Flatten => None,
            LayerSpec::Activation { function } => {
                let name = Names::next(&mut names.act, "act");
                // Laid out as the tensor it reads: the batch, or the layer before's output.
                let rows_per_sample = layers.last().map_or(1, |l| l.output(1).0);
                Some(Box::new(ActivationLayer::new(
                    name,
                    shape,
                    rows_per_sample,
                    function,
                )))
            }
            LayerSpec::LayerNorm => {
                let name = Names::next(&mut names.norm, "norm");
                Some(Box::new(LayerNorm::new(name, shape)))
            }
            LayerSpec::Embedding { vocab, width } => {
                let name = Names::next(&mut names.embedding, "embed");
                let len = shape.rows_per_sample();
                Some(Box::new(Embedding::new(name, vocab, len, width)))
            }
            LayerSpec::Attention { heads } => {
                let name = Names::next(&mut names.attention, "attn");
                let (len, width) = (shape.rows_per_sample(), shape.row_width());
                Some(Box::new(Attention::new(name, len, heads, width)))
            }
            LayerSpec::Residual { from } => {
                let name = Names::next(&mut names.residual, "residual");
                // The built layer that writes layer `from`'s output: the last one at or before it
                // (a flattening builds nothing, and `shapes` checked the two shapes agree).
                let Some(source) = built.iter().rposition(|(index, ..)| *index <= from) else {
                    return Err(ShapeError {
                        layer: i,
                        input: shape_in,
                        needs: Need::Residual,
                    });
                };
                Some(Box::new(Residual::new(name, shape, source)))
            }
        };
        if let Some(layer) = layer {
            built.push((i, shape_in, flattened));
            layers.push(layer);
        }
        flattened = match (spec, shape_in) {
            (LayerSpec::Flatten, Shape::Image(image)) => Some(image),
            // Element-wise kinds keep the values' order; products and images make their own.
            (
                LayerSpec::Activation { .. }
                | LayerSpec::LayerNorm
                | LayerSpec::Flatten
                | LayerSpec::Residual { .. },
                _,
            ) => flattened,
            _ => None,
        };
        shape_in = if fused.is_some() {
            shapes[i + 1]
        } else {
            shape
        };
        i += if fused.is_some() { 2 } else { 1 };
    }
    Ok(layers
        .into_iter()
        .zip(built)
        .map(|(layer, (index, input, flattened))| Built {
            index,
            input,
            flattened,
            layer,
        })
        .collect())
}

/// Layer `layer` needs an image and was given `input` (which [`LayerSpec::shapes`] refuses
/// before a layer is built).
fn not_an_image(layer: usize, input: Shape) -> ShapeError {
    ShapeError {
        layer,
        input,
        needs: Need::Image,
    }
}

/// Whether a residual connection in `specs` adds layer `i`'s output.
fn read_by_residual(specs: &[LayerSpec], i: usize) -> bool {
    specs
        .iter()
        .any(|s| matches!(s, LayerSpec::Residual { from } if *from == i))
}

/// Whether the first layer of `rest` that is not a flattening applies its input's epilogue
/// derivative in backward (so the activation before it may be fused). The loss never does.
fn applies_epilogue(rest: &[LayerSpec]) -> bool {
    matches!(
        rest.iter().find(|s| **s != LayerSpec::Flatten),
        Some(LayerSpec::Dense { .. } | LayerSpec::MaxPool2d)
    )
}

/// The tensors of a pass, allocated for `rows` samples: every built layer's output and what it
/// keeps, stored as `pass` says.
///
/// Where `shared(i, j)` says a tensor lives in a checkpointed pass's shared workspace (layer
/// `i`'s output for `j` none, else what it keeps `j`), its slot holds a placeholder instead.
pub(crate) fn alloc_outputs(
    backend: &mut dyn Backend,
    layers: &[Box<dyn Layer>],
    rows: usize,
    dtype: Option<DType>,
    shared: &dyn Fn(usize, Option<usize>) -> bool,
) -> Result<(Vec<Tensor>, Vec<Vec<Tensor>>), BackendError> {
    let mut outputs = Vec::with_capacity(layers.len());
    let mut saved = Vec::with_capacity(layers.len());
    let slot = |backend: &mut dyn Backend,
                role: Role,
                label: &str,
                shape: (usize, usize),
                dtype: Option<DType>,
                shared: bool| {
        if shared {
            Ok(Tensor::placeholder(
                label,
                role,
                shape,
                dtype.unwrap_or_default(),
            ))
        } else {
            alloc(backend, role, label, shape, dtype)
        }
    };
    for (i, layer) in layers.iter().enumerate() {
        let (suffix, _) = layer.suffixes();
        let label = format!("{}.{suffix}", layer.name());
        outputs.push(slot(
            backend,
            Role::Activations,
            &label,
            layer.output(rows),
            dtype,
            shared(i, None),
        )?);
        let mut kept = Vec::new();
        for (j, (role, suffix, shape)) in layer.saved(rows).into_iter().enumerate() {
            let label = format!("{}.{suffix}", layer.name());
            // f32 unless the layer keeps it as the passes store values: a training pass counts it
            // by its role, evaluation as f32 workspace.
            let dtype = dtype.map(|d| {
                if layer.saved_in_pass_format() {
                    d
                } else {
                    DType::F32
                }
            });
            kept.push(slot(
                backend,
                role,
                &label,
                shape,
                dtype,
                shared(i, Some(j)),
            )?);
        }
        saved.push(kept);
    }
    Ok((outputs, saved))
}

/// A pass's tensor: in `dtype` with its role (training), or an f32 workspace (evaluation,
/// `dtype` none).
pub(crate) fn alloc(
    backend: &mut dyn Backend,
    role: Role,
    label: &str,
    shape: (usize, usize),
    dtype: Option<DType>,
) -> Result<Tensor, BackendError> {
    match dtype {
        Some(dtype) => backend.alloc_as(role, label, shape, dtype),
        None => backend.alloc_as(Role::Workspace, &format!("eval {label}"), shape, DType::F32),
    }
}

/// What one built layer holds per sample and in all, for the estimator and the setup's rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Its tensors' label stem (`layer0`, `conv1`).
    pub name: String,
    /// Its position in the list of layers.
    pub index: usize,
    /// The shape it reads.
    pub input: Shape,
    /// `(rows, cols)` of its weight and bias, as BatchScope stores them.
    pub param_shapes: Option<[(usize, usize); 2]>,
    /// Where it reads a flattened image's values (channels last), that image.
    pub flattened: Option<crate::data::ImageShape>,
    /// Its kind, as model files name it (see [`Layer::kind`]).
    pub kind: &'static str,
    /// The activation fused into its epilogue.
    pub epilogue: crate::backend::Activation,
    /// Its output's shape.
    pub shape: Shape,
    /// Trainable values.
    pub params: usize,
    /// Values of its largest parameter tensor.
    pub largest_param: usize,
    /// f32 values a sample it keeps for backward besides its output (`LayerNorm`'s statistics).
    pub saved: usize,
    /// Values a sample it keeps for backward in the passes' format (attention's probabilities).
    pub saved_pass: usize,
    /// Whether its backward pass writes its input's gradient even for the batch.
    pub input_gradient: bool,
    /// A convolution's geometry (which no device unrolls into patches).
    pub convolution: Option<crate::backend::ConvShape>,
    /// Multiply-adds of its product a sample.
    pub macs: usize,
    /// What it does in a step if it multiplies no matrix, for the cost model.
    pub plain: Option<PlainCost>,
}

impl Footprint {
    /// Its kind with the activation fused into it, as a summary shows it: `dense + relu`.
    pub fn kind_label(&self) -> String {
        match self.epilogue {
            crate::backend::Activation::Identity => self.kind.to_owned(),
            fused => format!("{} + {}", self.kind, fused.as_str()),
        }
    }
}

/// Every built layer's footprint (an activation fused into the layer before has none of its
/// own), or the first layer that cannot take its input.
pub fn footprints(specs: &[LayerSpec], input: Shape) -> Result<Vec<Footprint>, ShapeError> {
    Ok(build_indexed(specs, input)?
        .iter()
        .map(
            |Built {
                 index,
                 input,
                 flattened,
                 layer,
             }| {
                let shapes = layer.param_shapes().unwrap_or_default();
                let sizes = shapes.map(|(r, c)| r.saturating_mul(c));
                let kept: usize = layer.saved(1).iter().map(|(_, _, (r, c))| r * c).sum();
                Footprint {
                    name: layer.name().to_owned(),
                    index: *index,
                    input: *input,
                    param_shapes: layer.param_shapes(),
                    flattened: *flattened,
                    kind: layer.kind(),
                    epilogue: layer.epilogue(),
                    shape: layer.shape(),
                    params: sizes.iter().fold(0, |a, &b| a.saturating_add(b)),
                    largest_param: sizes.into_iter().max().unwrap_or(0),
                    saved: if layer.saved_in_pass_format() {
                        0
                    } else {
                        kept
                    },
                    saved_pass: if layer.saved_in_pass_format() {
                        kept
                    } else {
                        0
                    },
                    input_gradient: layer.needs_input_gradient(),
                    convolution: layer.convolution(),
                    macs: layer.macs(),
                    plain: layer.plain_cost(),
                }
            },
        )
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ImageShape;

    /// Under `AdamW` the products' weight matrices decay and nothing else does: a
    /// convolution's filters and a dense layer's weights, not `LayerNorm`'s scale (nor any
    /// layer's bias, which `update_layer` never decays).
    #[test]
    fn only_the_products_weights_decay() {
        let image = ImageShape {
            height: 6,
            width: 6,
            channels: 1,
        };
        let specs = [
            LayerSpec::Conv2d {
                filters: 2,
                kernel: 3,
            },
            LayerSpec::MaxPool2d,
            LayerSpec::Flatten,
            LayerSpec::LayerNorm,
            LayerSpec::Activation {
                function: Activation::Gelu,
            },
            LayerSpec::Dense { units: 3 },
        ];
        let layers = build(&specs, Shape::Image(image)).expect("fits");
        let decays: Vec<(&str, bool)> = layers.iter().map(|l| (l.kind(), l.decays())).collect();
        assert_eq!(
            decays,
            [
                ("conv2d", true),
                ("max_pool2d", false),
                ("layer_norm", false),
                ("gelu", false),
                ("dense", true),
            ]
        );
    }
}
