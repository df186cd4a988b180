//! Activation checkpointing's plan (the article's sixth section: for large models, keep fewer
//! activations and compute them again in the backward pass). The layers are cut into segments
//! of whole blocks; the forward pass keeps only each segment's last output (and any output a
//! later segment's residual connection adds), and the backward pass runs each segment's forward
//! again, last segment first, just before its backward. The recomputed tensors of every segment
//! share one workspace: its buffers are lent to each segment's tensors in turn (a buffer as large
//! as the largest tensor lent it, as a caching allocator would reuse its blocks), so
//! the activations held are the kept outputs plus about one segment's worth, as in PyTorch's
//! `checkpoint_sequential`. The last segment is not recomputed: its tensors are still in the
//! workspace when the backward pass starts.
//!
//! The plan is a pure function of the built layers and the rows, so the estimator reads the very
//! bytes the network allocates.

use std::ops::Range;

use super::layers::Layer;
use crate::backend::{Backend, BackendError, Tensor};
use crate::memory::Role;
use crate::precision::DType;

/// The most blocks a segment may hold.
pub const MAX_CHECKPOINT: u32 = 64;

/// Where a pass's tensor lives under checkpointing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Its own tensor, kept from the forward pass to the backward pass.
    Kept,
    /// Tensor `n` of the shared workspace, written again by each segment that uses it.
    Work(usize),
}

/// A buffer of the shared workspace, lent in turn to each segment's tensors that fit it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WorkTensor {
    pub role: Role,
    /// Values: the most any tensor lent it holds.
    pub values: usize,
    /// Stored as the passes store values (else f32).
    pub pass_format: bool,
}

/// How a checkpointed pass is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Each segment's layers, first first.
    pub segments: Vec<Range<usize>>,
    /// Where each layer's output lives.
    pub outputs: Vec<Place>,
    /// Where each of what each layer keeps for backward lives.
    pub saved: Vec<Vec<Place>>,
    /// The shared workspace.
    pub work: Vec<WorkTensor>,
}

/// The built layers after which a block ends: a transformer block after its second residual
/// connection (it adds to its stream twice), a convolutional block after its pooling, and
/// otherwise (an MLP) every layer. The last layer always ends one.
pub(crate) fn block_ends(layers: &[Box<dyn Layer>]) -> Vec<usize> {
    let indices = |kind: &str| -> Vec<usize> {
        let kinds = layers.iter().enumerate();
        kinds
            .filter(|(_, l)| l.kind() == kind)
            .map(|(i, _)| i)
            .collect()
    };
    let residuals = indices("residual");
    let pools = indices("max_pool2d");
    let mut ends: Vec<usize> = if !residuals.is_empty() {
        residuals.into_iter().skip(1).step_by(2).collect()
    } else if !pools.is_empty() {
        pools
    } else {
        (0..layers.len()).collect()
    };
    if let Some(last) = layers.len().checked_sub(1)
        && ends.last() != Some(&last)
    {
        ends.push(last);
    }
    ends
}

