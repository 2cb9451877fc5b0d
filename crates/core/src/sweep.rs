//! Sub-topology sweep (papers 000 §7 and 001 §2).
//!
//! Hosts hang off switches ("groups"). An allocation takes the first `n_i` hosts of group `i`;
//! its traffic is the half all-to-all among the allocated hosts. Because every host reaches the
//! fabric through access links of its own, and switch-to-switch routes do not depend on the host,
//! the load of every resource is a closed form of the allocation vector:
//!
//! * an access link carries the `N` (or `N - 1`) transfers sent or received by its host, or both
//!   when it is shared-duplex;
//! * a fabric resource carries `sum n_i * n_j` over the ordered group pairs routed through it.
//!
//! This makes the sweep over all allocations a tight loop without building any traffic.

use crate::interrupt::{Interrupt, EVERY};
use std::collections::HashMap;

use crate::error::{CoreError, CoreResult};
use crate::rational::Ratio;

/// Which transfers of its host an access link carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessDirection {
    /// Host to switch: the host's sent transfers.
    Up,
    /// Switch to host: the host's received transfers.
    Down,
    /// A shared-duplex access link: both.
    Both,
}

/// One access resource of a host.
#[derive(Debug, Clone)]
pub struct AccessLink {
    pub capacity: u64,
    pub direction: AccessDirection,
}

/// A fabric resource and the ordered group pairs `(i, j)` whose routes use it.
#[derive(Debug, Clone)]
pub struct FabricResource {
    pub capacity: u64,
    pub pairs: Vec<(usize, usize)>,
}

/// The sweep problem: groups of hosts with their access links, and the fabric resources.
#[derive(Debug, Clone)]
pub struct SweepModel {
    /// `access[i][k]`: access links of the `k`-th host of group `i`.
    pub access: Vec<Vec<Vec<AccessLink>>>,
    pub fabric: Vec<FabricResource>,
    /// Whether every host also sends to itself (the Swiss-T1 convention).
    pub include_self: bool,
}

/// Allocations of equal host count and equal liquid throughput.
#[derive(Debug, Clone)]
pub struct SweepClass {
    pub hosts: u32,
    /// Liquid throughput in bytes/s, exact.
    pub liquid_throughput: Ratio,
    /// Throughput of the same allocation on an ideal crossbar (access links only), exact.
    pub crossbar_throughput: Ratio,
    /// Number of allocations in the class.
    pub count: u64,
    /// The first allocation of the class in enumeration order.
    pub allocation: Vec<u32>,
}

/// The bound of one allocation: the most loaded resource as `transfers / capacity`.
#[derive(Debug, Clone, Copy)]
pub struct AllocationBound {
    pub hosts: u32,
    pub transfers: u64,
    /// Duration Λ in seconds per byte of transfer size: `max(count / capacity)`.
    pub duration: Ratio,
    /// Duration counting access links only (an ideal crossbar).
    pub crossbar_duration: Ratio,
}

impl AllocationBound {
    /// Liquid throughput in bytes/s (independent of the transfer size).
    pub fn liquid_throughput(&self) -> Ratio {
        throughput(self.transfers, self.duration)
    }

    /// Crossbar throughput in bytes/s.
    pub fn crossbar_throughput(&self) -> Ratio {
        throughput(self.transfers, self.crossbar_duration)
    }
}

fn throughput(transfers: u64, duration: Ratio) -> Ratio {
    // transfers * size / (duration * size) with duration = count / capacity.
    Ratio::new(transfers as u128 * duration.den, duration.num).reduced()
}

/// Largest number of allocations a sweep accepts.
pub const MAX_ALLOCATIONS: u64 = 2_000_000_000;

/// Precomputed per-group minima so that one allocation costs O(groups + fabric pairs).
struct Prepared {
    /// `min_cap[i][n][d]`: smallest capacity of direction `d` among the first `n` hosts of group
    /// `i` (`u64::MAX` when none).
    min_cap: Vec<Vec<[u64; 3]>>,
    radices: Vec<u32>,
}

fn direction_index(d: AccessDirection) -> usize {
    match d {
        AccessDirection::Up => 0,
        AccessDirection::Down => 1,
        AccessDirection::Both => 2,
    }
}

impl SweepModel {
    fn check(&self) -> CoreResult<()> {
        if self.access.is_empty() {
            return Err(CoreError::InvalidInput(
                "the sweep needs at least one group of hosts".into(),
            ));
        }
        for (i, group) in self.access.iter().enumerate() {
            for (k, host) in group.iter().enumerate() {
                if host.iter().any(|a| a.capacity == 0) {
                    return Err(CoreError::InvalidInput(format!(
                        "host {k} of group {i} has an access link of zero capacity"
                    )));
                }
            }
        }
        let groups = self.access.len();
        for (r, res) in self.fabric.iter().enumerate() {
            if res.capacity == 0 {
                return Err(CoreError::InvalidInput(format!(
                    "fabric resource {r} has zero capacity"
                )));
            }
            if let Some(&(i, j)) = res.pairs.iter().find(|&&(i, j)| i >= groups || j >= groups) {
                return Err(CoreError::InvalidInput(format!(
                    "fabric resource {r} names group pair ({i}, {j}) but there are {groups} groups"
                )));
            }
        }
        Ok(())
    }

