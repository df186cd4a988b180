//! Every kernel, as its recipe gives it, translated by naga (the shader compiler wgpu uses) to
//! what each native API runs — SPIR-V for Vulkan, MSL for Metal, HLSL for DX12 — and checked
//! against WebGPU's default limits. The test machines run lavapipe, whose limits are generous:
//! a kernel that needs more than WebGPU promises, or that one backend cannot express, fails
//! here rather than on a student's Mac, a Windows laptop or in a browser.

use naga::back::{PipelineConstants, hlsl, msl, spv};
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{AddressSpace, Module, ShaderStage};

use super::kernels::{KernelId, Reads, SequenceKernel};
use super::recipe::Recipe;
use crate::backend::identity::{KernelSizes, MatmulChoice};

/// Every kernel an adapter with `sizes` may compile, the register-blocked products of each
/// variant whether or not this adapter's limits run it.
fn every_kernel(sizes: &KernelSizes) -> Vec<KernelId> {
    let reads = [Reads::Strides]
        .into_iter()
        .chain(Reads::CONV)
        .collect::<Vec<_>>();
    let mut ids: Vec<KernelId> = reads.iter().map(|&r| KernelId::Matmul(r)).collect();
    for choice in MatmulChoice::ALL
        .into_iter()
        .filter(|c| c.blocks().is_some())
    {
        ids.extend(reads.iter().map(|&r| KernelId::MatmulTiled(choice, r)));
    }
    ids.extend([
        KernelId::ColumnSum,
        KernelId::SoftmaxCrossEntropy,
        KernelId::Mse,
        KernelId::Optimizer,
        KernelId::Elementwise,
        KernelId::Widen,
        KernelId::Narrow,
        KernelId::MaxPool,
        KernelId::MaxPoolBackward,
        KernelId::ActivationForward,
        KernelId::ActivationBackward,
        KernelId::LayerNorm,
        KernelId::LayerNormBackward,
        KernelId::LayerNormParamsGrad,
    ]);
    ids.extend(SequenceKernel::ALL.map(KernelId::Sequence));
    if sizes.paired_updates {
        ids.push(KernelId::OptimizerPair);
    }
    ids
}

/// A kernel with its overrides set, as a pipeline compiles it.
struct Compiled {
    module: Module,
    info: ModuleInfo,
    entry: usize,
}

/// Parses, validates and sets the pipeline constants of `recipe`, or says why it cannot.
fn compile(recipe: &Recipe) -> Result<Compiled, String> {
    let module = naga::front::wgsl::parse_str(&recipe.source)
        .map_err(|e| format!("does not parse: {}", e.emit_to_string(&recipe.source)))?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .map_err(|e| format!("is not valid: {}", e.emit_to_string(&recipe.source)))?;
    let mut constants = PipelineConstants::default();
    for &(name, value) in &recipe.constants {
        constants.insert(name.to_owned(), value);
    }
    let stage = (ShaderStage::Compute, recipe.entry_point);
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, Some(stage), &constants)
            .map_err(|e| format!("its constants cannot be set: {e}"))?;
    let entry = module
        .entry_points
        .iter()
        .position(|ep| ep.name == recipe.entry_point)
        .ok_or("has no such entry point")?;
    Ok(Compiled {
        module: module.into_owned(),
        info: info.into_owned(),
        entry,
    })
}

/// What the kernel asks of an adapter's limits, each over `limits` named.
fn over_limits(c: &Compiled, limits: &wgpu::Limits) -> Vec<String> {
    let mut over = Vec::new();
    let [x, y, z] = c.module.entry_points[c.entry].workgroup_size;
    let invocations = x * y * z;
    if invocations > limits.max_compute_invocations_per_workgroup {
        over.push(format!("{invocations} invocations a workgroup"));
    }
    if x > limits.max_compute_workgroup_size_x
        || y > limits.max_compute_workgroup_size_y
        || z > limits.max_compute_workgroup_size_z
    {
        over.push(format!("a workgroup of {x} × {y} × {z}"));
    }
    let uses = c.info.get_entry_point(c.entry);
    let used = c
        .module
        .global_variables
        .iter()
        .filter(|&(handle, _)| !uses[handle].is_empty())
        .map(|(_, var)| var);
    let (mut storage, mut uniform, mut workgroup_bytes) = (0, 0, 0);
    for var in used {
        match var.space {
            AddressSpace::Storage { .. } => storage += 1,
            AddressSpace::Uniform => uniform += 1,
            AddressSpace::WorkGroup => {
                workgroup_bytes += c.module.types[var.ty].inner.size(c.module.to_ctx());
            }
            _ => {}
        }
    }
    if storage > limits.max_storage_buffers_per_shader_stage {
        over.push(format!("{storage} storage buffers"));
    }
    if uniform > limits.max_uniform_buffers_per_shader_stage {
        over.push(format!("{uniform} uniform buffers"));
    }
    if workgroup_bytes > limits.max_compute_workgroup_storage_size {
        over.push(format!("{workgroup_bytes} bytes of workgroup memory"));
    }
    over
}

