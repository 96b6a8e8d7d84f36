//! The frontier's speed at scale: CPU time per push and per scheduling
//! decision (next + sent + finished) with 1,000 hosts and 1 million queued
//! URLs, the time to drain them, and a million pushes into a bounded queue.
//! Prints one line per figure. The memory figure (bytes per queued URL) is a
//! test with a bound: `tests/it/frontier/scale.rs`.
//!
//! `cargo bench --bench frontier_scale` (release), or optimised in the dev
//! profile: `cargo bench --profile dev --bench frontier_scale --config
//! 'profile.dev.package.scraper.opt-level=3'`.

#[path = "../tests/it/support"]
#[allow(dead_code)]
mod support {
    pub mod rng;
}

use std::time::Duration;

use scraper::frontier::{Entry, Frontier, Kind, Next, Origin, Outcome, Params};

use support::rng::Rng;

fn main() {
    a_million_urls_over_a_thousand_hosts();
    pushing_past_max_queue();
}

/// CPU time of this thread (Linux schedstat), so a busy machine does not
/// inflate the figures.
fn cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// Resident memory of this process, bytes (Linux).
fn rss() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn url(host: &str, i: u64) -> String {
    format!(
        "https://{host}/2026/11/{:02}/{i}-a-headline-turned-into-a-slug-of-usual-size",
        i % 28 + 1
    )
}

fn a_million_urls_over_a_thousand_hosts() {
    let hosts: Vec<String> = (0..1000)
        .map(|i| format!("www.site{i:04}-news.example.com"))
        .collect();
    let n = 1_000_000u64;
    let before = rss().unwrap_or(0);
    let mut f = Frontier::new(Params {
        per_host_concurrency: 1,
        min_host_gap: Duration::from_secs(1),
        warmup_pages: 10,
        yield_alpha: 0.1,
        min_host_weight: 0.1,
        max_queue: 2_000_000,
        policy: scraper::frontier::Policy::Focused,
    });
    let mut rng = Rng::new(1);
    let start = cpu();
    let mut text_bytes = 0;
    for i in 0..n {
        // Hosts of unequal size (a few prolific ones), ranks mixed.
        let h = (rng.below(1000) * rng.below(1000) / 1000) as usize;
        let u = url(&hosts[h], i);
        text_bytes += u.len();
        let origin = [Origin::Listed, Origin::Relevant, Origin::Other][(i % 3) as usize];
        let e = Entry::new(u, Kind::Page, origin, (i % 4) as u32);
        assert!(f.push(&hosts[h], e), "push {i}");
    }
    let push = cpu() - start;
    let after = rss().unwrap_or(0);
    println!(
        "pushed {n} URLs (mean {} bytes) to {} hosts: {:.2} us CPU per push",
        text_bytes as u64 / n,
        f.hosts().filter(|(_, s)| s.queued > 0).count(),
        push.as_secs_f64() * 1e6 / n as f64
    );
    println!(
        "memory per queued URL: {:.1} bytes by the frontier's count, {:.1} bytes resident growth",
        f.heap_bytes() as f64 / n as f64,
        after.saturating_sub(before) as f64 / n as f64
    );

    // Scheduling decisions: next + sent + finished, time advancing as the gaps say.
    let decisions = 300_000;
    let mut now = Duration::ZERO;
    let mut done = 0;
    let mut waits = 0;
    let start = cpu();
    while done < decisions {
        match f.next(now) {
            Next::Ready { host, .. } => {
                f.sent(&host, now);
                let outcome = if rng.below(4) == 0 {
                    Outcome::Hit
                } else {
                    Outcome::Miss
                };
                f.finished(&host, outcome, now);
                done += 1;
            }
            Next::Wait(t) => {
                now = t;
                waits += 1;
            }
            Next::Empty => break,
        }
    }
    let spent = cpu() - start;
    println!(
        "{done} decisions ({waits} waits, {:.0} virtual s): {:.2} us CPU each (next + sent + finished), {} left",
        now.as_secs_f64(),
        spent.as_secs_f64() * 1e6 / done as f64,
        f.len()
    );
    let start = cpu();
    let left = f.drain();
    println!(
        "drained {} in {:.0} ms",
        left.len(),
        (cpu() - start).as_secs_f64() * 1e3
    );
}

fn pushing_past_max_queue() {
    let hosts: Vec<String> = (0..1000)
        .map(|i| format!("www.site{i:04}-news.example.com"))
        .collect();
    let max_queue = 300_000;
    let mut f = Frontier::new(Params {
        max_queue,
        ..Params::default()
    });
    let mut rng = Rng::new(2);
    let n = 1_000_000u64;
    let urls: Vec<(usize, Entry)> = (0..n)
        .map(|i| {
            let h = (rng.below(1000) * rng.below(1000) / 1000) as usize;
            let origin = [Origin::Listed, Origin::Relevant, Origin::Other][(i % 3) as usize];
            let e = Entry::new(url(&hosts[h], i), Kind::Page, origin, (i % 4) as u32);
            (h, e)
        })
        .collect();
    let start = cpu();
    let mut kept = 0u64;
    for (h, e) in urls {
        kept += u64::from(f.push(&hosts[h], e));
    }
    let spent = cpu() - start;
    println!(
        "{n} pushes into max_queue {max_queue}: {:.2} us CPU each; {} queued, {} shed, {kept} accepted",
        spent.as_secs_f64() * 1e6 / n as f64,
        f.len(),
        f.shed()
    );
    assert_eq!(f.len(), max_queue);
}
