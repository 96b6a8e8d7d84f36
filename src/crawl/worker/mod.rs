//! One fetch, start to finish, on a worker task: robots check, the request
//! (politeness is held inside `net`), then parsing off the async threads
//! (`spawn_blocking`). Workers never touch crawl state: they return a [`Done`]
//! to the engine, which owns the frontier, the seen-set and the counters.
//! As soon as the answer is read, before parsing, the worker sends an
//! [`Answered`] to the engine, so the host's turn is free while it parses.

pub mod render;
pub(crate) mod slots;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveDate;

use super::signals;
use crate::config::{Archive, Scope};
use crate::consent::Signals;
use crate::discover::{self, Limits, Parsed};
use crate::extract::{self, Page};
use crate::frontier::{Entry, Kind};
use crate::net::{Accept, FetchError, Net, Request, Response, Robots};
use crate::record::TdmOutcome;
use crate::relevance::Rule;
use crate::source::Sources;
use crate::store::warc::Captured;
use crate::url::Url;

/// What every worker shares (read-only).
pub struct Ctx {
    pub net: Net,
    pub rule: Rule,
    pub scope: Sources,
    pub mode: Scope,
    /// The hosts this runner crawls; a redirect to another partition's host is not followed.
    pub partition: crate::partition::Partition,
    pub today: NaiveDate,
    pub limits: Limits,
    /// Parses allowed at once (`crawl.parse_concurrency`): a body waits here,
    /// holding its lease on the body budget, until a parse slot is free;
    /// the smallest waiting body goes first ([`slots`]).
    pub parses: slots::ParseSlots,
    /// Where a worker says its answer is in (None: nobody schedules, as in `check-url`).
    pub answered: Option<tokio::sync::mpsc::UnboundedSender<Answered>>,
    /// Which responses are captured for the WARC archive.
    pub archive: Archive,
    /// Rendering in a browser (`None`: no page is rendered; see `super::render`).
    pub render: Option<render::Rendering>,
}

/// A job's request was answered and its body read; parsing follows.
#[derive(Debug)]
pub struct Answered {
    pub host: String,
    /// When the request went on the wire.
    pub(crate) sent_at: Instant,
}

impl Ctx {
    /// May a redirect lead to `url`? Sources (and `--seed` hosts) always; any
    /// host that is not deny-listed in open scope.
    pub(crate) fn redirect_in_scope(&self, url: &Url) -> bool {
        if !self.partition.owns(url) {
            return false;
        }
        if self.scope.contains(url) {
            return true;
        }
        self.mode == Scope::Open && url.host_str().is_some_and(|h| !self.scope.denied(h))
    }
}

/// A fetch handed to a worker.
#[derive(Debug, Clone)]
pub struct Job {
    pub host: String,
    pub url: Url,
    pub entry: Entry,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// An [`Answered`] was sent for this job: its slot is already free.
    pub(crate) freed: bool,
}

/// What the body turned out to be.
#[derive(Debug)]
pub enum Body {
    Page(Box<Page>),
    Listing(Parsed),
    /// A feed or sitemap that could not be parsed.
    BadListing(String),
    /// The extractor or the listing parser panicked on the body (the message).
    Panicked(String),
    /// 304: nothing new.
    NotModified,
    /// A non-2xx status (the body is not read further).
    Status(u16),
    /// A bot challenge or `402 Payment Required` (`net::turned`): never
    /// stored, its links never followed.
    Turned(crate::net::turned::Turned),
}

/// The response's metadata the engine needs, without the body.
#[derive(Debug)]
pub struct Meta {
    pub url: Url,
    pub status: u16,
    pub redirects: Vec<Url>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub retry_after: Option<Duration>,
    pub(crate) sent_at: Instant,
    pub elapsed: Duration,
    pub wire_bytes: u64,
    pub gap_wait: Duration,
    pub x_robots_tag: Vec<String>,
    /// AI-use signals for a page (headers, robots.txt, meta tags, tdmrep.json); empty otherwise.
    pub signals: Signals,
    /// xxh3 of the robots.txt the final URL was fetched under (0: none).
    pub robots_hash: u64,
    /// The exchange as WARC members, when `crawl.archive` keeps this
    /// response (under `articles`: only a page that is a relevant article).
    pub(crate) captured: Option<Box<Captured>>,
    /// The page was rendered in a browser (or rendering was tried and failed).
    pub rendered: Option<render::RenderNote>,
}

