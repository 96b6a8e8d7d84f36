//! `--partition i/N`: every host is crawled by exactly one runner, links to
//! other partitions' hosts are dropped (domains scope) or handed to their
//! owner through `state/outbox/` (open scope), ids never collide.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Duration;

use scraper::partition::Partition;

use crate::support::fixture::{Workspace, stderr};
use crate::support::many_hosts::{STORIES, hosts, many_hosts_web, sources};

fn owner(host: &str, n: u32) -> u32 {
    let u = scraper::url::parse(&format!("http://{host}/")).unwrap();
    Partition::new(0, n).unwrap().owner_of(&u).index()
}

fn urls_ids(ws: &Workspace) -> Vec<(String, i64)> {
    ws.records()
        .iter()
        .map(|r| {
            (
                r["url"].as_str().unwrap().to_string(),
                r["id"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn last_run(ws: &Workspace) -> serde_json::Value {
    let text = std::fs::read_to_string(ws.data().join("state/last_run.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn four_partitions_split_hosts_and_find_what_one_run_finds() {
    let names = hosts(8);
    let web = many_hosts_web(names.clone());
    let src = sources(&names);
    let crawl =
        |ua: &str| format!("min_host_gap: 40ms\nuser_agent: \"{ua} (+http://example.invalid)\"");

    let single = Workspace::new(&web, &src, &crawl("whole"));
    let out = single.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let whole: BTreeSet<String> = urls_ids(&single).into_iter().map(|(u, _)| u).collect();
    assert_eq!(whole.len(), names.len() * STORIES, "{whole:?}");
    web.clear_log();

    // Four runners at the same time, each with its own data folder.
    let parts: Vec<Workspace> = (0..4)
        .map(|i| Workspace::new(&web, &src, &crawl(&format!("part{i}"))))
        .collect();
    let children: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(i, ws)| ws.spawn_crawl(&["--max-duration", "20s", "--partition", &format!("{i}/4")]))
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }

    // Every host was fetched by exactly one runner: the one its hash names.
    let mut fetched_by: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for r in web.log() {
        let ua = r.header("user-agent").unwrap_or_default().to_string();
        let i: u32 = ua
            .strip_prefix("part")
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("unexpected agent {ua}"));
        fetched_by.entry(r.host.clone()).or_default().insert(i);
    }
    for h in &names {
        let by = &fetched_by[h];
        assert_eq!(by.len(), 1, "{h} fetched by {by:?}");
        assert_eq!(*by.iter().next().unwrap(), owner(h, 4), "{h}");
        assert_eq!(web.gap_violations(h, Duration::from_millis(35)), 0, "{h}");
    }
    assert!(
        !fetched_by.contains_key("partner.test"),
        "domains scope left"
    );

    // Together they store what the single run stored, no URL or id twice.
    let mut urls = HashSet::new();
    let mut ids = HashSet::new();
    let (mut skipped, mut dropped) = (0, 0);
    for ws in &parts {
        for (u, id) in urls_ids(ws) {
            assert!(urls.insert(u.clone()), "{u} stored twice");
            assert!(ids.insert(id), "id {id} twice");
        }
        let p = &last_run(ws)["handover"];
        skipped += p["seeds_skipped"].as_u64().unwrap();
        dropped += p["dropped"].as_u64().unwrap();
        assert_eq!(p["handed_over"], 0);
    }
    let found: BTreeSet<String> = urls.into_iter().collect();
    assert_eq!(found, whole);
    // Each runner left the other runners' 3 x 8 / 4 seeds on average: 24 in all.
    assert_eq!(skipped, 24);
    // Each home page links to the next host; those owned elsewhere were dropped.
    let crossing = (0..names.len())
        .filter(|&i| owner(&names[i], 4) != owner(&names[(i + 1) % names.len()], 4))
        .count() as u64;
    assert_eq!(dropped, crossing);
}

#[test]
fn open_scope_hands_links_to_their_owner_through_the_outbox() {
    // Sources all owned by one partition; partner.test (linked from every
    // story) by the other.
    let partner_owner = owner("partner.test", 2);
    let finder = 1 - partner_owner;
    let names: Vec<String> = (0..40)
        .map(|i| format!("open{i}.test"))
        .filter(|h| owner(h, 2) == finder)
        .take(2)
        .collect();
    let web = many_hosts_web(names.clone());
    let ws = Workspace::new(
        &web,
        &sources(&names),
        "scope: open\ndeny_hosts: [social.test]",
    );
    let out = ws.crawl(&[
        "--max-duration",
        "20s",
        "--partition",
        &format!("{finder}/2"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        web.count("partner.test", "/robots.txt"),
        0,
        "fetched by the wrong runner"
    );
    let outbox = ws.data().join(format!("state/outbox/{partner_owner}-of-2"));
    let files: Vec<_> = std::fs::read_dir(&outbox)
        .unwrap_or_else(|e| panic!("{}: {e}", outbox.display()))
        .collect();
    assert_eq!(files.len(), 1);
    let handed = last_run(&ws)["handover"]["handed_over"].as_u64().unwrap();
    // Every story links to one of three partner pages (`story-200` to `-202`).
    assert_eq!(handed, 3);

    // The owner's next run (same data, as after a git pull) reads it.
    web.clear_log();
    let out = ws.crawl(&[
        "--max-duration",
        "20s",
        "--partition",
        &format!("{partner_owner}/2"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let partner: Vec<_> = urls_ids(&ws)
        .into_iter()
        .filter(|(u, _)| u.contains("partner.test"))
        .collect();
    // The handed-over stories, and what the owner found from them.
    assert!(partner.len() as u64 >= handed, "{partner:?}");
    assert!(
        web.log().iter().all(|r| !names.contains(&r.host)),
        "the owner run fetched the finder's hosts"
    );
    let left: Vec<_> = std::fs::read_dir(&outbox).unwrap().collect();
    assert!(
        left.is_empty(),
        "the outbox files read were not removed: {left:?}"
    );
    let p = &last_run(&ws)["handover"];
    assert_eq!(p["inbox"].as_u64().unwrap(), handed);
    assert_eq!(p["seeds_skipped"].as_u64().unwrap(), names.len() as u64);
}

#[test]
fn a_bad_partition_is_a_clear_error() {
    let web = many_hosts_web(hosts(1));
    let ws = Workspace::new(&web, &sources(&hosts(1)), "");
    let out = ws.crawl(&["--partition", "4/4"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("i/N"), "{}", stderr(&out));
    std::fs::write(
        ws.dir.path().join("config.yml"),
        "crawl:\n  partition: 2/2\n",
    )
    .unwrap();
    let out = ws.crawl(&[]);
    assert!(!out.status.success());
    let msg = stderr(&out);
    assert!(
        msg.contains("config.yml") && msg.contains("line 2"),
        "{msg}"
    );
}
