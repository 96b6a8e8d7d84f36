//! `--partition i/N`: every host is crawled by exactly one runner, links to
//! other partitions' hosts are dropped (domains scope) or handed to their
//! owner through `state/outbox/` (open scope), ids never collide.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Duration;

use scraper::partition::Partition;

use crate::fixture::{Workspace, article_path, day, listing_html, stderr};
use crate::web::{Reply, Req, Web};

/// Stories per host.
pub const STORIES: usize = 6;

/// A relevant article whose wording is its own (so near-duplicate removal in
/// `scraper build` keeps every one): the fixture article's shape, with
/// sentences drawn from a vocabulary by a generator seeded with host and number.
pub fn unique_article(host: &str, n: usize) -> String {
    const WORDS: [&str; 48] = [
        "researchers",
        "engineers",
        "startups",
        "regulators",
        "investors",
        "students",
        "hospitals",
        "banks",
        "schools",
        "farmers",
        "lawyers",
        "designers",
        "reported",
        "tested",
        "measured",
        "questioned",
        "praised",
        "doubted",
        "deployed",
        "licensed",
        "cheaper",
        "faster",
        "larger",
        "safer",
        "riskier",
        "quieter",
        "new",
        "open",
        "chips",
        "datasets",
        "benchmarks",
        "contracts",
        "servers",
        "phones",
        "robots",
        "translations",
        "summaries",
        "forecasts",
        "diagnoses",
        "audits",
        "in",
        "across",
        "despite",
        "before",
        "after",
        "while",
        "Europe",
        "Asia",
    ];
    let mut seed: u64 = 0xcbf2_9ce4_8422_2325;
    for b in host.bytes().chain(n.to_le_bytes()) {
        seed = (seed ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        WORDS[(seed >> 33) as usize % WORDS.len()]
    };
    let mut sentence = |lead: &str| {
        let words: Vec<&str> = (0..14).map(|_| next()).collect();
        format!("{lead} {}.", words.join(" "))
    };
    let paras: Vec<String> = [
        "The artificial intelligence lab said its large language model",
        "Machine learning teams at OpenAI and DeepMind noted that the AI system",
        "Critics of generative AI and of the large language model argued that",
        "The artificial intelligence industry expects that machine learning",
        "Observers of the AI model race concluded that",
    ]
    .iter()
    .map(|lead| {
        format!(
            "{} {} {}",
            sentence(lead),
            sentence("Meanwhile"),
            sentence("Also")
        )
    })
    .collect();
    let title = format!("AI lab {host} ships large language model number {n}");
    let body: String = paras.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta property="og:type" content="article"><meta property="article:published_time" content="{}T09:30:00Z">
</head><body><nav><a href="/">Home</a></nav><main><article><h1>{title}</h1>
{body}<p>More at <a href="http://partner.test{}">our partner</a>.</p></article></main></body></html>"#,
        day(n),
        article_path(200 + n % 3)
    )
}

/// A web where every host name serves the same shape: `/` lists its
/// stories and links to the home page of `next(host)`; every story is a
/// relevant article (which links to `partner.test`); robots.txt is missing.
pub fn many_hosts_web(hosts: Vec<String>) -> Web {
    Web::start(move |r: &Req| {
        let host = r.host.as_str();
        match r.path.as_str() {
            "/robots.txt" => Reply::not_found(),
            "/" => {
                let mut links: Vec<String> = (0..STORIES).map(article_path).collect();
                if let Some(i) = hosts.iter().position(|h| h == host) {
                    links.push(format!("http://{}/", hosts[(i + 1) % hosts.len()]));
                }
                Reply::html(listing_html("Home", &links))
            }
            p if p.contains("/story-") => {
                let n: usize = p
                    .rsplit("story-")
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                Reply::html(unique_article(host, n))
            }
            _ => Reply::not_found(),
        }
    })
}

pub fn hosts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("site{i}.test")).collect()
}

pub fn sources(hosts: &[String]) -> String {
    hosts
        .iter()
        .map(|h| format!("  - {{host: {h}, seeds: [http://{h}/]}}"))
        .collect::<Vec<_>>()
        .join("\n")
}

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
