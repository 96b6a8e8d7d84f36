//! `scraper stats` on generated shards and the dashboard server over real
//! sockets on 127.0.0.1. The million-record timing is an ignored test:
//! `REPORT_BENCH_DIR=/tmp/bench cargo test --release --test it commands::stats -- --ignored --nocapture million`
//! then `time target/release/scraper stats --data /tmp/bench`. Measured on 2
//! busy shared cores: 1,000,000 records (20 shards, 338 MB of JSON) in about
//! 0.6 s wall; decompression alone takes 0.39 s on one thread.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use scraper::record::Article;
use scraper::report::stats;
use scraper::store::shard::ShardWriter;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::tool::{Tool, runs};

const WHAT_NODE: &str = "the dashboard page's script under node";
const NODE_HOW: &str = "apt-get install -y nodejs, as .ci/run does";

const DOMAINS: [&str; 5] = ["a.com", "b.org", "c.net", "d.io", "e.ai"];

fn article(id: i64) -> Article {
    let domain = DOMAINS[id as usize % DOMAINS.len()];
    // Every seventh record has no year.
    let year = (id % 7 != 0).then(|| 2018 + (id % 9) as i32);
    Article {
        id,
        url: format!("https://{domain}/news/{id}"),
        domain: domain.into(),
        title: format!("Model release number {id} and what it means"),
        date: year.and_then(|y| chrono::NaiveDate::from_ymd_opt(y, 3, 4)),
        date_source: year.map(|_| "jsonld".into()),
        year,
        text: "Researchers released a new language model.\nIt is \"small\" but capable.".into(),
        keywords: vec!["language model".into(), "ai".into()],
        fetched_at: "2026-11-29T06:31:00Z".parse().unwrap(),
        lang: Some("en".into()),
        ..Article::default()
    }
}

/// `shards` shards of `per` records each under `data/articles/`; ids run on across shards.
fn write_shards(data: &Path, shards: usize, per: usize) -> Vec<PathBuf> {
    let dir = data.join("articles");
    std::fs::create_dir_all(&dir).unwrap();
    (0..shards)
        .map(|s| {
            let path = dir.join(format!("20261{s:03}T063000Z.jsonl.zst"));
            let mut w = ShardWriter::create(&path, Duration::from_secs(3600)).unwrap();
            for i in 0..per {
                w.append(&article((s * per + i) as i64)).unwrap();
            }
            w.finish().unwrap().unwrap()
        })
        .collect()
}

fn expected(ids: impl Iterator<Item = i64>) -> (Value, Value) {
    let (mut years, mut domains) = (serde_json::Map::new(), serde_json::Map::new());
    for a in ids.map(article) {
        let y = a.year.map_or("unknown".to_string(), |y| y.to_string());
        let n = years.entry(y).or_insert(Value::from(0u64));
        *n = Value::from(n.as_u64().unwrap() + 1);
        let n = domains.entry(a.domain).or_insert(Value::from(0u64));
        *n = Value::from(n.as_u64().unwrap() + 1);
    }
    (Value::Object(years), Value::Object(domains))
}

