//! The kernels: one WGSL file per kernel family in `shaders/` (put together in `recipe.rs`,
//! compiled in `pipelines.rs`), with the workgroup sizes the adapter's limits allow.
//!
//! Two things tie the Rust side to the shaders, and both are written once, here:
//! - the **uniform block** each kernel reads is a `#[repr(C)]` [`bytemuck::Pod`] struct whose
//!   fields, offsets and size a test compares with the shader's `Params` struct (parsed by naga,
//!   the shader compiler wgpu uses);
//! - the **codes** a shader switches on (activation, epilogue, update rule, element-wise mode,
//!   16-bit format) are Rust enums with a `code()`; [`codes_wgsl`] turns them into WGSL
//!   constants put in front of every shader, which refers to them by name only.
//!
//! So a field added on one side or a code renumbered cannot make the two disagree silently.

use crate::backend::identity::{KernelSizes, MatmulChoice};

use crate::backend::params::{Activation, ConvShape};
use crate::precision::Half;

impl KernelSizes {
    /// The largest sizes the limits allow, up to what the shaders' workgroup arrays hold.
    ///
    /// 16×16 tiles and 256-wide workgroups fit every WebGPU-conformant adapter and keep a GPU's
    /// cores busy with a few hundred workgroups; smaller sizes keep the kernels running on the
    /// adapters below those limits. Tuning them per GPU by measurement needs the GPUs. Thin
    /// products are split on a hardware GPU, not on a `software` adapter, until `tune` times
    /// both.
    pub fn for_adapter(limits: &wgpu::Limits, software: bool) -> Self {
        let invocations = limits.max_compute_invocations_per_workgroup;
        let tile = if invocations >= 256
            && limits.max_compute_workgroup_size_x >= 16
            && limits.max_compute_workgroup_size_y >= 16
            && limits.max_compute_workgroup_storage_size >= 2 * 16 * 16 * 4
        {
            16
        } else {
            8
        };
        // Until the variants are timed on this adapter (`tune`): 4 × 4 blocks where they run,
        // the variant measured fastest on every adapter tried so far.
        let matmul = if variant_runs(MatmulChoice::Blocks4x4, limits) {
            MatmulChoice::Blocks4x4
        } else {
            MatmulChoice::OnePerInvocation
        };
        let width = invocations.min(limits.max_compute_workgroup_size_x);
        let elementwise = [256, 128, 64]
            .into_iter()
            .find(|&w| w <= width)
            .unwrap_or(64);
        Self {
            matmul_tile: tile,
            elementwise,
            column_sum: elementwise,
            matmul,
            split_k: !software,
            paired_updates: limits.max_storage_buffers_per_shader_stage >= 8,
        }
    }
}

/// Columns one workgroup of `column_sum.wgsl` sums (its `COLS`).
pub(super) const COLUMN_SUM_COLS: u32 = 16;

/// Whether an adapter with `limits` runs the matrix-product variant `choice`: the register-
/// blocked ones need 16 × 16 invocations a workgroup and their tiles in workgroup memory.
pub fn variant_runs(choice: MatmulChoice, limits: &wgpu::Limits) -> bool {
    choice.blocks().is_none()
        || (limits.max_compute_invocations_per_workgroup >= 256
            && limits.max_compute_workgroup_size_x >= 16
            && limits.max_compute_workgroup_size_y >= 16
            && limits.max_compute_workgroup_storage_size >= choice.workgroup_bytes())
}

/// The register-blocked variant among `compiled` (smallest tile first) a product of `m × n`
/// outputs runs when `chosen` is the adapter's choice: the largest whose tile the product fills
/// and no larger than the chosen one's; `None` for the one-output kernel.
pub(super) fn pick_variant(
    compiled: impl Iterator<Item = MatmulChoice>,
    chosen: MatmulChoice,
    (m, n): (usize, usize),
) -> Option<MatmulChoice> {
    let fills = |c: MatmulChoice| c.tile().is_some_and(|(tm, tn)| m >= tm && n >= tn);
    let area = |c: MatmulChoice| c.tile().map_or(0, |(tm, tn)| tm * tn);
    compiled
        .filter(|&c| fills(c) && area(c) <= area(chosen))
        .last()
}

