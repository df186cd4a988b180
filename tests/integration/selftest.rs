//! What a browser's page runs, run here: the self-test's GPU loop (`index.html?selftest=NAME`),
//! which awaits every read instead of blocking, trains exactly as the blocking loop does; and
//! the page's GPU column, a worker sharing the page's thread, never blocks on a read.

use crate::common;

use std::sync::Arc;

use batchscope::backend::Backend;
use batchscope::backend::gpu::{GpuBackend, blocking_maps};
use batchscope::device::Device;
use batchscope::job::no_notify;
use batchscope::train::handle::Worker;
use batchscope::train::selftest::{session, train, train_awaiting};
use batchscope::train::worker::{BackendFactory, Command, EventKind};
use batchscope::train::{Runner, Session, StopAt, TrainConfig, Turns};

/// The GPU's losses through awaited reads equal the blocking loop's, step by step, and the
/// CPU's within the parity tests' tolerance; the report names the adapter's timestamps.
#[test]
fn the_awaiting_gpu_loop_trains_as_the_blocking_one() {
    let Some(mut gpu) = common::gpu() else {
        return;
    };
    let session = session("digits-cnn").expect("session");
    let before = blocking_maps();
    let awaited = pollster::block_on(train_awaiting(&mut gpu, &session, 12)).expect("awaited");
    assert_eq!(
        blocking_maps(),
        before,
        "the browser's loop waited, blocking, for a map"
    );
    assert_eq!(awaited.losses.len(), 12);
    assert_eq!(awaited.timestamps, Some(gpu.adapter().timestamps));
    let mut gpu = common::gpu().expect("a second device");
    let blocking = train(Device::Gpu, &mut gpu, &session, 12).expect("blocking loop");
    assert!(blocking_maps() > before, "the count counts");
    assert_eq!(awaited.losses, blocking.losses);
    let mut cpu = common::cpu();
    let on_cpu = train(Device::Cpu, &mut cpu, &session, 12).expect("cpu loop");
    for (g, c) in awaited.losses.iter().zip(&on_cpu.losses) {
        assert!((g - c).abs() <= 1e-4 * c.abs().max(1.0), "{g} vs {c}");
    }
}

/// The page's GPU column, run here: a worker sharing the caller's thread (as in a page, with no
/// timestamp queries) trains the spiral on the GPU, reports finite losses, stops when paused,
/// and never blocks on a map: every read is started after a step and looked at in later polls.
#[test]
fn a_cooperative_gpu_worker_trains_without_a_blocking_read() {
    if common::gpu().is_none() {
        return;
    }
    let before = blocking_maps();
    let mut worker = page_gpu_worker(false, true);
    let session = Arc::new(Session::new(TrainConfig::default()).expect("session"));
    worker.send(Command::Configure(session, 1));
    worker.send(Command::Run);
    let begun = std::time::Instant::now();
    let (mut logs, mut evals, mut boundaries) = (Vec::new(), Vec::new(), 0);
    while (logs.len() < 3 || evals.len() < 2 || boundaries < 2)
        && begun.elapsed() < std::time::Duration::from_secs(60)
    {
        for event in worker.poll() {
            match event.kind {
                EventKind::Log(log) => logs.push(*log),
                EventKind::Eval(eval) => evals.push(eval),
                EventKind::Boundary { .. } => boundaries += 1,
                EventKind::Error(e) | EventKind::Unavailable(e) => panic!("{e}"),
                _ => {}
            }
        }
    }
    assert!(logs.len() >= 3, "{} reports in 60 s", logs.len());
    assert!(
        evals.len() >= 2 && boundaries >= 2,
        "{} evaluations, {boundaries} boundaries in 60 s",
        evals.len()
    );
    assert!(
        evals
            .iter()
            .all(|e| e.test.accuracy.is_some_and(|a| (0.0..=1.0).contains(&a))),
        "{evals:?}"
    );
    assert!(
        logs.iter().all(|l| l.loss.is_finite() && l.step > 0),
        "{logs:?}"
    );
    assert!(logs.windows(2).all(|w| w[1].step > w[0].step));
    worker.send(Command::Pause);
    let mut paused = false;
    while !paused && begun.elapsed() < std::time::Duration::from_secs(90) {
        paused = worker
            .poll()
            .iter()
            .any(|e| matches!(e.kind, EventKind::Running(false)));
    }
    assert!(paused, "the worker never said it paused");
    assert_eq!(blocking_maps(), before, "the page's loop blocked on a map");
}

/// A page's evaluation (every pass and read started, none waited for) reports what the
/// blocking one does: the same losses, accuracies, boundary, value histograms and a CNN's
/// first layer, with no blocking map.
#[test]
fn a_staged_evaluation_equals_the_blocking_one_and_never_blocks() {
    let Some(mut gpu) = common::gpu() else {
        return;
    };
    for session in [
        Session::new(TrainConfig::default()).expect("spiral"),
        session("digits-cnn").expect("digits-cnn"),
    ] {
        let mut runner = Runner::new(&mut gpu, &session).expect("runner");
        for _ in 0..10 {
            runner.step(&mut gpu, true).expect("step");
        }
        let blocking = runner.evaluate(&mut gpu).expect("evaluate");
        let blocking_grid = runner.boundary(&mut gpu, 40).expect("boundary");
        let blocking_values = runner.value_histograms(&mut gpu).expect("histograms");
        let before = blocking_maps();
        let mut staged = runner.start_evaluation(&mut gpu, 40).expect("started");
        let begun = std::time::Instant::now();
        let (report, grid, values) = loop {
            if let Some(done) = runner.finish_evaluation(&mut gpu, &mut staged) {
                break done.expect("finished");
            }
            assert!(begun.elapsed().as_secs() < 60, "the reads never came");
        };
        assert_eq!(
            blocking_maps(),
            before,
            "the staged evaluation blocked on a map"
        );
        assert_eq!(report.train, blocking.train);
        assert_eq!(report.test, blocking.test);
        assert_eq!(report.confusion, blocking.confusion);
        assert_eq!(report.samples, blocking.samples);
        assert_eq!(report.first_layer, blocking.first_layer);
        assert_eq!(values, blocking_values);
        assert_eq!(
            grid.as_ref().map(|g| &g.class),
            blocking_grid.as_ref().map(|g| &g.class)
        );
        let cnn = session.data.image.is_some();
        assert_eq!(report.first_layer.is_some(), cnn, "a CNN's filters, only");
        assert_eq!(grid.is_some(), !cnn, "a 2-D set's boundary, only");
        assert!(
            values.weights.histogram.counts.iter().sum::<u64>() > 0,
            "{values:?}"
        );
    }
}