#[test]
fn stats_counts_years_domains_and_tolerates_damage() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let paths = write_shards(data, 3, 40);
    // Shard 1 gains a frame with a line that is not a record, then a torn tail.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&paths[1])
        .unwrap();
    f.write_all(&zstd::encode_all(&b"not json\n{\"x\":1}\n"[..], 3).unwrap())
        .unwrap();
    let half = zstd::encode_all(&br#"{"domain":"lost.com","year":2020}"#[..], 3).unwrap();
    f.write_all(&half[..half.len() / 2]).unwrap();
    drop(f);
    let state = data.join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("last_run.json"),
        r#"{"run_id":"20261002T063000Z","started_at":"2026-10-02T06:30:00Z",
            "finished_at":"2026-10-02T07:10:00Z","stopped_by":"max_duration",
            "pages_fetched":4000,"articles_stored":40,
            "hosts":{"a.com":{"fetched":30,"stored":8,"errors":{"5xx":1}}}}"#,
    )
    .unwrap();

    let s = stats::collect(data).unwrap();
    assert_eq!(s.total, 120);
    let (years, domains) = expected(0..120);
    assert_eq!(serde_json::to_value(&s.by_year).unwrap(), years);
    assert_eq!(serde_json::to_value(&s.by_domain).unwrap(), domains);
    assert_eq!(
        s.shards.iter().map(|x| x.records).collect::<Vec<_>>(),
        [40, 40, 40]
    );
    assert_eq!(s.shards[1].bad_lines, 2);
    assert!(s.shards[1].truncated_bytes > 0);
    assert_eq!(s.broken.bad_lines, 2);
    let run = s.last_run.as_ref().unwrap();
    assert_eq!(run.duration_s, Some(2400.0));
    assert_eq!(run.top_hosts[0].errors, 1);
    assert!(s.disk.state_files.contains_key("last_run.json"));
    assert_eq!(
        s.disk.articles_bytes,
        s.shards.iter().map(|x| x.bytes).sum::<u64>()
    );

    // The binary, both ways.
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scraper"));
        cmd.args(["stats", "--data"]).arg(data);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let v: Value = serde_json::from_str(&run(true)).unwrap();
    assert_eq!(v["total"], 120);
    assert_eq!(v["by_year"], years);
    assert_eq!(v["by_domain"], domains);
    assert_eq!(v["shards"][1]["records"], 40);
    assert_eq!(v["shards"][1]["bad_lines"], 2);
    assert_eq!(v["broken"]["bad_lines"], 2);
    assert_eq!(v["last_run"]["stopped_by"], "max_duration");
    assert_eq!(v["last_run"]["pages_fetched"], 4000);
    assert_eq!(v["last_run"]["top_hosts"][0]["host"], "a.com");
    assert!(v["disk"]["state_bytes"].as_u64().unwrap() > 0);
    let text = run(false);
    for want in [
        "120 articles in 3 shards",
        "By year",
        "a.com",
        "stopped by max_duration",
        "40m00s",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn stats_on_an_empty_data_folder() {
    let dir = tempfile::tempdir().unwrap();
    let s = stats::collect(&dir.path().join("nothing")).unwrap();
    assert_eq!((s.total, s.shards.len()), (0, 0));
    assert!(s.last_run.is_none());
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["last_run"], Value::Null);
}

/// Timing on 1,000,000 small records. Set `REPORT_BENCH_DIR` to keep the
/// generated data folder (and time `scraper stats --data` on it).
#[test]
#[ignore]
fn million_records() {
    let keep = std::env::var_os("REPORT_BENCH_DIR").map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let data = keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    if !data.join("articles").exists() {
        let t = Instant::now();
        write_shards(&data, 20, 50_000);
        eprintln!(
            "generated 1,000,000 records in 20 shards in {:?}",
            t.elapsed()
        );
    }
    let t = Instant::now();
    let mut lines = 0u64;
    for path in scraper::store::shard::list(&data.join("articles")).unwrap() {
        scraper::store::shard::read_lines(&path, |_| lines += 1).unwrap();
    }
    eprintln!(
        "decompression alone, one thread: {lines} lines in {:?}",
        t.elapsed()
    );
    let t = Instant::now();
    let s = stats::collect(&data).unwrap();
    eprintln!("stats::collect: {} records in {:?}", s.total, t.elapsed());
    assert_eq!(s.total, 1_000_000);
}

