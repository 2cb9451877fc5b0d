//! DSatur colouring of the conflict graph (paper 000, Annex A), generalised to slots, and a
//! first-fit colouring for when even DSatur would take too long.
//!
//! Vertices are transfers; a colour is a timeframe. With one slot per resource, two transfers
//! conflict when their paths share a resource. A resource with `k` slots takes up to `k`
//! transfers of one colour: a colour becomes unavailable to the transfers of a resource once
//! `k` of them have it. The conflict graph is never built: the transfers of each resource are
//! the cliques it is made of, and a colour is pushed to a vertex's neighbours through them when
//! it fills the resource. A vertex's saturation is the number of colours it can no longer take.
//!
//! Cost: DSatur pushes each colour that fills a resource to the uncoloured transfers of that
//! resource (a bit test each), and keeps the uncoloured vertices in a max tree (saturation
//! first, then degree and index through the order of its leaves), so a step costs the pushes
//! it makes and a logarithm, not a scan of every vertex: in all, about the transfers of each
//! resource times the colours that fill it. The degrees are counted once, along a trie of the
//! paths that counts the transfers of resources shared by many paths once for all of them.
//! First fit costs about the total length of the paths.

use std::time::Instant;

use crate::error::{CoreError, CoreResult};
use crate::slots::{check_paths, checked_slots};

/// Colour classes (frames) of a DSatur colouring, each a list of transfer indices in
/// increasing order; frames are ordered by colour. `slots[r]` is the number of transfers
/// resource `r` carries at once (empty: one each).
///
/// The next vertex coloured is the uncoloured one of highest saturation, then of highest
/// conflict degree (distinct transfers it shares a resource with), then of lowest index; it
/// takes the lowest colour that none of its resources is full in.
pub fn dsatur(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> CoreResult<Vec<Vec<u32>>> {
    Ok(dsatur_until(paths, resources, slots, None)?.expect("no deadline to pass"))
}

/// [`dsatur`], given up when `deadline` passes: `Ok(None)` then, otherwise the same frames as
/// [`dsatur`] (`None`: no deadline).
///
/// For a search that has spent its budget and must still hand back a complete schedule: it
/// completes its partial schedule with DSatur if DSatur finishes in what is left of the budget,
/// and with [`first_fit`] otherwise. The clock is read between the phases of the work and every
/// 256 vertices while the degrees are counted and while colouring, so it overruns the deadline
/// by little.
pub fn dsatur_until(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    deadline: Option<Instant>,
) -> CoreResult<Option<Vec<Vec<u32>>>> {
    let slots = checked_slots(slots, resources)?;
    check_paths(paths, resources)?;
    let clock = &mut Clock::new(deadline);
    if clock.passed() {
        return Ok(None);
    }
    let n = paths.len();
    let Some(degree) = conflict_degrees(paths, resources, clock) else {
        return Ok(None);
    };
    // Vertices renamed in the order of the tie-break, highest degree then lowest index, so the
    // first leaf of largest key in the tree is the vertex to colour.
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&v| std::cmp::Reverse(degree[v as usize]));
    drop(degree);
    let mut graph = Cliques::new(order.iter().map(|&v| &paths[v as usize][..]), resources);
    if clock.passed() {
        return Ok(None);
    }
    let mut queue = MaxTree::new(n);
    let mut full = FullColours::new(resources);
    let mut blocked = BlockedColours::new(n);
    let mut frames: Vec<Vec<u32>> = Vec::new();
    // in_colour[r][c]: transfers of colour c on resource r (kept for resources with slots only).
    let mut in_colour: Vec<Vec<u32>> = vec![Vec::new(); resources];
    for _ in 0..n {
        if clock.expired() {
            return Ok(None);
        }
        let v = queue.leftmost_max();
        queue.remove(v);
        graph.remove(v);
        let c = full.smallest_free(graph.path(v));
        if c as usize == frames.len() {
            frames.push(Vec::new());
            full.make_room(frames.len());
            blocked.make_room(frames.len());
        }
        frames[c as usize].push(order[v]);
        for &r in &paths[order[v] as usize] {
            let k = slots[r as usize];
            if k > 1 {
                let counts = &mut in_colour[r as usize];
                if counts.len() <= c as usize {
                    counts.resize(c as usize + 1, 0);
                }
                counts[c as usize] += 1;
                if counts[c as usize] < k {
                    continue;
                }
            }
            // Full already only if r is twice in the path.
            if full.contains(r, c) {
                continue;
            }
            full.insert(r, c);
            let (column, bit) = blocked.column(c);
            for &u in graph.uncoloured(r) {
                let word = &mut column[u as usize];
                if *word & bit == 0 {
                    *word |= bit;
                    queue.raise(u as usize);
                }
            }
        }
    }
    for f in &mut frames {
        f.sort_unstable();
    }
    Ok(Some(frames))
}

