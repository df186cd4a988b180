//! Presenter mode: the window as a projector needs it — larger (a UI scale the teacher sets and
//! the app remembers), high contrast, the setup hidden, the lesson's text large — and the keys a
//! presenter's clicker sends. Also the blank screen (B) a teacher shows while talking.

use egui::{Color32, RichText, Stroke};

use crate::i18n::{Lang, LessonKey};

/// The smallest UI scale presenter mode uses.
pub const MIN_SCALE: f32 = 1.25;
/// The largest.
pub const MAX_SCALE: f32 = 2.0;
/// The scale of a first presentation.
pub const DEFAULT_SCALE: f32 = 1.5;
/// Below this width (in points) the training tab puts the CPU column above the GPU column:
/// two columns narrower than about 380 points each cut their figures off.
pub const STACK_BELOW: f32 = 760.0;
/// The lesson text's size in points, outside presenter mode and in it (the largest: a long
/// step's text is drawn smaller until it fits).
pub const BODY_SIZE: [f32; 2] = [16.0, 22.0];
/// The smallest size presenter mode fits a lesson's text to (times the UI scale in pixels: 14
/// to 22 px on the screen).
pub const MIN_BODY_SIZE: f32 = 11.0;

/// Presenter mode's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Presenter {
    /// On or off.
    pub on: bool,
    /// The UI scale while on (remembered between starts).
    pub scale: f32,
    /// The screen is blanked.
    pub blank: bool,
    /// The UI scale before presenter mode, given back when it ends.
    pub zoom_before: Option<f32>,
    /// The speaker notes' window is open.
    pub notes: bool,
    /// When presenter mode was turned on (for the notes' clock).
    pub since: Option<web_time::Instant>,
}

impl Default for Presenter {
    fn default() -> Self {
        Self {
            on: false,
            scale: DEFAULT_SCALE,
            blank: false,
            zoom_before: None,
            notes: false,
            since: None,
        }
    }
}

impl Presenter {
    /// A remembered scale, brought into range (a damaged setting gives the default).
    pub fn clamp_scale(scale: f32) -> f32 {
        if scale.is_finite() {
            scale.clamp(MIN_SCALE, MAX_SCALE)
        } else {
            DEFAULT_SCALE
        }
    }

    /// Applies the mode to the context each frame: the scale (a Ctrl+/Ctrl− change while
    /// presenting is kept as the new scale) and the theme.
    pub fn apply(&mut self, ctx: &egui::Context) {
        if self.on {
            if self.zoom_before.is_none() {
                self.zoom_before = Some(ctx.zoom_factor());
                ctx.set_zoom_factor(self.scale);
            } else {
                self.scale = Self::clamp_scale(ctx.zoom_factor());
                if (ctx.zoom_factor() - self.scale).abs() > 1e-3 {
                    ctx.set_zoom_factor(self.scale);
                }
            }
            ctx.set_visuals(high_contrast());
        } else if let Some(zoom) = self.zoom_before.take() {
            ctx.set_zoom_factor(zoom);
            ctx.set_visuals(crate::ui::fonts::readable_visuals());
        }
    }
}

/// A high-contrast dark theme: black panels, white text, thick strokes, no faint greys.
pub fn high_contrast() -> egui::Visuals {
    let mut v = egui::Visuals::dark();
    v.panel_fill = Color32::BLACK;
    v.window_fill = Color32::BLACK;
    v.extreme_bg_color = Color32::BLACK;
    v.faint_bg_color = Color32::from_gray(24);
    v.override_text_color = Some(Color32::WHITE);
    v.window_stroke = Stroke::new(1.5, Color32::WHITE);
    v.widgets.noninteractive.fg_stroke = Stroke::new(1.5, Color32::WHITE);
    v.widgets.noninteractive.bg_stroke = Stroke::new(1.5, Color32::from_gray(200));
    v.widgets.inactive.fg_stroke = Stroke::new(1.5, Color32::WHITE);
    v.widgets.inactive.bg_stroke = Stroke::new(1.5, Color32::from_gray(200));
    v.widgets.inactive.weak_bg_fill = Color32::from_gray(40);
    v.widgets.hovered.fg_stroke = Stroke::new(2.0, Color32::WHITE);
    v.widgets.active.fg_stroke = Stroke::new(2.5, Color32::WHITE);
    v.selection.stroke = Stroke::new(2.0, Color32::WHITE);
    v
}

/// The blank screen: everything covered in black, with how to come back.
pub fn blank_ui(ctx: &egui::Context, lang: Lang) {
    let rect = ctx.content_rect();
    egui::Area::new(egui::Id::unique("presenter-blank"))
        .order(egui::Order::Foreground)
        .fixed_pos(rect.min)
        .show(ctx, |ui| {
            let (response, painter) = ui.allocate_painter(rect.size(), egui::Sense::click());
            painter.rect_filled(response.rect, 0.0, Color32::BLACK);
            painter.text(
                response.rect.center_bottom() - egui::vec2(0.0, 24.0),
                egui::Align2::CENTER_CENTER,
                lang.tr(LessonKey::BlankHint),
                egui::FontId::proportional(13.0),
                Color32::from_gray(90),
            );
        });
}

/// The toolbar's presenter button.
pub fn presenter_button_ui(ui: &mut egui::Ui, lang: Lang, on: bool) -> bool {
    let text = RichText::new(lang.tr(LessonKey::Presenter));
    ui.selectable_label(on, text)
        .on_hover_text(lang.tr(LessonKey::PresenterTip))
        .clicked()
}

/// The speaker notes' button, shown in presenter mode; whether it was clicked.
pub fn notes_button_ui(ui: &mut egui::Ui, lang: Lang, open: bool) -> bool {
    ui.selectable_label(open, lang.tr(LessonKey::SpeakerNotes))
        .on_hover_text(lang.tr(LessonKey::SpeakerNotesTip))
        .clicked()
}
