//! Trained weights as a `safetensors` file, named and laid out as PyTorch's `state_dict` of the
//! same model written as an `nn.Sequential` of the layer list (activations, pooling and
//! flattening count as modules, as they do there):
//!
//! | layer | names | PyTorch's shape | BatchScope's own |
//! |---|---|---|---|
//! | dense (`nn.Linear`) | `{i}.weight`, `{i}.bias` | `[out, in]`, `[out]` | `[in, out]` |
//! | convolution (`nn.Conv2d`) | `{i}.weight`, `{i}.bias` | `[C_out, C_in, K, K]` | `[K²·C_in, C_out]` |
//! | layer norm (`nn.LayerNorm`) | `{i}.weight`, `{i}.bias` | `[n]`, `[n]` | `[1, n]` |
//!
//! where `i` is the layer's position in the list. Images are channels-last here and
//! channels-first in PyTorch, so a dense layer that reads a flattened image has its inputs
//! reordered to PyTorch's `C, H, W` order: the file then gives PyTorch the same outputs.

use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use super::init::LayerValues;
use super::layers::Footprint;
use super::spec::ModelSpec;
use crate::data::ImageShape;
use crate::i18n::{LayerKey, Said};

/// A tensor as the file holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedTensor {
    /// `{i}.weight` or `{i}.bias`.
    pub name: String,
    /// PyTorch's shape.
    pub shape: Vec<usize>,
    /// Row-major in that shape.
    pub values: Vec<f32>,
}

/// How one layer's weight is laid out in PyTorch.
#[derive(Clone, Copy)]
enum Layout {
    /// `[out, in]`, the inputs in the order BatchScope reads them.
    Linear { inputs: usize, outputs: usize },
    /// `[out, C·H·W]` for an input image `H × W × C` read channels last.
    LinearFromImage {
        h: usize,
        w: usize,
        c: usize,
        outputs: usize,
    },
    /// `[C_out, C_in, K, K]`.
    Conv { k: usize, c_in: usize, c_out: usize },
    /// `[n]`.
    Vector,
    /// `[C·H·W]` for the features of an image `H × W × C` read channels last.
    VectorFromImage { h: usize, w: usize, c: usize },
}

/// PyTorch's index for each of BatchScope's values of a weight laid out as `layout`.
fn torch_index(layout: &Layout, ours: usize) -> usize {
    match *layout {
        Layout::Linear { inputs, outputs } => {
            let (i, o) = (ours / outputs, ours % outputs);
            o * inputs + i
        }
        Layout::LinearFromImage { h, w, c, outputs } => {
            let (i, o) = (ours / outputs, ours % outputs);
            let (pixel, channel) = (i / c, i % c);
            o * (c * h * w) + channel * h * w + pixel
        }
        Layout::Conv { k, c_in, c_out } => {
            let (row, o) = (ours / c_out, ours % c_out);
            let (tap, ci) = (row / c_in, row % c_in);
            ((o * c_in + ci) * k + tap / k) * k + tap % k
        }
        Layout::Vector => ours,
        Layout::VectorFromImage { h, w, c } => (ours % c) * h * w + ours / c,
    }
}

/// A tensor's values in PyTorch's order, from BatchScope's.
fn to_torch(layout: &Layout, ours: &[f32]) -> Vec<f32> {
    let mut theirs = vec![0.0; ours.len()];
    for (i, &v) in ours.iter().enumerate() {
        if let Some(slot) = theirs.get_mut(torch_index(layout, i)) {
            *slot = v;
        }
    }
    theirs
}

/// A tensor's values in BatchScope's order, from PyTorch's (whose shape was checked).
fn to_ours(layout: &Layout, theirs: &[f32]) -> Vec<f32> {
    (0..theirs.len())
        .map(|i| theirs.get(torch_index(layout, i)).copied().unwrap_or(0.0))
        .collect()
}