/// A deadline, if any, and a count of the calls to [`Clock::expired`], which reads the clock at
/// the first call and every [`Clock::EVERY`] calls after it.
struct Clock {
    deadline: Option<Instant>,
    calls: u32,
}

impl Clock {
    const EVERY: u32 = 256;

    fn new(deadline: Option<Instant>) -> Self {
        Clock { deadline, calls: 0 }
    }

    /// True if the clock, read now, is past the deadline (between the phases of the work).
    fn passed(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// True if the clock is read at this call and is past the deadline.
    fn expired(&mut self) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        let read = self.calls.is_multiple_of(Self::EVERY);
        self.calls = self.calls.wrapping_add(1);
        read && Instant::now() >= deadline
    }
}

/// Resource lists indexed both ways: the distinct resources of each transfer (a resource listed
/// twice in a path once), and the transfers of each resource in increasing order.
struct Incidence {
    /// Resources of transfer `t`: `resource[path_start[t]..path_start[t + 1]]`.
    path_start: Vec<usize>,
    resource: Vec<u32>,
    /// Transfers of resource `r`: `transfer[user_start[r]..user_start[r + 1]]`; entry `e`
    /// stands for `resource[occurrence[e]]` in the path of `transfer[e]`.
    user_start: Vec<usize>,
    transfer: Vec<u32>,
    occurrence: Vec<u32>,
}

impl Incidence {
    fn new<'a>(paths: impl Iterator<Item = &'a [u32]>, resources: usize) -> Self {
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
        let mut occurrence = vec![0u32; resource.len()];
        for t in 0..path_start.len() - 1 {
            let first = path_start[t];
            for (i, &r) in resource[first..path_start[t + 1]].iter().enumerate() {
                let r = r as usize;
                transfer[fill[r]] = t as u32;
                occurrence[fill[r]] = (first + i) as u32;
                fill[r] += 1;
            }
        }
        Incidence {
            path_start,
            resource,
            user_start,
            transfer,
            occurrence,
        }
    }

    fn path(&self, t: usize) -> &[u32] {
        &self.resource[self.path_start[t]..self.path_start[t + 1]]
    }

    fn users(&self, r: usize) -> &[u32] {
        &self.transfer[self.user_start[r]..self.user_start[r + 1]]
    }
}

/// The cliques of the conflict graph (the transfers of each resource), each list with its
/// uncoloured transfers first, in no particular order.
struct Cliques {
    lists: Incidence,
    /// Uncoloured transfers of resource `r`: the first `live[r]` of its list.
    live: Vec<u32>,
    /// Entry in the lists of each occurrence of a resource in a path.
    entry: Vec<u32>,
}

impl Cliques {
    fn new<'a>(paths: impl Iterator<Item = &'a [u32]>, resources: usize) -> Self {
        let lists = Incidence::new(paths, resources);
        let live = (0..resources)
            .map(|r| (lists.user_start[r + 1] - lists.user_start[r]) as u32)
            .collect();
        let mut entry = vec![0u32; lists.resource.len()];
        for (e, &o) in lists.occurrence.iter().enumerate() {
            entry[o as usize] = e as u32;
        }
        Cliques { lists, live, entry }
    }

    fn path(&self, t: usize) -> &[u32] {
        self.lists.path(t)
    }

    /// The uncoloured transfers of resource `r`, in no particular order.
    fn uncoloured(&self, r: u32) -> &[u32] {
        let start = self.lists.user_start[r as usize];
        &self.lists.transfer[start..start + self.live[r as usize] as usize]
    }

    /// Take transfer `t` out of the uncoloured transfers of its resources.
    fn remove(&mut self, t: usize) {
        let lists = &mut self.lists;
        for o in lists.path_start[t]..lists.path_start[t + 1] {
            let r = lists.resource[o] as usize;
            let e = self.entry[o] as usize;
            self.live[r] -= 1;
            let last = lists.user_start[r] + self.live[r] as usize;
            lists.transfer.swap(e, last);
            lists.occurrence.swap(e, last);
            self.entry[lists.occurrence[e] as usize] = e as u32;
            self.entry[o] = last as u32;
        }
    }
}

