//! The fabric file: a network resolved to what planning needs, and the host of every rank.
//!
//! `liquidsched pmpi-config` writes it; the interposition library reads it at the first
//! collective it plans. Text, one record per line, `#` starting a comment:
//!
//! ```text
//! liquidsched-fabric 1
//! network two-switch
//! fingerprint 3f1c0e9a2b7d4c55   optional: network_fingerprint() of the Python package
//! latency 5e-05                 optional: seconds from one rank's send to its peer's receive
//! resources 2
//! 1250000000 1          capacity in bytes/s, slots (transfers carried at once)
//! 2500000000 2
//! hosts 2
//! a
//! b
//! ranks 2               the host of each rank of MPI_COMM_WORLD, by host index
//! 0
//! 1
//! routes 2              source host, destination host, ':', the resources crossed
//! 0 1 : 0 1
//! 1 0 : 1 0
//! ```

use std::collections::HashMap;
use std::fmt;

/// What is wrong with a fabric file, and on which line (1-based; 0 when it is the whole file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FabricError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for FabricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

/// A network as planning needs it: resources with capacities and slots, hosts, the host of
/// every world rank and the resources of the route between any two hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct Fabric {
    pub network: String,
    /// The Python package's fingerprint of the network, to match a selection table measured on it.
    pub fingerprint: Option<String>,
    /// The one-way latency of a message between ranks (calibrated or stated), if given.
    pub latency_s: Option<f64>,
    pub capacity_bps: Vec<f64>,
    pub slots: Vec<u32>,
    pub hosts: Vec<String>,
    pub host_of_rank: Vec<u32>,
    pub routes: HashMap<(u32, u32), Vec<u32>>,
}

const MAGIC: &str = "liquidsched-fabric";
/// Room reserved from a count the file states: a count that lies must not make an allocation
/// fail (which aborts the process, unlike a panic); larger tables grow as they are read.
const PREALLOCATED: usize = 1 << 16;

fn err(line: usize, message: impl Into<String>) -> FabricError {
    FabricError {
        line,
        message: message.into(),
    }
}

/// The meaningful lines of `text` (comments and blanks left out), with their numbers.
struct Lines<'a> {
    inner: std::iter::Peekable<Box<dyn Iterator<Item = (usize, &'a str)> + 'a>>,
    last: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let it: Box<dyn Iterator<Item = (usize, &'a str)> + 'a> = Box::new(
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
                .filter(|(_, l)| !l.is_empty()),
        );
        Lines {
            inner: it.peekable(),
            last: 0,
        }
    }

    fn next(&mut self, expected: &str) -> Result<(usize, &'a str), FabricError> {
        match self.inner.next() {
            Some((n, l)) => {
                self.last = n;
                Ok((n, l))
            }
            None => Err(err(
                self.last + 1,
                format!("the file ends where {expected} was expected"),
            )),
        }
    }

    /// A `keyword N` header; N.
    fn header(&mut self, keyword: &str) -> Result<usize, FabricError> {
        let (n, line) = self.next(&format!("'{keyword} N'"))?;
        let mut words = line.split_whitespace();
        if words.next() != Some(keyword) {
            return Err(err(n, format!("expected '{keyword} N', got {line:?}")));
        }
        let count = words
            .next()
            .ok_or_else(|| err(n, format!("'{keyword}' needs a count")))?;
        if words.next().is_some() {
            return Err(err(n, format!("'{keyword}' takes one count, got {line:?}")));
        }
        number(count, n, &format!("the {keyword} count"))
    }
}

fn number<T: std::str::FromStr>(word: &str, line: usize, what: &str) -> Result<T, FabricError> {
    word.parse().map_err(|_| {
        err(
            line,
            format!("{what}: expected a whole number, got {word:?}"),
        )
    })
}

