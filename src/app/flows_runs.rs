//! Whole-app flows of the side-by-side run: how the devices share the machine, and the history
//! of finished runs.
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use egui_kittest::kittest::Queryable as _;

    use super::super::AppOptions;
    use super::super::flows::tests::{devices_settled, gpu_expected, harness, step_until};
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
        for run in &mut harness.state_mut().state.runs {
            run.trace = crate::trace::TraceHistory::default();
        }
        assert!(step_until(&mut harness, Duration::from_secs(60), enough));
        harness.step();
        assert!(
            harness
                .query_by_label_contains("this figure is the CPU slowed by the GPU")
                .is_some()
        );
        if with_gpu {
            let app = harness.state();
            let (cpu, gpu) = (steps(app, Device::Cpu), steps(app, Device::Gpu));
            assert!(overlap(&cpu, &gpu), "both at once, and no step overlapped");
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
}
