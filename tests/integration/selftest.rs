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
use batchscope::train::{Session, TrainConfig, Turns};

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
    let factory: BackendFactory = Box::new(|| {
        let mut gpu = GpuBackend::new().map_err(|e| e.reason)?;
        gpu.disable_timestamps().map_err(|e| e.said())?;
        Ok(Box::new(gpu) as Box<dyn Backend>)
    });
    let before = blocking_maps();
    let turns = Arc::new(Turns::new(true));
    let mut worker = Worker::cooperative(Device::Gpu, factory, turns, no_notify());
    let session = Arc::new(Session::new(TrainConfig::default()).expect("session"));
    worker.send(Command::Configure(session, 1));
    worker.send(Command::Run);
    let begun = std::time::Instant::now();
    let mut logs = Vec::new();
    while logs.len() < 3 && begun.elapsed() < std::time::Duration::from_secs(60) {
        for event in worker.poll() {
            match event.kind {
                EventKind::Log(log) => logs.push(*log),
                EventKind::Error(e) | EventKind::Unavailable(e) => panic!("{e}"),
                _ => {}
            }
        }
    }
    assert!(logs.len() >= 3, "{} reports in 60 s", logs.len());
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
