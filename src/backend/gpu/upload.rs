//! The upload ring: a few buffers the host keeps mapped (the analogue of CUDA's pinned memory).
//! A batch is copied straight into one, and a copy command in the step's encoder moves it into
//! the tensor; once that work is submitted the buffer is mapped again for the next batch. With
//! three buffers the host fills one while the GPU copies out of the others.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::dispatch::CommandStream;
use super::pool::{SharedPool, count_internal};
use super::readback::wait_idle;
use crate::backend::error::BackendError;
use crate::trace::{Category, Lane, Recorder};

/// Buffers in the staging ring: one being filled while the GPU copies from the others.
const RING_SLOTS: usize = 3;

/// A buffer of the ring: mapped for writing while `ready`.
struct RingSlot {
    buffer: wgpu::Buffer,
    ready: Arc<AtomicBool>,
    /// The submission count when work copying out of it was recorded: while it is still the
    /// stream's count, that work has not been submitted.
    used_in: Option<u64>,
}

/// The ring's buffers, made as large as the batches that pass through them.
#[derive(Default)]
pub(super) struct UploadRing {
    slots: Vec<RingSlot>,
    next: usize,
}

impl UploadRing {
    /// Copies `bytes` into `target` (tensor `target_id`) through the next buffer of the ring.
    pub fn write(
        &mut self,
        stream: &mut CommandStream,
        recorder: &mut Recorder,
        pool: &SharedPool,
        target: &wgpu::Buffer,
        target_id: u64,
        bytes: &[u8],
    ) -> Result<(), BackendError> {
        let size = bytes.len() as u64;
        if size == 0 {
            return Ok(());
        }
        let i = self.next;
        self.next = (i + 1) % RING_SLOTS;
        if self
            .slots
            .get(i)
            .is_some_and(|s| s.used_in == Some(stream.submissions()))
        {
            // Every slot is in the work not yet submitted: submit it so one can come back.
            stream.submit(recorder)?;
        }
        let fits = self.slots.get(i).is_some_and(|s| s.buffer.size() >= size);
        if !fits {
            let old = self.slots.get(i).map_or(0, |s| s.buffer.size());
            let new = size.next_power_of_two().max(256);
            count_internal(pool, new as i64 - old as i64);
            let buffer = stream.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("upload-staging-ring"),
                size: new,
                // MAP_WRITE: the host writes into it directly; COPY_SRC: the GPU copies out.
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            });
            let slot = RingSlot {
                buffer,
                ready: Arc::new(AtomicBool::new(true)),
                used_in: None,
            };
            if i < self.slots.len() {
                self.slots[i] = slot;
            } else {
                self.slots.push(slot);
            }
        }
        if !self.slots[i].ready.load(Ordering::Acquire) {
            // The GPU is still copying out of this buffer: the host must wait to reuse it.
            let start = recorder.now_ns();
            wait_idle(&stream.device)?;
            recorder.span(
                Lane::Sync,
                Category::Sync,
                "wait for a free staging buffer",
                start,
                0,
            );
            if !self.slots[i].ready.load(Ordering::Acquire) {
                return Err(BackendError::Gpu(
                    "a staging buffer did not come back after the GPU finished".into(),
                ));
            }
        }
        let start = recorder.now_ns();
        let slot = &mut self.slots[i];
        {
            let mut view = slot
                .buffer
                .get_mapped_range_mut(..size)
                .map_err(|e| BackendError::Gpu(format!("writing a staging buffer failed: {e}")))?;
            view.copy_from_slice(bytes);
        }
        slot.buffer.unmap();
        slot.ready.store(false, Ordering::Release);
        slot.used_in = Some(stream.submissions());
        let source = slot.buffer.clone();
        stream.remap_after_submit(source.clone(), Arc::clone(&slot.ready));
        stream
            .encoder("training-step")
            .copy_buffer_to_buffer(&source, 0, target, 0, size);
        stream.uses([target_id]);
        recorder.span(
            Lane::Transfer,
            Category::Memcpy,
            "copy into mapped staging buffer",
            start,
            size,
        );
        Ok(())
    }
}
