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

mod reply;
mod serve;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;

// `gzip` is for test modules that build compressed bodies by hand.
#[allow(unused_imports)]
pub use reply::{Reply, gzip};

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

pub(crate) type Handler = dyn Fn(&Req) -> Reply + Send + Sync;

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
                    _ = serve::accept_loop(listener, handler, thread_log) => {}
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
