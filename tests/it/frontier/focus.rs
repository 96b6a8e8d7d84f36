//! Focused crawling on the simulated web (issue 15): a gap-bound crawl whose
//! fetch budget runs out long before its time box, under the three frontier
//! policies. `focused` (value order, yield weights, budget pacing) must store
//! at least twice the relevant pages per 1,000 fetches of `round_robin` and
//! more than `best_first` (value order alone), be as polite, and still read
//! every host's seeds. `--nocapture` prints the figures.

use scraper::frontier::{Frontier, Params, Policy};

use crate::support::sim::{HostSpec, Report, SimConfig, params};
use crate::support::sim_engine::run;

/// 24 hosts from 90% hits to none, most of them general sites with few hits
/// (as on the shipped config's web), each with a seed and five listed pages;
/// one a portal of many pages with few hits.
fn web() -> Vec<HostSpec> {
    let shares = [
        0.9, 0.8, 0.6, 0.4, 0.3, 0.2, 0.15, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02, 0.02, 0.01,
        0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.02,
    ];
    shares
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let mut h = HostSpec::new(&format!("site{i:02}.example"), p);
            h.listed = 5;
            if i == shares.len() - 1 {
                h.size = 200_000;
                h.fanout = 30;
            }
            h
        })
        .collect()
}

const SEEDS: [u64; 3] = [7, 11, 13];

fn crawl(policy: Policy, cfg: &SimConfig) -> Report {
    let web = web();
    let mut total = Report::default();
    for seed in SEEDS {
        let cfg = SimConfig {
            seed,
            budget_pacing: policy == Policy::Focused,
            ..cfg.clone()
        };
        let mut f = Frontier::new(Params {
            policy,
            ..params(1.0)
        });
        total.merge(&run(&web, &mut f, &cfg, 1.0));
    }
    total
}

fn show(name: &str, r: &Report) {
    let least = r.per_host.iter().min().copied().unwrap_or(0);
    println!(
        "{name:<12} fetches {:>5}  hits {:>5}  hits/1000 {:>6.1}  ran {:>5.0} s  fewest fetches of a host {least:>3}  gap violations {}",
        r.fetches,
        r.hits,
        r.hits_per_1000(),
        r.elapsed / SEEDS.len() as f64,
        r.gap_violations
    );
}

#[test]
fn budget_bound_focused_crawl_beats_round_robin_and_best_first() {
    // Gap-bound: more slots than hosts, a 1 s gap; 24 hosts could take
    // 14,400 fetches in the 600 s box, the budget is 3,000.
    let cfg = SimConfig {
        concurrency: 32,
        budget: 3000,
        max_time: 600.0,
        anchors: 0.7,
        ..SimConfig::default()
    };
    let rr = crawl(Policy::RoundRobin, &cfg);
    let bf = crawl(Policy::BestFirst, &cfg);
    let fo = crawl(Policy::Focused, &cfg);
    println!("-- budget-bound (3,000 fetches, 600 s box, 32 slots, 1 s gap)");
    show("round_robin", &rr);
    show("best_first", &bf);
    show("focused", &fo);
    let ratio = |a: &Report, b: &Report| a.hits_per_1000() / b.hits_per_1000().max(1e-9);
    println!(
        "focused / round_robin {:.2}, focused / best_first {:.2}, best_first / round_robin {:.2}",
        ratio(&fo, &rr),
        ratio(&fo, &bf),
        ratio(&bf, &rr)
    );
    for r in [&rr, &bf, &fo] {
        assert_eq!(
            (r.gap_violations, r.pause_violations, r.after_drop),
            (0, 0, 0)
        );
    }
    assert!(ratio(&fo, &rr) >= 2.0, "focused vs round-robin");
    assert!(ratio(&fo, &bf) > 1.0, "focused vs best-first");
    // No host starves of its seeds: every host's home page was read in every run.
    for (h, &n) in fo.seeds_per_host.iter().enumerate() {
        assert!(n >= SEEDS.len() as u64, "host {h}: seeds fetched {n}");
    }
    assert_eq!(fo.seeds_fetched, fo.seeds_pushed);
}

#[test]
fn time_bound_focused_crawl_stays_work_conserving() {
    // The budget outlasts the box: pacing must not hold anything back, so
    // `focused` makes as many fetches as `best_first`.
    let cfg = SimConfig {
        concurrency: 32,
        budget: 100_000,
        max_time: 120.0,
        anchors: 0.7,
        ..SimConfig::default()
    };
    let bf = crawl(Policy::BestFirst, &cfg);
    let fo = crawl(Policy::Focused, &cfg);
    println!("-- time-bound (120 s box, budget unbounded)");
    show("best_first", &bf);
    show("focused", &fo);
    assert!(
        fo.fetches as f64 >= 0.97 * bf.fetches as f64,
        "{} vs {}",
        fo.fetches,
        bf.fetches
    );
    assert_eq!(fo.gap_violations, 0);
}