/// Workgroups a product should give the GPU at least: a few per compute unit of a large GPU
/// (an H100 has 132), which a thin product reaches only by splitting its sums along `k`.
const SPLIT_TARGET_WORKGROUPS: usize = 256;
/// Fewest values of `k` a split sums, so each still streams a long stretch of memory.
const SPLIT_MIN_CHUNK: usize = 512;
/// Most splits (the partial sums are then added by one invocation per output, in order).
const SPLIT_MAX: usize = 64;

/// Into how many stretches of `k` a weight-gradient product of `m × n` outputs is split when it
/// runs `tile` × `tile` workgroups of one output per invocation: 1 (not split) unless it has too
/// few workgroups to fill a GPU and a `k` long enough to share out; its partial sums must fit in
/// `scratch_bytes`.
pub(super) fn split_k((m, n, k): (usize, usize, usize), tile: usize, scratch_bytes: u64) -> usize {
    let workgroups = m.div_ceil(tile) * n.div_ceil(tile);
    if workgroups >= SPLIT_TARGET_WORKGROUPS / 4 {
        return 1;
    }
    let fit = (scratch_bytes / (4 * (m * n).max(1)) as u64) as usize;
    let splits = (SPLIT_TARGET_WORKGROUPS / workgroups)
        .min(k / SPLIT_MIN_CHUNK)
        .min(SPLIT_MAX)
        .min(fit);
    if splits < 2 {
        return 1;
    }
    // No empty stretch: the last one starts before `k` ends.
    let chunk = k.div_ceil(splits);
    k.div_ceil(chunk)
}

/// What `matmul.wgsl` does with each sum before storing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Epilogue {
    /// `c = sum` (the weight gradient).
    Sum,
    /// `c = act(sum + bias[j])` (a dense layer's forward pass).
    BiasActivation(Activation),
    /// `c = sum · act'(aux[i, j])` (the gradient into the previous layer).
    ActivationGrad(Activation),
}

impl Epilogue {
    /// The shader's code.
    pub(super) fn code(self) -> u32 {
        match self {
            Epilogue::Sum => 0,
            Epilogue::BiasActivation(_) => 1,
            Epilogue::ActivationGrad(_) => 2,
        }
    }

    /// The activation it applies or differentiates (the identity for a plain sum).
    pub(super) fn activation(self) -> Activation {
        match self {
            Epilogue::Sum => Activation::Identity,
            Epilogue::BiasActivation(act) | Epilogue::ActivationGrad(act) => act,
        }
    }
}

/// How a product reads one operand (`matmul_read.wgsl`). A convolution is a product whose
/// patch matrix is read from the images where they stand (an implicit GEMM), so no patches are
/// made; its shape is the [`ConvShape`] of the images read, whose `channels_in` are theirs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Read {
    /// Element `(i, kk)` at `i · row_stride + kk · col_stride`.
    Strides(usize, usize),
    /// A convolution's patches, `[pixels over the batch, K² · C]`.
    Patches(ConvShape),
    /// Their transpose, `[K² · C, pixels over the batch]` (the weight gradient).
    PatchesTransposed(ConvShape),
    /// The transposed convolution's weights, `[K² · C, n]`: `w` `[K² · n, C]` turned half a
    /// circle with its channels swapped (the input gradient; `b` only).
    Flipped(ConvShape),
}

/// The shader's names for the kinds of [`Read`] (`READ_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadMode {
    Strides,
    Patches,
    PatchesTransposed,
    Flipped,
}

impl ReadMode {
    /// The shader's code.
    fn code(self) -> u32 {
        match self {
            ReadMode::Strides => 0,
            ReadMode::Patches => 1,
            ReadMode::PatchesTransposed => 2,
            ReadMode::Flipped => 3,
        }
    }
}

impl Read {
    /// The strides `matmul.wgsl` reads with. For a convolution's reads they say only which
    /// way neighbouring invocations of the tiled kernel read (along `k` where it is
    /// `(_, 1)` for `a`, not `(_, 1)` for `b`): along the channels, which lie side by side.
    pub(super) fn strides(self) -> (usize, usize) {
        match self {
            Read::Strides(rows, cols) => (rows, cols),
            Read::Patches(_) => (0, 1),
            Read::PatchesTransposed(_) | Read::Flipped(_) => (1, 0),
        }
    }

    /// The convolution read, if this is one.
    pub(super) fn shape(self) -> Option<ConvShape> {
        match self {
            Read::Strides(..) => None,
            Read::Patches(s) | Read::PatchesTransposed(s) | Read::Flipped(s) => Some(s),
        }
    }
}

