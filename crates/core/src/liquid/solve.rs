//! A schedule of the whole traffic: the symmetric attempt first when a group is given, then
//! the search for each target length from the proven lower bound up (with restarts on traffics
//! with slots) until a schedule is found or the optimum proven, and, when a budget runs out,
//! the best schedule known (see `completion`).

use std::time::Instant;

use super::completion::best_known;
use super::orbit_cover::orbit_cover;
use super::result::finish;
use super::search::{Mode, Outcome, Search};
use super::symmetry::Group;
use super::traffic::Traffic;
use super::{bounds, Deadlines, SearchOptions, SearchResult, Source};
use crate::coloring::dsatur_until;
use crate::error::CoreResult;
use crate::interrupt::Interrupt;
use crate::progress::Phase;

pub(super) fn search_schedule(
    traffic: &Traffic,
    opts: &SearchOptions,
    deadlines: Deadlines,
    interrupt: &Interrupt,
) -> CoreResult<SearchResult> {
    let lambda = traffic.duration();
    let bound = if opts.bounds {
        bounds::extra_frames_bound(traffic)
    } else {
        lambda
    };
    let mut result = SearchResult {
        frames: Vec::new(),
        duration: lambda,
        lower_bound: bound,
        liquid: false,
        optimal: false,
        nodes: 0,
        frames_tried: 0,
        memo_hits: 0,
        stopped_by: None,
        source: Source::Search,
        restarts: 0,
        memory_bytes: 0,
        symmetry_order: 1,
    };
    let mut node_limit = opts.node_limit;
    let mut search_deadline = deadlines.search;
    if let Some(structure) = opts.orbits.as_ref().filter(|_| bound == lambda) {
        let nodes = node_limit.map_or(opts.symmetric_nodes, |n| n.min(opts.symmetric_nodes));
        let now = Instant::now();
        let half = search_deadline.map(|d| now + d.saturating_duration_since(now) / 2);
        interrupt.report(|p| p.enter(Phase::OrbitCover));
        let found = orbit_cover(traffic, structure, nodes, opts.memo_bytes, half, interrupt)?;
        result.nodes = found.nodes;
        result.memory_bytes = found.memory_bytes;
        if let Some(frames) = found.frames {
            result.frames = frames;
            result.source = Source::OrbitCover;
            result.symmetry_order = found.order;
            return Ok(finish(result, lambda));
        }
        node_limit = node_limit.map(|n| n.saturating_sub(found.nodes));
        if node_limit == Some(0) {
            search_deadline = Some(Instant::now());
        }
    }
    let mut symmetric_partial = Vec::new();
    if bound == lambda && !opts.symmetry.is_empty() {
        interrupt.report(|p| p.enter(Phase::Group));
        if let Some(group) = Group::of_traffic(traffic, &opts.symmetry, search_deadline, interrupt)
        {
            if (lambda as usize).is_multiple_of(group.order()) {
                interrupt.report(|p| p.enter(Phase::Symmetric));
                let found = symmetric_schedule(traffic, &group, opts, search_deadline, interrupt)?;
                result.nodes += found.nodes;
                result.memory_bytes = result.memory_bytes.max(found.memory_bytes);
                symmetric_partial = found.best_partial;
                if let Some(frames) = found.frames {
                    result.frames = frames;
                    result.source = Source::Symmetric;
                    result.symmetry_order = group.order() as u32;
                    return Ok(finish(result, lambda));
                }
                node_limit = node_limit.map(|n| n.saturating_sub(found.nodes));
                if node_limit == Some(0) {
                    // The whole node budget went to the symmetric attempt.
                    search_deadline = Some(Instant::now());
                }
            }
        }
    }
    let plain_opts;
    let opts = if node_limit != opts.node_limit {
        plain_opts = SearchOptions {
            node_limit,
            ..opts.clone()
        };
        &plain_opts
    } else {
        opts
    };
    let mut search = Search::new(traffic, opts, Mode::Schedule, search_deadline, interrupt);
    search.nodes = result.nodes;
    interrupt.report(|p| p.enter(Phase::Search));
    // The incumbent is computed only when the liquid search does not settle the question.
    let mut incumbent: Option<(Vec<Vec<u32>>, Source)> = None;
    let mut target = bound;
    if bound > lambda && !opts.optimize {
        // No liquid schedule exists, and the optimum is not asked for.
        interrupt.report(|p| p.enter(Phase::Completion));
        incumbent = Some(best_known(traffic, &[], deadlines.answer, interrupt)?);
    } else {
        // With slots, a frame is a count to meet on several resources at once, and the search
        // is heavy-tailed: attempts with a doubling node budget and another tie-break each,
        // keeping the sub-traffics proven to fail, settle what one long attempt may not. The
        // last attempt always runs to the end, so proofs stay complete. Uniform traffics search
        // in one attempt.
        let restarts = !traffic.unit;
        let mut attempt_nodes = opts.first_attempt_nodes.max(1);
        search.attempt_end = restarts.then(|| search.nodes.saturating_add(attempt_nodes));
        let mut outcome = search.run(target);
        loop {
            // An interrupted search stops as a spent budget does, but nothing is completed.
            if outcome == Outcome::Stopped {
                interrupt.check()?;
            }
            match outcome {
                Outcome::Stopped if search.restart_due => {
                    search.restart_due = false;
                    search.salt = search.salt.wrapping_add(0x6D2B_79F5) | 1;
                    attempt_nodes = attempt_nodes.saturating_mul(2);
                    search.attempt_end = Some(search.nodes.saturating_add(attempt_nodes));
                    search.reset();
                    search.restarts += 1;
                    outcome = search.level(0);
                }
                Outcome::Found => {
                    result.frames = std::mem::take(&mut search.frames);
                    result.lower_bound = target
                        .min(result.frames.len() as u32)
                        .max(result.lower_bound);
                    result.source = Source::Search;
                    break;
                }
                Outcome::Exhausted => {
                    result.lower_bound = target + 1;
                    if incumbent.is_none() {
                        interrupt.report(|p| p.enter(Phase::Completion));
                        incumbent = Some(best_known(
                            traffic,
                            &search.best_partial,
                            deadlines.answer,
                            interrupt,
                        )?);
                    }
                    let best = incumbent.as_ref().expect("set just above");
                    if !opts.optimize || best.0.len() as u32 <= result.lower_bound {
                        break;
                    }
                    target += 1;
                    interrupt.report(|p| p.enter(Phase::Search));
                    attempt_nodes = opts.first_attempt_nodes.max(1);
                    search.attempt_end =
                        restarts.then(|| search.nodes.saturating_add(attempt_nodes));
                    outcome = search.run(target);
                }
                Outcome::Stopped => {
                    result.stopped_by = search.stopped_by;
                    interrupt.report(|p| p.enter(Phase::Completion));
                    let candidates = completions(
                        traffic,
                        [&search.best_partial, &symmetric_partial],
                        incumbent.is_none(),
                        deadlines.answer,
                        interrupt,
                    )?;
                    for candidate in candidates {
                        match &incumbent {
                            Some(best) if best.0.len() <= candidate.0.len() => {}
                            _ => incumbent = Some(candidate),
                        }
                    }
                    break;
                }
            }
        }
    }
    if result.frames.is_empty() && traffic.len() > 0 {
        let (frames, source) =
            incumbent.expect("an incumbent exists when the search did not find one");
        result.frames = frames;
        result.source = source;
    }
    result.nodes = search.nodes;
    result.frames_tried = search.frames_tried;
    result.memo_hits = search.memo_hits;
    result.restarts = search.restarts;
    result.memory_bytes = result.memory_bytes.max(search.memory_bytes());
    Ok(finish(result, lambda))
}

