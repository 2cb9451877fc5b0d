//! The one reader of input files of the C interface, under the rules of the Python package's
//! (`liquidsched.io.files.read_text`): a regular file only (a device such as `/dev/zero` or a
//! FIFO could be read forever), at most 64 MiB unless `LIQUIDSCHED_MAX_INPUT_BYTES` says more,
//! UTF-8 text. Any refusal is a message naming the file, and the interposition library falls
//! back to the MPI library's own collective.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::units::parse_bytes;

/// The most bytes one input file may hold unless the environment says otherwise.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 << 20;

/// The environment variable that raises (or lowers) the cap, with a unit: `200MiB`.
pub const MAX_INPUT_VARIABLE: &str = "LIQUIDSCHED_MAX_INPUT_BYTES";

/// The cap that `value` (the variable's text, if set) gives.
///
/// ```
/// use liquidsched_capi::input::{max_input_bytes_of, DEFAULT_MAX_INPUT_BYTES};
/// assert_eq!(max_input_bytes_of(None), Ok(DEFAULT_MAX_INPUT_BYTES));
/// assert_eq!(max_input_bytes_of(Some("200MiB")), Ok(200 << 20));
/// assert!(max_input_bytes_of(Some("lots")).unwrap_err().starts_with("LIQUIDSCHED_MAX_INPUT_BYTES: "));
/// ```
pub fn max_input_bytes_of(value: Option<&str>) -> Result<u64, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(DEFAULT_MAX_INPUT_BYTES),
        Some(text) => parse_bytes(text).map_err(|e| format!("{MAX_INPUT_VARIABLE}: {e}")),
    }
}

/// The cap this process runs under.
pub fn max_input_bytes() -> Result<u64, String> {
    let value = std::env::var_os(MAX_INPUT_VARIABLE);
    max_input_bytes_of(value.as_ref().map(|v| v.to_str().unwrap_or("(not UTF-8)")))
}

/// The whole UTF-8 text of the regular file at `path` (a leading byte-order mark dropped), at
/// most [`max_input_bytes`] bytes; otherwise a message naming the file and what is wrong.
pub fn read_file(path: &str) -> Result<String, String> {
    read_file_capped(path, max_input_bytes()?)
}

/// [`read_file`] with the cap given.
pub fn read_file_capped(path: &str, cap: u64) -> Result<String, String> {
    let cannot = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{path}: no such file"),
        _ => format!("{path}: cannot be read ({e})"),
    };
    // Looked at before opening: opening a FIFO without a writer would block.
    refuse_special(path, &std::fs::metadata(path).map_err(cannot)?)?;
    let file = File::open(path).map_err(cannot)?;
    let info = file.metadata().map_err(cannot)?;
    refuse_special(path, &info)?;
    if info.len() > cap {
        return Err(too_large(path, cap, Some(info.len())));
    }
    let mut bytes = Vec::with_capacity(info.len() as usize);
    // Read to one byte past the cap only: a file that grows while it is read stays bounded.
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(path, cap, None));
    }
    decode(bytes, path)
}

fn refuse_special(path: &str, info: &Metadata) -> Result<(), String> {
    let kind = info.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "something else"
    };
    Err(format!("{path}: is {what}, not a regular file"))
}

/// `n` with thousands separators: `67,108,864`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` bytes with a binary unit: `64 MiB`, `1.5 KiB`.
fn size_text(n: u64) -> String {
    for (scale, unit) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if n >= scale {
            let number = format!("{:.3}", n as f64 / scale as f64);
            return format!(
                "{} {unit}",
                number.trim_end_matches('0').trim_end_matches('.')
            );
        }
    }
    format!("{n} bytes")
}

