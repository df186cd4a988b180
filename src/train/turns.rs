//! How the two devices' workers share this machine while both train side by side.
//!
//! Both at once, the CPU column's kernel threads and the GPU column's submitting thread (and, on
//! a software adapter, the GPU's kernels themselves) compete for the same cores, so each column
//! shows a device slowed by the other. Taking turns, one worker trains while the other waits,
//! and each is timed only while it has the machine to itself: a turn lasts from one report to
//! the next (about 100 ms), and the clock starts over when a turn begins, so the wait is never
//! counted as training time. Leaving a core, the CPU trains on one thread fewer, so the GPU's
//! submitting thread never waits for a core.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use web_time::Instant;

use serde::{Deserialize, Serialize};

use crate::device::Device;

/// How the devices share the machine while both train.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sharing {
    /// Both train at the same time, sharing the cores.
    Together,
    /// One trains while the other waits; each is timed alone.
    #[default]
    TakingTurns,
    /// Both at once, with one core left to the GPU's submitting thread.
    SpareCore,
}

impl Sharing {
    /// Every choice, in the order the window offers them.
    pub const ALL: [Sharing; 3] = [Sharing::TakingTurns, Sharing::Together, Sharing::SpareCore];

    /// The CPU's kernel threads under this sharing, when the CPU would have `threads` and the
    /// GPU trains beside it (`gpu`): one fewer when a core is left, never fewer than one.
    pub fn cpu_threads(self, threads: usize, gpu: bool) -> usize {
        if self == Sharing::SpareCore && gpu {
            threads.saturating_sub(1).max(1)
        } else {
            threads
        }
    }
}

/// What [`Turns::take`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// Turns are off: train.
    Free,
    /// The device holds the turn. `waited` says whether it had to wait for it (then the time
    /// since its last report was not its own, and its clock must start over).
    Held {
        /// Whether the other device had the turn first.
        waited: bool,
    },
    /// The other device still has the turn; try again (after looking at the commands).
    NotYet,
}

#[derive(Debug, Default)]
struct Inner {
    on: bool,
    holder: Option<Device>,
    waiting: [bool; 2],
}

/// The turn the workers pass between them, when they take turns. One per window, shared by
/// both workers.
#[derive(Debug, Default)]
pub struct Turns {
    inner: Mutex<Inner>,
    changed: Condvar,
}

fn other(device: Device) -> Device {
    match device {
        Device::Cpu => Device::Gpu,
        Device::Gpu => Device::Cpu,
    }
}

impl Turns {
    /// Turns that are on (`true`) or off.
    pub fn new(on: bool) -> Self {
        let turns = Self::default();
        turns.set(on);
        turns
    }

    // A worker that panicked while holding the lock cannot have left the three fields
    // inconsistent in a way that matters more than a lost turn: go on with them.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Switches turn-taking on or off; a worker waiting for a turn goes on at once when off.
    pub fn set(&self, on: bool) {
        let mut inner = self.lock();
        *inner = Inner {
            on,
            ..Inner::default()
        };
        self.changed.notify_all();
    }

    /// Whether turns are on.
    pub fn is_on(&self) -> bool {
        self.lock().on
    }

    /// Whether `device` waits for the other device's turn to end.
    pub fn waits(&self, device: Device) -> bool {
        let inner = self.lock();
        inner.on && inner.holder.is_some_and(|h| h != device)
    }

