//! Publisher consent end to end: the real binary against a fixture web where
//! each host uses one signal, as today's documents write it. Reserving AI
//! training: `ai-train=no` in robots.txt, `X-Robots-Tag: noai`, a TDMRep
//! reservation, the IETF `Content-Usage: train-ai=n` header, a
//! `Content-Usage` robots.txt rule scoped to article paths, the
//! `Content-Signal` response header, and RSL licences found through
//! robots.txt `License:`, a `Link` header (paid terms) and `<link
//! rel="license">`. Allowing it (nothing withheld): an old aipref label
//! (`bots=n`), a `Content-Usage` line outside any group, a Content-Signal
//! header that allows training, and a free RSL licence. A host that answers
//! articles with `402` and a host that says nothing complete the web.

use std::collections::HashMap;

use crate::support::fixture::{
    Workspace, article_html, article_path, day, listing_html, news_web_with, read_jsonl, stderr,
};
use crate::support::web::{Reply, Req, Web};

const SOURCES: &str = "  - {host: signal.test, seeds: [http://signal.test/]}\n  - {host: tagged.test, seeds: [http://tagged.test/]}\n  - {host: tdm.test, seeds: [http://tdm.test/]}\n  - {host: usage.test, seeds: [http://usage.test/]}\n  - {host: rules.test, seeds: [http://rules.test/]}\n  - {host: cshead.test, seeds: [http://cshead.test/]}\n  - {host: rsl.test, seeds: [http://rsl.test/]}\n  - {host: paid.test, seeds: [http://paid.test/]}\n  - {host: rslpage.test, seeds: [http://rslpage.test/]}\n  - {host: bots.test, seeds: [http://bots.test/]}\n  - {host: loose.test, seeds: [http://loose.test/]}\n  - {host: open.test, seeds: [http://open.test/]}\n  - {host: free.test, seeds: [http://free.test/]}\n  - {host: pay.test, seeds: [http://pay.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}";

/// The hosts that reserve AI training, with the signal each record must carry.
const RESERVING: [(&str, &str); 9] = [
    ("signal.test", "robots.txt:ai-train=no"),
    ("tagged.test", "x-robots-tag:noai"),
    ("tdm.test", "tdmrep.json:1"),
    ("usage.test", "content-usage:train-ai=n"),
    ("rules.test", "robots.txt:content-usage:train-ai=n,search=y"),
    ("cshead.test", "content-signal:ai-train=no"),
    (
        "rsl.test",
        "rsl:http://rsl.test/license.xml;permits=search,ai-input;prohibits=ai-train;payment=free",
    ),
    (
        "paid.test",
        "rsl:http://paid.test/rsl.xml;permits=all;payment=purchase",
    ),
    (
        "rslpage.test",
        "rsl:http://rslpage.test/terms/license.xml;prohibits=ai-all;payment=free",
    ),
];

/// Hosts whose signals allow AI training, with the signal each record
/// carries (`None`: no signal recorded): every article stored.
const ALLOWING: [(&str, Option<&str>); 4] = [
    // draft-ietf-aipref-vocab-08 has no `bots` label: recorded, not acted on.
    ("bots.test", Some("robots.txt:content-usage:bots=n")),
    // A Content-Usage line outside any group states nothing (attach-05).
    ("loose.test", None),
    ("open.test", Some("content-signal:ai-train=yes")),
    (
        "free.test",
        Some("rsl:http://free.test/license.xml;permits=search,ai-train;payment=free"),
    ),
];

/// An RSL document: `<content url="/">` with one licence.
fn rsl_doc(license: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rsl xmlns=\"https://rslstandard.org/rsl\">\n  <content url=\"/\">\n    <license>\n{license}\n    </license>\n  </content>\n</rsl>\n"
    )
}

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
        let known = RESERVING.iter().any(|(h, _)| *h == host)
            || ALLOWING.iter().any(|(h, _)| *h == host)
            || host == "pay.test";
        if !known {
            return None;
        }
        let rsl = |license: &str| Reply::bytes("application/rsl+xml", rsl_doc(license));
        let reply = match r.path.as_str() {
            "/robots.txt" if host == "rsl.test" => {
                Reply::text("User-agent: *\nAllow: /\n\nLicense: http://rsl.test/license.xml\n")
            }
            "/robots.txt" if host == "free.test" => {
                Reply::text("User-agent: *\nAllow: /\nLicense: /license.xml\n")
            }
            "/robots.txt" if host == "bots.test" => {
                Reply::text("User-agent: *\nAllow: /\nContent-Usage: bots=n\n")
            }
            "/robots.txt" if host == "loose.test" => {
                Reply::text("Content-Usage: train-ai=n\n\nUser-agent: *\nAllow: /\n")
            }
            "/license.xml" if host == "rsl.test" => rsl(
                "<permits type=\"usage\">search ai-input</permits><prohibits type=\"usage\">ai-train</prohibits><payment type=\"free\"/>",
            ),
            "/license.xml" if host == "free.test" => {
                rsl("<permits type=\"usage\">search ai-train</permits><payment type=\"free\"/>")
            }
            "/rsl.xml" if host == "paid.test" => rsl(
                "<permits type=\"usage\">all</permits><payment type=\"purchase\"><amount currency=\"USD\">25</amount></payment>",
            ),
            "/terms/license.xml" if host == "rslpage.test" => {
                rsl("<prohibits type=\"usage\">ai-all</prohibits>")
            }
            p if host == "pay.test" && p.contains("/story-") => Reply::status(402)
                .header("crawler-price", "USD 0.01")
                .header("crawler-error", "2")
                .header("Link", "<http://pay.test/terms>; rel=\"terms-of-service\""),
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
                if host == "rslpage.test" {
                    html = html.replace(
                        "</head>",
                        "<link rel=\"license\" type=\"application/rsl+xml\" href=\"/terms/license.xml\"></head>",
                    );
                }
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
            "cshead.test" => reply.header("Content-Signal", "search=yes, ai-train=no"),
            "open.test" => reply.header("Content-Signal", "search=yes, ai-train=yes, use=full"),
            "paid.test" if r.path.contains("/story-") => reply.header(
                "Link",
                "<http://paid.test/rsl.xml>; rel=\"license\"; type=\"application/rsl+xml\"",
            ),
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
    allowed_are_stored(&ws, &web, &records, &s);
    health_says_what_each_host_reserved(&ws, &s, &stderr);
}

