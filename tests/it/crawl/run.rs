//! Integration tests: the real `scraper crawl` binary against the local fixture
//! web, asserting from the server's request log and from the files it leaves.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::support::fixture::{
    ARTICLES, Workspace, article_path, news_web, news_web_with, read_jsonl, stderr,
};
use crate::support::web::Reply;

const SOURCES: &str = "  - {host: news.test, seeds: [http://news.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}\n  - {host: down.test, seeds: [http://down.test/]}";

fn urls(records: &[serde_json::Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn polite_crawl_of_the_fixture_web() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));

    let log = web.log();
    // robots.txt fetched once per host that was contacted.
    for host in ["news.test", "lab.test", "down.test"] {
        assert_eq!(
            web.count(host, "/robots.txt"),
            1,
            "robots.txt requests to {host}"
        );
    }
    // Disallowed paths never requested; the 503-robots host never crawled; out-of-scope never.
    assert!(
        log.iter().all(|r| !r.path.starts_with("/private")),
        "a disallowed path was requested"
    );
    assert_eq!(
        web.count_host("down.test"),
        1,
        "only robots.txt may be fetched from down.test"
    );
    assert_eq!(
        web.count_host("outside.test"),
        0,
        "a host outside the sources was fetched"
    );
    assert_eq!(
        web.count("lab.test", "/about"),
        0,
        "a path outside the source prefix was fetched"
    );
    // The per-host gap (40 ms, raised to 80 ms by Crawl-delay on news.test) held on the wire.
    assert_eq!(
        web.gap_violations("news.test", Duration::from_millis(75)),
        0,
        "news.test gap"
    );
    assert_eq!(
        web.gap_violations("lab.test", Duration::from_millis(35)),
        0,
        "lab.test gap"
    );
    // Every article of both sources stored, plus the one behind the redirect chain.
    let records = ws.records();
    let got: HashSet<String> = urls(&records).into_iter().collect();
    for n in 0..ARTICLES {
        assert!(
            got.contains(&format!("http://news.test{}", article_path(n))),
            "missing news article {n}"
        );
        assert!(
            got.contains(&format!("http://lab.test/blog{}", article_path(n))),
            "missing lab article {n}"
        );
    }
    assert!(
        got.contains(&format!("http://news.test{}", article_path(100))),
        "redirect target not stored"
    );
    assert_eq!(got.len(), records.len(), "a URL was stored twice");
    // Nothing else: both sources' articles and the redirect target.
    assert_eq!(records.len(), 2 * ARTICLES + 1, "{got:?}");
    let ids: HashSet<i64> = records.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), records.len(), "ids are not unique");
    for r in &records {
        assert_eq!(r["date_source"].as_str(), Some("published_time"), "{r}");
        assert!(
            r["text"].as_str().unwrap().contains('\n'),
            "paragraphs are newline-separated"
        );
    }
    // The run ran out of work and said so.
    let events = ws.events();
    let last = events.last().expect("events");
    assert_eq!(last["event"], "done");
    assert_eq!(last["stopped_by"], "exhausted");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.data().join("state/last_run.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        summary["articles_stored"].as_u64(),
        Some(records.len() as u64)
    );
    assert!(
        summary["hosts"]["news.test"]["errors"]["4xx"]
            .as_u64()
            .unwrap_or(0)
            >= 1,
        "the 404 was not counted"
    );
}

#[test]
fn second_run_is_incremental_and_ids_never_repeat() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = ws.records();
    // Both sources' articles and the redirect target, as in the polite crawl.
    assert_eq!(first.len(), 2 * ARTICLES + 1);
    let max_id = first
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .max()
        .unwrap();
    // Ids come from the run's own block, above the legacy range; no counter file.
    assert!(
        first
            .iter()
            .all(|r| r["id"].as_i64().unwrap() >= scraper::store::ids::LEGACY_LIMIT),
        "{max_id}"
    );
    assert!(!ws.data().join("state/next_id").exists());

    web.clear_log();
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // No article stored by the first run is fetched again; seeds are.
    let log = web.log();
    let refetched: Vec<_> = log.iter().filter(|r| r.path.contains("/story-")).collect();
    assert!(
        refetched.is_empty(),
        "stored articles fetched again: {refetched:?}"
    );
    assert!(
        web.count("news.test", "/") >= 1,
        "the seed was not fetched again"
    );
    // Nothing new: no second shard (an empty shard is removed) and no duplicates.
    let all = ws.records();
    assert_eq!(all.len(), first.len());
}

