//! A browser's files: its picker and files dropped on the page, read into memory and held
//! ([`crate::platform::held`]), where every reader looks before the (absent) disk; and what the
//! app saves, handed to the user as a download.
//!
//! Written on web-sys rather than through rfd's page dialog: rfd's reads a file with `unwrap`s
//! (a read the browser refuses would abort the page), puts up an overlay of its own, and reads
//! a file of any size. Here a file larger than any reader accepts is not read at all (its
//! reader refuses it by its size, as on the desktop), a failed read is said in the browser's
//! words, and a cancel is a cancel.

use std::sync::Arc;

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_futures::JsFuture;

use super::super::{Answer, Pick};
use crate::platform::held::{self, Held, MOST_READ};

/// Shows the browser's file picker (several files at once) and, once the user chose, reads
/// the files, holds them and answers the first one's path. Some browsers do not say when their
/// picker was cancelled: the caller must not wait on the answer (a new Open… replaces it).
pub(in crate::platform) fn pick_later(request: Pick<'_>, answer: Answer) {
    let Some(input) = file_input(&accept(request.filters)) else {
        answer(None);
        return;
    };
    let (tx, rx) = async_channel::bounded::<bool>(2);
    let signal = |chosen: bool| {
        let tx = tx.clone();
        Closure::<dyn FnMut()>::new(move || {
            let _ = tx.try_send(chosen);
        })
    };
    let (chosen, cancelled) = (signal(true), signal(false));
    let listen = |event: &str, handler: &Closure<dyn FnMut()>| {
        input
            .add_event_listener_with_callback(event, handler.as_ref().unchecked_ref())
            .is_ok()
    };
    if !(listen("change", &chosen) && listen("cancel", &cancelled)) {
        input.remove();
        answer(None);
        return;
    }
    // Now, while the click that asked for it still counts as the user's: a browser shows a
    // picker only then.
    input.click();
    wasm_bindgen_futures::spawn_local(async move {
        let picked = rx.recv().await.unwrap_or(false);
        // The handlers live until the answer came.
        drop((chosen, cancelled));
        let files = if picked { input.files() } else { None };
        input.remove();
        let Some(files) = files.filter(|f| f.length() > 0) else {
            answer(None);
            return;
        };
        let mut handed = Vec::new();
        for i in 0..files.length() {
            if let Some(file) = files.get(i) {
                handed.push((file.name(), read(&file).await));
            }
        }
        answer(held::hold(handed).into_iter().next());
    });
}

/// Reads files dropped on the page, holds them and answers the first one's path.
pub(in crate::platform) fn take_dropped(files: &[egui::DroppedFileHandle], answer: Answer) {
    let files = files.to_vec();
    if files.is_empty() {
        answer(None);
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        let mut handed = Vec::new();
        for file in &files {
            let name = file.path().to_string_lossy().into_owned();
            let contents = match file.web_file() {
                Some(web) => read(web).await,
                // Not a browser's file (never in a page): read as egui offers it.
                None => match file.bytes_async().await {
                    Ok(bytes) => Held::Read(Arc::from(bytes)),
                    Err(why) => Held::Unreadable(why),
                },
            };
            handed.push((name, contents));
        }
        answer(held::hold(handed).into_iter().next());
    });
}

/// A file's bytes, or its size when it is larger than any reader accepts, or why the browser
/// could not read it.
async fn read(file: &web_sys::File) -> Held {
    let size = file.size();
    if size > MOST_READ as f64 {
        return Held::TooLarge(size as u64);
    }
    match JsFuture::from(file.array_buffer()).await {
        Ok(buffer) => Held::Read(Arc::from(js_sys::Uint8Array::new(&buffer).to_vec())),
        Err(e) => Held::Unreadable(words(&e, "the browser refused to read it")),
    }
}

/// What the browser said in `e` (an error's message, or a string), or `otherwise`.
fn words(e: &wasm_bindgen::JsValue, otherwise: &str) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| otherwise.to_owned())
}

/// The picker's `accept` list: the filters' extensions, or none (every file) where a filter
/// takes any file. MNIST's files have no extension (`train-images-idx3-ubyte`), so the data
/// sets' picker lists every file.
fn accept(filters: &[(&str, &[&str])]) -> String {
    let extensions: Vec<&str> = filters
        .iter()
        .flat_map(|(_, e)| e.iter().copied())
        .collect();
    if extensions.contains(&"*") {
        return String::new();
    }
    extensions
        .iter()
        .map(|e| format!(".{e}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A hidden `<input type="file" multiple>` in the page's body.
fn file_input(accept: &str) -> Option<web_sys::HtmlInputElement> {
    let document = web_sys::window()?.document()?;
    let input: web_sys::HtmlInputElement =
        document.create_element("input").ok()?.dyn_into().ok()?;
    input.set_type("file");
    input.set_multiple(true);
    if !accept.is_empty() {
        input.set_accept(accept);
    }
    input.set_attribute("style", "display: none").ok()?;
    document.body()?.append_child(&input).ok()?;
    Some(input)
}

/// Hands `bytes` to the user as a download named `name`: a link to them, clicked. The link's
/// address is let go a minute later (at once, some browsers would cancel the download).
pub(in crate::platform) fn hand_out(name: &str, bytes: &[u8]) -> Result<(), String> {
    let said = |e: wasm_bindgen::JsValue| words(&e, "the browser refused the download");
    let window = web_sys::window().ok_or("no window")?;
    let document = window.document().ok_or("no document")?;
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).map_err(said)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(said)?;
    let link: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(said)?
        .dyn_into()
        .map_err(|_| "no link element".to_owned())?;
    link.set_href(&url);
    link.set_download(name);
    link.click();
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    window
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 60_000)
        .map_err(said)?;
    Ok(())
}
