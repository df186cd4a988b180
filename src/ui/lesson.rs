//! The lesson panel: the step shown of the lesson being followed — its text, a prediction's
//! choices, the measurement's progress, the headline filled from this run's figures, a Try
//! step's change — and the buttons that move between steps. Also the Lessons menu, and the
//! frame a Watch step draws around the part of the window it names.

use std::collections::BTreeMap;

use egui::text::LayoutJob;
use egui::{Color32, RichText, TextFormat};

use super::command::{LessonCommand, Tab, UiCommand};
use super::labels::device_color;
use crate::device::Device;
use crate::i18n::{Key, Lang, LessonKey, MsgKey, Said};
use crate::lesson::format::{Preset, ProbeKind, View};
use crate::lesson::probe::Progress;
use crate::lesson::verdict::Change;
use crate::lesson::verify::TryReport;
use crate::lesson::{Following, Lesson, StepKind, Widget};

/// The colour of a Watch step's frame, and of the words that name what it frames.
pub const HIGHLIGHT_COLOR: Color32 = Color32::from_rgb(255, 190, 40);

fn highlight_id() -> egui::Id {
    egui::Id::unique("lesson-highlight")
}

fn drawn_id() -> egui::Id {
    egui::Id::unique("lesson-highlight-drawn")
}

fn scrolled_id() -> egui::Id {
    egui::Id::unique("lesson-highlight-scrolled")
}

/// Says which part of the window this frame's Watch step frames (called before the panels draw).
pub fn set_highlight(ctx: &egui::Context, widget: Option<Widget>) {
    ctx.data_mut(|d| {
        let before = d.get_temp::<Option<Widget>>(highlight_id()).flatten();
        if before != widget {
            // A new part to point at is scrolled into view once, then left to the user.
            d.insert_temp::<Option<Widget>>(scrolled_id(), None);
        }
        d.insert_temp(highlight_id(), widget);
        d.insert_temp::<Option<Widget>>(drawn_id(), None);
    });
}

fn lesson_area_id() -> egui::Id {
    egui::Id::unique("lesson-area")
}

/// Says where the lesson panel's visible area is this frame (presenter mode).
pub fn set_lesson_area(ctx: &egui::Context, rect: egui::Rect) {
    ctx.data_mut(|d| d.insert_temp(lesson_area_id(), rect));
}

/// Says where the lesson's content was drawn this frame (presenter mode): all of it, which
/// must lie inside the visible area.
pub fn set_lesson_content(ctx: &egui::Context, rect: egui::Rect) {
    ctx.data_mut(|d| d.insert_temp(lesson_area_id().with("content"), rect));
}

/// Where the lesson's content was drawn in the last frame presenter mode drew it.
pub fn lesson_content(ctx: &egui::Context) -> Option<egui::Rect> {
    ctx.data(|d| d.get_temp(lesson_area_id().with("content")))
}

/// The lesson panel's visible area in the last frame presenter mode drew it.
pub fn lesson_area(ctx: &egui::Context) -> Option<egui::Rect> {
    ctx.data(|d| d.get_temp(lesson_area_id()))
}

/// Whether the Watch step shown this frame points at `widget`.
pub fn is_watched(ctx: &egui::Context, widget: Widget) -> bool {
    ctx.data(|d| d.get_temp::<Option<Widget>>(highlight_id()).flatten()) == Some(widget)
}

/// The part of the window a frame was drawn around in the last frame, if one was.
pub fn drawn_highlight(ctx: &egui::Context) -> Option<Widget> {
    ctx.data(|d| d.get_temp::<Option<Widget>>(drawn_id()).flatten())
}

