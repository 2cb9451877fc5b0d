//! Lower bounds on the number of frames beyond the frame bound Λ.
//!
//! Λ counts the transfers of one resource. It misses transfers that can share a frame with
//! none of them: if a transfer `t` off resource `r` conflicts with every transfer on `r` (shares
//! a one-slot resource with each), no frame carries `t` and a transfer of `r`. The frames of
//! `r`'s transfers and those of the set `S_r` of such transfers are then disjoint, so every
//! schedule has at least `⌈n_r / k_r⌉ + Λ(S_r)` frames, `Λ(S_r)` being the frame bound of `S_r`
//! alone. With `S_r = {t}` this is the two-line argument "one transfer conflicts with all the
//! transfers of a full bottleneck, so it needs a frame of its own".
//!
//! The bound is evaluated on the whole traffic before the search (which then starts at the
//! larger length), and its one-transfer case on the remaining traffic of every schedule-tree
//! node whose frames left are exactly what a resource needs (a *tight* resource).

use super::traffic::{has, Traffic};
use crate::slots::frames_for;

/// Scratch space of the conflict tests, reused between resources.
pub(super) struct Conflicts {
    /// `stamp[r] == stamp_mark`: resource `r` is a one-slot resource of the transfer under test.
    stamp: Vec<u32>,
    stamp_mark: u32,
    /// `seen[t] == seen_mark`: transfer `t` was already a candidate for this resource.
    seen: Vec<u32>,
    seen_mark: u32,
    /// Transfers of the resource under test.
    on_r: Vec<u32>,
    /// Transfers of the set `S_r` per resource, counted to get its frame bound.
    count: Vec<u32>,
    touched: Vec<u32>,
}

impl Conflicts {
    pub(super) fn new(traffic: &Traffic) -> Self {
        Conflicts {
            stamp: vec![0; traffic.users.len()],
            stamp_mark: 0,
            seen: vec![0; traffic.len()],
            seen_mark: 0,
            on_r: Vec::new(),
            count: vec![0; traffic.users.len()],
            touched: Vec::new(),
        }
    }

    /// A fresh mark for `marks`: never equal to one already stored there.
    fn fresh(marks: &mut [u32], mark: &mut u32) -> u32 {
        *mark = mark.wrapping_add(1);
        if *mark == 0 {
            marks.iter_mut().for_each(|m| *m = 0);
            *mark = 1;
        }
        *mark
    }

    /// The transfers among `alive` (all when None) that use no slot of `r` but conflict with
    /// every transfer of `r` in `alive`, passed one by one to `found`; it returns false to stop.
    fn for_each_conflicting_all(
        &mut self,
        tr: &Traffic,
        r: u32,
        alive: Option<&[u64]>,
        mut found: impl FnMut(u32) -> bool,
    ) {
        let is_alive = |t: u32| alive.is_none_or(|bits| has(bits, t));
        let mut on_r = std::mem::take(&mut self.on_r);
        on_r.clear();
        on_r.extend(
            tr.users[r as usize]
                .iter()
                .copied()
                .filter(|&u| is_alive(u)),
        );
        let Some(&first) = on_r.first() else {
            self.on_r = on_r;
            return;
        };
        let seen_mark = Self::fresh(&mut self.seen, &mut self.seen_mark);
        for &u in &on_r {
            self.seen[u as usize] = seen_mark;
        }
        // A candidate conflicts with the first transfer of r, so it shares a one-slot resource
        // with it: the candidates are the users of those resources.
        for &d in &tr.paths[first as usize] {
            if d == r || tr.slots[d as usize] != 1 {
                continue;
            }
            for &t in &tr.users[d as usize] {
                if self.seen[t as usize] == seen_mark || !is_alive(t) {
                    continue;
                }
                self.seen[t as usize] = seen_mark;
                if tr.paths[t as usize].binary_search(&r).is_ok() {
                    continue;
                }
                let mark = Self::fresh(&mut self.stamp, &mut self.stamp_mark);
                for &e in &tr.paths[t as usize] {
                    if tr.slots[e as usize] == 1 {
                        self.stamp[e as usize] = mark;
                    }
                }
                let all = on_r.iter().all(|&u| {
                    tr.paths[u as usize]
                        .iter()
                        .any(|&e| self.stamp[e as usize] == mark)
                });
                if all && !found(t) {
                    self.on_r = on_r;
                    return;
                }
            }
        }
        self.on_r = on_r;
    }
}