/// How a product reads both operands: each combination is a pipeline of its own (see
/// `matmul_read.wgsl`), the convolutions' compiled on first use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Reads {
    /// Both strided: the dense layers' products.
    Strides,
    /// A convolution's forward pass: patches times weights.
    ConvForward,
    /// Its weight gradient: patches transposed times the output's gradient.
    ConvWeightGrad,
    /// Its input gradient: the output gradient's patches times the flipped weights.
    ConvInputGrad,
}

impl Reads {
    /// The convolutions' combinations, in the order of [`Kernels`]' pipelines for them.
    pub(super) const CONV: [Reads; 3] = [
        Reads::ConvForward,
        Reads::ConvWeightGrad,
        Reads::ConvInputGrad,
    ];

    /// The combination of `a`'s and `b`'s reads (a read of `b` as patches, or of `a` as
    /// flipped weights, is no pass of a convolution: read as strides).
    pub(super) fn of(a: Read, b: Read) -> Self {
        match (a, b) {
            (Read::Patches(_), Read::Flipped(_)) => Reads::ConvInputGrad,
            (Read::Patches(_), _) => Reads::ConvForward,
            (Read::PatchesTransposed(_), _) => Reads::ConvWeightGrad,
            _ => Reads::Strides,
        }
    }

    /// The pipeline constants `A_READ` and `B_READ`.
    pub(super) fn constants(self) -> [(&'static str, f64); 2] {
        let (a, b) = match self {
            Reads::Strides => (ReadMode::Strides, ReadMode::Strides),
            Reads::ConvForward => (ReadMode::Patches, ReadMode::Strides),
            Reads::ConvWeightGrad => (ReadMode::PatchesTransposed, ReadMode::Strides),
            Reads::ConvInputGrad => (ReadMode::Patches, ReadMode::Flipped),
        };
        [
            ("A_READ", f64::from(a.code())),
            ("B_READ", f64::from(b.code())),
        ]
    }

    /// Index into the convolutions' pipelines (`None` for the dense layers' own).
    pub(super) fn conv_index(self) -> Option<usize> {
        Reads::CONV.iter().position(|&r| r == self)
    }
}

/// The update `optimizer.wgsl` applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UpdateRule {
    /// `p -= lr · g`.
    Sgd,
    /// `v = μ·v + g; p -= lr · v`.
    Momentum,
    /// Adam with bias corrections computed on the host.
    Adam,
}

impl UpdateRule {
    /// The shader's code.
    pub(super) fn code(self) -> u32 {
        match self {
            UpdateRule::Sgd => 0,
            UpdateRule::Momentum => 1,
            UpdateRule::Adam => 2,
        }
    }
}

/// What `elementwise.wgsl` does to each value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ElementwiseMode {
    /// Round to a 16-bit format and widen back, counting what is lost.
    Round(Half),
    /// Multiply by a factor.
    Scale,
    /// Count the values that are NaN or infinite.
    CountNonFinite,
}

impl ElementwiseMode {
    /// The shader's code.
    pub(super) fn code(self) -> u32 {
        match self {
            ElementwiseMode::Round(Half::Fp16) => 1,
            ElementwiseMode::Round(Half::Bf16) => 2,
            ElementwiseMode::Scale => 3,
            ElementwiseMode::CountNonFinite => 4,
        }
    }
}