/// Frames `rect` and points at it when the Watch step shown names `widget` (a panel calls this
/// after drawing the part a lesson may point at).
pub fn highlight(ui: &egui::Ui, widget: Widget, rect: egui::Rect) {
    let ctx = ui.ctx();
    let wanted = ctx.data(|d| d.get_temp::<Option<Widget>>(highlight_id()).flatten());
    if wanted != Some(widget) {
        return;
    }
    let scrolled = ctx.data_mut(|d| {
        d.insert_temp(drawn_id(), Some(widget));
        let done = d.get_temp::<Option<Widget>>(scrolled_id()).flatten() == Some(widget);
        d.insert_temp(scrolled_id(), Some(widget));
        done
    });
    if !scrolled {
        ui.scroll_to_rect(rect, Some(egui::Align::Center));
    }
    // Above the panel's other widgets, but not over the panels beside it.
    let painter = ctx
        .layer_painter(egui::LayerId::new(
            egui::Order::Foreground,
            egui::Id::unique("lesson-highlight-layer"),
        ))
        .with_clip_rect(ui.clip_rect().expand(8.0));
    let frame = rect.expand(4.0);
    painter.rect_stroke(
        frame,
        6.0,
        egui::Stroke::new(3.0, HIGHLIGHT_COLOR),
        egui::StrokeKind::Outside,
    );
    // A pointer above the frame's top-left corner, aimed at it.
    let tip = frame.left_top() + egui::vec2(18.0, -4.0);
    painter.add(egui::Shape::convex_polygon(
        vec![
            tip,
            tip + egui::vec2(-10.0, -16.0),
            tip + egui::vec2(10.0, -16.0),
        ],
        HIGHLIGHT_COLOR,
        egui::Stroke::NONE,
    ));
}

/// Draws `add` and frames it when the Watch step shown names `widget`.
pub fn framed<R>(ui: &mut egui::Ui, widget: Widget, add: impl FnOnce(&mut egui::Ui) -> R) -> R {
    let inner = ui.scope(add);
    highlight(ui, widget, inner.response.rect);
    inner.inner
}

/// The tab a widget is drawn on (`None`: on every tab: the toolbar and the setup).
pub fn widget_tab(widget: Widget) -> Option<Tab> {
    match widget {
        Widget::RunButton
        | Widget::BatchSetting
        | Widget::WorkersSetting
        | Widget::StorageSetting
        | Widget::SyncSetting
        | Widget::HiddenSetting
        | Widget::PrecisionSetting
        | Widget::AccumulateSetting
        | Widget::CheckpointSetting => None,
        Widget::CpuColumn | Widget::GpuColumn | Widget::LossCompared => Some(Tab::Training),
        Widget::StepBreakdown | Widget::Timeline | Widget::OpKinds | Widget::Mismatch => {
            Some(Tab::Journey)
        }
        Widget::MemoryChart => Some(Tab::Memory),
        Widget::SweepPlot | Widget::Serving => Some(Tab::Experiments),
        Widget::PrecisionHistogram => Some(Tab::Precision),
        Widget::Roofline | Widget::Ecosystem => Some(Tab::Simulator),
    }
}

/// The window's tab for a lesson's view.
pub fn view_tab(view: View) -> Tab {
    match view {
        View::Training => Tab::Training,
        View::Data => Tab::Data,
        View::Journey => Tab::Journey,
        View::Memory => Tab::Memory,
        View::Precision => Tab::Precision,
        View::Experiments => Tab::Experiments,
        View::Simulator => Tab::Simulator,
    }
}

/// The Lessons menu: every lesson with how far the user got, and opening a file.
pub fn lessons_menu_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    lessons: &[Lesson],
    places: &BTreeMap<String, usize>,
    commands: &mut Vec<UiCommand>,
) {
    ui.menu_button(lang.tr(LessonKey::Lessons), |ui| {
        for lesson in lessons {
            let total = lesson.steps.len();
            let done = places.get(&lesson.id).map_or(0, |&s| (s + 1).min(total));
            let mark = lang.fmt(
                LessonKey::ProgressMark,
                &[("done", &done), ("total", &total)],
            );
            let text = format!("{}   {mark}", lesson.title.get(lang));
            if ui
                .button(text)
                .on_hover_text(lesson.summary.get(lang))
                .clicked()
            {
                commands.push(UiCommand::Lesson(LessonCommand::Open(lesson.id.clone())));
                ui.close();
            }
        }
        ui.separator();
        if ui.button(lang.tr(LessonKey::OpenLessonFile)).clicked() {
            commands.push(UiCommand::Lesson(LessonCommand::OpenFile));
            ui.close();
        }
        ui.separator();
        for (key, save) in [
            (LessonKey::SaveSession, true),
            (LessonKey::OpenSession, false),
        ] {
            if ui
                .button(lang.tr(key))
                .on_hover_text(lang.tr(LessonKey::SessionTip))
                .clicked()
            {
                commands.push(UiCommand::AskSession { save });
                ui.close();
            }
        }
    })
    .response
    .on_hover_text(lang.tr(LessonKey::LessonsTip));
}

