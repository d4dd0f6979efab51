//! The export on made-up timelines: the exact bytes of small ones (also what serde_json
//! writes for this schema), extreme timestamps, the fields of each phase, failing and
//! counting outputs.

use super::write;
use crate::{JobSource, TimelineEvent, TimelineEventKind as Kind};
use serde_json::{json, Value};
use std::io::{self, Write};

fn at(at_ns: u64, kind: Kind) -> TimelineEvent {
    TimelineEvent { at_ns, kind }
}

/// Two workers with every kind of event and source; worker 1's three jobs are still
/// running at the end (closed at the last timestamp, 4 ms).
fn two_workers() -> Vec<Vec<TimelineEvent>> {
    vec![
        vec![
            at(0, Kind::JobStart(JobSource::Injector)),
            at(1500, Kind::JobStart(JobSource::Steal { victim: 1 })),
            at(2000, Kind::JobEnd),
            at(2001, Kind::Promotion),
            at(3_000_000, Kind::JobEnd),
            at(3_000_001, Kind::Park),
            at(4_000_000, Kind::Unpark),
        ],
        vec![
            at(999, Kind::JobStart(JobSource::Rescue { victim: 0 })),
            at(1000, Kind::JobStart(JobSource::Local)),
            at(1001, Kind::JobStart(JobSource::Broadcast)),
        ],
    ]
}