/// One HTTP/1.1 GET over a fresh connection: (status, body).
async fn get(addr: std::net::SocketAddr, path: &str, host: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let out = String::from_utf8(out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

async fn get_json(addr: std::net::SocketAddr, path: &str) -> Value {
    let (status, body) = get(addr, path, "127.0.0.1").await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn ev(t: &str, event: &str, extra: &str) -> String {
    format!("{{\"v\":1,\"t\":\"2026-11-29T20:{t}Z\",\"event\":\"{event}\"{extra}}}\n")
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[tokio::test]
async fn dashboard_follows_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let log = state.join("crawl.log");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(scraper::report::dashboard::serve(
        listener,
        dir.path().to_path_buf(),
    ));

    // The page: self-contained.
    let (status, page) = get(addr, "/", "127.0.0.1").await;
    assert_eq!(status, 200);
    assert!(page.contains("<canvas") && page.contains("/events?from="));
    for needle in ["http://", "https://", "src=", "<link"] {
        assert!(!page.contains(needle), "page has {needle}");
    }
    assert_eq!(get(addr, "/", "evil.example").await.0, 403);
    assert_eq!(get(addr, "/nope", "localhost").await.0, 404);

    // No log yet.
    let s = get_json(addr, "/summary?budget=1h30m").await;
    assert_eq!(
        (s["gen"].as_str(), s["next"].as_u64()),
        (Some("none"), Some(0))
    );
    assert_eq!(s["budget_s"], 5400.0);
    assert!(get_json(addr, "/summary?budget=soon").await["budget_error"].is_string());

    append(
        &log,
        &ev(
            "00:00.000",
            "run_start",
            r#","run_id":"r1","max_duration_s":2400"#,
        ),
    );
    append(
        &log,
        &ev(
            "00:01.000",
            "fetch",
            r#","url":"https://a.com/1","status":200,"bytes":900"#,
        ),
    );
    append(
        &log,
        &ev(
            "00:02.000",
            "stored",
            r#","url":"https://a.com/1","domain":"a.com","title":"One","year":2026"#,
        ),
    );
    let s = get_json(addr, "/summary").await;
    let (generation, next) = (
        s["gen"].as_str().unwrap().to_string(),
        s["next"].as_u64().unwrap(),
    );
    assert_eq!(next, std::fs::metadata(&log).unwrap().len());
    assert_eq!(s["live"]["stored"], 1);
    assert_eq!(s["live"]["max_duration_s"], 2400.0);
    assert_eq!(s["live"]["by_domain"]["a.com"], 1);
    assert_eq!(s["live"]["latest"][0]["title"], "One");

    // Appended lines appear; a half-written line waits for its newline.
    let e = get_json(addr, &format!("/events?from={next}&gen={generation}")).await;
    assert_eq!(
        (e["reset"].as_bool(), e["events"].as_array().map(Vec::len)),
        (Some(false), Some(0))
    );
    append(
        &log,
        &ev(
            "01:00.000",
            "stored",
            r#","url":"https://b.org/2","domain":"b.org","title":"Two""#,
        ),
    );
    append(&log, "{\"v\":1,\"event\":\"fet");
    let e = get_json(addr, &format!("/events?from={next}&gen={generation}")).await;
    assert_eq!(e["events"].as_array().unwrap().len(), 1);
    assert_eq!(e["events"][0]["title"], "Two");
    let next2 = e["next"].as_u64().unwrap();
    append(&log, "ch\",\"t\":\"2026-11-29T20:01:01Z\",\"queue\":42}\n");
    let e = get_json(addr, &format!("/events?from={next2}&gen={generation}")).await;
    assert_eq!(e["events"][0]["queue"], 42);
    let s = get_json(addr, "/summary").await;
    assert_eq!(
        (s["live"]["stored"].as_u64(), s["live"]["queue"].as_u64()),
        (Some(2), Some(42))
    );
    assert_eq!(
        s["live"]["minutes"]["2026-11-29T20:01"],
        serde_json::json!([1, 1])
    );

    // A new run recreates the log: the old offset is not reused.
    std::fs::write(&log, ev("30:00.000", "run_start", r#","run_id":"r2""#)).unwrap();
    let e = get_json(addr, &format!("/events?from={next2}&gen={generation}")).await;
    assert_eq!(e["reset"], true);
    let s = get_json(addr, "/summary").await;
    assert_eq!(s["live"]["run_id"], "r2");
    assert_eq!(s["live"]["stored"], 0);
    assert_ne!(s["gen"].as_str(), Some(generation.as_str()));
    server.abort();
}

/// All numbers as f64, so `2400` (JavaScript) equals `2400.0` (Rust).
fn numbers_as_f64(v: Value) -> Value {
    match v {
        Value::Number(n) => n.as_f64().map_or(Value::Null, Value::from),
        Value::Array(a) => Value::Array(a.into_iter().map(numbers_as_f64).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, numbers_as_f64(v))).collect())
        }
        other => other,
    }
}

/// The page's `apply` (JavaScript) and `Live::apply` (Rust) fold the same
/// events to the same picture (run by node: fails without it unless SCRAPER_SKIP_NODE=1).
#[test]
fn page_fold_matches_server_fold() {
    if !Tool::Node.need(WHAT_NODE, || runs("node", &["--version"]), NODE_HOW) {
        return;
    }
    let page = scraper::report::dashboard::PAGE;
    let start = page.find("function apply(m, ev) {").unwrap();
    let end = start + page[start..].find("\n}\n").unwrap() + 3;
    let mut events = vec![
        serde_json::json!({"v":1,"t":"2026-11-29T19:59:00.000Z","event":"stored","domain":"old.com","url":"o"}),
        serde_json::json!({"v":1,"t":"2026-11-29T20:00:00.000Z","event":"run_start","run_id":"r1","max_duration_s":2400}),
        serde_json::json!({"v":1,"t":"2026-11-29T20:00:01.000Z","event":"seed","url":"s","queue":3}),
        serde_json::json!({"v":1,"t":"2026-11-29T20:00:02.000Z","event":"discovery","url":"f","queued":30}),
        serde_json::json!({"v":1,"event":"warning","message":"no t"}),
        serde_json::json!({"v":1,"t":"2026-11-29T20:00:09.000Z","event":"rejected","reason":"not_relevant"}),
        serde_json::json!({"v":1,"t":"2026-11-29T20:00:10.000Z","event":"error","class":"timeout"}),
        serde_json::json!({"t":"2026-11-29T20:00:11.000Z","kind":"no event field"}),
    ];
    for i in 0..300u64 {
        let t = format!("2026-11-29T{:02}:{:02}:30.000Z", 20 + i / 60, i % 60);
        events.push(serde_json::json!({"t": t, "event": "fetch", "bytes": i, "status": 200}));
        if i % 3 == 0 {
            let year = if i % 2 == 0 {
                Value::from(2020 + i % 7)
            } else {
                Value::Null
            };
            events.push(serde_json::json!({"t": t, "event": "stored", "url": format!("https://d{}.com/{i}", i % 4),
                "domain": format!("d{}.com", i % 4), "title": format!("T{i}"), "year": year, "date": "2026-01-01"}));
        }
    }
    events.push(serde_json::json!({"v":1,"t":"2026-11-29T25:00:00.000Z","event":"done","stopped_by":"max_pages","queue_left":9}));

    let mut live = scraper::report::live::Live::default();
    for e in &events {
        live.apply(e);
    }
    let empty = serde_json::to_string(&scraper::report::live::Live::default()).unwrap();
    let program = format!(
        "const LATEST = {}, MINUTES = {};\n{}\nconst m = {empty};\nfor (const ev of {}) apply(m, ev);\nprocess.stdout.write(JSON.stringify(m));\n",
        scraper::report::live::LATEST,
        scraper::report::live::MINUTES,
        &page[start..end],
        serde_json::to_string(&events).unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fold.js");
    std::fs::write(&script, program).unwrap();
    let out = Command::new("node").arg(&script).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let js: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rust = serde_json::to_value(&live).unwrap();
    assert_eq!(rust["stored"], 100);
    assert_eq!(numbers_as_f64(js), numbers_as_f64(rust));
}

/// A stand-in for the browser's DOM, enough to run the page's script under
/// node against a live server and read back what it would show.
const DOM_STUB: &str = r#"
const [base, search, wait] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const els = {};
function el(tag) {
  return { tagName: tag.toUpperCase(), textContent: '', className: '', style: {}, dataset: {}, children: [], title: '',
    clientWidth: 600, clientHeight: 180, width: 0, height: 0, drawn: 0,
    replaceChildren(...c) { this.children = c; this.textContent = ''; },
    append(...c) { this.children.push(...c); },
    getContext() { const self = this; return new Proxy({}, {
      get: (t, k) => (k in t ? t[k] : () => { if (k === 'fillRect' || k === 'lineTo') self.drawn++; }),
      set: (t, k, v) => { t[k] = v; return true; } }); },
  };
}
globalThis.document = { getElementById: (id) => (els[id] = els[id] || el('div')), createElement: el, documentElement: {}, title: '' };
globalThis.window = { devicePixelRatio: 1, addEventListener() {} };
globalThis.location = { search };
globalThis.getComputedStyle = () => ({ getPropertyValue: () => '#000' });
const realFetch = fetch;
globalThis.fetch = (u, o) => realFetch(base + u, o);
setTimeout(() => {
  const out = { title: document.title, drawn: els.chart.drawn, feed: [] };
  for (const [k, v] of Object.entries(els)) if (v.textContent) out[k] = v.textContent;
  for (const li of els.feed.children) out.feed.push(li.children.map((c) => [c.textContent, c.href || null]));
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}, wait);
"#;

/// The page's script, run by node against the real server: the numbers it
/// shows match the log, the chart is drawn, new lines arrive, the countdown runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_script_shows_the_log() {
    if !Tool::Node.need(WHAT_NODE, || runs("node", &["--version"]), NODE_HOW) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let log = state.join("crawl.log");
    let now = chrono::Utc::now();
    let t = |ago: i64| {
        (now - chrono::Duration::seconds(ago)).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    };
    let mut text = format!(
        "{{\"v\":1,\"t\":\"{}\",\"event\":\"run_start\",\"run_id\":\"r7\"}}\n",
        t(300)
    );
    for i in 0..90 {
        text += &format!(
            "{{\"v\":1,\"t\":\"{}\",\"event\":\"fetch\",\"url\":\"u{i}\",\"status\":200}}\n",
            t(290 - 3 * i)
        );
        if i % 10 == 0 {
            text += &format!(
                "{{\"v\":1,\"t\":\"{}\",\"event\":\"stored\",\"url\":\"https://a.com/{i}\",\"domain\":\"a.com\",\"title\":\"<b>{i}</b>\",\"year\":2026}}\n",
                t(290 - 3 * i)
            );
        }
    }
    std::fs::write(&log, text).unwrap();
    let script_at = dir.path().join("page.js");
    let page = scraper::report::dashboard::PAGE;
    let (a, b) = (
        page.find("<script>").unwrap() + 8,
        page.find("</script>").unwrap(),
    );
    std::fs::write(&script_at, format!("{DOM_STUB}\n{}", &page[a..b])).unwrap();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(scraper::report::dashboard::serve(
        listener,
        dir.path().to_path_buf(),
    ));
    let node = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(&script_at)
            .args([&base, "?budget=1h", "5000"])
            .output()
            .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(2500)).await;
    append(
        &log,
        &format!(
            "{{\"v\":1,\"t\":\"{}\",\"event\":\"stored\",\"url\":\"javascript:alert(1)\",\"domain\":\"b.org\",\"title\":\"Late\"}}\n",
            t(0)
        ),
    );
    let out = node.await.unwrap();
    server.abort();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stored"], "10", "{v}");
    assert_eq!(v["fetched"], "90");
    assert_eq!(v["status"], "running");
    assert_eq!(v["run"], "run r7");
    assert_eq!(v["title"], "10 stored · scraper");
    assert!(v["drawn"].as_u64().unwrap() > 0, "chart not drawn");
    let left = v["left"].as_str().unwrap();
    assert!(left.starts_with("54m") || left.starts_with("55m"), "{left}");
    // Newest first; a non-web URL is shown but not linked; markup stays text.
    assert_eq!(v["feed"][0][0], serde_json::json!(["Late", null]));
    assert_eq!(
        v["feed"][1][0],
        serde_json::json!(["<b>80</b>", "https://a.com/80"])
    );
}
