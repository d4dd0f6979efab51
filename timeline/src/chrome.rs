//! Chrome Trace Event JSON (the format of `chrome://tracing`, read by Perfetto), written
//! by `json.rs`. Format: "Trace Event Format" (Google, 2016): `B`/`E` duration events
//! nest per thread, `i` instant events, `M` metadata names the tracks; `ts` is in
//! microseconds.

use super::json;
use super::{TimelineEvent, TimelineEventKind};
use std::io::{self, BufWriter, Write};

/// The process id every track gets (one pool per file).
const PID: u32 = 1;

/// One entry of `traceEvents`. The `Option` fields are left out of the JSON when `None`.
struct TraceEvent {
    /// The event's name: a job's source, `parked`, `promotion`, `inject` or `thread_name`.
    name: Option<&'static str>,
    /// The event's category: `job`, `park`, `join` or `injector`.
    cat: Option<&'static str>,
    /// The phase: `B` (begin), `E` (end), `i` (instant) or `M` (metadata).
    ph: &'static str,
    /// Nanoseconds since the pool was built; written as `ts`, in microseconds.
    at_ns: u64,
    /// The process id: always [`PID`].
    pid: u32,
    /// The track: a worker's index, or the injector's track after the workers'.
    tid: usize,
    /// Scope of an instant event: `t`, the thread.
    s: Option<&'static str>,
    /// The event's `args` object.
    args: Option<Args>,
}

/// An event's `args`.
enum Args {
    /// `{"name": ...}`: a track's name, on its `thread_name` metadata event.
    Name(String),
    /// `{"victim": ...}`: the worker a stolen or rescued job came from.
    Source {
        /// The index of the worker the job came from.
        victim: usize,
    },
}

impl TraceEvent {
    /// An event of phase `ph` at `at_ns` on track `tid`, without name, category, scope or
    /// `args`.
    fn at(ph: &'static str, at_ns: u64, tid: usize) -> TraceEvent {
        TraceEvent {
            name: None,
            cat: None,
            ph,
            at_ns,
            pid: PID,
            tid,
            s: None,
            args: None,
        }
    }

    /// The event with name `name` and category `cat`.
    fn named(mut self, name: &'static str, cat: &'static str) -> TraceEvent {
        self.name = Some(name);
        self.cat = Some(cat);
        self
    }

    /// The metadata event that names track `tid` `name`.
    fn thread_name(tid: usize, name: String) -> TraceEvent {
        TraceEvent {
            name: Some("thread_name"),
            args: Some(Args::Name(name)),
            ..TraceEvent::at("M", 0, tid)
        }
    }

    /// Writes the event as the next element of `trace`, its fields in the order above.
    fn write_to<W: Write>(&self, trace: &mut json::Array<'_, W>) -> io::Result<()> {
        let mut event = trace.object()?;
        if let Some(name) = self.name {
            event.str("name", name)?;
        }
        if let Some(cat) = self.cat {
            event.str("cat", cat)?;
        }
        event.str("ph", self.ph)?;
        event.micros("ts", self.at_ns)?;
        event.u64("pid", self.pid.into())?;
        event.u64("tid", self.tid as u64)?;
        if let Some(s) = self.s {
            event.str("s", s)?;
        }
        if let Some(args) = &self.args {
            let mut object = event.object("args")?;
            match args {
                Args::Name(name) => object.str("name", name)?,
                Args::Source { victim } => object.u64("victim", *victim as u64)?,
            }
            object.end()?;
        }
        event.end()
    }
}

/// Writes `workers`' events and the `injections` to `out` (buffered here: `out` gets
/// large writes). Slices still open at the end of the snapshot (jobs running, a worker
/// parked) are closed at the snapshot's last timestamp, so every `B` has its `E`.
///
/// The JSON: `{"traceEvents":[...],"displayTimeUnit":"ns"}`.
pub(super) fn write(
    workers: &[Vec<TimelineEvent>],
    injections: &[u64],
    out: impl Write,
) -> io::Result<()> {
    let end = super::last_timestamp(workers, injections);
    let mut out = BufWriter::new(out);
    let mut top = json::Object::begin(&mut out)?;
    let mut trace = top.array("traceEvents")?;
    for (tid, events) in workers.iter().enumerate() {
        TraceEvent::thread_name(tid, format!("worker {tid}")).write_to(&mut trace)?;
        let mut open = 0usize;
        for event in events {
            let at = TraceEvent::at;
            let entry = match event.kind {
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
            };
            entry.write_to(&mut trace)?;
        }
        for _ in 0..open {
            TraceEvent::at("E", end, tid).write_to(&mut trace)?;
        }
    }
    let injector = workers.len();
    TraceEvent::thread_name(injector, "injector".to_owned()).write_to(&mut trace)?;
    for &at_ns in injections {
        TraceEvent {
            s: Some("t"),
            ..TraceEvent::at("i", at_ns, injector).named("inject", "injector")
        }
        .write_to(&mut trace)?;
    }
    trace.end()?;
    top.str("displayTimeUnit", "ns")?;
    top.end()?;
    // Dropping a `BufWriter` would lose the error of its last write.
    out.flush()
}

#[cfg(test)]
mod tests;