/// The WGSL constants of every code a shader switches on, from the Rust enums: the only place
/// the numbers are written. Put in front of every shader.
pub(super) fn codes_wgsl() -> String {
    let activation = |a: Activation| match a {
        Activation::Identity => "ACT_IDENTITY",
        Activation::Relu => "ACT_RELU",
        Activation::Tanh => "ACT_TANH",
        Activation::Sigmoid => "ACT_SIGMOID",
        Activation::Gelu => "ACT_GELU",
    };
    let mut codes: Vec<(&str, u32)> = Activation::ALL
        .into_iter()
        .map(|a| (activation(a), a.code()))
        .collect();
    codes.extend([
        ("EPILOGUE_SUM", Epilogue::Sum.code()),
        (
            "EPILOGUE_BIAS_ACT",
            Epilogue::BiasActivation(Activation::Identity).code(),
        ),
        (
            "EPILOGUE_ACT_GRAD",
            Epilogue::ActivationGrad(Activation::Identity).code(),
        ),
        ("READ_STRIDES", ReadMode::Strides.code()),
        ("READ_PATCHES", ReadMode::Patches.code()),
        ("READ_PATCHES_T", ReadMode::PatchesTransposed.code()),
        ("READ_FLIPPED", ReadMode::Flipped.code()),
        ("UPDATE_SGD", UpdateRule::Sgd.code()),
        ("UPDATE_MOMENTUM", UpdateRule::Momentum.code()),
        ("UPDATE_ADAM", UpdateRule::Adam.code()),
        ("MODE_ROUND_FP16", ElementwiseMode::Round(Half::Fp16).code()),
        ("MODE_ROUND_BF16", ElementwiseMode::Round(Half::Bf16).code()),
        ("MODE_SCALE", ElementwiseMode::Scale.code()),
        (
            "MODE_COUNT_NON_FINITE",
            ElementwiseMode::CountNonFinite.code(),
        ),
        ("FORMAT_FP16", Half::Fp16.code()),
        ("FORMAT_BF16", Half::Bf16.code()),
    ]);
    let mut wgsl = String::from(
        "// Generated from the Rust enums in backend/gpu/kernels.rs: the codes shaders switch on.\n",
    );
    for (name, code) in codes {
        for part in ["const ", name, ": u32 = ", &code.to_string(), "u;\n"] {
            wgsl.push_str(part);
        }
    }
    wgsl
}

/// A uniform block: the bytes a kernel reads, and (for the layout test) the names and byte
/// offsets of its fields in declaration order.
pub(super) trait Uniform: bytemuck::Pod {
    /// `(field, byte offset)`, in declaration order.
    #[cfg(test)]
    const FIELDS: &'static [(&'static str, usize)];
}

/// Declares a uniform block as a `#[repr(C)]` `Pod` struct and lists its fields for the test.
macro_rules! uniform {
    ($(#[$meta:meta])* $name:ident { $($(#[$field_meta:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub(super) struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl Uniform for $name {
            #[cfg(test)]
            const FIELDS: &'static [(&'static str, usize)] =
                &[$((stringify!($field), std::mem::offset_of!($name, $field))),*];
        }
    };
}

uniform! {
    /// `matmul.wgsl`: `c[m, n] = epilogue(op(a)[m, k] · op(b)[k, n])`, transposes as strides.
    MatmulParams {
        m: u32,
        n: u32,
        k: u32,
        /// An [`Epilogue`] code.
        epilogue: u32,
        a_row_stride: u32,
        a_col_stride: u32,
        b_row_stride: u32,
        b_col_stride: u32,
        /// An [`Activation`] code.
        act: u32,
        /// Values of `k` each workgroup along z sums: `k` unless the product is split.
        k_chunk: u32,
        /// A convolution's images (see [`Read`]): height, width, channels, kernel side.
        height: u32,
        width: u32,
        channels: u32,
        kernel: u32,
        _pad1: u32,
        _pad2: u32,
    }
}

uniform! {
    /// `column_sum.wgsl`: `out[j] = Σ_r x[r, j]`.
    ColumnSumParams {
        rows: u32,
        cols: u32,
        /// Rows each workgroup along z sums: `rows` unless the sum is split.
        row_chunk: u32,
        _pad1: u32,
    }
}

uniform! {
    /// `loss.wgsl`, both losses.
    LossParams {
        batch: u32,
        /// Classes (cross-entropy) or outputs per row (mean squared error).
        classes: u32,
        /// What the loss is multiplied by before backward.
        grad_scale: f32,
        _pad0: u32,
    }
}

uniform! {
    /// `optimizer.wgsl`: one update of a parameter tensor, or of two.
    OptimizerParams {
        /// Values updated, of both tensors.
        len: u32,
        /// An [`UpdateRule`] code.
        rule: u32,
        groups_x: u32,
        /// Values of the first tensor.
        first_len: u32,
        lr: f32,
        /// Momentum μ, or Adam's β1.
        beta1: f32,
        beta2: f32,
        eps: f32,
        /// Adam's bias corrections, computed on the host in f32.
        bias1: f32,
        bias2: f32,
        /// `AdamW`'s `1 − lr · weight_decay` for the first tensor (1 for the other rules).
        shrink: f32,
        _pad2: f32,
    }
}

