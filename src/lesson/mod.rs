//! Guided lessons: the article's sections as scenarios a class can follow. A lesson is a data
//! file (`assets/lessons/*.toml`, both languages side by side; a teacher can open their own): a
//! preset, the probes that measure what it teaches, and steps — predict, run, watch, explain,
//! try. Its headlines are templates filled from this run's figures, never numbers written in
//! advance.
//!
//! - [`format`](mod@format): the file and its checks;
//! - [`figures`]: measured and simulated figures, and filling headlines from them;
//! - [`probe`]: running the probes (the same measurements as `bench`, `sweep`, `trace`,
//!   `memory` and `simulate`);
//! - [`follow`]: a lesson being followed in the window;
//! - [`shipped`]: the lessons that come with the app;
//! - [`verify`]: a lesson run end to end without a window (`batchscope lessons --verify`).

pub mod check;
pub mod figures;
pub mod follow;
pub mod format;
#[cfg(test)]
mod guide_tests;
pub mod measure;
pub mod names;
pub mod probe;
pub mod shipped;
pub mod verdict;
pub mod verify;

pub use figures::{Expr, Figure, Figures, Quantity};
pub use follow::Following;
pub use format::{Lesson, Step, StepKind, Text, When, Widget};
pub use measure::{Measuring, Plan};
pub use probe::{GpuPresence, Outcome};

use crate::i18n::Lang;

impl When {
    /// Whether a headline for this case applies when `gpu` stood in for the GPU.
    pub fn applies(self, gpu: GpuPresence) -> bool {
        match self {
            When::Any => true,
            When::Gpu => gpu != GpuPresence::None,
            When::HardwareGpu => gpu == GpuPresence::Hardware,
            When::SoftwareGpu => gpu == GpuPresence::Software,
            When::NoGpu => gpu == GpuPresence::None,
        }
    }
}

impl Step {
    /// The explanation's headline in `lang`: the first wording that applies to `gpu` and whose
    /// figures were all measured, or the figures the first applicable wording lacks.
    pub fn headline(
        &self,
        figures: &Figures,
        gpu: GpuPresence,
        lang: Lang,
    ) -> Result<String, Vec<String>> {
        let mut first_missing = None;
        let holds = |h: &&format::Headline| {
            let Some(expr) = h.figure.as_deref().and_then(|f| Expr::parse(f).ok()) else {
                return true;
            };
            figures
                .number(&expr)
                .is_some_and(|x| h.min.is_none_or(|lo| x >= lo) && h.max.is_none_or(|hi| x < hi))
        };
        for h in self
            .headlines
            .iter()
            .filter(|h| h.when.applies(gpu))
            .filter(holds)
        {
            match figures.fill(h.get(lang), lang) {
                Ok(text) => return Ok(text),
                Err(missing) => {
                    first_missing.get_or_insert(missing);
                }
            }
        }
        Err(first_missing.unwrap_or_default())
    }

    /// Where a software adapter (or nothing) stood in for the GPU, the right choice for a real
    /// GPU by the simulator's figure (`without_gpu`), to give beside the measured one.
    pub fn real_gpu_answer(&self, figures: &Figures, gpu: GpuPresence) -> Option<usize> {
        if gpu == GpuPresence::Hardware {
            return None;
        }
        let x = figures.number(&Expr::parse(self.without_gpu.as_deref()?).ok()?)?;
        Some(self.bounds.iter().filter(|&&b| x >= b).count())
    }

