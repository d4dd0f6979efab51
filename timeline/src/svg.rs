//! A self-contained SVG of a timeline: one lane per worker, what it did over time
//! coloured by the source of the job it was running (the innermost one), parks shaded, a
//! lane of injections, a time axis and a legend.
//!
//! Readable at any number of jobs: each lane is cut into one-pixel columns, the time of
//! each state (a job's source, parked, searching) is summed per column, and a column is
//! drawn in the colour of the state that took most of it; runs of equal columns become
//! one rectangle. So a lane has at most `PLOT_WIDTH` rectangles, whether the run had ten
//! jobs or ten million.

use super::{JobSource, TimelineEvent, TimelineEventKind};
use std::io::{self, Write};

/// Width of the plot in pixels: a lane's number of columns.
const PLOT_WIDTH: usize = 1200;
/// Left margin in pixels, where the lane labels go.
const LEFT: usize = 90;
/// Right margin in pixels.
const RIGHT: usize = 30;
/// Height of the title area in pixels; the injector lane starts below it.
const TOP: usize = 40;
/// Height of a lane in pixels.
const LANE: usize = 22;
/// Space between two worker lanes, in pixels.
const GAP: usize = 6;

/// What a worker is doing between two events.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Neither running a job nor parked: looking for work.
    Searching,
    /// Parked.
    Parked,
    /// Running a job from the source at this index of `SOURCES`.
    Job(usize),
}

/// The job sources, in legend order, with their colours (Tableau 10).
const SOURCES: [(&str, &str); 5] = [
    ("local", "#4e79a7"),
    ("injector", "#f28e2b"),
    ("steal", "#e15759"),
    ("broadcast", "#76b7b2"),
    ("rescue", "#b07aa1"),
];
/// The colour of parked time.
const PARKED: &str = "#c8c8c8";
/// The states a column sums: the job sources, parked and searching.
const STATES: usize = SOURCES.len() + 2;

/// `source`'s index in `SOURCES`.
fn source_index(source: JobSource) -> usize {
    match source {
        JobSource::Local => 0,
        JobSource::Injector => 1,
        JobSource::Steal { .. } => 2,
        JobSource::Broadcast => 3,
        JobSource::Rescue { .. } => 4,
    }
}

/// `state`'s index in a column: the job sources, then parked, then searching.
fn state_index(state: State) -> usize {
    match state {
        State::Job(i) => i,
        State::Parked => SOURCES.len(),
        State::Searching => SOURCES.len() + 1,
    }
}

/// The time each state took in each pixel column of one lane.
fn columns(events: &[TimelineEvent], end: u64) -> Vec<[u64; STATES]> {
    let mut columns = vec![[0u64; STATES]; PLOT_WIDTH];
    let ns_per_px = (end as f64 / PLOT_WIDTH as f64).max(1.0);
    let mut add = |from: u64, to: u64, state: State| {
        let mut t = from;
        while t < to {
            let px = ((t as f64 / ns_per_px) as usize).min(PLOT_WIDTH - 1);
            let px_end = (((px + 1) as f64 * ns_per_px) as u64).max(t + 1);
            let until = to.min(px_end);
            columns[px][state_index(state)] += until - t;
            t = until;
        }
    };
    let mut stack: Vec<State> = Vec::new();
    let mut since = 0;
    for event in events {
        let current = stack.last().copied().unwrap_or(State::Searching);
        add(since, event.at_ns, current);
        since = event.at_ns;
        match event.kind {
            TimelineEventKind::JobStart(source) => stack.push(State::Job(source_index(source))),
            TimelineEventKind::Park => stack.push(State::Parked),
            TimelineEventKind::JobEnd | TimelineEventKind::Unpark => {
                stack.pop();
            }
            TimelineEventKind::Promotion => {}
        }
    }
    add(
        since,
        end,
        stack.last().copied().unwrap_or(State::Searching),
    );
    columns
}

/// A round step for `span` ns in about eight ticks: 1, 2 or 5 times a power of ten.
fn tick_step(span: u64) -> u64 {
    let raw = (span / 8).max(1);
    let mut step = 1;
    while step * 10 <= raw {
        step *= 10;
    }
    if step * 5 <= raw {
        step * 5
    } else if step * 2 <= raw {
        step * 2
    } else {
        step
    }
}

/// The unit of the axis labels for a run of `span` ns: the largest that keeps it ≥ 1.
fn unit(span: u64) -> (f64, &'static str) {
    match span {
        s if s >= 1_000_000_000 => (1e9, "s"),
        s if s >= 1_000_000 => (1e6, "ms"),
        s if s >= 1_000 => (1e3, "µs"),
        _ => (1.0, "ns"),
    }
}

/// `ns` in `unit`, without trailing zeros: "0", "0.2 s", "1.4 s", "250 µs".
fn label(ns: u64, (scale, name): (f64, &str)) -> String {
    if ns == 0 {
        return "0".to_owned();
    }
    let value = format!("{:.3}", ns as f64 / scale);
    let value = value.trim_end_matches('0').trim_end_matches('.');
    format!("{value} {name}")
}

