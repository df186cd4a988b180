//! Both devices' loss on one axis of training steps. The columns each draw their own device's
//! curves on their own axes, and a fast CPU's axis runs to hundreds of thousands of steps while
//! a software GPU's stops at a few thousand: side by side, "the curves agree" cannot be seen.
//! Here both are drawn over the steps both devices have reached, so it can.

use egui::RichText;
use egui_plot::{Legend, Line, Plot, PlotPoints};

use super::labels::{device_color, device_title};
use super::plots;
use crate::i18n::{Key, Lang};
use crate::train::DeviceRun;

/// The steps every enabled device has reached (the shortest curve's last step), and each
/// device's last step; `None` before both have logged.
pub fn common_steps(runs: &[DeviceRun; 2]) -> Option<(f64, [f64; 2])> {
    let last = |r: &DeviceRun| r.batch_loss.points().last().map(|p| p[0]);
    let (Some(cpu), Some(gpu)) = (last(&runs[0]), last(&runs[1])) else {
        return None;
    };
    Some((cpu.min(gpu), [cpu, gpu]))
}

/// Draws the comparison, open where the lesson shown points at it.
pub fn loss_compared_ui(ui: &mut egui::Ui, lang: Lang, runs: &[DeviceRun; 2]) {
    if !runs.iter().all(|r| r.enabled) {
        return;
    }
    let watched = super::lesson::is_watched(ui.ctx(), crate::lesson::Widget::LossCompared);
    let header =
        egui::CollapsingHeader::new(RichText::new(lang.tr(Key::LossComparedTitle)).strong())
            .id_salt("loss-compared")
            .default_open(false);
    let header = if watched {
        header.open(Some(true))
    } else {
        header
    };
    header.show(ui, |ui| {
        super::lesson::framed(ui, crate::lesson::Widget::LossCompared, |ui| {
            compared_plot_ui(ui, lang, runs);
        });
    });
}

fn compared_plot_ui(ui: &mut egui::Ui, lang: Lang, runs: &[DeviceRun; 2]) {
    let Some((common, last)) = common_steps(runs) else {
        ui.label(RichText::new(lang.tr(Key::LossComparedNotYet)).weak());
        return;
    };
    let (behind, ahead) = if last[0] <= last[1] { (0, 1) } else { (1, 0) };
    ui.label(
        RichText::new(lang.fmt(
            Key::LossComparedCaption,
            &[
                ("steps", &crate::units::grouped(common as u64)),
                ("ahead", &device_title(lang, runs[ahead].device)),
                ("last", &crate::units::grouped(last[ahead] as u64)),
                ("behind", &device_title(lang, runs[behind].device)),
            ],
        ))
        .weak(),
    );
    let width = plots::line_width(ui);
    let shown = plots::readable(Plot::new("loss-compared-plot"), ui)
        .height(140.0)
        .legend(Legend::default())
        .include_x(0.0)
        .include_y(0.0)
        .allow_scroll(false)
        .show(ui, |plot| {
            // The CPU's line wide and underneath, the GPU's narrow on top: where they agree,
            // both show.
            for (run, widen) in runs.iter().zip([2.5, 1.0]) {
                let points: Vec<[f64; 2]> = run
                    .batch_loss
                    .points()
                    .iter()
                    .take_while(|p| p[0] <= common)
                    .copied()
                    .collect();
                plot.line(
                    Line::new(device_title(lang, run.device), PlotPoints::from(points))
                        .color(device_color(run.device))
                        .width(width * widen),
                );
            }
        });
    plots::offer_png(ui, &shown.response, lang);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    #[test]
    fn the_comparison_stops_where_the_slower_device_is() {
        let mut runs = [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)];
        assert_eq!(common_steps(&runs), None);
        for step in (0..=232_000).step_by(1000) {
            runs[0].batch_loss.push(step, 1.0);
        }
        for step in (0..=1_700).step_by(100) {
            runs[1].batch_loss.push(step, 1.0);
        }
        assert_eq!(common_steps(&runs), Some((1_700.0, [232_000.0, 1_700.0])));
    }
}