#[test]
fn max_pages_is_a_budget_on_every_request() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-pages", "6"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        web.log().len() <= 6,
        "{} requests for a budget of 6",
        web.log().len()
    );
    let last = ws.events().last().cloned().unwrap();
    assert_eq!(last["stopped_by"], "max_pages");
    // The queue left over is saved for --resume: every article the home page
    // listed is either stored or saved, never both, none lost.
    assert_eq!(
        web.count_exact("news.test", "/"),
        1,
        "the home page was read"
    );
    let left = read_jsonl(&ws.data().join("state/frontier.jsonl"));
    let saved: HashSet<&str> = left.iter().filter_map(|e| e["url"].as_str()).collect();
    let stored: HashSet<String> = urls(&ws.records()).into_iter().collect();
    let mut kept = 0;
    for n in 0..ARTICLES {
        let url = format!("http://news.test{}", article_path(n));
        let (is_stored, is_saved) = (stored.contains(&url), saved.contains(url.as_str()));
        assert!(
            is_stored != is_saved,
            "article {n}: stored {is_stored}, saved {is_saved}"
        );
        kept += usize::from(is_saved);
    }
    // Six requests, robots.txt and the home page among them, store at most four.
    assert!(
        kept >= ARTICLES - 4,
        "{kept} of {ARTICLES} saved for a budget of 6"
    );
}

#[test]
fn max_hits_stops_after_enough_articles() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-hits", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let n = ws.records().len();
    assert!(
        (3..3 + 4).contains(&n),
        "{n} records for --max-hits 3 (in-flight fetches may add a few)"
    );
    assert_eq!(ws.events().last().unwrap()["stopped_by"], "max_hits");
}

#[test]
fn time_box_holds_with_a_hanging_host() {
    let web =
        news_web_with(|r| (r.host == "hang.test" && r.path != "/robots.txt").then(Reply::hang));
    let sources = format!(
        "{SOURCES}\n  - {{host: hang.test, seeds: [http://hang.test/, http://hang.test/a, http://hang.test/b]}}"
    );
    let ws = Workspace::new(
        &web,
        &sources,
        "  request_timeout: 60s\n  read_timeout: 60s\n  per_host_concurrency: 2",
    );
    let started = Instant::now();
    let out = ws.crawl(&["--max-duration", "3s"]);
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(took < Duration::from_secs(3 + 15), "run took {took:?}");
    assert_eq!(ws.events().last().unwrap()["stopped_by"], "max_duration");
}

