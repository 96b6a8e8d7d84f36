//! Random sequences of engine calls, checked against a plain model of what the
//! frontier holds: counts, duplicates, gaps, pauses, concurrency, dropped hosts.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use scraper::frontier::{Frontier, Next, Origin, Outcome, Params};

use crate::support::sim::{Rng, entry};

#[derive(Default)]
struct Model {
    queued: HashSet<String>,
    handed: HashMap<String, u32>,
    unsent: HashMap<String, u32>,
    last_sent: HashMap<String, Duration>,
    gap: HashMap<String, Duration>,
    paused: HashMap<String, Duration>,
    dropped: HashSet<String>,
}

#[test]
fn random_operations_keep_the_invariants() {
    for seed in 0..20 {
        check(seed);
    }
}

fn check(seed: u64) {
    let mut rng = Rng::new(seed);
    let slots = 1 + (seed % 3) as u32;
    let min_gap = Duration::from_millis(500);
    let mut f = Frontier::new(Params {
        per_host_concurrency: slots as usize,
        min_host_gap: min_gap,
        warmup_pages: 3,
        yield_alpha: 0.2,
        min_host_weight: 0.1,
        max_queue: 10_000,
        policy: scraper::frontier::Policy::Focused,
    });
    let mut m = Model::default();
    let hosts = ["a.org", "b.org", "c.org", "d.org", "e.org"];
    let mut now = Duration::ZERO;
    let mut ready = 0;
    for _ in 0..5000 {
        let host = hosts[rng.below(hosts.len() as u64) as usize];
        match rng.below(100) {
            0..=34 => {
                let id = rng.below(200);
                let origin = [
                    Origin::Seed,
                    Origin::Listed,
                    Origin::Relevant,
                    Origin::Other,
                ][rng.below(4) as usize];
                let e = entry(host, id, origin, rng.below(3) as u32);
                let url = e.url.clone();
                let was = m.queued.contains(&url);
                let ok = f.push(host, e);
                if m.dropped.contains(host) {
                    assert!(!ok, "push to a dropped host");
                } else if ok {
                    m.queued.insert(url);
                } else {
                    assert!(was, "refused although new: {url}");
                }
            }
            35..=64 => match f.next(now) {
                Next::Ready { host, entry } => {
                    ready += 1;
                    assert!(
                        m.queued.remove(&entry.url),
                        "handed out twice: {}",
                        entry.url
                    );
                    assert!(!m.dropped.contains(&host));
                    let n = m.handed.entry(host.clone()).or_default();
                    assert!(*n < slots, "over per-host concurrency");
                    *n += 1;
                    assert_eq!(
                        m.unsent.get(&host).copied().unwrap_or(0),
                        0,
                        "handed out while unsent"
                    );
                    let gap = m.gap.get(&host).copied().unwrap_or(min_gap);
                    if let Some(&t) = m.last_sent.get(&host) {
                        assert!(now >= t + gap, "gap");
                    }
                    assert!(
                        now >= m.paused.get(&host).copied().unwrap_or_default(),
                        "pause"
                    );
                    *m.unsent.entry(host).or_default() += 1;
                }
                Next::Wait(t) => {
                    assert!(t > now)
                }
                Next::Empty => {
                    assert!(m.queued.is_empty());
                    assert!(m.handed.values().all(|&n| n == 0));
                }
            },
            65..=76 => {
                let u = m.unsent.entry(host.to_string()).or_default();
                if *u > 0 {
                    *u -= 1;
                    let t = m.last_sent.entry(host.to_string()).or_default();
                    *t = (*t).max(now);
                    f.sent(host, now);
                }
            }
            77..=88 => {
                let n = m.handed.entry(host.to_string()).or_default();
                if *n > 0 && m.unsent.get(host).copied().unwrap_or(0) < *n {
                    *n -= 1;
                    let outcome =
                        [Outcome::Hit, Outcome::Miss, Outcome::Error][rng.below(3) as usize];
                    f.finished(host, outcome, now);
                }
            }
            89..=90 => {
                let gap = Duration::from_millis(rng.below(3000));
                f.set_gap(host, gap);
                m.gap.insert(host.to_string(), gap.max(min_gap));
            }
            91 => {
                let until = now + Duration::from_millis(rng.below(5000));
                f.pause(host, until);
                let p = m.paused.entry(host.to_string()).or_default();
                *p = (*p).max(until);
            }
            92 if host == "e.org" => {
                let n = f.drop_host(host);
                let prefix = format!("https://{host}/");
                let before = m.queued.len();
                m.queued.retain(|u| !u.starts_with(&prefix));
                assert_eq!(n, before - m.queued.len());
                m.dropped.insert(host.to_string());
            }
            _ => now += Duration::from_millis(rng.below(1000)),
        }
        assert_eq!(f.len(), m.queued.len(), "len");
        assert_eq!(f.in_flight(), m.handed.values().sum::<u32>() as usize);
    }
    assert!(ready > 100, "seed {seed}: only {ready} fetches handed out");
    let left: HashSet<String> = f.drain().into_iter().map(|e| e.url).collect();
    assert_eq!(left, m.queued);
}
