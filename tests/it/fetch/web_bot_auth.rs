//! Web Bot Auth end to end: the real binary crawls the fixture web with
//! `crawl.web_bot_auth` set, and every request the server saw (robots.txt,
//! listings, pages, redirect hops) is verified by an independent RFC 9421
//! implementation (Python `http-message-signatures`, with a key made and
//! thumbprinted by Python `cryptography`: see `web_bot_auth.py`). Without the
//! section, no request carries a signature header; a bad key stops the run
//! before any request with an error naming the file.
//!
//! The Python checks fail loudly when python3 or its modules are missing;
//! set `SCRAPER_SKIP_PY=1` to skip them instead.

use std::path::Path;
use std::process::Command;

use crate::support::fixture::{Workspace, article_path, news_web, stderr};
use crate::support::tool::{Tool, python_imports};
use crate::support::web::Web;

const SOURCES: &str = "  - {host: news.test, seeds: [http://news.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}";
const AGENT: &str = "https://bot.example/";
const SIGNATURE_HEADERS: [&str; 3] = ["signature-agent", "signature-input", "signature"];

/// `web_bot_auth.py ARGS...`; `None` under SCRAPER_SKIP_PY=1.
fn python(args: &[&str]) -> Option<String> {
    let present = || python_imports("http_message_signatures, cryptography");
    let how = "pip install http-message-signatures, as .ci/run does";
    if !Tool::Python.need("the Web Bot Auth check", present, how) {
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fetch/web_bot_auth.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "web_bot_auth.py {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

fn signed_workspace(web: &Web, key_file: &str) -> Workspace {
    Workspace::new(
        web,
        SOURCES,
        &format!("web_bot_auth: {{key_file: {key_file}, signature_agent: \"{AGENT}\"}}"),
    )
}

/// The server's log as the verifier reads it.
fn dump_requests(web: &Web, to: &Path) -> usize {
    let log = web.log();
    let requests: Vec<serde_json::Value> = log
        .iter()
        .map(|r| {
            serde_json::json!({
                "method": r.method,
                "url": format!("http://{}{}", r.host, r.target()),
                "headers": r.headers,
            })
        })
        .collect();
    std::fs::write(to, serde_json::to_vec(&requests).unwrap()).unwrap();
    log.len()
}

#[test]
fn every_request_is_signed_and_an_independent_verifier_accepts_it() {
    let web = news_web();
    let ws = signed_workspace(&web, "bot.pem");
    let key_path = ws.dir.path().join("bot.pem");
    let Some(made) = python(&["gen", key_path.to_str().unwrap()]) else {
        return;
    };
    let made: serde_json::Value = serde_json::from_str(&made).unwrap();

    // `scraper keys` publishes the key Python made, under Python's thumbprint.
    let out = ws.command(&["keys"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dir: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = dir["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{dir}");
    assert_eq!(keys[0]["kty"], "OKP");
    assert_eq!(keys[0]["crv"], "Ed25519");
    assert_eq!(keys[0]["x"], made["x"]);
    assert_eq!(keys[0]["kid"], made["thumbprint"]);

    let started = chrono::Utc::now().timestamp();
    let out = ws.crawl(&["--max-duration", "15s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let finished = chrono::Utc::now().timestamp();

    // Every kind of request was made: robots.txt of both hosts, a redirect
    // chain's hops, listings and articles.
    for (host, target) in [
        ("news.test", "/robots.txt"),
        ("lab.test", "/robots.txt"),
        ("news.test", "/old"),
        ("news.test", "/old2"),
        ("news.test", "/"),
        ("news.test", article_path(1).as_str()),
        ("lab.test", "/blog/"),
    ] {
        assert!(
            web.count(host, target) >= 1,
            "{host}{target} never requested"
        );
    }
    let file = ws.dir.path().join("requests.json");
    let sent = dump_requests(&web, &file);
    assert!(sent >= 10, "only {sent} requests");
    let Some(report) = python(&[
        "verify",
        file.to_str().unwrap(),
        AGENT,
        made["x"].as_str().unwrap(),
    ]) else {
        return;
    };
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["verified"].as_u64(), Some(sent as u64), "{report}");
    // A fresh signature per request: its own nonce, created during the run.
    assert_eq!(report["nonces"].as_u64(), Some(sent as u64), "{report}");
    for c in report["created"].as_array().unwrap() {
        let c = c.as_i64().unwrap();
        assert!(
            (started..=finished).contains(&c),
            "created {c} outside the run ({started}..{finished})"
        );
    }
}

#[test]
fn without_the_section_no_request_is_signed() {
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-duration", "10s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let log = web.log();
    assert!(log.len() >= 5, "only {} requests", log.len());
    for r in &log {
        for h in SIGNATURE_HEADERS {
            assert!(
                r.header(h).is_none(),
                "{}{} carries {h}",
                r.host,
                r.target()
            );
        }
    }
    let out = ws.command(&["keys"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("crawl.web_bot_auth is not set"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_key_file_is_a_config_error_naming_it_and_nothing_is_fetched() {
    let web = news_web();
    let ws = signed_workspace(&web, "keys/bot.pem");
    // Missing, then not a key.
    for content in [
        None,
        Some("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
    ] {
        if let Some(c) = content {
            std::fs::create_dir_all(ws.dir.path().join("keys")).unwrap();
            std::fs::write(ws.dir.path().join("keys/bot.pem"), c).unwrap();
        }
        let out = ws.crawl(&["--max-duration", "10s"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        let named = ws.dir.path().join("keys/bot.pem");
        assert!(
            err.contains(&format!(
                "crawl.web_bot_auth.key_file `{}`",
                named.display()
            )),
            "{err}"
        );
        let out = ws.command(&["keys"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).contains("keys/bot.pem"), "{}", stderr(&out));
    }
    assert_eq!(web.log().len(), 0, "requests sent without a usable key");
}

#[test]
fn keys_generate_makes_a_key_the_crawl_can_sign_with() {
    let web = news_web();
    let ws = signed_workspace(&web, "made.pem");
    let path = ws.dir.path().join("made.pem");
    let out = ws
        .command(&["keys", "--generate", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let made: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = ws.command(&["keys"]).output().unwrap();
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(made, read);
    // Never written over.
    let again = ws
        .command(&["keys", "--generate", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(stderr(&again).contains("made.pem"), "{}", stderr(&again));
    let out = ws.crawl(&["--max-duration", "5s", "--max-pages", "3"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let log = web.log();
    assert!(!log.is_empty());
    assert!(
        log.iter()
            .all(|r| SIGNATURE_HEADERS.iter().all(|h| r.header(h).is_some()))
    );
}