/// The schedules a stopped search can give: its partial schedules (the plain search's and the
/// symmetric search's deepest) completed, the deepest first, and DSatur alone when `alone`;
/// after the first, each only while `deadline` has not passed. The deepest partial schedule
/// leaves the least to complete, each of its frames keeping every bottleneck busy: on the
/// all-to-all of `torus:dims=8/8/8` with 60 s, the symmetric search's 512 frames of 640
/// complete to 703 frames, the plain search's 171 to 755.
fn completions(
    traffic: &Traffic,
    partials: [&Vec<Vec<u32>>; 2],
    alone: bool,
    deadline: Option<Instant>,
    interrupt: &Interrupt,
) -> CoreResult<Vec<(Vec<Vec<u32>>, Source)>> {
    let nothing = Vec::new();
    let mut starts: Vec<&Vec<Vec<u32>>> = partials.into_iter().filter(|p| !p.is_empty()).collect();
    let placed = !starts.is_empty();
    if !placed {
        // The whole traffic: DSatur, or first fit where DSatur does not finish in time.
        starts.push(&nothing);
    }
    starts.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let mut found = Vec::new();
    for partial in starts {
        if !found.is_empty() && deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        found.push(best_known(traffic, partial, deadline, interrupt)?);
    }
    if placed && alone {
        let whole = dsatur_until(
            &traffic.paths,
            traffic.users.len(),
            &traffic.slots,
            deadline,
            interrupt,
        )?;
        found.extend(whole.map(|frames| (frames, Source::Dsatur)));
    }
    Ok(found)
}

