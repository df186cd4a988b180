//! The desktop window's start: eframe's native runner, with the settings file checked first.

use super::{AppOptions, create_app, restore};

/// Opens the window.
pub fn run_native(options: AppOptions) -> Result<(), String> {
    // Window tests start from the defaults, not from whatever a user saved.
    let remember = options.exit_after.is_none();
    // eframe reads its settings file before the app starts, even when the app then ignores it:
    // one that cannot be read safely (a named pipe, a device, a file of gigabytes) is left
    // alone and another used.
    let (instead, guard_notes) = restore::storage_guard("BatchScope");
    let moved = instead.is_some();
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("BatchScope")
            .with_inner_size([1280.0, 860.0])
            .with_min_inner_size([800.0, 560.0]),
        persistence_path: instead,
        ..Default::default()
    };
    eframe::run_native(
        "BatchScope",
        native,
        Box::new(move |cc| {
            let app = create_app(cc, options, (remember, moved), guard_notes);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| format!("cannot open the window: {e}"))
}