#[cfg(test)]
impl Meta {
    /// The metadata of a plain answer from `url` with `status` (for tests of the engine).
    pub(crate) fn answered(url: Url, status: u16) -> Meta {
        Meta {
            url,
            status,
            redirects: vec![],
            etag: None,
            last_modified: None,
            retry_after: None,
            sent_at: Instant::now(),
            elapsed: Duration::ZERO,
            wire_bytes: 0,
            gap_wait: Duration::ZERO,
            x_robots_tag: vec![],
            signals: Signals::default(),
            robots_hash: 0,
            captured: None,
            rendered: None,
        }
    }
}

/// A finished job.
#[derive(Debug)]
pub struct Done {
    pub job: Job,
    /// The host's robots.txt, as the fetch saw it.
    pub robots: Option<Arc<Robots>>,
    pub result: Result<(Meta, Body), FetchError>,
}

/// Run one job.
pub async fn work(ctx: Arc<Ctx>, mut job: Job) -> Done {
    // A spent budget, a rested host or a private address is reported as
    // such (the budget case puts the URL back), not as a robots refusal.
    let robots = match ctx.net.robots_for(&job.url).await {
        Ok(r) => r,
        Err(e) => {
            return Done {
                job,
                robots: None,
                result: Err(e),
            };
        }
    };
    if !robots.allowed(&job.url) {
        tracing::debug!(url = %job.url, outcome = ?robots.outcome, "robots.txt disallows; not fetched");
        let err = robots.refusal(&job.url);
        return Done {
            job,
            robots: Some(robots),
            result: Err(err),
        };
    }
    let req = Request {
        accept: match job.entry.kind {
            Kind::Page => Accept::Html,
            Kind::Feed | Kind::Sitemap => Accept::Listing,
        },
        etag: job.etag.clone(),
        last_modified: job.last_modified.clone(),
        keep_raw: match ctx.archive {
            Archive::None => false,
            Archive::Articles => job.entry.kind == Kind::Page,
            Archive::All => true,
        },
    };
    let c = ctx.clone();
    let in_scope = move |u: &Url| c.redirect_in_scope(u);
    let result = match ctx.net.fetch(&job.url, &req, &in_scope).await {
        Ok(resp) => {
            if let Some(tx) = &ctx.answered {
                let answer = Answered {
                    host: job.host.clone(),
                    sent_at: resp.sent_at,
                };
                job.freed = tx.send(answer).is_ok();
            }
            let (mut meta, body) = read_body(&ctx, &job, resp).await;
            match &body {
                Body::Page(page) => match consent(&ctx, &job, &mut meta, page).await {
                    Some(e) => Err(e),
                    None => Ok((meta, body)),
                },
                _ => Ok((meta, body)),
            }
        }
        Err(e) => Err(e),
    };
    Done {
        job,
        robots: Some(robots),
        result,
    }
}

async fn read_body(ctx: &Arc<Ctx>, job: &Job, mut resp: Response) -> (Meta, Body) {
    let wire = resp.wire.take();
    let mut meta = meta_of(ctx, &resp);
    if resp.status == 304 {
        return (meta, Body::NotModified);
    }
    if let Some(t) = crate::net::turned::classify(resp.status, &resp.headers, &resp.body) {
        tracing::debug!(url = %resp.url, status = resp.status, what = %t.describe(), "turned away");
        return (meta, Body::Turned(t));
    }
    if !(200..300).contains(&resp.status) {
        if ctx.archive == Archive::All
            && let Some(w) = &wire
        {
            meta.captured = Some(Box::new(capture(&resp, w)));
        }
        return match resp.status {
            304 => (meta, Body::NotModified),
            s => (meta, Body::Status(s)),
        };
    }
    let sniffed = discover::sniff(&resp.url, resp.content_type.as_deref(), &resp.body);
    let kind = match (sniffed, job.entry.kind) {
        (Some(k), _) => k,
        (None, k) => k,
    };
    let slot = ctx.parses.acquire(resp.body.len()).await;
    let c = ctx.clone();
    let parsed = tokio::task::spawn_blocking(move || {
        let mut wire = wire;
        let (body, captured) = parse(&c, kind, &resp, &mut wire);
        (body, captured, resp, wire)
    })
    .await;
    drop(slot);
    match parsed {
        Ok((body, captured, resp, wire)) => {
            meta.captured = captured;
            let body = render::after_parse(ctx, job, &mut meta, body, resp, wire).await;
            (meta, body)
        }
        Err(e) => {
            let cause = panic_message(e).unwrap_or_else(|| "the parse was cancelled".into());
            (meta, Body::Panicked(cause))
        }
    }
}

/// The response's metadata the engine needs, with the AI-use signals of its headers.
fn meta_of(ctx: &Ctx, resp: &Response) -> Meta {
    Meta {
        url: resp.url.clone(),
        status: resp.status,
        redirects: resp.redirects.clone(),
        etag: resp.etag.clone(),
        last_modified: resp.last_modified.clone(),
        retry_after: resp.retry_after,
        sent_at: resp.sent_at,
        elapsed: resp.elapsed,
        wire_bytes: resp.wire_bytes,
        gap_wait: resp.gap_wait,
        x_robots_tag: resp.x_robots_tag.clone(),
        signals: signals::from_headers(&ctx.net, resp),
        robots_hash: 0,
        captured: None,
        rendered: None,
    }
}

