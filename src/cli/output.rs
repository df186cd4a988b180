//! What the subcommands print, one line at a time.
//!
//! `println!` panics when the reader has gone away: `batchscope devices | head -n 1` would end
//! in a panic whenever `head` closed the pipe before the last line was written. Unix tools end
//! quietly instead, and so does every subcommand here: a closed pipe is an [`OutputError`] that
//! stops the command with exit code 0 and no message.

use std::fmt::Display;
use std::io::{ErrorKind, Write};

/// Why a line could not be printed.
#[derive(Debug)]
pub(super) enum OutputError {
    /// The reader closed the pipe: nothing more is wanted.
    Closed,
    /// Standard output failed otherwise (a full disk behind a redirect, say).
    Failed(String),
}

/// Standard output, a line at a time.
pub(super) struct Out(std::io::Stdout);

impl Out {
    /// Standard output.
    pub fn new() -> Self {
        Self(std::io::stdout())
    }

    /// Prints `text` and a newline.
    pub fn line(&mut self, text: impl Display) -> Result<(), OutputError> {
        let mut out = self.0.lock();
        writeln!(out, "{text}")
            .and_then(|()| out.flush())
            .map_err(|e| match e.kind() {
                ErrorKind::BrokenPipe => OutputError::Closed,
                _ => OutputError::Failed(format!("cannot write to standard output: {e}")),
            })
    }

    /// Prints `value` as one line of JSON.
    pub fn json(&mut self, value: &impl serde::Serialize) -> Result<(), OutputError> {
        let text = serde_json::to_string(value)
            .map_err(|e| OutputError::Failed(format!("cannot write JSON: {e}")))?;
        self.line(text)
    }
}
