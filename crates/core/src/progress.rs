//! What a long search of the core has done so far, for its caller to show (a progress bar) and
//! to end early with the best answer known.
//!
//! The search writes its phase, its target length, the frames placed and the nodes explored
//! into a [`Progress`] with relaxed atomic stores (a few per thousand nodes); the caller reads a
//! [`Snapshot`] whenever it likes, from any thread (the Python binding does so when it probes
//! the [`Interrupt`](crate::Interrupt), every few milliseconds). [`Progress::request_stop`]
//! asks the search to stop as if its time budget had run out: it then returns the best schedule
//! it knows, which an interruption does not.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// The part of a liquid search running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Not started yet: the traffic is being read.
    Starting = 0,
    /// The cover of a symmetry group's orbits by frames its subgroups fix.
    OrbitCover = 1,
    /// The images of the transfers under a symmetry group, for the symmetric search.
    Group = 5,
    /// The search group by group under a symmetry group.
    Symmetric = 2,
    /// The exact search for a schedule of the target length.
    Search = 3,
    /// The completion of the best partial schedule (DSatur or first fit).
    Completion = 4,
}

impl Phase {
    /// Its name, as the binding reports it.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::OrbitCover => "orbit cover",
            Phase::Group => "symmetry group",
            Phase::Symmetric => "symmetric search",
            Phase::Search => "search",
            Phase::Completion => "completion",
        }
    }

    fn from_u8(value: u8) -> Phase {
        match value {
            1 => Phase::OrbitCover,
            2 => Phase::Symmetric,
            3 => Phase::Search,
            4 => Phase::Completion,
            5 => Phase::Group,
            _ => Phase::Starting,
        }
    }
}

/// A search's progress as read at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub phase: Phase,
    /// The length (frames) the search is after: the frame bound Λ, or more once it is proven
    /// that no schedule that short exists.
    pub target: u32,
    /// Frames of the partial schedule at hand.
    pub frames: u32,
    /// Frames of the deepest partial schedule of this target.
    pub deepest: u32,
    /// Category nodes explored, over every phase.
    pub nodes: u64,
    /// Whether the caller asked the search to stop.
    pub stop_requested: bool,
}

/// Shared progress of one search; see the module documentation.
#[derive(Debug, Default)]
pub struct Progress {
    phase: AtomicU8,
    target: AtomicU32,
    frames: AtomicU32,
    deepest: AtomicU32,
    nodes: AtomicU64,
    stop: AtomicBool,
}

impl Progress {
    pub fn new() -> Self {
        Progress::default()
    }

    /// The search enters `phase`.
    pub fn enter(&self, phase: Phase) {
        self.phase.store(phase as u8, Relaxed);
    }

    /// The search now looks for a schedule of `frames` frames, from an empty one.
    pub fn aim(&self, frames: u32) {
        self.target.store(frames, Relaxed);
        self.frames.store(0, Relaxed);
        self.deepest.store(0, Relaxed);
    }

    /// `nodes` explored in all, with a partial schedule of `frames` frames at hand.
    pub fn record(&self, nodes: u64, frames: usize) {
        let frames = u32::try_from(frames).unwrap_or(u32::MAX);
        self.nodes.store(nodes, Relaxed);
        self.frames.store(frames, Relaxed);
        self.deepest.fetch_max(frames, Relaxed);
    }

    /// Ask the search to stop and return the best schedule it knows.
    pub fn request_stop(&self) {
        self.stop.store(true, Relaxed);
    }

    /// Whether [`request_stop`](Self::request_stop) was called.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Relaxed)
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            phase: Phase::from_u8(self.phase.load(Relaxed)),
            target: self.target.load(Relaxed),
            frames: self.frames.load(Relaxed),
            deepest: self.deepest.load(Relaxed),
            nodes: self.nodes.load(Relaxed),
            stop_requested: self.stop.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_reads_what_was_recorded() {
        let p = Progress::new();
        assert_eq!(p.snapshot().phase, Phase::Starting);
        p.enter(Phase::Search);
        p.aim(640);
        p.record(10, 5);
        p.record(20, 3);
        let s = p.snapshot();
        assert_eq!(
            (s.phase, s.target, s.frames, s.deepest, s.nodes),
            (Phase::Search, 640, 3, 5, 20)
        );
        assert!(!s.stop_requested);
        // A new target starts from an empty schedule.
        p.aim(641);
        assert_eq!((p.snapshot().frames, p.snapshot().deepest), (0, 0));
        p.request_stop();
        assert!(p.stop_requested() && p.snapshot().stop_requested);
    }

    #[test]
    fn every_phase_reads_back() {
        for phase in [
            Phase::Starting,
            Phase::OrbitCover,
            Phase::Group,
            Phase::Symmetric,
            Phase::Search,
            Phase::Completion,
        ] {
            let p = Progress::new();
            p.enter(phase);
            assert_eq!(p.snapshot().phase, phase);
        }
    }
}
