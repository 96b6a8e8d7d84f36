//! Rendering pages in headless Chromium, for pages whose story only scripts
//! write (client-side rendering, a body inside a script's JSON, paragraphs
//! loaded as the reader scrolls). Optional and bounded.
//!
//! - When: `sources[].render` or `crawl.render.mode` (`never | auto | always`;
//!   `crate::source::Render`). Under `auto` a page is rendered when the static
//!   read found no article and the markup looks like an application shell
//!   ([`shell`]), or when `scraper probe` measured that rendering adds the
//!   story for its source ([`verdicts`], `data/state/render_verdicts.json`).
//! - How: one browser ([`browser`]: found on PATH or at
//!   `crawl.render.browser`, started on first use through `chromiumoxide`
//!   over the DevTools protocol, relaunched when it died or its process tree
//!   passed `crawl.render.max_memory`), at most `crawl.render.tabs` pages at
//!   once, each within `crawl.render.page_timeout`. Every request a page
//!   makes is answered by the crawler ([`intercept`]): its document from the
//!   body already fetched, its own host's scripts and data through `Net`
//!   (robots.txt, per-host gap, request budget), everything else refused.
//! - Settling: after the load event, the page is scrolled to its end (lazy
//!   loading) and the DOM read once no request has been in flight for
//!   [`QUIET`], again until the DOM stops growing (at most [`MAX_SCROLLS`]
//!   rounds) or the time limit nears. The serialised DOM then goes to the
//!   extractor like any fetched page.

pub mod browser;
pub(crate) mod intercept;
pub mod shell;
pub mod verdicts;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EnableParams, EventRequestPaused, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, CreateTargetParams};
use serde::Serialize;

use crate::net::Net;
use crate::url::Url;
pub use intercept::Requests;

/// No request in flight for this long: the page has settled (for now).
pub(crate) const QUIET: Duration = Duration::from_millis(200);
/// Scroll-and-settle rounds at most (lazy-loaded parts).
pub(crate) const MAX_SCROLLS: usize = 6;

/// What the renderer needs (made from `crawl.render`).
#[derive(Debug, Clone)]
pub struct Options {
    /// A binary name looked up on PATH, or a path.
    pub browser: String,
    /// Pages rendered at once.
    pub tabs: usize,
    /// Longest one page may take, load and settling included.
    pub page_timeout: Duration,
    /// Resident bytes of the browser's process tree past which it is restarted.
    pub max_memory: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            browser: "chromium".into(),
            tabs: 2,
            page_timeout: Duration::from_secs(15),
            max_memory: 1 << 30,
        }
    }
}

/// Rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// No browser binary (the message names what to install).
    #[error("{0}")]
    Missing(String),
    #[error("the browser could not start: {0}")]
    Launch(String),
    #[error("the browser failed: {0}")]
    Browser(String),
    #[error("the page took longer than {0:?} to render")]
    Timeout(Duration),
}

/// A page as rendered.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The serialised DOM (`<!doctype>` plus `outerHTML`).
    pub html: String,
    /// From asking for a tab to reading the DOM.
    pub wall: Duration,
    pub requests: Requests,
}

/// The page to render: its final URL and the body the crawler fetched.
#[derive(Debug, Clone)]
pub struct Doc {
    pub url: Url,
    pub body: Arc<Vec<u8>>,
    /// The response's `Content-Type` (`text/html` when it had none).
    pub content_type: Option<String>,
}

/// What the renderer did over its life (the end-of-run figures).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub rendered: u64,
    pub failed: u64,
    /// Wall time of rendered pages, summed.
    pub wall_ms: u64,
    /// CPU time of the browser's processes (all launches).
    pub browser_cpu_ms: u64,
    /// Largest resident size of the browser's process tree seen.
    pub peak_rss: u64,
    pub launches: u64,
    pub requests: Requests,
}

/// The one browser and its tabs.
pub struct Renderer {
    opts: Options,
    exe: PathBuf,
    live: tokio::sync::Mutex<Option<Arc<browser::Live>>>,
    tabs: tokio::sync::Semaphore,
    totals: Mutex<Totals>,
    /// CPU of browsers already gone (their trees can no longer be read).
    cpu_gone: Mutex<u64>,
    /// Starts that failed in a row; at [`MAX_FAILED_STARTS`] rendering is
    /// given up for the rest of the run (each start may wait 20 s).
    failed_starts: std::sync::atomic::AtomicU32,
}