/// Parse a 2xx body as `kind` (on the blocking pool), and capture the
/// exchange for the archive when it will be kept.
fn parse(
    ctx: &Ctx,
    kind: Kind,
    resp: &Response,
    wire: &mut Option<Box<crate::net::Wire>>,
) -> (Body, Option<Box<Captured>>) {
    let body = match kind {
        Kind::Feed | Kind::Sitemap => {
            match discover::parse(kind, &resp.url, &resp.body, &ctx.limits) {
                Ok(parsed) => Body::Listing(parsed),
                Err(e) => Body::BadListing(e.to_string()),
            }
        }
        Kind::Page => {
            let page = extract::extract(
                &resp.body,
                resp.charset.as_deref(),
                Some(&resp.url),
                &ctx.rule,
                ctx.today,
            );
            Body::Page(Box::new(page))
        }
    };
    // Captured here, off the engine, and only what will be archived:
    // under `articles`, a page that is a relevant article. The raw
    // bytes are dropped with `resp` as this task ends.
    let keep = match (&body, ctx.archive) {
        (Body::Page(p), _) if noarchive(p, &resp.x_robots_tag) => {
            tracing::debug!(url = %resp.url, "noarchive: not archived");
            false
        }
        (_, Archive::All) => true,
        (Body::Page(p), Archive::Articles) => p.is_article && p.relevance.relevant,
        _ => false,
    };
    let captured = keep
        .then(|| wire.take())
        .flatten()
        .map(|w| Box::new(capture(resp, &w)));
    (body, captured)
}

/// The publisher asks that the page not be archived (`noarchive` or `none`
/// in a robots meta tag or an `X-Robots-Tag`, for any agent).
pub(super) fn noarchive(page: &Page, x_robots_tag: &[String]) -> bool {
    page.robots_meta
        .iter()
        .any(|d| d == "noarchive" || d == "none")
        || x_robots_tag.iter().any(|v| {
            v.to_ascii_lowercase()
                .split([',', ':', ' '])
                .any(|d| d == "noarchive" || d == "none")
        })
}

/// The WARC members of a response; they keep its body's lease until written.
fn capture(resp: &Response, wire: &crate::net::Wire) -> Captured {
    let mut c = crate::store::warc::capture(resp.url.as_str(), wire, &resp.body);
    c.hold = resp
        .body_lease
        .clone()
        .map(|l| Box::new(l) as Box<dyn std::any::Any + Send + Sync>);
    c
}

/// The AI-use signals of a fetched page beyond its headers: robots.txt
/// Content-Signal lines of the final URL's origin, meta tags, and, for a page
/// the crawler would keep (an article, relevant), the origin's tdmrep.json
/// (fetched once per origin, so hosts without candidates cost no request).
/// `Some(Budget | Rested)` when tdmrep.json or an RSL licence could not be asked for: the page
/// is then not decided on (a spent budget puts it back in the queue).
async fn consent(ctx: &Ctx, job: &Job, meta: &mut Meta, page: &Page) -> Option<FetchError> {
    let candidate = job.entry.kind == Kind::Page && page.is_article && page.relevance.relevant;
    let got =
        signals::add_page_signals(&ctx.net, &meta.url, page, candidate, &mut meta.signals).await;
    meta.robots_hash = got.robots_hash;
    match got.unasked.as_ref() {
        Some(TdmOutcome::Budget) => Some(FetchError::Budget),
        Some(TdmOutcome::Rested) => Some(FetchError::Rested),
        _ => None,
    }
}

/// The message a panicked task left, `None` for a cancelled one.
pub(crate) fn panic_message(e: tokio::task::JoinError) -> Option<String> {
    let payload = e.try_into_panic().ok()?;
    Some(if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_keeps_its_message_and_a_cancel_has_none() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let panicked = tokio::spawn(async { panic!("boom at {}", 3) }).await;
            assert_eq!(
                panic_message(panicked.unwrap_err()).as_deref(),
                Some("boom at 3")
            );
            let panicked = tokio::spawn(async { std::panic::panic_any(7_u8) }).await;
            assert_eq!(
                panic_message(panicked.unwrap_err()).as_deref(),
                Some("a panic without a message")
            );
            let slow = tokio::spawn(std::future::pending::<()>());
            slow.abort();
            assert_eq!(panic_message(slow.await.unwrap_err()), None);
        });
    }
}
