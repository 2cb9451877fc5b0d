//! The JSON text of a traffic's transfers and of a schedule's frames of whole transfers, laid
//! out as the Python side's compact documents lay out a list of many items: a line of up to
//! `per_line` items, each line indented one level deeper than the list (a list of up to
//! `per_line` items on one line). At a million transfers this writes in a tenth of a second
//! what Python's string building took two seconds to.

use std::fmt::Write;

use crate::error::{CoreError, CoreResult};

/// A traffic's transfers as the JSON pieces they are written with: sender `src[t]` and
/// receiver `dst[t]` as indices into `hosts` (each host's name encoded as a JSON string,
/// quotes included), `sizes[t]` bytes, and `occurrence[t]` the rank of transfer `t` among the
/// transfers between the same two hosts, from 1 (empty: all 1), which numbers its name.
pub struct TransferText<'a> {
    pub hosts: &'a [String],
    pub src: &'a [u32],
    pub dst: &'a [u32],
    pub sizes: &'a [i64],
    pub occurrence: &'a [u32],
}

impl TransferText<'_> {
    /// Refused unless the columns are as long as each other and name hosts there are.
    fn check(&self) -> CoreResult<()> {
        let n = self.src.len();
        let lengths = [self.dst.len(), self.sizes.len()];
        if lengths.iter().any(|&l| l != n)
            || !(self.occurrence.is_empty() || self.occurrence.len() == n)
        {
            return Err(CoreError::InvalidInput(format!(
                "transfer columns of different lengths: {n} senders, {} receivers, {} sizes, {} occurrences",
                self.dst.len(),
                self.sizes.len(),
                self.occurrence.len()
            )));
        }
        let hosts = self.hosts.len();
        if let Some(&h) = self
            .src
            .iter()
            .chain(self.dst)
            .find(|&&h| h as usize >= hosts)
        {
            return Err(CoreError::InvalidInput(format!(
                "host {h} out of range: there are {hosts} hosts"
            )));
        }
        Ok(())
    }

    /// The inside of a host's encoded name, without its quotes.
    fn bare(&self, h: u32) -> &str {
        let name = &self.hosts[h as usize];
        &name[1..name.len() - 1]
    }

    /// `{"transfer": "src->dst", "bytes": size}` (the name numbered `#k` for a repeat).
    fn write_piece(&self, out: &mut String, t: usize) {
        out.push_str("{\"transfer\": \"");
        out.push_str(self.bare(self.src[t]));
        out.push_str("->");
        out.push_str(self.bare(self.dst[t]));
        if let Some(&k) = self.occurrence.get(t) {
            if k > 1 {
                let _ = write!(out, "#{k}");
            }
        }
        let _ = write!(out, "\", \"bytes\": {}}}", self.sizes[t]);
    }

    /// `{"src": "src", "dst": "dst", "size_bytes": size}`.
    fn write_transfer(&self, out: &mut String, t: usize) {
        out.push_str("{\"src\": ");
        out.push_str(&self.hosts[self.src[t] as usize]);
        out.push_str(", \"dst\": ");
        out.push_str(&self.hosts[self.dst[t] as usize]);
        let _ = write!(out, ", \"size_bytes\": {}}}", self.sizes[t]);
    }
}

/// The list of every transfer (`{"src": …, "dst": …, "size_bytes": …}`) as a list `level`
/// levels deep is written.
pub fn transfers_json(text: &TransferText, per_line: usize, level: usize) -> CoreResult<String> {
    text.check()?;
    let mut out = String::with_capacity(64 * text.src.len());
    write_list(&mut out, text.src.len(), per_line, level, |out, i| {
        text.write_transfer(out, i)
    });
    Ok(out)
}

/// The list of frames, `level` levels deep, frame `f` the pieces of transfers
/// `order[starts[f]..starts[f + 1]]` (`{"transfer": name, "bytes": size}`), each frame a list
/// one level deeper.
pub fn frames_json(
    text: &TransferText,
    order: &[u32],
    starts: &[u64],
    per_line: usize,
    level: usize,
) -> CoreResult<String> {
    text.check()?;
    let n = text.src.len();
    if let Some(&t) = order.iter().find(|&&t| t as usize >= n) {
        return Err(CoreError::InvalidInput(format!(
            "transfer {t} out of range: there are {n} transfers"
        )));
    }
    let bad_starts = starts.first().is_some_and(|&s| s != 0)
        || starts.windows(2).any(|w| w[0] > w[1])
        || starts.last().is_some_and(|&s| s as usize != order.len());
    if bad_starts {
        return Err(CoreError::InvalidInput(format!(
            "frame starts: expected to rise from 0 to the {} transfers of the order",
            order.len()
        )));
    }
    let frames = starts.len().saturating_sub(1);
    let mut out = String::with_capacity(48 * order.len() + 16 * frames);
    // Every frame is a list of more than none: as Python's writer, one line per frame.
    write_lines(&mut out, frames, 1, level, |out, f| {
        let pieces = &order[starts[f] as usize..starts[f + 1] as usize];
        write_list(out, pieces.len(), per_line, level + 1, |out, i| {
            text.write_piece(out, pieces[i] as usize)
        });
    });
    Ok(out)
}

