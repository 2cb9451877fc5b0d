//! Without a selection table, the cost model decides whether a schedule can beat the MPI
//! library's own `MPI_Alltoall`; `MPI_Alltoallv` always goes to the library.
//!
//! The model is the frames model of the plan (each step as long as its busiest resource or its
//! slowest piece) plus a latency per synchronisation:
//!
//! - MPICH's `MPI_Alltoall`, by its documented default thresholds: messages up to
//!   [`MEDIUM_MESSAGE_BYTES`] go by Bruck's algorithm or all posted at once, whose fluid time is
//!   Λ: no schedule is shorter, so the library runs and nothing is planned. Longer messages go by
//!   the pairwise exchange: n − 1 steps, rank i sending to i XOR s (n a power of two) or to
//!   i + s mod n, each step a latency plus its own frames-model time.
//! - `MPI_Alltoallv`: MPICH posts every message at once (its "scattered" algorithm), fluid
//!   time Λ: the library runs.
//! - liquid frames: the plan's model time plus, per frame, a dissemination barrier of
//!   ⌈log2 n⌉ latencies.
//!
//! A schedule runs when the library's time exceeds the schedule's by more than the margin. The
//! latency is the fabric's (`pmpi-config --latency`, from `liquidsched calibrate`) or
//! [`DEFAULT_LATENCY_S`].

use crate::fabric::Fabric;
use crate::plan::{hosts_of_ranks, route_between};
use crate::selection::Mode;

/// MPICH's `MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE` default: above it, `MPI_Alltoall` is pairwise.
pub const MEDIUM_MESSAGE_BYTES: u64 = 32768;
/// The one-way latency assumed when the fabric gives none: a message between two hosts of a
/// commodity Ethernet cluster through MPICH's TCP channel.
pub const DEFAULT_LATENCY_S: f64 = 50e-6;
/// How much longer the library's time must be for a schedule to run (the selection's margin).
pub const MARGIN: f64 = 0.01;

/// Whether a schedule could beat the library's `MPI_Alltoall` of `block` bytes per message at
/// all: not where the library's algorithm already takes Λ in the model.
pub fn alltoall_can_lose(block: u64) -> bool {
    block > MEDIUM_MESSAGE_BYTES
}

/// The model's time of MPICH's pairwise `MPI_Alltoall` of `block` bytes per message between
/// the ranks of a communicator (world ranks `world_rank`).
pub fn pairwise_alltoall_s(
    fabric: &Fabric,
    world_rank: &[i32],
    block: u64,
    latency_s: f64,
) -> Result<f64, String> {
    let host = hosts_of_ranks(fabric, world_rank)?;
    let n = host.len();
    let mut total = 0.0;
    let mut load = vec![0.0f64; fabric.capacity_bps.len()];
    for step in 1..n {
        load.iter_mut().for_each(|l| *l = 0.0);
        let mut slowest = 0.0f64;
        for i in 0..n {
            let j = if n.is_power_of_two() {
                i ^ step
            } else {
                (i + step) % n
            };
            if host[i] == host[j] {
                continue;
            }
            let (path, slot_rate) = route_between(fabric, host[i], host[j])?;
            for &r in path {
                load[r as usize] += block as f64 / fabric.capacity_bps[r as usize];
            }
            slowest = slowest.max(block as f64 / slot_rate);
        }
        total += latency_s + load.iter().copied().fold(slowest, f64::max);
    }
    Ok(total)
}

/// The model's time of liquid frames: the plan's frames-model time and a barrier per frame.
pub fn frames_s(model_s: f64, frames: u32, ranks: usize, latency_s: f64) -> f64 {
    let rounds = (ranks.max(2) as f64).log2().ceil();
    model_s + frames as f64 * rounds * latency_s
}

/// The model's choice for an `MPI_Alltoall` of `block` bytes per message planned as `frames`
/// frames of model time `model_s`, with the library's and the schedule's modelled times.
pub fn default_alltoall_mode(
    fabric: &Fabric,
    world_rank: &[i32],
    block: u64,
    model_s: f64,
    frames: u32,
) -> Result<(Mode, f64, f64), String> {
    let latency = fabric.latency_s.unwrap_or(DEFAULT_LATENCY_S);
    let schedule = frames_s(model_s, frames, world_rank.len(), latency);
    if !alltoall_can_lose(block) || frames == 0 {
        return Ok((Mode::Library, f64::NAN, schedule));
    }
    let library = pairwise_alltoall_s(fabric, world_rank, block, latency)?;
    let mode = if library > schedule * (1.0 + MARGIN) {
        Mode::Frames
    } else {
        Mode::Library
    };
    Ok((mode, library, schedule))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::parse_fabric;
    use crate::plan::{plan_ranks, tests::two_by_two};

    #[test]
    fn pairwise_steps_that_cross_the_cable_together_are_slower_than_liquid_frames() {
        // Two switches of two hosts, 1000 B/s everywhere. Pairwise for 4 ranks pairs i with
        // i ^ s: step 1 stays inside the switches (1 s), steps 2 and 3 put two messages on each
        // direction of the cable (2 s each): 5 s of model. The liquid plan takes Λ = 4 s.
        let f = two_by_two();
        assert_eq!(
            pairwise_alltoall_s(&f, &[0, 1, 2, 3], 1000, 0.0).unwrap(),
            5.0
        );
        let bytes: Vec<u64> = (0..16)
            .map(|k| if k / 4 == k % 4 { 0 } else { 40_000 })
            .collect();
        let p = plan_ranks(&f, &[0, 1, 2, 3], &bytes, 5.0).unwrap();
        let (mode, library, schedule) =
            default_alltoall_mode(&f, &[0, 1, 2, 3], 40_000, p.model_s, p.frames.len() as u32)
                .unwrap();
        assert_eq!((mode, library > schedule), (Mode::Frames, true));
    }

    #[test]
    fn small_messages_and_a_crossbar_go_to_the_library() {
        let f = two_by_two();
        assert_eq!(
            default_alltoall_mode(&f, &[0, 1, 2, 3], 4096, 0.0, 4)
                .unwrap()
                .0,
            Mode::Library
        );
        // A crossbar: every pairwise step is a permutation that no link carries twice, so the
        // library's time is the bound plus its latencies, and the margin keeps it.
        let mut text = String::from("liquidsched-fabric 1\nnetwork x\nlatency 0\nresources 6\n");
        text += &"1000 1\n".repeat(6);
        text += "hosts 3\na\nb\nc\nranks 3\n0\n1\n2\nroutes 6\n";
        for s in 0..3u32 {
            for d in 0..3u32 {
                if s != d {
                    text += &format!("{s} {d} : {s} {}\n", 3 + d);
                }
            }
        }
        let f = parse_fabric(&text).unwrap();
        let bytes: Vec<u64> = (0..9)
            .map(|k| if k / 3 == k % 3 { 0 } else { 100_000 })
            .collect();
        let p = plan_ranks(&f, &[0, 1, 2], &bytes, 5.0).unwrap();
        let (mode, library, schedule) =
            default_alltoall_mode(&f, &[0, 1, 2], 100_000, p.model_s, p.frames.len() as u32)
                .unwrap();
        assert_eq!((mode, library, schedule), (Mode::Library, 200.0, 200.0));
    }
}
