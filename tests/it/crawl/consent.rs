//! Publisher consent end to end: the real binary against a fixture web where
//! one host says `ai-train=no` in robots.txt, one sends `X-Robots-Tag: noai`,
//! one publishes a TDMRep reservation, one sends the IETF `Content-Usage:
//! train-ai=n` header and one scopes a `Content-Usage` robots.txt rule to its
//! article paths, next to a host that says nothing.

use std::collections::HashMap;

use crate::support::fixture::{
    Workspace, article_html, article_path, day, listing_html, news_web_with, read_jsonl, stderr,
};
use crate::support::web::{Reply, Req, Web};

const SOURCES: &str = "  - {host: signal.test, seeds: [http://signal.test/]}\n  - {host: tagged.test, seeds: [http://tagged.test/]}\n  - {host: tdm.test, seeds: [http://tdm.test/]}\n  - {host: usage.test, seeds: [http://usage.test/]}\n  - {host: rules.test, seeds: [http://rules.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}";

/// The hosts that reserve AI training, with the signal each record must carry.
const RESERVING: [(&str, &str); 5] = [
    ("signal.test", "robots.txt:ai-train=no"),
    ("tagged.test", "x-robots-tag:noai"),
    ("tdm.test", "tdmrep.json:1"),
    ("usage.test", "content-usage:train-ai=n"),
    ("rules.test", "robots.txt:content-usage:train-ai=n,search=y"),
];

/// rules.test's robots.txt: AI training allowed on the site, reserved under
/// `/2024/` (every article), and a malformed line that is counted and ignored.
const RULES_ROBOTS: &str = "User-agent: *\nAllow: /\nContent-Usage: train-ai=y\n\
    Content-Usage: /2024/ train-ai=n, search=y\nContent-Usage: /2024/ Train-AI=y\n";

/// Stories listed on each reserving host's home page.
const LISTED: usize = 4;
/// A story linked only from story 0: fetched only if links of withheld pages are followed.
const LINKED_ONLY: usize = 9;

fn consent_web() -> Web {
    news_web_with(|r: &Req| {
        let host = r.host.as_str();
        if !RESERVING.iter().any(|(h, _)| *h == host) {
            return None;
        }
        let reply = match r.path.as_str() {
            "/robots.txt" if host == "signal.test" => Reply::text(
                "User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n\n\
                 User-agent: otherbot\nContent-Signal: ai-train=yes\n",
            ),
            "/robots.txt" if host == "rules.test" => Reply::text(RULES_ROBOTS),
            "/robots.txt" => Reply::not_found(),
            "/.well-known/tdmrep.json" if host == "tdm.test" => Reply::bytes(
                "application/json",
                r#"[{"location": "/", "tdm-reservation": 1, "tdm-policy": "http://tdm.test/policy.json"}]"#,
            ),
            "/" => Reply::html(listing_html(
                "Home",
                &(0..LISTED).map(article_path).collect::<Vec<_>>(),
            )),
            p if p.contains("/story-") => {
                let n: usize = p
                    .rsplit("story-")
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let mut html = article_html(host, n, &day(n));
                if n == 0 {
                    let link = format!(
                        "<p><a href=\"{}\">More</a></p></article>",
                        article_path(LINKED_ONLY)
                    );
                    html = html.replace("</article>", &link);
                }
                Reply::html(html)
            }
            _ => Reply::not_found(),
        };
        Some(match host {
            "tagged.test" => reply.header("X-Robots-Tag", "noai"),
            // The home page's value is malformed (upper case): counted, ignored.
            "usage.test" if r.path == "/" => reply.header("Content-Usage", "Train-AI=n"),
            "usage.test" => reply.header("Content-Usage", "train-ai=n"),
            _ => reply,
        })
    })
}

fn summary(ws: &Workspace) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(ws.data().join("state/last_run.json")).unwrap())
        .unwrap()
}

/// The lines of the one consent file the run wrote.
fn consent_lines(ws: &Workspace) -> Vec<serde_json::Value> {
    let dir = ws.data().join("state/consent");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one consent file per run: {files:?}");
    read_jsonl(&files[0])
}

