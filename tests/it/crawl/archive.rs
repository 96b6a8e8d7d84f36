//! WARC archives end to end: a crawl with `archive: articles` read back by
//! an independent reader (Python `warcio`), `scraper reextract` making the
//! same bytes again, and a changed rule making new records the build keeps.
//!
//! The Python checks fail loudly when python3 or warcio is missing; set
//! `SCRAPER_SKIP_PY=1` to skip them instead.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use crate::support::fixture::{Workspace, news_web_with, stderr};
use crate::support::tool::{Tool, python_imports};
use crate::support::web::{Reply, Req};

const SOURCES: &str = "  - {host: news.test, seeds: [http://news.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}";

/// Reads every WARC file given with warcio (digests checked), and each
/// `(file, offset)` pair on stdin with one seek; prints what it found as JSON.
const WARCIO: &str = r#"
import json, sys
from warcio.archiveiterator import ArchiveIterator
out = {"responses": [], "metadata": [], "requests": 0, "problems": [], "types": [], "seek": []}
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, check_digests=True):
            t = rec.rec_type
            out["types"].append(t)
            body = rec.content_stream().read()
            if rec.digest_checker.passed is False:
                out["problems"].append(list(rec.digest_checker.problems))
            h = rec.rec_headers
            if t == "response":
                out["responses"].append({
                    "file": path.rsplit("/", 1)[-1],
                    "uri": h.get_header("WARC-Target-URI"),
                    "id": h.get_header("WARC-Record-ID"),
                    "digest_ok": rec.digest_checker.passed,
                    "status": rec.http_headers.get_statuscode(),
                    "encoding": rec.http_headers.get_header("Content-Encoding"),
                    "decoded_len": len(body),
                    "has_payload_digest": h.get_header("WARC-Payload-Digest") is not None,
                })
            elif t == "request":
                out["requests"] += 1
            elif t == "metadata":
                fields = dict(l.split(": ", 1) for l in body.decode().split("\r\n") if ": " in l)
                out["metadata"].append({"to": h.get_header("WARC-Concurrent-To"),
                                        "uri": h.get_header("WARC-Target-URI"),
                                        "record_id": int(fields["scraper-record-id"]),
                                        "run_id": fields.get("run-id"),
                                        "ai_reserved": fields.get("ai-reserved")})