fn exported(workers: &[Vec<TimelineEvent>], injections: &[u64]) -> String {
    let mut out = Vec::new();
    write(workers, injections, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn a_small_timeline_is_written_byte_for_byte() {
    let expected = concat!(
        r#"{"traceEvents":["#,
        r#"{"name":"thread_name","ph":"M","ts":0.0,"pid":1,"tid":0,"args":{"name":"worker 0"}},"#,
        r#"{"name":"injector","cat":"job","ph":"B","ts":0.0,"pid":1,"tid":0},"#,
        r#"{"name":"steal","cat":"job","ph":"B","ts":1.5,"pid":1,"tid":0,"args":{"victim":1}},"#,
        r#"{"ph":"E","ts":2.0,"pid":1,"tid":0},"#,
        r#"{"name":"promotion","cat":"join","ph":"i","ts":2.001,"pid":1,"tid":0,"s":"t"},"#,
        r#"{"ph":"E","ts":3000.0,"pid":1,"tid":0},"#,
        r#"{"name":"parked","cat":"park","ph":"B","ts":3000.001,"pid":1,"tid":0},"#,
        r#"{"ph":"E","ts":4000.0,"pid":1,"tid":0},"#,
        r#"{"name":"thread_name","ph":"M","ts":0.0,"pid":1,"tid":1,"args":{"name":"worker 1"}},"#,
        r#"{"name":"rescue","cat":"job","ph":"B","ts":0.999,"pid":1,"tid":1,"args":{"victim":0}},"#,
        r#"{"name":"local","cat":"job","ph":"B","ts":1.0,"pid":1,"tid":1},"#,
        r#"{"name":"broadcast","cat":"job","ph":"B","ts":1.001,"pid":1,"tid":1},"#,
        r#"{"ph":"E","ts":4000.0,"pid":1,"tid":1},"#,
        r#"{"ph":"E","ts":4000.0,"pid":1,"tid":1},"#,
        r#"{"ph":"E","ts":4000.0,"pid":1,"tid":1},"#,
        r#"{"name":"thread_name","ph":"M","ts":0.0,"pid":1,"tid":2,"args":{"name":"injector"}},"#,
        r#"{"name":"inject","cat":"injector","ph":"i","ts":0.0,"pid":1,"tid":2,"s":"t"},"#,
        r#"{"name":"inject","cat":"injector","ph":"i","ts":1234.567,"pid":1,"tid":2,"s":"t"}"#,
        r#"],"displayTimeUnit":"ns"}"#,
    );
    assert_eq!(exported(&two_workers(), &[0, 1_234_567]), expected);
}

#[test]
fn an_empty_timeline_has_the_injector_track_only() {
    let expected = concat!(
        r#"{"traceEvents":[{"name":"thread_name","ph":"M","ts":0.0,"pid":1,"tid":0,"#,
        r#""args":{"name":"injector"}}],"displayTimeUnit":"ns"}"#,
    );
    assert_eq!(exported(&[], &[]), expected);
    // Workers that recorded nothing still get their named tracks.
    let value: Value = serde_json::from_str(&exported(&[vec![], vec![]], &[])).unwrap();
    let names: Vec<&Value> = value["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["args"]["name"])
        .collect();
    assert_eq!(
        names,
        [&json!("worker 0"), &json!("worker 1"), &json!("injector")]
    );
}

/// Timestamps up to `u64::MAX` ns (584 years) are written exactly, and stay numbers.
#[test]
fn the_largest_timestamps_are_exact() {
    let workers = [vec![at(u64::MAX - 1, Kind::Park)], vec![]];
    let text = exported(&workers, &[u64::MAX]);
    assert!(
        text.contains(r#""ph":"B","ts":18446744073709551.614,"#),
        "{text}"
    );
    // The open park is closed at the last timestamp, the injection's.
    assert!(text.contains(r#"{"ph":"E","ts":18446744073709551.615,"pid":1,"tid":0}"#));
    assert!(text.contains(
        r#""name":"inject","cat":"injector","ph":"i","ts":18446744073709551.615,"pid":1,"tid":2"#
    ));
    let value: Value = serde_json::from_str(&text).unwrap();
    for event in value["traceEvents"].as_array().unwrap() {
        assert!(event["ts"].as_f64().unwrap().is_finite());
    }
    // Large ids too.
    let many = vec![Vec::new(); 3];
    let value: Value = serde_json::from_str(&exported(&many, &[])).unwrap();
    assert_eq!(value["traceEvents"][3]["tid"], json!(3));
}

/// Every event has exactly the fields its phase calls for.
#[test]
fn every_event_has_its_phases_fields() {
    let value: Value = serde_json::from_str(&exported(&two_workers(), &[7])).unwrap();
    assert_eq!(value.as_object().unwrap().len(), 2);
    assert_eq!(value["displayTimeUnit"], "ns");
    for event in value["traceEvents"].as_array().unwrap() {
        let mut keys: Vec<&str> = event
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort_unstable();
        let expected: &[&str] = match event["ph"].as_str().unwrap() {
            "M" => &["args", "name", "ph", "pid", "tid", "ts"],
            "B" if event.get("args").is_some() => {
                &["args", "cat", "name", "ph", "pid", "tid", "ts"]
            }
            "B" => &["cat", "name", "ph", "pid", "tid", "ts"],
            "E" => &["ph", "pid", "tid", "ts"],
            "i" => &["cat", "name", "ph", "pid", "s", "tid", "ts"],
            other => panic!("phase {other}"),
        };
        assert_eq!(keys, expected, "{event}");
        assert_eq!(event["pid"], 1);
    }
}

/// Fails every write once `budget` bytes went through; counts the calls.
struct Failing {
    budget: usize,
    written: Vec<u8>,
    calls: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.calls += 1;
        let n = buf.len().min(self.budget - self.written.len());
        if n == 0 {
            return Err(io::Error::other("disk full"));
        }
        self.written.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_output_is_reported() {
    let full = exported(&two_workers(), &[0, 1_234_567]);
    for budget in [0, 1, 100, full.len() - 1] {
        let mut out = Failing {
            budget,
            written: Vec::new(),
            calls: 0,
        };
        let err = write(&two_workers(), &[0, 1_234_567], &mut out).unwrap_err();
        assert_eq!(err.to_string(), "disk full", "budget {budget}");
        assert_eq!(out.written, full.as_bytes()[..budget]);
    }
    let mut out = Failing {
        budget: full.len(),
        written: Vec::new(),
        calls: 0,
    };
    write(&two_workers(), &[0, 1_234_567], &mut out).unwrap();
    assert_eq!(out.written, full.as_bytes());
}

/// The output gets a few large writes, not one per token.
#[test]
fn a_large_timeline_is_written_in_large_pieces() {
    let events: Vec<TimelineEvent> = (0..50_000u64)
        .flat_map(|i| {
            let source = JobSource::Steal {
                victim: (i % 7) as usize,
            };
            [
                at(i * 20, Kind::JobStart(source)),
                at(i * 20 + 10, Kind::JobEnd),
            ]
        })
        .collect();
    let injections: Vec<u64> = (0..1000).map(|i| i * 1000).collect();
    let mut out = Failing {
        budget: usize::MAX,
        written: Vec::new(),
        calls: 0,
    };
    write(&[events.clone(), events], &injections, &mut out).unwrap();
    let value: Value = serde_json::from_slice(&out.written).unwrap();
    assert_eq!(
        value["traceEvents"].as_array().unwrap().len(),
        2 * (1 + 100_000) + 1 + 1000
    );
    assert!(
        out.calls <= out.written.len() / 4096 + 2,
        "{} writes of {} bytes",
        out.calls,
        out.written.len()
    );
}
