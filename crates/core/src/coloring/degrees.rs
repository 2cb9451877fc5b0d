//! Conflict degrees for DSatur's tie-break: how many distinct transfers each transfer shares a
//! resource with, counted along a trie of the paths; and the incidence lists (resources of each
//! transfer, transfers of each resource) they and DSatur's cliques are built on.

use std::thread;

use super::dsatur::Clock;
use super::members::Members;

/// Resource lists indexed both ways: the distinct resources of each transfer (a resource listed
/// twice in a path once), and the transfers of each resource in increasing order.
pub(super) struct Incidence {
    /// Resources of transfer `t`: `resource[path_start[t]..path_start[t + 1]]`.
    pub(super) path_start: Vec<usize>,
    pub(super) resource: Vec<u32>,
    /// Transfers of resource `r`: `transfer[user_start[r]..user_start[r + 1]]`.
    pub(super) user_start: Vec<usize>,
    pub(super) transfer: Vec<u32>,
}

impl Incidence {
    pub(super) fn new<'a>(paths: impl Iterator<Item = &'a [u32]>, resources: usize) -> Self {
        let mut path_start = vec![0];
        let mut resource = Vec::new();
        // seen[r] == t + 1: r already in the path of transfer t.
        let mut seen = vec![0usize; resources];
        for (t, path) in paths.enumerate() {
            for &r in path {
                if std::mem::replace(&mut seen[r as usize], t + 1) != t + 1 {
                    resource.push(r);
                }
            }
            path_start.push(resource.len());
        }
        let mut user_start = vec![0usize; resources + 1];
        for &r in &resource {
            user_start[r as usize + 1] += 1;
        }
        for r in 0..resources {
            user_start[r + 1] += user_start[r];
        }
        let mut fill = user_start[..resources].to_vec();
        let mut transfer = vec![0u32; resource.len()];
        for t in 0..path_start.len() - 1 {
            for &r in &resource[path_start[t]..path_start[t + 1]] {
                transfer[fill[r as usize]] = t as u32;
                fill[r as usize] += 1;
            }
        }
        Incidence {
            path_start,
            resource,
            user_start,
            transfer,
        }
    }

    pub(super) fn path(&self, t: usize) -> &[u32] {
        &self.resource[self.path_start[t]..self.path_start[t + 1]]
    }

    pub(super) fn users(&self, r: usize) -> &[u32] {
        &self.transfer[self.user_start[r]..self.user_start[r + 1]]
    }
}

/// Number of distinct transfers each transfer conflicts with; `None` if `clock` expired.
///
/// The union of the transfers of a path's resources is counted along a trie of the paths:
/// paths that start alike count the transfers of the resources they start with once for all of
/// them. Of two orders of the resources in the paths, the trie takes the one that costs it
/// fewer transfers to read: most used first (the resources shared by many paths, as the links
/// between two switches of a small network), or the order of the resources' indices (which
/// follows the network's structure where every resource is about as used, as in a fat tree).
/// The transfers a node adds to the union are those of its resource that cross none of the
/// resources above it, read from DSatur's `members` (each transfer beside its other resources,
/// streamed against a mark per resource, a group whose key is marked passed over whole):
/// before, a mark per transfer, a cache miss per transfer read (at a million transfers on a
/// fat tree, DSatur 13.9 s -> 12.6 s).
pub(super) fn conflict_degrees(
    lists: &Incidence,
    members: &Members,
    resources: usize,
    clock: &mut Clock,
) -> Option<Vec<u32>> {
    let n = lists.path_start.len() - 1;
    // The two candidate tries, built side by side where threads are worth it.
    let trie_of = |by_use: &bool| {
        let mut order: Vec<u32> = (0..resources as u32).collect();
        if *by_use {
            order.sort_by_key(|&r| std::cmp::Reverse(lists.users(r as usize).len()));
        }
        let trie = Trie::new(lists, order);
        let cost = trie.cost(lists);
        (trie, cost)
    };
    let mut tries = if workers(n) > 1 {
        on_threads(&[true, false], trie_of)
    } else {
        vec![trie_of(&true), trie_of(&false)]
    };
    let (indexed, indexed_cost) = tries.pop().expect("two tries");
    let (used, used_cost) = tries.pop().expect("two tries");
    if clock.passed() {
        return None;
    }
    let trie = if indexed_cost < used_cost {
        indexed
    } else {
        used
    };
    count_along(lists, members, &trie, workers(n), clock)
}

