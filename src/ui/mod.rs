//! The window's panels and what they share. A panel is a plain struct holding only its own view
//! state (zoom, chosen axes, textures) with a `ui` method that draws what it is given of the
//! app's state and returns what the user asked for as [`UiCommand`]s, which the app carries
//! out after drawing. No panel holds run state and none starts a thread.
//!
//! - [`command`]: the commands and the central area's views;
//! - [`labels`], [`fonts`]: names, colours and fonts shared by the panels;
//! - [`toolbar`], [`notices`], [`setup`], [`model_setup`], [`column`](mod@column), [`journey`], [`memory`], [`precision`],
//!   [`preview`], [`images`], [`open`], [`lesson`](mod@lesson), [`experiments`], [`serving`], [`history`], [`roofline`], [`ecosystem`]: the panels.

pub mod column;
pub mod command;
pub mod ecosystem;
pub mod experiments;
pub mod fonts;
pub mod history;
pub mod images;
pub mod journey;
pub mod labels;
pub mod lesson;
pub mod memory;
pub mod mismatch;
pub mod model_setup;
pub mod notices;
pub mod op_kinds;
pub mod open;
pub mod plots;
pub mod precision;
pub mod presenter;
pub mod preview;
pub mod roofline;
pub mod serving;
pub mod setup;
pub mod speaker;
pub mod toolbar;

#[cfg(test)]
pub(crate) mod testing;

pub use command::{LessonCommand, Tab, UiCommand};
