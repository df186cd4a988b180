//! What each kernel is compiled from: the WGSL files in `shaders/`, put together with the
//! generated codes and the helpers a file uses, its entry point, and the pipeline constants
//! (workgroup sizes, read modes) an adapter's [`KernelSizes`] give it. The pipelines are
//! compiled from these recipes, and the shader-translation test checks the same recipes, so
//! what it checks is what runs.

use super::kernels::{KernelId, codes_wgsl};
use crate::backend::identity::{KernelSizes, MatmulChoice};

/// The integer FP16/BF16 conversions, put in front of the shaders that use them.
pub(super) const HALF_WGSL: &str = include_str!("../../../shaders/half.wgsl");
/// Tiled matrix product with a fused epilogue.
pub(super) const MATMUL_WGSL: &str = include_str!("../../../shaders/matmul.wgsl");
/// The register-tiled product of large matrices.
pub(super) const MATMUL_TILED_WGSL: &str = include_str!("../../../shaders/matmul_tiled.wgsl");
/// How both products read their operands: strided, or a convolution's from its images.
pub(super) const MATMUL_READ_WGSL: &str = include_str!("../../../shaders/matmul_read.wgsl");
/// Column sums (bias gradients).
pub(super) const COLUMN_SUM_WGSL: &str = include_str!("../../../shaders/column_sum.wgsl");
/// Softmax cross-entropy and mean squared error, with their gradients and statistics.
pub(super) const LOSS_WGSL: &str = include_str!("../../../shaders/loss.wgsl");
/// SGD, momentum and Adam updates.
pub(super) const OPTIMIZER_WGSL: &str = include_str!("../../../shaders/optimizer.wgsl");
/// Round, scale, count non-finite values, in place.
pub(super) const ELEMENTWISE_WGSL: &str = include_str!("../../../shaders/elementwise.wgsl");
/// Widening 16-bit storage into f32 working copies and narrowing back.
pub(super) const CONVERT_WGSL: &str = include_str!("../../../shaders/convert.wgsl");
/// The activations and their derivatives, put in front of the shaders that use them.
pub(super) const ACTIVATION_WGSL: &str = include_str!("../../../shaders/activation.wgsl");
/// 2×2 max pooling and its gradient, channels last.
pub(super) const SPATIAL_WGSL: &str = include_str!("../../../shaders/spatial.wgsl");
/// Layer normalisation and activation layers, with their gradients.
pub(super) const NORM_WGSL: &str = include_str!("../../../shaders/norm.wgsl");
/// Token and position embedding, and the residual connection's sums.
pub(super) const SEQUENCE_WGSL: &str = include_str!("../../../shaders/sequence.wgsl");
/// Causal multi-head self-attention and its gradient.
pub(super) const ATTENTION_WGSL: &str = include_str!("../../../shaders/attention.wgsl");

