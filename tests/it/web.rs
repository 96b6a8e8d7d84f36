//! The local fixture web: a hand-written HTTP/1.1 server on 127.0.0.1 that
//! answers absolute-URI (proxy) requests for any host name, as well as plain
//! requests with a `Host` header, and logs every request with the time it
//! arrived.
//!
//! Point the crawler at it with `proxy = web.proxy_url()` and use made-up
//! host names such as `http://news.test/`. Replies are built with [`Reply`]:
//! status, headers, body, gzip, a delay before the headers, a slow drip, a
//! repeated or never-ending body, a hang, or a reset mid-body. The server runs
//! on its own thread and runtime (so it works from sync tests, async tests and
//! tests that pause tokio's clock) and stops when the [`Web`] is dropped.
//!
//! ```ignore
//! let web = Web::routes()
//!     .at("news.test", "/robots.txt", Reply::text("User-agent: *\nDisallow: /private\n"))
//!     .at("news.test", "/", Reply::html("<a href=/a>a</a>"))
//!     .start();
//! // ... crawl with proxy = web.proxy_url() ...
//! assert_eq!(web.count("news.test", "/robots.txt"), 1);
//! ```
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server saw it. Also what the log holds.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    /// Lower-cased host, with the port only when it is not the default.
    pub host: String,
    pub path: String,
    pub query: Option<String>,
    /// Header names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    /// When the whole request head had arrived.
    pub at: Instant,
}

/// What the log holds: every request, in arrival order.
pub type LoggedRequest = Req;

impl Req {
    /// First value of a header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Path plus `?query` when there is one.
    pub fn target(&self) -> String {
        match &self.query {
            Some(q) => format!("{}?{q}", self.path),
            None => self.path.clone(),
        }
    }
}

#[derive(Debug, Clone)]
enum Body {
    Bytes(Arc<Vec<u8>>),
    /// `chunk` sent `times` times, or forever when `None`.
    Repeat {
        chunk: Arc<Vec<u8>>,
        times: Option<u64>,
    },
}

/// An answer, with the faults a hostile web can serve.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
    gzip: bool,
    delay: Duration,
    drip: Option<u64>,
    reset_after: Option<usize>,
    hang: bool,
}

impl Reply {
    /// A reply with this status and an empty body.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Bytes(Arc::new(Vec::new())),
            gzip: false,
            delay: Duration::ZERO,
            drip: None,
            reset_after: None,
            hang: false,
        }
    }

    /// 200 with a body of this content type.
    pub fn bytes(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::status(200)
            .header("content-type", content_type)
            .body(body)
    }

    pub fn html(body: impl Into<Vec<u8>>) -> Reply {
        Reply::bytes("text/html; charset=utf-8", body)
    }

    pub fn text(body: impl Into<Vec<u8>>) -> Reply {
        Reply::bytes("text/plain; charset=utf-8", body)
    }

    pub fn xml(body: impl Into<Vec<u8>>) -> Reply {
        Reply::bytes("application/xml", body)
    }

    pub fn not_found() -> Reply {
        Reply::status(404).header("content-type", "text/plain")
    }

    /// A redirect (301, 302, 303, 307, 308) to `location` (absolute or relative).
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("location", location)
    }

    /// Read the request, then never answer.
    pub fn hang() -> Reply {
        Reply {
            hang: true,
            ..Reply::status(200)
        }
    }

    /// 200 whose body never ends (no Content-Length, sent as fast as it is read).
    pub fn endless(content_type: &str) -> Reply {
        Reply::status(200)
            .header("content-type", content_type)
            .repeat(vec![b'a'; 16 * 1024], None)
    }

    /// A gzip body that decodes to `decoded` zero bytes (rounded up to MiB),
    /// built from repeated gzip members so that it costs nothing to serve.
    pub fn gzip_bomb(content_type: &str, decoded: u64) -> Reply {
        static MEMBER: OnceLock<Arc<Vec<u8>>> = OnceLock::new();
        let member = MEMBER.get_or_init(|| Arc::new(gzip(&vec![0u8; 1 << 20])));
        let times = decoded.div_ceil(1 << 20);
        Reply {
            body: Body::Repeat {
                chunk: member.clone(),
                times: Some(times),
            },
            ..Reply::status(200)
                .header("content-type", content_type)
                .header("content-encoding", "gzip")
        }
    }

    /// Add a header (kept in order; duplicates allowed).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// Replace the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Reply {
        self.body = Body::Bytes(Arc::new(body.into()));
        self
    }

    /// Body is `chunk` repeated `times` times (forever when `None`).
    pub fn repeat(mut self, chunk: Vec<u8>, times: Option<u64>) -> Reply {
        self.body = Body::Repeat {
            chunk: Arc::new(chunk),
            times,
        };
        self
    }

    /// gzip the body and say so in `Content-Encoding`.
    pub fn gzip(mut self) -> Reply {
        self.gzip = true;
        self
    }

    /// Wait this long after the request before sending the headers.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Send the body at this many bytes per second.
    pub fn drip(mut self, bytes_per_sec: u64) -> Reply {
        self.drip = Some(bytes_per_sec.max(1));
        self
    }

    /// Announce the full length, send `n` body bytes, then reset the connection.
    pub fn reset_after(mut self, n: usize) -> Reply {
        self.reset_after = Some(n);
        self
    }
}

