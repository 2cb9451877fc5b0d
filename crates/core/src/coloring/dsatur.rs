//! DSatur: the uncoloured transfer of highest saturation (then degree, then index) takes the
//! lowest colour none of its resources is full in, and a colour that fills a resource is pushed
//! to that resource's uncoloured transfers that it did not block yet (none of their other
//! resources full in it). The conflict graph is its cliques (`Members`), the vertices wait in a
//! max tree, the colours full on each resource are column bitsets; vertices are renumbered so
//! that the transfers of a resource are near each other. [`dsatur_until`] gives up at a deadline (`Clock`).

use std::borrow::Cow;
use std::time::Instant;

use super::degrees::{conflict_degrees, Incidence};
use super::members::Members;
use super::pipeline::colour_in_two;
use super::queue::MaxTree;
use crate::error::{CoreError, CoreResult};
use crate::interrupt::Interrupt;
use crate::slots::{check_paths, checked_slots};

/// Colour classes (frames) of a DSatur colouring, each a list of transfer indices in
/// increasing order; frames are ordered by colour. `slots[r]` is the number of transfers
/// resource `r` carries at once (empty: one each).
///
/// The next vertex coloured is the uncoloured one of highest saturation, then of highest
/// conflict degree (distinct transfers it shares a resource with), then of lowest index; it
/// takes the lowest colour that none of its resources is full in.
pub fn dsatur(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> CoreResult<Vec<Vec<u32>>> {
    dsatur_with(paths, resources, slots, &Interrupt::never())
}

/// [`dsatur`], stopped with [`CoreError::Interrupted`] when `interrupt` fires.
pub fn dsatur_with(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    interrupt: &Interrupt,
) -> CoreResult<Vec<Vec<u32>>> {
    Ok(dsatur_until(paths, resources, slots, None, interrupt)?.expect("no deadline to pass"))
}

/// [`dsatur`], given up when `deadline` passes: `Ok(None)` then, otherwise the same frames as
/// [`dsatur`] (`None`: no deadline).
///
/// For a search that has spent its budget and must still hand back a complete schedule: it
/// completes its partial schedule with DSatur if DSatur finishes in what is left of the budget,
/// and with [`first_fit`](super::first_fit()) otherwise. The clock is read between the phases of
/// the work and every 256 vertices while the degrees are counted and while colouring, so it
/// overruns the deadline by little; `interrupt` is probed there too (every 4096 vertices), and
/// stops it with [`CoreError::Interrupted`].
pub fn dsatur_until(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    deadline: Option<Instant>,
    interrupt: &Interrupt,
) -> CoreResult<Option<Vec<Vec<u32>>>> {
    let threads = Threads::for_transfers(paths.len());
    dsatur_in(paths, resources, slots, deadline, interrupt, threads)
}

/// Nanoseconds DSatur takes per unit of its work `Σ n_r² / k_r` (see [`expected_seconds`]).
/// Measured (2026-11-28) on the all-to-alls of tori, meshes and fat trees of 16 k to 3 M
/// transfers: 1.2 (the fat tree of a million, on two threads) to 5.2 (the 6 × 6 × 6 torus), 3.4
/// on most; the slowest kind is taken.
const NANOS_PER_WORK: f64 = 5.0;

/// Seconds DSatur is expected to take on a traffic whose resources carry `loads` transfers and
/// have `slots` slots (empty: one each). Its work is the colours pushed to the uncoloured
/// transfers of the resources they fill: the `n_r / k_r` colours that fill resource `r` reach
/// about half of its `n_r` transfers each, so the work grows as `Σ n_r² / k_r`.
///
/// For a caller that must decide, before it starts, whether DSatur fits in a budget.
pub fn expected_seconds(loads: &[u32], slots: &[u32]) -> f64 {
    let work: f64 = loads
        .iter()
        .enumerate()
        .map(|(r, &n)| {
            let k = slots.get(r).copied().unwrap_or(1).max(1);
            f64::from(n) * f64::from(n) / f64::from(k)
        })
        .sum();
    work * NANOS_PER_WORK * 1e-9
}

/// On how many threads DSatur colours.
#[derive(Clone, Copy)]
enum Threads {
    One,
    /// Two ([`colour_in_two`]), one again if the other core is not free.
    Two,
    /// Two, then one from this step on whatever the other core does (for the tests).
    #[cfg(test)]
    TwoThenOneAt(u64),
}

impl Threads {
    /// Two threads for `n` transfers where the degrees are counted on more than one (from
    /// 65,536 transfers on, where a machine runs two threads at once), else one.
    fn for_transfers(n: usize) -> Self {
        if super::degrees::workers(n) >= 2 {
            Threads::Two
        } else {
            Threads::One
        }
    }
}

/// [`dsatur_until`], colouring on the `threads` asked for.
fn dsatur_in(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    deadline: Option<Instant>,
    interrupt: &Interrupt,
    threads: Threads,
) -> CoreResult<Option<Vec<Vec<u32>>>> {
    let slots = checked_slots(slots, resources)?;
    check_paths(paths, resources)?;
    let clock = &mut Clock::new(deadline, interrupt);
    if clock.passed() {
        return clock.gave_up();
    }
    // Vertices renumbered so that transfers of alike paths are neighbours: the transfers of a
    // resource, which a colour is pushed to, then lie close together in every per-vertex array.
    let local = locality_order(paths);
    let lists = Incidence::new(local.iter().map(|&v| &paths[v as usize][..]), resources);
    if clock.passed() {
        return clock.gave_up();
    }
    let members = Members::new(&lists);
    let Some(degree) = conflict_degrees(&lists, &members, resources, clock) else {
        return clock.gave_up();
    };
    let queue = MaxTree::new(&tie_break(&degree, &local));
    drop(degree);
    let painter = Painter::new(paths, &lists, &local, &slots, members);
    let frames = match threads {
        Threads::One => colour_in_one(painter, queue, clock),
        Threads::Two => colour_in_two(painter, queue, clock, None),
        #[cfg(test)]
        Threads::TwoThenOneAt(step) => colour_in_two(painter, queue, clock, Some(step)),
    };
    let Some(mut frames) = frames? else {
        return clock.gave_up();
    };
    for f in &mut frames {
        f.sort_unstable();
    }
    Ok(Some(frames))
}

/// Where the transfers a colour newly blocks are written, a list per resource it fills.
pub(super) trait Sink {
    /// Room for a list of up to `len` transfers.
    fn room(&mut self, len: usize) -> &mut [u32];
    /// The first `found` of the room are the list.
    fn publish(&mut self, found: usize);
}

/// Everything of DSatur's colouring but its queue: the colours full on each resource, the
/// cliques, the frames. It colours the vertex the queue gives it and hands the lists of
/// vertices whose saturation rises to a [`Sink`], so that the queue can be kept on a thread
/// of its own.
pub(super) struct Painter<'a> {
    paths: &'a [Vec<u32>],
    lists: &'a Incidence,
    local: &'a [u32],
    slots: &'a [u32],
    with_slots: bool,
    members: Members,
    full: FullColours,
    frames: Vec<Vec<u32>>,
    /// in_colour[r][c]: transfers of colour c on resource r (kept for resources with slots only).
    in_colour: Vec<Vec<u32>>,
}

