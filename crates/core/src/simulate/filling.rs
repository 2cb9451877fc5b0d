//! Progressive filling, the max-min fair rates from scratch, and what the two fluid engines
//! share with it: `Least`, the entry of every min-heap they keep, and the tolerance under which
//! a flow counts as finished.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An entry of a min-heap: a key (a fair share, a time, a virtual-clock target) for an id, and
/// a tag telling a stale entry from a valid one (a version or stamp); smallest key first, ties by
/// smaller id. In the filling heap the key is a resource's fair share.
#[derive(PartialEq)]
pub(super) struct Least<T>(pub(super) f64, pub(super) u32, pub(super) T);

/// A resource's fair share in the filling heap, with the resource's version.
pub(super) type Share = Least<u64>;

/// A time (or virtual-clock target) for an id, valid while the id's stamp equals the entry's.
pub(super) type Due = Least<u32>;

impl<T: PartialEq> Eq for Least<T> {}

impl<T: PartialEq> PartialOrd for Least<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: PartialEq> Ord for Least<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Relative tolerance under which a flow counts as finished and two event times as equal.
pub(super) const EPS: f64 = 1e-12;

/// Max-min fair rates by progressive filling: repeatedly the resource with the smallest fair
/// share (remaining capacity over unfixed flows) fixes the rate of its unfixed flows.
/// `on_resource[r]` lists the flows crossing resource `r` (indices into `rate`) and `path(i)`
/// gives flow `i`'s resources; the rate of every listed flow is set.
pub(super) fn progressive_filling<'p>(
    capacities: &[f64],
    on_resource: &[Vec<u32>],
    path: impl Fn(usize) -> &'p [u32],
    rate: &mut [f64],
) {
    let mut left = capacities.to_vec();
    let mut count: Vec<u32> = on_resource.iter().map(|v| v.len() as u32).collect();
    let mut version = vec![0u64; capacities.len()];
    let mut fixed = vec![false; rate.len()];
    let mut heap = BinaryHeap::new();
    for (r, &c) in count.iter().enumerate() {
        if c > 0 {
            heap.push(Least(left[r] / c as f64, r as u32, 0));
        }
    }
    while let Some(Least(share, r, v)) = heap.pop() {
        let r = r as usize;
        if v != version[r] || count[r] == 0 {
            continue;
        }
        for &i in &on_resource[r] {
            let i = i as usize;
            if std::mem::replace(&mut fixed[i], true) {
                continue;
            }
            rate[i] = share;
            for &q in path(i) {
                let q = q as usize;
                left[q] = (left[q] - share).max(0.0);
                count[q] -= 1;
                version[q] += 1;
                if count[q] > 0 && q != r {
                    heap.push(Least(left[q] / count[q] as f64, q as u32, version[q]));
                }
            }
        }
    }
}