/// gzip `data` in one member.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).expect("gzip into memory");
    enc.finish().expect("gzip into memory")
}

type Handler = dyn Fn(&Req) -> Reply + Send + Sync;

/// A route table by (host, path), with a fallback handler (404 by default).
pub struct Routes {
    map: HashMap<(String, String), Reply>,
    fallback: Option<Box<Handler>>,
}

impl Routes {
    /// Serve `reply` for `host` and `target` (a path, or a path with `?query`
    /// to match only that query).
    pub fn at(mut self, host: &str, target: &str, reply: Reply) -> Routes {
        self.map
            .insert((host.to_ascii_lowercase(), target.to_string()), reply);
        self
    }

    /// Answer requests no route matches.
    pub fn fallback(mut self, f: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Routes {
        self.fallback = Some(Box::new(f));
        self
    }

    pub fn start(self) -> Web {
        let Routes { map, fallback } = self;
        Web::start(move |req| {
            let exact = (req.host.clone(), req.target());
            let by_path = (req.host.clone(), req.path.clone());
            if let Some(r) = map.get(&exact).or_else(|| map.get(&by_path)) {
                return r.clone();
            }
            match &fallback {
                Some(f) => f(req),
                None => Reply::not_found(),
            }
        })
    }
}

/// A running fixture server; stops when dropped.
pub struct Web {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Req>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Web {
    /// An empty route table to fill with [`Routes::at`].
    pub fn routes() -> Routes {
        Routes {
            map: HashMap::new(),
            fallback: None,
        }
    }