uniform! {
    /// `elementwise.wgsl`: one pass over a tensor's values.
    ElementwiseParams {
        len: u32,
        /// An [`ElementwiseMode`] code.
        mode: u32,
        groups_x: u32,
        factor: f32,
        /// The census slot: the tensor's role, or the non-finite counter.
        slot: u32,
        _pad0: u32,
        _pad1: u32,
        _pad2: u32,
    }
}

uniform! {
    /// `spatial.wgsl`: one pass of pooling or of its gradient.
    SpatialParams {
        len: u32,
        groups_x: u32,
        height: u32,
        width: u32,
        channels: u32,
        _pad1: u32,
        /// An [`Activation`] code.
        act: u32,
        _pad0: u32,
    }
}

uniform! {
    /// `norm.wgsl`: an activation layer's pass, or layer normalisation's.
    NormParams {
        /// Values, rows or columns the pass covers (see the shader).
        len: u32,
        groups_x: u32,
        /// Features per row.
        cols: u32,
        /// An [`Activation`] code.
        act: u32,
        /// Rows (the parameters' gradients).
        rows: u32,
        eps: f32,
        _pad0: u32,
        _pad1: u32,
    }
}

uniform! {
    /// `sequence.wgsl` and `attention.wgsl`: a sequence model's passes.
    SequenceParams {
        /// Invocations the pass covers.
        len: u32,
        groups_x: u32,
        /// Rows of the sequence tensors.
        rows: u32,
        /// Values a position.
        width: u32,
        /// Positions a sequence.
        positions: u32,
        vocab: u32,
        heads: u32,
        /// `1 / √(d / heads)`.
        scale: f32,
        /// The position a step of generation writes.
        position: u32,
        _pad0: u32,
        _pad1: u32,
        _pad2: u32,
    }
}

uniform! {
    /// `convert.wgsl`: widening or narrowing one tensor.
    ConvertParams {
        len: u32,
        /// A [`Half::code`].
        format: u32,
        groups_x: u32,
        /// The census slot the narrowing counts into (the tensor's role).
        slot: u32,
    }
}

/// Which compiled kernel a dispatch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum KernelId {
    /// `matmul.wgsl`, one output an invocation.
    Matmul(Reads),
    /// A register-blocked variant of `matmul_tiled.wgsl`.
    MatmulTiled(MatmulChoice, Reads),
    ColumnSum,
    SoftmaxCrossEntropy,
    Mse,
    Optimizer,
    /// `optimizer.wgsl`'s update of two tensors in one dispatch.
    OptimizerPair,
    Elementwise,
    Widen,
    Narrow,
    MaxPool,
    MaxPoolBackward,
    ActivationForward,
    ActivationBackward,
    LayerNorm,
    LayerNormBackward,
    LayerNormParamsGrad,
    /// A sequence model's kernels, compiled on first use.
    Sequence(SequenceKernel),
}

/// The kernels of `sequence.wgsl` and `attention.wgsl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum SequenceKernel {
    Embedding,
    EmbeddingTableGrad,
    EmbeddingPositionGrad,
    Add,
    AddInto,
    EmbeddingAt,
    Attention,
    AttentionValuesGrad,
    AttentionScoresGrad,
    AttentionQueriesGrad,
    AttentionKeysGrad,
    FillCache,
    AttentionStep,
}

impl SequenceKernel {
    pub const ALL: [SequenceKernel; 13] = [
        SequenceKernel::Embedding,
        SequenceKernel::EmbeddingTableGrad,
        SequenceKernel::EmbeddingPositionGrad,
        SequenceKernel::Add,
        SequenceKernel::AddInto,
        SequenceKernel::EmbeddingAt,
        SequenceKernel::Attention,
        SequenceKernel::AttentionValuesGrad,
        SequenceKernel::AttentionScoresGrad,
        SequenceKernel::AttentionQueriesGrad,
        SequenceKernel::AttentionKeysGrad,
        SequenceKernel::FillCache,
        SequenceKernel::AttentionStep,
    ];

