//! `scraper dashboard`: a small HTTP/1.1 server on 127.0.0.1 that serves one
//! self-contained page and two JSON endpoints following `state/crawl.log`.
//!
//! - `GET /` — the page (`dashboard.html`: inline CSS and JS, no external
//!   resources; a Content-Security-Policy forbids loading any).
//! - `GET /summary[?budget=5h]` — the run so far as a [`Live`], plus the log
//!   offset it covers and the generation of the log file. The server keeps
//!   its own fold and only reads what was appended since the last request.
//! - `GET /events?from=<offset>&gen=<generation>` — the events appended since
//!   `from`, at most [`EVENTS_MAX`] bytes of them; `reset` when a new run has
//!   recreated the log (the page then asks for `/summary` again).
//! - `GET /health` — the broken and degraded sources over the last runs
//!   (a [`crate::health::Report`] of the problems only; empty without a config).
//!
//! Every response closes its connection; requests whose `Host` is not a
//! loopback name are refused (DNS rebinding).
//!
//! The page also writes what it shows as `data-*` attributes (raw counts, per
//! bar `data-key`/`data-value`, the chart's plotted points and totals, the
//! countdown's budget), so a test in a real browser can read them back
//! (`tests/it/commands/dashboard.rs`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::live::Live;
use super::log;

/// The page.
pub const PAGE: &str = include_str!("dashboard.html");
/// Largest `/events` answer, in log bytes.
pub(crate) const EVENTS_MAX: usize = 256 * 1024;
/// Log bytes the server folds per read while catching up.
const FOLD_CHUNK: usize = 4 << 20;
const HEAD_MAX: usize = 16 * 1024;
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The server's own fold of the log, advanced on each `/summary`.
#[derive(Default)]
struct Follower {
    generation: Option<log::Generation>,
    offset: u64,
    live: Live,
}

struct Shared {
    log: PathBuf,
    state: PathBuf,
    config: Option<crate::config::Config>,
    follower: Mutex<Follower>,
}

/// Serve until the listener fails. `data` is the data folder; the log is
/// `data/state/crawl.log` and need not exist yet.
pub async fn serve(listener: TcpListener, data: PathBuf) -> anyhow::Result<()> {
    serve_with(listener, data, None).await
}

/// [`serve`], with the config whose sources `/health` judges.
pub async fn serve_with(
    listener: TcpListener,
    data: PathBuf,
    config: Option<crate::config::Config>,
) -> anyhow::Result<()> {
    let shared = Arc::new(Shared {
        log: data.join("state").join("crawl.log"),
        state: data.join("state"),
        config,
        follower: Mutex::new(Follower::default()),
    });
    loop {
        let (stream, _) = listener.accept().await?;
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            if let Err(e) = handle(stream, shared).await {
                tracing::debug!("dashboard connection: {e}");
            }
        });
    }
}

/// What a request asked for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    host: Option<String>,
}

impl Request {
    fn param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn parse_request(head: &str) -> Option<Request> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, target) = (first.next()?, first.next()?);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    let host = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("host")
            .then(|| value.trim().to_string())
    });
    Some(Request {
        method: method.to_string(),
        path: path.to_string(),
        query,
        host,
    })
}

/// Percent-decoding for query strings (`+` is a space).
fn decode(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'+', _, _) => out.push(b' '),
            (b'%', Some(hi), Some(lo)) => {
                // Two hex digits make at most 0xff.
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            (c, _, _) => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Loopback names only: `localhost`, `127.0.0.1`, `[::1]`, with any port.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    matches!(name, "localhost" | "127.0.0.1" | "::1")
}

async fn handle(mut stream: TcpStream, shared: Arc<Shared>) -> anyhow::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let head = tokio::time::timeout(READ_TIMEOUT, async {
        let mut tmp = [0u8; 2048];
        loop {
            let n = stream.read(&mut tmp).await?;
            if n == 0 {
                return Ok::<_, std::io::Error>(None);
            }
            buf.extend_from_slice(&tmp[..n]);
            if let Some(end) = memchr::memmem::find(&buf, b"\r\n\r\n") {
                return Ok(Some(String::from_utf8_lossy(&buf[..end]).into_owned()));
            }
            if buf.len() > HEAD_MAX {
                return Ok(None);
            }
        }
    })
    .await??;
    let Some(req) = head.as_deref().and_then(parse_request) else {
        return respond(&mut stream, 400, "text/plain", b"bad request\n", false).await;
    };
    let head_only = req.method == "HEAD";
    if req.method != "GET" && !head_only {
        return respond(&mut stream, 405, "text/plain", b"GET only\n", false).await;
    }
    if !req.host.as_deref().is_some_and(loopback_host) {
        return respond(
            &mut stream,
            403,
            "text/plain",
            b"loopback only\n",
            head_only,
        )
        .await;
    }
    let (status, kind, body): (u16, &str, Vec<u8>) = match req.path.as_str() {
        "/" | "/index.html" => (200, "text/html; charset=utf-8", PAGE.as_bytes().to_vec()),
        "/summary" => {
            let budget = req.param("budget").map(str::to_string);
            let shared = Arc::clone(&shared);
            let v =
                tokio::task::spawn_blocking(move || summary(&shared, budget.as_deref())).await?;
            (200, "application/json", serde_json::to_vec(&v)?)
        }
        "/events" => {
            let from = req.param("from").and_then(|f| f.parse().ok()).unwrap_or(0);
            let generation = req
                .param("gen")
                .map(|g| g.parse::<log::Generation>().unwrap_or_else(|e| match e {}));
            let log = shared.log.clone();
            let v = tokio::task::spawn_blocking(move || events(&log, generation.as_ref(), from))
                .await?;
            (200, "application/json", serde_json::to_vec(&v)?)
        }
        "/health" => {
            let shared = Arc::clone(&shared);
            let v = tokio::task::spawn_blocking(move || health(&shared)).await?;
            (200, "application/json", serde_json::to_vec(&v)?)
        }
        "/favicon.ico" => (204, "text/plain", Vec::new()),
        _ => (404, "text/plain", b"not found\n".to_vec()),
    };
    respond(&mut stream, status, kind, &body, head_only).await
}

