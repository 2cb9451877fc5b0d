//! The selection table of `liquidsched tune`, as the interposition library reads it: for a
//! communicator of the table's size, the mode measured fastest at the nearest measured size.
//!
//! The table is the JSON the Python package writes (`liquidsched.execute.selection`, format
//! `liquidsched-selection/1`). The library runs three ways: the MPI library's own collective,
//! liquid frames and paced all at once; at each measured size it takes the fastest of those that
//! were measured, keeping the library's own unless a schedule beats it by more than the table's
//! margin (the rule of `best_mode` in the Python package); below the smallest measured size it
//! keeps the library's own. The library's own is the measurement
//! of `alltoall` (MPICH's choice for `MPI_Alltoall`) for `MPI_Alltoall` calls, of `alltoallv` for
//! `MPI_Alltoallv` calls: modes that force one of MPICH's algorithms are not what an
//! application's call runs, so they are not candidates here.

use serde_json::Value;

/// The format the table must declare.
pub const FORMAT: &str = "liquidsched-selection/1";
/// The margin unless the table gives one (the Python package's `MARGIN`).
const MARGIN: f64 = 0.01;

/// The collective being called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    Alltoall,
    Alltoallv,
}

impl Collective {
    /// The table's name of the library's own collective for this call.
    fn library_mode(self) -> &'static str {
        match self {
            Collective::Alltoall => "alltoall",
            Collective::Alltoallv => "alltoallv",
        }
    }
}

/// How the interposition library runs an exchange (the values the C side sees).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Mode {
    Library = 0,
    Frames = 1,
    Paced = 2,
}

/// liquidsched's modes the interposition library runs, by their names in a table.
const SCHEDULE_MODES: [(&str, Mode); 2] = [("frames", Mode::Frames), ("paced", Mode::Paced)];

/// One measured size: the median time of each mode.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    size_bytes: u64,
    medians: Vec<(String, f64)>,
}

impl Row {
    fn median(&self, mode: &str) -> Option<f64> {
        self.medians
            .iter()
            .find(|(m, _)| m == mode)
            .map(|&(_, t)| t)
    }

