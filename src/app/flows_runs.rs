//! Whole-app flows of the side-by-side run: how the devices share the machine, and the history
//! of finished runs.
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use egui_kittest::kittest::Queryable as _;

    use super::super::AppOptions;
    use super::super::flows::tests::{
        devices_settled, gpu_expected, harness, loaded, settled_without_gpu, step_until,
    };
    use crate::device::Device;
    use crate::trace::StepTrace;
    use crate::train::{DeviceStatus, Sharing};
    use crate::ui::UiCommand;

    /// Whether a CPU step and a GPU step ran on the host at the same time.
    fn overlap(cpu: &[StepTrace], gpu: &[StepTrace]) -> bool {
        cpu.iter().any(|c| {
            gpu.iter()
                .any(|g| c.start_ns < g.end_ns && g.start_ns < c.end_ns)
        })
    }

    fn steps(app: &super::super::BatchScopeApp, device: Device) -> Vec<StepTrace> {
        app.state.runs[device as usize]
            .trace
            .steps
            .iter()
            .cloned()
            .collect()
    }

    #[test]
    fn taking_turns_is_shown_on_the_columns_and_the_devices_never_train_at_once() {
        let with_gpu = gpu_expected();
        let mut harness = harness(AppOptions::default());
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        assert_eq!(harness.state().state.sharing, Sharing::TakingTurns);
        harness.get_by_label("Run").click();
        let enough = |app: &super::super::BatchScopeApp| {
            app.state.runs[0].trace.steps.len() > 20
                && (!with_gpu || app.state.runs[1].trace.steps.len() > 20)
        };
        assert!(step_until(&mut harness, Duration::from_secs(60), enough));
        harness.step();
        // Each column says it is the device alone, timed only in its turns.
        assert!(
            harness
                .query_by_label_contains("Taking turns with the GPU")
                .is_some()
        );
        if with_gpu {
            assert!(
                harness
                    .query_by_label_contains("Taking turns with the CPU")
                    .is_some()
            );
            let app = harness.state();
            let (cpu, gpu) = (steps(app, Device::Cpu), steps(app, Device::Gpu));
            assert!(!overlap(&cpu, &gpu), "a CPU step ran during a GPU step");
        }

        // Both at once: the columns say each is slowed by the other, and the steps overlap.
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SetSharing(Sharing::Together)]);
        // Only steps that began after the switch count: a chunk recorded while taking turns
        // may still arrive after it.
        let switched_ns = harness
            .state()
            .session()
            .map_or(0, |s| s.epoch.elapsed().as_nanos() as u64);
        let after = move |app: &super::super::BatchScopeApp, device: Device| -> Vec<StepTrace> {
            steps(app, device)
                .into_iter()
                .filter(|s| s.start_ns > switched_ns)
                .collect()
        };
        // The timeline keeps only a device's latest steps, and the CPU's fast steps push its
        // older ones out: an overlap is looked for at every frame, not only at the end.
        let mut overlapped = false;
        assert!(step_until(&mut harness, Duration::from_secs(60), |app| {
            let (cpu, gpu) = (after(app, Device::Cpu), after(app, Device::Gpu));
            overlapped |= overlap(&cpu, &gpu);
            cpu.len() > 20 && (!with_gpu || (gpu.len() > 20 && overlapped))
        }));
        harness.step();
        assert!(
            harness
                .query_by_label_contains("this figure is the CPU slowed by the GPU")
                .is_some()
        );
        if with_gpu {
            assert!(overlapped, "both at once, and no step overlapped");
        }

        // Leaving a core rebuilds the CPU's pool with one thread fewer, and training goes on.
        let cores = crate::device::cores();
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SetSharing(Sharing::SpareCore)]);
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            devices_settled(app) && app.state.runs[0].steps() > 0
        }));
        let DeviceStatus::Ready { cpu_threads, .. } = &harness.state().state.runs[0].status else {
            panic!(
                "the CPU is not up: {:?}",
                harness.state().state.runs[0].status
            );
        };
        assert_eq!(cpu_threads, &Some(cores.saturating_sub(1).max(1)));
        harness.step();
        let note = if cores == 1 {
            "Only one core"
        } else {
            "One core left for the GPU"
        };
        assert!(harness.query_by_label_contains(note).is_some());
        // It is remembered.
        assert_eq!(harness.state().saved().sharing, Sharing::SpareCore);
        harness.get_by_label("Pause").click();
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
    }

    #[test]
    fn a_finished_run_appears_in_the_history_and_can_be_restored() {
        use crate::bench::history::What;
        let mut harness = settled_without_gpu("test");
        let first_batch = harness.state().state.settings.applied.batch;
        harness.get_by_label("Run").click();
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0].steps() > 0 && app.state.runs[0].last_eval.is_some()
        }));
        // A new run of other settings replaces it: the first is finished, and kept.
        harness.state_mut().state.settings.config.batch = first_batch * 2;
        harness.state_mut().run_commands(vec![UiCommand::Reset]);
        let history = &harness.state().state.history;
        assert_eq!(history.entries.len(), 1);
        let first = history.entries[0].clone();
        assert_eq!(first.config.batch, first_batch);
        let What::Run { devices, .. } = &first.what else {
            panic!("a run: {first:?}");
        };
        assert_eq!(devices.len(), 1, "the GPU had no adapter: {devices:?}");
        assert!(devices[0].samples_per_s.is_some_and(|s| s > 0.0));
        assert!(devices[0].test_metric.is_some());
        assert!(devices[0].peak_memory.is_some_and(|b| b > 0));
        // The tab lists it; Restore puts its settings back and starts a run of them.
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0].steps() > 0
        }));
        harness.get_by_label("History").click();
        harness.run_steps(2);
        assert!(harness.query_by_label("#1").is_some());
        harness.get_by_label("Restore").click();
        harness.run_steps(2);
        let app = harness.state();
        assert_eq!(app.state.settings.applied.batch, first_batch);
        assert_eq!(app.state.settings.config.batch, first_batch);
        assert_eq!(app.state.tab, crate::ui::Tab::Training);
        // The run the restore replaced is kept too, and the whole history survives a restart.
        assert_eq!(app.state.history.entries.len(), 2);
        let (back, notes) = super::super::restore::history(Some(&app.history_json()));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(back.entries[..2], app.state.history.entries[..]);
        harness.get_by_label("Pause").click();
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
        // Deleting one leaves the other.
        harness
            .state_mut()
            .run_commands(vec![UiCommand::DeleteEntry(first.id)]);
        assert_eq!(harness.state().state.history.entries.len(), 1);
    }

    #[test]
    fn a_stop_condition_stops_each_device_and_reports_its_time_to_the_target() {
        use crate::train::StopAt;
        let with_gpu = gpu_expected();
        let mut harness = harness(AppOptions::default());
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        let mut pipeline = harness.state().state.settings.applied.pipeline;
        pipeline.stop = StopAt::Epochs(2);
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SetPipeline(pipeline), UiCommand::Run]);
        let devices = if with_gpu { 2 } else { 1 };
        assert!(step_until(&mut harness, Duration::from_secs(60), |app| {
            app.state.runs[..devices]
                .iter()
                .all(|r| r.reached.is_some())
                && !app.is_running()
        }));
        let app = harness.state();
        let session = app.session().expect("session");
        let per_epoch = (session.data.train_rows() / session.config.effective_batch()) as u64;
        for run in &app.state.runs[..devices] {
            let reached = run.reached.expect("reached");
            assert_eq!(reached.stop, StopAt::Epochs(2));
            // Two passes over the training set: at least two epochs' steps, at most one more.
            assert!(
                (2 * per_epoch..=3 * per_epoch + 1).contains(&reached.step),
                "{:?}: step {} for {per_epoch} steps an epoch",
                run.device,
                reached.step
            );
            assert!(reached.seconds > 0.0);
        }
        harness.step();
        assert!(
            harness
                .query_all_by_label_contains("Reached 2 epochs at step")
                .count()
                == devices
        );
        // At a test accuracy: reached only once the test set says so.
        // (The setup edits the draft and sends the pipeline, as here.)
        pipeline.stop = StopAt::TestMetric(0.5);
        harness.state_mut().state.settings.config.pipeline = pipeline;
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SetPipeline(pipeline), UiCommand::Reset]);
        harness.state_mut().run_commands(vec![UiCommand::Run]);
        assert!(step_until(&mut harness, Duration::from_secs(60), |app| {
            app.state.runs[..devices]
                .iter()
                .all(|r| r.reached.is_some())
                && !app.is_running()
        }));
        for run in &harness.state().state.runs[..devices] {
            let reached = run.reached.expect("reached");
            assert!(reached.metric.is_some_and(|m| m >= 0.5), "{reached:?}");
            let eval = run.last_eval.as_ref().expect("evaluated");
            assert!(eval.test.accuracy.is_some_and(|a| a >= 0.5));
        }
        // The first run went into the history with its time to the target.
        let history = &harness.state().state.history;
        let first = history.entries.last().expect("kept");
        let cpu = first.figures(crate::device::Device::Cpu).expect("cpu");
        assert!(cpu.time_to_target_s.is_some_and(|s| s > 0.0), "{cpu:?}");
    }

    #[test]
    fn the_experiments_tab_sweeps_and_plots_both_devices() {
        use crate::bench::sweep::Sweep;
        if !gpu_expected() {
            return;
        }
        let mut harness = harness(AppOptions::default());
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        harness.state_mut().run_commands(vec![
            UiCommand::ShowTab(crate::ui::Tab::Experiments),
            UiCommand::RunSweep(Sweep::parse("batch=8,64").expect("sweep")),
        ]);
        assert!(step_until(&mut harness, Duration::from_secs(90), |app| {
            app.state.sweep.as_ref().is_some_and(|r| r.ended)
        }));
        harness.step();
        let results = harness.state().state.sweep.clone().expect("results");
        for device in Device::ALL {
            let points = results.points.iter().filter(|p| p.device == device);
            assert_eq!(points.count(), 2, "{device:?}: {results:?}");
        }
        // Both lines are drawn (both plots' legends name them); a software adapter is said.
        assert!(harness.query_all_by_label("GPU (measured)").count() >= 2);
        assert!(harness.query_all_by_label("CPU (measured)").count() >= 2);
        if results.software_gpu {
            assert!(
                harness
                    .query_by_label_contains("the GPU is a software adapter")
                    .is_some()
            );
        }
        // What if: the same values simulated on a T4 join the plot as a labelled line, with
        // where the T4 would overtake this CPU as measured; the export marks those rows.
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SimulateSweepOn(Some("nvidia-t4".into()))]);
        harness.run_steps(2);
        let simulated = harness
            .state()
            .state
            .sweep_simulated
            .clone()
            .expect("simulated");
        assert_eq!(simulated.points.len(), 2);
        assert!(simulated.points.iter().all(|p| p.simulated));
        assert!(harness.query_all_by_label("NVIDIA T4 (simulated)").count() >= 2);
        assert!(
            harness
                .query_by_label_contains("NVIDIA T4, simulated, against this CPU, measured")
                .is_some()
        );
        harness
            .state_mut()
            .run_commands(vec![UiCommand::SimulateSweepOn(None)]);
        assert!(harness.state().state.sweep_simulated.is_none());
    }

    #[test]
    fn serving_times_one_request_at_a_time_on_each_device_with_training_paused() {
        let with_gpu = gpu_expected();
        let mut harness = harness(AppOptions::default());
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        harness.state_mut().run_commands(vec![
            UiCommand::Run,
            UiCommand::ShowTab(crate::ui::Tab::Experiments),
            UiCommand::TimeRequests,
        ]);
        let overlapped = std::cell::Cell::new(false);
        assert!(step_until(&mut harness, Duration::from_secs(90), |app| {
            overlapped
                .set(overlapped.get() || (app.jobs.serving.is_some() && app.state.is_running()));
            app.state.serving.as_ref().is_some_and(|s| s.ended)
        }));
        assert!(
            !overlapped.get(),
            "requests were timed while a device trained"
        );
        harness.step();
        let serving = harness.state().state.serving.clone().expect("serving");
        assert!(serving.failures.is_empty(), "{:?}", serving.failures);
        assert_eq!(serving.reports.len(), if with_gpu { 2 } else { 1 });
        for report in &serving.reports {
            for l in [&report.single, &report.batched] {
                assert!(l.p50_ms > 0.0 && l.p99_ms >= l.p50_ms && l.max_ms >= l.p99_ms);
            }
            assert_eq!(report.single.rows, 1);
        }
        if with_gpu {
            // The GPU's single request pays its copies: its recorded request has them.
            let gpu = &serving.reports[1];
            assert!(
                gpu.single
                    .spans_per_request
                    .iter()
                    .any(|(c, n)| c == "Memcpy" && *n > 0),
                "{:?}",
                gpu.single.spans_per_request
            );
            assert!(
                harness
                    .query_by_label_contains("One request: the CPU")
                    .is_some()
            );
        }
        // Run again cancels a measurement in progress.
        harness
            .state_mut()
            .run_commands(vec![UiCommand::TimeRequests]);
        harness.state_mut().run_commands(vec![UiCommand::Run]);
        let serving = harness.state().state.serving.clone().expect("serving");
        assert!(serving.ended && serving.cancelled);
        assert!(harness.state().jobs.serving.is_none());
        harness.state_mut().run_commands(vec![UiCommand::Pause]);
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
    }

    /// A window of `options` that has trained the CPU (and the GPU, where it is up) and shows
    /// the Simulator tab.
    fn trained_on_the_simulator_tab(
        options: AppOptions,
    ) -> egui_kittest::Harness<'static, super::super::BatchScopeApp> {
        let mut harness = harness(options);
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        harness.get_by_label("Run").click();
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0].last_log.is_some()
        }));
        harness.get_by_label("Simulator").click();
        harness.run_steps(2);
        harness
    }

    #[test]
    fn the_simulator_tab_draws_the_running_sessions_ops_on_a_chosen_profile() {
        let mut harness = trained_on_the_simulator_tab(AppOptions::default());
        // The applied model's ops, the prediction labelled simulated, the measurement beside.
        assert!(harness.query_by_label("layer 1 forward").is_some());
        assert!(
            harness
                .query_by_label_contains("layer 3 update weights")
                .is_some()
        );
        assert!(
            harness
                .query_by_label_contains("(simulated, not measured)")
                .is_some()
        );
        assert!(
            harness
                .query_by_label_contains("Measured here: CPU")
                .is_some()
        );
        harness.state_mut().panels.roofline.profile = Some("nvidia-h100-sxm".into());
        harness.run_steps(2);
        assert!(
            harness
                .query_by_label_contains("Simulated on NVIDIA H100 SXM")
                .is_some()
        );
        harness.get_by_label("Pause").click();
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
    }

    #[test]
    fn calibrating_in_the_window_adds_this_machines_profile_and_checks_the_model() {
        // The CPU alone, with short probes: the GPU's calibration is the command line's test.
        let mut harness = trained_on_the_simulator_tab(AppOptions {
            gpu: crate::backend::GpuChoice::Unavailable(crate::i18n::Said::verbatim(
                "not in this test",
            )),
            calibration_seconds: 0.005,
            ..AppOptions::default()
        });
        // Calibrating pauses training first, then probes; Cancel stops it.
        harness.get_by_label("Calibrate this machine").click();
        harness.run_steps(1);
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running() && app.jobs.calibration.is_some()
        }));
        harness.get_by_label("Cancel").click();
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.calibration.as_ref().is_some_and(|c| c.ended)
        }));
        let status = harness.state().state.calibration.clone().expect("status");
        assert!(status.cancelled && status.made.is_empty(), "{status:?}");
        assert!(
            harness
                .query_by_label_contains("Calibration cancelled")
                .is_some()
        );
        // A whole calibration adds this CPU's profile, which the tab checks against the
        // measured step once the CPU has trained again.
        harness.get_by_label("Calibrate this machine").click();
        assert!(step_until(&mut harness, Duration::from_secs(120), |app| {
            app.state.calibration.as_ref().is_some_and(|c| c.ended)
        }));
        let status = harness.state().state.calibration.clone().expect("status");
        assert_eq!(status.made.len(), 1, "{status:?}");
        assert_eq!(
            status.failures.len(),
            1,
            "the GPU is unavailable: {status:?}"
        );
        assert_eq!(harness.state().state.profiles[0].id, "local-cpu");
        harness.state_mut().panels.roofline.profile = Some("local-cpu".into());
        harness.get_by_label("Run").click();
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.state.runs[0].last_log.is_some()
        }));
        harness.run_steps(2);
        assert!(
            harness
                .query_by_label_contains("Check on this machine: predicted")
                .is_some()
        );
        // Its grid check, made with it, is told beside it.
        let checked = harness.state().state.profiles[0].grid_check.clone();
        let checked = checked.expect("the calibration checked its profile on the grid");
        assert!(checked.configurations > 0, "{checked:?}");
        assert!(
            harness
                .query_by_label_contains("Grid check of this profile")
                .is_some()
        );
        // The profile is kept between sessions; a damaged store is a note, not a failure.
        let stored = harness.state().local_profiles_toml();
        let (back, note) = super::super::restore::restore_local_profiles(Some(&stored));
        assert!(note.is_none());
        assert_eq!(back, vec![harness.state().state.profiles[0].clone()]);
        let (back, note) =
            super::super::restore::restore_local_profiles(Some("[[profile]]\nid = 3"));
        assert!(back.is_empty());
        assert!(matches!(
            note,
            Some(super::super::restore::RestoreNote::ProfilesUnreadable(_))
        ));
        harness.get_by_label("Pause").click();
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
    }

    #[test]
    fn the_mismatch_button_runs_a_real_op_and_shows_its_typed_error_then_the_fix() {
        use crate::ui::mismatch::MismatchView;
        let gpu = gpu_expected();
        let mut harness = if gpu {
            harness(AppOptions::default())
        } else {
            settled_without_gpu("no adapter in this test")
        };
        harness.get_by_label("Batch journey").click();
        harness.run_steps(2);
        harness
            .get_by_label("Run one op with the batch on the CPU")
            .click();
        assert!(
            step_until(&mut harness, Duration::from_secs(60), |app| {
                !matches!(
                    app.state.mismatch,
                    MismatchView::Running | MismatchView::NotRun
                )
            }),
            "the lesson did not end"
        );
        harness.run_steps(2);
        if gpu {
            assert!(
                matches!(harness.state().state.mismatch, MismatchView::Done(_)),
                "{:?}",
                harness.state().state.mismatch
            );
            harness.get_by_label(
                "expected all tensors on the same device, found gpu and cpu (in linear_forward)",
            );
            assert_eq!(
                harness
                    .query_all_by_label_contains("The fix: copy the batch to the GPU first")
                    .count(),
                1
            );
        } else {
            assert_eq!(
                harness
                    .query_all_by_label_contains("on one device this mistake cannot happen")
                    .count(),
                1
            );
        }
    }

    /// A model edited in the setup's layer list trains: the list becomes the session's model,
    /// its `LayerNorm` among the tensors the column counts.
    #[test]
    fn a_model_edited_as_a_list_of_layers_trains() {
        use crate::data::source::DataSource;
        use crate::nn::LayerSpec;
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("iris".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        harness.get_by_label("Layer list").click();
        harness.step();
        harness.step();
        // Two frames after each click: the one that takes it, and the one drawn after the row
        // it added (which moves the buttons below).
        for add in ["+ LayerNorm", "+ Activation"] {
            harness.get_by_label(add).click();
            harness.step();
            harness.step();
        }
        harness.state_mut().apply(UiCommand::UseLoaded);
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(60), |app| {
            app.state.runs[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0)
        }));
        let app = harness.state();
        let model = app.session().expect("session").config.model.clone();
        let model = model.expect("the session trains the list");
        assert_eq!(model.len(), 6, "{model:?}");
        assert_eq!(model[4], LayerSpec::LayerNorm);
        let loss = app.state.runs[0].last_eval.as_ref().map(|e| e.test.loss);
        assert!(loss.is_some_and(f32::is_finite), "{loss:?}");
    }

    /// Save model… writes the weights as safetensors and the layers as a model file; Load
    /// model… puts them back, and refuses a file of another model, changing nothing.
    #[test]
    fn a_model_is_saved_and_loaded_from_the_window() {
        use crate::data::source::DataSource;
        let dir = super::super::flows::tests::temp_dir("save-model");
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("iris".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.state_mut().apply(UiCommand::UseLoaded);
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(60), |app| {
            app.state.runs[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0)
        }));
        let note = |app: &super::super::BatchScopeApp| app.state.screenshot_note.clone();
        let path = dir.join("iris");
        harness.state_mut().apply(UiCommand::SaveModel(path));
        let saved = |app: &super::super::BatchScopeApp| {
            note(app).is_some_and(|n| n.starts_with("Saved the weights"))
        };
        assert!(step_until(&mut harness, Duration::from_secs(20), saved));
        let weights = dir.join("iris.safetensors");
        let bytes = std::fs::read(&weights).expect("weights written");
        let tensors = crate::nn::from_safetensors(&bytes).expect("safetensors");
        assert_eq!(tensors.len(), 6, "three dense layers' weight and bias");
        let toml = std::fs::read_to_string(dir.join("iris.toml")).expect("layers written");
        let layers = crate::nn::parse_model(&toml).expect("a model file");
        assert_eq!(
            Some(layers),
            harness.state().session().map(|s| {
                let mut l = s.config.model_spec(&s.data).layer_specs();
                l.pop();
                l
            })
        );
        // Another model's weights: refused by name, nothing changed.
        let other = dir.join("other.safetensors");
        let wrong = crate::nn::torch_tensors(
            &crate::nn::ModelSpec::mlp(
                vec![4, 8, 3],
                crate::backend::Activation::Relu,
                crate::nn::Loss::SoftmaxCrossEntropy,
            ),
            &vec![(vec![0.0; 32], vec![0.0; 8]), (vec![0.0; 24], vec![0.0; 3])],
        );
        let wrong = crate::nn::to_safetensors(&wrong).expect("serialised");
        std::fs::write(&other, wrong).expect("written");
        harness.state_mut().apply(UiCommand::LoadModel(other));
        let refused = |app: &super::super::BatchScopeApp| {
            note(app).is_some_and(|n| n.contains("not loaded, nothing changed"))
        };
        assert!(step_until(&mut harness, Duration::from_secs(20), refused));
        harness.state_mut().apply(UiCommand::LoadModel(weights));
        let loaded_back = |app: &super::super::BatchScopeApp| {
            note(app).is_some_and(|n| n.starts_with("Loaded the weights"))
        };
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            loaded_back
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Choosing the shipped Shakespeare sets up the tiny GPT with `AdamW`; training it shows what
    /// the model writes and where its first attention head looks, in both languages, and going
    /// back to a generator leaves the language model for the hidden layers.
    #[test]
    fn choosing_a_text_trains_the_tiny_gpt_and_shows_what_it_writes() {
        use crate::data::source::DataSource;
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("shakespeare".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        let config = &harness.state().state.settings.config;
        assert!(config.model.as_deref().is_some_and(crate::nn::reads_tokens));
        assert_eq!(config.optimizer, crate::nn::OptimizerKind::AdamW);
        harness.state_mut().apply(UiCommand::UseLoaded);
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(120), |app| {
            app.state.runs[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0 && e.writing.is_some())
        }));
        harness.step();
        harness.step();
        let eval = harness.state().state.runs[0]
            .last_eval
            .clone()
            .expect("evaluated");
        let writing = eval.writing.expect("writing");
        assert_eq!(
            writing.text.chars().count(),
            crate::train::generate::WRITING_CHARS
        );
        // Its own writing and three windows of the validation text; gpt-tiny: 2 blocks of 2
        // heads, a map each, over at most the last 32 characters of each.
        assert_eq!(writing.samples.len(), 4);
        assert_eq!(writing.heads, 2);
        for sample in &writing.samples {
            let n = sample.window.len();
            assert!(n > 0 && n <= crate::train::report::ATTENTION_SHOWN);
            assert_eq!(sample.attention.len(), 4);
            assert!(sample.attention.iter().all(|m| m.len() == n * n));
            // Causal: nothing above the diagonal; each row sums to at most one.
            for m in &sample.attention {
                for (i, row) in m.chunks(n).enumerate() {
                    assert!(row[i + 1..].iter().all(|&p| p == 0.0));
                    assert!(row.iter().sum::<f32>() <= 1.0 + 1e-4);
                }
            }
        }
        for (lang, labels) in [
            (
                crate::i18n::Lang::En,
                ["Written at step", "Where head 1 of attention layer 1 looks"],
            ),
            (
                crate::i18n::Lang::Zh,
                ["步写出的文字", "第 1 个注意力层的第 1 个头看向哪里"],
            ),
        ] {
            harness.state_mut().state.lang = lang;
            harness.step();
            harness.step();
            for label in labels {
                assert!(harness.query_by_label_contains(label).is_some(), "{label}");
            }
        }
        harness.state_mut().state.settings.config.suit_data(false);
        assert_eq!(harness.state().state.settings.config.model, None);
    }
}