async fn respond(
    stream: &mut TcpStream,
    status: u16,
    kind: &str,
    body: &[u8],
    head_only: bool,
) -> anyhow::Result<()> {
    let reason = match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Error",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; \
         style-src 'unsafe-inline'; connect-src 'self'; img-src data:\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    if !head_only {
        stream.write_all(body).await?;
    }
    stream.shutdown().await?;
    Ok(())
}

/// Parse the complete lines of a chunk; lines that are not JSON are skipped.
fn parse_lines(bytes: &[u8]) -> impl Iterator<Item = Value> + '_ {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
}

/// `/summary`: catch the server's fold up with the log and return it.
fn summary(shared: &Shared, budget: Option<&str>) -> Value {
    // A poisoned lock only means a panic mid-fold; the fold is still usable.
    let mut f = shared.follower.lock().unwrap_or_else(|p| p.into_inner());
    let mut error = None;
    loop {
        let seen = f.generation.clone();
        match log::read_chunk(&shared.log, seen.as_ref(), f.offset, FOLD_CHUNK) {
            Ok(chunk) => {
                if chunk.reset {
                    f.live = Live::default();
                }
                for ev in parse_lines(&chunk.bytes) {
                    f.live.apply(&ev);
                }
                f.generation = Some(chunk.generation);
                f.offset = chunk.next;
                if !chunk.more {
                    break;
                }
            }
            Err(e) => {
                error = Some(format!("cannot read {}: {e}", shared.log.display()));
                break;
            }
        }
    }
    let mut v = json!({
        "gen": f.generation,
        "next": f.offset,
        "live": f.live,
        "log": shared.log.display().to_string(),
        "now": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    });
    if let Some(e) = error {
        v["error"] = e.into();
    }
    if let Some(b) = budget.filter(|b| !b.is_empty()) {
        match crate::config::parse_duration(b) {
            Ok(d) => v["budget_s"] = d.as_secs_f64().into(),
            Err(e) => v["budget_error"] = e.into(),
        }
    }
    v
}

/// `/health`: the sources that are not ok, judged over the last runs.
fn health(shared: &Shared) -> Value {
    let Some(config) = &shared.config else {
        return json!({"sources": [], "error": "no config.yml: source health not judged"});
    };
    match crate::store::health::report(&shared.state, &config.sources, &config.health) {
        Ok(report) => serde_json::to_value(report.problems_only()).unwrap_or_default(),
        Err(e) => json!({"sources": [], "error": e.to_string()}),
    }
}

/// `/events`: what was appended since `from`.
fn events(log: &Path, generation: Option<&log::Generation>, from: u64) -> Value {
    match log::read_chunk(log, generation, from, EVENTS_MAX) {
        Ok(c) => json!({
            "gen": c.generation,
            "reset": c.reset,
            "from": c.from,
            "next": c.next,
            "more": c.more,
            "events": parse_lines(&c.bytes).collect::<Vec<_>>(),
        }),
        Err(e) => json!({
            "gen": generation,
            "reset": false,
            "from": from,
            "next": from,
            "more": false,
            "events": [],
            "error": format!("cannot read {}: {e}", log.display()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse() {
        let r = parse_request("GET /events?from=12&gen=ab%20c+d HTTP/1.1\r\nHOST: localhost:8765")
            .unwrap();
        assert_eq!(r.path, "/events");
        assert_eq!(r.param("from"), Some("12"));
        assert_eq!(r.param("gen"), Some("ab c d"));
        assert_eq!(r.host.as_deref(), Some("localhost:8765"));
        assert!(parse_request("").is_none());
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("1h30m"), "1h30m");
    }

    #[test]
    fn only_loopback_hosts() {
        for (h, ok) in [
            ("127.0.0.1:8765", true),
            ("localhost", true),
            ("[::1]:80", true),
            ("evil.example:8765", false),
            ("127.0.0.1.evil.example", false),
        ] {
            assert_eq!(loopback_host(h), ok, "{h}");
        }
    }

    #[test]
    fn page_loads_nothing_from_elsewhere() {
        for needle in ["http://", "https://", "//cdn", "<link", "src="] {
            assert!(!PAGE.contains(needle), "page contains {needle}");
        }
    }
}
