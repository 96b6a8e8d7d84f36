//! The frontier's contract, one behaviour per test.

use std::time::Duration;

use scraper::frontier::{Entry, Frontier, Kind, Next, Origin, Outcome, Params};

pub fn params() -> Params {
    Params {
        per_host_concurrency: 1,
        min_host_gap: Duration::from_secs(1),
        warmup_pages: 5,
        yield_alpha: 0.1,
        min_host_weight: 0.1,
        max_queue: 1000,
        policy: scraper::frontier::Policy::Focused,
    }
}

/// A page entry; its value follows its origin as the crawl's would with no
/// other clue (listed above linked from a relevant page above other links).
pub fn entry(url: &str, origin: Origin, depth: u32) -> Entry {
    Entry {
        url: url.to_string(),
        kind: Kind::Page,
        origin,
        depth,
        lastmod: None,
        value: match origin {
            Origin::Seed | Origin::Other => 0.3,
            Origin::Listed => 0.5,
            Origin::Relevant => 0.4,
        },
        backlog: false,
        update: false,
        explore: false,
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Take the next URL, send it at once and finish it at once.
fn fetch(f: &mut Frontier, now: Duration) -> Option<String> {
    match f.next(now) {
        Next::Ready { host, entry } => {
            f.sent(&host, now);
            f.finished(&host, Outcome::Miss, now);
            Some(entry.url)
        }
        _ => None,
    }
}

#[test]
fn empty_frontier_is_empty() {
    let mut f = Frontier::new(params());
    assert_eq!(f.next(Duration::ZERO), Next::Empty);
    assert!(f.is_empty());
}

#[test]
fn hosts_take_turns_and_ranks_hold_within_a_host() {
    let mut f = Frontier::new(params());
    for i in 0..3 {
        assert!(f.push(
            "a.com",
            entry(&format!("https://a.com/{i}"), Origin::Other, 1)
        ));
    }
    assert!(f.push("a.com", entry("https://a.com/deep", Origin::Relevant, 3)));
    assert!(f.push("a.com", entry("https://a.com/rel", Origin::Relevant, 1)));
    assert!(f.push("a.com", entry("https://a.com/feed", Origin::Seed, 0)));
    assert!(f.push("b.com", entry("https://b.com/x", Origin::Other, 1)));
    assert!(
        !f.push("a.com", entry("https://a.com/1", Origin::Relevant, 1)),
        "duplicate"
    );
    assert_eq!(f.len(), 7);
    let mut got = vec![];
    for t in 0..4 {
        // Two fetches per second: each host once (the gap is one second).
        let now = secs(t as f64);
        got.extend(fetch(&mut f, now));
        got.extend(fetch(&mut f, now));
    }
    assert_eq!(
        got,
        [
            "https://a.com/feed",
            "https://b.com/x",
            "https://a.com/rel",
            "https://a.com/deep",
            "https://a.com/0",
        ]
    );
    assert_eq!(f.len(), 2);
}

#[test]
fn gap_counts_from_sent_and_concurrency_holds() {
    let mut f = Frontier::new(params());
    f.push("a.com", entry("https://a.com/1", Origin::Other, 1));
    f.push("a.com", entry("https://a.com/2", Origin::Other, 1));
    let Next::Ready { host, .. } = f.next(secs(0.0)) else {
        panic!("first fetch ready")
    };
    // Handed out, not yet sent, not finished: the host is busy.
    assert_eq!(f.next(secs(5.0)), Next::Wait(secs(6.0)));
    f.sent(&host, secs(5.0));
    assert_eq!(f.next(secs(5.5)), Next::Wait(secs(6.5)), "in flight: busy");
    f.finished(&host, Outcome::Hit, secs(5.5));
    assert_eq!(f.next(secs(5.6)), Next::Wait(secs(6.0)), "gap from sent");
    assert!(matches!(f.next(secs(6.0)), Next::Ready { .. }));
}

#[test]
fn set_gap_and_pause_hold_a_host_back() {
    let mut f = Frontier::new(params());
    f.set_gap("slow.com", secs(10.0));
    f.set_gap("fast.com", secs(0.1)); // never below the default
    for i in 0..3 {
        f.push(
            "slow.com",
            entry(&format!("https://slow.com/{i}"), Origin::Other, 1),
        );
        f.push(
            "fast.com",
            entry(&format!("https://fast.com/{i}"), Origin::Other, 1),
        );
    }
    assert!(fetch(&mut f, secs(0.0)).is_some());
    assert!(fetch(&mut f, secs(0.0)).is_some());
    assert_eq!(f.next(secs(0.0)), Next::Wait(secs(1.0)));
    assert_eq!(
        fetch(&mut f, secs(1.0)).as_deref(),
        Some("https://fast.com/1")
    );
    assert_eq!(f.host_stats("fast.com").unwrap().gap, secs(1.0));
    f.pause("fast.com", secs(30.0));
    assert_eq!(f.next(secs(2.0)), Next::Wait(secs(10.0)));
    assert_eq!(
        fetch(&mut f, secs(10.0)).as_deref(),
        Some("https://slow.com/1")
    );
    assert_eq!(f.next(secs(11.0)), Next::Wait(secs(20.0)));
    assert_eq!(
        fetch(&mut f, secs(20.0)).as_deref(),
        Some("https://slow.com/2")
    );
    assert_eq!(f.next(secs(21.0)), Next::Wait(secs(30.0)));
    assert_eq!(
        fetch(&mut f, secs(30.0)).as_deref(),
        Some("https://fast.com/2")
    );
    assert_eq!(f.next(secs(31.0)), Next::Empty);
}

#[test]
fn in_flight_work_is_not_empty() {
    let mut f = Frontier::new(params());
    f.push("a.com", entry("https://a.com/", Origin::Seed, 0));
    let Next::Ready { host, .. } = f.next(secs(0.0)) else {
        panic!("ready")
    };
    f.sent(&host, secs(0.0));
    assert!(matches!(f.next(secs(0.5)), Next::Wait(t) if t > secs(0.5)));
    assert!(f.push("a.com", entry("https://a.com/new", Origin::Relevant, 1)));
    f.finished(&host, Outcome::Miss, secs(0.7));
    assert_eq!(f.next(secs(0.7)), Next::Wait(secs(1.0)));
    assert!(matches!(f.next(secs(1.0)), Next::Ready { .. }));
}

#[test]
fn dropped_hosts_leave_the_rotation() {
    let mut f = Frontier::new(params());
    for i in 0..5 {
        f.push(
            "gone.com",
            entry(&format!("https://gone.com/{i}"), Origin::Other, 1),
        );
    }
    f.push("kept.com", entry("https://kept.com/", Origin::Seed, 0));
    f.pause("gone.com", secs(0.0));
    assert_eq!(f.drop_host("gone.com"), 5);
    assert!(f.is_dropped("gone.com"));
    assert!(!f.push("gone.com", entry("https://gone.com/9", Origin::Seed, 0)));
    assert_eq!(f.drop_host("robots-says-no.com"), 0);
    assert!(!f.push(
        "robots-says-no.com",
        entry("https://robots-says-no.com/", Origin::Seed, 0)
    ));
    assert_eq!(f.len(), 1);
    assert_eq!(
        fetch(&mut f, secs(0.0)).as_deref(),
        Some("https://kept.com/")
    );
    assert_eq!(f.next(secs(0.0)), Next::Empty);
}

#[test]
fn drain_returns_everything_and_round_trips() {
    let mut f = Frontier::new(params());
    let mut pushed = vec![
        Entry {
            url: "https://a.com/sitemap.xml".into(),
            kind: Kind::Sitemap,
            origin: Origin::Seed,
            depth: 0,
            lastmod: None,
            value: scraper::frontier::NEUTRAL as f32,
            backlog: false,
            update: false,
            explore: false,
        },
        Entry {
            url: "https://a.com/post".into(),
            kind: Kind::Page,
            origin: Origin::Listed,
            depth: 1,
            lastmod: Some("2026-11-28T10:00:00+01:00".into()),
            value: scraper::frontier::NEUTRAL as f32,
            backlog: false,
            update: false,
            explore: false,
        },
        entry("http://b.com/x?page=2", Origin::Other, 4),
        entry("https://elsewhere.org/odd", Origin::Relevant, 2),
    ];
    f.push("a.com", pushed[0].clone());
    f.push("a.com", pushed[1].clone());
    f.push("b.com", pushed[2].clone());
    f.push("b.com", pushed[3].clone());
    let mut drained = f.drain();
    assert_eq!(f.len(), 0);
    assert_eq!(f.next(secs(0.0)), Next::Empty);
    let key = |e: &Entry| e.url.clone();
    drained.sort_by_key(key);
    pushed.sort_by_key(key);
    assert_eq!(drained, pushed);
    let mut again = Frontier::new(params());
    for e in drained {
        let host = scraper::url::host_key(&scraper::url::parse(&e.url).unwrap());
        assert!(again.push(&host, e));
    }
    assert_eq!(again.len(), 4);
}

#[test]
fn max_queue_sheds_the_lowest_rank_never_seeds() {
    let mut f = Frontier::new(Params {
        max_queue: 10,
        ..params()
    });
    for i in 0..8 {
        assert!(f.push(
            "a.com",
            entry(&format!("https://a.com/o{i}"), Origin::Other, 2)
        ));
    }
    for i in 0..4 {
        assert!(f.push(
            "b.com",
            entry(&format!("https://b.com/r{i}"), Origin::Relevant, 1)
        ));
    }
    assert_eq!((f.len(), f.shed()), (10, 2));
    assert!(!f.push("b.com", entry("https://b.com/worse", Origin::Other, 9)));
    assert_eq!((f.len(), f.shed()), (10, 3));
    for i in 0..15 {
        assert!(f.push(
            "c.com",
            entry(&format!("https://c.com/s{i}"), Origin::Seed, 0)
        ));
    }
    assert_eq!(f.len(), 15, "seeds alone may exceed max_queue");
    let drained = f.drain();
    assert!(drained.iter().all(|e| e.origin == Origin::Seed));
    assert_eq!(f.shed(), 13);
}

#[test]
fn a_seed_queued_as_a_link_takes_the_seed_rank() {
    let mut f = Frontier::new(Params {
        max_queue: 3,
        ..params()
    });
    assert!(f.push("a.com", entry("https://a.com/", Origin::Other, 3)));
    assert!(f.push("a.com", entry("https://a.com/x", Origin::Other, 1)));
    assert!(f.push("a.com", entry("https://a.com/", Origin::Seed, 0)));
    assert!(
        !f.push("a.com", entry("https://a.com/", Origin::Seed, 0)),
        "now a plain duplicate"
    );
    assert_eq!(f.len(), 2);
    for i in 0..5 {
        f.push(
            "a.com",
            entry(&format!("https://a.com/{i}"), Origin::Relevant, 1),
        );
    }
    let left = f.drain();
    assert_eq!(left.len(), 3);
    assert_eq!(left[0], entry("https://a.com/", Origin::Seed, 0));
}

#[test]
fn per_host_concurrency_and_release() {
    let mut f = Frontier::new(Params {
        per_host_concurrency: 2,
        min_host_gap: Duration::ZERO,
        ..params()
    });
    for i in 0..4 {
        f.push(
            "a.com",
            entry(&format!("https://a.com/{i}"), Origin::Other, 1),
        );
    }
    let t = secs(0.0);
    let Next::Ready { host, .. } = f.next(t) else {
        panic!("ready")
    };
    assert!(
        matches!(f.next(t), Next::Wait(_)),
        "not sent yet: gap unknown"
    );
    f.sent(&host, t);
    assert!(matches!(f.next(t), Next::Ready { .. }));
    f.sent(&host, t);
    assert!(matches!(f.next(t), Next::Wait(_)), "two in flight");
    assert_eq!(f.in_flight(), 2);
    f.released(&host, t);
    assert!(matches!(f.next(t), Next::Ready { .. }));
    let stats = f.host_stats("a.com").unwrap();
    assert_eq!(
        (stats.in_flight, stats.yields.fetched),
        (2, 0),
        "release is no verdict"
    );
    // A fetch that never went out (finished without sent) frees its slot too.
    f.finished(&host, Outcome::Error, t);
    f.finished(&host, Outcome::Hit, t);
    assert_eq!(f.in_flight(), 0);
    assert!(matches!(f.next(t), Next::Ready { .. }));
}

#[test]
fn requeue_after_robots_keeps_the_place_and_the_gap() {
    let mut f = Frontier::new(params());
    f.push("a.com", entry("https://a.com/first", Origin::Relevant, 1));
    f.push("a.com", entry("https://a.com/second", Origin::Relevant, 1));
    let Next::Ready { host, entry: e } = f.next(secs(0.0)) else {
        panic!("ready")
    };
    // The engine fetches robots.txt first, then puts the URL back.
    f.sent(&host, secs(0.1));
    assert!(f.requeue(&host, e));
    f.released(&host, secs(0.3));
    assert_eq!(f.next(secs(0.3)), Next::Wait(secs(1.1)));
    assert_eq!(
        fetch(&mut f, secs(1.1)).as_deref(),
        Some("https://a.com/first")
    );
}

#[test]
fn drained_entries_survive_frontier_jsonl() {
    let mut f = Frontier::new(params());
    f.push(
        "a.com",
        Entry {
            url: "https://a.com/feed.xml".into(),
            kind: Kind::Feed,
            origin: Origin::Seed,
            depth: 0,
            lastmod: None,
            value: scraper::frontier::NEUTRAL as f32,
            backlog: false,
            update: false,
            explore: false,
        },
    );
    f.push(
        "a.com",
        entry("https://a.com/p?page=2", Origin::Relevant, 2),
    );
    let lines: Vec<String> = f
        .drain()
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        r#"{"url":"https://a.com/feed.xml","kind":"feed","origin":"seed","depth":0}"#
    );
    let mut again = Frontier::new(params());
    for line in &lines {
        let e: Entry = serde_json::from_str(line).unwrap();
        assert!(again.push("a.com", e));
    }
    let old: Entry = serde_json::from_str(r#"{"url":"https://a.com/x"}"#).unwrap();
    assert_eq!(
        (old.kind, old.origin, old.depth),
        (Kind::Page, Origin::Other, 0)
    );
    assert!(again.push("a.com", old));
    assert_eq!(again.len(), 3);
}

/// Fresh work before backlog across hosts, whatever the weights: a host
/// with a low yield weight and the day's pages goes before every host
/// whose best is backlog, and exploration comes last of all; with a budget
/// that only covers the fresh pages, no backlog turn is taken at all.
#[test]
fn fresh_work_goes_before_any_hosts_backlog() {
    let mut p = params();
    p.min_host_gap = Duration::ZERO;
    p.warmup_pages = 1;
    let mut f = Frontier::new(p);
    // b and c have proved themselves; a has not (its weight is the floor).
    for host in ["b.com", "c.com"] {
        for i in 0..3 {
            f.push(
                host,
                entry(&format!("https://{host}/w{i}"), Origin::Other, 1),
            );
            let Next::Ready { host: h, .. } = f.next(secs(0.0)) else {
                panic!()
            };
            f.sent(&h, secs(0.0));
            f.finished(&h, Outcome::Hit, secs(0.0));
        }
    }
    for i in 0..2 {
        f.push(
            "a.com",
            entry(&format!("https://a.com/w{i}"), Origin::Other, 1),
        );
        let Next::Ready { host: h, .. } = f.next(secs(0.0)) else {
            panic!()
        };
        f.sent(&h, secs(0.0));
        f.finished(&h, Outcome::Miss, secs(0.0));
    }
    let backlog = |u: &str| {
        let mut e = entry(u, Origin::Listed, 1);
        e.backlog = true;
        e
    };
    for i in 0..5 {
        f.push("b.com", backlog(&format!("https://b.com/old{i}")));
        f.push("c.com", backlog(&format!("https://c.com/old{i}")));
    }
    let mut explore = entry("https://c.com/tag/x", Origin::Other, 2);
    explore.explore = true;
    f.push("c.com", explore);
    for i in 0..3 {
        f.push(
            "a.com",
            entry(&format!("https://a.com/new{i}"), Origin::Listed, 1),
        );
    }
    let mut order = vec![];
    while let Some(u) = fetch(&mut f, secs(1.0)) {
        order.push(u);
    }
    assert_eq!(order.len(), 14, "{order:?}");
    assert!(
        order[..3].iter().all(|u| u.contains("a.com/new")),
        "{order:?}"
    );
    assert_eq!(order.last().unwrap(), "https://c.com/tag/x", "{order:?}");

    // A budget of 3 with 3 fresh pages queued: backlog hosts are held back.
    let mut f = Frontier::new(params());
    for i in 0..3 {
        f.push("b.com", backlog(&format!("https://b.com/old{i}")));
    }
    f.push("a.com", entry("https://a.com/new", Origin::Listed, 1));
    f.pace(
        scraper::frontier::Pace {
            budget_left: 2,
            time_left: Duration::from_secs(60),
            slot_rate: 10.0,
        },
        secs(0.0),
    );
    assert_eq!(
        fetch(&mut f, secs(0.0)).as_deref(),
        Some("https://a.com/new")
    );
    assert_eq!(
        f.next(secs(5.0)),
        Next::Wait(secs(5.0) + scraper::frontier::IDLE_RECHECK)
    );
}
