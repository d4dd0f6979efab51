//! The writer's output, read back with serde_json (and compared with what serde_json
//! itself writes, where the two must agree byte for byte).

use super::{micros, string, Object};
use serde_json::{json, Value};

/// `s` as `string` writes it.
fn written(s: &str) -> String {
    let mut out = Vec::new();
    string(&mut out, s).unwrap();
    String::from_utf8(out).expect("the writer's output is UTF-8")
}

/// Strings an escaper gets wrong: quotes, backslashes, every control character, DEL,
/// non-ASCII text, emoji (4-byte UTF-8, a ZWJ sequence), the line separators JavaScript
/// once rejected, a byte-order mark, the last code point, markup.
fn adversarial() -> Vec<String> {
    let mut strings: Vec<String> = [
        "",
        "worker 0",
        "\"",
        "\\",
        "\\\"",
        "\"\\\"",
        "say \"hi\"",
        "C:\\path\\to\\file",
        "trailing backslash \\",
        "new\nline",
        "\r\n\t\u{8}\u{c}",
        "\u{0}nul",
        "\u{7f} del",
        "é è ü ß",
        "日本語のスレッド",
        "🦀 crab",
        "👩‍👩‍👧 family",
        "\u{2028}\u{2029}",
        "\u{feff}bom",
        "\u{10ffff}",
        "</script><b>&amp;</b>",
        "{\"traceEvents\":[]}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    strings.push((0u8..0x20).map(char::from).collect());
    strings.push((0u8..0x80).map(char::from).collect());
    strings.push("\"\\\n🦀".repeat(10_000));
    strings
}

#[test]
fn strings_read_back_as_written() {
    for s in adversarial() {
        let text = written(&s);
        let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(value, Value::String(s.clone()), "{text:?}");
    }
}

#[test]
fn strings_are_what_serde_json_writes() {
    for s in adversarial() {
        assert_eq!(written(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
    }
}

#[test]
fn control_characters_are_escaped_and_nothing_else_is() {
    assert_eq!(written("\u{0}"), r#""\u0000""#);
    assert_eq!(written("\u{b}"), r#""\u000b""#);
    assert_eq!(written("\u{1b}[0m"), r#""\u001b[0m""#);
    assert_eq!(written("\u{1f}"), r#""\u001f""#);
    assert_eq!(written("a\nb\tc\rd\u{8}e\u{c}"), r#""a\nb\tc\rd\be\f""#);
    assert_eq!(written(r#"a"b\c"#), r#""a\"b\\c""#);
    // DEL and non-ASCII text go out as they are, not as \u escapes.
    assert_eq!(written("\u{7f}é🦀"), "\"\u{7f}é🦀\"");
    for s in adversarial() {
        let text = written(&s);
        assert!(
            text.bytes().all(|b| b >= 0x20),
            "raw control byte in {text:?}"
        );
    }
}

/// `ns` as `micros` writes it.
fn micros_text(ns: u64) -> String {
    let mut out = Vec::new();
    micros(&mut out, ns).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn micros_are_exact_decimals() {
    let cases = [
        (0, "0.0"),
        (1, "0.001"),
        (10, "0.01"),
        (100, "0.1"),
        (999, "0.999"),
        (1000, "1.0"),
        (1500, "1.5"),
        (2001, "2.001"),
        (1_000_010, "1000.01"),
        (1_234_567, "1234.567"),
        (u64::MAX - 1, "18446744073709551.614"),
        (u64::MAX, "18446744073709551.615"),
    ];
    for (ns, text) in cases {
        assert_eq!(micros_text(ns), text);
        let value: Value = serde_json::from_str(text).unwrap();
        assert!(value.is_f64(), "{text} is read as an integer");
    }
    // The largest one stays a finite number, the nearest `f64` to it.
    let max: f64 = serde_json::from_str(&micros_text(u64::MAX)).unwrap();
    assert_eq!(max, u64::MAX as f64 / 1000.0);
}

/// Below 2^53 ns the written decimal reads as the same `f64` as `ns as f64 / 1000.0`
/// (both the nearest `f64` to the exact value).
#[test]
fn micros_read_as_ns_over_1000() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || {
        // xorshift64*: any spread of values will do, the same ones every run.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut samples: Vec<u64> = (0..20_000).map(|_| random() >> 11).collect();
    samples.extend((0..20_000).map(|_| random() >> 30));
    samples.extend([
        0,
        1,
        999,
        1000,
        1001,
        (1 << 53) - 1,
        1 << 52,
        3_600_000_000_000,
    ]);
    for ns in samples {
        assert!(ns < 1 << 53);
        let read: f64 = serde_json::from_str(&micros_text(ns)).unwrap();
        assert_eq!(read.to_bits(), (ns as f64 / 1000.0).to_bits(), "{ns} ns");
    }
}

#[test]
fn objects_and_arrays_nest_with_separators_only_between_members() {
    let mut out = Vec::new();
    let mut top = Object::begin(&mut out).unwrap();
    top.object("empty").unwrap().end().unwrap();
    top.array("none").unwrap().end().unwrap();
    let mut list = top.array("list").unwrap();
    for i in 0..3 {
        let mut item = list.object().unwrap();
        item.u64("i", i).unwrap();
        item.str("name", "a \"b\"").unwrap();
        item.micros("ts", i * 1500).unwrap();
        let mut inner = item.object("args").unwrap();
        inner.u64("max", u64::MAX).unwrap();
        inner.end().unwrap();
        item.end().unwrap();
    }
    list.end().unwrap();
    top.str("key \"quoted\"\n", "").unwrap();
    top.end().unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with(r#"{"empty":{},"none":[],"list":[{"i":0,"#),
        "{text}"
    );
    let value: Value = serde_json::from_str(&text).unwrap();
    let item =
        |i: u64, ts: f64| json!({"i": i, "name": "a \"b\"", "ts": ts, "args": {"max": u64::MAX}});
    assert_eq!(
        value,
        json!({
            "empty": {},
            "none": [],
            "list": [item(0, 0.0), item(1, 1.5), item(2, 3.0)],
            "key \"quoted\"\n": "",
        })
    );
}