/// `text` with the words that name a device in its colour, and the names of what a Watch step
/// frames in the frame's colour, at `size` points.
pub fn coloured(text: &str, size: f32, base: Color32, watched: bool) -> LayoutJob {
    let mut job = LayoutJob::default();
    let font = egui::FontId::proportional(size);
    let plain = TextFormat::simple(font.clone(), base);
    let mut rest = text;
    while let Some((at, word, color)) = next_coloured(rest, watched) {
        job.append(&rest[..at], 0.0, plain.clone());
        job.append(word, 0.0, TextFormat::simple(font.clone(), color));
        rest = &rest[at + word.len()..];
    }
    job.append(rest, 0.0, plain);
    job.wrap.max_width = f32::INFINITY;
    job
}

/// The first word of `text` that gets a colour: CPU, GPU, or (on a Watch step) the name of a
/// part of the window in quotes.
fn next_coloured(text: &str, watched: bool) -> Option<(usize, &str, Color32)> {
    let mut best: Option<(usize, &str, Color32)> = None;
    for (word, color) in [
        ("CPU", device_color(Device::Cpu)),
        ("GPU", device_color(Device::Gpu)),
    ] {
        if let Some(at) = text.find(word)
            && best.is_none_or(|(b, ..)| at < b)
        {
            best = Some((at, &text[at..at + word.len()], color));
        }
    }
    if watched {
        for (open, close) in [("“", "”"), ("\"", "\"")] {
            if let Some(a) = text.find(open)
                && let Some(len) = text[a + open.len()..].find(close)
                && best.is_none_or(|(b, ..)| a < b)
            {
                let end = a + open.len() + len + close.len();
                best = Some((a, &text[a..end], HIGHLIGHT_COLOR));
            }
        }
    }
    best
}

/// What the panel needs besides the lesson.
#[derive(Clone, Copy, Debug)]
pub struct LessonContext {
    /// The setup already has the Try step's change shown.
    pub change_made: bool,
    /// The tab shown.
    pub tab: Tab,
    /// Text size of the lesson's body, in points (larger in presenter mode).
    pub body_size: f32,
    /// Presenter mode is on.
    pub presenting: bool,
}

/// Draws the lesson panel.
pub fn lesson_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    following: &Following,
    context: &LessonContext,
    commands: &mut Vec<UiCommand>,
) {
    let lesson = &following.lesson;
    let step = following.current();
    let mut send = |c: LessonCommand| commands.push(UiCommand::Lesson(c));
    // A title wraps: a long one must not widen the panel past the window.
    ui.heading(RichText::new(lesson.title.get(lang)).strong());
    let kind = match step.kind {
        StepKind::Predict => LessonKey::KindPredict,
        StepKind::Run => LessonKey::KindRun,
        StepKind::Watch => LessonKey::KindWatch,
        StepKind::Explain => LessonKey::KindExplain,
        StepKind::Try => LessonKey::KindTry,
    };
    let of = lang.fmt(
        LessonKey::StepOf,
        &[("n", &(following.step + 1)), ("total", &lesson.steps.len())],
    );
    ui.label(RichText::new(format!("{of} · {}", lang.tr(kind))).strong());
    // The buttons come before the text, so a long step never pushes them out of sight.
    ui.horizontal(|ui| {
        if ui
            .add_enabled(
                following.step > 0,
                egui::Button::new(lang.tr(LessonKey::PreviousStep)),
            )
            .clicked()
        {
            send(LessonCommand::Back);
        }
        if ui
            .add_enabled(
                !following.at_last(),
                egui::Button::new(lang.tr(LessonKey::NextStep)),
            )
            .clicked()
        {
            send(LessonCommand::Next);
        }
        if ui.button(lang.tr(LessonKey::CloseLesson)).clicked() {
            send(LessonCommand::Close);
        }
    });
    ui.add_space(6.0);
    let body = context.body_size;
    let text_color = ui.visuals().strong_text_color();
    let watched = step.kind == StepKind::Watch;
    ui.label(coloured(step.text.get(lang), body, text_color, watched));
    ui.add_space(6.0);
    match step.kind {
        StepKind::Predict => predict_ui(ui, lang, following, &mut send),
        StepKind::Run => run_ui(ui, lang, following, &mut send),
        StepKind::Watch => {
            if let Some(widget) = step.watch
                && let Some(tab) = widget_tab(widget)
                && tab != context.tab
            {
                ui.label(lang.fmt(LessonKey::WatchNotShown, &[("tab", &tab_name(lang, tab))]));
            } else {
                ui.label(RichText::new(lang.tr(LessonKey::WatchHint)).color(HIGHLIGHT_COLOR));
            }
        }
        StepKind::Explain => explain_ui(ui, lang, following, body),
        StepKind::Try => try_ui(ui, lang, following, context.change_made, &mut send),
    }
    // In presenter mode the step counter says it (and the room is the text's).
    if following.at_last() && !context.presenting {
        ui.label(lang.tr(LessonKey::LessonFinished));
    }
}