    /// Number of allocations: the product of `(hosts in group + 1)`.
    pub fn allocation_count(&self) -> CoreResult<u64> {
        let mut total: u64 = 1;
        for group in &self.access {
            total = total
                .checked_mul(group.len() as u64 + 1)
                .filter(|&t| t <= MAX_ALLOCATIONS)
                .ok_or_else(|| {
                    CoreError::TooLarge(format!("more than {MAX_ALLOCATIONS} allocations"))
                })?;
        }
        Ok(total)
    }

    fn prepare(&self) -> Prepared {
        let min_cap = self
            .access
            .iter()
            .map(|group| {
                let mut prefix = vec![[u64::MAX; 3]];
                for host in group {
                    let mut next = *prefix.last().unwrap();
                    for a in host {
                        let d = direction_index(a.direction);
                        next[d] = next[d].min(a.capacity);
                    }
                    prefix.push(next);
                }
                prefix
            })
            .collect();
        let radices = self.access.iter().map(|g| g.len() as u32 + 1).collect();
        Prepared { min_cap, radices }
    }

    /// The bound of one allocation (`allocation[i]` hosts of group `i`).
    pub fn bound(&self, allocation: &[u32]) -> CoreResult<AllocationBound> {
        self.check()?;
        if allocation.len() != self.access.len() {
            return Err(CoreError::InvalidInput(format!(
                "allocation has {} entries but there are {} groups",
                allocation.len(),
                self.access.len()
            )));
        }
        for (i, (&n, group)) in allocation.iter().zip(&self.access).enumerate() {
            if n as usize > group.len() {
                return Err(CoreError::InvalidInput(format!(
                    "allocation entry {i} is {n} but group {i} has {} hosts",
                    group.len()
                )));
            }
        }
        Ok(self.bound_unchecked(&self.prepare(), allocation))
    }

    fn bound_unchecked(&self, prep: &Prepared, alloc: &[u32]) -> AllocationBound {
        let hosts: u32 = alloc.iter().sum();
        let n = hosts as u128;
        let own = if self.include_self { 0 } else { 1 };
        let transfers = (n * n - own * n) as u64;
        // Transfers an access link carries, by direction.
        let per_direction = [n - own, n - own, (2 * n).saturating_sub(1 + own)];
        let mut crossbar = Ratio::zero();
        for (i, &k) in alloc.iter().enumerate() {
            if k == 0 {
                continue;
            }
            let caps = &prep.min_cap[i][k as usize];
            for d in 0..3 {
                if caps[d] != u64::MAX {
                    let load = Ratio::new(per_direction[d], caps[d] as u128);
                    if load > crossbar {
                        crossbar = load;
                    }
                }
            }
        }
        let mut duration = crossbar;
        for res in &self.fabric {
            let mut count: u128 = 0;
            for &(i, j) in &res.pairs {
                let (a, b) = (alloc[i] as u128, alloc[j] as u128);
                count += a * b;
                if i == j && !self.include_self {
                    count -= a;
                }
            }
            let load = Ratio::new(count, res.capacity as u128);
            if load > duration {
                duration = load;
            }
        }
        AllocationBound {
            hosts,
            transfers,
            duration,
            crossbar_duration: crossbar,
        }
    }

    /// Enumerate every allocation and group them into classes of equal (host count, liquid
    /// throughput), sorted by host count then throughput. Allocations with no transfer are skipped.
    ///
    /// `progress` is called now and then with the number of allocations done; `interrupt` is
    /// probed every few thousand allocations.
    pub fn classes(
        &self,
        mut progress: impl FnMut(u64),
        interrupt: &Interrupt,
    ) -> CoreResult<(Vec<SweepClass>, u64)> {
        self.check()?;
        let total = self.allocation_count()?;
        let prep = self.prepare();
        let mut alloc = vec![0u32; self.access.len()];
        let mut index: HashMap<(u32, u128, u128), usize> = HashMap::new();
        let mut classes: Vec<SweepClass> = Vec::new();
        for done in 0..total {
            let b = self.bound_unchecked(&prep, &alloc);
            if b.transfers > 0 {
                let thr = b.liquid_throughput();
                let key = (b.hosts, thr.num, thr.den);
                match index.get(&key) {
                    Some(&c) => classes[c].count += 1,
                    None => {
                        index.insert(key, classes.len());
                        classes.push(SweepClass {
                            hosts: b.hosts,
                            liquid_throughput: thr,
                            crossbar_throughput: b.crossbar_throughput(),
                            count: 1,
                            allocation: alloc.clone(),
                        });
                    }
                }
            }
            advance_mixed_radix(&mut alloc, &prep.radices);
            if done % EVERY as u64 == EVERY as u64 - 1 {
                interrupt.check()?;
            }
            if done % 65_536 == 65_535 {
                progress(done + 1);
            }
        }
        progress(total);
        classes.sort_by(|a, b| {
            a.hosts
                .cmp(&b.hosts)
                .then(a.liquid_throughput.cmp(&b.liquid_throughput))
        });
        Ok((classes, total))
    }
}

