//! The only module that touches the network: HTTP fetching with caps and
//! manual redirects (`fetch`), robots.txt (`robots`), per-host politeness
//! (`polite`), content decoding under a cap (`decode`), the refusal of
//! private and local addresses (`guard`), header parsing (`headers`), Web Bot
//! Auth request signing (`sign`) and the error type with its classes (`error`).
//!
//! [`Net`] is the one handle the crawl engine holds (cheap to clone): a
//! reqwest client (rustls, no automatic redirects, no automatic
//! decompression), the robots.txt cache, the politeness [`Gate`], and the
//! request counter with its budget. Status codes are data: a 404 or a 500 is
//! `Ok(Response)`; `Err(FetchError)` means no usable answer.
//!
//! Also here: `doc_cache` (robots.txt and tdmrep.json asked conditionally
//! across runs), `tdmrep` (fetching `/.well-known/tdmrep.json`), `budget` (one
//! budget for body bytes in flight), `turned` (bot challenges and `402`),
//! `tls` (reqwest's TLS with the platform verifier made at the first HTTPS
//! handshake). [`NetOptions`] is all `Net::new` needs, made from `crawl:` in
//! `config/crawl.rs` (the one reader of `allow_private_addresses`).

mod budget;
mod decode;
pub mod doc_cache;
mod error;
mod fetch;
mod guard;
mod headers;
pub mod polite;
mod robots;
pub mod sign;
mod tdmrep;
mod tls;
pub mod turned;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use anyhow::Context as _;
use tokio::sync::OnceCell;

use crate::url::Url;

pub use crate::record::RobotsOutcome;
pub use error::FetchError;
pub(crate) use headers::parse_media_type;
pub use polite::Gate;
pub use robots::Robots;
pub use tdmrep::{RslLicense, TdmRep};

/// Which content types a fetch reads; others are skipped from their headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Accept {
    /// Pages: HTML and XHTML, plus XML and feeds (a page URL may turn out to be a feed).
    #[default]
    Html,
    /// Feeds and sitemaps: the above plus JSON, plain text and gzip files.
    Listing,
    /// Anything.
    Any,
}

/// What to fetch, beyond the URL.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub accept: Accept,
    /// Validator from an earlier fetch: sent as `If-None-Match`.
    pub etag: Option<String>,
    /// Validator from an earlier fetch: sent as `If-Modified-Since`.
    pub last_modified: Option<String>,
    /// Keep what a WARC record needs ([`Response::wire`]): the raw bytes of
    /// an encoded body, the request as sent, the answer's first line.
    pub keep_raw: bool,
}

/// The `Accept-Encoding` every request sends (bodies are decoded by `decode`).
pub(crate) const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";

/// One exchange as a WARC record keeps it (see `crate::store::warc`).
#[derive(Clone)]
pub struct Wire {
    /// When the request was sent.
    pub date: chrono::DateTime<chrono::Utc>,
    /// The server's address; `None` through a proxy (the peer is the proxy).
    pub(crate) ip: Option<std::net::IpAddr>,
    /// `HTTP/1.1`, `HTTP/2`, ...
    pub version: &'static str,
    pub status: u16,
    pub reason: String,
    /// Path and query of the request line.
    pub(crate) request_target: String,
    /// The request headers as sent, names lower-cased (as hyper writes them).
    pub(crate) request_headers: Vec<(String, Vec<u8>)>,
    /// The answer's headers, names lower-cased, values as received.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body as received when it was content-encoded; empty when it was
    /// not (then [`Response::body`] is the raw body).
    pub(crate) raw_body: Vec<u8>,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("status", &self.status)
            .field("raw_body", &self.raw_body.len())
            .finish()
    }
}

/// Decode a body stored with its `Content-Encoding` (an archived response),
/// under the same cap as a fetched one.
pub(crate) fn decode_body(encoding: Option<&str>, raw: &[u8], cap: u64) -> Result<Vec<u8>, String> {
    let mut d = decode::Decoder::new(encoding, cap).map_err(|e| format!("{e:?}"))?;
    d.push(raw).map_err(|e| format!("{e:?}"))?;
    d.finish().map_err(|e| format!("{e:?}"))
}

impl Request {
    pub fn html() -> Request {
        Request::default()
    }
    pub fn listing() -> Request {
        Request {
            accept: Accept::Listing,
            ..Request::default()
        }
    }
}