/// Failed browser starts in a row after which rendering is given up.
pub(crate) const MAX_FAILED_STARTS: u32 = 3;

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("exe", &self.exe).finish()
    }
}

impl Renderer {
    /// A renderer with its binary found; the browser starts at the first page.
    pub fn new(opts: Options) -> Result<Renderer, RenderError> {
        let exe = browser::find(&opts.browser)?;
        Ok(Renderer {
            tabs: tokio::sync::Semaphore::new(opts.tabs.max(1)),
            opts,
            exe,
            live: tokio::sync::Mutex::new(None),
            totals: Mutex::new(Totals::default()),
            cpu_gone: Mutex::new(0),
            failed_starts: std::sync::atomic::AtomicU32::new(0),
        })
    }

    /// Render `doc`, its requests answered through `net`.
    pub async fn render(&self, net: &Net, doc: Doc) -> Result<Rendered, RenderError> {
        let _tab = self.tabs.acquire().await.ok();
        let started = Instant::now();
        let live = self.live().await?;
        let activity = Arc::new(intercept::Activity::new());
        let result = tab(&live, net, doc, activity.clone(), self.opts.page_timeout).await;
        let requests = *activity.counts.lock().unwrap_or_else(|e| e.into_inner());
        let wall = started.elapsed();
        {
            let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
            t.requests.add(&requests);
            match &result {
                Ok(_) => {
                    t.rendered += 1;
                    t.wall_ms += wall.as_millis() as u64;
                }
                Err(_) => t.failed += 1,
            }
        }
        self.check_memory(&live).await;
        result.map(|html| Rendered {
            html,
            wall,
            requests,
        })
    }

    /// The browser's main process, while one runs (for tests and benches).
    pub async fn browser_pid(&self) -> Option<u32> {
        self.live.lock().await.as_ref().and_then(|l| l.pid)
    }

    /// The running browser, launched (again) when there is none or it died.
    async fn live(&self) -> Result<Arc<browser::Live>, RenderError> {
        let mut slot = self.live.lock().await;
        if let Some(l) = slot.as_ref() {
            if !l.is_dead() {
                return Ok(l.clone());
            }
            tracing::warn!("the browser died; starting it again");
            *slot = None;
        }
        use std::sync::atomic::Ordering::SeqCst;
        if self.failed_starts.load(SeqCst) >= MAX_FAILED_STARTS {
            return Err(RenderError::Launch(format!(
                "given up after {MAX_FAILED_STARTS} failed starts"
            )));
        }
        let l = match browser::launch(&self.exe, self.opts.max_memory).await {
            Ok(l) => Arc::new(l),
            Err(e) => {
                self.failed_starts.fetch_add(1, SeqCst);
                return Err(e);
            }
        };
        self.failed_starts.store(0, SeqCst);
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .launches += 1;
        *slot = Some(l.clone());
        Ok(l)
    }

    /// Past the memory cap, the browser is dropped (killed); the next page
    /// starts a new one. Its CPU time so far is kept.
    async fn check_memory(&self, live: &Arc<browser::Live>) {
        let (rss, cpu) = browser::tree_usage(live.pid);
        {
            let gone = *self.cpu_gone.lock().unwrap_or_else(|e| e.into_inner());
            let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
            t.peak_rss = t.peak_rss.max(rss);
            t.browser_cpu_ms = t.browser_cpu_ms.max(gone + cpu);
        }
        if rss > self.opts.max_memory {
            tracing::warn!(
                rss_mb = rss >> 20,
                cap_mb = self.opts.max_memory >> 20,
                "the browser passed its memory cap; restarting it"
            );
            *self.cpu_gone.lock().unwrap_or_else(|e| e.into_inner()) += cpu;
            let mut slot = self.live.lock().await;
            if slot.as_ref().is_some_and(|l| Arc::ptr_eq(l, live)) {
                *slot = None;
            }
        }
    }

