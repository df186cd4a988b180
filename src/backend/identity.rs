//! What a backend is: the adapter a GPU backend trains on, as `batchscope devices` and the GPU
//! column describe it, and the workgroup sizes its kernels were compiled with. Plain data, so
//! the traits and the panels can name them without knowing wgpu.

use serde::Serialize;

/// What `batchscope devices` prints about one adapter.
#[expect(
    clippy::struct_excessive_bools,
    reason = "a flat record of yes/no capabilities, as the driver reports them"
)]
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct AdapterSummary {
    /// Adapter name as the driver reports it.
    pub name: String,
    /// Graphics API wgpu drives it through (Vulkan, Metal, Dx12, Gl).
    pub backend: String,
    /// Discrete, integrated, virtual, CPU or other.
    pub device_type: String,
    /// True for software rasterisers (lavapipe, llvmpipe, SwiftShader, WARP): their speed says
    /// nothing about a real GPU.
    pub software: bool,
    /// Driver name.
    pub driver: String,
    /// Driver version and details.
    pub driver_info: String,
    /// Timestamp queries inside compute passes (kernel times measured on the GPU).
    pub timestamps: bool,
    /// Native `f16` in shaders.
    pub shader_f16: bool,
    /// Largest buffer the adapter can create.
    pub max_buffer_size_bytes: u64,
    /// Largest storage buffer one binding can see.
    pub max_storage_buffer_binding_size_bytes: u64,
    /// Most invocations in one workgroup.
    pub max_compute_invocations_per_workgroup: u32,
    /// Most workgroups along one dispatch dimension.
    pub max_compute_workgroups_per_dimension: u32,
    /// Bytes of workgroup (shared) memory per workgroup.
    pub max_compute_workgroup_storage_size_bytes: u32,
    /// Whether training can use this adapter (compute shaders on a primary backend).
    pub usable_for_training: bool,
    /// The workgroup sizes the kernels get on this adapter.
    pub kernel_sizes: KernelSizes,
    /// The matrix-product kernels this adapter's limits allow: what a tuning may choose among.
    pub matmul_variants: MatmulVariants,
    /// How `kernel_sizes.matmul` was chosen by timing the variants on this adapter; `None`
    /// while it comes from the limits alone.
    pub matmul_tuning: Option<Box<MatmulTuning>>,
}

/// A set of matrix-product kernels, as bits: an adapter's summary travels in every device's
/// status, so it stays small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatmulVariants(u8);

impl MatmulVariants {
    /// Whether `choice` is in the set.
    pub fn contains(self, choice: MatmulChoice) -> bool {
        self.0 & (1 << choice as u8) != 0
    }

    /// The kernels in the set, in [`MatmulChoice::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = MatmulChoice> {
        MatmulChoice::ALL
            .into_iter()
            .filter(move |&c| self.contains(c))
    }
}

impl FromIterator<MatmulChoice> for MatmulVariants {
    fn from_iter<I: IntoIterator<Item = MatmulChoice>>(choices: I) -> Self {
        Self(choices.into_iter().fold(0, |bits, c| bits | 1 << c as u8))
    }
}

impl Serialize for MatmulVariants {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// The matrix-product variants timed on one adapter, and the one chosen.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MatmulTuning {
    /// What the choice is kept under: adapter, API, driver and its version.
    pub key: String,
    /// The fastest variant.
    pub chosen: MatmulChoice,
    /// `n` of the `n × n × n` products timed.
    pub size: usize,
    /// Each variant's GFLOP/s on them, as measured.
    pub rates: Vec<(MatmulChoice, f64)>,
    /// Whether thin weight gradients are split along `k`, chosen by timing one (a 3×3
    /// convolution's 72 × 16 outputs over 16,384 rows) unsplit and split.
    pub split_k: bool,
    /// That product's GFLOP/s unsplit and split.
    pub split_rates: [f64; 2],
    /// Whether the GPU's timestamps timed them (else the host's clock around each call).
    pub gpu_timestamps: bool,
    /// When, in seconds since the Unix epoch.
    pub tuned_at_s: u64,
}

impl AdapterSummary {
    /// Whether this GPU works in the host's own memory (an integrated GPU, or a software
    /// adapter running on the CPU): then its "device memory" is host RAM and no copy crosses a
    /// bus.
    pub fn shares_host_memory(&self) -> bool {
        matches!(self.device_type.as_str(), "IntegratedGpu" | "Cpu")
    }
}

/// Workgroup sizes, chosen per adapter from its limits and passed to the shaders as pipeline
/// constants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct KernelSizes {
    /// Edge of the matrix-product tile (and workgroup): 16, or 8 on adapters that cannot run 256
    /// invocations in one workgroup.
    pub matmul_tile: u32,
    /// Invocations per workgroup of the optimizer updates and of the loss: 256, 128 or 64.
    pub elementwise: u32,
    /// Invocations per workgroup of the bias-gradient column sums.
    pub column_sum: u32,
    /// The matrix-product kernel of large products.
    pub matmul: MatmulChoice,
    /// Whether thin weight gradients with a long `k` are split along it (more workgroups, one
    /// more kernel adding their partial sums): on by default on a hardware GPU, whose many
    /// compute units a thin product leaves idle; off on a software adapter, whose few CPU cores
    /// it keeps busy anyway; timed either way by `tune`.
    pub split_k: bool,
    /// Whether a layer's weights and biases are updated in one dispatch (eight storage
    /// buffers in one kernel, which every WebGPU adapter allows; f32 storage only).
    pub paired_updates: bool,
}

