//! Bipartite matching on a graph whose edges die over time: Hopcroft–Karp that starts from any
//! matching, so that after a few edges are removed only the freed vertices are re-augmented.
//!
//! Shared by the schedulers that peel matchings off a weighted bipartite graph (GGP and OGGP of
//! paper 004; the decomposition of a period into matchings later).

/// A bipartite multigraph with `n` vertices on each side; edge `e` joins `left[e]` to
/// `right[e]`. Edges can be removed; the adjacency of every left vertex holds only live edges,
/// so no search rescans dead ones.
#[derive(Clone, Debug)]
pub struct DynamicBipartite {
    n: usize,
    left: Vec<usize>,
    right: Vec<usize>,
    alive: Vec<bool>,
    adjacency: Vec<Vec<usize>>,
    /// Position of each live edge in its left vertex's adjacency (for O(1) removal).
    position: Vec<usize>,
}

impl DynamicBipartite {
    /// The graph of `edges` (left, right), both sides of size `n`.
    pub fn new(n: usize, edges: &[(usize, usize)]) -> Self {
        let mut adjacency = vec![Vec::new(); n];
        let mut position = Vec::with_capacity(edges.len());
        for (e, &(l, _)) in edges.iter().enumerate() {
            position.push(adjacency[l].len());
            adjacency[l].push(e);
        }
        DynamicBipartite {
            n,
            left: edges.iter().map(|&(l, _)| l).collect(),
            right: edges.iter().map(|&(_, r)| r).collect(),
            alive: vec![true; edges.len()],
            adjacency,
            position,
        }
    }

    pub fn side(&self) -> usize {
        self.n
    }

    pub fn is_alive(&self, e: usize) -> bool {
        self.alive[e]
    }

    pub fn ends(&self, e: usize) -> (usize, usize) {
        (self.left[e], self.right[e])
    }

    /// Remove edge `e` (no-op when already removed).
    pub fn remove(&mut self, e: usize) {
        if !self.alive[e] {
            return;
        }
        self.alive[e] = false;
        let list = &mut self.adjacency[self.left[e]];
        let at = self.position[e];
        let last = *list.last().expect("a live edge is in its adjacency");
        list.swap_remove(at);
        if last != e {
            self.position[last] = at;
        }
    }
}

/// A matching: the edge matched at each left vertex and at each right vertex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matching {
    pub at_left: Vec<Option<usize>>,
    pub at_right: Vec<Option<usize>>,
}

impl Matching {
    pub fn empty(n: usize) -> Self {
        Matching {
            at_left: vec![None; n],
            at_right: vec![None; n],
        }
    }

    pub fn size(&self) -> usize {
        self.at_left.iter().filter(|m| m.is_some()).count()
    }

    pub fn is_perfect(&self) -> bool {
        self.at_left.iter().all(Option::is_some)
    }

    /// The matched edges, by left vertex.
    pub fn edges(&self) -> impl Iterator<Item = usize> + '_ {
        self.at_left.iter().flatten().copied()
    }

    /// Unmatch edge `e` if it is matched.
    pub fn unmatch(&mut self, g: &DynamicBipartite, e: usize) {
        let (l, r) = g.ends(e);
        if self.at_left[l] == Some(e) {
            self.at_left[l] = None;
            self.at_right[r] = None;
        }
    }
}

const UNREACHED: u32 = u32::MAX;

/// Grow `m` to a maximum matching of the live edges that `usable` accepts (Hopcroft–Karp,
/// phases of shortest augmenting paths from the free left vertices). Edges of `m` must be live
/// and usable. Returns the size reached.
pub fn augment_to_maximum(
    g: &DynamicBipartite,
    m: &mut Matching,
    usable: &impl Fn(usize) -> bool,
) -> usize {
    let n = g.side();
    let mut layer = vec![UNREACHED; n];
    let mut queue = Vec::with_capacity(n);
    let mut next = vec![0usize; n];
    loop {
        // BFS from every free left vertex, layering left vertices by alternating distance.
        queue.clear();
        for (l, (layer, matched)) in layer.iter_mut().zip(&m.at_left).enumerate() {
            if matched.is_none() {
                *layer = 0;
                queue.push(l);
            } else {
                *layer = UNREACHED;
            }
        }
        // The search stops at the first free right vertex it meets: the layers built so far hold
        // an augmenting path, and after a few edges die (one freed vertex, the common case when
        // peeling) scanning the rest of its layer would cost more than another phase.
        let mut shortest = UNREACHED;
        let mut head = 0;
        'layers: while head < queue.len() {
            let l = queue[head];
            head += 1;
            for &e in &g.adjacency[l] {
                if !usable(e) {
                    continue;
                }
                match m.at_right[g.right[e]] {
                    None => {
                        shortest = layer[l] + 1;
                        break 'layers;
                    }
                    Some(f) => {
                        let l2 = g.left[f];
                        if layer[l2] == UNREACHED {
                            layer[l2] = layer[l] + 1;
                            queue.push(l2);
                        }
                    }
                }
            }
        }
        if shortest == UNREACHED {
            return m.size();
        }
        next.iter_mut().for_each(|x| *x = 0);
        let mut grew = false;
        for l in 0..n {
            if m.at_left[l].is_none() && augment_from(g, m, usable, &layer, &mut next, l) {
                grew = true;
            }
        }
        if !grew {
            return m.size();
        }
    }
}