    /// Its entry point, which names it in traces.
    pub fn entry_point(self) -> &'static str {
        match self {
            SequenceKernel::Embedding => "embedding",
            SequenceKernel::EmbeddingTableGrad => "embedding_table_grad",
            SequenceKernel::EmbeddingPositionGrad => "embedding_position_grad",
            SequenceKernel::Add => "add",
            SequenceKernel::AddInto => "add_into",
            SequenceKernel::EmbeddingAt => "embedding_at",
            SequenceKernel::Attention => "attention",
            SequenceKernel::AttentionValuesGrad => "attention_values_grad",
            SequenceKernel::AttentionScoresGrad => "attention_scores_grad",
            SequenceKernel::AttentionQueriesGrad => "attention_queries_grad",
            SequenceKernel::AttentionKeysGrad => "attention_keys_grad",
            SequenceKernel::FillCache => "fill_cache",
            SequenceKernel::AttentionStep => "attention_step",
        }
    }

    /// Whether it is one of `attention.wgsl`'s.
    pub fn is_attention(self) -> bool {
        (self as usize) >= SequenceKernel::Attention as usize
    }
}

#[cfg(test)]
mod tests {
    use super::super::recipe::*;
    use super::*;

    #[test]
    fn only_thin_products_with_a_long_k_are_split() {
        let scratch = 4 << 20;
        // A CNN's weight gradients at batch 256 on MNIST: split, every stretch non-empty.
        for (m, n, k) in [(9, 8, 200_704), (72, 16, 50_176), (128, 10, 4096)] {
            let splits = split_k((m, n, k), 16, scratch);
            assert!(splits >= 2, "{m}x{n}x{k}: {splits}");
            let chunk = k.div_ceil(splits);
            assert!(chunk * (splits - 1) < k && chunk >= SPLIT_MIN_CHUNK);
            assert!((splits * m * n * 4) as u64 <= scratch);
        }
        // Wide products, short sums and partial sums beyond the scratch buffer are not.
        assert_eq!(split_k((784, 512, 1024), 16, scratch), 1);
        assert_eq!(split_k((72, 16, 600), 16, scratch), 1);
        assert_eq!(split_k((100, 100, 1 << 20), 16, 40_000 * 3 / 2), 1);
    }

    #[test]
    fn a_product_runs_the_chosen_variant_where_it_fills_a_tile() {
        use MatmulChoice::{Blocks4x4, Blocks8x4, Blocks8x8, OnePerInvocation};
        let all = || [Blocks4x4, Blocks8x4, Blocks8x8].into_iter();
        let pick = |chosen, shape| pick_variant(all(), chosen, shape);
        assert_eq!(pick(Blocks8x8, (512, 512)), Some(Blocks8x8));
        assert_eq!(pick(Blocks8x8, (128, 100)), Some(Blocks8x4));
        assert_eq!(pick(Blocks8x8, (100, 128)), Some(Blocks4x4));
        assert_eq!(pick(Blocks8x8, (63, 512)), None);
        assert_eq!(pick(Blocks4x4, (512, 512)), Some(Blocks4x4));
        assert_eq!(pick(OnePerInvocation, (512, 512)), None);
        // A variant the adapter did not compile is never picked.
        let small = [Blocks4x4].into_iter();
        assert_eq!(pick_variant(small, Blocks8x8, (512, 512)), Some(Blocks4x4));
    }
    use wgpu::naga;