/// The page's GPU column stops where the run says: after two epochs, or once the test
/// accuracy reaches its target, with the news, a whole-set evaluation at the stop and a pause,
/// never blocking.
#[test]
fn a_cooperative_gpu_worker_stops_at_its_condition() {
    if common::gpu().is_none() {
        return;
    }
    let (reached, last_eval, epoch_steps) = run_until(StopAt::Epochs(2));
    assert_eq!(
        reached.step,
        2 * epoch_steps,
        "the step that ended the second epoch"
    );
    assert_eq!(last_eval, Some(reached.step), "the figures at the stop");
    assert!(reached.seconds > 0.0 && reached.metric.is_none());
    let (reached, last_eval, epoch_steps) = run_until(StopAt::TestMetric(0.6));
    assert!(reached.metric.is_some_and(|m| m >= 0.6), "{reached:?}");
    assert_eq!(
        reached.step % epoch_steps,
        0,
        "checked at the end of an epoch"
    );
    assert_eq!(last_eval, Some(reached.step), "the figures at the stop");
}

/// Trains the spiral on a page's GPU worker until `stop`: what was reached, the step of the
/// last evaluation, and the steps an epoch.
fn run_until(stop: StopAt) -> (batchscope::train::worker::Reached, Option<u64>, u64) {
    let before = blocking_maps();
    let mut worker = page_gpu_worker(false, false);
    let mut config = TrainConfig::default();
    config.pipeline.stop = stop;
    let session = Session::new(config).expect("session");
    let epoch_steps = (session.data.train_rows() / session.config.effective_batch()) as u64;
    worker.send(Command::Configure(Arc::new(session), 1));
    worker.send(Command::Run);
    let begun = std::time::Instant::now();
    let (mut reached, mut paused, mut last_eval) = (None, false, None);
    while !(reached.is_some() && paused) && begun.elapsed() < std::time::Duration::from_secs(90) {
        for event in worker.poll() {
            match event.kind {
                EventKind::Reached(r) => reached = Some(r),
                EventKind::Running(false) => paused = reached.is_some(),
                EventKind::Eval(eval) => last_eval = Some(eval.step),
                EventKind::Error(e) | EventKind::Unavailable(e) => panic!("{e}"),
                _ => {}
            }
        }
    }
    let reached = reached.expect("the condition was never reached");
    assert!(paused, "it did not pause at its condition");
    assert_eq!(blocking_maps(), before, "the page's loop blocked on a map");
    (reached, last_eval, epoch_steps)
}

/// The page's GPU column times its kernels where the adapter has timestamps, reading them back
/// without ever waiting: kernel times arrive in the reports, and no map blocks.
#[test]
fn a_cooperative_gpu_worker_times_kernels_without_waiting() {
    let Some(probe) = common::gpu() else {
        return;
    };
    if !probe.adapter().timestamps {
        return;
    }
    drop(probe);
    let before = blocking_maps();
    let mut worker = page_gpu_worker(true, false);
    let session = Arc::new(Session::new(TrainConfig::default()).expect("session"));
    worker.send(Command::Configure(session, 1));
    worker.send(Command::Run);
    let begun = std::time::Instant::now();
    let mut timed = Vec::new();
    while timed.len() < 3 && begun.elapsed() < std::time::Duration::from_secs(60) {
        for event in worker.poll() {
            match event.kind {
                EventKind::Log(log) => timed.extend(log.kernels.filter(|k| k.total_ns > 0)),
                EventKind::Error(e) | EventKind::Unavailable(e) => panic!("{e}"),
                _ => {}
            }
        }
    }
    assert!(
        timed.len() >= 3,
        "{} reports with kernel times in 60 s",
        timed.len()
    );
    assert!(timed.iter().all(|k| !k.kernels.is_empty()), "{timed:?}");
    assert_eq!(blocking_maps(), before, "the page's loop blocked on a map");
}

/// A page's GPU worker, run here on the caller's thread: its kernels timed as a page times them
/// (`timed`: read back without waiting) or not at all; taking turns or not.
fn page_gpu_worker(timed: bool, turns: bool) -> Worker {
    let factory: BackendFactory = Box::new(move || {
        let mut gpu = GpuBackend::new().map_err(|e| e.reason)?;
        if timed {
            gpu.never_wait_for_timestamps();
        } else {
            gpu.disable_timestamps().map_err(|e| e.said())?;
        }
        Ok(Box::new(gpu) as Box<dyn Backend>)
    });
    Worker::cooperative(
        Device::Gpu,
        factory,
        Arc::new(Turns::new(turns)),
        no_notify(),
    )
}