    /// What the renderer did so far.
    pub fn totals(&self) -> Totals {
        *self.totals.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Close the browser (pages in flight fail).
    pub async fn shutdown(&self) {
        let l = self.live.lock().await.take();
        if let Some(l) = l {
            let (_, cpu) = browser::tree_usage(l.pid);
            {
                let gone = *self.cpu_gone.lock().unwrap_or_else(|e| e.into_inner());
                let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
                t.browser_cpu_ms = t.browser_cpu_ms.max(gone + cpu);
            }
            // The last holder closes it and waits for it; otherwise it is
            // killed when the last page in flight lets go.
            if let Ok(mut l) = Arc::try_unwrap(l) {
                let _ = tokio::time::timeout(Duration::from_secs(2), l.browser.close()).await;
                let _ = tokio::time::timeout(Duration::from_secs(2), l.browser.wait()).await;
            }
        }
    }
}

fn cdp(e: impl std::fmt::Display) -> RenderError {
    RenderError::Browser(e.to_string())
}

/// One page in its own tab: intercept, navigate, settle, read the DOM
/// within `limit`; the tab is closed by the browser either way (a page
/// whose script hangs cannot close itself).
async fn tab(
    live: &browser::Live,
    net: &Net,
    doc: Doc,
    activity: Arc<intercept::Activity>,
    limit: Duration,
) -> Result<String, RenderError> {
    let deadline = Instant::now() + limit;
    // A window of its own: a tab behind another draws no frames, and lazy
    // loading waits on frames (IntersectionObserver).
    let mut target = CreateTargetParams::new("about:blank");
    target.new_window = Some(true);
    target.background = Some(false);
    let page = tokio::time::timeout(limit, live.browser.new_page(target))
        .await
        .map_err(|_| RenderError::Timeout(limit))?
        .map_err(cdp)?;
    let id = page.target_id().clone();
    let result = tokio::time::timeout(limit, async {
        let events = page
            .event_listener::<EventRequestPaused>()
            .await
            .map_err(cdp)?;
        let pattern = RequestPattern {
            url_pattern: Some("*".into()),
            resource_type: None,
            request_stage: Some(RequestStage::Request),
        };
        page.execute(EnableParams {
            patterns: Some(vec![pattern]),
            handle_auth_requests: None,
        })
        .await
        .map_err(cdp)?;
        let document = intercept::Document {
            url: doc.url.clone(),
            body: doc.body.clone(),
            content_type: doc
                .content_type
                .clone()
                .unwrap_or_else(|| "text/html".into()),
        };
        let server = tokio::spawn(intercept::serve(
            page.clone(),
            events,
            net.clone(),
            document,
            activity.clone(),
        ));
        let read = navigate_and_read(&page, &doc.url, &activity, deadline).await;
        server.abort();
        read
    })
    .await
    .unwrap_or(Err(RenderError::Timeout(limit)));
    if let Err(e) = live.browser.execute(CloseTargetParams::new(id)).await {
        tracing::debug!(error = %e, "closing a tab");
    }
    result
}

async fn navigate_and_read(
    page: &Page,
    url: &Url,
    activity: &intercept::Activity,
    deadline: Instant,
) -> Result<String, RenderError> {
    page.goto(url.as_str()).await.map_err(cdp)?;
    // Leave a second of the time limit for reading the DOM.
    let settle_by = deadline
        .checked_sub(Duration::from_secs(1))
        .unwrap_or(deadline);
    let mut last_len = 0u64;
    for _ in 0..MAX_SCROLLS {
        wait_quiet(activity, settle_by).await;
        if Instant::now() >= settle_by {
            break;
        }
        let len: u64 = page
            .evaluate_function(SCROLL)
            .await
            .map_err(cdp)?
            .into_value()
            .map_err(cdp)?;
        activity.touch();
        if len == last_len {
            break;
        }
        last_len = len;
    }
    page.content().await.map_err(cdp)
}

/// Scroll to the end, let two frames (or 250 ms) pass so observers fire,
/// and return the DOM's size.
const SCROLL: &str = "async () => {
  const h = document.documentElement;
  if (!h) return 0;
  window.scrollTo(0, h.scrollHeight);
  window.dispatchEvent(new Event('scroll'));
  await Promise.race([
    new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))),
    new Promise(r => setTimeout(r, 250)),
  ]);
  return h.outerHTML.length;
}";

/// Until no request has been in flight for [`QUIET`], or `by`.
async fn wait_quiet(activity: &intercept::Activity, by: Instant) {
    while !activity.is_quiet(QUIET) && Instant::now() < by {
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
