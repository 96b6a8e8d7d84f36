//! Publishers who turn the crawler away, end to end: a CDN's challenge wall
//! (403 with `cf-mitigated: challenge`), a JavaScript challenge interstitial
//! answered 200 on every page, a host whose articles answer `402 Payment
//! Required` with a `crawler-price`, and a normal host. Only the normal host
//! is stored; each of the others is counted under its own class in
//! `last_run.json`, the event log, the end-of-run table and the health file,
//! and `scraper health` names it.

use serde_json::Value;

use crate::support::fixture::{Workspace, article_html, article_path, day, listing_html, stderr};
use crate::support::web::{Reply, Req, Web};

/// Articles each host links from its home page.
const N: usize = 4;

const SOURCES: &str = "  - {host: wall.test, seeds: [http://wall.test/]}
  - {host: gate.test, seeds: [http://gate.test/]}
  - {host: paid.test, seeds: [http://paid.test/]}
  - {host: fine.test, seeds: [http://fine.test/]}";

/// A challenge interstitial as a CDN serves it, with links that must not be followed.
fn interstitial() -> String {
    let links: String = (0..N)
        .map(|n| format!("<a href=\"{}\">more</a>", article_path(n)))
        .collect();
    format!(
        "<!DOCTYPE html><html lang=\"en-US\"><head><title>Just a moment...</title>\
         <meta name=\"robots\" content=\"noindex,nofollow\"></head><body>\
         <div class=\"main-wrapper\" role=\"main\"><div class=\"main-content\">\
         <h1>gate.test</h1><p id=\"challenge-body-text\">gate.test needs to review the security of your connection before proceeding.</p>\
         <noscript><div>Enable JavaScript and cookies to continue</div></noscript></div></div>\
         <script>(function(){{window._cf_chl_opt={{cvId: '3', cZone: 'gate.test', cType: 'managed'}};}}());</script>\
         {links}</body></html>"
    )
}

fn web() -> Web {
    Web::start(|r: &Req| {
        let host = r.host.as_str();
        let path = r.path.as_str();
        if path == "/robots.txt" {
            return Reply::text("User-agent: *\nAllow: /\n");
        }
        let home = || {
            let links: Vec<String> = (0..N).map(article_path).collect();
            Reply::html(listing_html(host, &links))
        };
        match host {
            "wall.test" => Reply::status(403)
                .header("cf-mitigated", "challenge")
                .header("content-type", "text/html")
                .body("<html><head><title>Just a moment...</title></head><body></body></html>"),
            "gate.test" => Reply::html(interstitial()),
            "paid.test" if path == "/" => home(),
            "paid.test" => Reply::status(402)
                .header("crawler-price", "USD 0.01")
                .header("content-type", "text/plain"),
            "fine.test" if path == "/" => home(),
            "fine.test" => {
                let n = (0..N).find(|&n| article_path(n) == path);
                match n {
                    Some(n) => Reply::html(article_html(host, n, &day(n))),
                    None => Reply::not_found(),
                }
            }
            _ => Reply::not_found(),
        }
    })
}

fn crawl(ws: &Workspace) -> String {
    let out = ws.crawl(&["--max-duration", "20s"]);
    let err = stderr(&out);
    assert!(out.status.success(), "crawl failed: {err}");
    err
}

fn json(ws: &Workspace, rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(ws.data().join(rel)).expect(rel)).expect(rel)
}

fn verdict<'a>(h: &'a Value, source: &str) -> &'a Value {
    h["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .find(|v| v["source"] == source)
        .unwrap_or_else(|| panic!("{source} missing from {h}"))
}

#[test]
fn challenges_and_payment_are_outcomes_of_their_own() {
    let web = web();
    let ws = Workspace::new(&web, SOURCES, "min_host_gap: 20ms\nconcurrency: 4");
    let err = crawl(&ws);

    // Only the normal host's articles are stored.
    let stored: Vec<String> = ws
        .records()
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect();
    let mut want: Vec<String> = (0..N)
        .map(|n| format!("http://fine.test{}", article_path(n)))
        .collect();
    let mut got = stored.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want, "stored: {stored:?}");

    // The interstitial's links are never followed: robots.txt and the home page only.
    let gate: Vec<String> = web
        .requests_to("gate.test")
        .iter()
        .map(|q| q.target())
        .collect();
    assert_eq!(gate, ["/robots.txt", "/"], "{gate:?}");

    // Counted under their own classes, per host, in the run summary and the event log.
    let last = json(&ws, "state/last_run.json");
    let errors =
        |host: &str, class: &str| last["hosts"][host]["errors"][class].as_u64().unwrap_or(0);
    assert_eq!(
        errors("wall.test", "challenge"),
        1,
        "{}",
        last["hosts"]["wall.test"]
    );
    assert_eq!(
        errors("gate.test", "challenge"),
        1,
        "{}",
        last["hosts"]["gate.test"]
    );
    assert_eq!(
        errors("paid.test", "payment_required"),
        N as u64,
        "{}",
        last["hosts"]["paid.test"]
    );
    assert_eq!(
        last["hosts"]["wall.test"]["errors"].get("4xx"),
        None,
        "a challenge is no plain 4xx"
    );
    // (fine.test's 4xx are the article template's nav links, which do not exist.)
    assert_eq!(
        errors("fine.test", "challenge") + errors("fine.test", "payment_required"),
        0
    );
    let classes: Vec<(String, String)> = ws
        .events()
        .iter()
        .filter(|e| e["event"] == "error")
        .map(|e| {
            (
                e["class"].as_str().unwrap_or_default().to_string(),
                e["error"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        classes
            .iter()
            .any(|(c, e)| c == "payment_required" && e.contains("price USD 0.01")),
        "{classes:?}"
    );
    // The end-of-run table shows them.
    assert!(err.contains("challenge: 1"), "{err}");
    assert!(err.contains(&format!("payment_required: {N}")), "{err}");

    // The health file, and `scraper health --json`.
    let run_id = last["run_id"].as_str().expect("run id").to_string();
    let health_file = json(&ws, &format!("state/health/{run_id}.json"));
    assert_eq!(
        health_file["sources"]["gate.test"]["answers"]["challenge"],
        1
    );
    assert_eq!(health_file["sources"]["paid.test"]["price"], "USD 0.01");
    let out = ws
        .command(&["health", "--data", "data", "--json"])
        .output()
        .expect("run health");
    assert!(out.status.success(), "health failed: {}", stderr(&out));
    let h: Value = serde_json::from_slice(&out.stdout).expect("health json");
    for host in ["wall.test", "gate.test"] {
        let v = verdict(&h, host);
        assert_ne!(v["status"], "ok", "{v}");
        assert_eq!(v["findings"][0]["problem"], "bot_challenge", "{v}");
        assert_eq!(
            v["findings"][0]["reason"],
            format!("bot challenge on every request since run {run_id}"),
            "{v}"
        );
    }
    let paid = verdict(&h, "paid.test");
    assert_eq!(paid["status"], "broken", "{paid}");
    assert_eq!(paid["findings"][0]["problem"], "payment_required", "{paid}");
    assert_eq!(
        paid["findings"][0]["reason"],
        format!("payment required (402, price USD 0.01) on every article since run {run_id}"),
        "{paid}"
    );
    assert_eq!(verdict(&h, "fine.test")["status"], "ok");

    // A 402 is the publisher's decision, not a transient failure: the next
    // run does not ask for those articles again (the challenged pages are
    // tried again, from wherever the next run is made).
    web.clear_log();
    crawl(&ws);
    let paid: Vec<String> = web
        .requests_to("paid.test")
        .iter()
        .map(|q| q.target())
        .collect();
    assert!(paid.iter().all(|t| !t.contains("/story-")), "{paid:?}");
    let last = json(&ws, "state/last_run.json");
    assert_eq!(
        last["hosts"]["paid.test"]["known_failures"], N as u64,
        "{}",
        last["hosts"]["paid.test"]
    );
}
