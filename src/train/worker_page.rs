//! The worker's loop where it may not wait for its device: a GPU's on a browser's page, which
//! answers a read only between two of the page's frames. Reads and evaluations are started and
//! looked at in later slices; meanwhile the worker submits no more steps, so what it reports
//! is what the device did.

use web_time::Instant;

use super::super::config::{BOUNDARY_RESOLUTION, StopAt};
use super::super::runner::StagedEval;
use super::{EVAL_INTERVAL, EventKind, LOG_INTERVAL, State};
use crate::backend::PendingRead;

/// What a loop that may not wait for its device waits for.
#[derive(Debug)]
pub(in crate::train) enum Awaiting {
    /// The loss statistics' read, started after a step; then, with `check`, an evaluation
    /// that checks the stop condition (an epoch ended).
    Stats { read: PendingRead, check: bool },
    /// A whole-set evaluation's passes and reads; `check`: it decides whether the run stops.
    Evaluation { eval: Box<StagedEval>, check: bool },
}

impl State<'_> {
    /// [`State::step_and_report`] for a loop that may not wait for its device: while a read
    /// or an evaluation is on its way, no step (the device finishes its work, as in a sync,
    /// but the page goes on drawing); once it is in, its report. Otherwise a step that never
    /// syncs; when a report is due or an epoch ended under a stop condition, the statistics'
    /// read started.
    pub(super) fn step_then_read(&mut self, force: bool) {
        match self.pending.take() {
            Some(Awaiting::Stats { read, check }) => return self.take_stats(read, check, force),
            Some(Awaiting::Evaluation { eval, check }) => return self.take_evaluation(eval, check),
            None => {}
        }
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        let backend = &mut *self.backend;
        if let Err(e) = runner.step(backend, false) {
            return self.fail(e.said());
        }
        let epoch = runner.epoch();
        let check = runner.pipeline().stop != StopAt::Never && epoch != self.checked_epoch;
        if check {
            self.checked_epoch = epoch;
        }
        let check = check
            && match runner.pipeline().stop {
                StopAt::Epochs(n) => epoch >= u64::from(n),
                _ => true,
            };
        let due = force || check || self.last_log.elapsed() >= LOG_INTERVAL;
        if due {
            match backend.start_read(runner.stats_tensor()) {
                Ok(read) => self.pending = Some(Awaiting::Stats { read, check }),
                Err(e) => self.fail(e.said()),
            }
        }
    }

    /// Starts a whole-set evaluation (and the boundary), unless something is on its way.
    pub(super) fn start_evaluation(&mut self, check: bool) {
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        if self.pending.is_some() {
            return;
        }
        match runner.start_evaluation(&mut *self.backend, BOUNDARY_RESOLUTION) {
            Ok(eval) => {
                self.pending = Some(Awaiting::Evaluation {
                    eval: Box::new(eval),
                    check,
                });
            }
            Err(e) => self.fail(e.said()),
        }
    }

    /// The statistics' read, if it is in: the interval's report, then the evaluation when
    /// one is due (or the stop condition is to be checked).
    fn take_stats(&mut self, mut read: PendingRead, check: bool, force: bool) {
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        let backend = &mut *self.backend;
        let Some(values) = backend.finish_read(&mut read) else {
            self.pending = Some(Awaiting::Stats { read, check });
            return;
        };
        let log = values.and_then(|values| {
            runner.take_read(backend, &values)?;
            runner.log(backend)
        });
        match log {
            Ok(log) => {
                self.send_log(log);
                if check || force || self.last_eval.elapsed() >= EVAL_INTERVAL {
                    self.start_evaluation(check);
                }
                if self.pending.is_none() {
                    self.turns.pass(self.device);
                }
            }
            Err(e) => self.fail(e.said()),
        }
    }

    /// The evaluation, if all of it is in: its report and boundary, and whether the run
    /// stops here. Its time is not training time: the measuring interval starts after it.
    fn take_evaluation(&mut self, mut eval: Box<StagedEval>, check: bool) {
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        let Some(result) = runner.finish_evaluation(&mut *self.backend, &mut eval) else {
            self.pending = Some(Awaiting::Evaluation { eval, check });
            return;
        };
        runner.restart_clock();
        self.last_eval = Instant::now();
        let stop = runner.pipeline().stop;
        match result {
            Ok((report, grid, values)) => {
                let step = report.step;
                let metric = report.test.accuracy.or(report.test.r2);
                self.send(EventKind::Eval(report));
                self.send(EventKind::Values(Box::new(values)));
                if let Some(grid) = grid {
                    self.send(EventKind::Boundary { step, grid });
                }
                let reached = match stop {
                    StopAt::Never => false,
                    StopAt::Epochs(_) => true,
                    StopAt::TestMetric(goal) => metric.is_some_and(|m| m >= goal),
                };
                if check && reached {
                    let metric = matches!(stop, StopAt::TestMetric(_)).then_some(metric);
                    return self.reach(metric.flatten(), true);
                }
                self.turns.pass(self.device);
            }
            Err(e) => self.fail(e.said()),
        }
    }
}
