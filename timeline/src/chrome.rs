//! Chrome Trace Event JSON (the format of `chrome://tracing`, read by Perfetto), written
//! with `serde_json`. Format: "Trace Event Format" (Google, 2016): `B`/`E` duration
//! events nest per thread, `i` instant events, `M` metadata names the tracks; `ts` is in
//! microseconds.

use super::{TimelineEvent, TimelineEventKind};
use serde::Serialize;
use std::io::{self, Write};

/// The process id every track gets (one pool per file).
const PID: u32 = 1;

#[derive(Serialize)]
struct Trace {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<TraceEvent>,
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
}

#[derive(Serialize)]
struct TraceEvent {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    ph: &'static str,
    /// Microseconds.
    ts: f64,
    pid: u32,
    tid: usize,
    /// Scope of an instant event: `t`, the thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Args>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Args {
    Name { name: String },
    Source { victim: usize },
}

impl TraceEvent {
    fn at(ph: &'static str, at_ns: u64, tid: usize) -> TraceEvent {
        TraceEvent {
            name: None,
            cat: None,
            ph,
            ts: at_ns as f64 / 1000.0,
            pid: PID,
            tid,
            s: None,
            args: None,
        }
    }

    fn named(mut self, name: &'static str, cat: &'static str) -> TraceEvent {
        self.name = Some(name);
        self.cat = Some(cat);
        self
    }

    fn thread_name(tid: usize, name: String) -> TraceEvent {
        TraceEvent {
            name: Some("thread_name"),
            args: Some(Args::Name { name }),
            ..TraceEvent::at("M", 0, tid)
        }
    }
}

/// Writes `workers`' events and the `injections`. Slices still open at the end of the
/// snapshot (jobs running, a worker parked) are closed at the snapshot's last timestamp,
/// so every `B` has its `E`.
pub(super) fn write(
    workers: &[Vec<TimelineEvent>],
    injections: &[u64],
    out: impl Write,
) -> io::Result<()> {
    let end = super::last_timestamp(workers, injections);
    let mut trace = Vec::new();
    for (tid, events) in workers.iter().enumerate() {
        trace.push(TraceEvent::thread_name(tid, format!("worker {tid}")));
        let mut open = 0usize;
        for event in events {
            let at = TraceEvent::at;
            trace.push(match event.kind {
                TimelineEventKind::JobStart(source) => {
                    open += 1;
                    let mut begin = at("B", event.at_ns, tid).named(source.name(), "job");
                    if let super::JobSource::Steal { victim }
                    | super::JobSource::Rescue { victim } = source
                    {
                        begin.args = Some(Args::Source { victim });
                    }
                    begin
                }
                TimelineEventKind::Park => {
                    open += 1;
                    at("B", event.at_ns, tid).named("parked", "park")
                }
                TimelineEventKind::JobEnd | TimelineEventKind::Unpark => {
                    open = open.saturating_sub(1);
                    at("E", event.at_ns, tid)
                }
                TimelineEventKind::Promotion => TraceEvent {
                    s: Some("t"),
                    ..at("i", event.at_ns, tid).named("promotion", "join")
                },
            });
        }
        trace.extend((0..open).map(|_| TraceEvent::at("E", end, tid)));
    }
    let injector = workers.len();
    trace.push(TraceEvent::thread_name(injector, "injector".to_owned()));
    trace.extend(injections.iter().map(|&at_ns| TraceEvent {
        s: Some("t"),
        ..TraceEvent::at("i", at_ns, injector).named("inject", "injector")
    }));
    serde_json::to_writer(
        out,
        &Trace {
            trace_events: trace,
            display_time_unit: "ns",
        },
    )
    .map_err(io::Error::from)
}
