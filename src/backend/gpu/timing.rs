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
//!
//! Timing is one mechanism whether or not spans are recorded: the training loop says which steps'
//! kernels are timed ([`Timestamps::on`]); whatever was timed is taken in at the next wait, becomes
//! spans while recording, and is summed per step so the latest fully timed step's kernel time is
//! always known. Where the adapter has no timestamps, [`HostObserved`] stands in for the spans:
//! each submission from when it was submitted until the host saw it done (an upper bound).

use std::sync::{Arc, Mutex};
use web_time::Instant;

use super::readback::{MapAnswer, copy_mapped, look_at, map_read, request_slice_map, wait_idle};
use crate::backend::error::BackendError;
use crate::backend::params::KernelTimes;
use crate::trace::{Category, Clock, Lane, Recorder, Span, ns_since};

/// Queries in the set: wgpu's maximum.
const QUERY_CAPACITY: u32 = 4096;
/// Resolve destinations must be 256-byte aligned: queries are resolved in blocks of 32.
const RESOLVE_BLOCK: u32 = 32;
/// The last block is the calibration's.
const CALIBRATION_QUERY: u32 = QUERY_CAPACITY - RESOLVE_BLOCK;
/// Seconds after which a recording recalibrates at its next sync.
const RECALIBRATE_AFTER_S: f64 = 1.0;

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

/// Timed passes whose readback buffer is being mapped, where the timer may not wait (a
/// browser's page): taken in at a later look.
struct InFlight {
    buffer: wgpu::Buffer,
    answer: MapAnswer,
    passes: Vec<(&'static str, u64)>,
    resolved: u32,
    /// The query set was full: the last step's passes may be only some of them.
    full: bool,
}

pub(super) struct Timestamps {
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Whether reading the timestamps back may wait for the GPU (a page's may not: its
    /// readback is mapped without waiting and taken in later, into a second buffer meanwhile).
    pub waits: bool,
    in_flight: Option<InFlight>,
    /// The second readback buffer, while it is not in flight.
    spare: Option<wgpu::Buffer>,
    period_ns: f64,
    /// Label and step of the pass whose queries are `2i` and `2i + 1`.
    passes: Vec<(&'static str, u64)>,
    /// Queries resolved and copied so far.
    resolved: u32,
    /// Whether the passes recorded from now on are timed.
    pub on: bool,
    pub calibration: Option<Calibration>,
    /// The step whose timed passes are being summed, and their times so far.
    current: Option<(u64, KernelTimes)>,
    /// The latest step before it whose passes were timed.
    last: Option<KernelTimes>,
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
            readback: readback_buffer(device),
            waits: true,
            in_flight: None,
            spare: None,
            period_ns: f64::from(queue.get_timestamp_period()),
            passes: Vec::new(),
            resolved: 0,
            on: false,
            calibration: None,
            current: None,
            last: None,
        }
    }

    /// Bytes of the query set's resolve and readback buffers.
    pub const BUFFER_BYTES: u64 = 2 * QUERY_CAPACITY as u64 * 8;

    /// From now on, never waits to read the timestamps back (a browser's page): a second
    /// readback buffer, of the bytes returned, takes the passes while the first is mapped.
    pub fn never_wait(&mut self, device: &wgpu::Device) -> u64 {
        self.waits = false;
        self.spare = Some(readback_buffer(device));
        u64::from(QUERY_CAPACITY) * 8
    }