/// The plan for `layers` at `rows` rows, `blocks` blocks a segment (at least 1).
pub(crate) fn plan(layers: &[Box<dyn Layer>], rows: usize, blocks: u32) -> Plan {
    let n = layers.len();
    let ends = block_ends(layers);
    let mut segments = Vec::new();
    let mut start = 0;
    // Where every layer is a block (an MLP), a segment of one would keep every output: at
    // least two.
    let least = if ends.len() == n { 2 } else { 1 };
    let step = (blocks.max(least) as usize).min(ends.len().max(1));
    // The blocks at the end stay whole: grouped from the last, so that a model's head (the
    // layers after its last block) joins the final group, which is never recomputed.
    let mut group_ends: Vec<usize> = ends.iter().rev().step_by(step).copied().collect();
    group_ends.reverse();
    for end in group_ends {
        segments.push(start..end + 1);
        start = end + 1;
    }
    let segment_of = |i: usize| segments.iter().position(|s| s.contains(&i));
    let mut outputs = vec![Place::Kept; n];
    let mut interior = vec![false; n];
    for s in &segments {
        interior[s.start..s.end - 1].fill(true);
    }
    // An output a later segment's residual connection reads stays kept.
    for (j, l) in layers.iter().enumerate() {
        if let Some(from) = l.skip()
            && segment_of(from) != segment_of(j)
            && let Some(slot) = interior.get_mut(from)
        {
            *slot = false;
        }
    }
    // Each segment's tensors in the workspace, as (layer, `None` for its output or what it
    // keeps `j`, values, stored as the passes store values).
    let mut saved: Vec<Vec<Place>> = layers
        .iter()
        .map(|l| vec![Place::Kept; l.saved(rows).len()])
        .collect();
    let mut work: Vec<WorkTensor> = Vec::new();
    for s in &segments {
        let mut tensors: Vec<(usize, Option<usize>, usize, bool)> = Vec::new();
        for i in s.clone() {
            let layer = &layers[i];
            if interior[i] {
                let (r, c) = layer.output(rows);
                tensors.push((i, None, r * c, true));
            }
            let pass_format = layer.saved_in_pass_format();
            for (j, (_, _, (r, c))) in layer.saved(rows).into_iter().enumerate() {
                tensors.push((i, Some(j), r * c, pass_format));
            }
        }
        // Largest first, each into the next buffer of its kind: buffer `n` of a kind is as
        // large as the `n`-th largest tensor of that kind of any segment.
        tensors.sort_by_key(|t| std::cmp::Reverse(t.2));
        let mut next = [0usize; 2];
        for (i, j, values, pass_format) in tensors {
            let n = &mut next[usize::from(pass_format)];
            let of_kind = work.iter().enumerate();
            let found = of_kind
                .filter(|(_, w)| w.pass_format == pass_format)
                .nth(*n);
            let k = if let Some((k, _)) = found {
                k
            } else {
                work.push(WorkTensor {
                    role: Role::Activations,
                    values: 0,
                    pass_format,
                });
                work.len() - 1
            };
            *n += 1;
            work[k].values = work[k].values.max(values);
            match j {
                None => outputs[i] = Place::Work(k),
                Some(j) => saved[i][j] = Place::Work(k),
            }
        }
    }
    Plan {
        segments,
        outputs,
        saved,
        work,
    }
}

impl Plan {
    /// Bytes every activation of a step takes: the kept outputs and the workspace, values in
    /// `passes` bytes (f32 where a layer keeps its statistics in f32).
    pub(crate) fn activation_bytes(
        &self,
        layers: &[Box<dyn Layer>],
        rows: usize,
        passes: u64,
    ) -> u64 {
        let bytes = |shape: (usize, usize), pass_format: bool| {
            (shape.0 * shape.1) as u64 * if pass_format { passes } else { 4 }
        };
        let kept: u64 = layers
            .iter()
            .zip(&self.outputs)
            .filter(|(_, p)| **p == Place::Kept)
            .map(|(l, _)| bytes(l.output(rows), true))
            .sum();
        let work: u64 = self
            .work
            .iter()
            .filter(|w| w.role == Role::Activations)
            .map(|w| bytes((1, w.values), w.pass_format))
            .sum();
        kept + work
    }

    /// The layers each segment runs again in the backward pass: all but the last segment, each
    /// to its last layer, or to the one before where that keeps nothing besides its output.
    pub(crate) fn recomputed(&self, layers: &[Box<dyn Layer>], rows: usize) -> Vec<Range<usize>> {
        let Some((_, earlier)) = self.segments.split_last() else {
            return Vec::new();
        };
        earlier
            .iter()
            .map(|s| {
                let last = s.end - 1;
                let end = if layers[last].saved(rows).is_empty() {
                    last
                } else {
                    s.end
                };
                s.start..end
            })
            .collect()
    }
}

/// What a checkpointed training pass holds as activations, for the estimator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpointed {
    /// Bytes in all: exactly what the network allocates.
    pub bytes: u64,
    /// Segments the layers are cut into.
    pub segments: usize,
    /// Values of the kept outputs.
    pub kept_values: u64,
    /// Values of the shared workspace stored as the passes store values.
    pub work_values: u64,
    /// Bytes of the workspace's f32 statistics (a `LayerNorm`'s).
    pub stats_bytes: u64,
}