/// Depth-first search along the layers for an augmenting path from free left vertex `start`;
/// iterative so that long paths do not overflow the stack.
fn augment_from(
    g: &DynamicBipartite,
    m: &mut Matching,
    usable: &impl Fn(usize) -> bool,
    layer: &[u32],
    next: &mut [usize],
    start: usize,
) -> bool {
    // The path as the edges taken from each left vertex on it.
    let mut path: Vec<(usize, usize)> = Vec::new();
    let mut l = start;
    loop {
        let adj = &g.adjacency[l];
        let mut advanced = false;
        while next[l] < adj.len() {
            let e = adj[next[l]];
            next[l] += 1;
            if !usable(e) {
                continue;
            }
            match m.at_right[g.right[e]] {
                None => {
                    path.push((l, e));
                    for &(pl, pe) in &path {
                        let r = g.right[pe];
                        m.at_left[pl] = Some(pe);
                        m.at_right[r] = Some(pe);
                    }
                    return true;
                }
                Some(f) => {
                    let l2 = g.left[f];
                    if layer[l2] == layer[l] + 1 {
                        path.push((l, e));
                        l = l2;
                        advanced = true;
                        break;
                    }
                }
            }
        }
        if !advanced {
            // Dead end: this vertex is exhausted for the phase; step back.
            match path.pop() {
                None => return false,
                Some((prev, _)) => l = prev,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// Maximum matching size by trying every assignment (tiny graphs only).
    fn brute_force_maximum(n: usize, edges: &[(usize, usize)], usable: &[bool]) -> usize {
        fn go(l: usize, n: usize, adj: &[Vec<usize>], used: &mut Vec<bool>) -> usize {
            if l == n {
                return 0;
            }
            let mut best = go(l + 1, n, adj, used);
            for &r in &adj[l] {
                if !used[r] {
                    used[r] = true;
                    best = best.max(1 + go(l + 1, n, adj, used));
                    used[r] = false;
                }
            }
            best
        }
        let mut adj = vec![Vec::new(); n];
        for (e, &(l, r)) in edges.iter().enumerate() {
            if usable[e] {
                adj[l].push(r);
            }
        }
        go(0, n, &adj, &mut vec![false; n])
    }

    fn check_matching(g: &DynamicBipartite, m: &Matching) {
        for (l, e) in m.at_left.iter().enumerate() {
            if let Some(e) = *e {
                assert!(g.is_alive(e));
                assert_eq!(g.ends(e).0, l);
                assert_eq!(m.at_right[g.ends(e).1], Some(e));
            }
        }
        assert_eq!(m.size(), m.at_right.iter().filter(|x| x.is_some()).count());
    }

    #[test]
    fn reaches_the_maximum_from_any_start_and_after_removals() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut pick = |m: usize| rng.below(m as u64) as usize;
        for _ in 0..400 {
            let n = 1 + pick(6);
            let count = pick(3 * n + 1);
            let edges: Vec<(usize, usize)> = (0..count).map(|_| (pick(n), pick(n))).collect();
            let mut g = DynamicBipartite::new(n, &edges);
            let mut m = Matching::empty(n);
            let size = augment_to_maximum(&g, &mut m, &|_| true);
            check_matching(&g, &m);
            assert_eq!(
                size,
                brute_force_maximum(n, &edges, &vec![true; edges.len()])
            );
            // Remove some edges, unmatch them, re-augment from what is left.
            for e in 0..edges.len() {
                if pick(3) == 0 {
                    m.unmatch(&g, e);
                    g.remove(e);
                }
            }
            let alive: Vec<bool> = (0..edges.len()).map(|e| g.is_alive(e)).collect();
            let size = augment_to_maximum(&g, &mut m, &|_| true);
            check_matching(&g, &m);
            assert_eq!(size, brute_force_maximum(n, &edges, &alive));
            // Only some edges usable: the maximum among them.
            let usable: Vec<bool> = (0..edges.len()).map(|e| alive[e] && e % 2 == 0).collect();
            let mut m2 = Matching::empty(n);
            let size = augment_to_maximum(&g, &mut m2, &|e| usable[e]);
            assert_eq!(size, brute_force_maximum(n, &edges, &usable));
        }
    }
}
