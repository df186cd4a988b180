//! `batchscope selftest NAME…`: trains a self-test's configuration on each device and prints
//! the line the browser's page writes to its console for the same name, so `scripts/web.sh
//! test` can compare the page's losses with the desktop build's (see
//! [`crate::train::selftest`]).

use super::failure::Failure;
use super::output::Out;
use crate::backend::{GpuChoice, OpenOptions, open};
use crate::device::Device;
use crate::train::selftest::{self, DeviceReport, Report};

pub(super) fn run(
    out: &mut Out,
    names: &[String],
    steps: u64,
    no_gpu: bool,
) -> Result<(), Failure> {
    if steps == 0 || steps > 10_000 {
        return Err(Failure::BadInput(format!(
            "--steps {steps}: choose 1 to 10000"
        )));
    }
    for name in names {
        let session = selftest::session(name).map_err(Failure::BadInput)?;
        let mut devices = Vec::new();
        for device in Device::ALL {
            let options = OpenOptions {
                gpu: if no_gpu {
                    GpuChoice::Unavailable(crate::i18n::Said::verbatim("--no-gpu"))
                } else {
                    GpuChoice::Auto
                },
                ..OpenOptions::default()
            };
            devices.push(match open(device, &options) {
                Ok(mut backend) => selftest::train(device, backend.as_mut(), &session, steps)
                    .unwrap_or_else(|e| DeviceReport::failed(device, e)),
                Err(e) => DeviceReport::failed(device, e.to_string()),
            });
        }
        let report = Report {
            name: name.clone(),
            steps,
            build: "desktop",
            devices,
        };
        out.line(report.line())?;
    }
    Ok(())
}