impl<'a> Painter<'a> {
    fn new(
        paths: &'a [Vec<u32>],
        lists: &'a Incidence,
        local: &'a [u32],
        slots: &'a [u32],
        members: Members,
    ) -> Self {
        let resources = lists.user_start.len() - 1;
        Painter {
            paths,
            lists,
            local,
            slots,
            with_slots: slots.iter().any(|&k| k > 1),
            members,
            // One more resource: the padding of the members' entries, full in no colour.
            full: FullColours::new(Members::pad(resources) as usize + 1),
            frames: Vec::new(),
            in_colour: vec![Vec::new(); resources],
        }
    }

    /// Colour vertex `v` (renumbered) with the lowest colour none of its resources is full in,
    /// and publish to `sink` the uncoloured vertices each resource it fills newly blocks
    /// (perhaps coloured ones too).
    pub(super) fn colour(&mut self, v: usize, sink: &mut impl Sink) {
        let path = self.lists.path(v);
        self.members.colour(v, path);
        let c = self.full.smallest_free(path);
        if c as usize == self.frames.len() {
            self.frames.push(Vec::new());
            self.full.make_room(self.frames.len());
        }
        self.frames[c as usize].push(self.local[v]);
        // A resource listed twice fills twice as fast where it has slots; without slots the
        // distinct resources, at hand in the incidence lists, do the same.
        let walk = if self.with_slots {
            &self.paths[self.local[v] as usize][..]
        } else {
            path
        };
        for &r in walk {
            let k = self.slots[r as usize];
            if k > 1 {
                let counts = &mut self.in_colour[r as usize];
                if counts.len() <= c as usize {
                    counts.resize(c as usize + 1, 0);
                }
                counts[c as usize] += 1;
                if counts[c as usize] < k {
                    continue;
                }
            }
            // Full already only if r is twice in the path.
            if self.full.contains(r, c) {
                continue;
            }
            self.full.insert(r, c);
            let room = sink.room(self.members.most_blocked(r));
            let found = self
                .members
                .newly_blocked(r, self.full.column(c), c % 64, room);
            sink.publish(found);
        }
    }

