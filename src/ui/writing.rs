//! A language model's column: what it writes now (from one seed on every device, so two
//! columns whose weights agree write the same), and where a chosen attention head looks over
//! the last characters of a chosen sample (its own writing or a window of the validation text),
//! as a heatmap with the characters along both sides.

use egui::{Color32, RichText};

use crate::i18n::{GenKey, Key, Lang};
use crate::train::DeviceRun;
use crate::train::report::{AttentionSample, SampleFrom, Writing};

/// Draws the writing and the attention map of the device's last evaluation; a note before the
/// first one.
pub fn writing_ui(ui: &mut egui::Ui, lang: Lang, run: &DeviceRun) {
    let Some(writing) = run.last_eval.as_ref().and_then(|e| e.writing.as_ref()) else {
        ui.label(RichText::new(lang.tr(Key::WritingNone)).weak());
        return;
    };
    let step = run.last_eval.as_ref().map_or(0, |e| e.step);
    ui.label(lang.fmt(
        Key::WritingTitle,
        &[("step", &step), ("temperature", &writing.temperature)],
    ))
    .on_hover_text(lang.tr(Key::WritingTip));
    // A fixed height, so what follows (the heatmap's choosers) stays put while each evaluation
    // writes a text of another number of lines.
    let height = 6.0 * ui.text_style_height(&egui::TextStyle::Monospace);
    egui::Frame::group(ui.style()).show(ui, |ui| {
        egui::ScrollArea::vertical()
            .id_salt("writing")
            .max_height(height)
            .stick_to_bottom(true)
            .show(ui, |ui| {
                ui.set_min_height(height);
                ui.horizontal_wrapped(|ui| {
                    ui.spacing_mut().item_spacing.x = 0.0;
                    ui.label(RichText::new(&writing.prompt).monospace().strong());
                    ui.label(RichText::new(&writing.text).monospace());
                });
            });
    });
    attention_ui(ui, lang, writing);
}

/// What a sample is called in the chooser.
fn sample_name(lang: Lang, from: SampleFrom) -> String {
    match from {
        SampleFrom::Written => lang.tr(GenKey::SampleWritten).to_owned(),
        SampleFrom::Validation(n) => lang.fmt(GenKey::SampleValidation, &[("n", &n)]),
    }
}

/// The heatmap of the chosen head's probabilities over the chosen sample's last characters,
/// with a sample, a layer and a head to choose (kept in the column's memory, the model's own
/// writing and the first head at first).
fn attention_ui(ui: &mut egui::Ui, lang: Lang, writing: &Writing) {
    let heads = writing.heads.max(1);
    let Some(layers) = writing.samples.first().map(|s| s.attention.len() / heads) else {
        return;
    };
    let well_formed = |s: &AttentionSample| {
        let n = s.window.len();
        n > 0 && s.attention.len() == layers * heads && s.attention.iter().all(|m| m.len() == n * n)
    };
    if layers == 0 || !writing.samples.iter().all(well_formed) {
        return;
    }
    let id = ui.scope_id().with("attention_pick");
    let (mut sample, mut layer, mut head) = ui
        .data(|d| d.get_temp::<(usize, usize, usize)>(id))
        .unwrap_or((0, 0, 0));
    sample = sample.min(writing.samples.len() - 1);
    layer = layer.min(layers - 1);
    head = head.min(heads - 1);
    ui.horizontal_wrapped(|ui| {
        let pick = |ui: &mut egui::Ui, salt: &str, value: &mut usize, names: &[String], tip| {
            egui::ComboBox::from_id_salt(id.with(salt))
                .selected_text(names[*value].as_str())
                .show_ui(ui, |ui| {
                    for (k, name) in names.iter().enumerate() {
                        ui.selectable_value(value, k, name.as_str());
                    }
                })
                .response
                .on_hover_text(tip);
        };
        let numbered = |key, count: usize| -> Vec<String> {
            (1..=count).map(|n| lang.fmt(key, &[("n", &n)])).collect()
        };
        let samples: Vec<String> = writing
            .samples
            .iter()
            .map(|s| sample_name(lang, s.from))
            .collect();
        let tip = lang.tr(GenKey::SamplePickTip);
        pick(ui, "attention_sample", &mut sample, &samples, tip);
        let tip = lang.tr(Key::AttentionPickTip);
        let layer_names = numbered(Key::AttentionLayer, layers);
        pick(ui, "attention_layer", &mut layer, &layer_names, tip);
        let head_names = numbered(Key::AttentionHead, heads);
        pick(ui, "attention_head", &mut head, &head_names, tip);
    });
    ui.data_mut(|d| d.insert_temp(id, (sample, layer, head)));
    let chosen = &writing.samples[sample];
    heatmap(ui, lang, chosen, (layer, heads, head));
}