/// Writes `workers`' events and the `injections` to `out` as an SVG: the title, the
/// injector lane, one lane per worker, the time axis and the legend.
pub(super) fn write(
    workers: &[Vec<TimelineEvent>],
    injections: &[u64],
    mut out: impl Write,
) -> io::Result<()> {
    let end = super::last_timestamp(workers, injections).max(1);
    let mut jobs = [0u64; SOURCES.len()];
    for event in workers.iter().flatten() {
        if let TimelineEventKind::JobStart(source) = event.kind {
            jobs[source_index(source)] += 1;
        }
    }
    let lanes_top = TOP + LANE; // the injector lane first
    let axis_y = lanes_top + workers.len() * (LANE + GAP) + 4;
    let legend_y = axis_y + 40;
    let width = LEFT + PLOT_WIDTH + RIGHT;
    let height = legend_y + 30;
    writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    )?;
    writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    )?;
    writeln!(
        out,
        r#"<text x="{LEFT}" y="22" font-size="15">stealpool timeline: {} workers, {} jobs, {} injections, {}</text>"#,
        workers.len(),
        jobs.iter().sum::<u64>(),
        injections.len(),
        label_duration(end)
    )?;
    let x = |ns: u64| LEFT as f64 + ns as f64 / end as f64 * PLOT_WIDTH as f64;

    // The injector lane: one tick per pixel that saw injections.
    writeln!(out, r#"<text x="8" y="{}">injector</text>"#, TOP + 14)?;
    let mut last_px = usize::MAX;
    for &at in injections {
        let px = x(at) as usize;
        if px != last_px {
            writeln!(
                out,
                r##"<rect x="{px}" y="{}" width="1" height="{}" fill="#f28e2b"/>"##,
                TOP + 4,
                LANE - 8
            )?;
            last_px = px;
        }
    }

    for (index, events) in workers.iter().enumerate() {
        let y = lanes_top + index * (LANE + GAP);
        writeln!(out, r#"<text x="8" y="{}">worker {index}</text>"#, y + 15)?;
        writeln!(
            out,
            r##"<rect x="{LEFT}" y="{y}" width="{PLOT_WIDTH}" height="{LANE}" fill="#f4f4f4"/>"##
        )?;
        let columns = columns(events, end);
        let dominant = |c: &[u64; STATES]| {
            let (best, time) = c.iter().enumerate().max_by_key(|&(_, t)| *t).unwrap();
            if *time == 0 {
                STATES - 1
            } else {
                best
            }
        };
        let mut px = 0;
        while px < PLOT_WIDTH {
            let state = dominant(&columns[px]);
            let mut run = 1;
            while px + run < PLOT_WIDTH && dominant(&columns[px + run]) == state {
                run += 1;
            }
            let fill = match state {
                s if s < SOURCES.len() => Some(SOURCES[s].1),
                s if s == SOURCES.len() => Some(PARKED),
                _ => None, // searching: the lane's background
            };
            if let Some(fill) = fill {
                writeln!(
                    out,
                    r#"<rect x="{}" y="{y}" width="{run}" height="{LANE}" fill="{fill}"/>"#,
                    LEFT + px
                )?;
            }
            px += run;
        }
    }

    // The time axis.
    writeln!(
        out,
        r#"<line x1="{LEFT}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="black"/>"#,
        LEFT + PLOT_WIDTH
    )?;
    let step = tick_step(end);
    let unit = unit(end);
    let mut tick = 0;
    while tick <= end {
        let tx = x(tick);
        writeln!(
            out,
            r#"<line x1="{tx:.1}" y1="{axis_y}" x2="{tx:.1}" y2="{}" stroke="black"/><text x="{tx:.1}" y="{}" text-anchor="middle">{}</text>"#,
            axis_y + 5,
            axis_y + 18,
            label(tick, unit)
        )?;
        tick += step;
    }

    // The legend.
    let mut lx = LEFT;
    for (i, (name, colour)) in SOURCES.iter().enumerate() {
        writeln!(
            out,
            r#"<rect x="{lx}" y="{}" width="12" height="12" fill="{colour}"/><text x="{}" y="{}">{name} ({})</text>"#,
            legend_y - 10,
            lx + 16,
            legend_y,
            jobs[i]
        )?;
        lx += 150;
    }
    writeln!(
        out,
        r#"<rect x="{lx}" y="{}" width="12" height="12" fill="{PARKED}"/><text x="{}" y="{legend_y}">parked</text>"#,
        legend_y - 10,
        lx + 16
    )?;
    lx += 90;
    writeln!(
        out,
        r##"<rect x="{lx}" y="{}" width="12" height="12" fill="#f4f4f4" stroke="#999"/><text x="{}" y="{legend_y}">searching</text>"##,
        legend_y - 10,
        lx + 16
    )?;
    writeln!(out, "</svg>")
}

/// The run's length, `ns`, for the title: in s, ms or µs.
fn label_duration(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.2} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}
