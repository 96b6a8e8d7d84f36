//! Whole crawls on the simulated web: politeness, fairness, yield weighting,
//! work conservation, the queue bound and dropped hosts. `--nocapture` prints
//! the figures the scheduling issue asks for.

use std::time::Duration;

use scraper::frontier::{Frontier, Origin, Params};

use crate::support::policy::{Fifo, Flat, Scheduler};
use crate::support::sim::{HostSpec, Report, SimConfig, params, round_robin};
use crate::support::sim_engine::run;

/// 30 hosts, a third of which produce most of the hits; some have a Crawl-delay.
fn skewed_web() -> Vec<HostSpec> {
    (0..30)
        .map(|i| {
            let mut h = HostSpec::new(
                &format!("site{i:02}.example"),
                if i % 3 == 0 { 0.4 } else { 0.03 },
            );
            if i % 7 == 3 {
                h.crawl_delay = Some(3.0);
            }
            h
        })
        .collect()
}

fn show(name: &str, r: &Report) {
    println!(
        "{name:<26} fetches {:>5}  hits {:>5}  hits/1000 {:>6.1}  rate {:>5.2}/s  gap violations {}",
        r.fetches,
        r.hits,
        r.hits_per_1000(),
        r.rate(),
        r.gap_violations
    );
}

fn assert_polite(r: &Report) {
    assert_eq!(r.gap_violations, 0, "gap violated");
    assert_eq!(r.pause_violations, 0, "pause violated");
    assert_eq!(r.after_drop, 0, "fetched a dropped host");
}

/// Seeds of the simulated webs each comparison is summed over.
const SEEDS: [u64; 3] = [7, 11, 13];

/// The same crawls (one per seed in [`SEEDS`]) under four schedulers: the
/// frontier, the frontier without yield weights (ranked and flat within a
/// host), and breadth-first. Each report sums the seeds' runs.
fn compare(label: &str, web: &[HostSpec], cfg: &SimConfig) -> [Report; 4] {
    let mut runs: [Report; 4] = Default::default();
    for seed in SEEDS {
        let cfg = SimConfig {
            seed,
            ..cfg.clone()
        };
        let schedulers: [&mut dyn Scheduler; 4] = [
            &mut Frontier::new(params(1.0)),
            &mut round_robin(1.0),
            &mut Flat(round_robin(1.0)),
            &mut Fifo::new(Duration::from_secs(1)),
        ];
        for (total, sched) in runs.iter_mut().zip(schedulers) {
            total.merge(&run(web, sched, &cfg, 1.0));
        }
    }
    println!("-- {label}");
    for (name, r) in [
        "weighted (frontier)",
        "round-robin, ranked",
        "round-robin, flat",
        "breadth-first",
    ]
    .iter()
    .zip(&runs)
    {
        show(name, r);
        assert_polite(r);
        let (mut hf, mut hh) = (0, 0);
        for i in (0..web.len()).step_by(3) {
            hf += r.per_host[i];
            hh += r.hits_per_host[i];
        }
        println!(
            "   productive third: {:.2} of fetches, {:.2} of hits",
            hf as f64 / r.fetches as f64,
            hh as f64 / r.hits.max(1) as f64
        );
    }
    let [w, rr, flat, fifo] = &runs;
    println!(
        "weighted / ranked round-robin {:.2}, / flat round-robin {:.2}, / breadth-first {:.2}",
        ratio(w, rr),
        ratio(w, flat),
        ratio(w, fifo)
    );
    runs
}

fn ratio(a: &Report, b: &Report) -> f64 {
    a.hits_per_1000() / b.hits_per_1000()
}

#[test]
fn yield_weighting_moves_budget_to_productive_hosts() {
    let web = skewed_web();
    let p = params(1.0);
    // Slots are the scarce resource: the weights decide who gets them.
    let cfg = SimConfig {
        concurrency: 4,
        track_starvation: true,
        ..SimConfig::default()
    };
    let [weighted, rr, flat, _] = compare("4 slots", &web, &cfg);
    assert!(ratio(&weighted, &rr) >= 1.5, "vs ranked round-robin");
    assert!(ratio(&weighted, &flat) >= 1.5, "vs flat round-robin");

    // No host starves: every host with work is fetched at least once per
    // warm-up period (warmup_pages turns of every host).
    let period = u64::from(p.warmup_pages) * web.len() as u64;
    let worst = weighted.max_starve.iter().max().copied().unwrap_or(0);
    println!("longest run of fetches without a free host with work: {worst} (bound {period})");
    assert!(worst <= period, "{:?}", weighted.max_starve);

    // Low-yield hosts keep at least min_host_weight of the best host's turns.
    let best = weighted.per_host.iter().max().copied().unwrap_or(0) as f64;
    let least = weighted.per_host.iter().min().copied().unwrap_or(0) as f64;
    println!("fewest fetches of a host / most: {:.3}", least / best);
    assert!(
        least / best >= 0.8 * p.min_host_weight,
        "{:?}",
        weighted.per_host
    );
}