fn by_domain(records: &[serde_json::Value]) -> HashMap<String, Vec<&serde_json::Value>> {
    let mut out: HashMap<String, Vec<&serde_json::Value>> = HashMap::new();
    for r in records {
        out.entry(r["domain"].as_str().unwrap().to_string())
            .or_default()
            .push(r);
    }
    out
}

#[test]
fn respect_withholds_reserved_pages_and_says_why() {
    let web = consent_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));

    let records = ws.records();
    let domains = by_domain(&records);
    for (host, _) in RESERVING {
        assert!(
            !domains.contains_key(host),
            "{host}: a reserved article was stored"
        );
    }
    assert!(
        domains.get("lab.test").is_some_and(|r| !r.is_empty()),
        "the control host stored nothing"
    );

    let s = summary(&ws);
    let stderr = stderr(&out);
    assert!(
        stderr.contains("withheld: ai-use"),
        "the end-of-run table has no withheld column:\n{stderr}"
    );
    for (host, _) in RESERVING {
        // Links of withheld pages are still followed.
        assert_eq!(
            web.count(host, &article_path(LINKED_ONLY)),
            1,
            "{host}: link of a withheld page not followed"
        );
        assert_eq!(
            s["hosts"][host]["withheld_ai_use"].as_u64(),
            Some(LISTED as u64 + 1),
            "{host}: withheld count in last_run.json: {}",
            s["hosts"][host]
        );
        assert_eq!(s["hosts"][host]["stored"].as_u64(), Some(0));
        // tdmrep.json: asked for at most once per host, and only where a page could be stored.
        assert!(web.count(host, "/.well-known/tdmrep.json") <= 1);
    }
    assert_eq!(web.count("tdm.test", "/.well-known/tdmrep.json"), 1);
    assert_eq!(s["hosts"]["lab.test"]["withheld_ai_use"].as_u64(), Some(0));
    // Malformed Content-Usage values: the header of usage.test's home page,
    // one line of rules.test's robots.txt; nowhere else.
    for host in ["usage.test", "rules.test"] {
        assert_eq!(
            s["hosts"][host]["bad_content_usage"].as_u64(),
            Some(1),
            "{host}: {}",
            s["hosts"][host]
        );
    }
    assert!(s["hosts"]["lab.test"].get("bad_content_usage").is_none());

    // Every withheld page is in the event log with its reason and signals.
    let withheld: Vec<serde_json::Value> = ws
        .events()
        .into_iter()
        .filter(|e| e["event"] == "rejected" && e["reason"] == "withheld: ai-use")
        .collect();
    assert_eq!(withheld.len(), RESERVING.len() * (LISTED + 1));
    for (host, label) in RESERVING {
        let e = withheld
            .iter()
            .find(|e| e["url"].as_str().unwrap().contains(host))
            .unwrap();
        assert!(
            e["signals"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s.as_str().unwrap().starts_with(label)),
            "{e}"
        );
    }

    // The consent file: a robots.txt snapshot per host, a line per withheld page.
    let lines = consent_lines(&ws);
    let robots: Vec<_> = lines.iter().filter(|l| l["kind"] == "robots").collect();
    for host in ["signal.test", "tagged.test", "tdm.test", "lab.test"] {
        assert_eq!(
            robots.iter().filter(|l| l["host"] == host).count(),
            1,
            "{host}: one snapshot per host"
        );
    }
    let signal = robots.iter().find(|l| l["host"] == "signal.test").unwrap();
    assert!(
        signal["body"]
            .as_str()
            .unwrap()
            .contains("Content-Signal: search=yes, ai-train=no")
    );
    assert_eq!(
        signal["content_signal"],
        serde_json::json!(["robots.txt:search=yes", "robots.txt:ai-train=no"])
    );
    assert_eq!(
        lines.iter().filter(|l| l["kind"] == "withheld").count(),
        RESERVING.len() * (LISTED + 1)
    );
}

#[test]
fn record_stores_reserved_pages_and_marks_them() {
    stored_and_marked("record");
}

#[test]
fn ignore_stores_reserved_pages_and_still_records_the_signals() {
    stored_and_marked("ignore");
}