/// Next allocation in lexicographic order, the last entry varying fastest.
fn advance_mixed_radix(digits: &mut [u32], radices: &[u32]) {
    for i in (0..digits.len()).rev() {
        digits[i] += 1;
        if digits[i] < radices[i] {
            return;
        }
        digits[i] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duplex(cap: u64) -> Vec<AccessLink> {
        vec![
            AccessLink {
                capacity: cap,
                direction: AccessDirection::Up,
            },
            AccessLink {
                capacity: cap,
                direction: AccessDirection::Down,
            },
        ]
    }

    /// Two switches joined by one cable, `h` hosts on each.
    fn two_groups(h: usize, include_self: bool) -> SweepModel {
        SweepModel {
            access: vec![vec![duplex(100); h], vec![duplex(100); h]],
            fabric: vec![
                FabricResource {
                    capacity: 100,
                    pairs: vec![(0, 1)],
                },
                FabricResource {
                    capacity: 100,
                    pairs: vec![(1, 0)],
                },
            ],
            include_self,
        }
    }

    #[test]
    fn bound_matches_hand_count() {
        // 3 + 2 hosts: 25 transfers; the inter-switch links carry 3 * 2 = 6 each.
        let m = two_groups(4, true);
        let b = m.bound(&[3, 2]).unwrap();
        assert_eq!(b.transfers, 25);
        assert_eq!(b.duration, Ratio::new(6, 100));
        assert_eq!(b.crossbar_duration, Ratio::new(5, 100));
        let thr = b.liquid_throughput();
        assert_eq!((thr.num, thr.den), (1250, 3)); // 25 * 100 / 6
    }

    #[test]
    fn without_self_transfers() {
        let m = two_groups(4, false);
        let b = m.bound(&[2, 0]).unwrap();
        assert_eq!(b.transfers, 2);
        assert_eq!(b.duration, Ratio::new(1, 100));
    }

    #[test]
    fn shared_duplex_access_counts_both_ways() {
        let mut m = two_groups(1, true);
        m.access[0][0] = vec![AccessLink {
            capacity: 100,
            direction: AccessDirection::Both,
        }];
        let b = m.bound(&[1, 1]).unwrap();
        // host 0 sends 2 and receives 2, one of them its own: 3 transfers.
        assert_eq!(b.duration, Ratio::new(3, 100));
    }

    #[test]
    fn an_interrupt_stops_the_enumeration() {
        // (100 + 1)^2 allocations: more than two probe intervals.
        let m = two_groups(100, true);
        let stop = || true;
        let r = m.classes(|_| {}, &Interrupt::new(&stop));
        assert_eq!(r.unwrap_err(), CoreError::Interrupted);
        let quiet = || false;
        let (_, total) = m.classes(|_| {}, &Interrupt::new(&quiet)).unwrap();
        assert_eq!(total, 101 * 101);
    }

    #[test]
    fn classes_cover_every_allocation() {
        let m = two_groups(2, true);
        let (classes, total) = m.classes(|_| {}, &Interrupt::never()).unwrap();
        assert_eq!(total, 9);
        let counted: u64 = classes.iter().map(|c| c.count).sum();
        assert_eq!(counted, 8); // all but the empty allocation
                                // Sorted by hosts, then throughput.
        for w in classes.windows(2) {
            assert!((w[0].hosts, w[0].liquid_throughput) <= (w[1].hosts, w[1].liquid_throughput));
        }
        // Allocations [1,1]: 4 transfers, links carry 2 ... [2,0]: 4 transfers, access carries 2.
        let two: Vec<_> = classes.iter().filter(|c| c.hosts == 2).collect();
        assert_eq!(two.len(), 1);
        assert_eq!(two[0].count, 3);
    }

    #[test]
    fn rejects_bad_input() {
        let mut m = two_groups(1, true);
        assert!(m.bound(&[1]).is_err());
        assert!(m.bound(&[2, 0]).is_err());
        m.fabric[0].pairs.push((0, 5));
        assert!(matches!(m.bound(&[1, 1]), Err(CoreError::InvalidInput(_))));
        let big = SweepModel {
            access: vec![vec![duplex(1); 9]; 12],
            fabric: vec![],
            include_self: true,
        };
        assert!(matches!(
            big.classes(|_| {}, &Interrupt::never()),
            Err(CoreError::TooLarge(_))
        ));
    }
}