/// One layer's parameters as the file holds them.
struct Params {
    /// Its position in the list: the names' prefix.
    index: usize,
    weight: Layout,
    /// PyTorch's shape of the weight.
    shape: Vec<usize>,
    bias: Layout,
    /// PyTorch's shape of the bias.
    bias_shape: Vec<usize>,
    /// The names' suffixes after the prefix: `weight` and `bias`, or for an embedding its two
    /// tables as a module with `token` and `position` `Embedding`s has them.
    names: [&'static str; 2],
}

impl Params {
    fn name(&self, which: usize) -> String {
        format!("{}.{}", self.index, self.names[which])
    }
}

/// Each layer with parameters, first first.
fn layouts(spec: &ModelSpec) -> Vec<Params> {
    spec.footprints()
        .into_iter()
        .filter_map(|f: Footprint| {
            let [(rows, cols), (bias_rows, _)] = f.param_shapes?;
            if f.kind == "embedding" {
                // Both tables are PyTorch's `Embedding.weight`, `[n, d]` row-major as here.
                return Some(Params {
                    index: f.index,
                    weight: Layout::Vector,
                    shape: vec![rows, cols],
                    bias: Layout::Vector,
                    bias_shape: vec![bias_rows, cols],
                    names: ["token.weight", "position.weight"],
                });
            }
            // Rows read from a flattened image are in its channels-last order.
            let from_image = |i: ImageShape| (i.height, i.width, i.channels);
            let (weight, shape, bias) = if let Some(c) = f.convolution {
                let k = c.kernel;
                let weight = Layout::Conv {
                    k,
                    c_in: c.channels_in,
                    c_out: c.channels_out,
                };
                (
                    weight,
                    vec![c.channels_out, c.channels_in, k, k],
                    Layout::Vector,
                )
            } else if f.kind == "dense" {
                let weight = match f.flattened.map(from_image) {
                    Some((h, w, c)) => Layout::LinearFromImage {
                        h,
                        w,
                        c,
                        outputs: cols,
                    },
                    None => Layout::Linear {
                        inputs: rows,
                        outputs: cols,
                    },
                };
                (weight, vec![cols, rows], Layout::Vector)
            } else {
                // A scale and a shift over the features (LayerNorm).
                let vector = match f.flattened.map(from_image) {
                    Some((h, w, c)) => Layout::VectorFromImage { h, w, c },
                    None => Layout::Vector,
                };
                (vector, vec![rows * cols], vector)
            };
            Some(Params {
                index: f.index,
                weight,
                shape,
                bias,
                bias_shape: vec![cols],
                names: ["weight", "bias"],
            })
        })
        .collect()
}

/// The model's parameters (`params`, as [`Network::read_parameters`](super::Network) gives
/// them) as PyTorch names and lays them out.
pub fn torch_tensors(spec: &ModelSpec, params: &LayerValues) -> Vec<NamedTensor> {
    let mut tensors = Vec::new();
    for (p, (w, b)) in layouts(spec).into_iter().zip(params) {
        tensors.push(NamedTensor {
            name: p.name(0),
            shape: p.shape.clone(),
            values: to_torch(&p.weight, w),
        });
        tensors.push(NamedTensor {
            name: p.name(1),
            shape: p.bias_shape.clone(),
            values: to_torch(&p.bias, b),
        });
    }
    tensors
}

/// The model's parameters from `tensors` (as a file gives them), or every way they do not fit
/// the model, each named in both languages: a missing tensor, one of another shape, one the
/// model has no layer for.
pub fn from_torch(spec: &ModelSpec, tensors: &[NamedTensor]) -> Result<LayerValues, Vec<Said>> {
    let mut problems = Vec::new();
    let mut values = Vec::new();
    let mut find = |name: String, shape: &[usize]| -> Option<&NamedTensor> {
        let needs = format!("{shape:?}");
        match tensors.iter().find(|t| t.name == name) {
            None => {
                let said = Said::new(
                    LayerKey::WeightsMissing,
                    &[("name", &name), ("shape", &needs)],
                );
                problems.push(said);
                None
            }
            Some(t) if t.shape != shape => {
                let got = format!("{:?}", t.shape);
                problems.push(Said::new(
                    LayerKey::WeightsShape,
                    &[("name", &name), ("got", &got), ("shape", &needs)],
                ));
                None
            }
            Some(t) => Some(t),
        }
    };
    let layouts = layouts(spec);
    for p in &layouts {
        let weight = find(p.name(0), &p.shape);
        let bias = find(p.name(1), &p.bias_shape);
        if let (Some(weight), Some(bias)) = (weight, bias) {
            values.push((
                to_ours(&p.weight, &weight.values),
                to_ours(&p.bias, &bias.values),
            ));
        }
    }
    for t in tensors {
        let known = layouts
            .iter()
            .any(|p| t.name == p.name(0) || t.name == p.name(1));
        if !known {
            let shape = format!("{:?}", t.shape);
            problems.push(Said::new(
                LayerKey::WeightsUnknown,
                &[("name", &t.name), ("shape", &shape)],
            ));
        }
    }
    if problems.is_empty() {
        Ok(values)
    } else {
        Err(problems)
    }
}

/// `tensors` as the bytes of a safetensors file (f32, little-endian).
pub fn to_safetensors(tensors: &[NamedTensor]) -> Result<Vec<u8>, String> {
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|t| t.values.iter().flat_map(|v| v.to_le_bytes()).collect())
        .collect();
    let views = tensors
        .iter()
        .zip(&bytes)
        .map(|(t, data)| {
            TensorView::new(Dtype::F32, t.shape.clone(), data)
                .map(|view| (t.name.clone(), view))
                .map_err(|e| format!("`{}`: {e}", t.name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, None).map_err(|e| e.to_string())
}

/// The tensors of a safetensors file's bytes: f32 only (the error names one of another type).
pub fn from_safetensors(bytes: &[u8]) -> Result<Vec<NamedTensor>, Said> {
    let file = SafeTensors::deserialize(bytes)
        .map_err(|e| Said::new(LayerKey::WeightsNotSafetensors, &[("why", &e)]))?;
    let mut tensors = Vec::new();
    for (name, view) in file.tensors() {
        if view.dtype() != Dtype::F32 {
            let dtype = format!("{:?}", view.dtype());
            return Err(Said::new(
                LayerKey::WeightsDtype,
                &[("name", &name), ("dtype", &dtype)],
            ));
        }
        let values = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        tensors.push(NamedTensor {
            name,
            shape: view.shape().to_vec(),
            values,
        });
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tensors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Activation;
    use crate::data::ImageShape;
    use crate::i18n::Lang;
    use crate::nn::{LayerSpec, Loss, Shape, initial_parameters};

    fn cnn() -> ModelSpec {
        let image = Shape::Image(ImageShape {
            width: 6,
            height: 4,
            channels: 2,
        });
        let list = vec![
            LayerSpec::Conv2d {
                filters: 3,
                kernel: 3,
            },
            LayerSpec::Activation {
                function: Activation::Relu,
            },
            LayerSpec::MaxPool2d,
            LayerSpec::Flatten,
            LayerSpec::Dense { units: 5 },
            LayerSpec::LayerNorm,
            LayerSpec::Dense { units: 2 },
        ];
        ModelSpec::from_layers(image, list, Loss::SoftmaxCrossEntropy).expect("fits")
    }

    #[test]
    fn weights_go_through_a_file_and_back_unchanged_with_pytorchs_names_and_shapes() {
        let spec = cnn();
        let params = initial_parameters(&spec, 3);
        let tensors = torch_tensors(&spec, &params);
        let names: Vec<(&str, &[usize])> = tensors
            .iter()
            .map(|t| (t.name.as_str(), t.shape.as_slice()))
            .collect();
        let want: [(&str, &[usize]); 8] = [
            ("0.weight", &[3, 2, 3, 3]),
            ("0.bias", &[3]),
            ("4.weight", &[5, 18]),
            ("4.bias", &[5]),
            ("5.weight", &[5]),
            ("5.bias", &[5]),
            ("6.weight", &[2, 5]),
            ("6.bias", &[2]),
        ];
        assert_eq!(names, want);
        let bytes = to_safetensors(&tensors).expect("serialised");
        let read = from_safetensors(&bytes).expect("read");
        assert_eq!(from_torch(&spec, &read), Ok(params));
    }

    #[test]
    fn a_convolutions_and_a_flattened_images_weights_are_in_pytorchs_order() {
        let spec = cnn();
        let mut params = initial_parameters(&spec, 3);
        // Conv: our row (ky·K + kx)·C_in + c, column o → PyTorch [o][c][ky][kx].
        let (k, c_in, c_out) = (3, 2, 3);
        let ours =
            |ky: usize, kx: usize, c: usize, o: usize| ((ky * k + kx) * c_in + c) * c_out + o;
        params[0].0[ours(2, 1, 1, 2)] = 42.0;
        // Dense after flattening the 2×3×3 pooled image (channels last): our input
        // (y·W + x)·C + c → PyTorch's c·H·W + y·W + x, here for y = 1, x = 2, c = 1, output 4.
        let (h, w, c, out) = (2, 3, 3, 5);
        let (y, x, ch, o) = (1, 2, 1, 4);
        params[1].0[((y * w + x) * c + ch) * out + o] = 7.0;
        let tensors = torch_tensors(&spec, &params);
        let conv = &tensors[0].values;
        assert_eq!(conv[((2 * c_in + 1) * k + 2) * k + 1], 42.0);
        let dense = &tensors[2].values;
        assert_eq!(dense[o * (c * h * w) + ch * h * w + y * w + x], 7.0);
    }

    #[test]
    fn a_file_for_another_model_is_refused_layer_by_layer() {
        let spec = cnn();
        let mut tensors = torch_tensors(&spec, &initial_parameters(&spec, 3));
        tensors[2].shape = vec![5, 17];
        tensors.retain(|t| t.name != "6.bias");
        tensors.push(NamedTensor {
            name: "9.weight".into(),
            shape: vec![1],
            values: vec![0.0],
        });
        let problems = from_torch(&spec, &tensors).expect_err("another model");
        let en: Vec<&str> = problems.iter().map(|p| p.text(Lang::En)).collect();
        assert_eq!(en.len(), 3, "{en:?}");
        assert!(en[0].contains("`4.weight` is [5, 17]"), "{en:?}");
        assert!(en[1].contains("no `6.bias`"), "{en:?}");
        assert!(en[2].contains("`9.weight`"), "{en:?}");
        // The same problems in Chinese, the names and shapes as they are.
        let zh = problems[0].text(Lang::Zh);
        assert!(
            zh.contains("`4.weight`") && zh.contains("[5, 17]") && zh.contains("模型需要"),
            "{zh}"
        );
        let e = from_safetensors(b"not a safetensors file").expect_err("not one");
        assert!(e.text(Lang::Zh).contains("不是 safetensors 文件"), "{e:?}");
    }
}