/// Where the gaps of the productive hosts, not the slots, bound the crawl, a
/// work-conserving rule hands the spare turns to the others: the gain shrinks.
/// An engine that spreads its fetch budget over its time box makes the turns
/// scarce again.
#[test]
fn weighting_gain_by_regime() {
    let web = skewed_web();
    for (label, cfg) in [
        ("8 slots", SimConfig::default()),
        (
            "16 slots",
            SimConfig {
                concurrency: 16,
                ..SimConfig::default()
            },
        ),
        (
            "16 slots paced at 4/s",
            SimConfig {
                concurrency: 16,
                pace: Some(4.0),
                ..SimConfig::default()
            },
        ),
    ] {
        let [weighted, rr, flat, _] = compare(label, &web, &cfg);
        // Never worse than without weights; where turns are scarce, far better.
        assert!(ratio(&weighted, &rr) >= 1.0, "{label}");
        assert!(ratio(&weighted, &flat) >= 1.3, "{label}");
        if cfg.concurrency < 16 || cfg.pace.is_some() {
            assert!(ratio(&weighted, &rr) >= 1.5, "{label}");
        }
    }
}

#[test]
fn one_prolific_host_cannot_take_the_run() {
    let mut web: Vec<HostSpec> = (0..10)
        .map(|i| {
            let mut h = HostSpec::new(&format!("h{i}.example"), 0.2);
            h.fanout = 3;
            h
        })
        .collect();
    web[0].fanout = 200;
    let cfg = SimConfig {
        concurrency: 4,
        budget: 2000,
        ..SimConfig::default()
    };
    let gap = 0.05;
    let rr = run(&web, &mut Frontier::new(params(gap)), &cfg, gap);
    let plain = run(&web, &mut round_robin(gap), &cfg, gap);
    let fifo = run(
        &web,
        &mut Fifo::new(Duration::from_secs_f64(gap)),
        &cfg,
        gap,
    );
    let share = |r: &Report| r.per_host[0] as f64 / r.fetches as f64;
    println!(
        "prolific host's share: frontier {:.3}, without weights {:.3}, breadth-first {:.3} (fair share {:.3})",
        share(&rr),
        share(&plain),
        share(&fifo),
        1.0 / web.len() as f64
    );
    assert_polite(&rr);
    assert_polite(&plain);
    assert!(share(&rr) <= 2.0 / web.len() as f64, "{:?}", rr.per_host);
    assert!(
        share(&plain) <= 1.2 / web.len() as f64,
        "{:?}",
        plain.per_host
    );
}

/// Hosts with varied gaps, latency below the gap, plenty of slots: the crawl
/// should run at the rate the gaps allow, even with one host on a long delay.
#[test]
fn politeness_bound_efficiency_and_work_conservation() {
    let mut web: Vec<HostSpec> = (0..20)
        .map(|i| {
            let mut h = HostSpec::new(&format!("g{i:02}.example"), 0.2);
            h.crawl_delay = Some(1.0 + (i % 4) as f64);
            h.latency = (0.1, 0.6);
            h
        })
        .collect();
    web[5].crawl_delay = Some(60.0);
    let cfg = SimConfig {
        concurrency: 64,
        budget: 3000,
        ..SimConfig::default()
    };
    let r = run(&web, &mut Frontier::new(params(1.0)), &cfg, 1.0);
    let bound: f64 = web.iter().map(|h| 1.0 / h.crawl_delay.unwrap_or(1.0)).sum();
    let efficiency = r.rate() / bound;
    show("varied gaps, 64 slots", &r);
    println!(
        "politeness-bound efficiency: {:.2}/s of {bound:.2}/s = {efficiency:.3}",
        r.rate()
    );
    assert_polite(&r);
    assert!(efficiency >= 0.9, "efficiency {efficiency:.3}");

    // Few slots: the slow host's turn is never waited for.
    let tight = SimConfig {
        concurrency: 3,
        budget: 2000,
        ..cfg.clone()
    };
    let with_slow = run(&web, &mut Frontier::new(params(1.0)), &tight, 1.0);
    web.remove(5);
    let without = run(&web, &mut Frontier::new(params(1.0)), &tight, 1.0);
    println!(
        "3 slots: {:.2}/s with the 60 s host, {:.2}/s without",
        with_slow.rate(),
        without.rate()
    );
    assert_polite(&with_slow);
    assert!(with_slow.rate() >= 0.95 * without.rate());
}