/// The kernel in SPIR-V, MSL and HLSL; the first backend that refuses it, with why.
fn translate(c: &Compiled, entry_point: &str) -> Result<(), String> {
    let stage = ShaderStage::Compute;
    let words = spv::write_vec(
        &c.module,
        &c.info,
        &spv::Options::default(),
        Some(&spv::PipelineOptions {
            shader_stage: stage,
            entry_point: entry_point.to_owned(),
        }),
    )
    .map_err(|e| format!("SPIR-V (Vulkan): {e}"))?;
    // SPIR-V's magic number first.
    if words.first() != Some(&0x0723_0203) {
        return Err("SPIR-V (Vulkan): no module written".into());
    }
    let (metal, _) = msl::write_string(
        &c.module,
        &c.info,
        // Metal 2.1: macOS 10.14 and iOS 12, below what wgpu's Metal backend requires.
        &msl::Options {
            lang_version: (2, 1),
            ..msl::Options::default()
        },
        &msl::PipelineOptions {
            entry_point: Some((stage, entry_point.to_owned())),
            ..msl::PipelineOptions::default()
        },
    )
    .map_err(|e| format!("MSL (Metal): {e}"))?;
    if !metal.contains("kernel void") {
        return Err("MSL (Metal): no kernel written".into());
    }
    let mut hlsl_text = String::new();
    let options = hlsl::Options {
        // DX12's shader model 6.0, what wgpu compiles with DXC.
        shader_model: hlsl::ShaderModel::V6_0,
        ..hlsl::Options::default()
    };
    let pipeline = hlsl::PipelineOptions {
        entry_point: Some((stage, entry_point.to_owned())),
    };
    hlsl::Writer::new(&mut hlsl_text, &options, &pipeline)
        .write(&c.module, &c.info, None)
        .map_err(|e| format!("HLSL (DX12): {e}"))?;
    if !hlsl_text.contains("[numthreads(") {
        return Err("HLSL (DX12): no compute shader written".into());
    }
    Ok(())
}

/// What is wrong with the kernel `recipe` describes, if anything.
fn check(recipe: &Recipe, limits: &wgpu::Limits) -> Result<(), String> {
    let compiled = compile(recipe)?;
    let over = over_limits(&compiled, limits);
    if !over.is_empty() {
        return Err(format!(
            "needs more than WebGPU's limits: {}",
            over.join(", ")
        ));
    }
    translate(&compiled, recipe.entry_point)
}

#[test]
fn every_kernel_translates_to_spirv_msl_and_hlsl_within_webgpus_limits() {
    // wgpu's default limits are WebGPU's defaults.
    let webgpu = wgpu::Limits::default();
    assert_eq!(webgpu.max_storage_buffers_per_shader_stage, 8);
    assert_eq!(webgpu.max_compute_workgroup_storage_size, 16 << 10);
    assert_eq!(webgpu.max_compute_invocations_per_workgroup, 256);
    // The sizes a WebGPU-default hardware adapter gets, and an adapter at the lowest limits.
    for sizes in [
        KernelSizes::for_adapter(&webgpu, false),
        KernelSizes::for_adapter(&wgpu::Limits::downlevel_defaults(), true),
    ] {
        let ids = every_kernel(&sizes);
        assert!(ids.len() >= 20, "{} kernels", ids.len());
        let failures: Vec<String> = ids
            .into_iter()
            .map(|id| id.recipe(&sizes))
            .filter_map(|r| {
                check(&r, &webgpu)
                    .err()
                    .map(|e| format!("{}: {e}", r.label))
            })
            .collect();
        assert!(failures.is_empty(), "{sizes:?}:\n{}", failures.join("\n"));
    }
}

#[test]
fn a_kernel_over_webgpus_limits_or_broken_is_named() {
    let sizes = KernelSizes::for_adapter(&wgpu::Limits::default(), false);
    let good = KernelId::Elementwise.recipe(&sizes);
    let webgpu = wgpu::Limits::default();
    assert_eq!(check(&good, &webgpu), Ok(()));
    // 512 invocations a workgroup: valid WGSL that WebGPU does not promise to run.
    let wide = Recipe {
        constants: vec![("WORKGROUP", 512.0)],
        ..KernelId::Elementwise.recipe(&sizes)
    };
    let err = check(&wide, &webgpu).expect_err("over the limit");
    assert!(err.contains("512 invocations"), "{err}");
    // A shader that uses a name it never declares does not get past the parser.
    let broken = Recipe {
        source: good.source.clone() + "\nfn broken() -> f32 { return undeclared; }\n",
        ..KernelId::Elementwise.recipe(&sizes)
    };
    let err = check(&broken, &webgpu).expect_err("a parse error");
    assert!(
        err.contains("does not parse") && err.contains("undeclared"),
        "{err}"
    );
}