/// Read a fabric file's text.
pub fn parse_fabric(text: &str) -> Result<Fabric, FabricError> {
    let mut lines = Lines::new(text);
    let (n, first) = lines.next(&format!("'{MAGIC} 1'"))?;
    if first.split_whitespace().collect::<Vec<_>>() != [MAGIC, "1"] {
        return Err(err(
            n,
            format!("not a fabric file: expected '{MAGIC} 1' (written by liquidsched pmpi-config)"),
        ));
    }
    let (n, line) = lines.next("'network NAME'")?;
    let network = line
        .strip_prefix("network")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| err(n, format!("expected 'network NAME', got {line:?}")))?
        .to_string();
    let (fingerprint, latency_s) = read_optional_facts(&mut lines)?;
    let (capacity_bps, slots) = read_resources(&mut lines)?;
    let hosts = read_hosts(&mut lines)?;
    let host_of_rank = read_ranks(&mut lines, hosts.len())?;
    let routes = read_routes(&mut lines, hosts.len(), capacity_bps.len())?;
    if let Some((n, line)) = lines.inner.next() {
        return Err(err(
            n,
            format!("unexpected line after the routes: {line:?}"),
        ));
    }
    Ok(Fabric {
        network,
        fingerprint,
        latency_s,
        capacity_bps,
        slots,
        hosts,
        host_of_rank,
        routes,
    })
}

/// The optional `fingerprint HEX` and `latency SECONDS` lines after the network's name.
fn read_optional_facts(lines: &mut Lines) -> Result<(Option<String>, Option<f64>), FabricError> {
    let (mut fingerprint, mut latency) = (None, None);
    while let Some(&(n, line)) = lines.inner.peek() {
        let mut words = line.split_whitespace();
        let (key, value, extra) = (words.next(), words.next(), words.next());
        match (key, value, extra) {
            (Some("fingerprint"), Some(v), None) => fingerprint = Some(v.to_string()),
            (Some("latency"), Some(v), None) => {
                let s: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        err(
                            n,
                            format!("latency: expected a number of seconds, at least 0, got {v:?}"),
                        )
                    })?;
                latency = Some(s);
            }
            (Some("fingerprint" | "latency"), _, _) => {
                return Err(err(
                    n,
                    format!("expected '{} VALUE', got {line:?}", key.unwrap_or("")),
                ))
            }
            _ => break,
        }
        lines.inner.next();
    }
    Ok((fingerprint, latency))
}

fn read_resources(lines: &mut Lines) -> Result<(Vec<f64>, Vec<u32>), FabricError> {
    let count = lines.header("resources")?;
    let (mut capacity, mut slots) = (
        Vec::with_capacity(count.min(PREALLOCATED)),
        Vec::with_capacity(count.min(PREALLOCATED)),
    );
    for _ in 0..count {
        let (n, line) = lines.next("a resource 'CAPACITY SLOTS'")?;
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() != 2 {
            return Err(err(
                n,
                format!("a resource is 'CAPACITY_BPS SLOTS', got {line:?}"),
            ));
        }
        let c: f64 = words[0]
            .parse()
            .ok()
            .filter(|c: &f64| c.is_finite() && *c > 0.0)
            .ok_or_else(|| {
                err(
                    n,
                    format!(
                        "capacity: expected a positive number of bytes/s, got {:?}",
                        words[0]
                    ),
                )
            })?;
        let k: u32 = number(words[1], n, "slots")?;
        if k == 0 {
            return Err(err(n, "slots: expected at least 1"));
        }
        capacity.push(c);
        slots.push(k);
    }
    Ok((capacity, slots))
}

fn read_hosts(lines: &mut Lines) -> Result<Vec<String>, FabricError> {
    let count = lines.header("hosts")?;
    let mut hosts = Vec::with_capacity(count.min(PREALLOCATED));
    for _ in 0..count {
        let (n, line) = lines.next("a host name")?;
        if line.split_whitespace().count() != 1 {
            return Err(err(
                n,
                format!("a host is one name without spaces, got {line:?}"),
            ));
        }
        hosts.push(line.to_string());
    }
    Ok(hosts)
}

fn read_ranks(lines: &mut Lines, hosts: usize) -> Result<Vec<u32>, FabricError> {
    let count = lines.header("ranks")?;
    let mut ranks = Vec::with_capacity(count.min(PREALLOCATED));
    for r in 0..count {
        let (n, line) = lines.next("the host index of a rank")?;
        let h: u32 = number(line, n, &format!("rank {r}'s host"))?;
        if h as usize >= hosts {
            return Err(err(
                n,
                format!("rank {r}'s host: index {h} but there are {hosts} hosts"),
            ));
        }
        ranks.push(h);
    }
    Ok(ranks)
}

