//! Web Bot Auth end to end: the real binary crawls the fixture web with
//! `crawl.web_bot_auth` set, and every request the server saw (robots.txt,
//! listings, pages, redirect hops) is verified by an independent RFC 9421
//! implementation (Python `http-message-signatures`, with a key made and
//! thumbprinted by Python `cryptography`: see `web_bot_auth.py`). Without the
//! section, no request carries a signature header; a bad key stops the run
//! before any request with an error naming the file.
//!
//! The string form of `Signature-Agent` is checked by the same Python
//! verifier and by Cloudflare's `web-bot-auth` npm library
//! (`web_bot_auth.cjs`), which also verifies the signed key-directory
//! response of `scraper keys --response`; `sign: when_asked` signs a host's
//! requests only after it sent `Accept-Signature`. The private key is found
//! nowhere in the data folder (state, shard, WARC) or the log.
//!
//! The Python checks fail loudly when python3 or its modules are missing;
//! set `SCRAPER_SKIP_PY=1` to skip them instead. The node checks need the
//! npm install `.ci/run` makes (`target/npm-web-bot-auth`, or
//! `SCRAPER_NODE_MODULES`); `SCRAPER_SKIP_NODE=1` skips them.

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

/// The folder holding `web-bot-auth` and `http-message-sig` (npm).
fn node_modules() -> std::path::PathBuf {
    std::env::var_os("SCRAPER_NODE_MODULES").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/npm-web-bot-auth/node_modules"),
        Into::into,
    )
}

