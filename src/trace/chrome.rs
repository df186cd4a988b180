//! Chrome trace event JSON (the format Perfetto and `chrome://tracing` open): one process per
//! device, one thread per lane, a complete (`"ph": "X"`) event per span and per step.
//!
//! Format: <https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU>.
//! `ts` and `dur` are microseconds; thread and process names are metadata (`"ph": "M"`) events.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::span::{Category, Clock, Lane, Span};
use super::step::StepTrace;

/// One device's recorded run.
#[derive(Clone, Copy, Debug)]
pub struct DeviceTrace<'a> {
    /// Process id in the trace (one per device).
    pub pid: u32,
    /// Process name: the device and its backend.
    pub name: &'a str,
    /// Whether the device is a GPU (names the kernel lane).
    pub gpu: bool,
    /// The recorded steps.
    pub steps: &'a [StepTrace],
    /// Their spans.
    pub spans: &'a [Span],
}

fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn clock_name(clock: Clock) -> &'static str {
    match clock {
        Clock::Host => "host clock",
        Clock::GpuTimestamp => "GPU timestamp query",
        Clock::HostObserved => "host-observed submit to completion (upper bound)",
    }
}

/// The trace of every device as one JSON object (`traceEvents` plus `otherData`).
pub fn to_chrome(devices: &[DeviceTrace<'_>], notes: &[String]) -> Value {
    let mut events = Vec::new();
    for d in devices {
        events.push(json!({
            "ph": "M", "pid": d.pid, "tid": 0, "name": "process_name",
            "args": { "name": d.name },
        }));
        let mut lanes: BTreeSet<Lane> = d.spans.iter().map(|s| s.lane).collect();
        if !d.steps.is_empty() {
            lanes.insert(Lane::Main);
        }
        for lane in lanes {
            events.push(json!({
                "ph": "M", "pid": d.pid, "tid": lane.tid(), "name": "thread_name",
                "args": { "name": lane.name(d.gpu) },
            }));
            events.push(json!({
                "ph": "M", "pid": d.pid, "tid": lane.tid(), "name": "thread_sort_index",
                "args": { "sort_index": lane.tid() },
            }));
        }
        for step in d.steps {
            let mut breakdown = serde_json::Map::new();
            for c in Category::ALL {
                breakdown.insert(
                    format!("{}_us", c.as_str()),
                    json!(micros(step.breakdown.get(c))),
                );
            }
            breakdown.insert(
                "device_busy_us".into(),
                json!(micros(step.breakdown.device_busy_ns)),
            );
            let mut args = json!({
                "step": step.step, "synced": step.synced, "kernels_timed": step.kernels_timed,
                "batch_bytes": step.batch_bytes,
            });
            // Without the kernels' times there is no honest breakdown of the step.
            if step.kernels_timed {
                args["breakdown"] = Value::Object(breakdown);
            }
            events.push(json!({
                "ph": "X", "pid": d.pid, "tid": Lane::Main.tid(),
                "name": format!("ProfilerStep#{}", step.step), "cat": "ProfilerStep",
                "ts": micros(step.start_ns), "dur": micros(step.end_ns - step.start_ns),
                "args": args,
            }));
        }
        for s in d.spans {
            let mut args = json!({ "step": s.step, "clock": clock_name(s.clock) });
            if s.bytes > 0 {
                args["bytes"] = json!(s.bytes);
            }
            events.push(json!({
                "ph": "X", "pid": d.pid, "tid": s.lane.tid(), "name": s.name,
                "cat": s.category.as_str(), "ts": micros(s.start_ns),
                "dur": micros(s.duration_ns), "args": args,
            }));
        }
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": { "producer": "BatchScope", "notes": notes },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Breakdown;

    #[test]
    fn spans_and_steps_become_complete_events_with_named_threads() {
        let spans = [Span {
            lane: Lane::Transfer,
            category: Category::Memcpy,
            name: "upload batch",
            start_ns: 1_500,
            duration_ns: 2_000,
            bytes: 4096,
            step: 1,
            clock: Clock::Host,
        }];
        let steps = [StepTrace {
            step: 1,
            start_ns: 1_000,
            end_ns: 11_000,
            breakdown: Breakdown::of(1_000, 11_000, &spans),
            synced: false,
            kernels_timed: true,
            batch_bytes: 4096,
        }];
        let trace = to_chrome(
            &[DeviceTrace {
                pid: 2,
                name: "gpu",
                gpu: true,
                steps: &steps,
                spans: &spans,
            }],
            &[],
        );
        let events = trace["traceEvents"].as_array().cloned().unwrap_or_default();
        let copy = events.iter().find(|e| e["name"] == "upload batch");
        let copy = copy.cloned().unwrap_or_default();
        assert_eq!(copy["ph"], "X");
        assert_eq!(copy["tid"], Lane::Transfer.tid());
        assert_eq!(copy["ts"], 1.5);
        assert_eq!(copy["dur"], 2.0);
        assert_eq!(copy["args"]["bytes"], 4096);
        assert_eq!(copy["cat"], "Memcpy");
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .filter_map(|e| e["args"]["name"].as_str())
            .collect();
        assert_eq!(names, ["training thread", "host→device transfer"]);
        let step = events.iter().find(|e| e["cat"] == "ProfilerStep");
        let step = step.cloned().unwrap_or_default();
        assert_eq!(step["dur"], 10.0);
        assert_eq!(step["args"]["breakdown"]["Memcpy_us"], 2.0);
    }
}
