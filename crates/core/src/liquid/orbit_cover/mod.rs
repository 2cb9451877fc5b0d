//! Orbit cover: a liquid schedule made of frames that subgroups of a symmetry group fix.
//!
//! A group `H` of network automorphisms acts on the transfers; every orbit is a copy of `H`
//! (the action is regular on each orbit: transfer `(o, e)` is element `e` applied to the
//! representative of orbit `o`), as the translations of a torus act on an all-to-all. Take a
//! normal subgroup `K` and a frame `F` that is a union of `K`-orbits (`F` is fixed by `K`),
//! holding at most one `K`-orbit of each `H`-orbit. Its images `g F`, one per coset `g K`, are
//! then `|H / K|` disjoint frames, and together they hold the whole of every `H`-orbit `F`
//! touches. A schedule is thus a partition of the `H`-orbits into such *frame orbits*, each
//! costing `|H / K|` frames. When every frame fills every bottleneck (each resource whose load
//! is Λ times its slots), the schedule has Λ frames: it is liquid.
//!
//! The search is an exact cover of the `H`-orbits. It takes the uncovered orbit whose cheapest
//! frame orbit costs most frames (then the one that uses the bottlenecks most), and gives up a
//! branch where an orbit's cheapest frame orbit would not fit in the frames left. For each
//! subgroup (largest first, fewest frames) it builds frames that contain one fixed `K`-orbit of
//! that orbit (any other is an image of it: the frame orbit is the same), filling the
//! bottleneck with the fewest fitting `K`-orbits first; given the resources' images, one
//! bottleneck of each `K`-orbit of them is enough to look at. Once no uncovered orbit touches a
//! bottleneck, the rest are packed into the frame orbits placed, each as one `K`-orbit of the
//! frame orbit's subgroup. Sets of uncovered orbits that have no cover are remembered (those
//! whose failure did not involve packing, which depends on the frames placed). Attempts of
//! doubling node budgets try subgroups of one size and candidates in other orders, keeping
//! what the earlier ones proved.
//!
//! The group is given, not derived: every claim about it is checked (a group table, subgroups
//! that are normal subgroups, every transfer an element of exactly one orbit), and the schedule
//! built is validated against the traffic before it is returned, so a wrong group (elements
//! that are not automorphisms) can only make the cover fail, never return a wrong schedule.
//! Finding no cover proves nothing; the plain search runs afterwards.
//!
//! The parts: `group` (the structure given, checked), `items` (the orbits of a subgroup that fit
//! in a frame), `cover` (the search in attempts) and, here, the schedule's final check.

mod cover;
mod group;
mod items;
#[cfg(test)]
mod tests;

use std::time::Instant;

use super::traffic::Traffic;
use crate::error::CoreResult;
use crate::interrupt::Interrupt;
use crate::slots::frames_fit;
use cover::Cover;
use group::Regular;

/// A group acting regularly on each orbit of the transfers, and the subgroups whose fixed
/// frames the orbit cover may use.
#[derive(Debug, Clone, Default)]
pub struct OrbitStructure {
    /// Orbit of each transfer, numbered from 0.
    pub orbit: Vec<u32>,
    /// Element of each transfer: the one that maps its orbit's representative to it.
    pub element: Vec<u32>,
    /// The group's table: `product[a * order + b]` is the element `a ∘ b` (`b` first).
    pub product: Vec<u32>,
    /// Subgroups, each as the list of its elements.
    pub subgroups: Vec<Vec<u32>>,
    /// The image of every resource under every element: `resource_images[g * resources + r]`
    /// (empty: not given). A frame a subgroup fixes fills a bottleneck when it fills its images,
    /// so the cover then looks at one bottleneck of each of the subgroup's orbits.
    pub resource_images: Vec<u32>,
}

/// What the orbit cover found, and what it cost.
pub(super) struct CoverOutcome {
    pub(super) frames: Option<Vec<Vec<u32>>>,
    pub(super) nodes: u64,
    pub(super) memory_bytes: u64,
    pub(super) order: u32,
}

/// Search a liquid schedule of `tr` as a cover of the orbits of `structure` within `nodes`
/// nodes and until `deadline`. `Err` when the structure is malformed or the interrupt fired.
pub(super) fn orbit_cover(
    tr: &Traffic,
    structure: &OrbitStructure,
    nodes: u64,
    memo_bytes: usize,
    deadline: Option<Instant>,
    interrupt: &Interrupt,
) -> CoreResult<CoverOutcome> {
    let group = Regular::new(tr.len(), tr.users.len(), structure)?;
    let order = group.order as u32;
    let mut cover = Cover::new(tr, &group, nodes, memo_bytes, deadline, interrupt);
    let found = cover.run();
    interrupt.check()?;
    let frames = found.then(|| cover.frames()).filter(|f| is_liquid(tr, f));
    Ok(CoverOutcome {
        frames,
        nodes: cover.nodes,
        memory_bytes: cover.memory_bytes(),
        order,
    })
}

/// `frames` hold every transfer once, none over a resource's slots, and are Λ in number.
fn is_liquid(tr: &Traffic, frames: &[Vec<u32>]) -> bool {
    frames.len() as u32 == tr.duration() && frames_fit(&tr.paths, &tr.slots, frames)
}