    /// How many vertices there are to colour.
    pub(super) fn vertices(&self) -> usize {
        self.local.len()
    }

    /// How many vertices are left to colour.
    pub(super) fn uncoloured(&self) -> usize {
        self.vertices() - self.frames.iter().map(Vec::len).sum::<usize>()
    }

    /// The most vertices the lists of one call of [`Painter::colour`] hold together: those of
    /// the resources of a path, the longest in total.
    pub(super) fn most_per_colour(&self) -> usize {
        let lists = self.lists;
        (0..self.vertices())
            .map(|v| {
                lists
                    .path(v)
                    .iter()
                    .map(|&r| lists.users(r as usize).len())
                    .sum()
            })
            .max()
            .unwrap_or(0)
    }

    /// The colour classes, by colour, of the renumbered vertices' original indices.
    pub(super) fn into_frames(self) -> Vec<Vec<u32>> {
        self.frames
    }
}

/// Raises the saturation of each vertex of a list as soon as it is published.
struct Raise<'q> {
    queue: &'q mut MaxTree,
    newly: Vec<u32>,
}

impl Sink for Raise<'_> {
    fn room(&mut self, len: usize) -> &mut [u32] {
        if self.newly.len() < len {
            self.newly.resize(len, 0);
        }
        &mut self.newly[..len]
    }

    fn publish(&mut self, found: usize) {
        for &u in &self.newly[..found] {
            self.queue.raise(u as usize);
        }
    }
}

/// DSatur's colouring on the calling thread, of the vertices left: the vertex of the largest
/// key is coloured, the lists it publishes raised, and so on. `None` if `clock` expired.
pub(super) fn colour_in_one(
    mut painter: Painter,
    mut queue: MaxTree,
    clock: &mut Clock,
) -> CoreResult<Option<Vec<Vec<u32>>>> {
    let mut newly = Vec::new();
    for _ in 0..painter.uncoloured() {
        if clock.expired() {
            return Ok(None);
        }
        let v = queue.max_leaf();
        queue.remove(v);
        let mut raise = Raise {
            queue: &mut queue,
            newly: std::mem::take(&mut newly),
        };
        painter.colour(v, &mut raise);
        newly = raise.newly;
    }
    Ok(Some(painter.into_frames()))
}

/// The transfers in the order of their paths (as sorted lists of resources), ties by index.
fn locality_order(paths: &[Vec<u32>]) -> Vec<u32> {
    // Paths come sorted from the traffic's routes; only the others are copied to be sorted.
    let sorted: Vec<Cow<[u32]>> = paths
        .iter()
        .map(|p| {
            if p.is_sorted() {
                Cow::Borrowed(&p[..])
            } else {
                let mut p = p.clone();
                p.sort_unstable();
                Cow::Owned(p)
            }
        })
        .collect();
    let mut order: Vec<u32> = (0..paths.len() as u32).collect();
    // Ties broken by index: a total order, which the unstable sort (faster) keeps as well.
    order.sort_unstable_by(|&a, &b| sorted[a as usize].cmp(&sorted[b as usize]).then(a.cmp(&b)));
    order
}

