//! Kernel times from GPU timestamp queries, and how they are put on the host's time axis.
//!
//! Each timed compute pass writes a timestamp when it begins and one when it ends into a query
//! set. At each submission the new queries are resolved into a buffer and copied into a mappable
//! one (wgpu's path: `QuerySet` → resolve buffer → mappable copy); the copy is mapped only after
//! the training thread has waited for the GPU anyway, so timing adds no sync of its own unless
//! the query set fills up between two syncs.
//!
//! A timestamp counts ticks of the GPU's own clock from an unknown origin. To draw kernels beside
//! host spans, [`Timestamps::calibrate`] submits a pass that only writes a timestamp while the
//! GPU is idle, and notes the host clock just before the submission and just after the wait: the
//! GPU's tick happened between the two, so the midpoint maps it onto the host axis to within half
//! that interval (the best of a few tries is kept, and the calibration is repeated now and then
//! as the two clocks drift apart).

use std::time::Instant;

use crate::backend::BackendError;
use crate::trace::ns_since;

/// Queries in the set: wgpu's maximum.
const QUERY_CAPACITY: u32 = 4096;
/// Resolve destinations must be 256-byte aligned: queries are resolved in blocks of 32.
const RESOLVE_BLOCK: u32 = 32;
/// The last block is the calibration's.
const CALIBRATION_QUERY: u32 = QUERY_CAPACITY - RESOLVE_BLOCK;
/// Seconds after which a recording recalibrates at its next sync.
const RECALIBRATE_AFTER_S: f64 = 1.0;

/// What the timestamps are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// No pass is timed.
    Off,
    /// The passes until the next [`Timestamps::collect`] are timed (one step's kernel total).
    OneStep,
    /// Every pass is timed, for the trace.
    Record,
}

/// One timed pass, on the GPU's clock.
#[derive(Clone, Copy, Debug)]
pub(super) struct TimedPass {
    pub label: &'static str,
    pub step: u64,
    /// Begin and end, in ns of the GPU's clock.
    pub gpu_ns: [f64; 2],
}

/// Host-clock offset of the GPU clock: `host_ns = gpu_ns + offset_ns`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Calibration {
    pub offset_ns: f64,
    /// Half the host interval the GPU's tick fell in.
    pub uncertainty_ns: f64,
    made: Instant,
}

pub(super) struct Timestamps {
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    period_ns: f64,
    /// Label and step of the pass whose queries are `2i` and `2i + 1`.
    passes: Vec<(&'static str, u64)>,
    /// Queries resolved and copied so far.
    resolved: u32,
    pub mode: Mode,
    /// While recording: whether the passes of the current step are timed.
    pub sampled: bool,
    pub calibration: Option<Calibration>,
}

impl Timestamps {
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let bytes = u64::from(QUERY_CAPACITY) * 8;
        Self {
            query_set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel-timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERY_CAPACITY,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp-resolve"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp-readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            period_ns: f64::from(queue.get_timestamp_period()),
            passes: Vec::new(),
            resolved: 0,
            mode: Mode::Off,
            sampled: true,
            calibration: None,
        }
    }

    /// True when no further pass fits before the next collect.
    pub fn is_full(&self) -> bool {
        self.mode != Mode::Off && (self.passes.len() as u32 + 1) * 2 > CALIBRATION_QUERY
    }

    /// Passes timed and not yet collected.
    pub fn pending(&self) -> usize {
        self.passes.len()
    }

