//! Entry point: parses the command line and starts the app or a headless command.
//!
//! On Windows the binary is a GUI program, so started from Explorer it opens no console window;
//! started from a terminal it attaches to that terminal's console, so the subcommands print there
//! (output redirected to a file or a pipe goes there in either case).
#![cfg_attr(windows, windows_subsystem = "windows")]

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    #[cfg(windows)]
    attach_to_the_terminal();
    let code = batchscope::cli::main();
    // `BATCHSCOPE_PEAK_MEMORY=1`: say what the process held at most, as measured by the system
    // (the hostile-input tests bound it; anyone can check what a data set costs).
    if std::env::var_os("BATCHSCOPE_PEAK_MEMORY").is_some()
        && let Some(peak) = batchscope::device::peak_memory()
    {
        eprintln!("peak memory: {peak} bytes");
    }
    code
}

/// A browser's page: the app or its self-test, started from the page's module.
#[cfg(target_arch = "wasm32")]
fn main() {
    batchscope::web::start();
}

/// Writes to the console of the terminal this was started from, if there is one.
#[cfg(windows)]
#[expect(
    unsafe_code,
    reason = "one Win32 call with no safe wrapper in the standard library"
)]
fn attach_to_the_terminal() {
    use windows_sys::Win32::System::Console::{ATTACH_PARENT_PROCESS, AttachConsole};
    // SAFETY: AttachConsole takes a process id and changes only this process's console; it
    // fails harmlessly where the parent has none (Explorer).
    unsafe {
        AttachConsole(ATTACH_PARENT_PROCESS);
    }
}
