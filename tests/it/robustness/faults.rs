//! The hostile web: the real `scraper crawl` binary against fixture hosts that
//! each serve one fault. Every test asserts that the run goes on to the end,
//! that the fault is counted under its class (`last_run.json`
//! `hosts.<host>.errors` and `crawl.log` `error` events), that time and memory
//! stay bounded, and that the good host (`news.test`) is still stored in full.
//! Several faults share one crawl, one host per fault, to keep the suite fast.

use std::collections::HashSet;
use std::fs::File;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::fixture::{
    ARTICLES, Counter, Workspace, article_html, article_path, calendar_links, day, listing_html,
    news_web_with,
};
use crate::support::web::{Reply, Req};

/// The good source every fault crawl also has.
const NEWS: &str = "  - {host: news.test, seeds: [http://news.test/]}";

/// No crawl here may take longer than this (a hard kill ends a runaway).
const RUN_LIMIT: Duration = Duration::from_secs(30);

/// Peak resident memory allowed to one crawl.
const RSS_LIMIT_KB: u64 = 300 * 1024;

/// One finished crawl: exit status, stderr, wall time, peak RSS.
struct Run {
    status: ExitStatus,
    stderr: String,
    took: Duration,
    /// Peak resident set (VmHWM) in KiB, as last seen while it ran (0 where /proc is missing).
    peak_kb: u64,
}

/// VmHWM (peak resident set) of a live process, in KiB.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Run `scraper crawl --data data [--proxy web] ARGS`, polling its peak RSS.
fn run(ws: &Workspace, args: &[&str], proxy: bool) -> Run {
    let mut all: Vec<&str> = vec!["crawl", "--data", "data"];
    if proxy {
        all.extend(["--proxy", ws.proxy.as_str()]);
    }
    all.extend_from_slice(args);
    let err_path = ws.dir.path().join("stderr.txt");
    let err = File::create(&err_path).expect("stderr file");
    let started = Instant::now();
    let mut child = ws
        .command(&all)
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("spawn scraper");
    let mut peak_kb = 0;
    let status = loop {
        if let Some(kb) = peak_rss_kb(child.id()) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "crawl ran past {RUN_LIMIT:?}: {}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(15));
    };
    Run {
        status,
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        took: started.elapsed(),
        peak_kb,
    }
}

impl Run {
    /// Finished by itself with status 0, within `limit`, under the memory bound.
    fn assert_bounded(&self, limit: Duration) {
        assert!(self.status.success(), "crawl failed: {}", self.stderr);
        assert!(self.took < limit, "crawl took {:?}", self.took);
        assert!(
            self.peak_kb < RSS_LIMIT_KB,
            "peak RSS {} MiB",
            self.peak_kb / 1024
        );
    }
}

fn summary(ws: &Workspace) -> Value {
    let text = std::fs::read_to_string(ws.data().join("state/last_run.json"))
        .expect("last_run.json written");
    serde_json::from_str(&text).expect("last_run.json parses")
}

/// `hosts.<host>.errors.<class>` of `last_run.json`.
fn errors(summary: &Value, host: &str, class: &str) -> u64 {
    summary["hosts"][host]["errors"][class]
        .as_u64()
        .unwrap_or(0)
}

