//! What a backend is: the adapter a GPU backend trains on, as `batchscope devices` and the GPU
//! column describe it, and the workgroup sizes its kernels were compiled with. Plain data, so
//! the traits and the panels can name them without knowing wgpu.

use serde::Serialize;

/// What `batchscope devices` prints about one adapter.
// A flat record of yes/no capabilities, as the driver reports them: bools are the honest type.
#[allow(clippy::struct_excessive_bools)]
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
}

/// Which kernel a matrix product of at least one 64 × 64 tile each way runs (smaller ones always
/// run `matmul.wgsl`, which wastes less of a tile on them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatmulChoice {
    /// `matmul.wgsl`: one output per invocation, `matmul_tile`² invocations a workgroup.
    #[default]
    OnePerInvocation,
    /// `matmul_tiled.wgsl`: 64 × 64 outputs a workgroup of 16 × 16, each invocation a 4 × 4
    /// block held in registers.
    Blocks4x4,
}

impl MatmulChoice {
    /// Both, in the order `bench` reports them.
    pub const ALL: [MatmulChoice; 2] = [MatmulChoice::OnePerInvocation, MatmulChoice::Blocks4x4];

    /// The name `devices` and `bench` show.
    pub fn as_str(self) -> &'static str {
        match self {
            MatmulChoice::OnePerInvocation => "1x1 per invocation",
            MatmulChoice::Blocks4x4 => "4x4 per invocation, 64x64 tiles",
        }
    }
}