    /// The fields, byte offsets and size of the `Params` struct a shader declares.
    fn shader_params(file: &str) -> (Vec<(String, usize)>, usize) {
        let text = if file == MATMUL_TILED_WGSL {
            tiled_source(MatmulChoice::Blocks4x4)
        } else {
            source(file)
        };
        let module = naga::front::wgsl::parse_str(&text)
            .unwrap_or_else(|e| panic!("the shader does not parse: {e}"));
        let (_, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("Params"))
            .expect("a `Params` struct");
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            panic!("`Params` is not a struct");
        };
        let fields = members
            .iter()
            .map(|m| (m.name.clone().unwrap_or_default(), m.offset as usize))
            .collect();
        (fields, *span as usize)
    }

    /// Every register-blocked variant's generated source parses and validates (wgpu's own
    /// checks, without an adapter): its sizes divide the workgroup's loads evenly.
    #[test]
    fn every_tiled_variant_is_valid_wgsl() {
        for choice in MatmulChoice::ALL {
            let Some((m, n, step)) = choice.blocks() else {
                continue;
            };
            assert_eq!((16 * m * step) % 256, 0, "{choice:?}");
            assert_eq!((16 * n * step) % 256, 0, "{choice:?}");
            let module = naga::front::wgsl::parse_str(&tiled_source(choice))
                .unwrap_or_else(|e| panic!("{choice:?} does not parse: {e}"));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::default(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{choice:?} is not valid: {e:?}"));
        }
    }

    fn rust_params<U: Uniform>() -> (Vec<(String, usize)>, usize) {
        let fields = U::FIELDS.iter().map(|&(n, o)| (n.to_owned(), o)).collect();
        (fields, std::mem::size_of::<U>())
    }

    #[test]
    fn every_uniform_struct_has_the_shaders_layout() {
        let pairs = [
            (
                "matmul.wgsl",
                shader_params(MATMUL_WGSL),
                rust_params::<MatmulParams>(),
            ),
            (
                "matmul_tiled.wgsl",
                shader_params(MATMUL_TILED_WGSL),
                rust_params::<MatmulParams>(),
            ),
            (
                "column_sum.wgsl",
                shader_params(COLUMN_SUM_WGSL),
                rust_params::<ColumnSumParams>(),
            ),
            (
                "loss.wgsl",
                shader_params(LOSS_WGSL),
                rust_params::<LossParams>(),
            ),
            (
                "optimizer.wgsl",
                shader_params(OPTIMIZER_WGSL),
                rust_params::<OptimizerParams>(),
            ),
            (
                "elementwise.wgsl",
                shader_params(ELEMENTWISE_WGSL),
                rust_params::<ElementwiseParams>(),
            ),
            (
                "convert.wgsl",
                shader_params(CONVERT_WGSL),
                rust_params::<ConvertParams>(),
            ),
            (
                "spatial.wgsl",
                shader_params(SPATIAL_WGSL),
                rust_params::<SpatialParams>(),
            ),
            (
                "norm.wgsl",
                shader_params(NORM_WGSL),
                rust_params::<NormParams>(),
            ),
            (
                "sequence.wgsl",
                shader_params(SEQUENCE_WGSL),
                rust_params::<SequenceParams>(),
            ),
            (
                "attention.wgsl",
                shader_params(ATTENTION_WGSL),
                rust_params::<SequenceParams>(),
            ),
        ];
        for (file, shader, rust) in pairs {
            assert_eq!(shader, rust, "{file}: (fields and offsets, size) differ");
            // A uniform buffer's size is a multiple of 16 bytes.
            assert_eq!(rust.1 % 16, 0, "{file}");
        }
    }

    #[test]
    fn shaders_name_their_codes_and_the_codes_are_distinct() {
        for (file, text) in [
            ("matmul.wgsl", MATMUL_WGSL),
            ("matmul_tiled.wgsl", MATMUL_TILED_WGSL),
            ("column_sum.wgsl", COLUMN_SUM_WGSL),
            ("loss.wgsl", LOSS_WGSL),
            ("optimizer.wgsl", OPTIMIZER_WGSL),
            ("elementwise.wgsl", ELEMENTWISE_WGSL),
            ("convert.wgsl", CONVERT_WGSL),
            ("activation.wgsl", ACTIVATION_WGSL),
            ("matmul_read.wgsl", MATMUL_READ_WGSL),
            ("spatial.wgsl", SPATIAL_WGSL),
            ("norm.wgsl", NORM_WGSL),
        ] {
            // A case label or a comparison with a bare number is a code written twice.
            for line in text.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
                let literal_case = line.starts_with("case ")
                    && line[5..].starts_with(|c: char| c.is_ascii_digit());
                let literal_code = [
                    ".mode == ",
                    ".format == ",
                    ".rule == ",
                    ".act == ",
                    "_READ == ",
                ]
                .iter()
                .any(|f| {
                    line.split(f)
                        .nth(1)
                        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
                });
                assert!(!literal_case && !literal_code, "{file}: `{line}`");
            }
        }
        // Within each family, no two codes are equal.
        let generated = codes_wgsl();
        for family in ["ACT_", "EPILOGUE_", "READ_", "UPDATE_", "MODE_", "FORMAT_"] {
            let mut values: Vec<&str> = generated
                .lines()
                .filter(|l| l.starts_with(&format!("const {family}")))
                .filter_map(|l| l.split(" = ").nth(1))
                .collect();
            let n = values.len();
            values.sort_unstable();
            values.dedup();
            assert_eq!(values.len(), n, "{family} codes repeat: {generated}");
        }
    }
}
