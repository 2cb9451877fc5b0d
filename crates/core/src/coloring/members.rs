//! DSatur's cliques: the transfers of each resource, to which a colour that fills the resource
//! is pushed, each kept beside its other resources, so that whether the colour blocked a
//! transfer already is read from the small table of the colours full on each resource.

use std::ops::Range;

use super::degrees::{on_threads, workers, Incidence};

/// The transfers of each resource (the cliques of the conflict graph), coloured ones among them
/// until a list is compacted: a list is cut down to its uncoloured transfers once a
/// thirty-second of it is coloured, so that pushing a colour costs about the uncoloured
/// transfers (compacting often costs little beside the pushes: a list is read about 32 times
/// in all, and pushed to once per colour).
///
/// Why each transfer's other resources beside it: a transfer is blocked for a colour once one
/// of its resources is full in it, so when a colour fills a resource, those of its transfers it
/// newly blocks are the ones none of whose other resources is full in it yet: a few bits of one
/// column of the full colours (resources × 64 bits, in cache) read beside the transfers as they
/// are streamed. The alternative, a bit per transfer and colour, is a bitset of all the
/// transfers per colour (128 KiB each, 160 MB in all at a million transfers on a fat tree): a
/// cache miss per visit, 40% of DSatur's time there. The transfers newly blocked are gathered
/// first and raised after (no branch that depends on the bits in the streaming loop).
///
/// Why groups: the transfers of a resource are grouped by the other resource they cross that
/// most of them cross (its key), a group whose key is full in the colour is passed over whole,
/// and the entries of the others leave the key out (it is not full when they are read: DSatur
/// at a million transfers 15.1 s -> 13.6 s, alternating runs). On a fat tree the transfers of a
/// host's down link also cross the links above it, which the same vertex fills, so a third of
/// the visits go (2.8 G down to 2.0 G at a million transfers).
///
/// Why two keys: a group is cut again by the other resource most of its transfers cross (its
/// second key), so that a group is passed over when either key is full. Only keys that
/// [`KEYED`] transfers or more cross are taken: the groups under them are worth the check,
/// and smaller groups cost more to go through one by one than their visits (DSatur at a
/// million transfers on fat-tree:k=16, alternating runs: one key 10.0-10.9 s, two keys
/// 10.1-10.5 s, two keys of 32 transfers or more 8.2-9.0 s; three keys, any size, 15 s).
#[derive(PartialEq)]
pub(super) struct Members {
    /// The transfer of each entry; the entries of a group are consecutive, in increasing order
    /// of transfer (near each other in memory).
    transfer: Vec<u32>,
    /// The other resources of each entry but its group's keys, as many for the entries of a
    /// group (the shorter padded with [`Members::pad`]).
    others: Others,
    /// Groups of resource `r`: `groups[group_start[r]..group_start[r + 1]]`.
    group_start: Vec<usize>,
    groups: Vec<Group>,
    /// The entries of each resource, and how many of them are uncoloured.
    len: Vec<u32>,
    uncoloured: Vec<u32>,
    /// Bit `t % 64` of word `t / 64`: transfer `t` is coloured.
    coloured: Vec<u64>,
}

/// Other resources as 16 bits when they fit (a narrower stream to read), else 32.
#[derive(PartialEq)]
enum Others {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

/// Entries `start..start + len` of a resource, of transfers all crossing both resources of
/// `keys` too ([`Members::pad`] for a key that none of them shares with enough others); their
/// other resources but the keys from `others` on, `width` for each.
#[derive(PartialEq)]
struct Group {
    keys: [u32; 2],
    len: u32,
    width: u32,
    start: usize,
    others: usize,
}

/// The key of the group of transfers that share no other resource with [`KEYED`] others.
const NO_KEY: u32 = u32::MAX;

/// The fewest transfers of a list (or of a group, for its second key) that cross a resource
/// for it to be a key.
const KEYED: u32 = 32;

impl Members {
    /// The padding resource among `resources` resources: one past the last, which the caller
    /// keeps full in no colour.
    pub(super) fn pad(resources: usize) -> u32 {
        resources as u32
    }

    /// The members of every resource, built on as many threads as count the degrees.
    pub(super) fn new(lists: &Incidence) -> Self {
        Self::built_in(lists, workers(lists.path_start.len() - 1))
    }

