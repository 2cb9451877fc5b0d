//! A CSV traffic file of plain rows (`src,dst,size_bytes` in any order, sizes in digits), read
//! at once. Anything else — quotes, units, a matrix, a row that is wrong — is left to the
//! general reader on the Python side, which reads every form and names the line and column of
//! what is wrong: this reader says only whether it read the file.

use std::collections::HashMap;

/// The transfers of a file as columns: `src[i]` and `dst[i]` index `hosts`, which lists the
/// senders first, each where it is first met, then the receivers that do not send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferRows {
    pub hosts: Vec<String>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub sizes: Vec<u64>,
}

/// The three columns of a row file, as the header names them.
const COLUMNS: [&str; 3] = ["src", "dst", "size_bytes"];

/// The rows of `text` when it is a file of plain rows, else `None`.
///
/// Plain: lines end in `\n` or `\r\n`; no quote, no control character but tab, no line break
/// of another kind (Python's `splitlines` would cut there); the first line that is not blank
/// names the three columns once each; every other line that is not blank has three cells,
/// two non-empty host names and a size of at most 16 digits from 1 to `max_size`. Cells are
/// read as Python's `str.split(",")` and `str.strip()` read them.
///
/// # Examples
///
/// ```
/// use liquidsched_core::traffic::read_plain_rows;
/// let rows = read_plain_rows("dst,src,size_bytes\nb, a ,7\n\na,c,9\n", 1 << 53).unwrap();
/// assert_eq!(rows.hosts, ["a", "c", "b"]);
/// assert_eq!((rows.src, rows.dst, rows.sizes), (vec![0, 1], vec![2, 0], vec![7, 9]));
/// assert!(read_plain_rows("src,dst,size_bytes\na,b,1MB\n", 1 << 53).is_none());
/// ```
pub fn read_plain_rows(text: &str, max_size: u64) -> Option<TransferRows> {
    if !plain_text(text) {
        return None;
    }
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !blank(l));
    let header: Vec<&str> = lines.next()?.split(',').map(python_strip).collect();
    let order = column_order(&header)?;
    let mut names: Vec<(&str, &str)> = Vec::new();
    let mut sizes = Vec::new();
    for line in lines {
        let mut cells = line.split(',');
        let mut row = [""; 3];
        for cell in row.iter_mut() {
            *cell = cells.next()?;
        }
        if cells.next().is_some() {
            return None;
        }
        let (src, dst) = (python_strip(row[order[0]]), python_strip(row[order[1]]));
        if src.is_empty() || dst.is_empty() {
            return None;
        }
        names.push((src, dst));
        sizes.push(plain_size(row[order[2]], max_size)?);
    }
    Some(indexed(&names, sizes))
}

/// Whether `text` has nothing that makes its lines or cells read otherwise than by splitting
/// at `\n` and commas: quotes, control characters (Python cuts lines at some, strips others),
/// a `\r` not before `\n`, and the line breaks `\u{85}`, `\u{2028}`, `\u{2029}`.
fn plain_text(text: &str) -> bool {
    let bytes = text.as_bytes();
    let ascii_ok = bytes.iter().enumerate().all(|(i, &b)| match b {
        b'"' => false,
        b'\r' => bytes.get(i + 1) == Some(&b'\n'),
        b'\n' | b'\t' => true,
        _ => b >= 0x20 && b != 0x7f,
    });
    ascii_ok && (text.is_ascii() || !text.contains(['\u{85}', '\u{2028}', '\u{2029}']))
}

/// A line with nothing but commas and white space (the CSV reader skips it).
fn blank(line: &str) -> bool {
    line.split(',').all(|c| python_strip(c).is_empty())
}

/// A cell as Python's `str.strip()` leaves it (the control characters it also strips are not
/// in a plain text).
fn python_strip(cell: &str) -> &str {
    cell.trim_matches(char::is_whitespace)
}

