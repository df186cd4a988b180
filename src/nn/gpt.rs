//! A GPT as a list of layers: a token and position embedding, pre-LayerNorm Transformer blocks
//! (attention and a GELU MLP, each added back to the residual stream), and a final `LayerNorm`;
//! the vocabulary head is the output layer the data set adds, as for every model. nanoGPT's
//! `model.py` is the shape followed, layer for layer.

use super::layers::LayerSpec;
use crate::backend::Activation;

/// What sets a GPT's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GptShape {
    /// Tokens in the vocabulary (the data set's characters).
    pub vocab: usize,
    /// Values a position (`n_embd`).
    pub width: usize,
    /// Attention heads a block (`n_head`); they divide the width.
    pub heads: usize,
    /// Transformer blocks (`n_layer`).
    pub blocks: usize,
}

/// Layers in one block.
pub const BLOCK_LAYERS: usize = 10;

/// The layers of a GPT of `shape`, without its vocabulary head: the embedding, then each block
/// as `x = x + proj(attention(qkv(ln1(x))))`, `x = x + fc2(gelu(fc(ln2(x))))` with the MLP
/// four times as wide, then the final `LayerNorm`.
pub fn gpt_layers(shape: GptShape) -> Vec<LayerSpec> {
    let GptShape {
        vocab,
        width,
        heads,
        blocks,
    } = shape;
    let mut layers = vec![LayerSpec::Embedding { vocab, width }];
    for _ in 0..blocks {
        // The residual stream is the output of the layer before the block.
        let stream = layers.len() - 1;
        layers.extend([
            LayerSpec::LayerNorm,
            LayerSpec::Dense { units: 3 * width },
            LayerSpec::Attention { heads },
            LayerSpec::Dense { units: width },
            LayerSpec::Residual { from: stream },
        ]);
        let stream = layers.len() - 1;
        layers.extend([
            LayerSpec::LayerNorm,
            LayerSpec::Dense { units: 4 * width },
            LayerSpec::Activation {
                function: Activation::Gelu,
            },
            LayerSpec::Dense { units: width },
            LayerSpec::Residual { from: stream },
        ]);
    }
    layers.push(LayerSpec::LayerNorm);
    layers
}

/// `layers` with every embedding's vocabulary set to `vocab` (a model file or a preset leaves
/// it to the data set, as it leaves the output layer).
pub fn with_vocabulary(layers: &mut [LayerSpec], vocab: usize) {
    for layer in layers {
        if let LayerSpec::Embedding { vocab: v, .. } = layer {
            *v = vocab;
        }
    }
}

/// Whether `layers` read token ids (start with an embedding).
pub fn reads_tokens(layers: &[LayerSpec]) -> bool {
    matches!(layers.first(), Some(LayerSpec::Embedding { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::{Shape, footprints};

    /// nanoGPT's baby GPT (4 blocks, 4 heads, 128 wide, context 64, 65 characters) has its
    /// parameter count: 0.80 M with the head, as its `model.py` counts them.
    #[test]
    fn the_baby_gpt_has_nanogpts_parameter_count() {
        let shape = GptShape {
            vocab: 65,
            width: 128,
            heads: 4,
            blocks: 4,
        };
        let mut layers = gpt_layers(shape);
        assert_eq!(layers.len(), 2 + 4 * BLOCK_LAYERS);
        layers.push(LayerSpec::Dense { units: 65 });
        let prints = footprints(&layers, Shape::Flat(64)).expect("fits");
        let params: usize = prints.iter().map(|f| f.params).sum();
        // Per block 12·d² + 13·d (qkv, proj, fc, fc2 with biases, two LayerNorms), the
        // embeddings (65 + 64)·d, the final LayerNorm 2d, the head d·65 + 65 (nanoGPT ties the
        // head to the token table and has no head bias; BatchScope does not tie them).
        let d = 128;
        let want = 4 * (12 * d * d + 13 * d) + (65 + 64) * d + 2 * d + d * 65 + 65;
        assert_eq!(params, want);
        assert_eq!(
            prints.last().map(|f| f.shape),
            Some(Shape::Sequence { len: 64, width: 65 })
        );
    }
}