    /// The members of every resource, those of `parts` runs of resources built each on a
    /// thread of its own and joined (the same whatever the parts: at a million transfers on a
    /// fat tree, DSatur 8.8-9.1 s -> 8.7-8.8 s in two parts).
    fn built_in(lists: &Incidence, parts: usize) -> Self {
        let resources = lists.user_start.len() - 1;
        let pad = Self::pad(resources);
        let per = resources.div_ceil(parts.max(1)).max(1);
        let runs: Vec<Range<usize>> = (0..resources)
            .step_by(per)
            .map(|a| a..(a + per).min(resources))
            .collect();
        let built = on_threads(&runs, |run| Built::of(lists, run.clone()));
        let mut transfer = Vec::with_capacity(lists.transfer.len());
        let mut others: Vec<u32> = Vec::new();
        let mut groups = Vec::new();
        let mut group_start = Vec::with_capacity(resources + 1);
        group_start.push(0);
        for part in built {
            let (entries, words, first_group) = (transfer.len(), others.len(), groups.len());
            groups.extend(part.groups.into_iter().map(|g| Group {
                start: g.start + entries,
                others: g.others + words,
                ..g
            }));
            group_start.extend(part.group_start[1..].iter().map(|&g| g + first_group));
            transfer.extend(part.transfer);
            others.extend(part.others);
        }
        let others = match u16::try_from(pad) {
            Ok(_) => Others::Narrow(others.into_iter().map(|o| o as u16).collect()),
            Err(_) => Others::Wide(others),
        };
        let len: Vec<u32> = (0..resources)
            .map(|r| lists.users(r).len() as u32)
            .collect();
        Members {
            transfer,
            others,
            group_start,
            groups,
            uncoloured: len.clone(),
            len,
            coloured: vec![0; (lists.path_start.len() - 1).div_ceil(64)],
        }
    }

    /// Transfer `t`, of resources `path`, is coloured.
    pub(super) fn colour(&mut self, t: usize, path: &[u32]) {
        self.coloured[t / 64] |= 1 << (t % 64);
        for &r in path {
            self.uncoloured[r as usize] -= 1;
        }
    }

    /// The most transfers [`Members::newly_blocked`] writes for resource `r`.
    pub(super) fn most_blocked(&self, r: u32) -> usize {
        self.len[r as usize] as usize
    }

    /// Resource `r` was just filled in a colour: into `newly` (at least
    /// [`Members::most_blocked`] long), the transfers of `r` that the colour did not block yet,
    /// those of which no other resource is full in it (bit `bit` of `column[o]` for resource
    /// `o`), and perhaps coloured transfers: how many. The list is compacted first if most of
    /// it is coloured.
    pub(super) fn newly_blocked(
        &mut self,
        r: u32,
        column: &[u64],
        bit: u32,
        newly: &mut [u32],
    ) -> usize {
        let r = r as usize;
        let groups = &mut self.groups[self.group_start[r]..self.group_start[r + 1]];
        if 32 * u64::from(self.uncoloured[r]) < 31 * u64::from(self.len[r]) {
            let coloured = &self.coloured;
            self.len[r] = match &mut self.others {
                Others::Narrow(others) => compact(groups, &mut self.transfer, others, coloured),
                Others::Wide(others) => compact(groups, &mut self.transfer, others, coloured),
            };
        }
        match &self.others {
            Others::Narrow(others) => gather(groups, &self.transfer, others, column, bit, newly),
            Others::Wide(others) => gather(groups, &self.transfer, others, column, bit, newly),
        }
    }