/// How many threads count the degrees of `n` transfers: those the machine runs at once (up
/// to 4) from 65,536 transfers on, where each has work enough to pay for its start; one
/// below. The degrees are the same whatever the number.
pub(super) fn workers(n: usize) -> usize {
    if n < 1 << 16 {
        return 1;
    }
    thread::available_parallelism().map_or(1, |p| p.get().min(4))
}

/// `work` done for each of `runs`, the first on this thread and every other on a thread of its
/// own, the results in the order of the runs (a panic of one carried on on this thread).
pub(super) fn on_threads<R: Sync, T: Send>(runs: &[R], work: impl Fn(&R) -> T + Sync) -> Vec<T> {
    let Some((first, rest)) = runs.split_first() else {
        return Vec::new();
    };
    thread::scope(|s| {
        let others: Vec<_> = rest.iter().map(|run| s.spawn(|| work(run))).collect();
        let mut done = vec![work(first)];
        done.extend(others.into_iter().map(joined));
        done
    })
}

/// What the thread of `handle` returned; its panic carried on on this thread.
pub(super) fn joined<T>(handle: thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The conflict degrees counted along `trie`; `None` if `clock` expired. The sweep is cut
/// into `parts` runs (the [`workers`]), each counted on a thread of its own from an
/// empty way down (which costs each run one path more than the sweep in one piece: at a
/// million transfers on a fat tree, the 1.7 s of the count take 0.9 s on two threads).
fn count_along(
    lists: &Incidence,
    members: &Members,
    trie: &Trie,
    parts: usize,
    clock: &Clock,
) -> Option<Vec<u32>> {
    let n = lists.path_start.len() - 1;
    let runs: Vec<&[u32]> = trie.sweep.chunks(n.div_ceil(parts).max(1)).collect();
    // Each run with a clock of its own; the first, on this thread, probes the interrupt.
    let clock: &Clock = clock;
    let counted = on_threads(&runs, |run| {
        count_run(lists, members, trie, run, &mut clock.fork())
    });
    let mut degree = vec![0u32; n];
    for (run, counted) in runs.iter().zip(counted) {
        for (&v, d) in run.iter().zip(counted?) {
            degree[v as usize] = d;
        }
    }
    Some(degree)
}

/// The conflict degrees of the transfers of `run` (a run of the trie's sweep), in its order.
fn count_run(
    lists: &Incidence,
    members: &Members,
    trie: &Trie,
    run: &[u32],
    clock: &mut Clock,
) -> Option<Vec<u32>> {
    let resources = lists.user_start.len() - 1;
    let by_rank = &trie.by_rank;
    let key = |t: u32| trie.key(lists, t);
    // on_way[r]: 1 if resource r is on the way down to the current node (and the padding
    // resource of the members' entries never).
    let mut on_way = vec![0u64; Members::pad(resources) as usize + 1];
    let mut scratch = Vec::new();
    // The way down to the current node: its resources (as ranks), and the transfers counted.
    let mut down: Vec<u32> = Vec::new();
    let mut union: Vec<u32> = vec![0];
    let mut degree = Vec::with_capacity(run.len());
    for &v in run {
        if clock.expired() {
            return None;
        }
        let path = key(v);
        let common = path.iter().zip(&down).take_while(|(a, b)| a == b).count();
        for &gone in &down[common..] {
            on_way[by_rank[gone as usize] as usize] = 0;
        }
        down.truncate(common);
        union.truncate(common + 1);
        for depth in common..path.len() {
            let r = by_rank[path[depth] as usize];
            // The transfers of r not counted yet: those that cross no resource above it.
            let added = members.unmarked(r, &on_way, &mut scratch);
            down.push(path[depth]);
            on_way[r as usize] = 1;
            union.push(union[depth] + added);
        }
        // The union holds v itself unless its path is empty.
        degree.push(union[path.len()].saturating_sub(1));
    }
    Some(degree)
}

/// The paths with their resources as ranks in an order of the resources (`by_rank[i]` is the
/// resource of rank `i`), each path's ranks increasing, and the paths sorted by them.
struct Trie {
    by_rank: Vec<u32>,
    keyed: Vec<u32>,
    sweep: Vec<u32>,
}

impl Trie {
    fn new(lists: &Incidence, by_rank: Vec<u32>) -> Self {
        let n = lists.path_start.len() - 1;
        let mut rank = vec![0u32; by_rank.len()];
        for (i, &r) in by_rank.iter().enumerate() {
            rank[r as usize] = i as u32;
        }
        let mut keyed: Vec<u32> = lists.resource.iter().map(|&r| rank[r as usize]).collect();
        for t in 0..n {
            keyed[lists.path_start[t]..lists.path_start[t + 1]].sort_unstable();
        }
        let key = |t: u32| &keyed[lists.path_start[t as usize]..lists.path_start[t as usize + 1]];
        let mut sweep: Vec<u32> = (0..n as u32).collect();
        sweep.sort_unstable_by(|&a, &b| key(a).cmp(key(b)));
        Trie {
            by_rank,
            keyed,
            sweep,
        }
    }

    fn key<'a>(&'a self, lists: &Incidence, t: u32) -> &'a [u32] {
        &self.keyed[lists.path_start[t as usize]..lists.path_start[t as usize + 1]]
    }

    /// How many transfers counting the degrees along this trie reads: those of each node's
    /// resource.
    fn cost(&self, lists: &Incidence) -> u64 {
        let mut previous: &[u32] = &[];
        let mut cost = 0;
        for &v in &self.sweep {
            let path = self.key(lists, v);
            let common = path
                .iter()
                .zip(previous)
                .take_while(|(a, b)| a == b)
                .count();
            for &r in &path[common..] {
                cost += lists.users(self.by_rank[r as usize] as usize).len() as u64;
            }
            previous = path;
        }
        cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coloring::tests::random_traffic;
    use crate::testing::Rng;

    #[test]
    fn degrees_count_each_conflicting_transfer_once() {
        let mut rng = Rng(404);
        for round in 0..300u64 {
            let n = rng.below(120) as usize;
            let resources = 1 + rng.below(25) as usize;
            let (mut paths, _) = random_traffic(&mut rng, n, resources, 1, 6, round % 3 == 2);
            if round % 7 == 0 && n > 0 {
                paths[0].clear();
            }
            let expected: Vec<u32> = (0..n)
                .map(|v| {
                    (0..n)
                        .filter(|&u| u != v && paths[u].iter().any(|r| paths[v].contains(r)))
                        .count() as u32
                })
                .collect();
            let never = crate::interrupt::Interrupt::never();
            let mut clock = Clock::new(None, &never);
            let lists = Incidence::new(paths.iter().map(|p| &p[..]), resources);
            let members = Members::new(&lists);
            // Along either trie, whichever is chosen.
            for by_rank in [
                (0..resources as u32).collect(),
                (0..resources as u32).rev().collect(),
            ] {
                let trie = Trie::new(&lists, by_rank);
                // In one piece, or in runs on threads of their own.
                for parts in 1..=3 {
                    assert_eq!(
                        count_along(&lists, &members, &trie, parts, &clock).as_ref(),
                        Some(&expected),
                        "{paths:?} in {parts}"
                    );
                }
            }
            assert_eq!(
                conflict_degrees(&lists, &members, resources, &mut clock),
                Some(expected),
                "{paths:?}"
            );
        }
    }
}
