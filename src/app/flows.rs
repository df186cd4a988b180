//! Whole-app flows: the app with its real workers and jobs, driven through its window. The
//! panels' own tests, from synthetic state without threads, sit at the bottom of each panel's
//! file.
#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;
    use web_time::Instant;

    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable as _;

    use std::sync::Arc;

    use super::super::{AppOptions, BatchScopeApp, GpuChoice};
    use crate::backend::gpu::GpuBackend;
    use crate::data::source::DataSource;
    use crate::train::DeviceStatus;
    use crate::ui::{Tab, UiCommand};

    pub(in crate::app) fn harness(options: AppOptions) -> Harness<'static, BatchScopeApp> {
        let mut harness = harness_for(BatchScopeApp::new(options));
        harness.step();
        harness
    }

    /// A window-sized harness that draws `app`.
    pub(in crate::app) fn harness_for(app: BatchScopeApp) -> Harness<'static, BatchScopeApp> {
        Harness::builder()
            .with_size(egui::vec2(1280.0, 900.0))
            .build_ui_state(|ui, app: &mut BatchScopeApp| app.frame(ui), app)
    }

    /// Steps frames (the workers run on their own threads) until `done` or the time is up.
    pub(in crate::app) fn step_until(
        harness: &mut Harness<'_, BatchScopeApp>,
        limit: Duration,
        mut done: impl FnMut(&BatchScopeApp) -> bool,
    ) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            harness.step();
            if done(harness.state()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    pub(in crate::app) fn devices_settled(app: &BatchScopeApp) -> bool {
        app.state
            .runs
            .iter()
            .all(|c| c.status != DeviceStatus::Starting)
    }

    /// An app told there is no adapter (for `reason`), once both columns know their device.
    pub(in crate::app) fn settled_without_gpu(reason: &str) -> Harness<'static, BatchScopeApp> {
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim(reason)),
            ..AppOptions::default()
        });
        assert!(
            step_until(&mut harness, Duration::from_secs(20), devices_settled),
            "devices never came up"
        );
        harness
    }

    pub(in crate::app) fn gpu_expected() -> bool {
        match GpuBackend::new() {
            Ok(_) => true,
            Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("CI=true and no GPU adapter: {}", e.reason)
            }
            Err(e) => {
                eprintln!("no GPU adapter, checking the CPU column only: {}", e.reason);
                false
            }
        }
    }

    #[test]
    fn pressing_run_advances_the_step_counters_of_both_columns() {
        let with_gpu = gpu_expected();
        let mut harness = harness(AppOptions::default());
        assert!(
            step_until(&mut harness, Duration::from_secs(20), devices_settled),
            "devices never came up"
        );
        assert_eq!(harness.state().state.runs[0].steps(), 0);
        harness.get_by_label("Run").click();
        let both = step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0].steps() > 0 && (!with_gpu || app.state.runs[1].steps() > 0)
        });
        assert!(
            both,
            "steps: cpu {}, gpu {}",
            harness.state().state.runs[0].steps(),
            harness.state().state.runs[1].steps()
        );
        // The counters on screen say so too, and the button became Pause.
        harness.step();
        assert!(
            harness.query_by_label("Step 0").is_none(),
            "a column still shows step 0"
        );
        assert!(harness.query_all_by_label_contains("Step ").count() > usize::from(with_gpu));
        harness.get_by_label("Pause").click();
        harness.step();
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
    }

    #[test]
    fn switching_language_changes_the_labels() {
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("test")),
            ..AppOptions::default()
        });
        assert!(harness.query_by_label("Run").is_some());
        harness.get_by_label("简体中文").click();
        harness.step();
        harness.step();
        assert!(
            harness.query_by_label("运行").is_some(),
            "the Run button is not in Chinese"
        );
        assert!(harness.query_by_label("Run").is_none());
        assert!(harness.query_by_label("设置").is_some());
        harness.get_by_label("English").click();
        harness.step();
        harness.step();
        assert!(harness.query_by_label("Run").is_some());
    }

    #[test]
    fn without_an_adapter_the_gpu_column_explains_and_the_cpu_keeps_working() {
        let mut harness = settled_without_gpu("no adapter in this test");
        harness.step();
        assert!(harness.query_by_label("No GPU adapter").is_some());
        assert!(
            harness
                .query_by_label_contains("mesa-vulkan-drivers")
                .is_some()
        );
        assert!(harness.query_by_label("no adapter in this test").is_some());
        harness.key_press(egui::Key::Space);
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| app.state.runs
                [0]
            .steps()
                > 0),
            "the CPU column did not train"
        );
        assert_eq!(harness.state().state.runs[1].steps(), 0);
    }

    #[test]
    fn saved_settings_come_back_and_a_language_on_the_command_line_wins() {
        let mut app = BatchScopeApp::new(AppOptions::default());
        app.state.lang = crate::i18n::Lang::Zh;
        app.state.settings.config.batch = 64;
        app.state.settings.config.hidden = vec![8];
        app.apply(crate::ui::UiCommand::Reset);
        let saved = app.saved();
        let back = BatchScopeApp::with_saved(AppOptions::default(), Some(saved.clone()));
        assert_eq!(back.state.lang, crate::i18n::Lang::Zh);
        assert_eq!(back.state.settings.applied.batch, 64);
        assert_eq!(back.state.settings.config.hidden, vec![8]);
        let english = AppOptions {
            lang_given: true,
            ..AppOptions::default()
        };
        assert_eq!(
            BatchScopeApp::with_saved(english, Some(saved)).state.lang,
            crate::i18n::Lang::En
        );
    }

    pub(in crate::app) fn loaded(app: &BatchScopeApp) -> bool {
        app.state.data.loaded.is_some() && !app.is_loading()
    }

    /// A folder under the system's temporary directory, emptied first.
    pub(in crate::app) fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("batchscope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn a_shipped_real_data_set_is_previewed_then_trains_from_the_setup_panel() {
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Source").click();
        // The popup opens on the frame after the click.
        harness.step();
        harness.step();
        harness.get_by_label("Iris flowers").click();
        // Read on the loader thread, then shown in the preview.
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        assert_eq!(
            harness.state().state.settings.config.source,
            DataSource::Shipped("iris".into())
        );
        assert_eq!(harness.state().state.tab, Tab::Data);
        assert!(harness.query_by_label("setosa: 50").is_some());
        assert!(harness.query_by_label_contains("150 (train 120").is_some());
        // 4 inputs, 16, 16, 3 classes: 4·16+16 + 16·16+16 + 16·3+3.
        assert!(harness.query_by_label("Parameters: 403").is_some());
        harness.get_by_label("Train on this data set").click();
        harness.step();
        assert_eq!(harness.state().state.tab, Tab::Training);
        let session = harness.state().session().expect("session");
        assert_eq!((session.data.features, session.data.classes()), (4, 3));
        assert_eq!(session.data.class_names[0], "setosa");
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0)
        }));
        // Four features: the column shows the test set's confusion matrix, not a boundary.
        harness.step();
        assert!(
            harness
                .query_by_label("Confusion matrix (test set)")
                .is_some()
        );
    }

    /// What Open…, a drop and `batchscope PATH` all end in: `UiCommand::OpenPath`.
    #[test]
    fn a_csv_opened_like_open_does_is_previewed_and_trains() {
        let dir = temp_dir("open-csv");
        let path = dir.join("fruit.csv");
        let rows: Vec<String> = (0..60)
            .map(|i| {
                let (w, d, kind) = if i % 2 == 0 {
                    (150 + i, 7, "apple")
                } else {
                    (120 + i, 6, "pear")
                };
                format!("{w};{d};{kind}\n")
            })
            .collect();
        let rows = rows.concat();
        std::fs::write(&path, format!("weight;diameter;kind\n{rows}")).expect("write");
        let mut harness = settled_without_gpu("test");
        harness.state_mut().apply(UiCommand::OpenPath(path.clone()));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        assert_eq!(harness.state().state.tab, Tab::Data);
        assert!(harness.query_by_label("fruit.csv").is_some());
        assert!(harness.query_by_label("apple: 30").is_some());
        assert!(harness.query_by_label("pear: 30").is_some());
        assert!(harness.query_by_label("Scatter of two features:").is_some());
        // Until the user chooses it, the run in progress keeps its data.
        assert_eq!(
            harness.state().session().expect("session").data.name,
            "spiral"
        );
        harness.get_by_label("Train on this data set").click();
        harness.step();
        let session = harness.state().session().expect("session");
        assert_eq!(session.data.class_names, ["apple", "pear"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file or folder dropped on the window, as eframe hands it over.
    #[derive(Debug)]
    struct Dropped(std::path::PathBuf);

    impl egui::DroppedFile for Dropped {
        fn path(&self) -> &std::path::Path {
            &self.0
        }
        fn bytes(&self) -> Result<Vec<u8>, String> {
            std::fs::read(&self.0).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn a_dropped_image_folder_is_previewed_as_a_sample_grid() {
        let dir = temp_dir("drop-images");
        for (class, level) in [("dark", 30u8), ("light", 220u8)] {
            std::fs::create_dir_all(dir.join(class)).expect("class dir");
            for i in 0..6u8 {
                let image = image::GrayImage::from_pixel(12, 10, image::Luma([level + i]));
                image
                    .save(dir.join(class).join(format!("{i}.png")))
                    .expect("png");
            }
        }
        let mut harness = settled_without_gpu("test");
        harness
            .input_mut()
            .dropped_files
            .push(Arc::new(Dropped(dir.clone())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        let table = &harness
            .state()
            .state
            .data
            .loaded
            .as_ref()
            .expect("loaded")
            .table;
        assert_eq!((table.rows, table.features()), (12, 28 * 28));
        assert!(
            harness
                .query_by_label("The first 10 images of each class, 28×28 pixels:")
                .is_some()
        );
        assert!(harness.query_by_label("dark").is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_file_shows_an_error_and_the_previous_data_stays() {
        let dir = temp_dir("bad-file");
        let path = dir.join("photo.csv");
        std::fs::write(&path, [0x47u8, 0x49, 0x46, 0x38, 0x00, 0x01, 0x02]).expect("write");
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("wine".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.state_mut().apply(UiCommand::OpenPath(path));
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.state.data.error.is_some()
        }));
        harness.step();
        let app = harness.state();
        let error = app
            .state
            .data
            .error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            error.contains("photo.csv, byte 4") && error.contains("binary"),
            "{error}"
        );
        assert!(
            harness
                .query_by_label("Could not load the data set")
                .is_some()
        );
        assert!(
            harness
                .query_by_label_contains("previous data set stays")
                .is_some()
        );
        // The wine preview and the source chosen before are as they were.
        let app = harness.state();
        assert_eq!(
            app.state.data.loaded.as_ref().expect("kept").table.name,
            "wine"
        );
        assert_eq!(
            app.state.settings.config.source,
            DataSource::Shipped("wine".into())
        );
        assert_eq!(app.session().expect("session").data.name, "spiral");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_regression_set_trains_and_shows_r2() {
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("diabetes".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        assert!(harness.query_by_label_contains("regression (").is_some());
        harness.state_mut().apply(UiCommand::UseLoaded);
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0 && e.test.r2.is_some())
        }));
        harness.step();
        assert!(
            harness.query_all_by_label("R²").count() >= 2,
            "metric and curve"
        );
        assert!(harness.query_by_label("Mean absolute error").is_some());
        assert!(
            harness
                .query_by_label_contains("Predicted vs true target")
                .is_some()
        );
    }

    #[test]
    fn choosing_a_cnn_on_digits_trains_it_and_shows_its_predictions_and_filters() {
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("digits".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        // The model chooser offers a CNN for images; its blocks and presets appear.
        harness.get_by_label("CNN").click();
        harness.step();
        assert!(
            harness
                .query_by_label_contains("Convolution blocks")
                .is_some()
        );
        assert!(harness.query_by_label("LeNet-like").is_some());
        assert_eq!(harness.state().state.settings.config.conv, [8, 16]);
        harness.state_mut().apply(UiCommand::UseLoaded);
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(60), |app| {
            app.state.runs[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0 && e.first_layer.is_some())
        }));
        let app = harness.state();
        let spec = app.session().expect("session").config.conv.clone();
        assert_eq!(spec, [8, 16], "the session trains the CNN");
        let eval = app.state.runs[0].last_eval.as_ref().expect("evaluated");
        assert_eq!(eval.samples.len(), crate::train::SAMPLE_GRID);
        let first = eval.first_layer.as_ref().expect("a CNN's first layer");
        assert_eq!((first.filters, first.kernel, first.height), (8, 3, 8));
        assert_eq!(first.maps.len(), 8 * 8 * 8);
        harness.step();
        for label in [
            "Test images and the class predicted",
            "Confusion matrix (test set)",
            "rows: true class · columns: predicted class",
            "First-layer filters (learned)",
            "Feature maps of the first test image",
        ] {
            assert!(harness.query_by_label(label).is_some(), "{label}");
        }
        // The same views in Chinese.
        harness.state_mut().state.lang = crate::i18n::Lang::Zh;
        harness.step();
        for label in [
            "测试图像及其预测类别",
            "混淆矩阵（测试集）",
            "行：真实类别 · 列：预测类别",
            "第一层滤波器（学习所得）",
            "第一张测试图像的特征图",
        ] {
            assert!(harness.query_by_label(label).is_some(), "{label}");
        }
    }

    #[test]
    fn a_saved_data_set_is_read_again_at_start_and_a_missing_one_falls_back() {
        let mut config = crate::train::TrainConfig {
            source: DataSource::Shipped("penguins".into()),
            ..crate::train::TrainConfig::default()
        };
        let saved = |config: &crate::train::TrainConfig| super::super::Saved {
            lang: crate::i18n::Lang::En,
            config: config.clone(),
            enabled: [true, false],
            sharing: crate::train::Sharing::default(),
        };
        let options = || AppOptions {
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("test")),
            ..AppOptions::default()
        };
        let mut harness = harness_for(BatchScopeApp::with_saved(options(), Some(saved(&config))));
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.session().is_some_and(|s| s.data.name == "penguins")
        }));
        assert!(!harness.state().state.settings.is_changed());
        // A file that has gone since: the banner says so and the generator takes over.
        config.source = DataSource::File {
            path: std::env::temp_dir().join("batchscope-gone/never.csv"),
            options: crate::data::formats::LoadOptions::default(),
        };
        let mut harness = harness_for(BatchScopeApp::with_saved(options(), Some(saved(&config))));
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.session().is_some()
        }));
        let app = harness.state();
        assert_eq!(app.session().expect("session").data.name, "spiral");
        assert!(
            app.state
                .data
                .error
                .as_ref()
                .map(ToString::to_string)
                .is_some_and(|e| e.contains("never.csv: does not exist") && !e.contains("  ")),
            "{:?}",
            app.state.data.error
        );
    }

    #[test]
    fn damaged_saved_settings_start_the_app_with_a_note_and_a_run_that_works() {
        use super::super::restore::restore;
        let wine = crate::data::shipped::source_tree_path("wine").expect("wine");
        let file = DataSource::File {
            path: wine,
            options: crate::data::formats::LoadOptions::default(),
        };
        let good = ron::to_string(&super::super::Saved::default()).expect("ron");
        let deep = good.replace(
            "hidden:[16,16]",
            &format!("hidden:[{}4]", "4,".repeat(99_999)),
        );
        assert_ne!(deep, good, "the saved text names the hidden layers: {good}");
        let source = ron::to_string(&file).expect("ron");
        let with_file = |text: &str| text.replace("source:generated", &format!("source:{source}"));
        assert!(with_file(&good).contains("wine.csv"), "{good}");
        let cases = [
            // A truncated file.
            (
                good[..good.len() / 3].to_owned(),
                "could not be read",
                "spiral",
            ),
            // 100,000 hidden layers with a data file.
            (with_file(&deep), "100000 hidden layers", "wine.csv"),
            // A batch in range but larger than the data set's training rows.
            (
                with_file(&good.replace("batch:32", "batch:60000")),
                "do not fit wine.csv",
                "wine.csv",
            ),
            // A data file that has gone.
            (
                good.replace(
                    "source:generated",
                    "source:file(path:\"/no/such/gone.csv\",options:())",
                ),
                "/no/such/gone.csv",
                "spiral",
            ),
        ];
        for (text, note, data) in cases {
            let (saved, notes) = restore(&text);
            let app = BatchScopeApp::with_restored(
                AppOptions {
                    gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("test")),
                    ..AppOptions::default()
                },
                Some(saved),
                notes,
            );
            let mut harness = harness_for(app);
            assert!(
                step_until(&mut harness, Duration::from_secs(20), |app| {
                    app.session().is_some_and(|s| s.data.name == data)
                }),
                "{note}: no run on {data}"
            );
            harness.step();
            assert!(
                harness.query_by_label_contains(note).is_some(),
                "no note containing `{note}`: {:?}",
                harness.state().state.restore_notes
            );
            // Run trains: the settings the app fell back to make a run.
            harness.state_mut().run_commands(vec![UiCommand::Run]);
            assert!(
                step_until(&mut harness, Duration::from_secs(20), |app| {
                    app.state.runs[0].steps() > 0
                }),
                "{note}: Run did nothing"
            );
            harness.get_by_label("Dismiss").click();
            harness.step();
            assert!(harness.state().state.restore_notes.is_empty());
        }
    }

    #[test]
    fn the_experiments_tab_runs_a_sweep_with_training_paused_and_cancel_stops_one() {
        use crate::bench::sweep::Sweep;
        let mut harness = settled_without_gpu("test");
        harness.state_mut().run_commands(vec![UiCommand::Run]);
        harness.state_mut().run_commands(vec![
            UiCommand::ShowTab(Tab::Experiments),
            UiCommand::RunSweep(Sweep::parse("batch=8,32").expect("sweep")),
        ]);
        // Training pauses, and the sweep starts only once it has.
        assert!(
            harness
                .state()
                .state
                .runs
                .iter()
                .all(|r| r.run_state != crate::train::RunState::Running)
        );
        let overlapped = std::cell::Cell::new(false);
        assert!(step_until(&mut harness, Duration::from_secs(60), |app| {
            overlapped
                .set(overlapped.get() || (app.jobs.sweep.is_some() && app.state.is_running()));
            app.state.sweep.as_ref().is_some_and(|r| r.ended)
        }));
        assert!(!overlapped.get(), "the sweep ran while a device trained");
        harness.step();
        let results = harness.state().state.sweep.clone().expect("results");
        let cpu: Vec<_> = results
            .points
            .iter()
            .filter(|p| p.device == Device::Cpu)
            .collect();
        assert_eq!(cpu.len(), 2, "{results:?}");
        assert!(cpu.iter().all(|p| p.samples_per_s > 0.0));
        // No adapter here: the GPU is left out, and the tab says why.
        assert!(
            results.notes.iter().any(|n| matches!(
                n,
                crate::bench::sweep::Note::LeftOut {
                    device: Device::Gpu,
                    ..
                }
            )),
            "{:?}",
            results.notes
        );
        assert!(harness.query_by_label_contains("GPU: left out (").is_some());
        // Its CSV opens in a spreadsheet: a header, then one row per device and value.
        let dir = temp_dir("sweep-csv");
        let path = dir.join("sweep.csv");
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SaveSweep(path.clone())]);
        let csv = std::fs::read_to_string(&path).expect("csv written");
        let mut lines = csv.lines();
        assert!(
            lines
                .next()
                .is_some_and(|h| h.starts_with("device,parameter_batch,samples_per_s"))
        );
        assert_eq!(lines.filter(|l| l.starts_with("cpu,")).count(), 2, "{csv}");
        harness.step();
        assert!(harness.query_by_label_contains("Sweep saved to").is_some());
        // A destination that is not a file is refused with the reason, and nothing breaks.
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SaveSweep(dir.clone())]);
        harness.step();
        assert!(
            harness
                .query_by_label_contains("name a file to write")
                .is_some()
        );
        // The ended sweep is in the history.
        let kept = harness.state().state.history.entries.last().cloned();
        assert!(
            matches!(
                kept.as_ref().map(|e| &e.what),
                Some(crate::bench::history::What::Sweep(s)) if s.points.len() == 2
            ),
            "{kept:?}"
        );
        assert!(harness.query_by_label("Run sweep").is_some());
        // A long sweep, cancelled at once: it stops, and says so.
        harness.state_mut().run_commands(vec![UiCommand::RunSweep(
            Sweep::parse("batch=1,2,4,8,16,32,64,128").expect("sweep"),
        )]);
        harness
            .state_mut()
            .run_commands(vec![UiCommand::CancelSweep]);
        harness.step();
        let results = harness.state().state.sweep.clone().expect("results");
        assert!(results.ended && results.points.len() < 8, "{results:?}");
        assert!(
            results
                .notes
                .contains(&crate::bench::sweep::Note::Cancelled)
        );
        assert!(harness.state().jobs.sweep.is_none());
    }

    #[test]
    fn a_path_on_the_command_line_is_opened_trained_on_and_previewed() {
        let path = crate::data::shipped::source_tree_path("wine").expect("wine");
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("test")),
            open: Some(path),
            ..AppOptions::default()
        });
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.session().is_some_and(|s| s.data.name == "wine.csv")
        }));
        assert_eq!(harness.state().state.tab, Tab::Data);
        harness.step();
        assert!(
            harness
                .query_by_label("Training on this data set")
                .is_some()
        );
    }

    #[test]
    fn without_a_system_file_dialog_open_shows_the_in_app_browser() {
        let mut harness = settled_without_gpu("test");
        // As after a system dialog that answered "nothing" within a fraction of a second.
        harness.state_mut().panels.opener.native_missing = true;
        harness.get_by_label("Open file…").click();
        // The command opens the browser after the frame; a new window then takes one frame to
        // measure itself before it is shown.
        harness.run_steps(3);
        assert!(harness.state().panels.opener.is_open());
        assert!(
            harness
                .query_by_label_contains("Open a data set file")
                .is_some()
        );
        harness.get_by_label("Cancel").click();
        harness.step();
        harness.step();
        assert!(
            harness
                .query_by_label_contains("Open a data set file")
                .is_none()
        );
    }

    #[test]
    fn every_string_in_both_languages_has_its_glyphs_in_the_fonts() {
        let harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("test")),
            ..AppOptions::default()
        });
        let font = egui::FontId::proportional(14.0);
        harness.ctx.fonts_mut(|fonts| {
            for &key in crate::i18n::Key::ALL {
                for lang in crate::i18n::Lang::ALL {
                    let text = lang.tr(key);
                    assert!(fonts.has_glyphs(&font, text), "{key:?} in {lang:?}: {text}");
                }
            }
        });
    }

    #[test]
    fn the_journey_shows_lanes_of_a_running_session_and_a_hovered_span_its_duration() {
        use crate::trace::Category;
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Run").click();
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.state.runs[0].trace.steps.len() >= 20
            }),
            "no steps were recorded"
        );
        harness.get_by_label("Batch journey").click();
        // One frame takes the click, the next draws the view.
        harness.run_steps(2);
        // The lanes of the CPU's run, while it runs.
        for lane in ["training thread", "host→device copy", "CPU kernels (rayon)"] {
            assert!(harness.query_by_label(lane).is_some(), "lane {lane}");
        }
        assert!(harness.query_by_label_contains("Step breakdown").is_some());
        // Hold the picture still, then hover a kernel span.
        harness.state_mut().apply(UiCommand::Pause);
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
        // Zoom onto one kernel span (a step the OS held up could make the followed window so
        // long that every span is a sliver).
        let span = harness.state().state.runs[0]
            .trace
            .spans
            .iter()
            .filter(|s| s.category == Category::Kernel)
            .max_by_key(|s| s.duration_ns)
            .cloned()
            .expect("a kernel span was recorded");
        let margin = span.duration_ns;
        harness.state_mut().panels.journey.show_range(
            crate::device::Device::Cpu,
            span.start_ns.saturating_sub(margin),
            span.end_ns() + margin,
        );
        harness.run_steps(3);
        let hit = harness
            .state()
            .panels
            .journey
            .hits
            .iter()
            .find(|h| h.span == span)
            .cloned()
            .expect("the kernel span is drawn");
        assert!(hit.rect.width() > 100.0, "{:?}", hit.rect);
        let duration = crate::units::format_ns(hit.span.duration_ns as f64);
        let tooltip = format!("{duration} · Kernel");
        assert!(harness.query_by_label(&tooltip).is_none());
        harness
            .ctx
            .global_style_mut(|s| s.interaction.tooltip_delay = 0.0);
        harness.hover_at(hit.rect.center());
        harness.run_steps(3);
        assert!(harness.query_by_label(hit.span.name).is_some());
        assert!(
            harness.query_by_label(&tooltip).is_some(),
            "the tooltip shows {tooltip} for {}",
            hit.span.name
        );
    }

    #[test]
    fn a_step_replays_on_the_hardware_diagram_slowly() {
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Step").click();
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            !app.state.runs[0].trace.steps.is_empty()
        }));
        harness.state_mut().apply(UiCommand::ShowTab(Tab::Journey));
        harness.run_steps(2);
        harness.get_by_label_contains("Replay step").click();
        // Each harness step is a quarter of a second: two seconds into an eight-second replay.
        harness.run_steps(8);
        let progress = harness.state().panels.journey.replay_progress;
        assert!(
            progress.is_some_and(|p| (0.1..0.5).contains(&p)),
            "{progress:?}"
        );
        harness.run_steps(30);
        assert_eq!(
            harness.state().panels.journey.replay_progress,
            None,
            "it ends"
        );
    }

    #[test]
    fn export_trace_writes_the_recorded_steps_as_chrome_trace_json() {
        let mut harness = settled_without_gpu("test");
        for _ in 0..3 {
            harness.get_by_label("Step").click();
            harness.run_steps(2);
        }
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.state.runs[0].trace.steps.len() >= 3
        }));
        let path = std::env::temp_dir().join(format!("bs-app-trace-{}.json", std::process::id()));
        harness.state_mut().save_trace(&path);
        let message = harness
            .state()
            .state
            .trace_export
            .clone()
            .unwrap_or_default();
        assert!(message.starts_with("Trace saved to"), "{message}");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let events = trace["traceEvents"].as_array().cloned().unwrap_or_default();
        let steps = events
            .iter()
            .filter(|e| e["cat"] == "ProfilerStep" && e["pid"] == 1)
            .count();
        assert_eq!(steps, harness.state().state.runs[0].trace.steps.len());
        // A folder that does not exist: the message says so, and nothing else changes.
        harness
            .state_mut()
            .save_trace(std::path::Path::new("/nonexistent-dir/t.json"));
        let message = harness
            .state()
            .state
            .trace_export
            .clone()
            .unwrap_or_default();
        assert!(message.starts_with("Could not save the trace"), "{message}");
    }

    #[test]
    fn the_memory_panel_shows_roles_and_allocated_and_reserved_of_a_running_session() {
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Run").click();
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0].memory_history.len() >= 3
        }));
        harness.state_mut().apply(UiCommand::ShowTab(Tab::Memory));
        harness.run_steps(2);
        let m = harness.state().state.runs[0].memory.unwrap_or_default();
        for role in [
            "Parameters",
            "Gradients",
            "Optimizer state",
            "Activations",
            "Inputs",
        ] {
            assert!(
                harness.query_all_by_label_contains(role).next().is_some(),
                "role {role}"
            );
        }
        let allocated = format!(
            "allocated {}",
            crate::units::format_bytes(m.allocated_bytes)
        );
        let reserved = format!("reserved {}", crate::units::format_bytes(m.reserved_bytes));
        assert!(harness.query_by_label(&allocated).is_some(), "{allocated}");
        assert!(harness.query_by_label(&reserved).is_some(), "{reserved}");
        // The 2-D spiral model, 2,16,16,3 with Adam: 371 parameters, 3 × 371 × 4 B.
        assert_eq!(m.role(crate::memory::Role::Parameters), 371 * 4);
        assert!(
            harness
                .query_by_label_contains("Estimated for these settings")
                .is_some()
        );
    }

    #[test]
    fn out_of_memory_stops_the_column_with_the_message_and_a_smaller_batch_recovers() {
        let mut harness = settled_without_gpu("test");
        {
            let app = harness.state_mut();
            app.state.settings.config.source = DataSource::Shipped("mnist".into());
            app.state.settings.config.hidden = vec![128];
            app.state.settings.config.batch = 1024;
            app.state.settings.config.pipeline.host_budget_bytes = Some(8 << 20);
            app.apply(UiCommand::Reset);
        }
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.state.runs[0].error.is_some()
            }),
            "no out-of-memory error"
        );
        let error = harness.state().state.runs[0]
            .error
            .clone()
            .unwrap_or_default();
        assert!(
            error
                .to_string()
                .starts_with("CPU out of memory: tried to allocate"),
            "{error}"
        );
        harness.run_steps(2);
        assert!(
            harness
                .query_by_label_contains("CPU out of memory")
                .is_some()
        );
        // A smaller batch fits the same budget, and training goes on.
        {
            let app = harness.state_mut();
            app.state.settings.config.batch = 32;
            app.apply(UiCommand::Reset);
            app.apply(UiCommand::Run);
        }
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.state.runs[0].steps() > 5
            }),
            "training did not resume"
        );
        assert!(harness.state().state.runs[0].error.is_none());
    }

    #[test]
    fn choosing_a_precision_labels_both_columns_after_reset() {
        let mut harness = settled_without_gpu("test");
        assert_eq!(harness.query_all_by_label("FP32").count(), 2);
        {
            let app = harness.state_mut();
            app.state.settings.config.precision = crate::precision::Precision::Mixed;
            app.apply(UiCommand::Reset);
        }
        harness.run_steps(2);
        // Both columns say mixed precision, and how it is stored and computed.
        assert_eq!(
            harness
                .query_all_by_label("mixed FP16 (16-bit storage, f32 arithmetic)")
                .count(),
            2
        );
        assert!(harness.query_by_label("FP32").is_none());
        harness.get_by_label("Step").click();
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.state.runs[0].steps() >= 1
        }));
        // The column trains with a loss scaler: its log carries the scale.
        let log = harness.state().state.runs[0].last_log.clone();
        assert!(log.and_then(|l| l.loss_scale).is_some());
    }

    #[test]
    fn switching_precision_changes_the_histograms_and_both_columns_labels() {
        use crate::precision::DType;
        let with_gpu = gpu_expected();
        let mut harness = harness(AppOptions::default());
        assert!(
            step_until(&mut harness, Duration::from_secs(20), devices_settled),
            "devices never came up"
        );
        let devices = if with_gpu { 2 } else { 1 };
        let has_values = |dtype: DType| {
            move |app: &BatchScopeApp| {
                app.state.runs[..devices].iter().all(|c| {
                    c.values
                        .as_ref()
                        .is_some_and(|v| v.gradients.dtype == dtype && v.step >= 1)
                })
            }
        };
        harness.get_by_label("Step").click();
        assert!(
            step_until(
                &mut harness,
                Duration::from_secs(30),
                has_values(DType::F32)
            ),
            "no values reported"
        );
        harness
            .state_mut()
            .apply(UiCommand::ShowTab(Tab::Precision));
        harness.run_steps(2);
        let caption = |dtype: &str| format!("Gradients (stored as {dtype}");
        assert_eq!(
            harness
                .query_all_by_label_contains(&caption("FP32, 4 bytes"))
                .count(),
            devices
        );
        let before = harness.state().state.runs[0].values.clone();
        // Choose FP16 in the setup's precision list, then Reset and one step.
        harness
            .get_by_role_and_label(egui::accesskit::Role::ComboBox, "Precision")
            .click();
        harness.run_steps(2);
        harness
            .get_by_label("FP16 (16-bit storage, f32 arithmetic)")
            .click();
        harness.run_steps(2);
        assert_eq!(
            harness.state().state.settings.config.precision,
            crate::precision::Precision::Fp16
        );
        // (The toolbar's Reset; the setup has one too.)
        if let Some(reset) = harness.get_all_by_label("Reset").next() {
            reset.click();
        }
        harness.run_steps(2);
        harness.get_by_label("Step").click();
        assert!(
            step_until(
                &mut harness,
                Duration::from_secs(30),
                has_values(DType::F16)
            ),
            "no FP16 values reported"
        );
        harness.run_steps(2);
        // Each device's histograms now describe 2-byte FP16 values, and they changed.
        assert_eq!(
            harness
                .query_all_by_label_contains(&caption("FP16, 2 bytes"))
                .count(),
            devices
        );
        assert!(harness.query_by_label_contains(&caption("FP32")).is_none());
        let after = harness.state().state.runs[0].values.clone();
        assert_ne!(
            before.map(|v| v.gradients),
            after.map(|v| v.gradients),
            "the gradients' histogram now describes FP16 values"
        );
        // Both columns say FP16 on the training view.
        harness.state_mut().apply(UiCommand::ShowTab(Tab::Training));
        harness.run_steps(2);
        let label = "FP16 (16-bit storage, f32 arithmetic)";
        assert!(harness.query_all_by_label(label).count() >= 2);
        assert!(harness.query_by_label("FP32").is_none());
    }

    #[test]
    fn comparing_formats_overlays_four_runs_of_the_same_seed() {
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::ShowTab(Tab::Precision));
        // The CPU worker reports the new model's values once it is built; they push the button
        // down when they come, and a click aimed at its old place would miss. Wait for them.
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.state.runs[0].values.is_some()
            }),
            "no values reported"
        );
        harness.run_steps(2);
        harness
            .get_by_label("Compare formats (600 steps each, CPU)")
            .click();
        assert!(
            step_until(&mut harness, Duration::from_secs(60), |app| {
                app.state
                    .comparison
                    .as_ref()
                    .is_some_and(|c| !c.running && c.runs.len() == 4)
            }),
            "the comparison did not finish"
        );
        harness.run_steps(2);
        for format in ["FP32", "FP16", "BF16", "mixed FP16"] {
            assert!(
                harness.query_all_by_label(format).count() >= 2,
                "{format} row"
            );
        }
        assert!(
            harness
                .query_by_label_contains("Measured in this run on the CPU: 600 steps each, seed 1")
                .is_some()
        );
        let c = harness.state().state.comparison.as_ref().map(|c| {
            c.runs
                .iter()
                .map(|r| r.losses.last().map_or(f64::NAN, |p| p[1]))
                .collect::<Vec<_>>()
        });
        // The spiral trains in every format from the same start (ln 3).
        assert!(c.is_some_and(|l| l.iter().all(|&v| v < 0.5)));
    }

    #[test]
    fn a_restored_precision_labels_both_columns_from_the_start() {
        let mut saved = settled_without_gpu("test").state().saved();
        saved.config.precision = crate::precision::Precision::Bf16;
        let app = BatchScopeApp::with_saved(
            AppOptions {
                gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("test")),
                ..AppOptions::default()
            },
            Some(saved),
        );
        let mut harness = harness_for(app);
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        harness.run_steps(2);
        let label = "BF16 (16-bit storage, f32 arithmetic)";
        assert!(harness.query_all_by_label(label).count() >= 2, "{label}");
        assert!(harness.query_by_label("FP32").is_none());
    }

    #[test]
    fn the_leak_setting_is_not_remembered_across_starts() {
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .state
            .settings
            .applied
            .pipeline
            .keep_graphs = true;
        let saved = harness.state().saved();
        assert!(!saved.config.pipeline.keep_graphs);
        // Nor taken back from settings saved with it on.
        let mut old = saved;
        old.config.pipeline.keep_graphs = true;
        let app = BatchScopeApp::with_saved(
            AppOptions {
                gpu: GpuChoice::Unavailable(crate::i18n::Said::verbatim("test")),
                ..AppOptions::default()
            },
            Some(old),
        );
        assert!(!app.state.settings.config.pipeline.keep_graphs);
        assert!(!app.state.settings.applied.pipeline.keep_graphs);
    }

    #[test]
    fn invalid_settings_are_refused_and_the_run_keeps_its_state() {
        let mut harness = settled_without_gpu("test");
        harness.state_mut().state.settings.config.batch = 4000;
        harness.step();
        harness.key_press(egui::Key::R);
        harness.step();
        harness.step();
        let app = harness.state();
        let error = app
            .state
            .settings
            .error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(error.contains("batch size 4000"), "{error}");
        assert_eq!(
            app.state.settings.applied.batch, 32,
            "the run in progress kept its settings"
        );
        assert!(harness.query_by_label_contains("batch size 4000").is_some());
    }

    // The run state a teacher can trust, from events the test feeds the app itself: no workers, no
    // threads, no waiting.

    use crate::device::Device;
    use crate::train::worker::{Event, EventKind};
    use crate::train::{RunState, StepLog};

    /// The app with no workers, both devices up.
    fn without_workers() -> Harness<'static, BatchScopeApp> {
        let mut harness = harness(AppOptions {
            start_workers: false,
            ..AppOptions::default()
        });
        for device in Device::ALL {
            harness.state_mut().on_event(Event {
                device,
                generation: 0,
                kind: EventKind::Ready {
                    name: format!("test {device}"),
                    adapter: None,
                    cpu_threads: Some(2),
                },
            });
        }
        harness.step();
        harness
    }

    fn log_event(device: Device, generation: u64, step: u64, loss: f32) -> Event {
        Event {
            device,
            generation,
            kind: EventKind::Log(Box::new(StepLog {
                device,
                step,
                epoch: 0,
                batch: 32,
                micro_batch: 32,
                energy: None,
                loss,
                accuracy: Some(0.5),
                mae: None,
                samples_per_s: 1000.0 * step as f64,
                tokens_per_s: None,
                step_time_ms: 1.0,
                loss_scale: None,
                skipped_steps: None,
                kernel_time_ms: None,
                kernels: None,
                rounding: None,
            })),
        }
    }

    #[test]
    fn reset_with_no_device_chosen_is_refused_with_a_notice() {
        let mut harness = without_workers();
        harness.state_mut().state.settings.enabled = [false, false];
        harness.state_mut().apply(UiCommand::Reset);
        harness.step();
        assert_eq!(harness.state().state.generation, 0, "no new run");
        assert!(
            harness
                .query_by_label("no device chosen: train on the CPU, the GPU or both")
                .is_some()
        );
    }

    #[test]
    fn reset_while_running_starts_a_clean_run_on_both_columns() {
        let mut harness = without_workers();
        harness.state_mut().apply(UiCommand::Run);
        for device in Device::ALL {
            harness
                .state_mut()
                .on_event(log_event(device, 0, 500, 0.25));
        }
        harness.step();
        assert_eq!(harness.query_all_by_label("Step 500").count(), 2);
        // New settings, applied while it runs.
        harness.state_mut().state.settings.config.batch = 64;
        harness.state_mut().apply(UiCommand::Reset);
        // What the old run reported after the reset, still on its way, then the new run's first.
        for device in Device::ALL {
            harness
                .state_mut()
                .on_event(log_event(device, 0, 501, 0.24));
            harness.state_mut().on_event(log_event(device, 1, 1, 1.1));
        }
        harness.step();
        let app = harness.state();
        assert_eq!(app.state.settings.applied.batch, 64);
        for run in &app.state.runs {
            assert_eq!(run.generation, 1);
            assert_eq!(run.steps(), 1, "{:?}", run.device);
            // One point, of the new run: no line from an old point to a new one.
            assert_eq!(run.batch_loss.points(), [[1.0, f64::from(1.1f32)]]);
            assert_eq!(run.last_log.as_ref().map(|l| l.samples_per_s), Some(1000.0));
            assert_eq!(run.run_state, RunState::Running, "the run goes on");
        }
        assert!(harness.query_by_label_contains("Step 50").is_none());
        assert_eq!(harness.query_all_by_label("Step 1").count(), 2);
        // The button and both columns agree: it runs.
        assert!(harness.query_by_label("Pause").is_some());
        assert_eq!(harness.query_all_by_label("running").count(), 2);
    }

    #[test]
    fn pause_says_pausing_until_every_worker_has_stopped() {
        let mut harness = without_workers();
        harness.state_mut().apply(UiCommand::Run);
        harness.step();
        assert!(harness.query_by_label("Pause").is_some());
        harness.get_by_label("Pause").click();
        harness.step();
        harness.step();
        let pausing = "Pausing… (waiting for the GPU's step)";
        assert!(harness.query_by_label(pausing).is_some());
        assert_eq!(harness.query_all_by_label("pausing…").count(), 2);
        // Space does nothing meanwhile: the button does not lie and takes no click.
        harness.key_press(egui::Key::Space);
        harness.step();
        assert!(harness.query_by_label(pausing).is_some());
        // The CPU stops first; the GPU's step is still running.
        harness.state_mut().on_event(Event {
            device: Device::Cpu,
            generation: 0,
            kind: EventKind::Running(false),
        });
        harness.step();
        assert!(harness.query_by_label(pausing).is_some());
        assert!(harness.query_by_label("paused").is_some());
        harness.state_mut().on_event(Event {
            device: Device::Gpu,
            generation: 0,
            kind: EventKind::Running(false),
        });
        harness.step();
        assert!(harness.query_by_label("Run").is_some());
        assert_eq!(harness.query_all_by_label("paused").count(), 2);
    }

    #[test]
    fn refused_settings_and_unapplied_changes_show_below_the_tabs_which_stay_put() {
        let mut harness = without_workers();
        harness.step();
        // Where the tabs are before any banner: a banner must not move them under the pointer.
        let before = harness.get_by_label("Batch journey").rect();
        harness.state_mut().state.settings.config.batch = 4000;
        harness.step();
        let changed = harness.get_by_label("Settings changed: press Reset (R) to apply them.");
        let tabs = harness.get_by_label("Batch journey");
        assert_eq!(tabs.rect(), before, "the tabs stay where they were");
        assert!(changed.rect().top() > tabs.rect().bottom());
        // Both beside the setup panel, in the central area.
        let setup = harness.get_by_label("Setup");
        assert!(changed.rect().left() > setup.rect().right());
        harness.key_press(egui::Key::R);
        harness.step();
        harness.step();
        let refused = harness.get_by_label(
            "batch size 4000 is larger than the 720 training rows of spiral: choose at most 720",
        );
        let tabs = harness.get_by_label("Batch journey");
        assert_eq!(tabs.rect(), before, "the tabs stay where they were");
        assert!(refused.rect().top() > tabs.rect().bottom());
        assert!(harness.query_by_label("Invalid settings").is_some());
        // A Reset that is accepted clears it.
        harness.state_mut().state.settings.config.batch = 32;
        harness.key_press(egui::Key::R);
        harness.step();
        harness.step();
        assert!(harness.query_by_label("Invalid settings").is_none());
    }

    /// A system that takes its time to say it has no file dialog (a busy machine): it answers when
    /// the test lets it.
    static DIALOG_ANSWER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    fn slow_no_dialog() -> bool {
        while !DIALOG_ANSWER.load(std::sync::atomic::Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    /// The first click on Open… on a busy machine without a system dialog opens the in-app browser:
    /// the dialog's job waits for the system's answer however long it takes, no timer decides.
    #[test]
    fn a_first_open_on_a_busy_machine_without_a_system_dialog_shows_the_in_app_browser() {
        let mut harness = settled_without_gpu("test");
        harness.state_mut().panels.opener = crate::ui::open::FileOpener::with_probe(slow_no_dialog);
        harness.get_by_label("Open file…").click();
        harness.run_steps(30);
        assert!(
            harness.state().panels.opener.is_open(),
            "waiting for the answer"
        );
        assert!(!harness.state().panels.opener.native_missing);
        DIALOG_ANSWER.store(true, std::sync::atomic::Ordering::Release);
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.panels.opener.native_missing
        }));
        harness.run_steps(3);
        assert!(
            harness
                .query_by_label_contains("Open a data set file")
                .is_some()
        );
    }

    /// Out of memory, with the message the CPU's runner really gives: the column shows it, naming a
    /// batch size that fits.
    #[test]
    fn out_of_memory_names_an_accumulation_that_fits_in_the_column() {
        use crate::backend::cpu::CpuBackend;
        use crate::train::{Runner, Session, TrainConfig};
        let mut config = TrainConfig {
            source: DataSource::Shipped("mnist".into()),
            hidden: vec![128],
            batch: 1024,
            ..TrainConfig::default()
        };
        config.pipeline.host_budget_bytes = Some(8 << 20);
        let session = Session::new(config).expect("valid");
        let mut cpu = CpuBackend::new(1).expect("pool");
        let message = Runner::new(&mut cpu, &session)
            .err()
            .map(|e| e.to_string())
            .expect("out of memory");
        let mut harness = without_workers();
        harness.state_mut().on_event(Event {
            device: Device::Cpu,
            generation: 0,
            kind: EventKind::Error(crate::i18n::Said::verbatim(message.clone())),
        });
        harness.step();
        assert!(
            message.contains("4 micro-batches of 256 would fit"),
            "{message}"
        );
        assert!(harness.query_by_label(&message).is_some());
        assert!(harness.query_by_label("Training stopped").is_some());
    }

    /// With both devices in the run each column says how it shares the machine; once the GPU
    /// turns out unavailable (no adapter, `--no-gpu`), the CPU column no longer speaks of taking
    /// turns with it.
    #[test]
    fn an_unavailable_gpu_shares_no_turns() {
        let mut harness = without_workers();
        harness.state_mut().state.show_sharing();
        assert!(harness.state().state.runs[0].sharing.is_some());
        harness.state_mut().on_event(Event {
            device: Device::Gpu,
            generation: 0,
            kind: EventKind::Unavailable(crate::i18n::Said::verbatim("no adapter")),
        });
        assert!(
            harness
                .state()
                .state
                .runs
                .iter()
                .all(|r| r.sharing.is_none())
        );
    }
}
