//! An open-scope crawl on the simulated web: sources link out to other hosts,
//! a few worth following, most not, some deny-listed.

use scraper::frontier::{Frontier, OpenScope, ScopeParams};
use scraper::source::Sources as SourceScope;

use crate::support::sim::{HostSpec, Report, SimConfig, params};
use crate::support::sim_engine::{Open, run_open};

const PROBATION: u64 = 15;
const CAP: u64 = 60;

fn open_web() -> Vec<HostSpec> {
    let mut web = Vec::new();
    let mut add = |name: String, hit_p: f64, seeded: bool| {
        let mut h = HostSpec::new(&name, hit_p);
        h.seeded = seeded;
        h.outlinks = 0.2;
        web.push(h);
    };
    for i in 0..4 {
        add(format!("source{i}.example"), 0.4, true);
    }
    for i in 0..4 {
        add(format!("good{i}.example"), 0.4, false);
    }
    for i in 0..14 {
        add(format!("junk{i:02}.example"), 0.02, false);
    }
    for i in 0..2 {
        add(format!("m.social{i}.example"), 0.4, false);
    }
    web
}

fn crawl(web: &[HostSpec], probation: u64, cap: u64) -> Report {
    let mut sources = SourceScope::default();
    for h in web.iter().filter(|h| h.seeded) {
        sources.add(&h.name, None);
    }
    let mut open = Open {
        scope: OpenScope::new(ScopeParams {
            deny_hosts: vec!["social0.example".into(), "social1.example".into()],
            host_page_cap: cap,
            host_probation_pages: probation,
            host_min_hit_ratio: 0.1,
        }),
        sources,
    };
    let cfg = SimConfig::default();
    run_open(
        web,
        &mut Frontier::new(params(1.0)),
        &cfg,
        1.0,
        Some(&mut open),
    )
}

#[test]
fn probation_cap_and_deny_list_keep_an_open_crawl_productive() {
    let web = open_web();
    let ruled = crawl(&web, PROBATION, CAP);
    let lax = crawl(&web, u64::MAX, u64::MAX);
    let group = |r: &Report, prefix: &str| -> (u64, u64) {
        web.iter()
            .enumerate()
            .filter(|(_, h)| h.name.starts_with(prefix))
            .fold((0, 0), |(f, h), (i, _)| {
                (f + r.per_host[i], h + r.hits_per_host[i])
            })
    };
    for (name, r) in [
        ("probation and cap", &ruled),
        ("no probation, no cap", &lax),
    ] {
        println!(
            "{name:<22} hits/1000 {:>6.1}  fetches (hits): sources {:?}, good {:?}, junk {:?}, denied {:?}",
            r.hits_per_1000(),
            group(r, "source"),
            group(r, "good"),
            group(r, "junk"),
            group(r, "m.social"),
        );
        assert_eq!(r.gap_violations, 0);
        assert_eq!(r.after_drop, 0);
        assert_eq!(
            group(r, "m.social").0,
            0,
            "deny-listed hosts are never fetched"
        );
    }
    for (i, h) in web.iter().enumerate().filter(|(_, h)| !h.seeded) {
        assert!(ruled.per_host[i] <= CAP, "{} over the cap", h.name);
    }
    let junk_dropped = web
        .iter()
        .enumerate()
        .filter(|(i, h)| {
            h.name.starts_with("junk") && ruled.dropped[*i] && ruled.per_host[*i] <= PROBATION
        })
        .count();
    println!("junk hosts dropped after probation: {junk_dropped} of 14");
    assert!(junk_dropped >= 12);
    assert!(group(&ruled, "good").0 > 0, "good outside hosts were found");
    assert!(ruled.hits_per_1000() > 1.1 * lax.hits_per_1000());
}
