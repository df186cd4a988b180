//! BatchScope: train the same small network on a CPU and a GPU side by side, and see where
//! every millisecond of a batch goes.
//!
//! The core (`backend`, `nn`, `data`, `train`, `trace`) never touches egui; the UI (`app`, `ui`) never
//! touches wgpu. `cli` is the headless interface over the same core.

pub mod app;
pub mod backend;
pub mod bench;
pub mod build_info;
// The command line is the desktop's: a browser has no terminal to run it in.
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
pub mod data;
pub mod device;
pub mod energy;
pub mod files;
pub mod i18n;
pub mod job;
pub mod lesson;
pub mod memory;
pub mod nn;
pub mod platform;
pub mod precision;
pub mod setting;
pub mod sim;
pub mod trace;
pub mod train;
pub mod ui;
pub mod units;
// The browser's start: the page's module, its canvas and its self-test.
#[cfg(target_arch = "wasm32")]
pub mod web;