fn read_routes(
    lines: &mut Lines,
    hosts: usize,
    resources: usize,
) -> Result<HashMap<(u32, u32), Vec<u32>>, FabricError> {
    let count = lines.header("routes")?;
    let mut routes = HashMap::with_capacity(count.min(PREALLOCATED));
    for _ in 0..count {
        let (n, line) = lines.next("a route 'SRC DST : RESOURCES'")?;
        let (ends, listed) = line
            .split_once(':')
            .ok_or_else(|| err(n, format!("a route is 'SRC DST : R1 R2 ...', got {line:?}")))?;
        let ends: Vec<&str> = ends.split_whitespace().collect();
        if ends.len() != 2 {
            return Err(err(
                n,
                format!("a route names two hosts before ':', got {line:?}"),
            ));
        }
        let (a, b): (u32, u32) = (
            number(ends[0], n, "route source")?,
            number(ends[1], n, "route destination")?,
        );
        if a as usize >= hosts || b as usize >= hosts {
            return Err(err(n, format!("route {a} → {b}: there are {hosts} hosts")));
        }
        let mut path = Vec::new();
        for w in listed.split_whitespace() {
            let r: u32 = number(w, n, "route resource")?;
            if r as usize >= resources {
                return Err(err(
                    n,
                    format!("route {a} → {b}: resource {r} but there are {resources}"),
                ));
            }
            if path.contains(&r) {
                return Err(err(n, format!("route {a} → {b}: resource {r} twice")));
            }
            path.push(r);
        }
        if path.is_empty() && a != b {
            return Err(err(n, format!("route {a} → {b}: no resource")));
        }
        if routes.insert((a, b), path).is_some() {
            return Err(err(n, format!("route {a} → {b} given twice")));
        }
    }
    Ok(routes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str =
        "liquidsched-fabric 1\nnetwork t # two hosts\nresources 2\n100 1\n200 2\nhosts 2\na\nb\n\
                        ranks 3\n0\n1\n1\nroutes 2\n0 1 : 0 1\n1 0 : 1\n";

    #[test]
    fn a_fabric_reads_back_what_was_written() {
        let f = parse_fabric(GOOD).unwrap();
        assert_eq!(f.network, "t");
        assert_eq!(f.capacity_bps, vec![100.0, 200.0]);
        assert_eq!(f.slots, vec![1, 2]);
        assert_eq!(f.host_of_rank, vec![0, 1, 1]);
        assert_eq!(f.routes[&(0, 1)], vec![0, 1]);
        assert_eq!(f.routes[&(1, 0)], vec![1]);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = GOOD.replace("200 2", "200 0");
        assert_eq!(parse_fabric(&bad).unwrap_err().line, 5);
        let bad = GOOD.replace("0 1 : 0 1", "0 1 : 0 7");
        let e = parse_fabric(&bad).unwrap_err();
        assert_eq!((e.line, e.message.contains("resource 7")), (14, true));
        let e = parse_fabric(&GOOD[..GOOD.len() - 8]).unwrap_err();
        assert!(e.message.contains("ends"), "{e}");
        assert_eq!(parse_fabric("hello").unwrap_err().line, 1);
    }

    #[test]
    fn the_fingerprint_and_latency_lines_are_optional() {
        let f = parse_fabric(GOOD).unwrap();
        assert_eq!((f.fingerprint, f.latency_s), (None, None));
        let with = GOOD.replace("# two hosts\n", "\nfingerprint ab12\nlatency 5e-05\n");
        let f = parse_fabric(&with).unwrap();
        assert_eq!(
            (f.fingerprint.as_deref(), f.latency_s),
            (Some("ab12"), Some(5e-5))
        );
        let e = parse_fabric(&GOOD.replace("# two hosts\n", "\nlatency soon\n")).unwrap_err();
        assert_eq!((e.line, e.message.contains("latency")), (3, true));
    }
}