/// Nothing is withheld that the signals allow; what they said is recorded.
fn allowed_are_stored(
    ws: &Workspace,
    web: &Web,
    records: &[serde_json::Value],
    s: &serde_json::Value,
) {
    let domains = by_domain(records);
    for (host, label) in ALLOWING {
        let got = domains.get(host).map_or(&[][..], |v| v.as_slice());
        assert_eq!(
            got.len(),
            LISTED + 1,
            "{host}: every article stored: {}",
            s["hosts"][host]
        );
        assert_eq!(
            s["hosts"][host]["withheld_ai_use"].as_u64(),
            Some(0),
            "{host}"
        );
        for r in got {
            assert_eq!(r["ai_reserved"], false, "{r}");
            match label {
                Some(l) => assert!(
                    r["ai_signals"].as_array().unwrap().iter().any(|x| x == l),
                    "{host}: {}",
                    r["ai_signals"]
                ),
                None => assert!(r.get("ai_signals").is_none(), "{r}"),
            }
        }
    }
    // Each licence read once, however many pages point to it.
    for (host, path) in [
        ("rsl.test", "/license.xml"),
        ("free.test", "/license.xml"),
        ("paid.test", "/rsl.xml"),
        ("rslpage.test", "/terms/license.xml"),
    ] {
        assert_eq!(web.count(host, path), 1, "{host}{path}");
    }
    // The 402 host: nothing stored, nothing paid for.
    assert!(!domains.contains_key("pay.test"));
    assert_eq!(
        s["hosts"]["pay.test"]["payment"],
        serde_json::json!({"price": "USD 0.01", "error": "2", "terms": "http://pay.test/terms"})
    );
    let _ = ws;
}

/// `last_run.json`, the end-of-run lines and `scraper health` say what each host reserved.
fn health_says_what_each_host_reserved(ws: &Workspace, s: &serde_json::Value, stderr: &str) {
    for (host, label) in RESERVING {
        let by = s["hosts"][host]["ai_reserved"]
            .as_object()
            .unwrap_or_else(|| panic!("{host}: {}", s["hosts"][host]));
        assert!(by.keys().any(|k| k.starts_with(label)), "{host}: {by:?}");
        assert!(
            stderr.contains(&format!("{host}: reserved by {label}")),
            "{host}:\n{stderr}"
        );
    }
    assert_eq!(
        s["hosts"]["rsl.test"]["licenses"],
        serde_json::json!(["http://rsl.test/license.xml"])
    );
    assert_eq!(
        s["hosts"]["free.test"]["licenses"],
        serde_json::json!(["http://free.test/license.xml"])
    );
    for (host, _) in ALLOWING {
        assert!(
            s["hosts"][host].get("ai_reserved").is_none(),
            "{host}: {}",
            s["hosts"][host]
        );
    }
    assert!(
        stderr.contains("pay.test: payment required (402, price USD 0.01, crawler-error 2, terms http://pay.test/terms) (not paid)"),
        "{stderr}"
    );
    let out = ws.command(&["health", "--data", "data"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        crate::support::fixture::stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "payment required (402, price USD 0.01, crawler-error 2, terms http://pay.test/terms)"
        ),
        "{text}"
    );
    assert!(
        text.contains("note: reserves AI use: rsl:http://rsl.test/license.xml;"),
        "{text}"
    );
    assert!(
        text.contains("note: RSL licence: http://free.test/license.xml"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "note: reserves AI use: content-signal:ai-train=no ({} articles)",
            LISTED + 1
        )),
        "{text}"
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