fn tab_name(lang: Lang, tab: Tab) -> &'static str {
    lang.tr(match tab {
        Tab::Training => Key::TabTraining,
        Tab::Data => Key::TabData,
        Tab::Journey => Key::Journey,
        Tab::Memory => Key::MemoryTab,
        Tab::Precision => Key::PrecisionTab,
        Tab::Experiments => Key::TabExperiments,
        Tab::History => Key::TabHistory,
        Tab::Simulator => Key::TabSimulator,
    })
}

fn predict_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    following: &Following,
    send: &mut impl FnMut(LessonCommand),
) {
    let step = following.current();
    let chosen = following.chosen[following.step];
    for (i, choice) in step.choices.iter().enumerate() {
        if ui.radio(chosen == Some(i), choice.get(lang)).clicked() {
            send(LessonCommand::Choose(i));
        }
    }
    let Some(outcome) = &following.outcome else {
        ui.label(RichText::new(lang.tr(LessonKey::ChooseAnswer)).weak());
        return;
    };
    let Some((right, simulated)) = step.answer(&outcome.figures) else {
        let names = step
            .figure
            .as_deref()
            .map(|f| crate::lesson::names::figure_label(f, lang))
            .unwrap_or_default();
        ui.label(lang.fmt(LessonKey::NotMeasuredHere, &[("names", &names)]));
        return;
    };
    // A software adapter's answer is this machine's truth, not a GPU's: the simulator's
    // answer for a real GPU is given beside it, and a prediction is checked against both.
    if let Some(real) = step.real_gpu_answer(&outcome.figures, outcome.gpu)
        && !simulated
    {
        let said = |key, i: usize| lang.fmt(key, &[("answer", &step.choices[i].get(lang))]);
        ui.label(said(LessonKey::AnswerSoftware, right));
        ui.label(said(LessonKey::AnswerRealGpu, real));
        let verdict = match chosen {
            None => None,
            Some(c) if c == real && c == right => Some(LessonKey::PredictRightBoth),
            Some(c) if c == real => Some(LessonKey::PredictRightRealGpu),
            Some(c) if c == right => Some(LessonKey::PredictRightSoftware),
            Some(_) => Some(LessonKey::PredictWrongBoth),
        };
        if let Some(key) = verdict {
            ui.label(RichText::new(lang.tr(key)).strong());
        }
        return;
    }
    if chosen == Some(right) {
        ui.label(RichText::new(lang.tr(LessonKey::PredictRight)).strong());
    } else if chosen.is_some() {
        let answer = step.choices[right].get(lang);
        ui.label(RichText::new(lang.fmt(LessonKey::PredictWrong, &[("answer", &answer)])).strong());
    }
    if simulated {
        ui.label(RichText::new(lang.tr(LessonKey::AnswerFromSimulator)).weak());
    }
}