/// DSatur's tie-break as a priority of each (renumbered) vertex, the greatest first: highest
/// conflict degree, then lowest original index.
fn tie_break(degree: &[u32], local: &[u32]) -> Vec<u32> {
    let n = degree.len();
    let mut by_rank: Vec<u32> = (0..n as u32).collect();
    by_rank.sort_unstable_by_key(|&v| (std::cmp::Reverse(degree[v as usize]), local[v as usize]));
    let mut priority = vec![0u32; n];
    for (rank, &v) in by_rank.iter().enumerate() {
        priority[v as usize] = (n - 1 - rank) as u32;
    }
    priority
}

/// A deadline, if any, an interrupt, and a count of the calls to [`Clock::expired`], which
/// reads the clock at the first call and every [`Clock::EVERY`] calls after it, and probes the
/// interrupt every [`crate::interrupt::EVERY`] calls.
pub(super) struct Clock<'i> {
    deadline: Option<Instant>,
    interrupt: &'i Interrupt<'i>,
    calls: u32,
}

impl<'i> Clock<'i> {
    const EVERY: u32 = 256;

    pub(super) fn new(deadline: Option<Instant>, interrupt: &'i Interrupt<'i>) -> Self {
        Clock {
            deadline,
            interrupt,
            calls: 0,
        }
    }

    /// A clock of the same deadline and interrupt for another thread (whose interrupt sees the
    /// user's request through the flag the calling thread sets).
    pub(super) fn fork(&self) -> Clock<'i> {
        Clock::new(self.deadline, self.interrupt)
    }

    /// True if the clock, read now, is past the deadline or the interrupt fired (between the
    /// phases of the work).
    pub(super) fn passed(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d) || self.interrupt.is_set()
    }

    /// True if the clock is read at this call and is past the deadline, or the interrupt is
    /// probed at this call and fired.
    pub(super) fn expired(&mut self) -> bool {
        let calls = self.calls;
        self.calls = self.calls.wrapping_add(1);
        if calls.is_multiple_of(crate::interrupt::EVERY) && self.interrupt.is_set() {
            return true;
        }
        let Some(deadline) = self.deadline else {
            return false;
        };
        calls.is_multiple_of(Self::EVERY) && Instant::now() >= deadline
    }

    /// What to return once the clock said stop: the interruption, or no colouring in time.
    pub(super) fn gave_up<T>(&self) -> CoreResult<Option<T>> {
        if self.interrupt.is_set() {
            Err(CoreError::Interrupted)
        } else {
            Ok(None)
        }
    }
}

/// The colours each resource is full in, as bitsets: bit `c % 64` of word
/// `(c / 64) * resources + r` for colour `c` on resource `r` (a new column of words per 64
/// colours, so nothing moves when colours are added). The colour a vertex takes is the lowest
/// that none of its resources is full in.
struct FullColours {
    resources: usize,
    columns: usize,
    words: Vec<u64>,
    /// `open[r]`: every word of `r` below it is all set.
    open: Vec<u32>,
}

impl FullColours {
    fn new(resources: usize) -> Self {
        FullColours {
            resources,
            columns: 0,
            words: Vec::new(),
            open: vec![0; resources],
        }
    }

    /// Make room for colours below `colours`.
    fn make_room(&mut self, colours: usize) {
        while self.columns * 64 < colours {
            self.words.resize(self.words.len() + self.resources, 0);
            self.columns += 1;
        }
    }

    /// Whether resource `r` is full in colour `c` (for which there is room).
    #[inline]
    fn contains(&self, r: u32, c: u32) -> bool {
        let word = self.words[(c / 64) as usize * self.resources + r as usize];
        (word >> (c % 64)) & 1 != 0
    }

    /// The words of colour `c`'s column (for which there is room): bit `c % 64` of word `r` is
    /// whether resource `r` is full in it.
    #[inline]
    fn column(&self, c: u32) -> &[u64] {
        let base = (c / 64) as usize * self.resources;
        &self.words[base..base + self.resources]
    }