/// A list of `len` items written by `item`, `level` levels deep: `[]` when empty, on one line
/// up to `per_line` items, else `per_line` items a line.
fn write_list(
    out: &mut String,
    len: usize,
    per_line: usize,
    level: usize,
    mut item: impl FnMut(&mut String, usize),
) {
    if len <= per_line.max(1) {
        out.push('[');
        for i in 0..len {
            if i > 0 {
                out.push_str(", ");
            }
            item(out, i);
        }
        out.push(']');
        return;
    }
    write_lines(out, len, per_line, level, item);
}

/// A list of `len` items written by `item` (at least one), `per_line` a line, each line
/// indented two spaces a level below `level`, the closing bracket at `level`.
fn write_lines(
    out: &mut String,
    len: usize,
    per_line: usize,
    level: usize,
    mut item: impl FnMut(&mut String, usize),
) {
    if len == 0 {
        out.push_str("[]");
        return;
    }
    let per_line = per_line.max(1);
    out.push_str("[\n");
    for first in (0..len).step_by(per_line) {
        if first > 0 {
            out.push_str(",\n");
        }
        indent(out, level + 1);
        for i in first..(first + per_line).min(len) {
            if i > first {
                out.push_str(", ");
            }
            item(out, i);
        }
    }
    out.push('\n');
    indent(out, level);
    out.push(']');
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text<'a>(hosts: &'a [String], occurrence: &'a [u32]) -> TransferText<'a> {
        TransferText {
            hosts,
            src: &[0, 1, 0],
            dst: &[1, 0, 1],
            sizes: &[5, 70, 9],
            occurrence,
        }
    }

    #[test]
    fn transfers_are_written_as_python_writes_them() {
        let hosts = vec!["\"a\"".to_string(), "\"b\\u00e9\"".to_string()];
        let t = text(&hosts, &[1, 1, 2]);
        assert_eq!(
            transfers_json(&t, 100, 2).unwrap(),
            "[{\"src\": \"a\", \"dst\": \"b\\u00e9\", \"size_bytes\": 5}, \
             {\"src\": \"b\\u00e9\", \"dst\": \"a\", \"size_bytes\": 70}, \
             {\"src\": \"a\", \"dst\": \"b\\u00e9\", \"size_bytes\": 9}]"
        );
        assert_eq!(
            transfers_json(&t, 2, 1).unwrap(),
            "[\n    {\"src\": \"a\", \"dst\": \"b\\u00e9\", \"size_bytes\": 5}, \
             {\"src\": \"b\\u00e9\", \"dst\": \"a\", \"size_bytes\": 70},\n    \
             {\"src\": \"a\", \"dst\": \"b\\u00e9\", \"size_bytes\": 9}\n  ]"
        );
    }

    #[test]
    fn frames_name_repeats_and_break_long_frames() {
        let hosts = vec!["\"a\"".to_string(), "\"b\"".to_string()];
        let t = text(&hosts, &[1, 1, 2]);
        let json = frames_json(&t, &[2, 0, 1], &[0, 2, 3], 1, 1).unwrap();
        assert_eq!(
            json,
            "[\n    [\n      {\"transfer\": \"a->b#2\", \"bytes\": 9},\n      \
             {\"transfer\": \"a->b\", \"bytes\": 5}\n    ],\n    \
             [{\"transfer\": \"b->a\", \"bytes\": 70}]\n  ]"
        );
        assert_eq!(frames_json(&t, &[], &[0], 100, 1).unwrap(), "[]");
    }

    #[test]
    fn bad_columns_are_refused() {
        let hosts = vec!["\"a\"".to_string()];
        assert!(transfers_json(&text(&hosts, &[]), 100, 1).is_err());
        let hosts = vec!["\"a\"".to_string(), "\"b\"".to_string()];
        assert!(transfers_json(&text(&hosts, &[1]), 100, 1).is_err());
        let t = text(&hosts, &[]);
        assert!(frames_json(&t, &[3], &[0, 1], 100, 1).is_err());
        assert!(frames_json(&t, &[0, 1], &[0, 1], 100, 1).is_err());
    }
}