/// What one kernel is compiled from.
pub(super) struct Recipe {
    /// Its name in wgpu's messages and in GPU captures.
    pub label: String,
    /// The whole WGSL source.
    pub source: String,
    /// The entry point.
    pub entry_point: &'static str,
    /// The values of the source's `override` constants.
    pub constants: Vec<(&'static str, f64)>,
}

impl KernelId {
    /// What this kernel is compiled from on an adapter with `sizes`.
    pub(super) fn recipe(self, sizes: &KernelSizes) -> Recipe {
        let wide = vec![("WORKGROUP", f64::from(sizes.elementwise))];
        let (label, source, entry_point, constants) = match self {
            KernelId::Matmul(reads) => {
                let mut constants = vec![("TILE", f64::from(sizes.matmul_tile))];
                constants.extend(reads.constants());
                (
                    format!("matmul {reads:?}"),
                    source(MATMUL_WGSL),
                    "main",
                    constants,
                )
            }
            KernelId::MatmulTiled(choice, reads) => {
                let (per_m, per_n, _) = choice.blocks().unwrap_or((4, 4, 16));
                (
                    format!("matmul_tiled {per_m}x{per_n} {reads:?}"),
                    tiled_source(choice),
                    "main",
                    reads.constants().to_vec(),
                )
            }
            KernelId::ColumnSum => {
                // The column sums' slices of 16 invocations must be a power of two, 2 to 16.
                let size = sizes.column_sum.clamp(32, 256).next_power_of_two();
                let constants = vec![("WORKGROUP", f64::from(size))];
                (
                    String::new(),
                    source(COLUMN_SUM_WGSL),
                    "column_sum",
                    constants,
                )
            }
            KernelId::SoftmaxCrossEntropy => (
                String::new(),
                source(LOSS_WGSL),
                "softmax_cross_entropy",
                wide,
            ),
            KernelId::Mse => (String::new(), source(LOSS_WGSL), "mse", wide),
            KernelId::Optimizer => {
                let label = "optimizer".to_owned();
                (label, source(OPTIMIZER_WGSL), "step", wide)
            }
            KernelId::OptimizerPair => {
                let label = "optimizer_pair".to_owned();
                (label, source(OPTIMIZER_WGSL), "step_pair", wide)
            }
            KernelId::Elementwise => (String::new(), source(ELEMENTWISE_WGSL), "elementwise", wide),
            KernelId::Widen => (String::new(), source(CONVERT_WGSL), "widen", wide),
            KernelId::Narrow => (String::new(), source(CONVERT_WGSL), "narrow", wide),
            KernelId::MaxPool => (String::new(), source(SPATIAL_WGSL), "max_pool", wide),
            KernelId::MaxPoolBackward => (
                String::new(),
                source(SPATIAL_WGSL),
                "max_pool_backward",
                wide,
            ),
            KernelId::ActivationForward => {
                (String::new(), source(NORM_WGSL), "activation_forward", wide)
            }
            KernelId::ActivationBackward => (
                String::new(),
                source(NORM_WGSL),
                "activation_backward",
                wide,
            ),
            // A workgroup a row, of the shader's own fixed size.
            KernelId::LayerNorm => (String::new(), source(NORM_WGSL), "layer_norm", vec![]),
            KernelId::LayerNormBackward => (
                String::new(),
                source(NORM_WGSL),
                "layer_norm_backward",
                vec![],
            ),
            KernelId::LayerNormParamsGrad => (
                String::new(),
                source(NORM_WGSL),
                "layer_norm_params_grad",
                wide,
            ),
            KernelId::Sequence(kernel) => {
                let file = if kernel.is_attention() {
                    ATTENTION_WGSL
                } else {
                    SEQUENCE_WGSL
                };
                (String::new(), source(file), kernel.entry_point(), wide)
            }
        };
        Recipe {
            // A kernel of one entry point is named by it.
            label: if label.is_empty() {
                entry_point.to_owned()
            } else {
                label
            },
            source,
            entry_point,
            constants,
        }
    }
}

/// The source of `matmul_tiled.wgsl` for the variant `choice`: its block and step sizes
/// generated in front of the file.
pub(super) fn tiled_source(choice: MatmulChoice) -> String {
    let (per_m, per_n, step) = choice.blocks().unwrap_or((4, 4, 16));
    let sizes = format!(
        "// Generated for {}.\nconst PER_M: u32 = {per_m}u;\nconst PER_N: u32 = {per_n}u;\n\
         const STEP: u32 = {step}u;\n",
        choice.as_str()
    );
    [sizes, source(MATMUL_TILED_WGSL)].concat()
}

/// The source a shader file is compiled from: the generated codes, the 16-bit conversions where
/// it uses them, then the file.
pub(super) fn source(file: &str) -> String {
    let half = if file == ELEMENTWISE_WGSL || file == CONVERT_WGSL {
        HALF_WGSL
    } else {
        ""
    };
    let products = file == MATMUL_WGSL || file == MATMUL_TILED_WGSL;
    let activation = if products || file == SPATIAL_WGSL || file == NORM_WGSL {
        ACTIVATION_WGSL
    } else {
        ""
    };
    let read = if products { MATMUL_READ_WGSL } else { "" };
    [codes_wgsl().as_str(), half, activation, read, file].concat()
}