#[test]
fn seed_flag_adds_a_host_to_scope() {
    let web = news_web();
    let ws = Workspace::new(&web, "  - {host: lab.test, path: /blog}", "");
    let out = ws.crawl(&["--seed", "http://news.test/", "--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        web.count("news.test", &article_path(0)) == 1,
        "the --seed host was not crawled"
    );
}

#[cfg(unix)]
fn signal(child: &std::process::Child, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[cfg(unix)]
fn wait_for(path: &std::path::Path, what: impl Fn(&str) -> bool, limit: Duration) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if std::fs::read_to_string(path).is_ok_and(|s| what(&s)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for {}", path.display());
}

#[cfg(unix)]
#[test]
fn concurrent_run_is_refused_and_sigint_saves_state_for_resume() {
    // news.test is slowed so the first run is still busy when the second starts.
    let web = news_web_with(|r| {
        (r.host == "news.test" && r.path.contains("/story-")).then(|| {
            Reply::html(crate::support::fixture::article_html(
                "news.test",
                1,
                "2024-05-02",
            ))
            .delay(Duration::from_millis(300))
        })
    });
    let ws = Workspace::new(&web, SOURCES, "  min_host_gap: 200ms");
    let mut first = ws.spawn_crawl(&["--max-duration", "60s"]);
    let log = ws.data().join("state/crawl.log");
    wait_for(&log, |s| s.contains("\"stored\""), Duration::from_secs(20));

    let second = ws.crawl(&["--max-duration", "5s"]);
    assert!(
        !second.status.success(),
        "a second crawl on the same data ran"
    );
    assert!(
        stderr(&second).contains("already running"),
        "{}",
        stderr(&second)
    );

    signal(&first, "-INT");
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(130), "Ctrl-C exit status");
    assert_eq!(ws.events().last().unwrap()["stopped_by"], "interrupted");
    // Stored and saved add up to what the two sources list: nothing lost.
    let queue = read_jsonl(&ws.data().join("state/frontier.jsonl"));
    let saved: HashSet<&str> = queue.iter().filter_map(|e| e["url"].as_str()).collect();
    let before = ws.records();
    let stored: HashSet<String> = urls(&before).into_iter().collect();
    assert!(!stored.is_empty(), "nothing stored before the interrupt");
    for n in 0..ARTICLES {
        let url = format!("http://news.test{}", article_path(n));
        assert!(
            stored.contains(&url) || saved.contains(url.as_str()),
            "news article {n} neither stored nor saved for --resume"
        );
    }

    let out = ws.crawl(&["--resume", "--max-duration", "30s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = ws.records();
    let unique: HashSet<String> = urls(&after).into_iter().collect();
    assert_eq!(unique.len(), after.len(), "an article was stored twice");
    assert!(after.len() > before.len(), "--resume stored nothing new");
}

#[cfg(unix)]
#[test]
fn sigkill_mid_run_leaves_readable_shards_and_no_duplicates() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "  min_host_gap: 120ms");
    let mut child = ws.spawn_crawl(&["--max-duration", "60s"]);
    let log = ws.data().join("state/crawl.log");
    wait_for(
        &log,
        |s| s.matches("\"stored\"").count() >= 3,
        Duration::from_secs(20),
    );
    signal(&child, "-KILL");
    let _ = child.wait();
    let before = ws.records();
    let out = ws.crawl(&["--max-duration", "30s"]);
    assert!(
        out.status.success(),
        "the next run refused the state: {}",
        stderr(&out)
    );
    let after = ws.records();
    let unique: HashSet<String> = urls(&after).into_iter().collect();
    assert_eq!(
        unique.len(),
        after.len(),
        "an article was stored twice after a crash"
    );
    let ids: HashSet<i64> = after.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(
        ids.len(),
        after.len(),
        "an id was handed out twice after a crash"
    );
    assert!(after.len() >= before.len());
    assert_eq!(
        after.len(),
        2 * ARTICLES + 1,
        "not every article ended up stored once"
    );
}

#[test]
fn open_scope_follows_relevant_pages_to_new_hosts_but_never_deny_listed_ones() {
    let web = news_web();
    let ws = Workspace::new(
        &web,
        SOURCES,
        "  deny_hosts: [social.test]\n  host_page_cap: 2",
    );
    let out = ws.crawl(&["--scope", "open", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        web.count_host("social.test"),
        0,
        "a deny-listed host was fetched"
    );
    let partner_pages = web
        .requests_to("partner.test")
        .into_iter()
        .filter(|r| r.path != "/robots.txt" && !r.path.starts_with("/.well-known/"))
        .count();
    assert!(
        partner_pages >= 1,
        "links from relevant pages to a new host were not followed"
    );
    assert!(
        partner_pages <= 2,
        "host_page_cap not held: {partner_pages}"
    );
    // Only relevant pages lead out: the home page's link to outside.test is not followed.
    assert_eq!(web.count_host("outside.test"), 0);
    assert!(
        urls(&ws.records())
            .iter()
            .any(|u| u.starts_with("http://partner.test/"))
    );

    // In domains scope the partner host is never contacted.
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(web.count_host("partner.test"), 0);
}

#[test]
fn proxy_environment_variables_are_honoured_like_curl() {
    let web = news_web();
    let ws = Workspace::new(
        &web,
        "  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}",
        "",
    );
    // No --proxy: the standard variable points the crawler at the local web.
    let out = ws
        .command(&["crawl", "--data", "data", "--max-duration", "20s"])
        .env("http_proxy", web.proxy_url())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        web.count("lab.test", "/blog/") >= 1,
        "http_proxy was not used"
    );
    // no_proxy exempts the host: the request then goes to the (unresolvable) host directly and fails.
    web.clear_log();
    let ws = Workspace::new(
        &web,
        "  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}",
        "  connect_timeout: 1s",
    );
    let out = ws
        .command(&["crawl", "--data", "data", "--max-duration", "10s"])
        .env("http_proxy", web.proxy_url())
        .env("no_proxy", "lab.test")
        .output()
        .unwrap();
    // The only host cannot be resolved: an outage (exit 69), nothing saved.
    assert_eq!(out.status.code(), Some(69), "{}", stderr(&out));
    assert_eq!(web.count_host("lab.test"), 0, "no_proxy was ignored");
}

#[test]
fn secrets_in_the_environment_never_reach_logs_shards_or_the_wire() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let secret = "hf_SECRETtoken0123456789abcdef";
    let mut all = vec![
        "crawl",
        "--data",
        "data",
        "--proxy",
        ws.proxy.as_str(),
        "--max-duration",
        "20s",
    ];
    all.push("--max-hits");
    all.push("5");
    let out = ws
        .command(&all)
        .env("HF_TOKEN", secret)
        .env("ACTOR_TOKEN", secret)
        .env("GITHUB_TOKEN", secret)
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains(secret) && !String::from_utf8_lossy(&out.stdout).contains(secret)
    );
    for r in web.log() {
        assert!(
            r.headers.iter().all(|(_, v)| !v.contains(secret)),
            "a request carried the secret"
        );
        assert!(!r.target().contains(secret));
    }
    let mut stack = vec![ws.data()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let bytes = std::fs::read(&p).unwrap();
            let text = if p.to_string_lossy().ends_with(".zst") {
                zstd::stream::decode_all(&bytes[..]).unwrap_or_default()
            } else {
                bytes
            };
            assert!(
                !String::from_utf8_lossy(&text).contains(secret),
                "{} holds the secret",
                p.display()
            );
        }
    }
}

