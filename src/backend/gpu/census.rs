//! The rounding census on the GPU: every kernel that stores 16-bit results counts, per memory
//! role, the non-zero values it rounded and those that became zero or infinite, into one small
//! buffer of atomic counters (added once per workgroup); `count_non_finite` counts into its last
//! word. Only the counts come back to the host.

use super::dispatch::Binding;
use super::pool::{SharedPool, count_internal};
use crate::memory::Role;
use crate::precision::RoundingCensus;

/// Bytes of the per-role counters: three `u32` per role (non-zero values, lost to zero, lost to
/// infinity).
pub(super) const ROLE_COUNTS_BYTES: u64 = (3 * Role::ALL.len() * 4) as u64;

/// Bytes of the census buffer: the per-role counters, then the count of non-finite values.
const CENSUS_BYTES: u64 = ROLE_COUNTS_BYTES + 4;

/// The census word that counts the values that are not finite.
pub(super) const NON_FINITE_SLOT: u32 = (ROLE_COUNTS_BYTES / 4) as u32;

/// The census buffer's id in cache keys.
const CENSUS_ID: u64 = u64::MAX - 2;

/// The counters on the GPU, and what the host counted itself (values rounded, uploads).
pub(super) struct Census {
    buffer: wgpu::Buffer,
    /// Values rounded per role, counted as the kernels are recorded, and what uploads lost on
    /// the host; the kernels' own counts are added when the buffer is read.
    pub counts: RoundingCensus,
}

impl Census {
    /// A zeroed census buffer, counted among the backend's own buffers.
    pub fn new(device: &wgpu::Device, pool: &SharedPool) -> Self {
        count_internal(pool, CENSUS_BYTES as i64);
        Self {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rounding-census"),
                size: CENSUS_BYTES,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            counts: RoundingCensus::default(),
        }
    }

    /// The buffer as a kernel binds it.
    pub fn binding(&self) -> Binding {
        Binding {
            id: CENSUS_ID,
            buffer: self.buffer.clone(),
        }
    }

    /// Adds the per-role counters read back from the buffer to `census`.
    pub fn add_read_counts(census: &mut RoundingCensus, bytes: &[u8]) {
        let counts: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
        for (c, n) in census.by_role.iter_mut().zip(counts.chunks_exact(3)) {
            c.nonzero += u64::from(n[0]);
            c.underflow += u64::from(n[1]);
            c.overflow += u64::from(n[2]);
        }
    }
}