    /// True when no further pass fits before the next collect.
    pub fn is_full(&self) -> bool {
        self.on && (self.passes.len() as u32 + 1) * 2 > CALIBRATION_QUERY
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
        if !self.on || self.is_full() {
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

    /// Reads the timed passes back, adds them to their steps' kernel times, and starts over.
    /// Call after a flush and a wait, when every timed pass has been resolved and has run.
    pub fn collect(&mut self, device: &wgpu::Device) -> Result<Vec<TimedPass>, BackendError> {
        let done = (self.resolved / 2) as usize;
        if done == 0 {
            return Ok(Vec::new());
        }
        let bytes = map_read(device, &self.readback, 0..u64::from(self.resolved) * 8)?;
        let timed = self.timed(&self.passes[..done], &bytes);
        self.passes.clear();
        self.resolved = 0;
        self.tally(&timed);
        Ok(timed)
    }

    /// The passes `passes` whose queries' ticks are `bytes`, on the GPU's clock in ns.
    fn timed(&self, passes: &[(&'static str, u64)], bytes: &[u8]) -> Vec<TimedPass> {
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(bytes);
        passes
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
            .collect()
    }

    /// [`Timestamps::take_in`] for a timer that may not wait: the batch in flight, if its
    /// readback is mapped by now, is summed per step; then, if none is in flight, the passes
    /// resolved so far (the GPU has run them, or will before the map is answered) go in
    /// flight, and the next passes resolve into the other buffer. No spans: placing them on
    /// the host's clock needs a calibration that waits.
    fn take_in_later(&mut self, device: &wgpu::Device) -> Result<(), BackendError> {
        if let Some(flight) = &self.in_flight {
            let Some(answer) = look_at(device, &flight.answer) else {
                return Ok(());
            };
            answer?;
            if let Some(mut flight) = self.in_flight.take() {
                let size = u64::from(flight.resolved) * 8;
                let bytes = copy_mapped(&flight.buffer, &flight.buffer.slice(0..size))?;
                if flight.full
                    && let Some(&(_, last)) = flight.passes.last()
                {
                    flight.passes.retain(|&(_, step)| step != last);
                }
                let timed = self.timed(&flight.passes, &bytes);
                self.tally(&timed);
                self.spare = Some(flight.buffer);
            }
        }
        let resolved_all = self.resolved == self.passes.len() as u32 * 2;
        if self.in_flight.is_some() || self.passes.is_empty() || !resolved_all {
            return Ok(());
        }
        let Some(spare) = self.spare.take() else {
            return Ok(());
        };
        let buffer = std::mem::replace(&mut self.readback, spare);
        let answer = request_slice_map(&buffer.slice(0..u64::from(self.resolved) * 8));
        self.in_flight = Some(InFlight {
            buffer,
            answer,
            full: self.is_full(),
            passes: std::mem::take(&mut self.passes),
            resolved: std::mem::take(&mut self.resolved),
        });
        Ok(())
    }

    /// Sums the passes by step. A step's sum is complete once the training thread has moved on
    /// to another step (a query set that fills up in the middle of a step is collected twice).
    fn tally(&mut self, passes: &[TimedPass]) {
        for pass in passes {
            let ns = (pass.gpu_ns[1] - pass.gpu_ns[0]) as u64;
            match &mut self.current {
                Some((step, times)) if *step == pass.step => {
                    times.kernels.push((pass.label.to_owned(), ns));
                    times.total_ns += ns;
                }
                current => {
                    let times = KernelTimes {
                        kernels: vec![(pass.label.to_owned(), ns)],
                        total_ns: ns,
                    };
                    if let Some((_, done)) = current.replace((pass.step, times)) {
                        self.last = Some(done);
                    }
                }
            }
        }
    }

    /// Forgets the steps' kernel times so far (passes timed outside training, by the tuning).
    pub fn forget_steps(&mut self) {
        self.current = None;
        self.last = None;
    }

    /// The kernels of the latest step whose passes were all timed and taken in, while the
    /// training thread is in step `step_now` (0 between steps).
    pub fn latest_step(&self, step_now: u64) -> Option<&KernelTimes> {
        match &self.current {
            Some((step, times)) if *step != step_now => Some(times),
            _ => self.last.as_ref(),
        }
    }

    /// Takes in the passes the GPU has finished (after a wait): summed per step, and while
    /// `recorder` records, put on the host's axis as spans (recalibrating the clocks when it is
    /// time to).
    pub fn take_in(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        recorder: &mut Recorder,
    ) -> Result<(), BackendError> {
        if !self.waits {
            return self.take_in_later(device);
        }
        if self.pending() == 0 {
            return Ok(());
        }
        let start = recorder.now_ns();
        let passes = self.collect(device)?;
        if !recorder.enabled() {
            return Ok(());
        }
        if self.needs_calibration() {
            let t = recorder.now_ns();
            self.calibrate(device, queue, recorder.epoch())?;
            recorder.span(
                Lane::Main,
                Category::CpuExec,
                "clock calibration (tracing)",
                t,
                0,
            );
        }
        let offset = self.calibration.map_or(0.0, |c| c.offset_ns);
        for pass in passes {
            let start_ns = (pass.gpu_ns[0] + offset).max(0.0) as u64;
            let end_ns = (pass.gpu_ns[1] + offset).max(0.0) as u64;
            recorder.push(Span {
                lane: Lane::Kernels,
                category: Category::Kernel,
                name: pass.label,
                start_ns,
                duration_ns: end_ns.saturating_sub(start_ns),
                bytes: 0,
                step: pass.step,
                clock: Clock::GpuTimestamp,
            });
        }
        recorder.span(
            Lane::Main,
            Category::CpuExec,
            "read kernel timestamps (tracing)",
            start,
            0,
        );
        Ok(())
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

/// A buffer the resolved timestamps are copied into and read back from.
fn readback_buffer(device: &wgpu::Device) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("timestamp-readback"),
        size: u64::from(QUERY_CAPACITY) * 8,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A submission seen from the host, where the adapter has no timestamps: when it was submitted
/// and when the host first saw it done (ns since the recording's epoch), and its step.
type Observed = (u64, u64, u64);

/// Submissions seen from the host, where the adapter has no timestamp queries: each one's span
/// runs from its submission until the host saw it done, an upper bound of the GPU's work.
#[derive(Default)]
pub(super) struct HostObserved {
    /// Submissions completed since the last look (the queue's callbacks add to it).
    done: Arc<Mutex<Vec<Observed>>>,
    /// End of the last span, so that the next starts after it.
    end_ns: u64,
}

impl HostObserved {
    /// Asks the queue to note when the work submitted at `start_ns` is done.
    pub fn watch(&self, queue: &wgpu::Queue, recorder: &Recorder, start_ns: u64) {
        let (done, epoch, step) = (Arc::clone(&self.done), recorder.epoch(), recorder.step());
        queue.on_submitted_work_done(move || {
            if let Ok(mut list) = done.lock() {
                list.push((start_ns, ns_since(epoch), step));
            }
        });
    }

    /// Forgets what was seen (a new recording starts).
    pub fn clear(&mut self) {
        if let Ok(mut list) = self.done.lock() {
            list.clear();
        }
        self.end_ns = 0;
    }

    /// Turns the submissions seen done into spans, drawn hollow as upper bounds.
    pub fn take_in(&mut self, recorder: &mut Recorder) {
        let done: Vec<Observed> = match self.done.lock() {
            Ok(mut list) => std::mem::take(&mut *list),
            Err(_) => return,
        };
        for (submitted, seen_done, step) in done {
            let start_ns = submitted.max(self.end_ns);
            self.end_ns = seen_done.max(start_ns);
            recorder.push(Span {
                lane: Lane::Kernels,
                category: Category::Kernel,
                name: "GPU work (host-observed)",
                start_ns,
                duration_ns: self.end_ns - start_ns,
                bytes: 0,
                step,
                clock: Clock::HostObserved,
            });
        }
    }
}