/// The larger of Λ and every `⌈n_r / k_r⌉ + Λ(S_r)` over the bottlenecks `r` of the whole
/// traffic (see the module documentation).
pub(super) fn extra_frames_bound(tr: &Traffic) -> u32 {
    let lambda = tr.duration();
    let mut best = lambda;
    let mut scratch = Conflicts::new(tr);
    for r in 0..tr.users.len() as u32 {
        let n = tr.users[r as usize].len() as u32;
        let frames = frames_for(n, tr.slots[r as usize]);
        if n == 0 || frames < lambda {
            continue;
        }
        let mut set = Vec::new();
        scratch.for_each_conflicting_all(tr, r, None, |t| {
            set.push(t);
            true
        });
        if set.is_empty() {
            continue;
        }
        best = best.max(frames + frame_bound_of(tr, &set, &mut scratch));
    }
    best
}

/// Λ of the transfers `set` alone.
fn frame_bound_of(tr: &Traffic, set: &[u32], scratch: &mut Conflicts) -> u32 {
    let mut most = 0;
    for &t in set {
        for &e in &tr.paths[t as usize] {
            if scratch.count[e as usize] == 0 {
                scratch.touched.push(e);
            }
            scratch.count[e as usize] += 1;
            most = most.max(frames_for(scratch.count[e as usize], tr.slots[e as usize]));
        }
    }
    for e in scratch.touched.drain(..) {
        scratch.count[e as usize] = 0;
    }
    most
}

/// With `k` frames left for the remaining transfers `rem` (loads `load`), a tight resource —
/// one that needs all `k` frames — and a remaining transfer that conflicts with all of its
/// transfers: no schedule in `k` frames.
pub(super) fn tight_resource_blocked(
    tr: &Traffic,
    rem: &[u64],
    load: &[u32],
    k: u32,
    scratch: &mut Conflicts,
) -> bool {
    (0..tr.users.len() as u32).any(|r| {
        let n = load[r as usize];
        if n == 0 || frames_for(n, tr.slots[r as usize]) < k {
            return false;
        }
        let mut blocked = false;
        scratch.for_each_conflicting_all(tr, r, Some(rem), |_| {
            blocked = true;
            false
        });
        blocked
    })
}

#[cfg(test)]
mod tests {
    use super::extra_frames_bound;
    use crate::liquid::traffic::Traffic;
    use crate::liquid::{liquid_schedule, SearchOptions};
    use crate::testing::{brute_force_frames, random_slot_traffic, Rng};

    #[test]
    fn a_transfer_conflicting_with_a_full_bottleneck_raises_the_bound() {
        // Resource 0 carries three transfers (Λ = 3); transfer 3 uses resources 1 and 2, which
        // every transfer of resource 0 also uses one of: a fourth frame is needed.
        let paths = vec![vec![0, 1], vec![0, 1], vec![0, 2], vec![1, 2]];
        let traffic = Traffic::new(&paths, 3, &[]).unwrap();
        assert_eq!(traffic.duration(), 3);
        assert_eq!(extra_frames_bound(&traffic), 4);
        let r = liquid_schedule(&paths, 3, &[], &SearchOptions::default()).unwrap();
        assert_eq!((r.frames.len(), r.lower_bound, r.optimal), (4, 4, true));
        // With two slots on resource 1, transfer 3 fits beside a transfer of resource 0.
        let traffic = Traffic::new(&paths, 3, &[1, 2, 1]).unwrap();
        assert_eq!(extra_frames_bound(&traffic), 3);
        assert_eq!(brute_force_frames(&paths, &[1, 2, 1]), 3);
    }

    #[test]
    fn the_bound_never_exceeds_the_optimum() {
        let mut rng = Rng(5550123);
        for _ in 0..400 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let traffic = Traffic::new(&paths, slots.len(), &slots).unwrap();
            assert!(
                extra_frames_bound(&traffic) as usize <= brute_force_frames(&paths, &slots),
                "{paths:?} {slots:?}"
            );
        }
    }
}
