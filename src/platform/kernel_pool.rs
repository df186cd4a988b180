//! The desktop's kernel threads: a rayon pool of its own, whose idle threads are kept awake
//! for a moment while a step runs.
//!
//! Why: a rayon thread with nothing to do sleeps within microseconds, and waking it takes
//! 60–130 µs on this project's 2-core virtual machine (measured: a `join` of two 200 µs halves
//! took 330 µs when the second thread had been idle 3 ms, 207 µs when it had been busy). A
//! training step alternates work on one thread (loading a batch, small products, the loss)
//! with products split over all, and each split paid that wake-up, often more than splitting
//! saved: 784,256,256,10 at batch 512 ran its step in 5.7 ms with splits by size against
//! 4.3 ms with every kernel split, which keeps both threads busy. OpenMP, under PyTorch, has
//! its idle threads spin a while before sleeping (its wait policy) for the same reason. Here
//! the other threads run a job that takes work the moment it appears and gives up its core to
//! any other runnable thread while it waits, until [`WARM_FOR`] after the last kernel asked.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the idle threads stay awake after the last kernel that could use them: longer
/// than a step's longest stretch on one thread (loading a batch of 512 MNIST images took
/// 0.5 ms), short enough that an idle app keeps no core busy.
const WARM_FOR: Duration = Duration::from_millis(2);

/// A kernel that asked within this long re-wakes the threads at the next step's start, while
/// its batch loads (a network too small to split asks never, and spins nothing).
const RECENTLY: Duration = Duration::from_millis(100);

pub struct KernelPool {
    pool: rayon::ThreadPool,
    warm: Arc<Warmth>,
}

/// When the idle threads may sleep, and how many are awake.
struct Warmth {
    epoch: Instant,
    /// Until when, in ns since `epoch`, the idle threads stay awake.
    until_ns: AtomicU64,
    /// The waiting jobs still running.
    awake: AtomicUsize,
    /// Whether waiting jobs are on their way or running.
    spinning: AtomicBool,
}

impl Warmth {
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// The waiting job of one thread: runs work from the pool as it appears, until the
    /// deadline has passed with none.
    fn wait_for_work(&self) {
        loop {
            match rayon::yield_now() {
                Some(rayon::Yield::Executed) => {}
                _ if self.now_ns() > self.until_ns.load(Ordering::Relaxed) => break,
                // Nothing to take: give the core to any other thread that wants it.
                _ => std::thread::yield_now(),
            }
        }
        if self.awake.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.spinning.store(false, Ordering::Release);
        }
    }
}

impl KernelPool {
    /// A pool of `threads` kernel threads.
    ///
    /// # Errors
    /// When the system refuses the threads.
    pub fn new(threads: usize) -> Result<Self, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cpu-kernel-{i}"))
            .build()
            .map_err(|e| e.to_string())?;
        let epoch = Instant::now();
        Ok(Self {
            pool,
            warm: Arc::new(Warmth {
                epoch,
                until_ns: AtomicU64::new(0),
                awake: AtomicUsize::new(0),
                spinning: AtomicBool::new(false),
            }),
        })
    }

    /// Runs `f` in the pool: the kernels' parallel loops inside it use its threads. When a
    /// kernel asked to keep them awake lately, they are woken now, while `f` starts.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        let last = self.warm.until_ns.load(Ordering::Relaxed);
        let recently = (RECENTLY + WARM_FOR).as_nanos() as u64;
        if last > 0 && self.warm.now_ns() < last + recently {
            self.keep_awake();
        }
        self.pool.install(f)
    }

    /// Keeps the pool's idle threads awake for [`WARM_FOR`] from now: called by a kernel
    /// about to split its work over them.
    pub fn keep_awake(&self) {
        let threads = self.pool.current_num_threads();
        if threads < 2 {
            return;
        }
        let warm = &self.warm;
        warm.until_ns.store(
            warm.now_ns() + WARM_FOR.as_nanos() as u64,
            Ordering::Relaxed,
        );
        if warm.spinning.swap(true, Ordering::AcqRel) {
            return;
        }
        // Every thread but the caller's (when it is one of the pool's) waits for work.
        let caller = self.pool.current_thread_index();
        let waiting = threads - usize::from(caller.is_some());
        warm.awake.store(waiting, Ordering::Release);
        let warm = Arc::clone(warm);
        self.pool.spawn_broadcast(move |thread| {
            if Some(thread.index()) != caller {
                warm.wait_for_work();
            }
        });
    }

    /// The threads the kernels run on.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the waiting jobs have all ended within `limit`.
    fn asleep_within(pool: &KernelPool, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if !pool.warm.spinning.load(Ordering::Acquire) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    /// Threads kept awake take the work split to them, and stop waiting soon after the last
    /// kernel asked, whether it asked from inside the pool or from outside.
    #[test]
    fn awake_threads_take_work_then_go_back_to_sleep() {
        let pool = KernelPool::new(3).expect("pool");
        let sum = pool.install(|| {
            pool.keep_awake();
            assert!(pool.warm.spinning.load(Ordering::Acquire));
            let (a, b) = rayon::join(
                || (0..1000u64).sum::<u64>(),
                || (1000..2000u64).sum::<u64>(),
            );
            a + b
        });
        assert_eq!(sum, (0..2000u64).sum::<u64>());
        assert!(asleep_within(&pool, Duration::from_secs(5)));
        pool.keep_awake();
        assert_eq!(pool.install(|| 7), 7);
        assert!(asleep_within(&pool, Duration::from_secs(5)));
        // Asked again once asleep, they wake again.
        pool.keep_awake();
        assert!(pool.warm.spinning.load(Ordering::Acquire));
        assert!(asleep_within(&pool, Duration::from_secs(5)));
    }

    /// One thread has no other to keep awake.
    #[test]
    fn a_single_thread_spins_nothing() {
        let pool = KernelPool::new(1).expect("pool");
        pool.keep_awake();
        assert!(!pool.warm.spinning.load(Ordering::Acquire));
    }
}
