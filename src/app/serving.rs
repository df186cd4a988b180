//! The Experiments tab's serving measurement: after training, predictions one request at a
//! time and in batches on each device, as `batchscope infer` measures them. Like a sweep it
//! runs with training paused and one device at a time, so no figure shares its cores.

use super::BatchScopeApp;
use crate::bench::infer::{self, InferPlan, Serving, ServingNews};

/// Training steps before the requests: enough for trained weights, short beside the requests.
const TRAIN_STEPS: u64 = 300;
/// Timed requests per request size.
const REQUESTS: usize = 200;
/// Characters a language model writes after each prompt, each way.
const TOKENS: usize = 100;

impl BatchScopeApp {
    /// Pauses training and has the serving measurement start once every device has stopped.
    pub(super) fn time_requests(&mut self) {
        let Some(session) = &self.session else {
            return;
        };
        let plan = InferPlan {
            train_steps: TRAIN_STEPS,
            requests: REQUESTS,
            batch: session.config.batch,
            warmup: 10,
            tokens: if session.data.is_text() { TOKENS } else { 0 },
            kv_cache: None,
        };
        self.pause();
        self.state.serving = Some(Serving::new(plan, self.sweep_devices()));
        self.jobs.serving = None;
        self.jobs.pending_serving = true;
        self.start_pending_serving();
    }

    /// Stops the serving measurement; what was measured stays.
    pub(super) fn cancel_serving(&mut self) {
        // Dropping the job asks it to stop after the device it measures.
        self.jobs.serving = None;
        self.jobs.pending_serving = false;
        if let Some(serving) = self.state.serving.as_mut()
            && !serving.ended
        {
            serving.ended = true;
            serving.cancelled = true;
        }
    }

    /// Starts the measurement asked for once no device trains any more (called every frame).
    pub(super) fn start_pending_serving(&mut self) {
        if !self.jobs.pending_serving || self.state.is_running() {
            return;
        }
        self.jobs.pending_serving = false;
        let (Some(session), Some(serving)) = (self.session.clone(), self.state.serving.as_ref())
        else {
            return;
        };
        let (plan, devices) = (serving.plan, serving.devices.clone());
        let options = self.measuring_options();
        let work = move |ctx: crate::job::JobContext<ServingNews>| {
            let open = |device| crate::backend::open(device, &options);
            infer::serve_each(
                &session,
                &devices,
                plan,
                &open,
                ctx.cancel_flag(),
                &mut |news| {
                    ctx.send(news);
                },
            );
        };
        match crate::job::Job::spawn("serving", self.notify(), work) {
            Ok(job) => self.jobs.serving = Some(job),
            Err(e) => {
                if let Some(serving) = self.state.serving.as_mut() {
                    let why = crate::i18n::Said::new(
                        crate::i18n::ErrKey::NoMeasurementThread,
                        &[("why", &e)],
                    );
                    for &device in &serving.devices.clone() {
                        serving.apply(ServingNews::Failed(device, why.clone()));
                    }
                    serving.ended = true;
                }
            }
        }
    }

    /// Takes in the measurement's news.
    pub(super) fn poll_serving(&mut self) {
        let Some(job) = self.jobs.serving.as_mut() else {
            return;
        };
        let news = job.poll();
        let ended = job.is_finished();
        if let Some(serving) = self.state.serving.as_mut() {
            for n in news {
                serving.apply(n);
            }
            serving.ended |= ended;
        }
        if ended {
            self.jobs.serving = None;
        }
    }
}