/// What the symmetric attempt found, and what it cost.
struct SymmetricOutcome {
    frames: Option<Vec<Vec<u32>>>,
    /// The deepest partial schedule, each frame with its images, when none was found.
    best_partial: Vec<Vec<u32>>,
    nodes: u64,
    memory_bytes: u64,
}

/// Search a liquid schedule group by group under `group` (see `symmetry`), within
/// `opts.symmetric_nodes` nodes, the node limit, and half the time left.
fn symmetric_schedule(
    traffic: &Traffic,
    group: &Group,
    opts: &SearchOptions,
    deadline: Option<Instant>,
    interrupt: &Interrupt,
) -> CoreResult<SymmetricOutcome> {
    let marked = group.with_orbit_resources(traffic)?;
    let nodes = opts
        .node_limit
        .map_or(opts.symmetric_nodes, |n| n.min(opts.symmetric_nodes));
    let sym_opts = SearchOptions {
        node_limit: Some(nodes),
        ..opts.clone()
    };
    let now = Instant::now();
    let half = deadline.map(|d| now + d.saturating_duration_since(now) / 2);
    let mut search = Search::new(&marked, &sym_opts, Mode::Schedule, half, interrupt);
    search.group = Some(group);
    let out = search.run(traffic.duration());
    interrupt.check()?;
    Ok(SymmetricOutcome {
        frames: (out == Outcome::Found).then(|| std::mem::take(&mut search.frames)),
        best_partial: std::mem::take(&mut search.best_partial),
        nodes: search.nodes,
        memory_bytes: search.memory_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::completions;
    use crate::interrupt::Interrupt;
    use crate::liquid::traffic::Traffic;
    use crate::liquid::{liquid_schedule, liquid_schedule_with, Budget, SearchOptions, Source};
    use crate::progress::{Phase, Progress};
    use crate::testing::{
        brute_force_frames, is_valid_schedule, is_valid_with_slots, random_slot_traffic,
        two_switch_paths, Rng,
    };

    #[test]
    fn two_switch_is_liquid_in_six_frames() {
        let paths = two_switch_paths();
        let r = liquid_schedule(&paths, 12, &[], &SearchOptions::default()).unwrap();
        assert_eq!(r.duration, 6);
        assert_eq!(r.frames.len(), 6);
        assert!(r.liquid && r.optimal);
        assert!(is_valid_schedule(&paths, &r.frames));
        assert_eq!(r.source, Source::Search);
    }

    #[test]
    fn fig7_triangle_has_no_liquid_schedule() {
        // Three transfers, each on two of three links: every pair conflicts, Λ = 2.
        let paths = vec![vec![0, 1], vec![1, 2], vec![2, 0]];
        let r = liquid_schedule(&paths, 3, &[], &SearchOptions::default()).unwrap();
        assert_eq!(r.duration, 2);
        assert_eq!(r.frames.len(), 3);
        assert!(!r.liquid && r.optimal);
        assert_eq!(r.lower_bound, 3);
        assert!(is_valid_schedule(&paths, &r.frames));
    }

    #[test]
    fn without_optimize_the_proof_stops_at_lambda_plus_one() {
        let paths = vec![
            vec![0, 1],
            vec![1, 2],
            vec![2, 0],
            vec![3, 4],
            vec![4, 5],
            vec![5, 3],
        ];
        let opts = SearchOptions {
            optimize: false,
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 6, &[], &opts).unwrap();
        assert_eq!(r.lower_bound, 3);
        assert!(is_valid_schedule(&paths, &r.frames));
    }

    #[test]
    fn agrees_with_brute_force_on_small_traffics() {
        // One slot everywhere; the Python property tests cover random topologies.
        let mut rng = Rng(12345);
        for _ in 0..300 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let resources = slots.len();
            let best = brute_force_frames(&paths, &vec![1; resources]);
            for opts in [
                SearchOptions::default(),
                SearchOptions {
                    memo: false,
                    guided: false,
                    skeleton: false,
                    ..SearchOptions::default()
                },
            ] {
                let r = liquid_schedule(&paths, resources, &[], &opts).unwrap();
                assert!(is_valid_schedule(&paths, &r.frames), "{paths:?}");
                assert_eq!(r.frames.len(), best, "{paths:?}");
                assert!(r.optimal);
            }
        }
    }

    #[test]
    fn a_stop_request_returns_the_best_schedule_known() {
        // Asked to stop before it starts, the search gives DSatur's schedule, whole and valid,
        // and says why it stopped; an interruption would have returned no schedule at all.
        let paths = two_switch_paths();
        let progress = Progress::new();
        progress.request_stop();
        let interrupt = Interrupt::never().with_progress(&progress);
        let r =
            liquid_schedule_with(&paths, 12, &[], &SearchOptions::default(), &interrupt).unwrap();
        assert!(is_valid_schedule(&paths, &r.frames));
        assert_eq!(r.frames.iter().map(Vec::len).sum::<usize>(), paths.len());
        assert_eq!(r.stopped_by, Some(Budget::Request));
        // Optimal only as a liquid schedule is: the stop left nothing else proven.
        assert_eq!(r.optimal, r.frames.len() as u32 == r.duration);
        assert_eq!(progress.snapshot().phase, Phase::Completion);
    }

    #[test]
    fn a_stopped_search_completes_its_deepest_partial_schedule_first() {
        let paths = two_switch_paths();
        let traffic = Traffic::new(&paths, 12, &[]).unwrap();
        let frames = crate::coloring::dsatur(&paths, 12, &[]).unwrap();
        let shallow = frames[..1].to_vec();
        let deep = frames[..3].to_vec();
        let never = Interrupt::never();
        let all = completions(&traffic, [&shallow, &deep], true, None, &never).unwrap();
        // Both partial schedules completed, the deeper first, then DSatur alone.
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].0[..3], deep[..]);
        assert_eq!(all[1].0[..1], shallow[..]);
        assert_eq!(all[2].1, Source::Dsatur);
        for (schedule, _) in &all {
            assert!(is_valid_schedule(&paths, schedule));
            assert_eq!(schedule.iter().map(Vec::len).sum::<usize>(), paths.len());
        }
        // Out of time: the deepest alone, completed all the same.
        let past = Some(std::time::Instant::now());
        let late = completions(&traffic, [&shallow, &deep], true, past, &never).unwrap();
        assert_eq!(late.len(), 1);
        assert_eq!(late[0].0[..3], deep[..]);
        assert!(is_valid_schedule(&paths, &late[0].0));
        // Nothing placed: the whole traffic coloured.
        let none = completions(&traffic, [&Vec::new(), &Vec::new()], false, None, &never).unwrap();
        assert_eq!(none.len(), 1);
        assert_eq!(none[0].1, Source::Dsatur);
    }

    #[test]
    fn progress_follows_the_search() {
        let mut rng = Rng(777);
        for _ in 0..50 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let progress = Progress::new();
            let interrupt = Interrupt::never().with_progress(&progress);
            let r = liquid_schedule_with(
                &paths,
                slots.len(),
                &[],
                &SearchOptions::default(),
                &interrupt,
            )
            .unwrap();
            let seen = progress.snapshot();
            assert!(r.stopped_by.is_none() && !seen.stop_requested);
            // The last target searched is the length found (or proven) and no partial schedule
            // of it went deeper than the schedule; the node count is read every 256 nodes.
            assert!(
                seen.phase == Phase::Search || seen.phase == Phase::Completion,
                "{seen:?}"
            );
            assert!(
                seen.target >= r.duration
                    && seen.target as usize <= r.frames.len().max(seen.target as usize)
            );
            assert!(seen.deepest as usize <= r.frames.len());
            assert!(seen.nodes <= r.nodes);
        }
    }

    #[test]
    fn restarts_keep_the_search_exact() {
        // Attempts of 1, 2, 4, ... nodes: many restarts, and still the optimum with its proof.
        let mut rng = Rng(31337);
        let opts = SearchOptions {
            first_attempt_nodes: 1,
            ..SearchOptions::default()
        };
        let mut restarted = 0;
        for _ in 0..300 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            if slots.iter().all(|&k| k == 1) {
                continue;
            }
            let r = liquid_schedule(&paths, slots.len(), &slots, &opts).unwrap();
            assert!(is_valid_with_slots(&paths, &slots, &r.frames));
            assert_eq!(
                r.frames.len(),
                brute_force_frames(&paths, &slots),
                "{paths:?} {slots:?}"
            );
            assert!(r.optimal && r.stopped_by.is_none());
            restarted += (r.restarts > 0) as u32;
        }
        assert!(restarted > 50);
    }
}