/// The map of `head` of attention `layer` (of `heads` a layer) over `sample`'s characters, with
/// its title.
fn heatmap(ui: &mut egui::Ui, lang: Lang, sample: &AttentionSample, at: (usize, usize, usize)) {
    let (layer, heads, head) = at;
    let map = &sample.attention[layer * heads + head];
    let shown = sample.window.len();
    ui.label(lang.fmt(
        Key::AttentionTitle,
        &[
            ("n", &shown),
            ("layer", &(layer + 1)),
            ("head", &(head + 1)),
        ],
    ))
    .on_hover_text(lang.tr(Key::AttentionTip));
    let label = 14.0;
    let side = (ui.available_width() - label).clamp(120.0, 320.0);
    let cell = side / shown as f32;
    let (rect, _) =
        ui.allocate_exact_size(egui::vec2(side + label, side + label), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let origin = rect.min + egui::vec2(label, label);
    let font = egui::FontId::monospace((cell * 0.8).clamp(6.0, 12.0));
    let text_color = ui.visuals().text_color();
    for (k, c) in sample.window.iter().enumerate() {
        let shown_char = if c.trim().is_empty() {
            "·"
        } else {
            c.as_str()
        };
        let along = (k as f32 + 0.5) * cell;
        let (top, left) = (
            egui::pos2(origin.x + along, rect.min.y + label * 0.5),
            egui::pos2(rect.min.x + label * 0.5, origin.y + along),
        );
        for at in [top, left] {
            painter.text(
                at,
                egui::Align2::CENTER_CENTER,
                shown_char,
                font.clone(),
                text_color,
            );
        }
    }
    for i in 0..shown {
        for j in 0..shown {
            let p = map[i * shown + j];
            let min = origin + egui::vec2(j as f32 * cell, i as f32 * cell);
            let r = egui::Rect::from_min_size(min, egui::vec2(cell, cell));
            painter.rect_filled(r, 0.0, heat(p));
        }
    }
}

/// A probability's colour: dark blue at 0 through orange to pale yellow at 1.
fn heat(p: f32) -> Color32 {
    let p = p.clamp(0.0, 1.0).sqrt();
    let lerp = |a: u8, b: u8, t: f32| (f32::from(a) + (f32::from(b) - f32::from(a)) * t) as u8;
    if p < 0.5 {
        let t = p * 2.0;
        Color32::from_rgb(lerp(20, 230, t), lerp(30, 110, t), lerp(70, 40, t))
    } else {
        let t = (p - 0.5) * 2.0;
        Color32::from_rgb(lerp(230, 255, t), lerp(110, 240, t), lerp(40, 160, t))
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::device::Device;
    use crate::train::report::EvalReport;
    use crate::ui::testing::harness;

    fn score() -> crate::train::report::Score {
        crate::train::report::Score {
            loss: 2.1,
            accuracy: Some(0.4),
            r2: None,
            mae: None,
        }
    }

    fn run_with(writing: Option<Writing>) -> DeviceRun {
        let mut run = DeviceRun::new(Device::Cpu);
        run.last_eval = Some(EvalReport {
            device: Device::Cpu,
            step: 40,
            train: score(),
            test: score(),
            confusion: None,
            predictions: Vec::new(),
            samples: Vec::new(),
            first_layer: None,
            writing,
        });
        run
    }

    /// The column shows what the model wrote after its prompt, and the attention map's title,
    /// in both languages; before any writing it says so.
    #[test]
    fn the_writing_and_the_attention_map_show_in_both_languages() {
        let window: Vec<String> = "To be, or".chars().map(String::from).collect();
        let n = window.len();
        // Each query attends evenly to itself and what came before it.
        let even: Vec<f32> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                if j <= i { 1.0 / (i + 1) as f32 } else { 0.0 }
            })
            .collect();
        // Two layers of two heads, over the model's writing and a validation window whose
        // heads all look at the character just before.
        let before: Vec<f32> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                if j + 1 == i || i == 0 && j == 0 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let writing = Writing {
            prompt: "ROMEO:".into(),
            text: " what light".into(),
            temperature: 0.8,
            samples: vec![
                AttentionSample {
                    from: SampleFrom::Written,
                    window: window.clone(),
                    attention: vec![even; 4],
                },
                AttentionSample {
                    from: SampleFrom::Validation(1),
                    window,
                    attention: vec![before; 4],
                },
            ],
            heads: 2,
        };
        for (lang, says) in [(Lang::En, "Written at step 40"), (Lang::Zh, "第 40 步")] {
            let run = run_with(Some(writing.clone()));
            let h = harness(move |ui, (): &mut ()| writing_ui(ui, lang, &run), ());
            let _ = h.get_by_label_contains(says);
            let _ = h.get_by_label("ROMEO:");
            let _ = h.get_by_label(" what light");
            let title = lang.fmt(
                Key::AttentionTitle,
                &[("n", &n), ("layer", &1), ("head", &1)],
            );
            let _ = h.get_by_label_contains(title.as_str());
            let _ = h.get_by_value(lang.fmt(Key::AttentionLayer, &[("n", &1)]).as_str());
        }
        // Choosing the second layer's second head retitles the map.
        let run = run_with(Some(writing.clone()));
        let mut h = harness(move |ui, (): &mut ()| writing_ui(ui, Lang::En, &run), ());
        h.get_by_value("Layer 1").click();
        h.run();
        h.get_by_label("Layer 2").click();
        h.run();
        h.get_by_value("Head 1").click();
        h.run();
        h.get_by_label("Head 2").click();
        h.run();
        let _ = h.get_by_label_contains("Where head 2 of attention layer 2 looks");
        // The sample chooser offers the validation window, in both languages.
        h.get_by_value("What it wrote").click();
        h.run();
        h.get_by_label("Validation text 1").click();
        h.run();
        let _ = h.get_by_value("Validation text 1");
        let run = run_with(Some(writing.clone()));
        let h = harness(move |ui, (): &mut ()| writing_ui(ui, Lang::Zh, &run), ());
        let _ = h.get_by_value("它写的文字");
        let run = run_with(None);
        let h = harness(move |ui, (): &mut ()| writing_ui(ui, Lang::En, &run), ());
        let _ = h.get_by_label(Lang::En.tr(Key::WritingNone));
    }

    #[test]
    fn heat_runs_from_dark_to_light() {
        let (cold, hot) = (heat(0.0), heat(1.0));
        assert!(cold.r() < 40 && hot.g() > 200, "{cold:?} {hot:?}");
    }
}
