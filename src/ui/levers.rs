//! The setup panel's settings for the article's memory levers: gradient accumulation (the
//! fourth section) and activation checkpointing (the sixth).

use egui::Slider;

use super::lesson::highlight;
use crate::i18n::{Lang, LeverKey};
use crate::lesson::Widget;
use crate::train::TrainConfig;

/// Accumulation's and checkpointing's settings, each with what it makes of the run when on.
pub fn settings(ui: &mut egui::Ui, lang: Lang, config: &mut TrainConfig) {
    let accumulate = ui
        .add(
            Slider::new(&mut config.accumulate, 1..=64)
                .logarithmic(true)
                .text(lang.tr(LeverKey::Accumulate)),
        )
        .on_hover_text(lang.tr(LeverKey::AccumulateTip));
    highlight(ui, Widget::AccumulateSetting, accumulate.rect);
    if config.accumulate > 1 {
        ui.weak(lang.fmt(
            LeverKey::EffectiveBatch,
            &[
                ("batch", &config.effective_batch()),
                ("n", &config.accumulate),
                ("micro", &config.batch),
            ],
        ));
    }
    let off = lang.tr(LeverKey::CheckpointOff).to_owned();
    let checkpoint = ui
        .add(
            Slider::new(&mut config.checkpoint, 0..=8)
                .custom_formatter(move |v, _| {
                    if v < 0.5 {
                        off.clone()
                    } else {
                        format!("{v:.0}")
                    }
                })
                .text(lang.tr(LeverKey::Checkpoint)),
        )
        .on_hover_text(lang.tr(LeverKey::CheckpointTip));
    highlight(ui, Widget::CheckpointSetting, checkpoint.rect);
    if config.checkpoint > 0 {
        ui.weak(lang.fmt(LeverKey::CheckpointBlocks, &[("n", &config.checkpoint)]));
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::ui::testing::harness;

    fn levers_in(lang: Lang) -> egui_kittest::Harness<'static, TrainConfig> {
        harness(
            move |ui, config: &mut TrainConfig| settings(ui, lang, config),
            TrainConfig::default(),
        )
    }

    /// The accumulation setting, in both languages: the update's batch it makes is said only
    /// when it makes one.
    #[test]
    fn the_accumulation_setting_says_the_batch_an_update_learns_from() {
        for (lang, setting, made) in [
            (Lang::En, "Accumulate", "batch 128 = 4 × 32"),
            (Lang::Zh, "梯度累积", "批次 128 = 4 × 32"),
        ] {
            let mut h = levers_in(lang);
            assert!(h.query_all_by_label(setting).next().is_some(), "{lang:?}");
            assert!(
                h.query_by_label(made).is_none(),
                "{lang:?}: no accumulation yet"
            );
            h.state_mut().accumulate = 4;
            h.run();
            assert!(h.query_by_label(made).is_some(), "{lang:?}");
        }
    }

    /// The checkpointing setting, in both languages: off by default, said as off; on, it says
    /// what the forward pass keeps.
    #[test]
    fn the_checkpointing_setting_says_what_is_kept() {
        for (lang, setting, off, made) in [
            (
                Lang::En,
                "Checkpoint every",
                "off",
                "segments of 2 block(s): each keeps its last output, the rest is computed again",
            ),
            (
                Lang::Zh,
                "检查点间隔",
                "关",
                "每段 2 个块：每段只保留最后的输出，其余重新计算",
            ),
        ] {
            let mut h = levers_in(lang);
            assert!(h.query_all_by_label(setting).next().is_some(), "{lang:?}");
            assert!(h.query_by_value(off).is_some(), "{lang:?}: shown off");
            assert!(h.query_by_label(made).is_none(), "{lang:?}: off");
            h.state_mut().checkpoint = 2;
            h.run();
            assert!(h.query_by_label(made).is_some(), "{lang:?}");
        }
    }
}