    /// A prediction's right choice (0-based) and whether it was read from a simulated figure:
    /// from `figure`, or where this run could not measure it, from `without_gpu`.
    pub fn answer(&self, figures: &Figures) -> Option<(usize, bool)> {
        [self.figure.as_deref(), self.without_gpu.as_deref()]
            .into_iter()
            .flatten()
            .find_map(|text| {
                let figure = figures.eval(&Expr::parse(text).ok()?)?;
                let x = figure.quantity.number()?;
                let choice = self.bounds.iter().filter(|&&b| x >= b).count();
                Some((choice, figure.simulated))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explain() -> Step {
        let lesson = Lesson::parse(
            r#"
id = "t"
section = 1
title = { en = "T", zh = "T" }
summary = { en = "S", zh = "S" }
[preset]
[[probes]]
kind = "speed"
[[steps]]
kind = "explain"
text = { en = "So:", zh = "于是：" }
[[steps.headlines]]
when = "hardware_gpu"
en = "GPU {speed.gpu.samples_per_s}"
zh = "GPU {speed.gpu.samples_per_s}"
[[steps.headlines]]
figure = "speed.speedup"
min = 10.0
en = "far apart: {speed.speedup}"
zh = "相差很远：{speed.speedup}"
[[steps.headlines]]
en = "CPU {speed.cpu.samples_per_s}"
zh = "CPU {speed.cpu.samples_per_s}"
"#,
        )
        .expect("reads");
        lesson.steps[0].clone()
    }

    #[test]
    fn the_first_wording_that_applies_and_is_measured_is_shown() {
        let step = explain();
        let mut f = Figures::default();
        f.measured("speed.cpu.samples_per_s", Quantity::SamplesPerS(500.0));
        f.measured("speed.speedup", Quantity::Ratio(3.0));
        // A hardware GPU, but its figure was not measured: the next wording that holds.
        let shown = step.headline(&f, GpuPresence::Hardware, Lang::En);
        assert_eq!(shown.as_deref(), Ok("CPU 500 samples/s"));
        f.measured("speed.speedup", Quantity::Ratio(30.0));
        let shown = step.headline(&f, GpuPresence::Software, Lang::Zh);
        assert_eq!(shown.as_deref(), Ok("相差很远：30.0×"));
        f.measured("speed.gpu.samples_per_s", Quantity::SamplesPerS(2e6));
        let shown = step.headline(&f, GpuPresence::Hardware, Lang::En);
        assert_eq!(shown.as_deref(), Ok("GPU 2.00 M samples/s"));
        // Nothing measured: no wording, and what the first one lacked.
        let none = step.headline(&Figures::default(), GpuPresence::None, Lang::En);
        assert_eq!(none, Err(vec!["speed.cpu.samples_per_s".to_owned()]));
    }

    #[test]
    fn a_prediction_is_answered_by_the_band_its_figure_falls_in() {
        let mut step = explain();
        step.figure = Some("speed.speedup".to_owned());
        step.bounds = vec![0.8, 1.25];
        let mut f = Figures::default();
        for (x, right) in [(0.5, 0), (0.8, 1), (1.0, 1), (1.25, 2), (70.0, 2)] {
            f.measured("speed.speedup", Quantity::Ratio(x));
            assert_eq!(step.answer(&f), Some((right, false)), "{x}");
        }
        assert_eq!(step.answer(&Figures::default()), None);
    }

    /// Without a GPU to measure, a prediction is answered by the simulator's figure and says
    /// so; a measured figure, where there is one, comes first.
    #[test]
    fn without_a_gpu_the_simulators_figure_answers_and_is_marked() {
        let mut step = explain();
        step.figure = Some("speed.gpu.samples_per_s / speed.cpu.samples_per_s".to_owned());
        step.without_gpu = Some("sim.samples_per_s / speed.cpu.samples_per_s".to_owned());
        step.bounds = vec![0.8, 1.25];
        let mut f = Figures::default();
        f.measured("speed.cpu.samples_per_s", Quantity::SamplesPerS(1000.0));
        assert_eq!(step.answer(&f), None, "nothing to answer with");
        f.simulated("sim.samples_per_s", Quantity::SamplesPerS(5000.0));
        assert_eq!(step.answer(&f), Some((2, true)));
        f.measured("speed.gpu.samples_per_s", Quantity::SamplesPerS(100.0));
        assert_eq!(step.answer(&f), Some((0, false)));
    }
}