/// Classes of the `error` events for URLs on `host`.
fn error_classes(ws: &Workspace, host: &str) -> Vec<String> {
    ws.events()
        .iter()
        .filter(|e| e["event"] == "error")
        .filter(|e| {
            e["url"]
                .as_str()
                .is_some_and(|u| u.contains(&format!("//{host}/")))
        })
        .map(|e| e["class"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The fault on `host` is counted as `class` in both places.
fn assert_class(ws: &Workspace, summary: &Value, host: &str, class: &str) {
    assert!(
        errors(summary, host, class) >= 1,
        "{host}: no `{class}` in last_run.json: {}",
        summary["hosts"][host]
    );
    let events = error_classes(ws, host);
    assert!(
        events.iter().any(|c| c == class),
        "{host}: no `{class}` error event, got {events:?}"
    );
}

fn stored(ws: &Workspace) -> Vec<String> {
    ws.records()
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every article of the good host stored, once.
fn assert_news_stored(ws: &Workspace) {
    let urls = stored(ws);
    let set: HashSet<&String> = urls.iter().collect();
    assert_eq!(set.len(), urls.len(), "an article was stored twice");
    for n in 0..ARTICLES {
        let u = format!("http://news.test{}", article_path(n));
        assert!(set.contains(&u), "good article {u} not stored");
    }
}

fn last_event(ws: &Workspace) -> Value {
    ws.events().last().cloned().expect("crawl.log has events")
}

/// `sources:` lines for `hosts`, each seeded with its `/`, plus news.test.
fn sources(hosts: &[&str]) -> String {
    let mut s = String::from(NEWS);
    for h in hosts {
        s.push_str(&format!("\n  - {{host: {h}, seeds: [http://{h}/]}}"));
    }
    s
}

/// An article page on `host` that also links to `links`.
fn article_with_links(host: &str, n: usize, links: &[String]) -> String {
    let extra: String = links
        .iter()
        .map(|l| format!("<p>Related: <a href=\"{l}\">{l}</a></p>\n"))
        .collect();
    article_html(host, n, &day(n)).replace("</article>", &format!("{extra}</article>"))
}

#[test]
fn body_faults_are_cut_off_and_counted() {
    let page = article_html("x.test", 1, "2024-05-02");
    let web = news_web_with(move |r: &Req| {
        if r.path == "/robots.txt" {
            return None;
        }
        Some(match r.host.as_str() {
            // One byte a second: the total request timeout ends it.
            "drip.test" => Reply::html(page.clone()).drip(1),
            // Never ends, no Content-Length: the raw cap ends it.
            "endless.test" => Reply::endless("text/html"),
            // 50 MB announced: refused from its Content-Length.
            "big.test" => Reply::html("").repeat(vec![b'x'; 1 << 20], Some(50)),
            // 1 GiB of zeros in about 1 MB of gzip: the decoded cap ends it.
            "bomb.test" => Reply::gzip_bomb("text/html", 1 << 30),
            // Full length announced, 500 bytes sent, then a TCP reset.
            "reset.test" => Reply::html(page.clone()).reset_after(500),
            _ => return None,
        })
    });
    let hosts = [
        "drip.test",
        "endless.test",
        "big.test",
        "bomb.test",
        "reset.test",
    ];
    let ws = Workspace::new(
        &web,
        &sources(&hosts),
        "request_timeout: 4s\nread_timeout: 3s",
    );
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    assert_eq!(last_event(&ws)["stopped_by"], "exhausted");
    let s = summary(&ws);
    for (host, class) in [
        ("drip.test", "timeout"),
        ("endless.test", "too_large"),
        ("big.test", "too_large"),
        ("bomb.test", "too_large"),
        ("reset.test", "body"),
    ] {
        assert_class(&ws, &s, host, class);
    }
    // Nothing from a faulty host was stored; the good host was, in full.
    let urls = stored(&ws);
    assert!(urls.iter().all(|u| u.contains("//news.test/")), "{urls:?}");
    assert_news_stored(&ws);
    eprintln!(
        "body faults: {:?}, peak RSS {} MiB",
        r.took,
        r.peak_kb / 1024
    );
}

#[test]
fn redirect_faults_stop_at_the_first_bad_hop() {
    let web = news_web_with(|r: &Req| {
        if r.host != "redir.test" {
            return None;
        }
        let p = r.path.as_str();
        Some(match p {
            "/robots.txt" => Reply::text("User-agent: *\nDisallow: /private\n"),
            "/" => Reply::html(listing_html(
                "Redirects",
                &[
                    "/loop-a".into(),
                    "/chain/0".into(),
                    "/go-private".into(),
                    "/to-metadata".into(),
                    "/to-localhost".into(),
                    "/to-ftp".into(),
                ],
            )),
            "/loop-a" => Reply::redirect(302, "/loop-b"),
            "/loop-b" => Reply::redirect(302, "http://redir.test/loop-a"),
            "/go-private" => Reply::redirect(301, "/private/secret"),
            "/to-metadata" => Reply::redirect(302, "http://169.254.169.254/latest/meta-data/"),
            "/to-localhost" => Reply::redirect(307, "http://localhost:8080/admin"),
            "/to-ftp" => Reply::redirect(302, "ftp://redir.test/file"),
            _ => match p
                .strip_prefix("/chain/")
                .and_then(|n| n.parse::<u32>().ok())
            {
                Some(20) => Reply::html(article_html("redir.test", 3, "2024-05-04")),
                Some(n) => Reply::redirect(301, &format!("/chain/{}", n + 1)),
                None => Reply::not_found(),
            },
        })
    });
    // Open scope: redirects to other hosts are followed, so only the
    // private-address guard stands between a redirect and 169.254.169.254.
    let ws = Workspace::new(&web, &sources(&["redir.test"]), "scope: open");
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    let s = summary(&ws);
    assert_class(&ws, &s, "redir.test", "redirect_loop");
    assert_class(&ws, &s, "redir.test", "too_many_redirects");
    assert_class(&ws, &s, "redir.test", "robots");
    assert_class(&ws, &s, "redir.test", "private_address");
    assert!(
        errors(&s, "redir.test", "private_address") >= 2,
        "both private redirects refused"
    );
    assert_eq!(web.count("redir.test", "/private/secret"), 0);
    assert_eq!(web.count("redir.test", "/loop-a"), 1);
    assert_eq!(web.count("redir.test", "/loop-b"), 1);
    // 5 hops followed (the default), the 6th refused: /chain/0..=5 requested.
    let chain = web
        .requests_to("redir.test")
        .iter()
        .filter(|q| q.path.starts_with("/chain/"))
        .count();
    assert_eq!(chain, 6, "hops of the 20-hop chain requested");
    for host in ["169.254.169.254", "localhost:8080", "localhost"] {
        assert_eq!(web.count_host(host), 0, "{host} was contacted");
    }
    // A redirect to ftp: has no usable Location for us: answered as it is.
    assert_eq!(web.count("redir.test", "/file"), 0);
    assert_news_stored(&ws);
}

/// Deterministic noise: `n` bytes from a fixed-seed xorshift.
fn noise(n: usize, mut x: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn content_faults_are_parsed_without_harm() {
    let good = article_html("odd.test", 5, "2024-05-06");
    let latin = good.replace("part 5", "part 5, café crème");
    let nested = format!(
        "<!doctype html><html><head><title>Deep</title></head><body>{}{}</body></html>",
        "<div>".repeat(100_000),
        "<p>deep text</p>"
    );
    let deep_article = good.replace("<main>", &format!("{}<main>", "<div><span>".repeat(50_000)));
    let future = good.replace("2024-05-06T09:30:00Z", "9999-12-31T23:59:59Z");
    let malformed = good.replace("2024-05-06T09:30:00Z", "2024-13-45T25:61:00Z");
    let binary = noise(300_000, 0x9e37_79b9_7f4a_7c15);
    let web = news_web_with(move |r: &Req| {
        if r.host != "odd.test" {
            return None;
        }
        Some(match r.path.as_str() {
            "/robots.txt" => return None,
            "/" => Reply::html(listing_html(
                "Odd",
                &[
                    "/charset-unknown".into(),
                    "/charset-wrong".into(),
                    "/binary".into(),
                    "/nested".into(),
                    "/deep-article".into(),
                    "/future".into(),
                    "/malformed".into(),
                ],
            )),
            "/charset-unknown" => {
                Reply::bytes("text/html; charset=x-no-such-charset", good.clone())
            }
            "/charset-wrong" => Reply::bytes("text/html; charset=shift_jis", latin.clone()),
            "/binary" => Reply::bytes("text/html", binary.clone()),
            "/nested" => Reply::html(nested.clone()),
            "/deep-article" => Reply::html(deep_article.clone()),
            "/future" => Reply::html(future.clone()),
            "/malformed" => Reply::html(malformed.clone()),
            _ => Reply::not_found(),
        })
    });
    let ws = Workspace::new(&web, &sources(&["odd.test"]), "");
    let r = run(&ws, &["--max-duration", "25s"], true);
    r.assert_bounded(Duration::from_secs(25));
    assert_eq!(last_event(&ws)["stopped_by"], "exhausted");
    // Every odd page was answered and decided on: fetched, then stored or rejected.
    let events = ws.events();
    for path in [
        "/charset-unknown",
        "/charset-wrong",
        "/binary",
        "/nested",
        "/deep-article",
        "/future",
        "/malformed",
    ] {
        let url = format!("http://odd.test{path}");
        let fetched = events
            .iter()
            .any(|e| e["event"] == "fetch" && e["url"] == url.as_str() && e["status"] == 200);
        let decided = events.iter().any(|e| {
            (e["event"] == "stored" || e["event"] == "rejected") && e["url"] == url.as_str()
        });
        assert!(
            fetched && decided,
            "{url}: fetched {fetched}, decided {decided}"
        );
    }
    assert!(error_classes(&ws, "odd.test").is_empty());
    let records = ws.records();
    let by_url = |p: &str| {
        records
            .iter()
            .find(|r| r["url"] == format!("http://odd.test{p}").as_str())
    };
    // An unknown charset label falls back to the page's own <meta charset>.
    let unknown = by_url("/charset-unknown").expect("unknown-charset article stored");
    assert!(
        unknown["text"]
            .as_str()
            .unwrap()
            .contains("artificial intelligence")
    );
    assert!(by_url("/binary").is_none(), "noise stored as an article");
    assert!(by_url("/nested").is_none(), "nesting stored as an article");
    // Implausible dates are not taken: no record is dated after today.
    let this_year = chrono::Utc::now().format("%Y").to_string();
    for r in &records {
        if let Some(d) = r["date"].as_str() {
            assert!(d[..4] <= this_year[..], "record dated {d}: {r}");
        }
    }
    assert_news_stored(&ws);
    eprintln!(
        "content faults: {:?}, peak RSS {} MiB",
        r.took,
        r.peak_kb / 1024
    );
}

#[test]
fn robots_faults_follow_rfc_9309() {
    let mut big = String::from("User-agent: *\nDisallow: /private\n");
    while big.len() < 700 << 10 {
        big.push_str("# a very long robots.txt, padded with comments past the size cap\n");
    }
    // Past the 512 KiB cap: must not be seen.
    big.push_str("Disallow: /\n");
    let web = news_web_with(move |r: &Req| {
        let home = || Reply::html(listing_html("Home", &["/page".into(), "/private/x".into()]));
        Some(match (r.host.as_str(), r.path.as_str()) {
            ("rbig.test", "/robots.txt") => Reply::text(big.clone()),
            ("r5xx.test", "/robots.txt") => Reply::status(500),
            ("r4xx.test", "/robots.txt") => Reply::status(403),
            ("rredir.test", "/robots.txt") => Reply::redirect(301, "/real-robots.txt"),
            ("rredir.test", "/real-robots.txt") => {
                Reply::text("User-agent: *\nDisallow: /private\n")
            }
            ("rhang.test", "/robots.txt") => Reply::hang(),
            (h, "/") if h != "news.test" => home(),
            (h, "/page") if h != "news.test" => Reply::html(listing_html("Page", &[])),
            (h, _) if h != "news.test" => Reply::not_found(),
            _ => return None,
        })
    });
    let hosts = [
        "rbig.test",
        "r5xx.test",
        "r4xx.test",
        "rredir.test",
        "rhang.test",
    ];
    let ws = Workspace::new(&web, &sources(&hosts), "request_timeout: 3s");
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    let s = summary(&ws);
    // Over the cap: the first 512 KiB parsed, the tail ignored.
    assert_eq!(web.count("rbig.test", "/page"), 1);
    assert_eq!(web.count("rbig.test", "/private/x"), 0);
    // 4xx: allow all (even /private, which nothing forbids there).
    assert_eq!(web.count("r4xx.test", "/page"), 1);
    assert_eq!(web.count("r4xx.test", "/private/x"), 1);
    // A redirect is followed to the real file.
    assert_eq!(web.count("rredir.test", "/page"), 1);
    assert_eq!(web.count("rredir.test", "/private/x"), 0);
    // 5xx: disallow all; counted as a robots refusal.
    assert_eq!(web.count_host("r5xx.test"), 1, "only robots.txt");
    assert_class(&ws, &s, "r5xx.test", "robots");
    // Timing out: disallow all, counted as the timeout it was.
    assert_eq!(web.count_host("rhang.test"), 1, "only robots.txt");
    assert_class(&ws, &s, "rhang.test", "timeout");
    let robots_events: Vec<Value> = ws
        .events()
        .into_iter()
        .filter(|e| e["event"] == "robots")
        .collect();
    let outcome = |h: &str| {
        robots_events
            .iter()
            .find(|e| e["host"] == h)
            .map(|e| e["outcome"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    };
    assert!(
        outcome("rbig.test").starts_with("Parsed"),
        "{}",
        outcome("rbig.test")
    );
    assert!(outcome("r4xx.test").starts_with("AllowAll"));
    assert!(outcome("r5xx.test").starts_with("DisallowAll"));
    assert!(
        outcome("rhang.test").contains("timeout"),
        "{}",
        outcome("rhang.test")
    );
    assert_news_stored(&ws);
}

/// An HTTP date `secs` from now.
fn http_date_in(secs: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(secs))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

#[test]
fn a_url_that_keeps_asking_for_later_is_requeued_a_bounded_number_of_times() {
    let web = news_web_with(move |r: &Req| {
        if r.host != "raloop.test" || r.path == "/robots.txt" {
            return None;
        }
        let links: Vec<String> = (0..3).map(article_path).collect();
        Some(match r.path.as_str() {
            "/" => Reply::html(listing_html("Home", &links)),
            p if p == article_path(0) => Reply::status(429).header("retry-after", "1"),
            _ => return None,
        })
    });
    let ws = Workspace::new(&web, &sources(&["raloop.test"]), "");
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    let asked = web.count("raloop.test", &article_path(0));
    // Requeued after each Retry-After (1 s, well inside the 20 s run), three
    // times at most: exactly four requests.
    assert_eq!(asked, 4, "requests for the URL that keeps asking for later");
    // The host's other pages were still crawled.
    let urls = stored(&ws);
    assert!(urls.contains(&format!("http://raloop.test{}", article_path(1))));
    assert!(!urls.contains(&format!("http://raloop.test{}", article_path(0))));
}

#[test]
fn retry_after_pauses_the_host() {
    let first_429 = Counter::default();
    let first_503 = Counter::default();
    let first_500 = Counter::default();
    let web = news_web_with(move |r: &Req| {
        let host = r.host.as_str();
        if !host.starts_with("ra") || r.path == "/robots.txt" {
            return None;
        }
        let links: Vec<String> = (0..3).map(article_path).collect();
        Some(match (host, r.path.as_str()) {
            ("ralong.test", _) => Reply::status(429).header("retry-after", "86400"),
            (_, "/") => Reply::html(listing_html("Home", &links)),
            ("rasecs.test", p) if p == article_path(0) && first_429.bump() == 0 => {
                Reply::status(429).header("retry-after", "2")
            }
            ("radate.test", p) if p == article_path(0) && first_503.bump() == 0 => {
                Reply::status(503).header("retry-after", &http_date_in(3))
            }
            ("radate.test", p) if p == article_path(1) && first_500.bump() == 0 => {
                Reply::status(500)
            }
            _ => return None,
        })
    });
    let hosts = ["rasecs.test", "radate.test", "ralong.test"];
    let ws = Workspace::new(&web, &sources(&hosts), "");
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    let s = summary(&ws);
    assert!(errors(&s, "rasecs.test", "429") >= 1, "{}", s["hosts"]);
    assert!(errors(&s, "radate.test", "5xx") >= 1, "{}", s["hosts"]);
    // The request after the 429/503 waited for Retry-After.
    for (host, at_least) in [
        ("rasecs.test", Duration::from_millis(1900)),
        ("radate.test", Duration::from_millis(1500)),
    ] {
        let reqs = web.requests_to(host);
        let i = reqs
            .iter()
            .position(|q| q.path == article_path(0))
            .expect("the paused URL was requested");
        if let Some(next) = reqs.get(i + 1) {
            let gap = next.at.saturating_duration_since(reqs[i].at);
            assert!(gap >= at_least, "{host}: next request after {gap:?}");
        }
        // The rest of the host was still fetched after the pause.
        assert!(
            reqs.len() > i + 1,
            "{host}: nothing fetched after the pause"
        );
    }
    // A day-long Retry-After rests the host for the run: one answer, no more.
    assert_eq!(
        web.requests_to("ralong.test")
            .iter()
            .filter(|q| q.path != "/robots.txt")
            .count(),
        1
    );
    assert!(
        errors(&s, "ralong.test", "429") == 1,
        "{}",
        s["hosts"]["ralong.test"]
    );
    assert_news_stored(&ws);
    // Asked to come back later: the URL is requeued and stored after the pause.
    let urls = stored(&ws);
    assert!(urls.contains(&format!("http://rasecs.test{}", article_path(0))));
    assert!(urls.contains(&format!("http://radate.test{}", article_path(0))));
    // A 500 without Retry-After is transient too: not remembered, so the next run asks again.
    assert!(
        errors(&s, "radate.test", "5xx") >= 2,
        "{}",
        s["hosts"]["radate.test"]
    );
    web.clear_log();
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    assert_eq!(
        web.count("radate.test", &article_path(1)),
        1,
        "the 500 not retried"
    );
    assert_eq!(
        web.count("rasecs.test", &article_path(0)),
        0,
        "a stored URL fetched again"
    );
    assert!(stored(&ws).contains(&format!("http://radate.test{}", article_path(1))));
}

#[test]
fn names_tls_and_private_addresses_without_a_proxy() {
    let web = news_web_with(|_| None);
    let port = web.addr().port();
    let local = format!("http://127.0.0.1:{port}{}", article_path(2));
    let tls = format!("https://127.0.0.1:{port}/");
    let seeds = [
        "http://nothing.invalid/",
        local.as_str(),
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
    ];
    let seed_args = |extra: &[&str]| {
        let mut v: Vec<String> = vec!["--max-duration".into(), "15s".into()];
        for s in seeds.iter().chain(extra) {
            v.push("--seed".into());
            v.push(s.to_string());
        }
        v
    };
    // 1. Private addresses refused (the default): nothing reaches the server.
    let ws = Workspace::new(&web, "  - {host: nothing.invalid}", "");
    let args = seed_args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&ws, &args, false);
    // No host could be reached (one unresolvable, the rest refused): an
    // outage, exit 69, nothing saved; the event log still names each class.
    assert_eq!(r.status.code(), Some(69), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(15), "crawl took {:?}", r.took);
    assert!(web.log().is_empty(), "contacted: {:?}", web.log());
    assert!(!ws.data().join("state/last_run.json").exists());
    for (host, class) in [
        ("nothing.invalid", "dns"),
        (&format!("127.0.0.1:{port}") as &str, "private_address"),
        ("169.254.169.254", "private_address"),
    ] {
        let events = error_classes(&ws, host);
        assert!(events.iter().any(|c| c == class), "{host}: {events:?}");
    }

    // 2. Allowed by config (a local test web): stored; the TLS seed fails as TLS.
    let ws = Workspace::new(
        &web,
        "  - {host: nothing.invalid}",
        "allow_private_addresses: true",
    );
    let args = seed_args(&[tls.as_str()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&ws, &args, false);
    r.assert_bounded(Duration::from_secs(15));
    let s = summary(&ws);
    let host = format!("127.0.0.1:{port}");
    assert_class(&ws, &s, "nothing.invalid", "dns");
    assert!(errors(&s, &host, "tls") >= 1, "{}", s["hosts"]);
    assert!(stored(&ws).contains(&local), "{:?}", stored(&ws));
}

#[test]
fn listing_faults_are_capped() {
    let laughs = |root: &str, inner: &str| {
        let mut d =
            String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n");
        for i in 1..10 {
            let prev = if i == 1 {
                "lol".to_string()
            } else {
                format!("lol{}", i - 1)
            };
            d.push_str(&format!(
                "<!ENTITY lol{i} \"{}\">\n",
                format!("&{prev};").repeat(10)
            ));
        }
        d.push_str(&format!("]>\n{root}{inner}"));
        d
    };
    let feed_laughs = laughs(
        "<rss version=\"2.0\"><channel><title>&lol9;</title>",
        "<item><title>&lol9;</title><link>http://lists.test/from-feed</link></item></channel></rss>",
    );
    let sitemap_laughs = laughs(
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">",
        "<url><loc>http://lists.test/from-sitemap/&lol9;</loc></url><url><loc>http://lists.test/from-sitemap</loc></url></urlset>",
    );
    let mut many = String::from(
        "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for i in 0..60_000 {
        many.push_str(&format!("<url><loc>http://many.test/p/{i}</loc></url>\n"));
    }
    many.push_str("</urlset>\n");
    let index = "<?xml version=\"1.0\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
        <sitemap><loc>http://lists.test/sitemap-index.xml</loc></sitemap>\
        <sitemap><loc>http://lists.test/sitemap-small.xml</loc></sitemap></sitemapindex>";
    let small = "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
        <url><loc>http://lists.test/s/1</loc></url>\
        <url><loc>http://lists.test/sitemap-index.xml</loc></url></urlset>";
    let dates = "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
        <url><loc>http://lists.test/d/future</loc><lastmod>9999-12-31</lastmod></url>\
        <url><loc>http://lists.test/d/feb30</loc><lastmod>2024-02-30</lastmod></url>\
        <url><loc>http://lists.test/d/words</loc><lastmod>last tuesday</lastmod></url>\
        <url><loc>http://lists.test/d/hour25</loc><lastmod>2024-05-01T25:00:00Z</lastmod></url>\
        <url><loc>http://lists.test/d/old</loc><lastmod>2001-01-01</lastmod></url></urlset>";
    let feed_dates = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>Dates</title>\
        <item><title>a</title><link>http://lists.test/f/future</link><pubDate>Fri, 31 Dec 9999 23:59:59 GMT</pubDate></item>\
        <item><title>b</title><link>http://lists.test/f/bad</link><pubDate>yesterday-ish</pubDate></item>\
        <item><title>c</title><link>http://lists.test/f/old</link><pubDate>Mon, 01 Jan 2001 00:00:00 GMT</pubDate></item>\
        </channel></rss>";
    let web = news_web_with(move |r: &Req| {
        Some(match (r.host.as_str(), r.path.as_str()) {
            ("lists.test", "/feed-laughs.xml") => {
                Reply::bytes("application/rss+xml", feed_laughs.clone())
            }
            ("lists.test", "/sitemap-laughs.xml") => Reply::xml(sitemap_laughs.clone()),
            ("lists.test", "/sitemap-index.xml") => Reply::xml(index),
            ("lists.test", "/sitemap-small.xml") => Reply::xml(small),
            ("lists.test", "/sitemap-dates.xml") => Reply::xml(dates),
            ("lists.test", "/feed-dates.xml") => Reply::bytes("application/rss+xml", feed_dates),
            ("lists.test", "/sitemap-many.xml") => Reply::xml(many.clone()),
            ("lists.test" | "many.test", p) if p != "/robots.txt" => Reply::not_found(),
            _ => return None,
        })
    });
    let lists = "  - {host: lists.test, seeds: [http://lists.test/feed-laughs.xml, http://lists.test/sitemap-laughs.xml, http://lists.test/sitemap-index.xml, http://lists.test/sitemap-dates.xml, http://lists.test/feed-dates.xml, http://lists.test/sitemap-many.xml]}\n  - {host: many.test, seeds: [http://many.test/]}";
    let ws = Workspace::new(&web, &format!("{NEWS}\n{lists}"), "");
    let r = run(
        &ws,
        &["--max-duration", "8s", "--min-lastmod", "2024-01-01"],
        true,
    );
    r.assert_bounded(Duration::from_secs(20));
    let events = ws.events();
    let discovery = |path: &str| {
        events
            .iter()
            .find(|e| {
                e["event"] == "discovery" && e["url"] == format!("http://lists.test{path}").as_str()
            })
            .cloned()
            .unwrap_or_else(|| panic!("no discovery event for {path}"))
    };
    // 60,000 URLs: the first 50,000 kept, the cut said in a warning.
    let big = discovery("/sitemap-many.xml");
    assert_eq!(big["entries"], 50_000, "{big}");
    assert!(
        events.iter().any(|e| e["event"] == "warning"
            && e["url"] == "http://lists.test/sitemap-many.xml"
            && e["cut"].as_u64().unwrap_or(0) > 0),
        "no warning about the cut"
    );
    // The self-including index is read once; its real child too.
    assert_eq!(web.count("lists.test", "/sitemap-index.xml"), 1);
    assert_eq!(web.count("lists.test", "/sitemap-small.xml"), 1);
    // Entities are never expanded: the laughs stay small and the plain entries come through.
    discovery("/feed-laughs.xml");
    discovery("/sitemap-laughs.xml");
    // (`/from-sitemap/&lol9;` reads as `/from-sitemap/`, the same page as `/from-sitemap`.)
    let plain = web
        .requests_to("lists.test")
        .iter()
        .filter(|q| q.path.starts_with("/from-"))
        .count();
    assert_eq!(plain, 2, "the feed's and the sitemap's plain entries");
    // Dates: far-future and malformed lastmods do not count as old; the old one does.
    let d = discovery("/sitemap-dates.xml");
    assert_eq!(d["too_old"], 1, "{d}");
    assert_eq!(d["queued"], 4, "{d}");
    let f = discovery("/feed-dates.xml");
    assert_eq!(f["too_old"], 1, "{f}");
    assert_eq!(f["queued"], 2, "{f}");
    assert_news_stored(&ws);
    eprintln!(
        "listing faults: {:?}, peak RSS {} MiB",
        r.took,
        r.peak_kb / 1024
    );
}

#[test]
fn spider_trap_is_bounded_by_host_cap_and_depth() {
    // news.test's first article links into an endless calendar on trap.test,
    // whose every page is a relevant article (so open scope follows its
    // links), links to the months either side, and to itself under fresh
    // session ids.
    let sid = Counter::default();
    let web = news_web_with(move |r: &Req| {
        if r.host == "news.test" && r.path == article_path(0) {
            return Some(Reply::html(article_with_links(
                "news.test",
                0,
                &["http://trap.test/cal/2024/05".into()],
            )));
        }
        if r.host != "trap.test" || r.path == "/robots.txt" {
            return None;
        }
        let mut parts = r.path.trim_start_matches("/cal/").split('/');
        let (Some(y), Some(m)) = (
            parts.next().and_then(|y| y.parse::<i32>().ok()),
            parts.next().and_then(|m| m.parse::<i32>().ok()),
        ) else {
            return Some(Reply::not_found());
        };
        let month = |k: i32| {
            let t = y * 12 + (m - 1) + k;
            format!("/cal/{}/{:02}", t.div_euclid(12), t.rem_euclid(12) + 1)
        };
        let n = sid.bump();
        let links = vec![
            month(-1),
            month(1),
            format!("{}?sessionid={n}", month(0)),
            format!("{}?jsessionid=x{n}&view=week", month(0)),
        ];
        Some(Reply::html(article_with_links("trap.test", 7, &links)))
    });
    let ws = Workspace::new(
        &web,
        NEWS,
        "scope: open\nhost_page_cap: 20\nmax_depth: 5\nhost_probation_pages: 1000",
    );
    let r = run(&ws, &["--max-duration", "25s"], true);
    r.assert_bounded(Duration::from_secs(25));
    // Bounded by itself: the run ran out of work before the time box.
    assert_eq!(last_event(&ws)["stopped_by"], "exhausted");
    let trap: Vec<Req> = web
        .requests_to("trap.test")
        .into_iter()
        .filter(|q| q.path.starts_with("/cal/"))
        .collect();
    // The date chain bounds it before depth and the cap of 20: the entry,
    // then max_date_steps date pages linked from date pages (the months
    // either side and each month's `?view=week` variant, its session id
    // stripped, are all steps of one chain).
    let steps = scraper::url::trap::TrapRules::default().max_date_steps as usize;
    assert_eq!(
        trap.len(),
        1 + steps,
        "{:?}",
        trap.iter().map(|q| &q.path).collect::<Vec<_>>()
    );
    // Depth: news home 0, article 1, first calendar page 2, so at most 3 months away.
    for q in &trap {
        let ym: Vec<i32> = q
            .path
            .trim_start_matches("/cal/")
            .split('/')
            .filter_map(|p| p.parse().ok())
            .collect();
        let off = (ym[0] * 12 + ym[1] - 1) - (2024 * 12 + 4);
        assert!(off.abs() <= 3, "{} is {off} months from the entry", q.path);
    }
    let s = summary(&ws);
    // The cap counts pages fetched (links past it may be discovered, never fetched).
    let fetched = s["hosts"]["trap.test"]["fetched"].as_u64().unwrap_or(0);
    // The calendar's pages and the article template's three nav links
    // (`/`, `/section/ai`, `/about`).
    assert_eq!(fetched, 1 + steps as u64 + 3, "trap.test fetched {fetched}");
    assert_news_stored(&ws);
}

/// Day pages `/calendar/YYYY/MM/DD/` that each link the next day (and two
/// private addresses); the home page links a day 30 days ago on `days.test`,
/// today on `future.test`.
fn day_chain(host: &str, path: &str) -> Option<Vec<String>> {
    let today = chrono::Utc::now().date_naive();
    let url = |d: chrono::NaiveDate| d.format("/calendar/%Y/%m/%d/").to_string();
    if path == "/" {
        let start = match host {
            "days.test" => today - chrono::Days::new(30),
            _ => today,
        };
        return Some(vec![url(start)]);
    }
    let d = chrono::NaiveDate::parse_from_str(path, "/calendar/%Y/%m/%d/").ok()?;
    Some(vec![
        url(d + chrono::Days::new(1)),
        "http://169.254.169.254/latest/meta-data/".into(),
        "http://10.0.0.7/admin".into(),
    ])
}

/// `%XX` escapes of `path` decoded; other bytes as they are.
fn percent_decoded(path: &str) -> String {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `trap` events of `host` in crawl.log, by kind.
fn trap_kinds(ws: &Workspace, host: &str) -> Vec<String> {
    ws.events()
        .iter()
        .filter(|e| e["event"] == "trap" && e["host"] == host)
        .map(|e| e["kind"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn traps_cost_a_handful_of_fetches() {
    // One trap per host, each entered from its home page; news.test is healthy.
    let web = news_web_with(|r: &Req| {
        if r.host == "news.test" || r.path == "/robots.txt" {
            return None;
        }
        let p = r.path.as_str();
        let page = |links: Vec<String>| Some(Reply::html(listing_html("Trap", &links)));
        match r.host.as_str() {
            // Endless prev/next months.
            "cal.test" => calendar_links(p).map_or_else(|| Some(Reply::not_found()), page),
            // A fresh session id in the path on every link.
            "sess.test" => {
                let n: u64 = p
                    .rsplit("jsessionid=")
                    .next()
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(0);
                page(vec![
                    format!("/shop;jsessionid={}", n + 1),
                    format!("/shop;jsessionid={}", n + 2),
                ])
            }
            // Every hop encodes the percent sign once more.
            "spiral.test" => {
                if p == "/" {
                    return page(vec!["/docs/a%20b".into()]);
                }
                page(vec![p.replace('%', "%25")])
            }
            // Day pages, each linking the next day and private addresses:
            // from a month ago on one host, from today on the other.
            "days.test" | "future.test" => {
                day_chain(&r.host, p).map_or_else(|| Some(Reply::not_found()), page)
            }
            // Raw `%` signs that are no escapes, one more on every hop, both
            // as the server decoded the path and as it came.
            "pct.test" => {
                if p == "/" {
                    return page(vec!["/pct/loop/%".into()]);
                }
                page(vec![format!("{}%", percent_decoded(p)), format!("{p}%")])
            }
            // A 20 KB URL and a path that repeats itself.
            "long.test" => {
                if p == "/" {
                    return page(vec![
                        format!("/find?q={}", "x".repeat(20_000)),
                        "/loop/".into(),
                    ]);
                }
                // A relative link that nests one level deeper on every hop.
                page(vec!["loop/".into()])
            }
            // Faceted search: every value of every facet, linked from every result page.
            "facet.test" => {
                let colors = ["red", "green", "blue", "black", "white", "grey"];
                let sizes = ["xs", "s", "m", "l", "xl", "xxl"];
                let sorts = ["price", "name", "new"];
                let mut links = Vec::new();
                for c in colors {
                    for s in sizes {
                        for o in sorts {
                            links.push(format!("/shop?color={c}&size={s}&sort={o}"));
                        }
                    }
                }
                page(links)
            }
            _ => None,
        }
    });
    let traps = [
        "cal.test",
        "sess.test",
        "spiral.test",
        "long.test",
        "facet.test",
        "days.test",
        "future.test",
        "pct.test",
    ];
    // Depth does not save us here: the traps must be stopped by their own rules.
    let ws = Workspace::new(
        &web,
        &sources(&traps),
        "min_host_gap: 10ms\nconcurrency: 8\nmax_depth: 1000",
    );
    let r = run(&ws, &["--max-duration", "25s"], true);
    r.assert_bounded(Duration::from_secs(25));
    assert_eq!(
        last_event(&ws)["stopped_by"],
        "exhausted",
        "a trap kept the run busy"
    );
    let s = summary(&ws);
    for host in traps {
        let n = web.count_host(host);
        eprintln!("{host}: {n} requests, traps {:?}", trap_kinds(&ws, host));
    }
    let rules = scraper::url::trap::TrapRules::default();
    let cap = rules.max_urls_per_pattern as usize;
    let steps = rules.max_date_steps as usize;
    // The calendar: the home page links one month (a page of another
    // pattern: not counted), and each month links its two neighbours (a date
    // page linking date pages of its pattern: a step of a date chain).
    // Months are reached only through their neighbours, so whatever the
    // order, the fetched months are one unbroken run around 2024/05: at most
    // 1 + max_date_steps of them (the date-chain rule), fewer when the URL
    // family of the months stops first (`frontier::FamilyStats`: 3 fetches
    // that brought no article). Requests: robots.txt, the home page, and
    // those months.
    let cal: Vec<String> = web
        .requests_to("cal.test")
        .iter()
        .map(|q| q.target())
        .collect();
    assert!(cal.len() <= 2 + 1 + steps, "{cal:?}");
    assert!(
        cal.len() >= 2 + scraper::frontier::STOP_AFTER as usize,
        "{cal:?}"
    );
    let mut months: Vec<i32> = cal
        .iter()
        .filter_map(|t| {
            let (y, m) = t.strip_prefix("/cal/")?.split_once('/')?;
            Some(y.parse::<i32>().ok()? * 12 + m.parse::<i32>().ok()? - 1)
        })
        .collect();
    months.sort_unstable();
    assert_eq!(months.len(), cal.len() - 2, "{cal:?}");
    assert!(months.contains(&(2024 * 12 + 4)), "{cal:?}");
    assert!(months.windows(2).all(|w| w[1] == w[0] + 1), "{cal:?}");
    assert!(
        s["hosts"]["cal.test"]["family_stopped"]
            .as_u64()
            .unwrap_or(0)
            > 0
            || trap_kinds(&ws, "cal.test") == ["date_chain"; 2],
        "the calendar ended by neither rule"
    );
    // Day pages from a month ago: the entry and at most max_date_steps days
    // after it (robots.txt and the home page besides), the next day trapped,
    // or fewer when the day pages' family stops first.
    let days = web.requests_to("days.test");
    assert!(days.len() <= 2 + 1 + steps, "{days:?}");
    assert!(
        days.len() >= 2 + scraper::frontier::STOP_AFTER as usize,
        "{days:?}"
    );
    assert!(
        s["hosts"]["days.test"]["family_stopped"]
            .as_u64()
            .unwrap_or(0)
            > 0
            || trap_kinds(&ws, "days.test") == ["date_chain"],
        "the day chain ended by neither rule"
    );
    // From today: today and tomorrow (a day of slack for time zones), never
    // a later day, whatever the chain cap would allow.
    let today = chrono::Utc::now().date_naive();
    let future: Vec<String> = web
        .requests_to("future.test")
        .iter()
        .map(|q| q.target())
        .collect();
    assert!(future.len() <= 4, "{future:?}");
    for t in future.iter().filter(|t| t.starts_with("/calendar/")) {
        let d = chrono::NaiveDate::parse_from_str(t, "/calendar/%Y/%m/%d/").expect("a day page");
        assert!(d <= today + chrono::Days::new(1), "{t} is after tomorrow");
    }
    assert_eq!(trap_kinds(&ws, "future.test"), ["future_date"]);
    // The raw-% spiral: robots.txt, home and `/pct/loop/%25`; every longer
    // run of percent signs is refused.
    let pct: Vec<String> = web
        .requests_to("pct.test")
        .iter()
        .map(|q| q.target())
        .collect();
    assert_eq!(pct.len(), 3, "{pct:?}");
    assert!(pct.contains(&"/pct/loop/%25".to_string()), "{pct:?}");
    assert!(
        trap_kinds(&ws, "pct.test")
            .iter()
            .all(|k| k == "percent_spiral"),
        "{:?}",
        trap_kinds(&ws, "pct.test")
    );
    assert!(s["hosts"]["pct.test"]["traps"].as_u64().unwrap_or(0) >= 1);
    // Links to private and local addresses are never requested.
    let private = ["127.0.0.1", "10.0.0.7", "169.254.169.254", "localhost"];
    assert!(
        web.log()
            .iter()
            .all(|q| !private.iter().any(|p| q.host.starts_with(p))),
        "a private address was requested"
    );
    // Faceted search: every one of the 6 x 6 x 3 links carries a query, so all
    // count, even from the home page: cap of them are fetched (the same links
    // on each result page are known by then), the rest trapped once each.
    // The result pages' family (`/shop?`) may stop first: then fewer are
    // fetched and the rest are not fetched as family-stopped links.
    let facet = web.requests_to("facet.test");
    let shop = facet.iter().filter(|q| q.path == "/shop").count();
    assert_eq!(facet.len(), 2 + shop);
    assert!(
        (scraper::frontier::STOP_AFTER as usize..=cap).contains(&shop),
        "{:?}",
        facet.iter().map(|q| q.target()).collect::<Vec<_>>()
    );
    assert_eq!(trap_kinds(&ws, "facet.test").len(), 6 * 6 * 3 - cap);
    assert!(s["hosts"]["cal.test"]["traps"].as_u64().unwrap_or(0) <= 2);
    assert_eq!(s["hosts"]["facet.test"]["traps"], 6 * 6 * 3 - cap);
    // Session ids and encoding spirals are one URL each: robots.txt, home
    // and one page.
    assert_eq!(web.count_host("sess.test"), 3);
    assert_eq!(web.count_host("spiral.test"), 3);
    // The long URL is never requested; the rules are counted per host and logged.
    assert!(
        web.requests_to("long.test")
            .iter()
            .all(|q| q.target().len() < 2048)
    );
    // (cal.test and days.test may end by their family instead: above.)
    for (host, kind) in [
        ("future.test", "future_date"),
        ("pct.test", "percent_spiral"),
        ("long.test", "too_long"),
        ("long.test", "repeated_segment"),
        ("facet.test", "pattern_cap"),
    ] {
        assert!(
            trap_kinds(&ws, host).iter().any(|k| k == kind),
            "{host}: no {kind} trap event"
        );
        assert!(
            s["hosts"][host]["traps"].as_u64().unwrap_or(0) >= 1,
            "{host}: {}",
            s["hosts"][host]
        );
    }
    assert_news_stored(&ws);
    eprintln!("traps: {:?}, peak RSS {} MiB", r.took, r.peak_kb / 1024);
}

#[test]
fn known_failures_are_not_fetched_again() {
    let web = news_web_with(|r: &Req| {
        if r.host != "fail.test" || r.path == "/robots.txt" {
            return None;
        }
        let p = r.path.as_str();
        Some(match p {
            "/" => Reply::html(listing_html(
                "Failures",
                &[
                    "/loop-a".into(),
                    "/chain/0".into(),
                    "/big".into(),
                    "/gone".into(),
                    "/removed".into(),
                    "/file.bin".into(),
                    "/forbidden".into(),
                ],
            )),
            "/loop-a" => Reply::redirect(302, "/loop-b"),
            "/loop-b" => Reply::redirect(302, "/loop-a"),
            "/big" => Reply::html("").repeat(vec![b'x'; 1 << 20], Some(50)),
            "/gone" => Reply::not_found(),
            "/removed" => Reply::status(410),
            "/file.bin" => Reply::bytes("application/octet-stream", vec![0u8; 1000]),
            "/forbidden" => Reply::status(403),
            _ => match p
                .strip_prefix("/chain/")
                .and_then(|n| n.parse::<u32>().ok())
            {
                Some(n) => Reply::redirect(301, &format!("/chain/{}", n + 1)),
                None => Reply::not_found(),
            },
        })
    });
    let ws = Workspace::new(&web, &sources(&["fail.test"]), "");
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    let s = summary(&ws);
    for class in [
        "redirect_loop",
        "too_many_redirects",
        "too_large",
        "not_html",
    ] {
        assert_class(&ws, &s, "fail.test", class);
    }
    assert_eq!(
        errors(&s, "fail.test", "4xx"),
        3,
        "{}",
        s["hosts"]["fail.test"]
    );
    // The next day: the home page is read again, the failures are not.
    web.clear_log();
    let r = run(&ws, &["--max-duration", "20s"], true);
    r.assert_bounded(Duration::from_secs(20));
    let asked: Vec<String> = web
        .requests_to("fail.test")
        .iter()
        .map(|q| q.path.clone())
        .filter(|p| p != "/robots.txt" && p != "/")
        .collect();
    // Only the 403 (not a failure for good) is due again, after revisit_after_days: not today either.
    assert!(asked.is_empty(), "fetched again: {asked:?}");
    let s = summary(&ws);
    assert!(
        s["hosts"]["fail.test"]["known_failures"]
            .as_u64()
            .unwrap_or(0)
            >= 6,
        "{}",
        s["hosts"]["fail.test"]
    );
    assert_news_stored(&ws);
}