    /// Start a server that answers every request with `handler`.
    pub fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Web {
        let handler: Arc<Handler> = Arc::new(handler);
        let log = Arc::new(Mutex::new(Vec::new()));
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("local addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread_log = log.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("server runtime");
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("listener");
                tokio::select! {
                    _ = accept_loop(listener, handler, thread_log) => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime cancels every connection task.
        });
        Web {
            addr,
            log,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: use as the crawler's proxy.
    pub fn proxy_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn log(&self) -> Vec<LoggedRequest> {
        self.log.lock().expect("log lock").clone()
    }

    pub fn clear_log(&self) {
        self.log.lock().expect("log lock").clear();
    }

    /// Requests to `host` (any path).
    pub fn requests_to(&self, host: &str) -> Vec<LoggedRequest> {
        self.log().into_iter().filter(|r| r.host == host).collect()
    }

    /// Requests to `host` whose path is `target` (any query), or whose path
    /// and query are `target` when it has a `?`.
    pub fn count(&self, host: &str, target: &str) -> usize {
        self.requests_to(host)
            .iter()
            .filter(|r| {
                if target.contains('?') {
                    r.target() == target
                } else {
                    r.path == target
                }
            })
            .count()
    }

    /// Requests to `host` for exactly `target` (path, plus `?query` if any).
    pub fn count_exact(&self, host: &str, target: &str) -> usize {
        self.requests_to(host)
            .iter()
            .filter(|r| r.target() == target)
            .count()
    }

    /// Requests to `host`, all paths.
    pub fn count_host(&self, host: &str) -> usize {
        self.requests_to(host).len()
    }

    /// Smallest time between two consecutive requests to `host`, as the server saw them.
    pub fn min_gap(&self, host: &str) -> Option<Duration> {
        let times: Vec<Instant> = self.requests_to(host).iter().map(|r| r.at).collect();
        times
            .windows(2)
            .map(|w| w[1].saturating_duration_since(w[0]))
            .min()
    }

    /// Requests to `host` whose arrival was less than `gap` after the previous one.
    pub fn gap_violations(&self, host: &str, gap: Duration) -> usize {
        let times: Vec<Instant> = self.requests_to(host).iter().map(|r| r.at).collect();
        times
            .windows(2)
            .filter(|w| w[1].saturating_duration_since(w[0]) < gap)
            .count()
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, handler: Arc<Handler>, log: Arc<Mutex<Vec<Req>>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve(stream, handler.clone(), log.clone()));
    }
}

/// Serve one connection: requests in sequence (keep-alive) until close.
async fn serve(mut stream: TcpStream, handler: Arc<Handler>, log: Arc<Mutex<Vec<Req>>>) {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let Some(req) = read_request(&mut stream, &mut buf).await else {
            return;
        };
        log.lock().expect("log lock").push(req.clone());
        let reply = handler(&req);
        if reply.hang {
            std::future::pending::<()>().await;
        }
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        match write_reply(&mut stream, &req, reply).await {
            Ok(true) => continue,
            _ => return,
        }
    }
}

/// Read one request head; `None` at end of stream or on garbage.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Req> {
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    buf.drain(..end + 4);
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    // Discard a request body, if any.
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < len {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    buf.drain(..len);

    let (authority, path_query) = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => match rest.find('/') {
            Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
            None => (rest.to_string(), "/".to_string()),
        },
        None => {
            let host = headers
                .iter()
                .find(|(k, _)| k == "host")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            (host, target.clone())
        }
    };
    let mut host = authority.to_ascii_lowercase();
    if let Some(h) = host.strip_suffix(":80") {
        host = h.to_string();
    }
    let (path, query) = match path_query.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (path_query, None),
    };
    Some(Req {
        method,
        host,
        path,
        query,
        headers,
        at: Instant::now(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Write one reply. `Ok(true)` when the connection may serve another request.
async fn write_reply(stream: &mut TcpStream, req: &Req, reply: Reply) -> std::io::Result<bool> {
    let Reply {
        status,
        mut headers,
        body,
        gzip: compress,
        drip,
        reset_after,
        ..
    } = reply;
    let body = match body {
        Body::Bytes(b) if compress => {
            headers.push(("content-encoding".into(), "gzip".into()));
            Body::Bytes(Arc::new(gzip(&b)))
        }
        other => other,
    };
    let no_body = req.method == "HEAD" || status == 304 || status == 204;
    let length: Option<u64> = match &body {
        Body::Bytes(b) => Some(b.len() as u64),
        Body::Repeat { chunk, times } => times.map(|t| t * chunk.len() as u64),
    };
    let keep_alive = length.is_some() && reset_after.is_none();
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in &headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(len) = length {
        head.push_str(&format!("content-length: {len}\r\n"));
    }
    if !keep_alive {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    if no_body {
        stream.flush().await?;
        return Ok(keep_alive);
    }

    let mut sent = 0usize;
    let limit = reset_after.unwrap_or(usize::MAX);
    let mut send = |piece: &[u8]| -> Option<Vec<u8>> {
        // Returns the part of `piece` to send, None once the reset point is reached.
        if sent >= limit {
            return None;
        }
        let take = piece.len().min(limit - sent);
        sent += take;
        Some(piece[..take].to_vec())
    };
    match &body {
        Body::Bytes(b) => {
            if let Some(part) = send(b) {
                write_paced(stream, &part, drip).await?;
            }
        }
        Body::Repeat { chunk, times } => {
            let mut i = 0u64;
            while times.is_none_or(|t| i < t) {
                let Some(part) = send(chunk) else { break };
                write_paced(stream, &part, drip).await?;
                i += 1;
            }
        }
    }
    stream.flush().await?;
    if reset_after.is_some() {
        // RST instead of FIN: the client sees a connection reset mid-body.
        let _ = stream.set_zero_linger();
        return Ok(false);
    }
    Ok(keep_alive)
}

/// Write `data`, at `drip` bytes per second when set.
async fn write_paced(
    stream: &mut TcpStream,
    data: &[u8],
    drip: Option<u64>,
) -> std::io::Result<()> {
    match drip {
        None => stream.write_all(data).await,
        Some(bps) => {
            // Send in pieces of about 1/20 s worth of bytes (at least one byte).
            let piece = (bps / 20).max(1) as usize;
            let pause = Duration::from_secs_f64(piece as f64 / bps as f64);
            for part in data.chunks(piece) {
                stream.write_all(part).await?;
                stream.flush().await?;
                tokio::time::sleep(pause).await;
            }
            Ok(())
        }
    }
}
