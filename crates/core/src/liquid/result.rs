//! What a search returns: the schedule with its claims (liquid, optimal, lower bound), its
//! statistics (nodes, frames tried, memo hits, restarts, memory), why it stopped and where the
//! schedule comes from; and the count of full teams.

/// Why a search ended before it was complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Nodes,
    Time,
    /// The caller asked the search to stop with its best schedule (see [`crate::Progress`]).
    Request,
}

/// Where the returned schedule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The exact search found it.
    Search,
    /// The deepest partial schedule of the search, completed by DSatur.
    Completion,
    /// DSatur on the whole traffic.
    Dsatur,
    /// The search found it, group by group, with the frames a symmetry group covers.
    Symmetric,
    /// A cover of a symmetry group's orbits by frames its subgroups fix.
    OrbitCover,
    /// The deepest partial schedule, completed greedily when DSatur did not fit in the budget.
    FirstFit,
}

/// Result of [`liquid_schedule`](super::liquid_schedule).
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// Frames, each a sorted list of transfer indices.
    pub frames: Vec<Vec<u32>>,
    /// Duration Λ of the traffic.
    pub duration: u32,
    /// No schedule is shorter than this (proven: Λ, or more when lengths were exhausted).
    pub lower_bound: u32,
    /// The schedule has Λ frames.
    pub liquid: bool,
    /// The length equals the proven lower bound.
    pub optimal: bool,
    /// Category nodes explored (all fission steps, all target lengths).
    pub nodes: u64,
    /// Frames placed in the schedule tree (nodes of paper 000 Fig. 9).
    pub frames_tried: u64,
    /// Sub-traffics skipped because they were already known to have no schedule.
    pub memo_hits: u64,
    /// Set when a budget ran out; the schedule is then the best one known.
    pub stopped_by: Option<Budget>,
    pub source: Source,
    /// Attempts abandoned for a fresh one (traffics with slots only).
    pub restarts: u64,
    /// Largest memory the search's own tables took (remembered sub-traffics, per-frame state),
    /// in bytes; the remembered sub-traffics never exceed `memo_bytes`.
    pub memory_bytes: u64,
    /// Order of the symmetry group used (1 when none was).
    pub symmetry_order: u32,
}

/// Result of [`count_full_teams`](super::count_full_teams).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamCount {
    /// Full teams of the traffic found.
    pub teams: u64,
    /// Category nodes explored.
    pub nodes: u64,
    /// False when the node limit stopped the enumeration.
    pub complete: bool,
}

/// Sorted frames, and the claims that follow from the length.
pub(super) fn finish(mut result: SearchResult, lambda: u32) -> SearchResult {
    for f in &mut result.frames {
        f.sort_unstable();
    }
    let length = result.frames.len() as u32;
    result.liquid = length == lambda;
    result.optimal = length <= result.lower_bound;
    result.lower_bound = result.lower_bound.min(length);
    result
}
