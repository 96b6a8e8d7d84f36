//! A short focused crawl of the local web in `support/focus_web.rs`, with small
//! gaps and answers that take a while: politeness as the server saw it. No two
//! requests to a host closer than the gap (start to start), nothing under a
//! Disallow, no request inside a Retry-After, and every host's seeds read.

use std::time::Duration;

use crate::support::focus_web::{Violations, small_sites, sources, start, violations};

#[test]
fn focused_crawl_is_polite_as_the_server_sees_it() {
    use crate::support::fixture::Workspace;
    let sites = small_sites(5, 120);
    let web = start(sites.clone(), Duration::from_millis(25));
    let gap = Duration::from_millis(60);
    let ws = Workspace::new(
        &web,
        &sources(&sites),
        "concurrency: 12\nmin_host_gap: 60ms\nmax_depth: 100\nflush_every: 1s",
    );
    let out = ws.crawl(&["--max-pages", "400", "--max-duration", "12s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = web.log();
    assert!(log.len() >= 200, "only {} requests", log.len());
    let v = violations(&log, gap, Duration::from_secs(1));
    if v.gap > 0 {
        for s in &sites {
            eprintln!("{}: closest requests {:?}", s.name, web.min_gap(&s.name));
        }
    }
    assert_eq!(v, Violations::default(), "as the server saw it");
    // Every host's seeds were read, its feed too.
    for s in &sites {
        assert!(web.count_exact(&s.name, "/") >= 1, "{} home", s.name);
        if s.feed {
            assert!(
                web.count_exact(&s.name, "/feed.xml") >= 1,
                "{} feed",
                s.name
            );
        }
    }
    // The 429s were answered: the busy host was asked again after them.
    assert!(web.count_host("busy.test") > 10);
}
