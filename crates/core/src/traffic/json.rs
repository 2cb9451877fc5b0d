//! The JSON text of a traffic's transfers and of a schedule's frames of whole transfers, laid
//! out as the Python side's compact documents lay out a list of many items: a line of up to
//! `per_line` items, each line indented one level deeper than the list (a list of up to
//! `per_line` items on one line). At a million transfers this writes in a tenth of a second
//! what Python's string building took two seconds to.

use std::fmt::Write;

use crate::error::{CoreError, CoreResult};

/// A traffic's transfers as the JSON pieces they are written with: sender `src[t]` and
/// receiver `dst[t]` as indices into `hosts` (each host's name encoded as a JSON string,
/// quotes included) and `sizes[t]` bytes. A transfer is named `src->dst`, the repeats of a
/// pair `src->dst#2`, `#3`, … in order.
pub struct TransferText<'a> {
    pub hosts: &'a [String],
    pub src: &'a [u32],
    pub dst: &'a [u32],
    pub sizes: &'a [i64],
}

/// Each transfer's rank among the transfers between the same two hosts, from 1, in order;
/// empty when no pair repeats.
fn occurrences(text: &TransferText) -> Vec<u32> {
    let hosts = text.hosts.len() as u64;
    let pairs = text
        .src
        .iter()
        .zip(text.dst)
        .map(|(&s, &d)| u64::from(s) * hosts + u64::from(d));
    let mut rank = Vec::with_capacity(text.src.len());
    if hosts * hosts <= 1 << 26 {
        let mut seen = vec![0u32; (hosts * hosts) as usize];
        rank.extend(pairs.map(|p| {
            seen[p as usize] += 1;
            seen[p as usize]
        }));
    } else {
        let mut seen = std::collections::HashMap::new();
        rank.extend(pairs.map(|p| {
            let k = seen.entry(p).or_insert(0u32);
            *k += 1;
            *k
        }));
    }
    if rank.iter().all(|&k| k == 1) {
        rank.clear();
    }
    rank
}

/// A transfer's piece of a frame, its name numbered by its rank among the repeats of its pair.
struct Pieces<'a> {
    text: &'a TransferText<'a>,
    occurrence: Vec<u32>,
}

impl TransferText<'_> {
    /// Refused unless the columns are as long as each other and name hosts there are.
    fn check(&self) -> CoreResult<()> {
        let n = self.src.len();
        if self.dst.len() != n || self.sizes.len() != n {
            return Err(CoreError::InvalidInput(format!(
                "transfer columns of different lengths: {n} senders, {} receivers, {} sizes",
                self.dst.len(),
                self.sizes.len()
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

    /// `{"src": "src", "dst": "dst", "size_bytes": size}`.
    fn write_transfer(&self, out: &mut String, t: usize) {
        out.push_str("{\"src\": ");
        out.push_str(&self.hosts[self.src[t] as usize]);
        out.push_str(", \"dst\": ");
        out.push_str(&self.hosts[self.dst[t] as usize]);
        let _ = write!(out, ", \"size_bytes\": {}}}", self.sizes[t]);
    }
}

impl Pieces<'_> {
    /// `{"transfer": "src->dst", "bytes": size}` (the name numbered `#k` for a repeat).
    fn write(&self, out: &mut String, t: usize) {
        let text = self.text;
        out.push_str("{\"transfer\": \"");
        out.push_str(text.bare(text.src[t]));
        out.push_str("->");
        out.push_str(text.bare(text.dst[t]));
        if let Some(&k) = self.occurrence.get(t) {
            if k > 1 {
                let _ = write!(out, "#{k}");
            }
        }
        let _ = write!(out, "\", \"bytes\": {}}}", text.sizes[t]);
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
    let pieces = Pieces {
        text,
        occurrence: occurrences(text),
    };
    let mut out = String::with_capacity(48 * order.len() + 16 * frames);
    // Every frame is a list of more than none: as Python's writer, one line per frame.
    write_lines(&mut out, frames, 1, level, |out, f| {
        let order_of_frame = &order[starts[f] as usize..starts[f + 1] as usize];
        write_list(out, order_of_frame.len(), per_line, level + 1, |out, i| {
            pieces.write(out, order_of_frame[i] as usize)
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

    fn text(hosts: &[String]) -> TransferText<'_> {
        TransferText {
            hosts,
            src: &[0, 1, 0],
            dst: &[1, 0, 1],
            sizes: &[5, 70, 9],
        }
    }

    #[test]
    fn transfers_are_written_as_python_writes_them() {
        let hosts = vec!["\"a\"".to_string(), "\"b\\u00e9\"".to_string()];
        let t = text(&hosts);
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
        let t = text(&hosts);
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
    fn repeats_are_numbered_among_many_hosts_too() {
        // More hosts than a counter per pair is kept for: counted by pair in a map.
        let hosts: Vec<String> = (0..9000).map(|h| format!("\"h{h}\"")).collect();
        let many = TransferText {
            hosts: &hosts,
            src: &[0, 8999, 0, 0],
            dst: &[8999, 0, 8999, 8999],
            sizes: &[1, 2, 3, 4],
        };
        assert_eq!(occurrences(&many), vec![1, 1, 2, 3]);
        let few = TransferText {
            src: &[0, 1],
            dst: &[1, 0],
            sizes: &[1, 2],
            ..many
        };
        assert!(occurrences(&few).is_empty());
    }

    #[test]
    fn bad_columns_are_refused() {
        let hosts = vec!["\"a\"".to_string()];
        assert!(transfers_json(&text(&hosts), 100, 1).is_err());
        let hosts = vec!["\"a\"".to_string(), "\"b\"".to_string()];
        let t = text(&hosts);
        assert!(frames_json(&t, &[3], &[0, 1], 100, 1).is_err());
        assert!(frames_json(&t, &[0, 1], &[0, 1], 100, 1).is_err());
    }
}