    /// The timestamp writes of the next pass, when passes are timed and one more fits.
    pub fn writes(
        &mut self,
        label: &'static str,
        step: u64,
    ) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        if self.mode == Mode::Off || (self.mode == Mode::Record && !self.sampled) || self.is_full()
        {
            return None;
        }
        let index = self.passes.len() as u32 * 2;
        self.passes.push((label, step));
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.query_set,
            beginning_of_pass_write_index: Some(index),
            end_of_pass_write_index: Some(index + 1),
        })
    }

    /// Records the resolve and copy of the queries written since the last call.
    pub fn resolve_pending(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let written = self.passes.len() as u32 * 2;
        if written <= self.resolved {
            return;
        }
        // Re-resolving the start of a block that was resolved already is harmless: those
        // queries have not been written again since.
        let first = self.resolved / RESOLVE_BLOCK * RESOLVE_BLOCK;
        let offset = u64::from(first) * 8;
        let size = u64::from(written - first) * 8;
        encoder.resolve_query_set(&self.query_set, first..written, &self.resolve, offset);
        encoder.copy_buffer_to_buffer(&self.resolve, offset, &self.readback, offset, size);
        self.resolved = written;
    }

    /// Reads the timed passes back and starts over. Call after a flush and a wait, when every
    /// timed pass has been resolved and has run.
    pub fn collect(&mut self, device: &wgpu::Device) -> Result<Vec<TimedPass>, BackendError> {
        let done = (self.resolved / 2) as usize;
        if done == 0 {
            return Ok(Vec::new());
        }
        let bytes = map_read(device, &self.readback, 0..u64::from(self.resolved) * 8)?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        let timed = self.passes[..done]
            .iter()
            .zip(ticks.chunks_exact(2))
            .map(|(&(label, step), t)| TimedPass {
                label,
                step,
                gpu_ns: [
                    t[0] as f64 * self.period_ns,
                    t[1].max(t[0]) as f64 * self.period_ns,
                ],
            })
            .collect();
        self.passes.clear();
        self.resolved = 0;
        Ok(timed)
    }

    /// Whether the calibration is missing or old enough to repeat.
    pub fn needs_calibration(&self) -> bool {
        self.calibration
            .is_none_or(|c| c.made.elapsed().as_secs_f64() > RECALIBRATE_AFTER_S)
    }

    /// Measures the GPU clock's offset from the host clock `epoch` (the GPU must be idle).
    pub fn calibrate(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        epoch: Instant,
    ) -> Result<Calibration, BackendError> {
        let offset = u64::from(CALIBRATION_QUERY) * 8;
        let mut best: Option<Calibration> = None;
        for _ in 0..3 {
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("clock-calibration"),
            });
            {
                // A pass with no work whose only effect is the timestamp at its start.
                let _pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("clock-calibration"),
                    timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                        query_set: &self.query_set,
                        beginning_of_pass_write_index: Some(CALIBRATION_QUERY),
                        end_of_pass_write_index: None,
                    }),
                });
            }
            encoder.resolve_query_set(
                &self.query_set,
                CALIBRATION_QUERY..CALIBRATION_QUERY + 1,
                &self.resolve,
                offset,
            );
            encoder.copy_buffer_to_buffer(&self.resolve, offset, &self.readback, offset, 8);
            let before = ns_since(epoch) as f64;
            queue.submit([encoder.finish()]);
            wait_idle(device)?;
            let after = ns_since(epoch) as f64;
            let bytes = map_read(device, &self.readback, offset..offset + 8)?;
            let tick: u64 = bytemuck::pod_read_unaligned(&bytes[..8]);
            let gpu_ns = tick as f64 * self.period_ns;
            let candidate = Calibration {
                offset_ns: f64::midpoint(before, after) - gpu_ns,
                uncertainty_ns: (after - before) / 2.0,
                made: Instant::now(),
            };
            if best.is_none_or(|b| candidate.uncertainty_ns < b.uncertainty_ns) {
                best = Some(candidate);
            }
        }
        let best = best.ok_or_else(|| BackendError::Gpu("no calibration was made".into()))?;
        self.calibration = Some(best);
        Ok(best)
    }
}

/// Maps `range` of `buffer` for reading, waits for the GPU, and returns the bytes.
pub(super) fn map_read(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    range: std::ops::Range<u64>,
) -> Result<Vec<u8>, BackendError> {
    let slice = buffer.slice(range);
    map_for_reading(device, &slice)?;
    copy_mapped(buffer, &slice)
}

/// Copies the mapped `slice` of `buffer` to the host and unmaps the buffer.
pub(super) fn copy_mapped(
    buffer: &wgpu::Buffer,
    slice: &wgpu::BufferSlice<'_>,
) -> Result<Vec<u8>, BackendError> {
    let bytes = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| BackendError::Gpu(format!("reading a mapped buffer failed: {e}")))?;
        view.to_vec()
    };
    buffer.unmap();
    Ok(bytes)
}

/// Waits until the GPU has finished everything submitted to it.
pub(super) fn wait_idle(device: &wgpu::Device) -> Result<(), BackendError> {
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(|_| ())
        .map_err(|e| BackendError::Gpu(format!("waiting for the GPU failed: {e}")))
}

/// Asks for `slice` to be mapped for reading and waits until it is (which waits for the GPU).
pub(super) fn map_for_reading(
    device: &wgpu::Device,
    slice: &wgpu::BufferSlice<'_>,
) -> Result<(), BackendError> {
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = tx.send(result);
    });
    wait_idle(device)?;
    match rx.recv() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(BackendError::Gpu(format!("mapping a buffer failed: {e}"))),
        Err(_) => Err(BackendError::Gpu(
            "the GPU never finished mapping a buffer".into(),
        )),
    }
}