/// Logs written to a file (CI, `crawl.out`) carry no colour codes, and the
/// binary appends the run's table to `$GITHUB_STEP_SUMMARY`.
#[test]
fn stderr_to_a_file_has_no_escape_codes_and_the_step_summary_is_written() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let log_path = ws.data().with_extension("stderr.log");
    let summary_path = ws.data().with_extension("summary.md");
    let log = std::fs::File::create(&log_path).unwrap();
    let status = ws
        .command(&[
            "crawl",
            "--data",
            "data",
            "--proxy",
            &ws.proxy,
            "--max-pages",
            "12",
        ])
        .env_remove("NO_COLOR")
        .env("GITHUB_STEP_SUMMARY", &summary_path)
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .status()
        .expect("run scraper");
    assert!(status.success());
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(text.contains("crawl finished"), "{text}");
    assert!(text.contains("| host | discovered |"), "{text}");
    assert!(
        !text.contains('\x1b'),
        "escape codes in a log file:\n{text}"
    );
    // The last status line gives the run's final totals, as the records count them.
    let last = text
        .lines()
        .find(|l| l.contains("; stopped by max_pages"))
        .unwrap_or_else(|| panic!("no final status line:\n{text}"));
    let stored = format!("stored {},", ws.records().len());
    assert!(
        last.contains(&stored) && last.contains("requests 12;"),
        "{last}"
    );
    let md = std::fs::read_to_string(&summary_path).unwrap();
    assert!(
        md.starts_with("### scraper crawl ")
            && md.contains("Stopped by **max_pages**: 12 requests"),
        "{md}"
    );
    assert!(md.contains("| news.test |"), "{md}");
}