/// One answered fetch. Any status, including 304, 404 and 500.
#[derive(Debug, Clone)]
pub struct Response {
    /// The final URL (after redirects), normalised.
    pub url: Url,
    pub status: u16,
    /// Every URL that answered with a redirect, in order: empty without
    /// redirects, otherwise starting with the requested URL.
    pub redirects: Vec<Url>,
    /// Media type, lower-cased, without parameters (`text/html`).
    pub content_type: Option<String>,
    /// `charset` parameter of Content-Type, lower-cased.
    pub charset: Option<String>,
    /// Body after Content-Encoding decoding (not charset-decoded). Empty for
    /// 304 and for non-2xx answers of a type the request does not accept.
    pub body: Vec<u8>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// Retry-After of a 429/503, as a wait from now.
    pub retry_after: Option<Duration>,
    /// Every `X-Robots-Tag` value.
    pub x_robots_tag: Vec<String>,
    /// All response headers of the final hop, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// When the final hop's request was sent.
    pub(crate) sent_at: std::time::Instant,
    /// From the first hop's send to the end of the body.
    pub elapsed: Duration,
    /// Body bytes received on the wire, over all hops.
    pub wire_bytes: u64,
    /// Time spent waiting for politeness, over all hops.
    pub gap_wait: Duration,
    /// The body's share of `max_body_bytes_in_flight`, given back when the
    /// last clone of this response is dropped.
    pub(crate) body_lease: Option<Arc<budget::Lease>>,
    /// The exchange for a WARC record, when [`Request::keep_raw`] asked for it.
    pub wire: Option<Box<Wire>>,
}

impl Response {
    /// First value of a response header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Everything [`Net::new`] needs, given once at construction (the
/// `crawl:` section makes one: `NetOptions::from(&config.crawl)`).
#[derive(Debug, Clone)]
pub struct NetOptions {
    pub user_agent: String,
    pub connect_timeout: Duration,
    /// Longest wait for any single read of the body.
    pub read_timeout: Duration,
    /// Longest a whole request may take.
    pub request_timeout: Duration,
    pub max_redirects: usize,
    pub max_raw_bytes: u64,
    pub max_body_bytes: u64,
    pub max_robots_bytes: u64,
    pub tdmrep_refresh_days: u32,
    pub max_retry_after: Duration,
    pub min_host_gap: Duration,
    pub max_crawl_delay: Duration,
    pub per_host_concurrency: usize,
    pub host_max_failures: u32,
    /// Body bytes in flight across all fetches (0: no budget).
    pub max_body_bytes_in_flight: u64,
    /// Raw responses are archived: a body's lease also covers its raw copy.
    pub(crate) keeps_raw: bool,
    /// Most requests this run may send; 0 = no limit.
    pub max_requests: u64,
    /// Fetch hosts that are, or resolve to, loopback, private or link-local addresses.
    pub allow_private_addresses: bool,
    /// Sign every request (Web Bot Auth).
    pub web_bot_auth: Option<sign::WebBotAuth>,
    /// The use the crawl makes of the pages, which AI-use signals are checked against.
    pub ai_usage: crate::consent::AiUsage,
}

/// The numbers from [`NetOptions`] that fetching needs.
#[derive(Debug, Clone)]
struct Limits {
    max_redirects: usize,
    max_raw_bytes: u64,
    max_body_bytes: u64,
    max_robots_bytes: u64,
    tdmrep_refresh_days: u32,
    read_timeout: Duration,
    request_timeout: Duration,
    max_retry_after: Duration,
}

type RobotsCell = Arc<OnceCell<Arc<Robots>>>;

struct Inner {
    client: reqwest::Client,
    limits: Limits,
    /// robots.txt product token (`scraper` from `scraper/0.1 (+...)`).
    agent: String,
    /// The whole User-Agent header (for WARC request records).
    user_agent: String,
    /// Requests may go through a proxy (`--proxy` or the proxy variables):
    /// the peer's address is then not the publisher's.
    proxied: bool,
    gate: Arc<Gate>,
    /// One cell per origin: concurrent callers share one fetch.
    robots: Mutex<HashMap<String, RobotsCell>>,
    /// One `tdmrep.json` cell per origin, as for robots.txt.
    tdmrep: Mutex<HashMap<String, Arc<OnceCell<Arc<TdmRep>>>>>,
    /// One cell per RSL licence URL, as for tdmrep.json.
    rsl: Mutex<HashMap<String, Arc<OnceCell<Arc<RslLicense>>>>>,
    /// The use the crawl makes of the pages (`crawl.ai_usage`).
    usage: crate::consent::AiUsage,
    sent: AtomicU64,
    budget: AtomicU64,
    /// Shared with the DNS resolver.
    allow_private: Arc<AtomicBool>,
    /// Body bytes in flight across all fetches.
    bodies: budget::BodyBudget,
    /// robots.txt and tdmrep.json from earlier runs, updated by this one.
    docs: Mutex<doc_cache::DocMap>,
    /// Today's day stamp, for the documents' `day`.
    today: AtomicU64,
    /// Web Bot Auth: signs every request when `crawl.web_bot_auth` is set.
    signer: Option<sign::Signer>,
}

/// The network handle: client, robots cache, politeness gate, request budget.
#[derive(Clone)]
pub struct Net {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Net")
            .field("agent", &self.inner.agent)
            .field("requests", &self.requests())
            .finish()
    }
}

