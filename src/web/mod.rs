//! The browser's start: the page's WebAssembly module begins here (`main` in `src/main.rs`
//! calls [`start`] on `wasm32`). `index.html` shows the app in its canvas; with
//! `?selftest=NAME` the page trains that self-test instead and writes its line to the console
//! (see [`crate::train::selftest`]), which `scripts/web.sh test` reads from headless Chromium.
//!
//! Everything that exists only in a browser is here and in `platform/web.rs`; the core is the
//! desktop's, with what a page needs of it built for every target (and tested on the desktop):
//! workers that share the caller's thread (`train/handle.rs`), reads that do not wait
//! (`DeviceMemory::start_read`, `GpuBackend::read_async`).

mod selftest;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::JsValue;

use crate::app::{AppOptions, create_app};
use crate::backend::GpuChoice;
use crate::backend::gpu::context::request_device;
use crate::backend::gpu::keep_page_device;
use crate::i18n::Lang;

/// The id of the page's canvas (`web/index.html`).
const CANVAS_ID: &str = "batchscope";

/// Starts the page: the self-test its address names, or the app.
pub fn start() {
    let query = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let named = parameter(&query, "selftest");
    let options = app_options(&query);
    wasm_bindgen_futures::spawn_local(async move {
        let result = match named {
            Some(name) => {
                selftest::run(&name).await;
                Ok(())
            }
            None => start_app(options).await,
        };
        if let Err(e) = result {
            show_failure(&format!("{e:?}"));
        }
    });
}

/// The value of `name` in the page's query string (`?lang=zh&lesson=…`).
fn parameter(query: &str, name: &str) -> Option<String> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

/// The app's start-up options from the address: `lang` (else the browser's language, where it
/// is Chinese) and `lesson`, as the desktop's `--lang` and `--lesson`.
fn app_options(query: &str) -> AppOptions {
    let asked = parameter(query, "lang").and_then(|code| Lang::parse(&code));
    let browser = web_sys::window()
        .and_then(|w| w.navigator().language())
        .filter(|code| code.to_lowercase().starts_with("zh"))
        .map(|_| Lang::Zh);
    AppOptions {
        lang: asked.or(browser).unwrap_or_default(),
        lang_given: asked.is_some(),
        lesson: parameter(query, "lesson"),
        // Asked for in `start_app`, before the app starts.
        gpu: GpuChoice::Page,
        ..AppOptions::default()
    }
}

/// Runs the app in the page's canvas, once WebGPU has answered the page's request for a device
/// (the workers make their backends from it: a page's loop cannot wait for that answer).
async fn start_app(options: AppOptions) -> Result<(), JsValue> {
    keep_page_device(request_device(wgpu::Backends::BROWSER_WEBGPU).await);
    let canvas = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(CANVAS_ID))
        .ok_or_else(|| JsValue::from_str("the page has no canvas named batchscope"))?
        .dyn_into::<web_sys::HtmlCanvasElement>()?;
    eframe::WebRunner::new()
        .start(
            canvas,
            eframe::WebOptions::default(),
            Box::new(|cc| {
                let app = create_app(cc, options, (true, false), Vec::new());
                Ok(Box::new(app))
            }),
        )
        .await
}

/// Says on the page (and in the console) why the app did not start.
fn show_failure(message: &str) {
    web_sys::console::error_1(&JsValue::from_str(message));
    if let Some(status) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("status"))
    {
        status.set_text_content(Some(&format!(
            "BatchScope could not start / BatchScope 无法启动: {message}"
        )));
    }
}