    /// How many transfers of resource `r` have none of their other resources marked (bit 0 of
    /// `marked[o]` for resource `o`), all of them uncoloured (before any is coloured); `scratch`
    /// is written over.
    pub(super) fn unmarked(&self, r: u32, marked: &[u64], scratch: &mut Vec<u32>) -> u32 {
        let r = r as usize;
        let groups = &self.groups[self.group_start[r]..self.group_start[r + 1]];
        scratch.clear();
        scratch.resize(self.len[r] as usize, 0);
        (match &self.others {
            Others::Narrow(others) => gather(groups, &self.transfer, others, marked, 0, scratch),
            Others::Wide(others) => gather(groups, &self.transfer, others, marked, 0, scratch),
        }) as u32
    }
}

/// The members of a run of resources, numbered from its first entry, word and group.
struct Built {
    transfer: Vec<u32>,
    others: Vec<u32>,
    groups: Vec<Group>,
    group_start: Vec<usize>,
}

impl Built {
    fn of(lists: &Incidence, run: Range<usize>) -> Self {
        let resources = lists.user_start.len() - 1;
        let pad = Members::pad(resources);
        let (mut transfer, mut others, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        let mut group_start = vec![0];
        // count[o]: transfers of the entries at hand that cross `o` (0 between them).
        let mut count = vec![0u32; resources];
        let mut keyed: Vec<(u32, u32)> = Vec::new();
        let mut subkeyed: Vec<(u32, u32)> = Vec::new();
        for r in run {
            let r32 = r as u32;
            keyed.clear();
            keyed.extend(lists.users(r).iter().map(|&u| (NO_KEY, u)));
            by_most_crossed(lists, &mut keyed, &[r32], &mut count);
            for run in keyed.chunk_by(|a, b| a.0 == b.0) {
                let key = run[0].0;
                subkeyed.clear();
                subkeyed.extend(run.iter().map(|&(_, u)| (NO_KEY, u)));
                by_most_crossed(lists, &mut subkeyed, &[r32, key], &mut count);
                for sub in subkeyed.chunk_by(|a, b| a.0 == b.0) {
                    let subkey = sub[0].0;
                    let mine = |u: u32| {
                        let path = lists.path(u as usize).iter().copied();
                        path.filter(move |&o| o != r32 && o != key && o != subkey)
                    };
                    // At least one, so that entries are never empty.
                    let width = sub.iter().map(|&(_, u)| mine(u).count()).max().unwrap_or(0);
                    let width = width.max(1);
                    let keep = |k: u32| if k == NO_KEY { pad } else { k };
                    groups.push(Group {
                        keys: [keep(key), keep(subkey)],
                        len: sub.len() as u32,
                        width: width as u32,
                        start: transfer.len(),
                        others: others.len(),
                    });
                    for &(_, u) in sub {
                        transfer.push(u);
                        let before = others.len();
                        others.extend(mine(u));
                        others.resize(before + width, pad);
                    }
                }
            }
            group_start.push(groups.len());
        }
        Built {
            transfer,
            others,
            groups,
            group_start,
        }
    }
}

/// Key each entry `(_, u)` with the resource of `u`'s path most crossed by the entries' paths
/// (the lowest of equals, none of `but`; [`NO_KEY`] where fewer than [`KEYED`] entries cross
/// each of the others), and sort them by key, then transfer. `count` is all zeros, and left
/// so.
fn by_most_crossed(lists: &Incidence, entries: &mut [(u32, u32)], but: &[u32], count: &mut [u32]) {
    for &(_, u) in entries.iter() {
        for &o in lists.path(u as usize) {
            count[o as usize] += 1;
        }
    }
    for (key, u) in entries.iter_mut() {
        let best = lists
            .path(*u as usize)
            .iter()
            .filter(|&&o| !but.contains(&o) && count[o as usize] >= KEYED)
            .max_by_key(|&&o| (count[o as usize], std::cmp::Reverse(o)));
        *key = best.copied().unwrap_or(NO_KEY);
    }
    for &(_, u) in entries.iter() {
        for &o in lists.path(u as usize) {
            count[o as usize] = 0;
        }
    }
    entries.sort_unstable();
}

/// Cut the groups down to their transfers not `coloured`: the entries left in all.
fn compact<O: Copy>(
    groups: &mut [Group],
    transfer: &mut [u32],
    others: &mut [O],
    coloured: &[u64],
) -> u32 {
    let mut total = 0;
    for g in groups {
        let w = g.width as usize;
        let mut kept = 0;
        for i in g.start..g.start + g.len as usize {
            let t = transfer[i] as usize;
            if (coloured[t / 64] >> (t % 64)) & 1 == 0 {
                let (from, to) = (g.others + (i - g.start) * w, g.others + kept * w);
                transfer[g.start + kept] = transfer[i];
                others.copy_within(from..from + w, to);
                kept += 1;
            }
        }
        g.len = kept as u32;
        total += kept as u32;
    }
    total
}

/// Write into `newly` (as long as the groups' entries) the transfers of the groups none of
/// whose other resources has bit `bit` set in `column`, passing over the groups of which a key
/// has it: how many. Entries of up to 6 other resources (paths of up to 7, as on fat trees, tori
/// and most networks) are read in fixed-size chunks (loops unrolled: 15.1 s -> 13.8 s at a million
/// transfers on a fat tree), longer ones one by one.
fn gather<O: Copy + Into<u32>>(
    groups: &[Group],
    transfer: &[u32],
    others: &[O],
    column: &[u64],
    bit: u32,
    newly: &mut [u32],
) -> usize {
    let mut found = 0;
    for g in groups {
        let w = g.width as usize;
        // The group's transfers cross its keys: if one is full in the colour already, all are
        // blocked already.
        if ((column[g.keys[0] as usize] | column[g.keys[1] as usize]) >> bit) & 1 != 0 {
            continue;
        }
        let transfer = &transfer[g.start..g.start + g.len as usize];
        let others = &others[g.others..g.others + g.len as usize * w];
        let newly = &mut newly[found..];
        found += match w {
            1 => gather_entries(transfer, others.as_chunks::<1>().0, column, bit, newly),
            2 => gather_entries(transfer, others.as_chunks::<2>().0, column, bit, newly),
            3 => gather_entries(transfer, others.as_chunks::<3>().0, column, bit, newly),
            4 => gather_entries(transfer, others.as_chunks::<4>().0, column, bit, newly),
            5 => gather_entries(transfer, others.as_chunks::<5>().0, column, bit, newly),
            6 => gather_entries(transfer, others.as_chunks::<6>().0, column, bit, newly),
            _ => gather_entries(transfer, others.chunks_exact(w), column, bit, newly),
        };
    }
    found
}

/// [`gather`] of one group, each of its `entries` the other resources of a transfer (arrays of
/// a fixed size where the group's width is small, so that the loop over them is unrolled).
#[inline(always)]
fn gather_entries<O: Copy + Into<u32>, E: AsRef<[O]>>(
    transfer: &[u32],
    entries: impl IntoIterator<Item = E>,
    column: &[u64],
    bit: u32,
    newly: &mut [u32],
) -> usize {
    let mut found = 0;
    for (&u, mine) in transfer.iter().zip(entries) {
        let full = mine
            .as_ref()
            .iter()
            .fold(0, |all, &o| all | column[o.into() as usize]);
        newly[found] = u;
        found += ((!full >> bit) & 1) as usize;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// Paths through a common resource 0, a first level of 4 resources and a second of 16
    /// below them, as a tree's links are: lists long enough for both keys.
    fn tree_paths(rng: &mut Rng, n: usize) -> (Vec<Vec<u32>>, usize) {
        let extra = 40;
        let paths = (0..n)
            .map(|t| {
                let mut p = vec![0, 1 + (t % 4) as u32, 5 + (t % 16) as u32];
                p.push(21 + rng.below(extra) as u32);
                if rng.below(3) == 0 {
                    p.push(21 + rng.below(extra) as u32);
                }
                p.sort_unstable();
                p.dedup();
                p
            })
            .collect();
        (paths, 21 + extra as usize)
    }

    #[test]
    fn pushes_find_the_transfers_none_of_whose_other_resources_is_full() {
        let mut rng = Rng(77);
        let (paths, resources) = tree_paths(&mut rng, 700);
        let lists = Incidence::new(paths.iter().map(|p| &p[..]), resources);
        let mut members = Members::new(&lists);
        // Built in runs of resources on threads of their own, the same.
        for parts in 2..=4 {
            assert!(Members::built_in(&lists, parts) == members, "in {parts}");
        }
        let pad = Members::pad(resources);
        let of_0 = &members.groups[members.group_start[0]..members.group_start[1]];
        assert!(of_0.iter().any(|g| g.keys[0] != pad && g.keys[1] != pad));
        let mut newly = vec![0; paths.len()];
        for round in 0..200 {
            // A random set of full resources (bit `bit` of their words), the keys among them.
            let bit = round % 64;
            let mut column = vec![0u64; pad as usize + 1];
            let full = rng.below(30);
            for _ in 0..full {
                column[rng.below(resources as u64) as usize] |= 1 << bit;
            }
            for r in 0..resources as u32 {
                let found = members.newly_blocked(r, &column, bit, &mut newly);
                let mut newly = newly[..found].to_vec();
                newly.sort_unstable();
                let expected: Vec<u32> = lists
                    .users(r as usize)
                    .iter()
                    .copied()
                    .filter(|&u| {
                        let others = lists.path(u as usize).iter().filter(|&&o| o != r);
                        others
                            .copied()
                            .all(|o| (column[o as usize] >> bit) & 1 == 0)
                    })
                    .collect();
                assert_eq!(newly, expected, "resource {r}, round {round}");
            }
        }
    }
}