/// `node web_bot_auth.cjs ARGS...`; `None` under SCRAPER_SKIP_NODE=1.
fn node(args: &[&str]) -> Option<String> {
    let modules = node_modules();
    let present = || {
        Command::new("node")
            .args(["-e", "require('web-bot-auth'); require('http-message-sig')"])
            .env("NODE_PATH", &modules)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let how = "npm install --prefix target/npm-web-bot-auth web-bot-auth, as .ci/run does";
    if !Tool::Node.need("the web-bot-auth library check", present, how) {
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fetch/web_bot_auth.cjs");
    let out = Command::new("node")
        .arg(&script)
        .args(args)
        .env("NODE_PATH", &modules)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "web_bot_auth.cjs {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// No file under `dir` (gzip members read through) holds `secret`.
fn nowhere_in(dir: &Path, secret: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            nowhere_in(&path, secret);
            continue;
        }
        let raw = std::fs::read(&path).unwrap();
        let mut text = raw.clone();
        if raw.starts_with(&[0x1f, 0x8b]) {
            text.clear();
            let _ = std::io::Read::read_to_end(
                &mut flate2::read::MultiGzDecoder::new(&raw[..]),
                &mut text,
            );
        }
        assert!(
            !String::from_utf8_lossy(&text).contains(secret),
            "{} holds the private key",
            path.display()
        );
    }
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

#[test]
fn the_string_form_verifies_with_python_and_cloudflares_library() {
    let web = news_web();
    let ws = Workspace::new(
        &web,
        SOURCES,
        &format!(
            "web_bot_auth: {{key_file: bot.pem, signature_agent: \"{AGENT}\", signature_agent_form: string, contact: \"mailto:ops@bot.example\"}}\narchive: all"
        ),
    );
    let key_path = ws.dir.path().join("bot.pem");
    let Some(made) = python(&["gen", key_path.to_str().unwrap()]) else {
        return;
    };
    let made: serde_json::Value = serde_json::from_str(&made).unwrap();
    let x = made["x"].as_str().unwrap();
    let out = ws.crawl(&["--max-duration", "10s", "--max-pages", "12"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let file = ws.dir.path().join("requests.json");
    let sent = dump_requests(&web, &file);
    assert!(sent >= 5, "only {sent} requests");
    for r in web.log() {
        assert_eq!(
            r.header("signature-agent"),
            Some(format!("\"{AGENT}\"").as_str())
        );
    }
    let report = python(&["verify", file.to_str().unwrap(), AGENT, x, "string"]);
    if let Some(report) = report {
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        assert_eq!(report["verified"].as_u64(), Some(sent as u64), "{report}");
    }
    if let Some(report) = node(&["requests", file.to_str().unwrap(), AGENT, x]) {
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        assert_eq!(report["verified"].as_u64(), Some(sent as u64), "{report}");
        assert_eq!(report["keyids"], serde_json::json!([made["thumbprint"]]));
    }

    // The signed directory response, checked by the npm library.
    let out = ws.command(&["keys", "--response"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let response = ws.dir.path().join("directory.txt");
    std::fs::write(&response, &out.stdout).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\nContent-Type: application/http-message-signatures-directory+json\r\n"), "{text}");
    assert!(
        text.contains("Signature-Input: binding0=(\"@authority\";req);"),
        "{text}"
    );
    if let Some(report) = node(&["directory", response.to_str().unwrap(), AGENT, x]) {
        assert!(report.contains("\"verified\":1"), "{report}");
    }
    // The Signature Agent Card says who, why, whom to ask, how fast, which keys.
    let out = ws.command(&["keys", "--card"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let card: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(card["rfc9309-product-token"], "scraper-test");
    assert_eq!(card["purpose"], "train-ai");
    assert_eq!(
        card["contacts"],
        serde_json::json!(["mailto:ops@bot.example"])
    );
    assert_eq!(card["keys"][0]["x"], made["x"]);
    assert!(
        card["rate-expectation"].as_str().unwrap().contains("40ms"),
        "{card}"
    );
    // A second key beside it (a rotation): both published.
    let next = ws.dir.path().join("next.pem");
    python(&["gen", next.to_str().unwrap()]);
    let out = ws
        .command(&["keys", "--also", next.to_str().unwrap()])
        .output()
        .unwrap();
    let dir: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(dir["keys"].as_array().unwrap().len(), 2, "{dir}");

    // The private key is nowhere: not in state, shards, the WARC or the log.
    let pem = std::fs::read_to_string(&key_path).unwrap();
    let secret: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    assert!(secret.len() > 40);
    assert!(
        ws.data().join("warc").exists(),
        "archive: all wrote no WARC"
    );
    nowhere_in(&ws.data(), &secret);
    assert!(!stderr(&ws.crawl(&["--max-duration", "3s", "--max-pages", "2"])).contains(&secret));
}

#[test]
fn when_asked_signs_a_host_only_after_it_sends_accept_signature() {
    use crate::support::fixture::{article_html, day, listing_html, news_web_with};
    use crate::support::web::{Reply, Req};
    let web = news_web_with(|r: &Req| {
        let host = r.host.as_str();
        if host != "ask.test" && host != "quiet.test" {
            return None;
        }
        Some(match r.path.as_str() {
            "/robots.txt" => Reply::not_found(),
            "/" => {
                let home = Reply::html(listing_html(
                    "Home",
                    &(0..3).map(article_path).collect::<Vec<_>>(),
                ));
                if host == "ask.test" {
                    home.header("Accept-Signature", "sig1=(\"@authority\" \"signature-agent\";key=\"sig1\");tag=\"web-bot-auth\"")
                } else {
                    home
                }
            }
            p if p.contains("/story-") => Reply::html(article_html(host, 1, &day(1))),
            _ => Reply::not_found(),
        })
    });
    let ws = Workspace::new(
        &web,
        "  - {host: ask.test, seeds: [http://ask.test/]}\n  - {host: quiet.test, seeds: [http://quiet.test/]}",
        &format!(
            "web_bot_auth: {{key_file: made.pem, signature_agent: \"{AGENT}\", sign: when_asked}}"
        ),
    );
    let path = ws.dir.path().join("made.pem");
    let out = ws
        .command(&["keys", "--generate", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ws.crawl(&["--max-duration", "8s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let signed = |r: &crate::support::web::LoggedRequest| r.header("signature").is_some();
    let ask = web.requests_to("ask.test");
    let home = ask
        .iter()
        .position(|r| r.target() == "/")
        .expect("home asked");
    assert!(
        ask[..=home].iter().all(|r| !signed(r)),
        "signed before it was asked"
    );
    let after = &ask[home + 1..];
    assert!(
        !after.is_empty() && after.iter().all(signed),
        "not signed once asked"
    );
    let quiet = web.requests_to("quiet.test");
    assert!(quiet.len() >= 2 && quiet.iter().all(|r| !signed(r)));
}
