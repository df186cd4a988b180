//! The browser's start: the page's WebAssembly module begins here (`main` in `src/main.rs`
//! calls [`start`] on `wasm32`). `index.html` shows the app in its canvas; with
//! `?selftest=NAME` the page trains that self-test instead and writes its line to the console
//! (see [`crate::train::selftest`]), which `scripts/web.sh test` reads from headless Chromium.
//!
//! Everything that exists only in a browser is here and in `platform/web.rs`; the core is the
//! desktop's.

mod selftest;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::JsValue;

use crate::app::{AppOptions, create_app};

/// The id of the page's canvas (`web/index.html`).
const CANVAS_ID: &str = "batchscope";

/// Starts the page: the self-test its address names, or the app.
pub fn start() {
    let query = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let named = query
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix("selftest="))
        .map(str::to_owned);
    wasm_bindgen_futures::spawn_local(async move {
        let result = match named {
            Some(name) => {
                selftest::run(&name).await;
                Ok(())
            }
            None => start_app().await,
        };
        if let Err(e) = result {
            show_failure(&format!("{e:?}"));
        }
    });
}

/// Runs the app in the page's canvas.
async fn start_app() -> Result<(), JsValue> {
    let canvas = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(CANVAS_ID))
        .ok_or_else(|| JsValue::from_str("the page has no canvas named batchscope"))?
        .dyn_into::<web_sys::HtmlCanvasElement>()?;
    let options = eframe::WebOptions::default();
    eframe::WebRunner::new()
        .start(
            canvas,
            options,
            Box::new(|cc| {
                let app = create_app(cc, AppOptions::default(), (true, false), Vec::new());
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