/// The activations of `spec` checkpointed at `blocks` blocks a segment for `rows` rows, values
/// of `passes` bytes; `None` for a model that does not build.
pub fn checkpointed(
    spec: &super::spec::ModelSpec,
    rows: usize,
    blocks: u32,
    passes: u64,
) -> Option<Checkpointed> {
    let layers = super::layers::build(&spec.layer_specs(), spec.input_shape()).ok()?;
    let plan = plan(&layers, rows, blocks);
    let values = |shape: (usize, usize)| (shape.0 * shape.1) as u64;
    let kept_values = layers
        .iter()
        .zip(&plan.outputs)
        .filter(|(_, p)| **p == Place::Kept)
        .map(|(l, _)| values(l.output(rows)))
        .sum();
    let activations = plan.work.iter().filter(|w| w.role == Role::Activations);
    let (half, f32s): (Vec<_>, Vec<_>) = activations.partition(|w| w.pass_format);
    Some(Checkpointed {
        bytes: plan.activation_bytes(&layers, rows, passes),
        segments: plan.segments.len(),
        kept_values,
        work_values: half.iter().map(|w| w.values as u64).sum(),
        stats_bytes: f32s.iter().map(|w| w.values as u64 * 4).sum(),
    })
}

/// The layers each recomputed segment of `spec` runs again, checkpointed at `blocks` blocks a
/// segment for `rows` rows (none for a model that does not build).
pub fn recomputed_layers(
    spec: &super::spec::ModelSpec,
    rows: usize,
    blocks: u32,
) -> Vec<Range<usize>> {
    super::layers::build(&spec.layer_specs(), spec.input_shape())
        .map(|layers| plan(&layers, rows, blocks).recomputed(&layers, rows))
        .unwrap_or_default()
}

/// The workspace's tensors, allocated for a training pass stored as `dtype`.
pub(crate) fn alloc_work(
    backend: &mut dyn Backend,
    plan: &Plan,
    dtype: DType,
) -> Result<Vec<Tensor>, BackendError> {
    plan.work
        .iter()
        .enumerate()
        .map(|(k, w)| {
            let dtype = if w.pass_format { dtype } else { DType::F32 };
            let label = format!("recomputed activations {k}");
            backend.alloc_as(w.role, &label, (1, w.values), dtype)
        })
        .collect()
}

/// A checkpointed network's plan, its shared workspace, and what each segment recomputes.
pub(super) struct Checkpointing {
    plan: Plan,
    work: Vec<Tensor>,
    recomputed: Vec<Range<usize>>,
}

impl Checkpointing {
    /// Plans `layers` at `rows` rows, `blocks` blocks a segment, and allocates the workspace.
    pub(super) fn new(
        backend: &mut dyn Backend,
        layers: &[Box<dyn Layer>],
        (rows, blocks): (usize, u32),
        dtype: DType,
    ) -> Result<Self, BackendError> {
        let plan = plan(layers, rows, blocks);
        let work = alloc_work(backend, &plan, dtype)?;
        let recomputed = plan.recomputed(layers, rows);
        Ok(Self {
            plan,
            work,
            recomputed,
        })
    }

    /// The plan the pass was allocated by.
    pub(super) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Each segment's layers, first first.
    pub(super) fn segments(&self) -> &[Range<usize>] {
        &self.plan.segments
    }

    /// The layers segment `s` runs again in the backward pass (none for the last).
    pub(super) fn recomputed(&self, s: usize) -> Option<Range<usize>> {
        self.recomputed.get(s).cloned()
    }

