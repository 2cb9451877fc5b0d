//! Sizes and durations as people write them in environment variables: `4KiB`, `1.5MB`, `500ms`.
//!
//! The units are those of the Python package's `liquidsched.units` (`parse_size`,
//! `parse_duration`), so that one value means the same on both sides: `4KiB` is 4096 bytes,
//! `4KB` 4000, a bare number is bytes or seconds.

/// Units of size, in bytes.
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];
/// Units of time, in seconds.
const TIME_UNITS: &[(&str, f64)] = &[
    ("s", 1.0),
    ("ms", 1e-3),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ns", 1e-9),
];
/// The largest size accepted, as in the Python package: 2**53 bytes, exact in a double.
const MAX_SIZE_BYTES: f64 = 9007199254740992.0;

/// The number and the unit of `text` (`"1.5 MB"` → 1.5, `"MB"`), read as the Python package
/// reads them: digits with an optional point and exponent, spaces, then letters.
fn number_and_unit(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut end = digits(0);
    if end < b.len() && b[end] == b'.' {
        end = digits(end + 1);
    }
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let sign =
            end + 1 + usize::from(end + 1 < b.len() && (b[end + 1] == b'+' || b[end + 1] == b'-'));
        let after = digits(sign);
        if after > sign {
            end = after;
        }
    }
    let value: f64 = text[..end].parse().ok()?;
    let unit = text[end..].trim_start();
    unit.chars()
        .all(|c| c.is_alphabetic() || c == '/')
        .then_some((value, unit))
}

fn scale(unit: &str, units: &[(&str, f64)], default: f64) -> Option<f64> {
    if unit.is_empty() {
        return Some(default);
    }
    units.iter().find(|(u, _)| *u == unit).map(|&(_, s)| s)
}

/// A size in bytes: a whole number, or a number with a unit that makes a whole number of bytes.
///
/// ```
/// use liquidsched_capi::units::parse_bytes;
/// assert_eq!(parse_bytes("4KiB"), Ok(4096));
/// assert_eq!(parse_bytes("1.5MB"), Ok(1_500_000));
/// assert!(parse_bytes("4 kilobytes").unwrap_err().contains("KiB"));
/// ```
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let refuse = || format!("expected a size in bytes such as 4096, 64KiB or 1MB, got {text:?}");
    let (value, unit) = number_and_unit(text).ok_or_else(refuse)?;
    let bytes = value * scale(unit, SIZE_UNITS, 1.0).ok_or_else(refuse)?;
    if !bytes.is_finite() || bytes < 0.0 || bytes.fract() != 0.0 {
        return Err(format!("expected a whole number of bytes, got {text:?}"));
    }
    if bytes > MAX_SIZE_BYTES {
        return Err(format!(
            "{text:?} is more bytes than liquidsched accepts (2^53)"
        ));
    }
    Ok(bytes as u64)
}

/// A duration in seconds: a number, or a number with a unit (`s`, `ms`, `us`, `ns`); positive.
///
/// ```
/// use liquidsched_capi::units::parse_seconds;
/// assert_eq!(parse_seconds("500ms"), Ok(0.5));
/// assert_eq!(parse_seconds("2"), Ok(2.0));
/// ```
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let refuse = || format!("expected a duration such as 2, 2s or 500ms, got {text:?}");
    let (value, unit) = number_and_unit(text).ok_or_else(refuse)?;
    let seconds = value * scale(unit, TIME_UNITS, 1.0).ok_or_else(refuse)?;
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(format!("expected a positive duration, got {text:?}"));
    }
    Ok(seconds)
}

/// A share of a whole: a plain number without unit, from 0 to `most`.
///
/// ```
/// use liquidsched_capi::units::parse_share;
/// assert_eq!(parse_share("0.02", 0.5), Ok(0.02));
/// assert!(parse_share("0.7", 0.5).unwrap_err().contains("from 0 to 0.5"));
/// assert!(parse_share("2%", 0.5).is_err());
/// ```
pub fn parse_share(text: &str, most: f64) -> Result<f64, String> {
    let refuse = || format!("expected a share of the links from 0 to {most}, got {text:?}");
    match number_and_unit(text) {
        Some((value, "")) if (0.0..=most).contains(&value) => Ok(value),
        _ => Err(refuse()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_plain_numbers_within_their_bounds() {
        assert_eq!(parse_share("0", 0.5), Ok(0.0));
        assert_eq!(parse_share(" 0.5 ", 0.5), Ok(0.5));
        assert_eq!(parse_share("2e-2", 0.5), Ok(0.02));
        for bad in [
            "", "0.6", "-0.1", "0x0.1", "0,02", "3%", "nan", "1e400", "0.02s",
        ] {
            assert!(parse_share(bad, 0.5).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_take_the_units_of_the_python_package() {
        for (text, bytes) in [
            ("4096", 4096),
            ("4KiB", 4096),
            ("4 KiB", 4096),
            ("4KB", 4000),
            ("4kB", 4000),
            ("1MiB", 1 << 20),
            ("1.5MB", 1_500_000),
            ("1e6", 1_000_000),
            ("2e+3B", 2000),
            ("0", 0),
            (" 16MiB ", 16 << 20),
        ] {
            assert_eq!(parse_bytes(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn unreadable_sizes_are_refused_with_what_was_given() {
        for text in [
            "",
            "KiB",
            "4 kilobytes",
            "4k",
            "1.5",
            "-4KiB",
            "1e99",
            "4KiBs",
            "nan",
            "4,096",
        ] {
            let e = parse_bytes(text).unwrap_err();
            assert!(e.contains(&format!("{text:?}")), "{text}: {e}");
        }
    }

    #[test]
    fn durations_take_units_and_must_be_positive() {
        assert_eq!(parse_seconds("2"), Ok(2.0));
        assert_eq!(parse_seconds("250ms"), Ok(0.25));
        assert!((parse_seconds("50us").unwrap() - 50e-6).abs() < 1e-18);
        for text in ["0", "-1s", "2 minutes", "fast"] {
            assert!(parse_seconds(text).is_err(), "{text}");
        }
    }
}