fn run_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    following: &Following,
    send: &mut impl FnMut(LessonCommand),
) {
    if let Some(done) = following.measuring {
        let doing = following.doing.map_or_else(
            || lang.tr(LessonKey::MeasuringLesson).to_owned(),
            |p| doing_text(lang, &p),
        );
        ui.label(doing);
        ui.horizontal(|ui| {
            ui.add(
                egui::ProgressBar::new(done)
                    .show_percentage()
                    .desired_width(160.0),
            );
            if ui.button(lang.tr(Key::Cancel)).clicked() {
                send(LessonCommand::CancelMeasure);
            }
        });
        return;
    }
    if let Some(why) = &following.failed {
        ui.label(lang.fmt(LessonKey::MeasureFailed, &[("why", &why.text(lang))]));
    }
    if let Some(outcome) = &following.outcome {
        ui.label(lang.tr(LessonKey::MeasuredDone));
        if !outcome.notes.is_empty() {
            let notes = Said::join(&outcome.notes, MsgKey::ListSeparator);
            let notes = notes.text(lang);
            ui.label(RichText::new(lang.fmt(LessonKey::MeasureNotes, &[("notes", &notes)])).weak());
        }
    }
    let again = following.outcome.is_some() || following.failed.is_some();
    let key = if again {
        LessonKey::MeasureAgain
    } else {
        LessonKey::MeasureNow
    };
    if ui.button(lang.tr(key)).clicked() {
        send(LessonCommand::Measure);
    }
}

fn explain_ui(ui: &mut egui::Ui, lang: Lang, following: &Following, body: f32) {
    let Some(outcome) = &following.outcome else {
        ui.label(lang.tr(LessonKey::NotMeasuredYet));
        return;
    };
    match following
        .current()
        .headline(&outcome.figures, outcome.gpu, lang)
    {
        Ok(text) => {
            let color = ui.visuals().strong_text_color();
            ui.label(coloured(&text, body + 2.0, color, false));
            ui.label(RichText::new(lang.tr(LessonKey::HeadlineSource)).weak());
        }
        Err(missing) => {
            let names: Vec<String> = missing
                .iter()
                .map(|m| crate::lesson::names::figure_label(m, lang))
                .collect();
            let names = names.join(lang.tr(MsgKey::ListSeparator));
            ui.label(lang.fmt(LessonKey::NotMeasuredHere, &[("names", &names)]));
        }
    }
}

fn try_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    following: &Following,
    change_made: bool,
    send: &mut impl FnMut(LessonCommand),
) {
    let step = following.current();
    if let Some(from) = &step.from {
        let what = describe_change(lang, from);
        ui.label(lang.fmt(LessonKey::ChangeFrom, &[("what", &what)]));
    }
    if let Some(change) = &step.set {
        let what = describe_change(lang, change);
        ui.label(RichText::new(lang.fmt(LessonKey::ChangeToMake, &[("what", &what)])).strong());
    }
    let measuring = following.trying == Some(following.step);
    // The two actions side by side: one row, not two.
    ui.horizontal_wrapped(|ui| {
        if change_made {
            ui.label(lang.tr(LessonKey::ChangeMade));
        } else if ui
            .button(lang.tr(LessonKey::MakeChange))
            .on_hover_text(lang.tr(LessonKey::MakeChangeTip))
            .clicked()
        {
            send(LessonCommand::MakeChange);
        }
        let again = following.tried[following.step].is_some();
        let label = if again {
            LessonKey::MeasureChangeAgain
        } else {
            LessonKey::MeasureChange
        };
        if !measuring
            && ui
                .add_enabled(
                    following.outcome.is_some(),
                    egui::Button::new(lang.tr(label)),
                )
                .clicked()
        {
            send(LessonCommand::MeasureChange);
        }
    });
    if measuring {
        ui.horizontal(|ui| {
            ui.spinner();
            let text = match following.try_device {
                Some(device) => lang.fmt(
                    LessonKey::MeasuringChangeOn,
                    &[("device", &crate::ui::labels::device_title(lang, device))],
                ),
                None => lang.tr(LessonKey::MeasuringChange).to_owned(),
            };
            ui.label(text);
        });
        return;
    }
    if following.outcome.is_some() && following.tried[following.step].is_none() {
        ui.label(RichText::new(lang.tr(LessonKey::TryKeyHint)).weak());
    }
    match &following.tried[following.step] {
        Some(Ok(report)) => tried_ui(ui, lang, step, report),
        Some(Err(why)) => {
            ui.label(lang.fmt(LessonKey::MeasureFailed, &[("why", &why.text(lang))]));
        }
        None => {}
    }
}