    /// Asks for the turn for `device`, waiting at most `patience` for the other device to pass
    /// it. A device that does not get it stays in line: the other hands it over at the end of
    /// its turn.
    pub fn take(&self, device: Device, patience: Duration) -> Take {
        let deadline = Instant::now() + patience;
        let mut inner = self.lock();
        loop {
            if !inner.on {
                inner.waiting[device as usize] = false;
                return Take::Free;
            }
            if inner.holder.is_none_or(|h| h == device) {
                inner.holder = Some(device);
                // In line since an earlier call, or in this one.
                let waited = std::mem::take(&mut inner.waiting[device as usize]);
                return Take::Held { waited };
            }
            inner.waiting[device as usize] = true;
            let now = Instant::now();
            if now >= deadline {
                return Take::NotYet;
            }
            inner = self
                .changed
                .wait_timeout(inner, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Ends `device`'s turn: the other device gets it if it is waiting; otherwise nobody holds
    /// it, and `device` takes it again at its next step.
    pub fn pass(&self, device: Device) {
        let mut inner = self.lock();
        Self::hand_on(&mut inner, device);
        self.changed.notify_all();
    }

    /// `device` stops training: it gives up the turn and leaves the line.
    pub fn leave(&self, device: Device) {
        let mut inner = self.lock();
        inner.waiting[device as usize] = false;
        Self::hand_on(&mut inner, device);
        self.changed.notify_all();
    }

    fn hand_on(inner: &mut Inner, device: Device) {
        if inner.holder == Some(device) {
            let next = other(device);
            inner.holder = inner.waiting[next as usize].then_some(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const NOW: Duration = Duration::ZERO;

    #[test]
    fn off_lets_both_train() {
        let turns = Turns::new(false);
        assert_eq!(turns.take(Device::Cpu, NOW), Take::Free);
        assert_eq!(turns.take(Device::Gpu, NOW), Take::Free);
    }

    #[test]
    fn the_turn_goes_to_the_device_in_line() {
        let turns = Turns::new(true);
        assert_eq!(turns.take(Device::Cpu, NOW), Take::Held { waited: false });
        // The GPU asks while the CPU holds it: it is in line.
        assert_eq!(turns.take(Device::Gpu, NOW), Take::NotYet);
        // The CPU's turn ends: the GPU has it, and the CPU must wait.
        turns.pass(Device::Cpu);
        assert_eq!(turns.take(Device::Cpu, NOW), Take::NotYet);
        assert_eq!(turns.take(Device::Gpu, NOW), Take::Held { waited: true });
        turns.pass(Device::Gpu);
        assert_eq!(turns.take(Device::Cpu, NOW), Take::Held { waited: true });
    }

    #[test]
    fn a_device_alone_keeps_training() {
        let turns = Turns::new(true);
        for _ in 0..3 {
            assert_eq!(turns.take(Device::Gpu, NOW), Take::Held { waited: false });
            turns.pass(Device::Gpu);
        }
    }

    #[test]
    fn a_device_that_stops_hands_the_turn_on_and_leaves_the_line() {
        let turns = Turns::new(true);
        assert_eq!(turns.take(Device::Cpu, NOW), Take::Held { waited: false });
        assert_eq!(turns.take(Device::Gpu, NOW), Take::NotYet);
        turns.leave(Device::Gpu);
        turns.pass(Device::Cpu);
        // Nobody waits: the CPU takes it again.
        assert_eq!(turns.take(Device::Cpu, NOW), Take::Held { waited: false });
        turns.leave(Device::Cpu);
        assert_eq!(turns.take(Device::Gpu, NOW), Take::Held { waited: false });
        assert_eq!(turns.take(Device::Cpu, NOW), Take::NotYet);
    }

    /// Turns held by the CPU, and a thread where the GPU waits for them, once it is in line.
    fn gpu_in_line() -> (Arc<Turns>, std::thread::JoinHandle<Take>) {
        let turns = Arc::new(Turns::new(true));
        assert_eq!(turns.take(Device::Cpu, NOW), Take::Held { waited: false });
        let waiter = {
            let turns = Arc::clone(&turns);
            std::thread::Builder::new()
                .name("waiter".into())
                .spawn(move || turns.take(Device::Gpu, Duration::from_secs(30)))
                .expect("thread")
        };
        while !turns.lock().waiting[Device::Gpu as usize] {
            std::thread::yield_now();
        }
        (turns, waiter)
    }

    #[test]
    fn a_waiting_worker_wakes_when_the_turn_is_passed() {
        let (turns, waiter) = gpu_in_line();
        turns.pass(Device::Cpu);
        assert_eq!(waiter.join().expect("waiter"), Take::Held { waited: true });
    }

    #[test]
    fn switching_turns_off_releases_a_waiting_worker() {
        let (turns, waiter) = gpu_in_line();
        turns.set(false);
        assert_eq!(waiter.join().expect("waiter"), Take::Free);
    }

    #[test]
    fn a_spare_core_is_left_only_beside_the_gpu_and_never_the_last() {
        assert_eq!(Sharing::SpareCore.cpu_threads(8, true), 7);
        assert_eq!(Sharing::SpareCore.cpu_threads(8, false), 8);
        assert_eq!(Sharing::SpareCore.cpu_threads(1, true), 1);
        assert_eq!(Sharing::TakingTurns.cpu_threads(8, true), 8);
        assert_eq!(Sharing::Together.cpu_threads(8, true), 8);
    }
}
