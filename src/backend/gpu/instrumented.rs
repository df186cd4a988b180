//! What the GPU backend is and what it measures of itself: the adapter, spans of its work, kernel
//! times from timestamp queries (see `timing.rs`), and the rounding census (see `census.rs`).

use web_time::Instant;

use super::GpuBackend;
use super::census::{Census, ROLE_COUNTS_BYTES};
use crate::backend::error::BackendError;
use crate::backend::identity::{AdapterSummary, TuningNote};
use crate::backend::params::KernelTimes;
use crate::backend::traits::{Backend, DeviceInfo, Instrumented};
use crate::device::Device;
use crate::precision::RoundingCensus;
use crate::trace::Recorder;

impl DeviceInfo for GpuBackend {
    fn device(&self) -> Device {
        Device::Gpu
    }

    fn name(&self) -> String {
        format!("{} ({})", self.summary.name, self.summary.backend)
    }

    fn adapter_summary(&self) -> Option<AdapterSummary> {
        Some(self.summary.clone())
    }

    fn kernels_launched(&self) -> Option<u64> {
        Some(self.stream.launched)
    }

    fn tuning_notes(&self) -> Vec<TuningNote> {
        self.tuning_notes.clone()
    }

    fn as_dyn(&mut self) -> &mut dyn Backend {
        self
    }
}

impl Instrumented for GpuBackend {
    fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    fn start_recording(&mut self, epoch: Instant) -> Result<(), BackendError> {
        // Finish earlier work so the calibration sees an idle GPU and no old pass is counted.
        self.stream.finish(&mut self.recorder)?;
        self.recorder.start(epoch);
        self.stream.observed.clear();
        // A timer that may not wait (a page's) has no calibration: its kernels stay off the
        // timeline, and their times come to the steps' sums only.
        if let Some(ts) = self.stream.timestamps.as_mut().filter(|ts| ts.waits) {
            ts.collect(&self.stream.device)?;
            ts.calibrate(&self.stream.device, &self.stream.queue, epoch)?;
        }
        Ok(())
    }

    fn stop_recording(&mut self) -> Result<(), BackendError> {
        self.recorder.stop();
        // Timed work recorded so far is submitted; its times are taken in at the next wait.
        self.stream.submit(&mut self.recorder)
    }

    fn time_kernels(&mut self, on: bool) {
        if let Some(ts) = self.stream.timestamps.as_mut() {
            ts.on = on;
        }
    }

    fn kernel_times(&self) -> Option<&KernelTimes> {
        let step_now = self.recorder.step();
        self.stream.timestamps.as_ref()?.latest_step(step_now)
    }

    fn take_rounding_census(&mut self) -> Result<RoundingCensus, BackendError> {
        let mut census = std::mem::take(&mut self.census.counts);
        if census.is_empty() {
            // Nothing was rounded, so the kernels counted nothing either.
            return Ok(census);
        }
        let buffer = self.census.binding().buffer;
        let bytes = self.stream.read_back(
            &mut self.recorder,
            &self.staging,
            &buffer,
            (0, ROLE_COUNTS_BYTES),
            true,
        )?;
        Census::add_read_counts(&mut census, &bytes);
        Ok(census)
    }
}