#[test]
fn max_queue_holds_and_seeds_survive() {
    let web: Vec<HostSpec> = (0..8)
        .map(|i| {
            let mut h = HostSpec::new(&format!("q{i}.example"), 0.2);
            h.fanout = 40;
            h
        })
        .collect();
    let cfg = SimConfig {
        budget: 1500,
        reseed: Some((20.0, 5)),
        ..SimConfig::default()
    };
    let max_queue = 500;
    let mut f = Frontier::new(Params {
        max_queue,
        ..params(1.0)
    });
    let r = run(&web, &mut f, &cfg, 1.0);
    let seeds_left = r.left.iter().filter(|e| e.origin == Origin::Seed).count() as u64;
    println!(
        "max_queue {max_queue}: largest queue {}, shed {}, seeds pushed {}, fetched {}, left {}",
        r.max_len,
        f.shed(),
        r.seeds_pushed,
        r.seeds_fetched,
        seeds_left
    );
    assert_polite(&r);
    assert!(f.shed() > 1000, "the bound was exercised");
    assert!(r.max_len <= max_queue, "largest queue {}", r.max_len);
    assert_eq!(
        r.seeds_pushed,
        r.seeds_fetched + seeds_left,
        "a seed was dropped"
    );
}

#[test]
fn failing_hanging_and_paused_hosts_do_not_stall_the_rest() {
    let healthy = |i: usize| {
        let mut h = HostSpec::new(&format!("ok{i}.example"), 0.3);
        h.size = 80;
        h.fanout = 6;
        h
    };
    let mut web: Vec<HostSpec> = (0..6).map(healthy).collect();
    let clean = web.clone();
    for i in 0..3 {
        let mut h = healthy(10 + i);
        h.name = format!("dead{i}.example");
        h.error_p = 1.0;
        h.listed = 20;
        web.push(h);
    }
    for i in 0..2 {
        let mut h = healthy(20 + i);
        h.name = format!("hang{i}.example");
        h.hang_p = 0.3;
        web.push(h);
    }
    let mut h = healthy(30);
    h.name = "busy.example".into();
    h.retry_after = Some((5, 20.0));
    web.push(h);
    let cfg = SimConfig {
        budget: 100_000,
        ..SimConfig::default()
    };
    let r = run(&web, &mut Frontier::new(params(1.0)), &cfg, 1.0);
    let base = run(&clean, &mut Frontier::new(params(1.0)), &cfg, 1.0);
    show("with failing hosts", &r);
    show("healthy hosts only", &base);
    assert_polite(&r);
    assert!(r.ended_empty, "ran out of work and said Empty");
    assert!(r.dropped[6..9].iter().all(|&d| d), "dead hosts rested");
    assert_eq!(r.left.len(), 0);
    // Healthy hosts were crawled as fully as without the failing ones.
    let healthy: u64 = r.per_host[..6].iter().sum();
    let alone: u64 = base.per_host.iter().sum();
    assert!(
        healthy as f64 >= 0.95 * alone as f64,
        "{healthy} vs {alone}"
    );
}

/// Two requests in flight per host, responses slower than the gap: requests
/// overlap, and the gap between their starts still holds.
#[test]
fn two_slots_per_host_still_keep_the_gap() {
    let web: Vec<HostSpec> = (0..6)
        .map(|i| {
            let mut h = HostSpec::new(&format!("p{i}.example"), 0.3);
            h.latency = (1.5, 4.0);
            h.crawl_delay = (i == 0).then_some(2.5);
            h
        })
        .collect();
    let cfg = SimConfig {
        concurrency: 16,
        budget: 1500,
        send_delay: (0.0, 0.3),
        ..SimConfig::default()
    };
    let mut f = Frontier::new(Params {
        per_host_concurrency: 2,
        ..params(1.0)
    });
    let r = run(&web, &mut f, &cfg, 1.0);
    show("2 slots per host", &r);
    assert_polite(&r);
    let bound: f64 = web.iter().map(|h| 1.0 / h.crawl_delay.unwrap_or(1.0)).sum();
    // Latency up to 4 s with 2 slots caps a host below 1/gap at times.
    assert!(r.rate() >= 0.6 * bound, "{:.2}/s of {bound:.2}/s", r.rate());
}