    /// Mark resource `r` full in colour `c` (for which there is room).
    fn insert(&mut self, r: u32, c: u32) {
        self.words[(c / 64) as usize * self.resources + r as usize] |= 1 << (c % 64);
    }

    /// The lowest colour none of the resources of `path` is full in.
    fn smallest_free(&mut self, path: &[u32]) -> u32 {
        let mut w = 0;
        for &r in path {
            let r = r as usize;
            let mut o = self.open[r] as usize;
            while o < self.columns && self.words[o * self.resources + r] == u64::MAX {
                o += 1;
            }
            self.open[r] = o as u32;
            w = w.max(o);
        }
        while w < self.columns {
            let base = w * self.resources;
            let word = path
                .iter()
                .fold(0, |all, &r| all | self.words[base + r as usize]);
            if word != u64::MAX {
                return (w * 64) as u32 + (!word).trailing_zeros();
            }
            w += 1;
        }
        (self.columns * 64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coloring::reference::reference_dsatur;
    use crate::coloring::tests::{random_all_to_all, random_traffic};
    use crate::testing::{is_valid_schedule, random_slot_traffic, two_switch_paths, Rng};
    use std::time::Duration;

    #[test]
    fn two_switch_half_all_to_all() {
        let paths = two_switch_paths();
        let frames = dsatur(&paths, 12, &[]).unwrap();
        assert!(is_valid_schedule(&paths, &frames));
        assert!(frames.len() >= 6);
    }

    #[test]
    fn odd_cycle_needs_three_colours() {
        let paths = vec![vec![0, 1], vec![1, 2], vec![2, 0]];
        let frames = dsatur(&paths, 3, &[]).unwrap();
        assert_eq!(frames.len(), 3);
        assert!(is_valid_schedule(&paths, &frames));
    }

    #[test]
    fn dsatur_colours_as_the_reference_does() {
        let mut rng = Rng(2024);
        for _ in 0..500 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            for slots in [&slots[..], &[]] {
                let resources = paths.iter().flatten().max().map_or(0, |&r| r as usize + 1);
                let resources = resources.max(slots.len());
                assert_eq!(
                    dsatur(&paths, resources, slots).unwrap(),
                    reference_dsatur(&paths, resources, slots),
                    "{paths:?} {slots:?}"
                );
            }
        }
        for round in 0..200u64 {
            let n = 1 + rng.below(400) as usize;
            let resources = 1 + rng.below(60) as usize;
            let max_slots = [1, 2, 4][round as usize % 3];
            let (paths, slots) =
                random_traffic(&mut rng, n, resources, max_slots, 5, round % 5 == 4);
            for slots in [&slots[..], &[]] {
                let expected = reference_dsatur(&paths, resources, slots);
                assert_eq!(
                    dsatur(&paths, resources, slots).unwrap(),
                    expected,
                    "round {round}"
                );
                assert_eq!(
                    in_two(&paths, resources, slots, None).unwrap().as_ref(),
                    Some(&expected),
                    "round {round} on two threads"
                );
                // Gone on alone part of the way, as when the other core is taken.
                let step = rng.below(paths.len() as u64 + 1);
                let alone = Threads::TwoThenOneAt(step);
                assert_eq!(
                    dsatur_in(&paths, resources, slots, None, &Interrupt::never(), alone).unwrap(),
                    Some(expected),
                    "round {round} alone from step {step}"
                );
            }
        }
        for round in 0..12u64 {
            let (paths, slots) =
                random_all_to_all(&mut rng, 8 + round as u32 * 2, 6, 1 + round % 4);
            let resources = slots.len();
            for slots in [&slots[..], &[]] {
                let expected = reference_dsatur(&paths, resources, slots);
                assert_eq!(
                    dsatur(&paths, resources, slots).unwrap(),
                    expected,
                    "all-to-all {round}"
                );
                assert_eq!(
                    in_two(&paths, resources, slots, None).unwrap(),
                    Some(expected),
                    "all-to-all {round} on two threads"
                );
            }
        }
    }

    #[test]
    fn long_paths_and_wide_resource_indices_colour_as_the_reference_does() {
        // Paths of up to 9 resources (entries read one by one, not in fixed chunks), and the
        // same traffics spread over 70,000 resources (other resources kept in 32 bits).
        let mut rng = Rng(77);
        for round in 0..60u64 {
            let (paths, slots) = random_traffic(&mut rng, 200, 40, 1 + round % 3, 9, false);
            assert_eq!(
                dsatur(&paths, 40, &slots).unwrap(),
                reference_dsatur(&paths, 40, &slots),
                "round {round}"
            );
            let spread: Vec<Vec<u32>> = paths
                .iter()
                .map(|p| p.iter().map(|&r| r * 1733 + 5).collect())
                .collect();
            let mut wide_slots = vec![1; 70_000];
            for (r, &k) in slots.iter().enumerate() {
                wide_slots[r * 1733 + 5] = k;
            }
            assert_eq!(
                dsatur(&spread, 70_000, &wide_slots).unwrap(),
                reference_dsatur(&spread, 70_000, &wide_slots),
                "spread round {round}"
            );
        }
    }

    /// DSatur coloured on two threads, whatever the number of transfers.
    fn in_two(
        paths: &[Vec<u32>],
        resources: usize,
        slots: &[u32],
        deadline: Option<Instant>,
    ) -> CoreResult<Option<Vec<Vec<u32>>>> {
        dsatur_in(
            paths,
            resources,
            slots,
            deadline,
            &Interrupt::never(),
            Threads::Two,
        )
    }

    #[test]
    fn on_two_threads_a_deadline_or_an_interrupt_stops_both() {
        let mut rng = Rng(12);
        let (paths, slots) = random_all_to_all(&mut rng, 120, 10, 1);
        let resources = slots.len();
        let passed = Some(Instant::now());
        assert_eq!(in_two(&paths, resources, &slots, passed).unwrap(), None);
        let whole = Instant::now();
        in_two(&paths, resources, &slots, None).unwrap();
        let soon = Some(Instant::now() + whole.elapsed() / 20);
        assert_eq!(in_two(&paths, resources, &slots, soon).unwrap(), None);
        // The probe (on this thread, the queue's) fires at its third call.
        let calls = std::sync::atomic::AtomicU32::new(0);
        let probe = || calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 2;
        let interrupt = Interrupt::new(&probe);
        assert_eq!(
            dsatur_in(&paths, resources, &slots, None, &interrupt, Threads::Two),
            Err(CoreError::Interrupted)
        );
    }

    #[test]
    fn dsatur_until_without_deadline_or_in_time_is_dsatur() {
        let mut rng = Rng(9);
        let later = Instant::now() + Duration::from_secs(3600);
        for round in 0..50u64 {
            let (paths, slots) = random_traffic(&mut rng, 300, 40, 1 + round % 3, 4, false);
            let frames = dsatur(&paths, 40, &slots).unwrap();
            assert_eq!(
                dsatur_until(&paths, 40, &slots, None, &Interrupt::never())
                    .unwrap()
                    .as_ref(),
                Some(&frames)
            );
            assert_eq!(
                dsatur_until(&paths, 40, &slots, Some(later), &Interrupt::never()).unwrap(),
                Some(frames)
            );
        }
    }

    #[test]
    fn dsatur_until_a_passed_deadline_gives_up_at_once() {
        let mut rng = Rng(5);
        let (paths, slots) = random_all_to_all(&mut rng, 120, 10, 1);
        let passed = Instant::now();
        let started = Instant::now();
        assert_eq!(
            dsatur_until(
                &paths,
                slots.len(),
                &slots,
                Some(passed),
                &Interrupt::never()
            )
            .unwrap(),
            None
        );
        assert!(started.elapsed() < Duration::from_millis(100));
        // A deadline that passes early in the run: a twentieth of the shorter of two runs.
        let whole = (0..2)
            .map(|_| {
                let started = Instant::now();
                dsatur(&paths, slots.len(), &slots).unwrap();
                started.elapsed()
            })
            .min()
            .unwrap();
        let soon = Instant::now() + whole / 20;
        assert_eq!(
            dsatur_until(&paths, slots.len(), &slots, Some(soon), &Interrupt::never()).unwrap(),
            None
        );
    }
}
