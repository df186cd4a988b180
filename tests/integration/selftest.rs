//! The self-test a browser's page runs (`index.html?selftest=NAME`), run here: its GPU loop,
//! which awaits every read instead of blocking, trains exactly as the blocking loop does.

use crate::common;

use batchscope::backend::gpu::blocking_maps;
use batchscope::device::Device;
use batchscope::train::selftest::{session, train, train_awaiting};

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
