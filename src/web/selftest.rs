//! The self-test page: the CPU trains first (on the page's thread, blocking it for the few
//! hundred milliseconds the named configuration takes), then the GPU through WebGPU with every
//! read awaited; one line goes to the console either way, failures included.

use wasm_bindgen::prelude::JsValue;

use crate::backend::gpu::GpuBackend;
use crate::backend::{OpenOptions, open};
use crate::device::Device;
use crate::train::selftest::{self, DeviceReport, Report, STEPS};

/// Trains the self-test named `name` on each device and writes the report's line.
pub async fn run(name: &str) {
    let report = match selftest::session(name) {
        Ok(session) => {
            let cpu = match open(Device::Cpu, &OpenOptions::default()) {
                Ok(mut cpu) => selftest::train(Device::Cpu, cpu.as_mut(), &session, STEPS)
                    .unwrap_or_else(|e| DeviceReport::failed(Device::Cpu, e)),
                Err(e) => DeviceReport::failed(Device::Cpu, e.to_string()),
            };
            let gpu = match GpuBackend::new_async(wgpu::Backends::BROWSER_WEBGPU).await {
                Ok(mut gpu) => selftest::train_awaiting(&mut gpu, &session, STEPS)
                    .await
                    .unwrap_or_else(|e| DeviceReport::failed(Device::Gpu, e)),
                Err(e) => DeviceReport::failed(Device::Gpu, e.reason.to_string()),
            };
            vec![cpu, gpu]
        }
        Err(e) => vec![DeviceReport::failed(Device::Cpu, e)],
    };
    let line = Report {
        name: name.to_owned(),
        steps: STEPS,
        build: "browser",
        devices: report,
    }
    .line();
    web_sys::console::log_1(&JsValue::from_str(&line));
    if let Some(status) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("status"))
    {
        status.set_text_content(Some(&line));
    }
}