/// Number of distinct transfers each transfer conflicts with; `None` if `clock` expired.
///
/// The union of the transfers of a path's resources is counted along a trie of the paths,
/// their resources sorted most used first: paths that start alike (the resources they share
/// with many others) count those resources' transfers once for all of them. A transfer is
/// marked with the trie node that counted it, and is in the union at a node while that node is
/// on the way down to it.
fn conflict_degrees(paths: &[Vec<u32>], resources: usize, clock: &mut Clock) -> Option<Vec<u32>> {
    let n = paths.len();
    let lists = Incidence::new(paths.iter().map(|p| &p[..]), resources);
    if clock.passed() {
        return None;
    }
    // Resources renamed by decreasing number of transfers.
    let mut by_use: Vec<u32> = (0..resources as u32).collect();
    by_use.sort_by_key(|&r| std::cmp::Reverse(lists.users(r as usize).len()));
    let mut rank = vec![0u32; resources];
    for (i, &r) in by_use.iter().enumerate() {
        rank[r as usize] = i as u32;
    }
    let mut keyed: Vec<u32> = lists.resource.iter().map(|&r| rank[r as usize]).collect();
    for t in 0..n {
        keyed[lists.path_start[t]..lists.path_start[t + 1]].sort_unstable();
    }
    let key = |t: u32| &keyed[lists.path_start[t as usize]..lists.path_start[t as usize + 1]];
    let mut sweep: Vec<u32> = (0..n as u32).collect();
    sweep.sort_unstable_by(|&a, &b| key(a).cmp(key(b)));
    if clock.passed() {
        return None;
    }
    // mark[u]: (depth, node) of the trie node that counted u.
    let mut mark = vec![(u32::MAX, 0u32); n];
    // The way down to the current node: its resources, nodes, and the transfers counted.
    let mut down: Vec<u32> = Vec::new();
    let mut node_at: Vec<u32> = Vec::new();
    let mut union: Vec<u32> = vec![0];
    let mut nodes = 0u32;
    let mut degree = vec![0u32; n];
    for &v in &sweep {
        if clock.expired() {
            return None;
        }
        let path = key(v);
        let common = path.iter().zip(&down).take_while(|(a, b)| a == b).count();
        down.truncate(common);
        node_at.truncate(common);
        union.truncate(common + 1);
        for depth in common..path.len() {
            let node = nodes;
            nodes += 1;
            down.push(path[depth]);
            node_at.push(node);
            let mut added = 0;
            for &u in lists.users(by_use[path[depth] as usize] as usize) {
                let (d, m) = mark[u as usize];
                if node_at.get(d as usize) != Some(&m) {
                    mark[u as usize] = (depth as u32, node);
                    added += 1;
                }
            }
            union.push(union[depth] + added);
        }
        // The union holds v itself unless its path is empty.
        degree[v as usize] = union[path.len()].saturating_sub(1);
    }
    Some(degree)
}

/// A key per leaf (0: removed; otherwise one more than the saturation of the leaf's vertex)
/// in a complete binary tree whose inner nodes hold the largest key below them.
struct MaxTree {
    size: usize,
    node: Vec<u32>,
}

impl MaxTree {
    /// `n` leaves of key 1 (saturation 0).
    fn new(n: usize) -> Self {
        let size = n.next_power_of_two().max(1);
        let mut node = vec![0u32; 2 * size];
        node[size..size + n].fill(1);
        for i in (1..size).rev() {
            node[i] = node[2 * i].max(node[2 * i + 1]);
        }
        MaxTree { size, node }
    }

    /// The first leaf of the largest key (the tree must have a leaf not removed).
    fn leftmost_max(&self) -> usize {
        let mut i = 1;
        while i < self.size {
            i = if self.node[2 * i] == self.node[i] {
                2 * i
            } else {
                2 * i + 1
            };
        }
        i - self.size
    }