/// Exact byte counts, as the Python package says it: a rounded "64 MiB, more than 64 MiB"
/// would not say which is larger.
fn too_large(path: &str, cap: u64, size: Option<u64>) -> String {
    let have = size
        .map(|s| format!("{} bytes, ", grouped(s)))
        .unwrap_or_default();
    let limit = if cap >= 1 << 10 {
        format!("{} bytes ({})", grouped(cap), size_text(cap))
    } else {
        format!("{} bytes", grouped(cap))
    };
    format!(
        "{path}: {have}more than the {limit} liquidsched reads from one input (set {MAX_INPUT_VARIABLE}, \
         e.g. {MAX_INPUT_VARIABLE}=1GiB, to read more)"
    )
}

fn decode(bytes: Vec<u8>, path: &str) -> Result<String, String> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            Ok(text)
        }
        Err(e) => {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Err(format!(
                "{path}: not a UTF-8 text file: byte 0x{:02x} at offset {at} (line {line}) is not UTF-8",
                bytes[at]
            ))
        }
    }
}

/// A JSON value that refuses a key given twice in one object, as the Python package's reader
/// does: the YAML and JSON specifications say keys are unique, and serde_json keeps the last.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(A::Error::custom(format!(
                    "key {key:?} appears twice in one object"
                )));
            }
            let Strict(value) = map.next_value()?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Parse JSON text, refusing a key given twice in one object (the message names the line).
///
/// ```
/// use liquidsched_capi::input::parse_json;
/// assert_eq!(parse_json(r#"{"a": [1, {"b": 2}]}"#).unwrap()["a"][1]["b"], 2);
/// assert!(parse_json("{\"a\": 1,\n \"a\": 2}").unwrap_err().to_string().starts_with("key \"a\" appears twice"));
/// ```
pub fn parse_json(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let Strict(value) = Strict::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn scratch(name: &str, content: &[u8]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("liquidsched-capi-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    #[test]
    fn a_regular_utf8_file_is_read_whole_without_its_byte_order_mark() {
        let path = scratch(
            "plain.txt",
            "\u{feff}liquidsched-fabric 1\nnetwork é\n".as_bytes(),
        );
        let text = read_file_capped(path.to_str().unwrap(), 1 << 20).unwrap();
        assert_eq!(text, "liquidsched-fabric 1\nnetwork é\n");
    }

    #[test]
    fn devices_directories_and_fifos_are_refused_by_what_they_are() {
        let e = read_file_capped("/dev/zero", 1 << 20).unwrap_err();
        assert_eq!(e, "/dev/zero: is a character device, not a regular file");
        let dir = std::env::temp_dir();
        let e = read_file_capped(dir.to_str().unwrap(), 1 << 20).unwrap_err();
        assert!(e.ends_with(": is a directory, not a regular file"), "{e}");
        let fifo = scratch("placeholder", b"").with_file_name("fifo");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.map(|s| s.success()).unwrap_or(false) {
            // Would block forever if the FIFO were opened for reading: it is refused before.
            let e = read_file_capped(fifo.to_str().unwrap(), 1 << 20).unwrap_err();
            assert!(
                e.ends_with(": is a FIFO (named pipe), not a regular file"),
                "{e}"
            );
        }
        let e = read_file_capped("/nonexistent/fabric", 1 << 20).unwrap_err();
        assert_eq!(e, "/nonexistent/fabric: no such file");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_saying_how_to_raise_it() {
        let path = scratch("large.txt", &[b'x'; 2048]);
        let p = path.to_str().unwrap();
        assert_eq!(read_file_capped(p, 2048).unwrap().len(), 2048);
        let e = read_file_capped(p, 1024).unwrap_err();
        assert!(
            e.contains("large.txt: 2,048 bytes, more than the 1,024 bytes (1 KiB) liquidsched"),
            "{e}"
        );
        assert!(e.contains("LIQUIDSCHED_MAX_INPUT_BYTES"), "{e}");
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_at_its_first_bad_byte() {
        let path = scratch("binary.txt", b"liquidsched-fabric 1\nnet\xffwork\n");
        let e = read_file_capped(path.to_str().unwrap(), 1 << 20).unwrap_err();
        assert!(
            e.ends_with("not a UTF-8 text file: byte 0xff at offset 24 (line 2) is not UTF-8"),
            "{e}"
        );
    }
}
