//! An exchange between the ranks of a communicator, planned on a fabric.

use liquidsched_core::exchange::{plan_exchange, PlannedExchange, Planner};

use crate::fabric::Fabric;

/// A planned exchange: frames of pieces between ranks of the communicator.
#[derive(Debug, Clone, PartialEq)]
pub struct RankPlan {
    /// Pieces `(source rank, destination rank, bytes)` frame by frame; every message between
    /// two ranks on different hosts is cut into pieces that add up to it.
    pub frames: Vec<Vec<(u32, u32, u64)>>,
    /// Messages between two ranks of one host: they do not cross the network, so they are not
    /// scheduled (sent with the first frame).
    pub local: Vec<(u32, u32, u64)>,
    pub planner: Planner,
    pub lower_bound_frames: u32,
    pub proven: bool,
    /// Λ, the busiest resource's time: no schedule of these messages is shorter.
    pub bound_s: f64,
    /// The schedule's time in the frames model (each frame as long as its longest piece).
    pub model_s: f64,
}

/// Plan the exchange of `bytes[i * n + j]` bytes from rank `i` to rank `j` of a communicator
/// whose rank `i` is world rank `world_rank[i]`, within `time_limit_s` of search.
pub fn plan_ranks(
    fabric: &Fabric,
    world_rank: &[i32],
    bytes: &[u64],
    time_limit_s: f64,
) -> Result<RankPlan, String> {
    let n = world_rank.len();
    if bytes.len() != n * n {
        return Err(format!(
            "{} byte counts for {n} ranks (expected {})",
            bytes.len(),
            n * n
        ));
    }
    let host = hosts_of_ranks(fabric, world_rank)?;
    let (mut pairs, mut local) = (Vec::new(), Vec::new());
    for i in 0..n {
        for j in 0..n {
            let b = bytes[i * n + j];
            if b == 0 || i == j {
                continue;
            }
            if host[i] == host[j] {
                local.push((i as u32, j as u32, b));
            } else {
                pairs.push((i as u32, j as u32, b));
            }
        }
    }
    let mut paths = Vec::with_capacity(pairs.len());
    let mut times = Vec::with_capacity(pairs.len());
    let mut load = vec![0.0f64; fabric.capacity_bps.len()];
    for &(i, j, b) in &pairs {
        let (path, slot_rate) = route_between(fabric, host[i as usize], host[j as usize])?;
        for &r in path {
            load[r as usize] += b as f64 / fabric.capacity_bps[r as usize];
        }
        paths.push(path.to_vec());
        times.push(b as f64 / slot_rate);
    }
    let sizes: Vec<u64> = pairs.iter().map(|p| p.2).collect();
    let planned: PlannedExchange = plan_exchange(
        &paths,
        fabric.capacity_bps.len(),
        &fabric.slots,
        &sizes,
        &times,
        time_limit_s,
    )
    .map_err(|e| e.to_string())?;
    let model_s = planned
        .frames
        .iter()
        .map(|f| {
            f.iter()
                .map(|&(t, b)| times[t as usize] * b as f64 / sizes[t as usize] as f64)
                .fold(0.0, f64::max)
        })
        .sum();
    let frames = planned
        .frames
        .iter()
        .map(|f| {
            f.iter()
                .map(|&(t, b)| (pairs[t as usize].0, pairs[t as usize].1, b))
                .collect()
        })
        .collect();
    Ok(RankPlan {
        frames,
        local,
        planner: planned.planner,
        lower_bound_frames: planned.lower_bound_frames,
        proven: planned.proven,
        bound_s: load.iter().copied().fold(0.0, f64::max),
        model_s,
    })
}

/// The host (index in the fabric) of each rank of a communicator whose rank `i` is world rank
/// `world_rank[i]`.
pub fn hosts_of_ranks(fabric: &Fabric, world_rank: &[i32]) -> Result<Vec<u32>, String> {
    world_rank
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            usize::try_from(w)
                .ok()
                .and_then(|w| fabric.host_of_rank.get(w))
                .copied()
                .ok_or_else(|| {
                    format!(
                        "rank {i} is world rank {w}, but the fabric maps {} ranks",
                        fabric.host_of_rank.len()
                    )
                })
        })
        .collect()
}

/// The resources between two hosts, and the rate one transfer gets on them alone (its slot
/// rate: the narrowest of capacity over slots).
pub fn route_between(fabric: &Fabric, a: u32, z: u32) -> Result<(&[u32], f64), String> {
    let path = fabric.routes.get(&(a, z)).ok_or_else(|| {
        format!(
            "no route from {} to {} in the fabric",
            fabric.hosts[a as usize], fabric.hosts[z as usize]
        )
    })?;
    let slot_rate = path
        .iter()
        .map(|&r| fabric.capacity_bps[r as usize] / fabric.slots[r as usize] as f64)
        .fold(f64::INFINITY, f64::min);
    Ok((path, slot_rate))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fabric::parse_fabric;

    /// Two hosts per switch, two switches joined by one cable: the cable carries 4 messages
    /// each way in an all-to-all of 4 ranks, so Λ = 4 frames of one message.
    pub(crate) fn two_by_two() -> Fabric {
        let mut text = String::from("liquidsched-fabric 1\nnetwork t\nresources 10\n");
        text += &"1000 1\n".repeat(10);
        text += "hosts 4\na\nb\nc\nd\nranks 5\n0\n1\n2\n3\n3\nroutes 12\n";
        // host links: up 0..3, down 4..7; cable 8 (left → right), 9 (right → left)
        for s in 0..4u32 {
            for d in 0..4u32 {
                if s == d {
                    continue;
                }
                let cross = (s < 2) != (d < 2);
                let mid = if !cross {
                    String::new()
                } else if s < 2 {
                    " 8".into()
                } else {
                    " 9".into()
                };
                text += &format!("{s} {d} : {}{mid} {}\n", s, 4 + d);
            }
        }
        parse_fabric(&text).unwrap()
    }

    #[test]
    fn an_all_to_all_is_liquid_and_every_byte_is_planned() {
        let f = two_by_two();
        let n = 4;
        let bytes: Vec<u64> = (0..n * n)
            .map(|k| if k / n == k % n { 0 } else { 1000 })
            .collect();
        let p = plan_ranks(&f, &[0, 1, 2, 3], &bytes, 5.0).unwrap();
        assert_eq!(p.planner, Planner::Liquid);
        assert_eq!(
            (p.frames.len(), p.lower_bound_frames, p.proven),
            (4, 4, true)
        );
        assert_eq!(p.bound_s, 4.0);
        assert_eq!(p.model_s, 4.0);
        let mut got = vec![0u64; n * n];
        for f in &p.frames {
            for &(i, j, b) in f {
                got[i as usize * n + j as usize] += b;
            }
        }
        assert_eq!(got, bytes);
    }

    #[test]
    fn ranks_of_one_host_exchange_locally_and_unmapped_ranks_are_refused() {
        let f = two_by_two();
        let bytes = vec![0, 5, 7, 0];
        let p = plan_ranks(&f, &[3, 4], &bytes, 1.0).unwrap();
        assert!(p.frames.is_empty());
        assert_eq!(p.local, vec![(0, 1, 5), (1, 0, 7)]);
        assert!(plan_ranks(&f, &[0, 9], &bytes, 1.0)
            .unwrap_err()
            .contains("world rank 9"));
    }
}