    /// Lends segment `s`'s workspace buffers to its tensors' slots in a pass's `outputs` and
    /// `saved` (`back`: returns them).
    pub(super) fn lend(
        &mut self,
        (outputs, saved): (&mut [Tensor], &mut [Vec<Tensor>]),
        s: usize,
        back: bool,
    ) {
        let Some(segment) = self.plan.segments.get(s) else {
            return;
        };
        for i in segment.clone() {
            let slots = std::iter::once((self.plan.outputs[i], &mut outputs[i]));
            let kept = self.plan.saved[i].iter().copied().zip(&mut saved[i]);
            for (place, slot) in slots.chain(kept) {
                if let Place::Work(k) = place {
                    if back {
                        slot.give_back(&mut self.work[k]);
                    } else {
                        slot.lend_from(&mut self.work[k]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::layers::{LayerSpec, Shape, build};
    use crate::nn::{GptShape, gpt_layers};

    fn gpt(blocks: usize) -> Vec<Box<dyn Layer>> {
        let shape = GptShape {
            vocab: 11,
            width: 8,
            heads: 2,
            blocks,
        };
        let mut list = gpt_layers(shape);
        list.push(LayerSpec::Dense { units: 11 });
        build(&list, Shape::Flat(6)).expect("builds")
    }

    fn mlp(hidden: usize) -> Vec<Box<dyn Layer>> {
        let mut list: Vec<LayerSpec> = (0..hidden)
            .map(|_| LayerSpec::Dense { units: 16 })
            .collect();
        list.push(LayerSpec::Dense { units: 3 });
        build(&list, Shape::Flat(5)).expect("builds")
    }

    /// A GPT is cut after each block's second residual connection: one segment a block (the
    /// embedding with the first), the final `LayerNorm` and the head last; every residual's
    /// stream crosses no cut unkept; all but the last segment are recomputed, each to the layer
    /// before its residual connection (which keeps nothing besides its output).
    #[test]
    fn a_gpt_is_cut_block_by_block() {
        let layers = gpt(3);
        let ends = block_ends(&layers);
        assert_eq!(ends.len(), 4, "three blocks and the head");
        for &e in &ends[..3] {
            assert_eq!(layers[e].kind(), "residual");
        }
        let p = plan(&layers, 4, 1);
        assert_eq!(p.segments.len(), 4);
        assert_eq!(p.segments[0].start, 0);
        assert_eq!(p.segments.last().map(|s| s.end), Some(layers.len()));
        for (i, l) in layers.iter().enumerate() {
            if let Some(from) = l.skip() {
                let same = p
                    .segments
                    .iter()
                    .any(|s| s.contains(&i) && s.contains(&from));
                assert!(
                    same || p.outputs[from] == Place::Kept,
                    "layer {i} reads {from}"
                );
            }
        }
        let again = p.recomputed(&layers, 4);
        assert_eq!(again.len(), 3);
        for (r, s) in again.iter().zip(&p.segments) {
            assert_eq!((r.start, r.end), (s.start, s.end - 1));
        }
        // Two blocks a segment: fewer kept outputs, a larger workspace.
        let two = plan(&layers, 4, 2);
        assert_eq!(two.segments.len(), 2);
        let kept = |p: &Plan| p.outputs.iter().filter(|o| **o == Place::Kept).count();
        assert!(kept(&two) < kept(&p));
    }

    /// An MLP's segments are two layers at least (one would keep every output and save
    /// nothing); its buffers are shared by shape, the largest tensor first.
    #[test]
    fn an_mlp_keeps_every_second_output() {
        let layers = mlp(4);
        let p = plan(&layers, 10, 1);
        assert_eq!(p.segments, vec![0..1, 1..3, 3..5]);
        assert_eq!(p.outputs[0], Place::Kept);
        assert_eq!(p.outputs[1], Place::Work(0));
        assert_eq!(p.outputs[3], Place::Work(0));
        assert_eq!(p.work.len(), 1);
        assert_eq!(p.work[0].values, 10 * 16);
        let bytes = p.activation_bytes(&layers, 10, 4);
        // Kept: layers 0, 2 and 4 (16 + 16 + 3 a row); one shared 16-wide buffer.
        assert_eq!(bytes, 10 * (16 + 16 + 3 + 16) * 4);
        let full: u64 = layers
            .iter()
            .map(|l| {
                let (r, c) = l.output(10);
                (r * c * 4) as u64
            })
            .sum();
        assert!(bytes < full);
    }
}
