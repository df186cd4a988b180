//! A model written down: a TOML file listing the layers between the input and the output layer
//! (the data set gives both: BatchScope adds the dense output layer of its classes or targets,
//! as it does to the hidden widths of `--layers`), and the presets the command line offers by
//! name.
//!
//! ```toml
//! # An MLP with LayerNorm, as in a Transformer's feed-forward block.
//! [[layers]]
//! kind = "dense"
//! units = 64
//! [[layers]]
//! kind = "layer_norm"
//! [[layers]]
//! kind = "activation"
//! function = "gelu"
//! ```
//!
//! Kinds: `dense` (`units`), `conv2d` (`filters`, `kernel` 3 or 5), `max_pool2d`, `flatten`,
//! `activation` (`function`: relu, tanh, sigmoid or gelu), `layer_norm`, and for text
//! `embedding` (`width`; its `vocab` is the data set's), `attention` (`heads`) and `residual`
//! (`from`: the layer, counted from 0, whose output it adds).

use serde::{Deserialize, Serialize};

use super::layers::LayerSpec;
use crate::backend::Activation;

/// Layers a model may list.
pub const MAX_MODEL_LAYERS: usize = 64;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    layers: Vec<LayerSpec>,
}

/// The layers of a model file's text, or what is wrong with it (the TOML reader's message names
/// the line and the column).
pub fn parse_model(text: &str) -> Result<Vec<LayerSpec>, String> {
    let file: ModelFile = toml::from_str(text).map_err(|e| e.to_string())?;
    if file.layers.len() > MAX_MODEL_LAYERS {
        return Err(format!(
            "{} layers: at most {MAX_MODEL_LAYERS}",
            file.layers.len()
        ));
    }
    Ok(file.layers)
}

/// `layers` as a model file's text.
pub fn model_toml(layers: &[LayerSpec]) -> String {
    let file = ModelFile {
        layers: layers.to_vec(),
    };
    toml::to_string(&file).unwrap_or_default()
}

/// A model the setup and the command line offer by name: its layers before the output layer.
#[derive(Clone, Copy, Debug)]
pub struct ModelPreset {
    /// Its name on the command line.
    pub name: &'static str,
    /// Its layers.
    pub layers: fn() -> Vec<LayerSpec>,
}

const fn act(function: Activation) -> LayerSpec {
    LayerSpec::Activation { function }
}

/// The presets, in the order they are listed.
pub const MODEL_PRESETS: [ModelPreset; 4] = [
    ModelPreset {
        name: "mlp",
        layers: || {
            let relu = act(Activation::Relu);
            vec![
                LayerSpec::Dense { units: 16 },
                relu,
                LayerSpec::Dense { units: 16 },
                relu,
            ]
        },
    },
    // Dense, LayerNorm, GELU: the feed-forward block of a Transformer.
    ModelPreset {
        name: "mlp-layernorm",
        layers: || {
            let gelu = act(Activation::Gelu);
            vec![
                LayerSpec::Dense { units: 64 },
                LayerSpec::LayerNorm,
                gelu,
                LayerSpec::Dense { units: 64 },
                LayerSpec::LayerNorm,
                gelu,
            ]
        },
    },
    // A GPT a classroom laptop trains in a minute: 2 blocks, 2 heads, 64 wide.
    ModelPreset {
        name: "gpt-tiny",
        layers: || {
            super::gpt::gpt_layers(super::gpt::GptShape {
                vocab: 0,
                width: 64,
                heads: 2,
                blocks: 2,
            })
        },
    },
    // nanoGPT's baby GPT as its README trains it on a laptop CPU: 4 blocks, 4 heads, 128 wide
    // (with `--context 64`, `--batch 12`).
    ModelPreset {
        name: "gpt-baby",
        layers: || {
            super::gpt::gpt_layers(super::gpt::GptShape {
                vocab: 0,
                width: 128,
                heads: 4,
                blocks: 4,
            })
        },
    },
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<Vec<LayerSpec>> {
    MODEL_PRESETS
        .iter()
        .find(|p| p.name == name)
        .map(|p| (p.layers)())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_file_reads_and_writes_back_the_same_layers() {
        let text = "[[layers]]\nkind = \"dense\"\nunits = 64\n\n[[layers]]\nkind = \"layer_norm\"\n\n\
                    [[layers]]\nkind = \"activation\"\nfunction = \"gelu\"\n";
        let layers = parse_model(text).expect("a model");
        assert_eq!(
            layers,
            vec![
                LayerSpec::Dense { units: 64 },
                LayerSpec::LayerNorm,
                act(Activation::Gelu)
            ]
        );
        assert_eq!(parse_model(&model_toml(&layers)), Ok(layers));
        for preset in MODEL_PRESETS {
            let layers = (preset.layers)();
            assert_eq!(
                parse_model(&model_toml(&layers)),
                Ok(layers),
                "{}",
                preset.name
            );
        }
    }

    #[test]
    fn a_wrong_model_file_is_named_where_it_is_wrong() {
        let unknown = parse_model("[[layers]]\nkind = \"mamba\"\n").expect_err("no such kind");
        assert!(
            unknown.contains("mamba") && unknown.contains("line 2"),
            "{unknown}"
        );
        let missing = parse_model("[[layers]]\nkind = \"dense\"\n").expect_err("no units");
        assert!(missing.contains("units"), "{missing}");
        let many = "[[layers]]\nkind = \"flatten\"\n".repeat(MAX_MODEL_LAYERS + 1);
        assert!(
            parse_model(&many)
                .expect_err("too many")
                .contains("at most")
        );
    }
}