fn stored_and_marked(policy: &str) {
    let web = consent_web();
    let ws = Workspace::new(&web, SOURCES, &format!("ai_use_policy: {policy}"));
    let out = ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));

    let records = ws.records();
    let domains = by_domain(&records);
    let snapshots: HashMap<String, serde_json::Value> = consent_lines(&ws)
        .into_iter()
        .filter(|l| l["kind"] == "robots")
        .map(|l| (l["host"].as_str().unwrap().to_string(), l))
        .collect();
    let version = format!("scraper/{}", env!("CARGO_PKG_VERSION"));
    for (host, label) in RESERVING {
        let got = domains.get(host).map_or(&[][..], |v| v.as_slice());
        assert_eq!(
            got.len(),
            LISTED + 1,
            "{host}: every article stored under `record`"
        );
        for r in got {
            assert_eq!(r["ai_reserved"], true, "{r}");
            assert!(
                r["ai_signals"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s.as_str().unwrap().starts_with(label)),
                "{host}: {}",
                r["ai_signals"]
            );
            assert_eq!(r["crawler"], version.as_str());
        }
    }
    // robots_hash points at the run's snapshot of that host's robots.txt.
    let hash = snapshots["signal.test"]["hash"]
        .as_str()
        .expect("signal.test snapshot hash");
    assert_eq!(hash.len(), 16);
    assert!(
        domains["signal.test"]
            .iter()
            .all(|r| r["robots_hash"] == hash)
    );
    // No robots.txt (404): no hash, but still a snapshot line saying so.
    assert!(
        domains["tagged.test"]
            .iter()
            .all(|r| r.get("robots_hash").is_none())
    );
    assert!(
        snapshots["tagged.test"]["outcome"]
            .as_str()
            .unwrap()
            .contains("404")
    );
    // The control host: provenance without a reservation.
    for r in &domains["lab.test"] {
        assert_eq!(r["ai_reserved"], false, "{r}");
        assert!(r.get("ai_signals").is_none(), "{r}");
        assert_eq!(r["crawler"], version.as_str());
    }
    let s = summary(&ws);
    for (host, _) in RESERVING {
        assert_eq!(s["hosts"][host]["withheld_ai_use"].as_u64(), Some(0));
        assert_eq!(s["hosts"][host]["stored"].as_u64(), Some(LISTED as u64 + 1));
    }
    assert!(consent_lines(&ws).iter().all(|l| l["kind"] != "withheld"));
}

#[test]
fn check_url_shows_the_signals_and_the_decision() {
    let web = consent_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let url = format!("http://tdm.test{}", article_path(1));
    let out = ws
        .command(&["check-url", "--proxy", &ws.proxy, "--json", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ai_reserved"], true, "{v}");
    assert_eq!(
        v["ai_signals"],
        serde_json::json!(["tdmrep.json:1;policy=http://tdm.test/policy.json"])
    );
    assert!(
        v["ai_decision"]
            .as_str()
            .unwrap()
            .starts_with("withheld: ai-use"),
        "{v}"
    );

    let url = format!("http://signal.test{}", article_path(1));
    let out = ws
        .command(&["check-url", "--proxy", &ws.proxy, &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("robots.txt:search=yes, robots.txt:ai-train=no"),
        "{text}"
    );
    assert!(text.contains("decision: withheld: ai-use"), "{text}");

    // The IETF vocabulary, from the header and from a path-scoped robots.txt rule.
    for (host, label) in [
        ("usage.test", "content-usage:train-ai=n"),
        ("rules.test", "robots.txt:content-usage:train-ai=n,search=y"),
    ] {
        let url = format!("http://{host}{}", article_path(1));
        let out = ws
            .command(&["check-url", "--proxy", &ws.proxy, "--json", &url])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["ai_signals"], serde_json::json!([label]), "{v}");
        assert_eq!(v["ai_reserved"], true, "{v}");
    }

    let url = format!("http://lab.test/blog{}", article_path(1));
    let out = ws
        .command(&["check-url", "--proxy", &ws.proxy, &url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("AI-use:       no signals"), "{text}");
    assert!(text.contains("no AI-training reservation"), "{text}");
}
