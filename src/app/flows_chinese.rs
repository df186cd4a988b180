//! The whole app in Chinese: every tab and every lesson step walked, and every text painted on
//! the window checked for English words outside an allow-list of code names and units.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;
    use web_time::Instant;

    use egui_kittest::Harness;

    use super::super::flows::tests::{devices_settled, harness, step_until};
    use super::super::{AppOptions, BatchScopeApp};
    use crate::i18n::Lang;
    use crate::lesson::Plan;
    use crate::ui::{LessonCommand, Tab, UiCommand};

    /// Words that stay as they are in a Chinese UI: names of products, formats, models, optimisers
    /// and kernels, and units. Anything else made of Latin letters is English a reader of Chinese
    /// should not meet.
    const ALLOWED: &[&str] = &[
        // Products, libraries, APIs and vendors.
        "BatchScope",
        "Vulkan",
        "Metal",
        "Mesa",
        "lavapipe",
        "llvmpipe",
        "wgpu",
        "rayon",
        "egui",
        "PyTorch",
        "NumPy",
        "PCIe",
        "TensorFlow",
        "Keras",
        "JAX",
        "Triton",
        "Intel",
        "Apple",
        "Google",
        "Nvidia",
        "Radeon",
        "GeForce",
        "Quadro",
        "Tesla",
        "Ampere",
        "Hopper",
        "Ada",
        "Turing",
        "Volta",
        "Pascal",
        "Blackwell",
        "Lovelace",
        "Adreno",
        "Mali",
        "Graphics",
        "Xeon",
        "Ryzen",
        "Threadripper",
        "Core",
        "Epyc",
        "Zen",
        "Neoverse",
        "Colab",
        "Kaggle",
        "Lambda",
        "DirectX",
        "OpenGL",
        "WebGPU",
        "WebGL",
        "cuBLAS",
        "cuDNN",
        "ZeRO",
        "ResNet",
        "LLaMA",
        "BERT",
        // The language switcher names each language in itself; key names.
        "English",
        "Ctrl",
        "Shift",
        "Esc",
        "Space",
        "Page",
        "Down",
        "Up",
        // Data sets and models, by their names.
        "Iris",
        "Fashion",
        "LeNet",
        "TinyVGG",
        "Explainer",
        "Palmer",
        "Wisconsin",
        // Optimisers, activations, formats.
        "Adam",
        "AdamW",
        "Momentum",
        "ReLU",
        "Tanh",
        "Sigmoid",
        "tanh",
        "sigmoid",
        "relu",
        "bfloat",
        "float",
        "half",
        "log",
        "exp",
        "max",
        "min",
        "softmax",
        "im2col",
        "matmul",
        "gemm",
        "axpy",
        "argmax",
        // wgpu's calls, named in the spans they time (`map_async` + `poll`).
        "poll",
        // Units.
        "ms",
        "µs",
        "ns",
        "px",
        "pt",
        "dB",
        "Hz",
        "GHz",
        "MHz",
        "Ki",
        "Mi",
        "Gi",
        "Ti",
        "KB",
        "MB",
        "GB",
        "TB",
        "KiB",
        "MiB",
        "GiB",
        "TiB",
        "FLOP",
        "FLOPs",
        "GFLOP",
        "TFLOP",
        "FLOPS",
        "GFLOPS",
        "TFLOPS",
        "img",
        "dims",
        // Models, layers and functions as the literature names them.
        "GPT",
        "nanoGPT",
        // The product and the architecture the first lesson names, kept so in Chinese texts.
        "ChatGPT",
        "Transformer",
        "LayerNorm",
        "gelu",
        "mlp",
    ];

    /// Names of more than one word kept as they are.
    const ALLOWED_PHRASES: &[&str] = &[
        "BERT-base",
        "Fashion-MNIST",
        // Model presets, as the command line names them.
        "gpt-tiny",
        "gpt-baby",
        "mlp-layernorm",
    ];

    /// Every text shape the last frame painted.
    fn painted(harness: &Harness<'_, BatchScopeApp>) -> Vec<String> {
        fn walk(shape: &egui::Shape, out: &mut Vec<String>) {
            match shape {
                egui::Shape::Text(text) => out.push(text.galley.text().to_owned()),
                egui::Shape::Vec(shapes) => shapes.iter().for_each(|s| walk(s, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for clipped in &harness.output().shapes {
            walk(&clipped.shape, &mut out);
        }
        out
    }

    /// The English words in `text`: runs of Latin letters of length ≥ 2 that are not in the
    /// allow-list, nor part of a code name (with `_`, `.`, `::`, digits or `/` inside), nor all
    /// capitals (an acronym: CPU, GPU, SGD, FP16).
    fn english_words(text: &str, extra: &[String]) -> Vec<String> {
        // Commands and code between backticks are code.
        let mut text: String = text
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        for allowed in extra
            .iter()
            .map(String::as_str)
            .chain(ALLOWED_PHRASES.iter().copied())
        {
            text = text.replace(allowed, " ");
        }
        let text = without_method_calls(&text);
        let text = without_options(&text);
        text.split(|c: char| !(c.is_ascii_alphanumeric() || "_.:/-'".contains(c)))
            .flat_map(|token| token.split('-'))
            .map(|token| token.trim_matches(|c: char| ".:/'".contains(c)))
            .filter(|token| token.len() >= 2)
            .filter(|token| token.chars().all(|c| c.is_ascii_alphabetic()))
            .filter(|token| token.chars().skip(1).any(|c| c.is_ascii_lowercase()))
            .filter(|token| !ALLOWED.contains(token))
            .map(str::to_owned)
            .collect()
    }

    /// `text` without a command line's options (`--no-gpu`): code too.
    fn without_options(text: &str) -> String {
        without_spans(text, "--", |after| {
            after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(after.len())
        })
    }

    /// `text` with each span that starts at `opening` replaced by a space; `reach` says how far
    /// a span goes on after its opening.
    fn without_spans(text: &str, opening: &str, reach: impl Fn(&str) -> usize) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find(opening) {
            out.push_str(&rest[..start]);
            out.push(' ');
            let after = &rest[start + opening.len()..];
            rest = &after[reach(after)..];
        }
        out.push_str(rest);
        out
    }

    /// `text` without method calls such as `loss.item()` and `.to(device)`: code, as PyTorch
    /// writes it, even where the sentence around it is Chinese.
    fn without_method_calls(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(dot) = rest.find('.') {
            let after = &rest[dot + 1..];
            let name = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let mut before = &rest[..dot];
            if name > 0 && after[name..].starts_with('(') {
                // The object the method is called on is code too.
                let object = before
                    .char_indices()
                    .rev()
                    .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
                    .map_or(0, |(i, c)| i + c.len_utf8());
                before = &before[..object];
            }
            out.push_str(before);
            if name > 0 && after[name..].starts_with('(') {
                let close = after[name..]
                    .find(')')
                    .map_or(after.len(), |c| name + c + 1);
                out.push(' ');
                rest = &after[close..];
            } else {
                out.push('.');
                rest = after;
            }
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn the_scanner_finds_english_and_lets_code_names_and_units_pass() {
        let none: &[String] = &[];
        assert_eq!(english_words("保存", none), Vec::<String>::new());
        assert_eq!(
            english_words("12.5 ms，3 MB，GPU 与 CPU，FP16", none),
            Vec::<String>::new()
        );
        assert_eq!(
            english_words("matmul_tiled 内核，Adam", none),
            Vec::<String>::new()
        );
        assert_eq!(english_words("Save", none), vec!["Save"]);
        assert_eq!(english_words("log2 scale", none), vec!["scale"]);
        assert_eq!(
            english_words("显存不足：out of memory", none),
            vec!["out", "of", "memory"]
        );
        let adapter = vec!["AMD EPYC 9R14 96-Core Processor".to_owned()];
        assert!(english_words("CPU：AMD EPYC 9R14 96-Core Processor", &adapter).is_empty());
        assert!(english_words("`batchscope profiles` 列出来源", none).is_empty());
        assert!(english_words("就像每步都调用 .item()：每次读取", none).is_empty());
        assert!(english_words("每次迭代都调用 loss.item() 会", none).is_empty());
        assert!(english_words("用 .to(device) 复制", none).is_empty());
        assert_eq!(english_words("3.5 倍 item", none), vec!["item"]);
        assert!(english_words("GPU：未参与（启动时带了 --no-gpu）。", none).is_empty());
        assert_eq!(english_words("带了 --no-gpu，speed", none), vec!["speed"]);
    }

    /// Steps a few frames and records each painted English text with where it was seen.
    fn scan(harness: &mut Harness<'_, BatchScopeApp>, place: &str, found: &mut BTreeSet<String>) {
        for _ in 0..3 {
            harness.step();
        }
        let extra = system_names(harness.state());
        for text in painted(harness) {
            let words = english_words(&text, &extra);
            if !words.is_empty() {
                found.insert(format!("{place}: {text:?} ({})", words.join(" ")));
            }
        }
    }

    /// Names this machine gives (the CPU's brand, the adapter's name and driver): shown as the
    /// system says them.
    fn system_names(app: &BatchScopeApp) -> Vec<String> {
        static ADAPTERS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let mut names = Vec::new();
        for run in &app.state.runs {
            if let crate::train::DeviceStatus::Ready { name, adapter, .. } = &run.status {
                names.push(name.clone());
                if let Some(adapter) = adapter {
                    names.push(adapter.name.clone());
                    names.push(adapter.driver.clone());
                    names.push(adapter.driver_info.clone());
                    names.push(adapter.backend.clone());
                }
            }
        }
        // Every adapter's, as the lessons' probes name the one they opened (without training
        // workers, no column names it).
        names.extend(
            ADAPTERS
                .get_or_init(|| {
                    crate::backend::gpu::context::enumerate(wgpu::Backends::all())
                        .into_iter()
                        .flat_map(|a| [a.name, a.driver, a.driver_info, a.backend])
                        .collect()
                })
                .iter()
                .cloned(),
        );
        // The data set's own words: its name, path, columns and classes.
        if let Some(loaded) = &app.state.data.loaded {
            let table = &loaded.table;
            names.push(table.name.clone());
            names.push(table.path.clone());
            names.extend(table.columns.iter().cloned());
            names.extend(table.feature_names.iter().cloned());
            names.extend(table.class_names.iter().cloned());
        }
        names.retain(|n| !n.is_empty());
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        names
    }

    /// Fails with every English sentence found.
    fn assert_none_found(found: BTreeSet<String>) {
        assert!(
            found.is_empty(),
            "English in the Chinese UI:\n{}",
            found.into_iter().collect::<Vec<_>>().join("\n")
        );
    }

    #[test]
    fn every_tab_of_a_training_session_in_chinese_shows_no_english_sentence() {
        let mut harness = harness(AppOptions {
            lang: Lang::Zh,
            lang_given: true,
            ..AppOptions::default()
        });
        assert!(step_until(
            &mut harness,
            Duration::from_secs(60),
            devices_settled
        ));
        harness.set_size(egui::vec2(1280.0, 2000.0));
        let mut found = BTreeSet::new();
        // Train a little, so the columns, the journey and the memory view have figures.
        harness.state_mut().apply(UiCommand::Run);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            harness.step();
            std::thread::sleep(Duration::from_millis(20));
        }
        harness.state_mut().apply(UiCommand::Pause);
        for tab in Tab::ALL {
            harness.state_mut().apply(UiCommand::ShowTab(tab));
            scan(&mut harness, &format!("{tab:?}"), &mut found);
        }
        assert_none_found(found);
    }

    /// `text` with its figures' places (`{speed.cpu.step_ms}`) left out.
    fn without_places(text: &str) -> String {
        without_spans(text, "{", |after| {
            after.find('}').map_or(after.len(), |close| close + 1)
        })
    }

    /// Every Chinese text of every shipped lesson, each headline of every branch included (a
    /// hardware GPU's too, which no test machine takes), with its figures' places left out.
    /// The walk below shows the branch this machine takes, filled, in the window.
    #[test]
    fn every_branch_of_every_lessons_chinese_has_no_english_sentence() {
        let (lessons, problems) = crate::lesson::shipped::lessons();
        assert!(problems.is_empty(), "{problems:?}");
        let mut found = BTreeSet::new();
        for lesson in &lessons {
            let steps = || lesson.steps.iter();
            let texts = [&lesson.title.zh, &lesson.summary.zh]
                .into_iter()
                .chain(steps().map(|s| &s.text.zh))
                .chain(steps().flat_map(|s| s.choices.iter().map(|c| &c.zh)))
                .chain(steps().flat_map(|s| s.headlines.iter().map(|h| &h.zh)));
            let mut count = 0;
            for text in texts {
                count += 1;
                let words = english_words(&without_places(text), &[]);
                if !words.is_empty() {
                    found.insert(format!("{}: {text:?} ({})", lesson.id, words.join(" ")));
                }
            }
            assert!(count > lesson.steps.len(), "{}", lesson.id);
        }
        assert_eq!(without_places("每步 {speed.cpu.step_ms}。"), "每步  。");
        assert_none_found(found);
    }

    /// Every lesson's steps, before and after its probes measure, and the tabs with what the
    /// lessons measured in them. On the CPU alone: the branches a GPU takes are checked as
    /// text above (a software adapter's probes would add most of a minute), and the GPU's
    /// column in Chinese by the test before. No training workers: each lesson's preset would
    /// have them build its model and evaluate it before the probes start, and their figures
    /// are scanned by the test before too.
    #[test]
    fn every_lesson_in_chinese_shows_no_english_sentence() {
        let mut harness = harness(AppOptions {
            lang: Lang::Zh,
            lang_given: true,
            gpu: crate::backend::GpuChoice::Unavailable(crate::i18n::Said::new(
                crate::i18n::ErrKey::NoGpuFlag,
                &[],
            )),
            lesson_plan: Plan::quick(),
            start_workers: false,
            ..AppOptions::default()
        });
        harness.set_size(egui::vec2(1280.0, 2000.0));
        let mut found = BTreeSet::new();
        let lessons = harness.state().state.lessons.clone();
        for lesson in &lessons {
            harness
                .state_mut()
                .apply(UiCommand::Lesson(LessonCommand::Open(lesson.id.clone())));
            for i in 0..lesson.steps.len() {
                let place = format!("{} step {}", lesson.id, i + 1);
                scan(&mut harness, &place, &mut found);
                harness.key_press(egui::Key::ArrowRight);
            }
            let measured = |app: &BatchScopeApp| {
                app.state
                    .lesson
                    .as_ref()
                    .is_some_and(|f| f.outcome.is_some() || f.failed.is_some())
            };
            step_until(&mut harness, Duration::from_secs(90), measured);
            // The headline and the try step, measured.
            let steps = lesson.steps.len();
            for i in 0..steps {
                harness.key_press(egui::Key::ArrowLeft);
                scan(
                    &mut harness,
                    &format!("{} measured, step {}", lesson.id, steps - i),
                    &mut found,
                );
            }
            harness
                .state_mut()
                .apply(UiCommand::Lesson(LessonCommand::Close));
        }
        // The tabs again, now with the lessons' sweeps, runs and data sets in them.
        for tab in Tab::ALL {
            harness.state_mut().apply(UiCommand::ShowTab(tab));
            scan(
                &mut harness,
                &format!("{tab:?} after the lessons"),
                &mut found,
            );
        }
        assert_none_found(found);
    }
}