/// Where the header puts `src`, `dst` and `size_bytes`, when it names each once and nothing else.
fn column_order(header: &[&str]) -> Option<[usize; 3]> {
    if header.len() != 3 {
        return None;
    }
    let mut order = [0; 3];
    for (slot, name) in order.iter_mut().zip(COLUMNS) {
        *slot = header.iter().position(|&h| h == name)?;
    }
    (order[0] != order[1] && order[1] != order[2] && order[0] != order[2]).then_some(order)
}

/// A size cell of plain digits (white space around them allowed) from 1 to `max_size`.
fn plain_size(cell: &str, max_size: u64) -> Option<u64> {
    let digits = python_strip(cell);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let size: u64 = digits.parse().ok()?;
    (1..=max_size).contains(&size).then_some(size)
}

/// The host table (senders first, each where first met, then receivers) and both columns.
fn indexed(names: &[(&str, &str)], sizes: Vec<u64>) -> TransferRows {
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut hosts = Vec::new();
    let mut intern = |name| {
        *index.entry(name).or_insert_with(|| {
            hosts.push(String::from(name));
            (hosts.len() - 1) as u32
        })
    };
    let src = names.iter().map(|&(s, _)| intern(s)).collect();
    let dst = names.iter().map(|&(_, d)| intern(d)).collect();
    TransferRows {
        hosts,
        src,
        dst,
        sizes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = 1 << 53;

    #[test]
    fn columns_in_any_order_and_hosts_senders_first() {
        let rows = read_plain_rows("size_bytes,dst,src\r\n5,x,y\r\n6,y,z\r\n", MAX).unwrap();
        assert_eq!(rows.hosts, ["y", "z", "x"]);
        assert_eq!(rows.src, [0, 1]);
        assert_eq!(rows.dst, [2, 0]);
        assert_eq!(rows.sizes, [5, 6]);
    }

    #[test]
    fn blank_lines_and_white_space_are_skipped_as_the_csv_reader_does() {
        let rows = read_plain_rows(
            "\n , ,\nsrc , dst,size_bytes\n\n\ta\u{a0},b, 12 \n,,\n",
            MAX,
        )
        .unwrap();
        assert_eq!(rows.hosts, ["a", "b"]);
        assert_eq!(rows.sizes, [12]);
    }

    #[test]
    fn an_empty_file_of_rows_has_no_transfers() {
        let rows = read_plain_rows("src,dst,size_bytes\n", MAX).unwrap();
        assert!(rows.hosts.is_empty() && rows.sizes.is_empty());
    }

    #[test]
    fn what_the_general_reader_must_read_or_refuse_is_left_to_it() {
        for text in [
            "",
            "\n\n",
            "src,dst\na,b\n",
            "src,dst,size_bytes,extra\na,b,1,2\n",
            "src,src,size_bytes\na,b,1\n",
            "src,dst,size\na,b,1\n",
            ",h1,h2\nh1,0,5\n",
            "src,dst,size_bytes\na,b\n",
            "src,dst,size_bytes\na,b,1,\n",
            "src,dst,size_bytes\n,b,1\n",
            "src,dst,size_bytes\na,b,0\n",
            "src,dst,size_bytes\na,b,-1\n",
            "src,dst,size_bytes\na,b,1e3\n",
            "src,dst,size_bytes\na,b,4KiB\n",
            "src,dst,size_bytes\na,b,12345678901234567\n",
            "src,dst,size_bytes\n\"a\",b,1\n",
            "src,dst,size_bytes\ra,b,1\n",
            "src,dst,size_bytes\na\u{2028},b,1\n",
            "src,dst,size_bytes\na\u{1f},b,1\n",
            "src,dst,size_bytes\na,b,\u{0663}\n",
        ] {
            assert_eq!(read_plain_rows(text, MAX), None, "{text:?}");
        }
        assert_eq!(read_plain_rows("src,dst,size_bytes\na,b,9\n", 8), None);
        assert!(read_plain_rows("src,dst,size_bytes\na,b,8\n", 8).is_some());
    }
}