/// The most one body's lease covers: one decoded body, plus its raw copy
/// when responses are archived (an encoded body is then held twice).
fn body_cap(cfg: &NetOptions) -> u64 {
    let decoded = cfg.max_body_bytes.max(cfg.max_robots_bytes);
    if cfg.keeps_raw {
        decoded + cfg.max_raw_bytes
    } else {
        decoded
    }
}

/// Is a proxy configured through the environment (reqwest honours these)?
fn proxy_env() -> bool {
    ["http_proxy", "https_proxy", "all_proxy"]
        .iter()
        .any(|v| std::env::var_os(v).is_some() || std::env::var_os(v.to_uppercase()).is_some())
}

static CRYPTO: Once = Once::new();

fn install_crypto_provider() {
    CRYPTO.call_once(|| {
        // Err only means another provider is already installed, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Net {
    /// Build the client. `proxy` (from `--proxy`) overrides the
    /// `http_proxy`/`https_proxy`/`no_proxy` environment variables, which are
    /// honoured otherwise.
    pub fn new(opts: impl Into<NetOptions>, proxy: Option<&str>) -> anyhow::Result<Net> {
        let cfg = &opts.into();
        install_crypto_provider();
        // We decode bodies ourselves (to cap them), so we announce the codings.
        let mut defaults = reqwest::header::HeaderMap::new();
        defaults.insert(
            reqwest::header::ACCEPT_ENCODING,
            reqwest::header::HeaderValue::from_static(ACCEPT_ENCODING),
        );
        let mut builder = reqwest::Client::builder()
            .user_agent(cfg.user_agent.clone())
            .default_headers(defaults)
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .referer(false)
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .connect_timeout(cfg.connect_timeout)
            .read_timeout(cfg.read_timeout)
            .timeout(cfg.request_timeout);
        let allow_private = Arc::new(AtomicBool::new(cfg.allow_private_addresses));
        builder = builder.dns_resolver(guard::GuardedResolver {
            allow_private: allow_private.clone(),
            exempt: guard::proxy_hosts(proxy),
        });
        if let Some(p) = proxy {
            let proxy = reqwest::Proxy::all(p).with_context(|| format!("bad --proxy URL `{p}`"))?;
            builder = builder.proxy(proxy);
        }
        builder = builder.tls_backend_preconfigured(tls::client_config()?);
        let client = builder.build().context("building the HTTP client")?;
        let signer = match &cfg.web_bot_auth {
            Some(w) => {
                let s = sign::Signer::from_config(w)?;
                tracing::debug!(keyid = s.keyid(), agent = %w.signature_agent, "web bot auth: requests are signed");
                Some(s)
            }
            None => None,
        };
        let gate = Gate::new(
            cfg.min_host_gap,
            cfg.max_crawl_delay,
            cfg.per_host_concurrency,
            cfg.host_max_failures,
        );
        Ok(Net {
            inner: Arc::new(Inner {
                client,
                limits: Limits {
                    max_redirects: cfg.max_redirects,
                    max_raw_bytes: cfg.max_raw_bytes,
                    max_body_bytes: cfg.max_body_bytes,
                    max_robots_bytes: cfg.max_robots_bytes,
                    tdmrep_refresh_days: cfg.tdmrep_refresh_days,
                    read_timeout: cfg.read_timeout,
                    request_timeout: cfg.request_timeout,
                    max_retry_after: cfg.max_retry_after,
                },
                agent: crate::consent::agent_token(&cfg.user_agent),
                user_agent: cfg.user_agent.clone(),
                proxied: proxy.is_some() || proxy_env(),
                gate: Arc::new(gate),
                robots: Mutex::new(HashMap::new()),
                tdmrep: Mutex::new(HashMap::new()),
                rsl: Mutex::new(HashMap::new()),
                usage: cfg.ai_usage,
                sent: AtomicU64::new(0),
                budget: AtomicU64::new(cfg.max_requests),
                allow_private,
                bodies: budget::BodyBudget::new(cfg.max_body_bytes_in_flight, body_cap(cfg)),
                docs: Mutex::new(doc_cache::DocMap::new()),
                today: AtomicU64::new(0),
                signer,
            }),
        })
    }

    /// robots.txt and tdmrep.json answers from earlier runs (see
    /// [`doc_cache`]): asked for conditionally, reused on a 304.
    pub(crate) fn set_doc_cache(&self, docs: doc_cache::DocMap, today: u32) {
        *self.inner.docs.lock().unwrap_or_else(|e| e.into_inner()) = docs;
        self.inner.today.store(u64::from(today), Ordering::SeqCst);
    }

    /// The documents to remember for the next run.
    pub fn doc_cache(&self) -> doc_cache::DocMap {
        self.inner
            .docs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn cached_doc(&self, url: &Url) -> Option<doc_cache::CachedDoc> {
        self.inner
            .docs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(url.as_str())
            .cloned()
    }

    /// The request headers for a cached document (robots.txt, tdmrep.json):
    /// `accept`, plus the validators of the copy kept from an earlier run,
    /// which is returned for reuse on a 304.
    fn doc_request(
        &self,
        url: &Url,
        accept: &'static str,
    ) -> (reqwest::header::HeaderMap, Option<doc_cache::CachedDoc>) {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::ACCEPT,
            reqwest::header::HeaderValue::from_static(accept),
        );
        let cached = self.cached_doc(url);
        if let Some(c) = &cached {
            c.conditional(&mut headers);
        }
        (headers, cached)
    }

    fn remember_doc(
        &self,
        url: &Url,
        headers: &reqwest::header::HeaderMap,
        status: u16,
        body: &[u8],
    ) {
        let day = self.inner.today.load(Ordering::SeqCst) as u32;
        let mut docs = self.inner.docs.lock().unwrap_or_else(|e| e.into_inner());
        match doc_cache::CachedDoc::from_answer(headers, status, body, day) {
            Some(doc) => {
                docs.insert(url.as_str().to_string(), doc);
            }
            None => {
                docs.remove(url.as_str());
            }
        }
    }

    /// Remember that `url` answered `status` (a 4xx: no such document).
    fn remember_absent(&self, url: &Url, status: u16) {
        let day = self.inner.today.load(Ordering::SeqCst) as u32;
        let doc = doc_cache::CachedDoc {
            status,
            day,
            ..Default::default()
        };
        self.inner
            .docs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(url.as_str().to_string(), doc);
    }

    fn touch_doc(&self, url: &Url) {
        let day = self.inner.today.load(Ordering::SeqCst) as u32;
        if let Some(d) = self
            .inner
            .docs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(url.as_str())
        {
            d.day = day;
        }
    }

    /// Requests actually sent so far (robots.txt included).
    pub fn requests(&self) -> u64 {
        self.inner.sent.load(Ordering::SeqCst)
    }

    /// Change the most requests this run may send ([`NetOptions::max_requests`];
    /// for tests); 0 = no limit. Past it, `fetch` and `robots` refuse with
    /// [`FetchError::Budget`] (robots: disallow, uncached).
    pub fn set_budget(&self, max_requests: u64) {
        self.inner.budget.store(max_requests, Ordering::SeqCst);
    }

    /// Set a host's minimum gap (never below the configured `min_host_gap`).
    /// `host` is a [`crate::url::host_key`].
    pub fn set_gap(&self, host: &str, gap: Duration) {
        self.inner.gate.set_gap(host, gap);
    }

    /// The host's current gap.
    pub fn gap(&self, host: &str) -> Duration {
        self.inner.gate.gap(host)
    }

    /// How long until `host` could be sent a request (its gap since the last
    /// request, or a Retry-After pause); zero when ready. Lets a scheduler
    /// serve another host instead of waiting in the gate.
    pub fn ready_in(&self, host: &str) -> Duration {
        self.inner.gate.ready_in(host)
    }

    /// Refuse every further request to `host` this run.
    pub fn rest(&self, host: &str) {
        self.inner.gate.rest(host);
    }

    pub fn is_rested(&self, host: &str) -> bool {
        self.inner.gate.is_rested(host)
    }

    /// Allow hosts that are, or resolve to, loopback, private or link-local
    /// addresses (for tests against a local server reached without a proxy;
    /// the crawl gives `crawl.allow_private_addresses` in [`NetOptions`]).
    pub fn set_allow_private(&self, allow: bool) {
        self.inner.allow_private.store(allow, Ordering::SeqCst);
    }

    /// `Err(PrivateAddress)` when `url`'s host itself is private or local.
    fn check_host(&self, url: &Url) -> Result<(), FetchError> {
        if self.inner.allow_private.load(Ordering::SeqCst) {
            return Ok(());
        }
        match guard::host_refusal(url) {
            Some(host) => {
                tracing::debug!(%url, "refused: private or local address");
                Err(FetchError::PrivateAddress(host))
            }
            None => Ok(()),
        }
    }

    /// Is the budget spent?
    fn budget_spent(&self) -> bool {
        let b = self.inner.budget.load(Ordering::SeqCst);
        b > 0 && self.requests() >= b
    }

    /// Count one request about to be sent, unless the budget is spent.
    fn take_request(&self) -> Result<(), FetchError> {
        let budget = self.inner.budget.load(Ordering::SeqCst);
        self.inner
            .sent
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (budget == 0 || n < budget).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| FetchError::Budget)
    }
}