    /// The mode to run for `collective` at this size, by the rule of the module's doc.
    fn best(&self, collective: Collective, margin: f64) -> Mode {
        let Some(own) = self.median(collective.library_mode()) else {
            return Mode::Library;
        };
        let fastest = SCHEDULE_MODES
            .iter()
            .filter_map(|&(name, mode)| self.median(name).map(|t| (t, mode)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match fastest {
            Some((t, mode)) if own > t * (1.0 + margin) => mode,
            _ => Mode::Library,
        }
    }
}

/// A selection table, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub ranks: u32,
    pub topology: String,
    pub fingerprint: Option<String>,
    pub mpi_library: Option<String>,
    pub margin: f64,
    rows: Vec<Row>,
}

/// The first line of a library's version text, trimmed: what tables and libraries are compared by.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

impl Selection {
    /// Read a table's JSON text; `path` names it in messages.
    pub fn parse(text: &str, path: &str) -> Result<Selection, String> {
        let doc: Value = crate::input::parse_json(text)
            .map_err(|e| format!("{path}: not a selection table ({e})"))?;
        if doc.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(format!("{path}: not a selection table (expected \"format\": \"{FORMAT}\"; liquidsched tune writes one)"));
        }
        let about = doc.get("measured_on").filter(|a| a.is_object());
        let ranks = about
            .and_then(|a| a.get("ranks"))
            .and_then(Value::as_u64)
            .and_then(|r| u32::try_from(r).ok())
            .ok_or_else(|| {
                format!("{path}: measured_on must say the ranks it was measured with")
            })?;
        let text_of = |key: &str| {
            about
                .and_then(|a| a.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let margin = match doc.get("margin") {
            None => MARGIN,
            Some(m) => m
                .as_f64()
                .filter(|m| (0.0..1.0).contains(m))
                .ok_or_else(|| format!("{path}: margin must be a fraction in [0, 1)"))?,
        };
        let sizes = doc
            .get("sizes")
            .and_then(Value::as_array)
            .filter(|s| !s.is_empty());
        let sizes = sizes.ok_or_else(|| format!("{path}: sizes must be a non-empty list"))?;
        let mut rows = Vec::with_capacity(sizes.len());
        for (k, row) in sizes.iter().enumerate() {
            rows.push(read_row(row).ok_or_else(|| {
                format!("{path}: sizes[{k}] needs size_bytes (bytes) and modes, each with a median_s in seconds")
            })?);
        }
        rows.sort_by_key(|r| r.size_bytes);
        Ok(Selection {
            ranks,
            topology: text_of("topology").unwrap_or_default(),
            fingerprint: text_of("fingerprint"),
            mpi_library: text_of("mpi_library"),
            margin,
            rows,
        })
    }

    /// Refuse the table where its measurements say nothing: another network (by fingerprint,
    /// when both say one) or another MPI library (by the first line of its version).
    pub fn check(&self, fingerprint: Option<&str>, mpi_library: &str) -> Result<(), String> {
        if let (Some(mine), Some(theirs)) = (self.fingerprint.as_deref(), fingerprint) {
            if mine != theirs {
                return Err(format!(
                    "the selection table was measured on another network ({}, fingerprint {mine}, not {theirs}): \
                     its ranking says nothing about this one",
                    self.topology
                ));
            }
        }
        if let Some(theirs) = self
            .mpi_library
            .as_deref()
            .filter(|l| !first_line(l).is_empty())
        {
            if first_line(theirs) != first_line(mpi_library) {
                return Err(format!(
                    "the selection table was measured with {:?}, not {:?}",
                    first_line(theirs),
                    first_line(mpi_library)
                ));
            }
        }
        Ok(())
    }

    /// The mode for `collective` with messages of `mean_bytes` on average, and the measured
    /// size it comes from: the nearest on a logarithmic scale (the smaller on a tie).
    ///
    /// A size halfway between two measured ones (2 KiB between 1 KiB and 4 KiB) is a tie: the
    /// row that keeps the library's own wins it, else the smaller, since neither measurement
    /// says more than the other about a size measured by none. Below the smallest measured size
    /// the library's own runs: a schedule's fixed costs (an agreement per call, a message per
    /// pair) weigh more the smaller the messages, so a schedule measured faster at 1 KiB can be
    /// twice as slow at 1 B (measured on the backbone of paper 004 with 20 ranks).
    pub fn choose(&self, collective: Collective, mean_bytes: f64) -> (Mode, u64) {
        let smallest = self.rows[0].size_bytes;
        if mean_bytes < smallest as f64 {
            return (Mode::Library, smallest);
        }
        let target = mean_bytes.max(1.0).ln();
        let distance = |r: &Row| ((r.size_bytes.max(1) as f64).ln() - target).abs();
        let nearest = self.rows.iter().map(distance).fold(f64::INFINITY, f64::min);
        self.rows
            .iter()
            .filter(|r| distance(r) <= nearest + 1e-9)
            .map(|r| (r.best(collective, self.margin), r.size_bytes))
            .min_by_key(|&(mode, size)| (mode != Mode::Library, size))
            .expect("a table has rows")
    }

    /// Whether any measured size runs a schedule for `collective`: when none does, every call
    /// goes to the library without a word between ranks.
    pub fn ever_schedules(&self, collective: Collective) -> bool {
        self.rows
            .iter()
            .any(|r| r.best(collective, self.margin) != Mode::Library)
    }
}

fn read_row(row: &Value) -> Option<Row> {
    let size_bytes = row.get("size_bytes")?.as_u64()?;
    let modes = row.get("modes")?.as_object()?;
    let mut medians = Vec::with_capacity(modes.len());
    for (name, stats) in modes {
        let t = stats
            .get("median_s")?
            .as_f64()
            .filter(|t| t.is_finite() && *t >= 0.0)?;
        medians.push((name.clone(), t));
    }
    Some(Row {
        size_bytes,
        medians,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &str) -> String {
        format!(
            r#"{{"format": "{FORMAT}", "measured_on": {{"ranks": 8, "topology": "t", "fingerprint": "abc",
               "mpi_library": "MPICH Version: 4.3.0\nMPICH Release date: x"}}, "margin": 0.01, "sizes": [{rows}]}}"#
        )
    }

    fn row(size: u64, modes: &[(&str, f64)]) -> String {
        let modes: Vec<String> = modes
            .iter()
            .map(|(m, t)| format!(r#""{m}": {{"median_s": {t}}}"#))
            .collect();
        format!(
            r#"{{"size_bytes": {size}, "best": "x", "modes": {{{}}}}}"#,
            modes.join(", ")
        )
    }

    fn two_sizes() -> Selection {
        let rows = [
            row(
                1024,
                &[
                    ("alltoall", 1.0),
                    ("alltoallv", 1.0),
                    ("frames", 3.0),
                    ("paced", 2.0),
                ],
            ),
            row(
                1 << 20,
                &[
                    ("alltoall", 2.0),
                    ("alltoallv", 1.0),
                    ("frames", 1.5),
                    ("paced", 1.2),
                    ("shuffle", 0.1),
                ],
            ),
        ];
        Selection::parse(&table(&rows.join(",")), "t.json").unwrap()
    }

    #[test]
    fn the_nearest_measured_size_decides_on_a_log_scale() {
        let s = two_sizes();
        assert_eq!(s.choose(Collective::Alltoall, 1.0), (Mode::Library, 1024));
        assert_eq!(
            s.choose(Collective::Alltoall, 32768.0),
            (Mode::Library, 1024)
        ); // 2^15: nearer 2^10 than 2^20
        assert_eq!(
            s.choose(Collective::Alltoall, 40000.0),
            (Mode::Paced, 1 << 20)
        );
        assert_eq!(s.choose(Collective::Alltoall, 1e9), (Mode::Paced, 1 << 20));
    }

    #[test]
    fn below_the_smallest_measured_size_the_library_runs_even_where_a_schedule_won() {
        let rows = [
            row(
                1024,
                &[("alltoall", 2.0), ("alltoallv", 2.0), ("paced", 1.0)],
            ),
            row(4096, &[("alltoall", 2.0), ("paced", 1.0)]),
        ];
        let s = Selection::parse(&table(&rows.join(",")), "t").unwrap();
        assert_eq!(s.choose(Collective::Alltoall, 1024.0), (Mode::Paced, 1024));
        for below in [1.0, 512.0, 1023.0] {
            assert_eq!(s.choose(Collective::Alltoall, below), (Mode::Library, 1024));
            assert_eq!(
                s.choose(Collective::Alltoallv, below),
                (Mode::Library, 1024)
            );
        }
    }

    #[test]
    fn a_size_halfway_between_two_measured_ones_keeps_the_library() {
        let rows = [
            row(1024, &[("alltoall", 1.0), ("paced", 2.0)]),
            row(4096, &[("alltoall", 2.0), ("paced", 1.0)]),
            row(16384, &[("alltoall", 2.0), ("paced", 1.0)]),
        ];
        let s = Selection::parse(&table(&rows.join(",")), "t").unwrap();
        assert_eq!(
            s.choose(Collective::Alltoall, 2048.0),
            (Mode::Library, 1024)
        );
        assert_eq!(s.choose(Collective::Alltoall, 2049.0), (Mode::Paced, 4096));
        // Between two rows that both schedule: the smaller.
        assert_eq!(s.choose(Collective::Alltoall, 8192.0), (Mode::Paced, 4096));
    }

    #[test]
    fn each_collective_is_compared_with_its_own_library_call_and_unrunnable_modes_are_not_chosen() {
        let s = two_sizes();
        // alltoallv's own (1.0) beats paced (1.2); shuffle (0.1) is not a mode the library runs.
        assert_eq!(s.choose(Collective::Alltoallv, 1e6).0, Mode::Library);
        assert!(s.ever_schedules(Collective::Alltoall));
        assert!(!s.ever_schedules(Collective::Alltoallv));
    }

    #[test]
    fn a_schedule_within_the_margin_of_the_library_is_not_taken() {
        let r = row(4096, &[("alltoall", 1.0), ("frames", 0.995)]);
        let s = Selection::parse(&table(&r), "t").unwrap();
        assert_eq!(s.choose(Collective::Alltoall, 4096.0).0, Mode::Library);
        let alltoall_mode = |r: &str| {
            Selection::parse(&table(r), "t")
                .unwrap()
                .choose(Collective::Alltoall, 4096.0)
                .0
        };
        let r = row(4096, &[("alltoall", 1.0), ("frames", 0.98)]);
        assert_eq!(alltoall_mode(&r), Mode::Frames);
        // Without a measurement of the call's own collective, nothing says a schedule wins.
        let r = row(4096, &[("alltoallv", 1.0), ("frames", 0.5)]);
        assert_eq!(alltoall_mode(&r), Mode::Library);
    }

    #[test]
    fn another_network_or_library_is_refused_with_a_message() {
        let s = two_sizes();
        assert!(s.check(Some("abc"), "MPICH Version: 4.3.0\nother").is_ok());
        assert!(s.check(None, "MPICH Version: 4.3.0").is_ok());
        let e = s.check(Some("def"), "MPICH Version: 4.3.0").unwrap_err();
        assert!(
            e.contains("another network (t, fingerprint abc, not def)"),
            "{e}"
        );
        let e = s.check(Some("abc"), "Open MPI v5.0.3").unwrap_err();
        assert!(
            e.contains("MPICH Version: 4.3.0") && e.contains("Open MPI v5.0.3"),
            "{e}"
        );
    }

    #[test]
    fn what_is_not_a_table_is_refused_naming_the_file() {
        for (text, said) in [
            ("{", "t.json: not a selection table"),
            (r#"{"format": "x"}"#, "expected \"format\""),
            (&table("")[..], "sizes must be a non-empty list"),
            (
                &table(r#"{"size_bytes": -1, "modes": {}}"#)[..],
                "sizes[0] needs size_bytes",
            ),
            (&table(&row(1, &[("frames", -2.0)]))[..], "sizes[0]"),
            (
                &table(&row(1, &[("frames", 1.0)])).replace("\"ranks\": 8", "\"ranks\": \"8\"")[..],
                "the ranks",
            ),
            // serde_json alone would keep the second: a table is refused as the Python package refuses it.
            (
                &table(&row(1, &[("frames", 1.0)]))
                    .replace("\"ranks\": 8", "\"ranks\": 8, \"ranks\": 4")[..],
                "key \"ranks\" appears twice in one object at line",
            ),
        ] {
            let e = Selection::parse(text, "t.json").unwrap_err();
            assert!(e.starts_with("t.json: ") && e.contains(said), "{text}: {e}");
        }
    }
}