for line in sys.stdin:
    path, offset = line.split()
    with open(path, "rb") as f:
        f.seek(int(offset))
        rec = next(iter(ArchiveIterator(f)))
        out["seek"].append([rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI")])
print(json.dumps(out))
"#;

/// Run `code` with `args` and `stdin`; `None` when SCRAPER_SKIP_PY=1.
fn python(code: &str, args: &[String], stdin: &str) -> Option<serde_json::Value> {
    if !Tool::Python.need(
        "the warcio check",
        || python_imports("warcio"),
        "pip install warcio, as .ci/run does",
    ) {
        return None;
    }
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(code)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is needed for this check (or set SCRAPER_SKIP_PY=1)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python failed (is warcio installed? pip install warcio):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("JSON from python"))
}

/// The standard web, with lab.test's articles sent gzip-encoded (so both
/// an identity and an encoded body are archived), and one news.test story
/// whose publisher asks for no archive (`X-Robots-Tag: noarchive`) when `noarchive`.
fn web(noarchive: bool) -> crate::support::web::Web {
    news_web_with(move |r: &Req| {
        if noarchive && r.host == "news.test" && r.path == crate::support::fixture::article_path(3)
        {
            let html = crate::support::fixture::article_html(
                "news.test",
                3,
                &crate::support::fixture::day(3),
            );
            return Some(Reply::html(html).header("X-Robots-Tag", "noarchive"));
        }
        if r.host == "lab.test" && r.path.contains("/story-") {
            let n: usize = r.path.rsplit("story-").next()?.parse().ok()?;
            let html = crate::support::fixture::article_html(
                "lab.test",
                n,
                &crate::support::fixture::day(n),
            );
            return Some(Reply::html(html).gzip());
        }
        None
    })
}

fn run(ws: &Workspace, args: &[&str]) -> String {
    let out = ws.command(args).output().expect("run scraper");
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every shard line by shard, as bytes.
fn lines(ws: &Workspace) -> Vec<(String, Vec<Vec<u8>>)> {
    ws.shards()
        .into_iter()
        .map(|p| {
            let mut v = Vec::new();
            scraper::store::shard::read_lines(&p, |l| v.push(l.to_vec())).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect()
}

fn warc_files(data: &Path) -> Vec<String> {
    scraper::store::warc::list(&data.join("warc"))
        .unwrap()
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn archived_crawl_reads_in_warcio_and_reextracts_byte_for_byte() {
    let web = web(true);
    let ws = Workspace::new(&web, SOURCES, "archive: articles");
    let out = ws.crawl(&["--max-duration", "30s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let records = ws.records();
    assert!(records.len() >= 20, "{} records", records.len());
    let files = warc_files(&ws.data());
    assert_eq!(files.len(), 1, "one WARC file per run");
    let version = records[0]["extractor_version"]
        .as_str()
        .unwrap()
        .to_string();
    let noarchive = format!(
        "http://news.test{}",
        crate::support::fixture::article_path(3)
    );
    let (records, held): (Vec<_>, Vec<_>) = records
        .into_iter()
        .partition(|r| r["url"].as_str() != Some(noarchive.as_str()));
    assert_eq!(held.len(), 1, "the noarchive page is stored");
    assert!(held[0]["warc_file"].is_null(), "but not archived");
    for r in &records {
        assert_eq!(r["warc_file"].as_str(), files[0].rsplit('/').next());
        assert!(r["warc_offset"].as_u64().is_some(), "{r}");
        assert_eq!(r["extractor_version"].as_str(), Some(version.as_str()));
    }
    let seeks: String = records
        .iter()
        .map(|r| format!("{} {}\n", files[0], r["warc_offset"]))
        .collect();
    if let Some(got) = python(WARCIO, &files, &seeks) {
        let responses = got["responses"].as_array().unwrap();
        let metadata = got["metadata"].as_array().unwrap();
        assert_eq!(got["types"][0], "warcinfo");
        assert!(got["problems"].as_array().unwrap().is_empty(), "{got}");
        // One response per stored article (archive: articles), each with its request.
        assert_eq!(responses.len(), records.len());
        assert_eq!(got["requests"].as_u64().unwrap() as usize, records.len());
        let mut by_uri: HashMap<&str, &serde_json::Value> = HashMap::new();
        for r in responses {
            assert_eq!(r["digest_ok"], true, "{r}");
            assert_eq!(r["has_payload_digest"], true);
            assert_eq!(r["status"], "200");
            by_uri.insert(r["uri"].as_str().unwrap(), r);
        }
        let gzipped = responses.iter().filter(|r| r["encoding"] == "gzip").count();
        assert!(gzipped >= 10, "lab.test's encoded bodies are archived raw");
        // Our metadata record beside each response: the record id and run id.
        assert_eq!(metadata.len(), records.len());
        for r in &records {
            let url = r["url"].as_str().unwrap();
            let resp = by_uri
                .get(url)
                .unwrap_or_else(|| panic!("no response for {url}"));
            let meta = metadata
                .iter()
                .find(|m| m["to"] == resp["id"])
                .unwrap_or_else(|| panic!("no metadata beside {url}"));
            assert_eq!(meta["record_id"], r["id"]);
            assert_eq!(meta["uri"].as_str(), Some(url));
            assert_eq!(meta["run_id"], r["run_id"]);
            assert_eq!(meta["ai_reserved"], "false");
        }
        // Each record's offset is its response's member: one seek reads it.
        for (r, seek) in records.iter().zip(got["seek"].as_array().unwrap()) {
            assert_eq!(seek[0], "response");
            assert_eq!(seek[1], r["url"]);
        }
    }

    // Unchanged code and rule: every record again, byte for byte.
    let before = lines(&ws);
    let said = run(&ws, &["reextract", "--data", "data"]);
    assert!(
        said.contains(&format!("{} unchanged, 0 written", records.len())),
        "{said}"
    );
    assert_eq!(lines(&ws), before, "nothing written when nothing changed");
    run(&ws, &["reextract", "--data", "data", "--all"]);
    let after = lines(&ws);
    assert_eq!(after.len(), 2);
    assert!(after[1].0.starts_with("reextract-"), "{}", after[1].0);
    let mut old = before[0].1.clone();
    let held = format!("\"url\":\"{noarchive}\"");
    old.retain(|l| !String::from_utf8_lossy(l).contains(&held));
    let mut new = after[1].1.clone();
    old.sort();
    new.sort();
    assert_eq!(new, old, "re-extraction gives the stored bytes");
}

#[test]
fn a_changed_rule_gives_new_versions_that_the_build_keeps() {
    let web = web(false);
    let ws = Workspace::new(&web, SOURCES, "archive: articles");
    let out = ws.crawl(&["--max-duration", "30s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let records = ws.records();
    let n = records.len();
    assert!(n >= 20);
    let old_version = records[0]["extractor_version"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!records[0]["keywords"].to_string().contains("benchmarks"));

    // The build before: every row from the crawl's extractor.
    run(&ws, &["build", "--data", "data", "--out", "dist"]);
    let card = std::fs::read_to_string(ws.dir.path().join("dist/README.md")).unwrap();
    let rows_line = format!("| {old_version} | ");
    let rows: u64 = card
        .lines()
        .find_map(|l| l.strip_prefix(&rows_line)?.strip_suffix(" |")?.parse().ok())
        .unwrap_or_else(|| panic!("no row count for {old_version}: {card}"));
    assert!(rows >= 1);

    // A rule change: a new broad term the articles use.
    let config = ws.dir.path().join("config.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("research]", "research, benchmarks]")).unwrap();
    let said = run(&ws, &["reextract", "--data", "data"]);
    assert!(
        said.contains(&format!("0 unchanged, {n} written")),
        "{said}"
    );
    let newest: Vec<serde_json::Value> = ws.records().into_iter().skip(n).collect();
    assert_eq!(newest.len(), n);
    let new_version = newest[0]["extractor_version"].as_str().unwrap().to_string();
    assert_ne!(new_version, old_version);
    for (a, b) in records.iter().zip(&newest) {
        assert_eq!(
            (&a["id"], &a["url"], &a["fetched_at"]),
            (&b["id"], &b["url"], &b["fetched_at"])
        );
        assert_eq!(
            (&a["run_id"], &a["ai_signals"], &a["warc_offset"]),
            (&b["run_id"], &b["ai_signals"], &b["warc_offset"])
        );
        assert!(b["keywords"].to_string().contains("benchmarks"), "{b}");
    }
    run(&ws, &["build", "--data", "data", "--out", "dist"]);
    let card = std::fs::read_to_string(ws.dir.path().join("dist/README.md")).unwrap();
    assert!(
        card.contains(&format!("| {new_version} | {rows} |")),
        "{card}"
    );
    assert!(
        !card.contains(&old_version),
        "only the newest extraction is in the build"
    );
    assert!(
        card.contains(&format!(
            "replaced by a newer one (`scraper reextract`): {n}"
        )),
        "{card}"
    );

    // A stricter rule: no article is relevant any more; all are withdrawn.
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("min_strong_mentions: 2", "min_strong_mentions: 500"),
    )
    .unwrap();
    let said = run(&ws, &["reextract", "--data", "data"]);
    assert!(said.contains(&format!("{n} no longer relevant")), "{said}");
    let out = ws
        .command(&["build", "--data", "data", "--out", "dist"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let card = std::fs::read_to_string(ws.dir.path().join("dist/README.md")).unwrap();
    assert!(
        card.contains(&format!("no longer an article: 0; no longer relevant: {n}")),
        "{card}"
    );
}
