//! The ecosystem card of the Simulator tab: the software path a framework would train this
//! network with on the chosen profile, and what BatchScope itself uses on this machine, each as
//! facts with their sources.

use egui::RichText;

use crate::backend::AdapterSummary;
use crate::i18n::{Key, Lang};
use crate::sim::ecosystem::{Stack, stack_of};
use crate::sim::profile::Profile;

/// Draws the card for `profile`; `adapter` is this machine's GPU adapter, if it is up.
pub fn ecosystem_ui(
    ui: &mut egui::Ui,
    lang: Lang,
    profile: &Profile,
    stacks: &[Stack],
    adapter: Option<&AdapterSummary>,
) {
    ui.label(RichText::new(lang.tr(Key::EcoTitle)).strong())
        .on_hover_text(lang.tr(Key::EcoTip));
    // A calibrated GPU profile is this app's own path: the card below says it.
    if let Some(stack) = stack_of(stacks, &profile.software).filter(|s| s.id != "wgpu") {
        stack_ui(
            ui,
            lang,
            &lang.fmt(
                Key::EcoOnProfile,
                &[("name", &super::labels::profile_name(lang, profile))],
            ),
            stack,
        );
    }
    if let Some(stack) = stack_of(stacks, "wgpu") {
        let here = adapter.map_or_else(
            || lang.tr(Key::EcoNoAdapter).to_owned(),
            |a| {
                let software = if a.software {
                    lang.tr(Key::EcoSoftwareAdapter)
                } else {
                    ""
                };
                lang.fmt(
                    Key::EcoAdapter,
                    &[
                        ("name", &a.name),
                        ("api", &a.backend),
                        ("software", &software),
                    ],
                )
            },
        );
        stack_ui(
            ui,
            lang,
            &lang.fmt(Key::EcoThisApp, &[("here", &here)]),
            stack,
        );
    }
}

/// One stack: who runs it, its libraries, what it means, and where the facts come from.
fn stack_ui(ui: &mut egui::Ui, lang: Lang, heading: &str, stack: &Stack) {
    let [devices, libraries, note] = stack.text(lang);
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.label(
            RichText::new(lang.fmt(
                Key::EcoHeading,
                &[("heading", &heading), ("name", &stack.name(lang))],
            ))
            .strong(),
        );
        ui.label(lang.fmt(Key::EcoRunsOn, &[("devices", &devices)]));
        ui.label(libraries);
        ui.label(note);
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(lang.tr(Key::EcoSources)).small());
            for url in &stack.sources {
                ui.hyperlink_to(RichText::new(url).small(), url);
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use egui_kittest::kittest::Queryable as _;

    use super::*;
    use crate::sim::ecosystem::shipped;

    #[test]
    fn the_card_names_the_profiles_stack_and_what_this_app_uses_in_both_languages() {
        for (lang, cuda, wgpu, lavapipe) in [
            (
                Lang::En,
                "On NVIDIA T4 a framework would train with: CUDA",
                "This app (on this machine: llvmpipe",
                "a software adapter that runs on the CPU",
            ),
            (
                Lang::Zh,
                "在 NVIDIA T4 上，框架会用：CUDA",
                "本应用（本机：llvmpipe",
                "这是在 CPU 上运行的软件适配器",
            ),
        ] {
            let profile = crate::sim::profile::find("nvidia-t4")
                .expect("t4")
                .remove(0);
            let stacks = shipped();
            let adapter = AdapterSummary {
                name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
                backend: "Vulkan".into(),
                software: true,
                ..AdapterSummary::default()
            };
            let mut h = crate::ui::testing::harness(
                move |ui, (): &mut ()| {
                    ecosystem_ui(ui, lang, &profile, &stacks, Some(&adapter));
                },
                (),
            );
            h.run();
            assert!(h.query_by_label_contains(cuda).is_some(), "{lang:?}");
            assert!(h.query_by_label_contains(wgpu).is_some(), "{lang:?}");
            assert!(h.query_by_label_contains(lavapipe).is_some(), "{lang:?}");
            assert!(
                h.query_all_by_label_contains("cuBLAS").count() >= 1,
                "{lang:?}"
            );
            assert!(
                h.query_by_label("https://docs.nvidia.com/cuda/cublas/")
                    .is_some()
            );
        }
    }
}