/// A Try step's measurement: each figure before and after with its verdict, what the lesson
/// says when a figure went the other way or too close to call, and where the figures came from.
fn tried_ui(ui: &mut egui::Ui, lang: Lang, step: &crate::lesson::Step, report: &TryReport) {
    for line in report.describe(lang) {
        ui.label(RichText::new(line).strong());
    }
    for name in &report.missing {
        let name = crate::lesson::names::figure_label(name, lang);
        ui.label(lang.fmt(LessonKey::NotMeasuredHere, &[("names", &name)]));
    }
    let verdicts: Vec<Option<bool>> = report.changes.iter().map(Change::as_expected).collect();
    if verdicts.contains(&Some(false))
        && let Some(text) = &step.if_opposite
    {
        ui.label(text.get(lang));
    }
    if verdicts.contains(&None)
        && let Some(text) = &step.if_too_close
    {
        ui.label(text.get(lang));
    }
    ui.label(RichText::new(lang.tr(LessonKey::TrySource)).weak());
}

/// What the probes measure now, in words: "Timing training steps on the GPU (measurement 1 of
/// 2)…".
pub fn doing_text(lang: Lang, p: &Progress) -> String {
    let what = lang.tr(match p.kind {
        ProbeKind::Speed => LessonKey::DoingSpeed,
        ProbeKind::Breakdown => LessonKey::DoingBreakdown,
        ProbeKind::Memory => LessonKey::DoingMemory,
        ProbeKind::Sweep => LessonKey::DoingSweep,
        ProbeKind::Simulate => LessonKey::DoingSimulate,
        ProbeKind::Converge => LessonKey::DoingConverge,
        ProbeKind::Precision => LessonKey::DoingPrecision,
        ProbeKind::Serve => LessonKey::DoingServe,
    });
    let (n, total) = p.probe;
    match p.device {
        Some(device) => lang.fmt(
            LessonKey::DoingOn,
            &[
                ("what", &what),
                ("device", &crate::ui::labels::device_title(lang, device)),
                ("n", &n),
                ("total", &total),
            ],
        ),
        None => lang.fmt(
            LessonKey::DoingAlone,
            &[("what", &what), ("n", &n), ("total", &total)],
        ),
    }
}

/// A Try step's change in words: each setting it gives, named and valued as the setup shows
/// them.
pub fn describe_change(lang: Lang, change: &Preset) -> String {
    use super::labels::{data_name, optimizer_key, precision_label};
    let mut parts = Vec::new();
    let mut add = |key: Key, value: String| parts.push(format!("{} = {value}", lang.tr(key)));
    let list = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(d) = &change.dataset {
        add(Key::Data, data_name(lang, d));
    }
    if let Some(n) = change.samples {
        add(Key::Samples, n.to_string());
    }
    if let Some(c) = &change.conv {
        add(Key::ConvBlocks, list(c));
    }
    if let Some(h) = &change.hidden {
        add(Key::HiddenLayers, list(h));
    }
    if let Some(a) = &change.activation {
        add(Key::Activation, a.clone());
    }
    if let Some(o) = change.optimizer.as_deref() {
        let name = crate::nn::OptimizerKind::parse(o)
            .map_or_else(|| o.to_owned(), |k| lang.tr(optimizer_key(k)).to_owned());
        add(Key::Optimizer, name);
    }
    if let Some(lr) = change.lr {
        add(Key::LearningRate, lr.to_string());
    }
    if let Some(b) = change.batch {
        add(Key::BatchSize, b.to_string());
    }
    if let Some(p) = change.precision.as_deref() {
        let name = crate::precision::Precision::parse(p)
            .map_or_else(|| p.to_owned(), |p| precision_label(lang, p));
        add(Key::SweepPrecision, name);
    }
    if let Some(w) = change.workers {
        add(Key::Workers, w.to_string());
    }
    if let Some(ms) = change.storage_latency_ms {
        add(Key::StorageLatency, format!("{ms} ms"));
    }
    if let Some(text) = change.sync_every.as_deref() {
        let every = match crate::train::SyncPolicy::parse(text) {
            Some(crate::train::SyncPolicy::WhenShown) => lang.tr(Key::SyncWhenShown).to_owned(),
            Some(crate::train::SyncPolicy::EveryStep) => lang.tr(Key::SyncEveryStep).to_owned(),
            Some(crate::train::SyncPolicy::EverySteps(n)) => {
                lang.fmt(Key::SyncEveryN, &[("n", &n)])
            }
            None => text.to_owned(),
        };
        add(Key::SyncSetting, every);
    }
    parts.join(lang.tr(crate::i18n::MsgKey::ListSeparator))
}