    /// Add one to the key of `leaf`.
    fn raise(&mut self, leaf: usize) {
        let mut i = leaf + self.size;
        let key = self.node[i] + 1;
        self.node[i] = key;
        i /= 2;
        while i >= 1 && self.node[i] < key {
            self.node[i] = key;
            i /= 2;
        }
    }

    /// Set the key of `leaf` to 0.
    fn remove(&mut self, leaf: usize) {
        let mut i = leaf + self.size;
        self.node[i] = 0;
        i /= 2;
        while i >= 1 {
            let key = self.node[2 * i].max(self.node[2 * i + 1]);
            if self.node[i] == key {
                break;
            }
            self.node[i] = key;
            i /= 2;
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

/// The colours each uncoloured vertex can no longer take (those its resources are full in), as
/// bitsets: bit `c % 64` of word `v` of column `c / 64` for colour `c` and vertex `v`. Pushing
/// a colour to the transfers of a resource goes through one column of `n` words (a bit test
/// each) rather than through a bitset per vertex; the number of set bits of a vertex is its
/// saturation.
struct BlockedColours {
    n: usize,
    columns: Vec<Vec<u64>>,
}

impl BlockedColours {
    fn new(n: usize) -> Self {
        BlockedColours {
            n,
            columns: Vec::new(),
        }
    }

    /// Make room for colours below `colours`.
    fn make_room(&mut self, colours: usize) {
        while self.columns.len() * 64 < colours {
            self.columns.push(vec![0; self.n]);
        }
    }

    /// The column of colour `c` (for which there is room) and its bit in the column's words.
    fn column(&mut self, c: u32) -> (&mut [u64], u64) {
        (&mut self.columns[(c / 64) as usize], 1 << (c % 64))
    }
}

/// Frames of a first-fit colouring: the transfers taken in the order given, each into the
/// lowest frame in which every resource of its path has a free slot (a resource listed twice
/// in a path takes two). Frames list transfer indices in increasing order. `slots[r]` is the
/// number of transfers resource `r` carries at once (empty: one each).
///
/// For when there is no time even for DSatur (see [`dsatur_until`]): it never looks at the
/// conflicts between transfers, only at the frames each resource is full in, so it costs
/// about the total length of the paths (a few milliseconds for tens of thousands of
/// transfers), where DSatur goes through the transfers of each resource for every colour that
/// fills it and first counts every transfer's conflicts; its schedules are usually longer.
pub fn first_fit(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> CoreResult<Vec<Vec<u32>>> {
    let slots = checked_slots(slots, resources)?;
    check_paths(paths, resources)?;
    let mut occupancy = Occupancy::new(slots);
    let mut frames: Vec<Vec<u32>> = Vec::new();
    // seen[r] == t + 1: resource r already met in the path of transfer t.
    let mut seen = vec![0usize; resources];
    let mut repeated: Vec<(u32, u32)> = Vec::new();
    for (t, path) in paths.iter().enumerate() {
        repeated.clear();
        for &r in path {
            if std::mem::replace(&mut seen[r as usize], t + 1) == t + 1 {
                repeated.push((r, 0));
            }
        }
        let f = if repeated.is_empty() {
            occupancy.first_free(path, 0)
        } else {
            // Rare: count the slots each repeated resource needs, and step past the frames
            // where they are not all free.
            repeated.sort_unstable();
            repeated.dedup();
            for (r, need) in repeated.iter_mut() {
                *need = path.iter().filter(|&&s| s == *r).count() as u32;
                let k = occupancy.slots[*r as usize];
                if *need > k {
                    return Err(CoreError::InvalidInput(format!(
                        "transfer {t} uses resource {r} {need} times but it has {k} slots"
                    )));
                }
            }
            let mut f = occupancy.first_free(path, 0);
            while !repeated
                .iter()
                .all(|&(r, need)| occupancy.used(r as usize, f) + need <= occupancy.slots[r as usize])
            {
                f = occupancy.first_free(path, f + 1);
            }
            f
        };
        for &r in path {
            occupancy.take(r as usize, f);
        }
        if f as usize == frames.len() {
            frames.push(Vec::new());
        }
        frames[f as usize].push(t as u32);
    }
    Ok(frames)
}

/// The frames each resource is full in.
struct Occupancy {
    slots: Vec<u32>,
    /// `full[r]`: bit `f` set when resource `r` is full in frame `f`.
    full: Vec<Vec<u64>>,
    /// `summary[r]`: bit `w` set when word `w` of `full[r]` is all set.
    summary: Vec<Vec<u64>>,
    /// `used[r][f]`: transfers of frame `f` on resource `r` (resources of several slots only).
    used: Vec<Vec<u32>>,
    /// `lowest[r]`: no frame below it has a free slot on `r`.
    lowest: Vec<u32>,
}

impl Occupancy {
    fn new(slots: Vec<u32>) -> Self {
        let resources = slots.len();
        Occupancy {
            slots,
            full: vec![Vec::new(); resources],
            summary: vec![Vec::new(); resources],
            used: vec![Vec::new(); resources],
            lowest: vec![0; resources],
        }
    }

    /// The lowest frame from `from` on in which every resource of `path` has a free slot.
    fn first_free(&mut self, path: &[u32], from: u32) -> u32 {
        let mut f = from;
        let mut agreed = 0;
        let mut i = 0;
        while agreed < path.len() {
            let g = self.next_free(path[i] as usize, f);
            if g == f {
                agreed += 1;
            } else {
                f = g;
                agreed = 1;
            }
            i = if i + 1 == path.len() { 0 } else { i + 1 };
        }
        f
    }

    /// The lowest frame from `from` on in which resource `r` has a free slot.
    fn next_free(&mut self, r: usize, from: u32) -> u32 {
        if from <= self.lowest[r] {
            let lowest = self.scan(r, self.lowest[r]);
            self.lowest[r] = lowest;
            lowest
        } else {
            self.scan(r, from)
        }
    }

    /// The first clear bit of `full[r]` from `from` on.
    fn scan(&self, r: usize, from: u32) -> u32 {
        let full = &self.full[r];
        let w = (from / 64) as usize;
        if w >= full.len() {
            return from;
        }
        let word = full[w] | ((1u64 << (from % 64)) - 1);
        if word != u64::MAX {
            return (w * 64) as u32 + (!word).trailing_zeros();
        }
        // The first word after w not all set, through the summary.
        let summary = &self.summary[r];
        let mut s = (w + 1) / 64;
        let mut bits = summary.get(s).copied().unwrap_or(0) | ((1u64 << ((w + 1) % 64)) - 1);
        while bits == u64::MAX {
            s += 1;
            bits = summary.get(s).copied().unwrap_or(0);
        }
        let w = s * 64 + (!bits).trailing_zeros() as usize;
        match full.get(w) {
            Some(&word) => (w * 64) as u32 + (!word).trailing_zeros(),
            None => (w * 64) as u32,
        }
    }

    /// Transfers of frame `f` on resource `r`.
    fn used(&self, r: usize, f: u32) -> u32 {
        if self.slots[r] == 1 {
            let w = (f / 64) as usize;
            self.full[r].get(w).map_or(0, |&word| ((word >> (f % 64)) & 1) as u32)
        } else {
            self.used[r].get(f as usize).copied().unwrap_or(0)
        }
    }

    /// Put one more transfer on resource `r` in frame `f` (which has a free slot on it).
    fn take(&mut self, r: usize, f: u32) {
        if self.slots[r] > 1 {
            let used = &mut self.used[r];
            if used.len() <= f as usize {
                used.resize(f as usize + 1, 0);
            }
            used[f as usize] += 1;
            if used[f as usize] < self.slots[r] {
                return;
            }
        }
        let full = &mut self.full[r];
        let w = (f / 64) as usize;
        if full.len() <= w {
            full.resize(w + 1, 0);
        }
        full[w] |= 1u64 << (f % 64);
        if full[w] == u64::MAX {
            let summary = &mut self.summary[r];
            if summary.len() <= w / 64 {
                summary.resize(w / 64 + 1, 0);
            }
            summary[w / 64] |= 1u64 << (w % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;
    use crate::testing::{
        brute_force_frames, is_valid_schedule, is_valid_with_slots, random_slot_traffic,
        two_switch_paths, Rng,
    };
    use std::time::Duration;

    /// DSatur as first written, one scan of every vertex per step: the reference the faster
    /// one must agree with exactly.
    fn reference_dsatur(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> Vec<Vec<u32>> {
        let slots = checked_slots(slots, resources).unwrap();
        let n = paths.len();
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); resources];
        for (t, path) in paths.iter().enumerate() {
            for &r in path {
                users[r as usize].push(t as u32);
            }
        }
        let mut mark = vec![u32::MAX; n];
        let degree: Vec<u32> = paths
            .iter()
            .enumerate()
            .map(|(v, path)| {
                let mut d = 0;
                mark[v] = v as u32;
                for &r in path {
                    for &u in &users[r as usize] {
                        if mark[u as usize] != v as u32 {
                            mark[u as usize] = v as u32;
                            d += 1;
                        }
                    }
                }
                d
            })
            .collect();
        let mut colours_of: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut saturation = vec![0u32; n];
        let mut colour = vec![u32::MAX; n];
        let mut frames: Vec<Vec<u32>> = Vec::new();
        let mut in_colour: Vec<Vec<u32>> = vec![Vec::new(); resources];
        for _ in 0..n {
            let mut v = usize::MAX;
            for u in 0..n {
                if colour[u] == u32::MAX
                    && (v == usize::MAX || (saturation[u], degree[u]) > (saturation[v], degree[v]))
                {
                    v = u;
                }
            }
            let bits = &colours_of[v];
            let c = bits
                .iter()
                .position(|&w| w != u64::MAX)
                .map_or(bits.len() * 64, |w| w * 64 + (!bits[w]).trailing_zeros() as usize)
                as u32;
            colour[v] = c;
            if c as usize == frames.len() {
                frames.push(Vec::new());
            }
            frames[c as usize].push(v as u32);
            for &r in &paths[v] {
                let k = slots[r as usize];
                if k > 1 {
                    let counts = &mut in_colour[r as usize];
                    if counts.len() <= c as usize {
                        counts.resize(c as usize + 1, 0);
                    }
                    counts[c as usize] += 1;
                    if counts[c as usize] < k {
                        continue;
                    }
                }
                for &u in &users[r as usize] {
                    let u = u as usize;
                    if colour[u] != u32::MAX {
                        continue;
                    }
                    let (w, b) = ((c / 64) as usize, c % 64);
                    if colours_of[u].len() <= w {
                        colours_of[u].resize(w + 1, 0);
                    }
                    if colours_of[u][w] & (1 << b) == 0 {
                        colours_of[u][w] |= 1 << b;
                        saturation[u] += 1;
                    }
                }
            }
        }
        for f in &mut frames {
            f.sort_unstable();
        }
        frames
    }

    /// `n` transfers over `resources` resources of 1 to `max_slots` slots (one each when
    /// `max_slots` is 1), paths of 1 to `max_len` distinct resources, and with `repeats` some
    /// resources listed twice.
    fn random_traffic(
        rng: &mut Rng,
        n: usize,
        resources: usize,
        max_slots: u64,
        max_len: u64,
        repeats: bool,
    ) -> (Vec<Vec<u32>>, Vec<u32>) {
        let slots = (0..resources).map(|_| 1 + rng.below(max_slots) as u32).collect();
        let paths = (0..n)
            .map(|_| {
                let len = 1 + rng.below(max_len) as usize;
                let mut p: Vec<u32> = (0..len).map(|_| rng.below(resources as u64) as u32).collect();
                if !repeats {
                    p.sort_unstable();
                    p.dedup();
                }
                p
            })
            .collect();
        (paths, slots)
    }

    /// A random all-to-all on hosts with an up and a down link each, over a few shared
    /// middle resources.
    fn random_all_to_all(rng: &mut Rng, hosts: u32, middle: u32, max_slots: u64) -> (Vec<Vec<u32>>, Vec<u32>) {
        let resources = 2 * hosts + middle;
        let slots = (0..resources).map(|_| 1 + rng.below(max_slots) as u32).collect();
        let mut paths = Vec::new();
        for s in 0..hosts {
            for d in 0..hosts {
                if s != d {
                    let mut p = vec![s, hosts + d];
                    for _ in 0..rng.below(3) {
                        p.push(2 * hosts + rng.below(middle as u64) as u32);
                    }
                    p.sort_unstable();
                    p.dedup();
                    paths.push(p);
                }
            }
        }
        (paths, slots)
    }

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
    fn disjoint_transfers_share_one_frame() {
        let paths = vec![vec![0], vec![1], vec![2]];
        assert_eq!(dsatur(&paths, 3, &[]).unwrap(), vec![vec![0, 1, 2]]);
        assert_eq!(first_fit(&paths, 3, &[]).unwrap(), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn no_transfers_no_frames() {
        assert!(dsatur(&[], 2, &[]).unwrap().is_empty());
        assert!(first_fit(&[], 2, &[]).unwrap().is_empty());
        // A transfer on no resource conflicts with nothing.
        assert_eq!(dsatur(&[vec![], vec![0]], 1, &[]).unwrap(), vec![vec![0, 1]]);
        assert_eq!(first_fit(&[vec![], vec![0]], 1, &[]).unwrap(), vec![vec![0, 1]]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            dsatur(&[vec![4]], 2, &[]),
            Err(CoreError::InvalidInput(_))
        ));
        assert!(matches!(
            dsatur_until(&[vec![0]], 2, &[1], None),
            Err(CoreError::InvalidInput(_))
        ));
        assert!(matches!(
            first_fit(&[vec![4]], 2, &[]),
            Err(CoreError::InvalidInput(_))
        ));
        assert!(matches!(
            first_fit(&[vec![0]], 1, &[0]),
            Err(CoreError::InvalidInput(_))
        ));
        // Twice on a resource of one slot: no frame can take it.
        assert!(matches!(
            first_fit(&[vec![0, 0]], 1, &[]),
            Err(CoreError::InvalidInput(_))
        ));
    }

    #[test]
    fn many_colours_cross_word_boundaries() {
        // 70 transfers on one resource: a clique of 70 needs 70 frames.
        let paths = vec![vec![0u32]; 70];
        let frames = dsatur(&paths, 1, &[]).unwrap();
        assert_eq!(frames.len(), 70);
        assert!(is_valid_schedule(&paths, &frames));
        assert_eq!(first_fit(&paths, 1, &[]).unwrap(), frames);
    }

    #[test]
    fn slots_let_a_resource_carry_several_transfers() {
        // Five transfers on one resource of 2 slots: 3 frames.
        let paths = vec![vec![0u32]; 5];
        let frames = dsatur(&paths, 1, &[2]).unwrap();
        assert_eq!(frames.len(), 3);
        assert!(is_valid_with_slots(&paths, &[2], &frames));
        assert_eq!(
            first_fit(&paths, 1, &[2]).unwrap(),
            vec![vec![0, 1], vec![2, 3], vec![4]]
        );
    }

    #[test]
    fn slot_colourings_are_valid_and_never_below_the_optimum() {
        let mut rng = Rng(77);
        for _ in 0..300 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let frames = dsatur(&paths, slots.len(), &slots).unwrap();
            assert!(
                is_valid_with_slots(&paths, &slots, &frames),
                "{paths:?} {slots:?}"
            );
            let optimum = brute_force_frames(&paths, &slots);
            assert!(frames.len() >= optimum);
            let greedy = first_fit(&paths, slots.len(), &slots).unwrap();
            assert!(is_valid_with_slots(&paths, &slots, &greedy), "{paths:?} {slots:?}");
            assert!(greedy.len() >= optimum);
        }
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
            let (paths, slots) = random_traffic(&mut rng, n, resources, max_slots, 5, round % 5 == 4);
            for slots in [&slots[..], &[]] {
                assert_eq!(
                    dsatur(&paths, resources, slots).unwrap(),
                    reference_dsatur(&paths, resources, slots),
                    "round {round}"
                );
            }
        }
        for round in 0..12u64 {
            let (paths, slots) = random_all_to_all(&mut rng, 8 + round as u32 * 2, 6, 1 + round % 4);
            let resources = slots.len();
            for slots in [&slots[..], &[]] {
                assert_eq!(
                    dsatur(&paths, resources, slots).unwrap(),
                    reference_dsatur(&paths, resources, slots),
                    "all-to-all {round}"
                );
            }
        }
    }

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
            let mut clock = Clock::new(None);
            assert_eq!(
                conflict_degrees(&paths, resources, &mut clock),
                Some(expected),
                "{paths:?}"
            );
        }
    }

    #[test]
    fn dsatur_until_without_deadline_or_in_time_is_dsatur() {
        let mut rng = Rng(9);
        let later = Instant::now() + Duration::from_secs(3600);
        for round in 0..50u64 {
            let (paths, slots) = random_traffic(&mut rng, 300, 40, 1 + round % 3, 4, false);
            let frames = dsatur(&paths, 40, &slots).unwrap();
            assert_eq!(dsatur_until(&paths, 40, &slots, None).unwrap().as_ref(), Some(&frames));
            assert_eq!(dsatur_until(&paths, 40, &slots, Some(later)).unwrap(), Some(frames));
        }
    }

    #[test]
    fn dsatur_until_a_passed_deadline_gives_up_at_once() {
        let mut rng = Rng(5);
        let (paths, slots) = random_all_to_all(&mut rng, 120, 10, 1);
        let passed = Instant::now();
        let started = Instant::now();
        assert_eq!(dsatur_until(&paths, slots.len(), &slots, Some(passed)).unwrap(), None);
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
        assert_eq!(dsatur_until(&paths, slots.len(), &slots, Some(soon)).unwrap(), None);
    }

    #[test]
    fn first_fit_places_each_transfer_in_its_lowest_free_frame() {
        // By brute force: each transfer, in order, in the lowest frame all its resources have
        // room in.
        fn reference(paths: &[Vec<u32>], slots: &[u32]) -> Vec<Vec<u32>> {
            let mut on: Vec<Vec<u32>> = Vec::new();
            let mut frames: Vec<Vec<u32>> = Vec::new();
            for (t, path) in paths.iter().enumerate() {
                let mut need = vec![0u32; slots.len()];
                path.iter().for_each(|&r| need[r as usize] += 1);
                let fits = |on: &Vec<u32>| path.iter().all(|&r| on[r as usize] + need[r as usize] <= slots[r as usize]);
                let f = on.iter().position(fits).unwrap_or(on.len());
                if f == on.len() {
                    on.push(vec![0; slots.len()]);
                    frames.push(Vec::new());
                }
                path.iter().for_each(|&r| on[f][r as usize] += 1);
                frames[f].push(t as u32);
            }
            frames
        }
        let mut rng = Rng(31);
        for round in 0..300u64 {
            let n = 1 + rng.below(if round < 250 { 200 } else { 3000 }) as usize;
            let resources = 1 + rng.below(30) as usize;
            let max_slots = [1, 2, 3][round as usize % 3];
            let (mut paths, slots) = random_traffic(&mut rng, n, resources, max_slots, 4, round % 4 == 3);
            if round % 4 == 3 {
                // Keep only repeats that fit.
                for p in &mut paths {
                    let mut count = vec![0u32; resources];
                    p.retain(|&r| {
                        count[r as usize] += 1;
                        count[r as usize] <= slots[r as usize]
                    });
                }
            }
            let frames = first_fit(&paths, resources, &slots).unwrap();
            assert!(is_valid_with_slots(&paths, &slots, &frames), "round {round}");
            assert_eq!(frames, reference(&paths, &slots), "round {round}");
            if max_slots == 1 {
                let frames = first_fit(&paths, resources, &[]).unwrap();
                assert!(is_valid_schedule(&paths, &frames));
            }
        }
    }

    #[test]
    fn first_fit_skips_long_runs_of_full_frames() {
        // Resources a = 0, b = 1, d = 2: d full in frames 0..5000, b in 5000..9001 but 7000.
        let mut paths = vec![vec![0u32, 2]; 5000];
        paths.extend(vec![vec![0u32, 1]; 2000]);
        paths.push(vec![0]);
        paths.extend(vec![vec![0u32, 1]; 2000]);
        paths.push(vec![1, 2]);
        paths.push(vec![1, 2]);
        let frames = first_fit(&paths, 3, &[]).unwrap();
        assert!(is_valid_schedule(&paths, &frames));
        assert_eq!(frames.len(), 9002);
        assert_eq!(frames[7000], vec![7000, 9001]);
        assert_eq!(frames[9001], vec![9002]);
    }

    #[test]
    fn first_fit_and_dsatur_are_fast_on_a_large_all_to_all() {
        let mut rng = Rng(8);
        let (paths, slots) = random_all_to_all(&mut rng, 160, 40, 3);
        let frames = first_fit(&paths, slots.len(), &slots).unwrap();
        assert!(is_valid_with_slots(&paths, &slots, &frames));
        let frames = dsatur(&paths, slots.len(), &slots).unwrap();
        assert!(is_valid_with_slots(&paths, &slots, &frames));
    }
}
