//! How a command ends when it does not succeed, and the exit code each way gets: 2 for the
//! user's input or settings (a message says what to change), 1 for a device that could not
//! train, 0 and silence for a reader that went away.

use std::process::ExitCode;

use super::output::{Out, OutputError};
use crate::backend::BackendError;
use crate::device::Device;

/// Why a command failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// A problem with the user's input: printed, and the exit code is 2.
    BadInput(String),
    /// A device could not train (no adapter, a GPU error): reported, and the exit code is 1.
    DeviceFailed,
    /// A device ran out of its memory budget, or its loss diverged: reported, and the exit
    /// code is 2 (a setting to change).
    OutOfMemory,
    /// A check the command makes did not pass (`lessons --verify`): printed, exit code 1.
    CheckFailed(String),
    /// The reader of standard output went away: the command stops quietly, exit code 0.
    Closed,
    /// Standard output failed otherwise: the exit code is 1.
    Output(String),
}

impl From<OutputError> for Failure {
    fn from(e: OutputError) -> Self {
        match e {
            OutputError::Closed => Failure::Closed,
            OutputError::Failed(message) => Failure::Output(message),
        }
    }
}

impl Failure {
    /// Prints what the user must know (to standard error) and gives the exit code.
    pub fn exit_code(self) -> ExitCode {
        let say = |message: &str| {
            use std::io::Write;
            // Standard error closed too: nothing more can be said.
            let _ = writeln!(std::io::stderr(), "error: {message}");
        };
        match self {
            Failure::BadInput(message) => {
                say(&message);
                ExitCode::from(2)
            }
            Failure::DeviceFailed => ExitCode::FAILURE,
            Failure::OutOfMemory => ExitCode::from(2),
            Failure::Closed => ExitCode::SUCCESS,
            Failure::CheckFailed(message) | Failure::Output(message) => {
                say(&message);
                ExitCode::FAILURE
            }
        }
    }
}

/// Why one device's run failed.
pub(super) struct RunError {
    message: String,
    /// The run went past a memory budget or diverged: the user's setting, so exit code 2.
    out_of_memory: bool,
    /// Standard output failed: the whole command stops (quietly, for a closed pipe).
    output: Option<OutputError>,
}

impl RunError {
    /// A setting the device cannot take (exit code 2, as for the other settings).
    pub(super) fn setting(message: String) -> Self {
        Self {
            message,
            out_of_memory: true,
            output: None,
        }
    }
}

impl From<String> for RunError {
    fn from(message: String) -> Self {
        Self {
            message,
            out_of_memory: false,
            output: None,
        }
    }
}

/// A message in both languages: the command line prints its English.
impl From<crate::i18n::Said> for RunError {
    fn from(message: crate::i18n::Said) -> Self {
        message.to_string().into()
    }
}

impl From<&str> for RunError {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl From<BackendError> for RunError {
    fn from(e: BackendError) -> Self {
        // On the command line the way to lower the learning rate is a flag. (Pure FP16 with
        // Adam says its own cause, the format's range, with the window's words.)
        if let BackendError::Diverged {
            step,
            loss,
            lr,
            lower,
            fp16_adam: false,
        } = e
        {
            return Self {
                message: format!(
                    "the loss became {loss} by step {step}: the updates grew without bound. The \
                     usual cause is a learning rate too high for this model ({lr}): run again \
                     with a lower one (--lr {lower}, say)"
                ),
                out_of_memory: true,
                output: None,
            };
        }
        Self {
            out_of_memory: matches!(
                e,
                BackendError::OutOfMemory(_)
                    | BackendError::Diverged { .. }
                    | BackendError::BufferTooLarge { .. }
            ),
            message: e.to_string(),
            output: None,
        }
    }
}

impl From<OutputError> for RunError {
    fn from(e: OutputError) -> Self {
        Self {
            message: String::new(),
            out_of_memory: false,
            output: Some(e),
        }
    }
}

/// Runs `run` for each device in turn. A device that fails (no adapter, a GPU error) is reported
/// and the others still run; the exit code then says that one failed. Output that fails stops
/// everything.
pub(super) fn on_each_device(
    out: &mut Out,
    devices: &[Device],
    json: bool,
    mut run: impl FnMut(&mut Out, Device) -> Result<(), RunError>,
) -> Result<(), Failure> {
    let (mut failed, mut out_of_memory) = (false, false);
    for &device in devices {
        let Err(e) = run(out, device) else {
            continue;
        };
        if let Some(output) = e.output {
            return Err(output.into());
        }
        failed = true;
        out_of_memory |= e.out_of_memory;
        if json {
            out.json(&serde_json::json!({ "device": device, "error": e.message }))?;
        } else {
            // Errors go to standard error, so that a pipe of the results sees only results.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "error: {device}: {}", e.message);
        }
    }
    if out_of_memory {
        Err(Failure::OutOfMemory)
    } else if failed {
        Err(Failure::DeviceFailed)
    } else {
        Ok(())
    }
}