#[cfg(test)]
pub(crate) mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::lesson::probe::{GpuPresence, Outcome};
    use crate::lesson::{Figures, Quantity, shipped};

    /// A lesson's `view = "…"` names a tab: each view opens the tab of its own name, and every
    /// tab a lesson can show (all but the history of past runs) is a view.
    #[test]
    fn every_lesson_view_opens_the_tab_of_its_name() {
        for view in View::ALL {
            let tab = view_tab(view);
            assert_eq!(format!("{view:?}"), format!("{tab:?}"));
            let named: View = toml::from_str::<toml::Table>(&format!(
                "view = \"{}\"",
                format!("{view:?}").to_lowercase()
            ))
            .ok()
            .and_then(|t| t.get("view").cloned())
            .and_then(|v| v.try_into().ok())
            .expect("a view by its tab's name");
            assert_eq!(named, view);
        }
        let shown = View::ALL.map(view_tab);
        for tab in Tab::ALL {
            assert!(shown.contains(&tab) || tab == Tab::History, "{tab:?}");
        }
    }

    /// The first-run lesson at `step`, measured with a CPU 100× faster than a software GPU.
    pub(crate) fn following(step: usize, measured: bool) -> Following {
        let lesson = shipped::find("first-run").expect("shipped");
        let mut f = Following::new(lesson, step);
        if measured {
            let mut figures = Figures::default();
            figures.measured("speed.cpu.samples_per_s", Quantity::SamplesPerS(2e6));
            figures.measured("speed.gpu.samples_per_s", Quantity::SamplesPerS(2e4));
            figures.measured("speed.faster", Quantity::Text("CPU".into()));
            figures.measured("speed.slower", Quantity::Text("GPU".into()));
            figures.measured("speed.speedup", Quantity::Ratio(100.0));
            figures.measured("adapter.name", Quantity::Text("llvmpipe".into()));
            figures.measured("sim.profile", Quantity::Text("NVIDIA T4".into()));
            figures.simulated("sim.samples_per_s", Quantity::SamplesPerS(4e5));
            figures.simulated("sim.launch_share", Quantity::Share(0.75));
            f.outcome = Some(Outcome {
                figures,
                gpu: GpuPresence::Software,
                notes: Vec::new(),
                cancelled: false,
                sweep: None,
                serving: None,
                timings: Vec::new(),
            });
        }
        f
    }

    fn drawn(f: Following, lang: Lang) -> egui_kittest::Harness<'static, Vec<UiCommand>> {
        let context = LessonContext {
            change_made: false,
            tab: Tab::Training,
            body_size: 16.0,
            presenting: false,
        };
        crate::ui::testing::harness(
            move |ui, commands: &mut Vec<UiCommand>| {
                lesson_ui(ui, lang, &f, &context, commands);
            },
            Vec::new(),
        )
    }

    #[test]
    fn a_prediction_is_chosen_then_checked_against_the_measurement() {
        let mut harness = drawn(following(0, false), Lang::En);
        harness.get_by_label("About the same").click();
        harness.run();
        assert_eq!(
            harness.state(),
            &[UiCommand::Lesson(LessonCommand::Choose(1))]
        );
        // Measured on a software adapter: the CPU was 100× the GPU, so "The CPU, clearly";
        // and the simulator's real GPU (5× slower than this CPU) gives the same answer.
        let mut f = following(0, true);
        f.chosen[0] = Some(1);
        let harness = drawn(f.clone(), Lang::En);
        for text in [
            "Measured on this machine's software adapter: The CPU, clearly.",
            "The simulator's answer for a real GPU: The CPU, clearly.",
            "Neither agrees with your prediction.",
        ] {
            assert!(harness.query_by_label(text).is_some(), "{text}");
        }
        f.chosen[0] = Some(0);
        let harness = drawn(f.clone(), Lang::Zh);
        assert!(harness.query_by_label("你的预测与两者都一致。").is_some());
        // A real GPU 20× this CPU: the two answers differ, and the prediction is checked
        // against each.
        if let Some(o) = f.outcome.as_mut() {
            o.figures
                .simulated("sim.samples_per_s", Quantity::SamplesPerS(4e7));
        }
        f.chosen[0] = Some(2);
        let harness = drawn(f.clone(), Lang::En);
        assert!(
            harness
                .query_by_label(
                    "Your prediction matches a real GPU (simulated), not this software adapter."
                )
                .is_some()
        );
        // With a hardware GPU there is one answer, the measurement's.
        if let Some(o) = f.outcome.as_mut() {
            o.gpu = GpuPresence::Hardware;
        }
        f.chosen[0] = Some(0);
        let harness = drawn(f, Lang::Zh);
        assert!(harness.query_by_label("你的预测与实测一致。").is_some());
    }

    #[test]
    fn the_explanation_shows_this_runs_figures_or_says_nothing_was_measured() {
        let harness = drawn(following(3, true), Lang::En);
        assert!(
            harness
                .query_by_label_contains("The CPU was 100× as fast: 2.00 M samples/s on the CPU")
                .is_some()
        );
        // Beside the software adapter's truth, the simulator's prediction, marked simulated.
        assert!(
            harness
                .query_by_label_contains(
                    "For a real NVIDIA T4 the simulator predicts 400.0 k samples/s (simulated)"
                )
                .is_some()
        );
        let harness = drawn(following(3, false), Lang::Zh);
        assert!(harness.query_by_label_contains("尚未测量").is_some());
    }

    #[test]
    fn the_buttons_move_between_steps_and_the_first_has_no_back() {
        let mut harness = drawn(following(0, false), Lang::En);
        harness.get_by_label("Next →").click();
        harness.run();
        harness.get_by_label("← Back").click();
        harness.run();
        assert_eq!(harness.state(), &[UiCommand::Lesson(LessonCommand::Next)]);
        let mut harness = drawn(following(4, true), Lang::En);
        harness.get_by_label("Make the change").click();
        harness.run();
        assert_eq!(
            harness.state(),
            &[UiCommand::Lesson(LessonCommand::MakeChange)]
        );
        assert!(
            harness
                .query_by_label_contains("Batch size = 256")
                .is_some()
        );
    }

    /// Lesson 3's loader-workers Try, measured going the other way on this machine: the result
    /// names the figure in words with its noise and verdict, says why it can go that way, and
    /// where the figures come from.
    #[test]
    fn a_try_that_went_the_other_way_says_so_and_why() {
        use crate::lesson::verdict::Change;
        let lesson = shipped::find("batch-journey").expect("shipped");
        let index = lesson
            .steps
            .iter()
            .rposition(|s| s.kind == StepKind::Try)
            .expect("a try");
        let mut f = Following::new(lesson, index);
        f.outcome = following(0, true).outcome;
        let share = |x: f64| crate::lesson::Figure {
            quantity: Quantity::Share(x),
            simulated: false,
            estimated: false,
            iqr: Some(0.01),
        };
        let change = Change::judge(
            "breakdown.cpu.data_loader_share",
            share(0.055),
            share(0.44),
            crate::lesson::format::Direction::Fall,
        )
        .expect("numbers");
        f.tried[index] = Some(Ok(TryReport {
            changes: vec![change],
            missing: Vec::new(),
            seconds: 4.0,
        }));
        let harness = drawn(f, Lang::En);
        for text in [
            "DataLoader share of a step on the CPU: 5.5% → 44%. It rose: the opposite of what the lesson expected (noise: ±1.0 pt).",
            "It went the other way: a loader worker is a thread that needs a core.",
            "Before and after measured by the lesson with training paused",
            "Measure it again",
        ] {
            assert!(harness.query_by_label_contains(text).is_some(), "{text}");
        }
    }

    #[test]
    fn device_names_and_quoted_names_are_coloured() {
        let job = coloured(
            "the “Breakdown” of the GPU and CPU",
            15.0,
            Color32::WHITE,
            true,
        );
        let colours: Vec<(String, Color32)> = job
            .sections
            .iter()
            .map(|s| {
                let range = s.byte_range.start.0..s.byte_range.end.0;
                (job.text[range].to_owned(), s.format.color)
            })
            .collect();
        assert_eq!(colours[1], ("“Breakdown”".to_owned(), HIGHLIGHT_COLOR));
        assert_eq!(colours[3], ("GPU".to_owned(), device_color(Device::Gpu)));
        assert_eq!(colours[5], ("CPU".to_owned(), device_color(Device::Cpu)));
    }
}