/// Which kernel the large matrix products run: chosen from the adapter's limits, or by timing
/// each on the adapter (`batchscope tune`, cached per adapter and driver). A product smaller
/// than the chosen kernel's tile runs the largest variant whose tile it fills, or
/// `matmul.wgsl`, which wastes less of a tile on it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum MatmulChoice {
    /// `matmul.wgsl`: one output per invocation, `matmul_tile`² invocations a workgroup.
    #[default]
    OnePerInvocation,
    /// `matmul_tiled.wgsl`: 64 × 64 outputs a workgroup of 16 × 16, each invocation a 4 × 4
    /// block held in registers, `k` staged 16 at a time (8 KiB of workgroup memory).
    Blocks4x4,
    /// 128 × 64 outputs a workgroup, 8 × 4 an invocation, `k` 16 at a time (12 KiB).
    Blocks8x4,
    /// 128 × 128 outputs a workgroup, 8 × 8 an invocation, `k` 8 at a time (8 KiB): the
    /// most arithmetic per value loaded, and the most registers.
    Blocks8x8,
}

impl MatmulChoice {
    /// Every variant, in the order `bench` and `tune` report them.
    pub const ALL: [MatmulChoice; 4] = [
        MatmulChoice::OnePerInvocation,
        MatmulChoice::Blocks4x4,
        MatmulChoice::Blocks8x4,
        MatmulChoice::Blocks8x8,
    ];

    /// The name `devices` and `bench` show.
    pub fn as_str(self) -> &'static str {
        match self {
            MatmulChoice::OnePerInvocation => "1x1 per invocation",
            MatmulChoice::Blocks4x4 => "4x4 per invocation, 64x64 tiles",
            MatmulChoice::Blocks8x4 => "8x4 per invocation, 128x64 tiles",
            MatmulChoice::Blocks8x8 => "8x8 per invocation, 128x128 tiles",
        }
    }

    /// A register-blocked variant's outputs per invocation (rows, columns) and values of `k`
    /// staged per step; `None` for the one-output kernel.
    pub fn blocks(self) -> Option<(u32, u32, u32)> {
        match self {
            MatmulChoice::OnePerInvocation => None,
            MatmulChoice::Blocks4x4 => Some((4, 4, 16)),
            MatmulChoice::Blocks8x4 => Some((8, 4, 16)),
            MatmulChoice::Blocks8x8 => Some((8, 8, 8)),
        }
    }

    /// The tile of outputs one workgroup of a register-blocked variant computes (rows,
    /// columns): 16 × 16 invocations.
    pub fn tile(self) -> Option<(usize, usize)> {
        self.blocks()
            .map(|(m, n, _)| (16 * m as usize, 16 * n as usize))
    }

    /// Bytes of workgroup memory a register-blocked variant stages its tiles in.
    pub fn workgroup_bytes(self) -> u32 {
        self.blocks()
            .map_or(0, |(m, n, step)| 16 * (m + n) * step * 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_of_kernels_holds_what_it_was_made_of_in_order() {
        use MatmulChoice::{Blocks4x4, Blocks8x4, Blocks8x8, OnePerInvocation};
        let set: MatmulVariants = [Blocks8x8, OnePerInvocation].into_iter().collect();
        assert!(set.contains(OnePerInvocation) && set.contains(Blocks8x8));
        assert!(!set.contains(Blocks4x4) && !set.contains(Blocks8x4));
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [OnePerInvocation, Blocks8x8]
        );
        assert_eq!(
            serde_json::to_string(&set).expect("serializes"),
            r#"["one_per_invocation","blocks8x8"]"#
        );
        assert!(MatmulVariants::default().iter().next().is_none());
    }
}

/// What went wrong with the GPU's kept kernel choice (`batchscope tune`'s cache): the run goes
/// on with kernels timed now or chosen from the limits, and the GPU column says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TuningNote {
    /// The cache at `path` could not be read or understood (`why`): the kernels are timed
    /// again.
    Unreadable { path: String, why: String },
    /// The new choice could not be saved (`why`): it is timed again next time.
    NotSaved { why: String },
    /// Timing the kernels failed (`why`): the default kernel is used.
    TimingFailed { why: String },
}

impl std::fmt::Display for TuningNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TuningNote::Unreadable { path, why } => write!(
                f,
                "the saved GPU kernel choice in {path} could not be used ({why}); the kernels \
                 are timed again"
            ),
            TuningNote::NotSaved { why } => write!(
                f,
                "the GPU kernel choice could not be saved ({why}); it is timed again next time"
            ),
            TuningNote::TimingFailed { why } => write!(
                f,
                "timing the GPU's matrix-product kernels failed ({why}); the default kernel is \
                 used"
            ),
        }
    }
}
