//! A JSON writer for the fixed schema of the Chrome Trace export (`chrome.rs`): objects,
//! arrays, strings, unsigned integers and timestamps, written in order straight to an
//! `io::Write` (which the caller buffers). It holds no floats: a timestamp is written in
//! microseconds from its integer nanoseconds, as an exact decimal, so no value can come
//! out as NaN or infinity (which JSON has no syntax for), and none loses precision.

use std::io::{self, Write};

/// Writes `s` as a JSON string (RFC 8259, section 7): `"` and `\` escaped, the control
/// characters below U+0020 as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, everything else
/// (DEL, non-ASCII UTF-8) as it is.
pub(crate) fn string(out: &mut impl Write, s: &str) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.write_all(b"\"")?;
    let bytes = s.as_bytes();
    // Runs of bytes that need no escape are written in one piece. A byte of a multi-byte
    // UTF-8 sequence is 0x80 or above, so it never matches an ASCII byte below.
    let mut clean_from = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let unicode_escape;
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => {
                unicode_escape = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ];
                &unicode_escape
            }
            _ => continue,
        };
        out.write_all(&bytes[clean_from..at])?;
        out.write_all(escape)?;
        clean_from = at + 1;
    }
    out.write_all(&bytes[clean_from..])?;
    out.write_all(b"\"")
}

/// Writes `ns` nanoseconds as microseconds, exactly: the integer part, a point, and the
/// nanoseconds' three digits less their trailing zeros, at least one (`0.0`, `1.5`,
/// `2.001`). A JSON number that every reader takes as a float, the Trace Event Format's
/// `ts`. Below 2^53 ns (104 days), serde_json and JavaScript read it as the same `f64`
/// as `ns as f64 / 1000.0`.
pub(crate) fn micros(out: &mut impl Write, ns: u64) -> io::Result<()> {
    let (whole, mut fraction) = (ns / 1000, ns % 1000);
    let mut digits = 3;
    while digits > 1 && fraction % 10 == 0 {
        fraction /= 10;
        digits -= 1;
    }
    write!(out, "{whole}.{fraction:0digits$}")
}

/// A JSON object being written: `{` when it begins, the fields in the order they are
/// given, `}` at [`end`](Object::end). Keys are written as strings, escaped.
#[must_use = "an object is only closed by `end`"]
pub(crate) struct Object<'w, W: Write> {
    /// Where the object is written.
    out: &'w mut W,
    /// No field written yet: the next one needs no `,` before it.
    empty: bool,
}

impl<'w, W: Write> Object<'w, W> {
    /// Begins an object on `out`.
    pub(crate) fn begin(out: &'w mut W) -> io::Result<Self> {
        out.write_all(b"{")?;
        Ok(Object { out, empty: true })
    }

    /// Writes the separator and `"key":`, and returns the writer for the value.
    fn key(&mut self, key: &str) -> io::Result<&mut W> {
        if !std::mem::take(&mut self.empty) {
            self.out.write_all(b",")?;
        }
        string(self.out, key)?;
        self.out.write_all(b":")?;
        Ok(self.out)
    }

    /// A field with a string value.
    pub(crate) fn str(&mut self, key: &str, value: &str) -> io::Result<()> {
        let out = self.key(key)?;
        string(out, value)
    }

    /// A field with an unsigned integer value.
    pub(crate) fn u64(&mut self, key: &str, value: u64) -> io::Result<()> {
        let out = self.key(key)?;
        write!(out, "{value}")
    }

    /// A field with a timestamp: `ns` nanoseconds, written in microseconds ([`micros`]).
    pub(crate) fn micros(&mut self, key: &str, ns: u64) -> io::Result<()> {
        let out = self.key(key)?;
        micros(out, ns)
    }

    /// A field whose value is an object; it must be ended before the next field.
    pub(crate) fn object(&mut self, key: &str) -> io::Result<Object<'_, W>> {
        let out = self.key(key)?;
        Object::begin(out)
    }

    /// A field whose value is an array; it must be ended before the next field.
    pub(crate) fn array(&mut self, key: &str) -> io::Result<Array<'_, W>> {
        let out = self.key(key)?;
        Array::begin(out)
    }

    /// Closes the object.
    pub(crate) fn end(self) -> io::Result<()> {
        self.out.write_all(b"}")
    }
}

/// A JSON array of objects being written: `[` when it begins, `]` at
/// [`end`](Array::end).
#[must_use = "an array is only closed by `end`"]
pub(crate) struct Array<'w, W: Write> {
    /// Where the array is written.
    out: &'w mut W,
    /// No element written yet: the next one needs no `,` before it.
    empty: bool,
}

impl<'w, W: Write> Array<'w, W> {
    /// Begins an array on `out`.
    fn begin(out: &'w mut W) -> io::Result<Self> {
        out.write_all(b"[")?;
        Ok(Array { out, empty: true })
    }

    /// The next element, an object; it must be ended before the next element.
    pub(crate) fn object(&mut self) -> io::Result<Object<'_, W>> {
        if !std::mem::take(&mut self.empty) {
            self.out.write_all(b",")?;
        }
        Object::begin(self.out)
    }

    /// Closes the array.
    pub(crate) fn end(self) -> io::Result<()> {
        self.out.write_all(b"]")
    }
}

#[cfg(test)]
mod tests;
