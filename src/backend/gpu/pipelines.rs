//! The kernels compiled for one device: each [`KernelId`]'s recipe turned into a compute
//! pipeline, the convolutions' products on first use.

use std::cell::OnceCell;

use super::kernels::{KernelId, Reads, SequenceKernel, pick_variant, variant_runs};
use super::recipe::Recipe;
use crate::backend::identity::{KernelSizes, MatmulChoice};

/// A compiled kernel: its pipeline and the layout its bind groups must follow.
pub(super) struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

impl Kernel {
    /// Compiles `recipe`.
    fn new(device: &wgpu::Device, recipe: &Recipe) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&recipe.label),
            source: wgpu::ShaderSource::Wgsl(recipe.source.as_str().into()),
        });
        // `layout: None` lets wgpu derive the bind group layout from the shader's bindings.
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&recipe.label),
            layout: None,
            module: &module,
            entry_point: Some(recipe.entry_point),
            compilation_options: wgpu::PipelineCompilationOptions {
                // The workgroup sizes this adapter gets (the shaders' `override` constants).
                constants: &recipe.constants,
                // Every kernel writes its workgroup memory before reading it, so wgpu's
                // zero-fill on each dispatch would be wasted work.
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        Self { pipeline, layout }
    }
}

/// Every kernel, compiled for one device.
pub(super) struct Kernels {
    /// Compiles the convolutions' products on first use.
    device: wgpu::Device,
    /// The workgroup sizes every kernel was compiled with.
    sizes: KernelSizes,
    matmul: Kernel,
    /// The register-blocked variants this adapter runs, smallest tile first.
    matmul_tiled: Vec<(MatmulChoice, Kernel)>,
    /// The convolutions' products ([`Reads::CONV`]), one-output then each tiled variant.
    conv_matmul: [OnceCell<Kernel>; 3],
    conv_tiled: Vec<[OnceCell<Kernel>; 3]>,
    column_sum: Kernel,
    softmax_cross_entropy: Kernel,
    mse: Kernel,
    optimizer: Kernel,
    /// Where the sizes say so (`KernelSizes::paired_updates`).
    optimizer_pair: Option<Kernel>,
    elementwise: Kernel,
    widen: Kernel,
    narrow: Kernel,
    max_pool: Kernel,
    max_pool_backward: Kernel,
    activation_forward: Kernel,
    activation_backward: Kernel,
    layer_norm: Kernel,
    layer_norm_backward: Kernel,
    layer_norm_params_grad: Kernel,
    /// A sequence model's kernels, on first use (an MLP or a CNN never compiles them).
    sequence: [OnceCell<Kernel>; SequenceKernel::ALL.len()],
}

impl Kernels {
    /// Compiles every kernel with the workgroup sizes `sizes`.
    pub fn new(device: &wgpu::Device, sizes: KernelSizes) -> Self {
        let compile = |id: KernelId| Kernel::new(device, &id.recipe(&sizes));
        let matmul_tiled: Vec<(MatmulChoice, Kernel)> = MatmulChoice::ALL
            .into_iter()
            .filter(|&c| c.blocks().is_some() && variant_runs(c, &device.limits()))
            .map(|c| (c, compile(KernelId::MatmulTiled(c, Reads::Strides))))
            .collect();
        Self {
            device: device.clone(),
            sizes,
            matmul: compile(KernelId::Matmul(Reads::Strides)),
            conv_matmul: Default::default(),
            conv_tiled: matmul_tiled.iter().map(|_| Default::default()).collect(),
            matmul_tiled,
            column_sum: compile(KernelId::ColumnSum),
            softmax_cross_entropy: compile(KernelId::SoftmaxCrossEntropy),
            mse: compile(KernelId::Mse),
            optimizer: compile(KernelId::Optimizer),
            optimizer_pair: sizes
                .paired_updates
                .then(|| compile(KernelId::OptimizerPair)),
            elementwise: compile(KernelId::Elementwise),
            widen: compile(KernelId::Widen),
            narrow: compile(KernelId::Narrow),
            max_pool: compile(KernelId::MaxPool),
            max_pool_backward: compile(KernelId::MaxPoolBackward),
            activation_forward: compile(KernelId::ActivationForward),
            activation_backward: compile(KernelId::ActivationBackward),
            layer_norm: compile(KernelId::LayerNorm),
            layer_norm_backward: compile(KernelId::LayerNormBackward),
            layer_norm_params_grad: compile(KernelId::LayerNormParamsGrad),
            sequence: Default::default(),
        }
    }

    /// The kernel a product of `m × n` outputs runs when `chosen` is the adapter's choice, and
    /// its tile (rows, columns): the chosen variant if the product fills one of its tiles, else
    /// the largest compiled one it fills, else the one-output kernel with `tile` × `tile`.
    pub fn product(
        &self,
        chosen: MatmulChoice,
        (m, n): (usize, usize),
        reads: Reads,
    ) -> (KernelId, (u32, u32)) {
        let pick = pick_variant(self.tiled_variants(), chosen, (m, n));
        if let Some((c, (tm, tn))) = pick.and_then(|c| c.tile().map(|t| (c, t))) {
            (KernelId::MatmulTiled(c, reads), (tm as u32, tn as u32))
        } else {
            let tile = self.sizes.matmul_tile;
            (KernelId::Matmul(reads), (tile, tile))
        }
    }

    /// Compiles the kernel `id` for this device.
    fn compile(&self, id: KernelId) -> Kernel {
        Kernel::new(&self.device, &id.recipe(&self.sizes))
    }

    /// The register-blocked variants compiled for this adapter.
    pub fn tiled_variants(&self) -> impl Iterator<Item = MatmulChoice> + '_ {
        self.matmul_tiled.iter().map(|(c, _)| *c)
    }

    /// The kernel `id`.
    pub fn get(&self, id: KernelId) -> &Kernel {
        match id {
            KernelId::Matmul(reads) => match reads.conv_index() {
                None => &self.matmul,
                Some(i) => self.conv_matmul[i].get_or_init(|| self.compile(id)),
            },
            KernelId::MatmulTiled(choice, reads) => {
                let Some(at) = self.matmul_tiled.iter().position(|(c, _)| *c == choice) else {
                    return self.get(KernelId::Matmul(reads));
                };
                match reads.conv_index() {
                    None => &self.matmul_tiled[at].1,
                    Some(i) => self.conv_tiled[at][i].get_or_init(|| self.compile(id)),
                }
            }
            KernelId::ColumnSum => &self.column_sum,
            KernelId::SoftmaxCrossEntropy => &self.softmax_cross_entropy,
            KernelId::Mse => &self.mse,
            KernelId::Optimizer => &self.optimizer,
            // Asked for only where compiled (`KernelSizes::paired_updates`).
            KernelId::OptimizerPair => self.optimizer_pair.as_ref().unwrap_or(&self.optimizer),
            KernelId::Elementwise => &self.elementwise,
            KernelId::Widen => &self.widen,
            KernelId::Narrow => &self.narrow,
            KernelId::MaxPool => &self.max_pool,
            KernelId::MaxPoolBackward => &self.max_pool_backward,
            KernelId::ActivationForward => &self.activation_forward,
            KernelId::ActivationBackward => &self.activation_backward,
            KernelId::LayerNorm => &self.layer_norm,
            KernelId::LayerNormBackward => &self.layer_norm_backward,
            KernelId::LayerNormParamsGrad => &self.layer_norm_params_grad,
            KernelId::Sequence(kernel) => {
                self.sequence[kernel as usize].get_or_init(|| self.compile(id))
            }
        }
    }
}
