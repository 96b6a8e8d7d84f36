//! Every request a rendered page makes is paused by the DevTools `Fetch`
//! domain and answered by the crawler itself, so the browser never touches
//! the network. The page's own document is answered with the body the
//! crawler already fetched (no second request). Scripts, XHR and `fetch()`
//! calls to the page's own host go through [`Net`]: robots.txt, the
//! per-host gap and the request budget hold exactly as for the crawl's own
//! fetches (the same gate, the same counter). Everything else is refused:
//! images, media, fonts, stylesheets, frames, beacons, other hosts, and any
//! method but GET.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::listeners::EventStream;
use futures_util::StreamExt as _;
use serde::Serialize;

use crate::net::{Accept, FetchError, Net, Request};
use crate::url::{self, Url};

/// What became of the requests of rendered pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Requests {
    /// Fetched through the crawler and handed to the browser (any status).
    pub answered: u64,
    /// Refused for their kind (image, media, font, stylesheet, frame, ...) or method.
    pub refused_kind: u64,
    /// Refused: another host than the page's.
    pub refused_host: u64,
    /// Refused by robots.txt.
    pub refused_robots: u64,
    /// Not fetched: the request budget was spent, the host rested, or the fetch failed.
    pub failed: u64,
}

impl Requests {
    pub fn add(&mut self, o: &Requests) {
        self.answered += o.answered;
        self.refused_kind += o.refused_kind;
        self.refused_host += o.refused_host;
        self.refused_robots += o.refused_robots;
        self.failed += o.failed;
    }
}

/// The page's request traffic as the settling loop watches it.
#[derive(Debug)]
pub(crate) struct Activity {
    inflight: AtomicUsize,
    last: Mutex<Instant>,
    pub counts: Mutex<Requests>,
}

impl Default for Activity {
    fn default() -> Activity {
        Activity::new()
    }
}

impl Activity {
    pub(crate) fn new() -> Activity {
        Activity {
            inflight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            counts: Mutex::new(Requests::default()),
        }
    }

    /// Something happened now (a request paused or answered, a scroll).
    pub(crate) fn touch(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// No request in flight, and none for `quiet`.
    pub(crate) fn is_quiet(&self, quiet: std::time::Duration) -> bool {
        self.inflight.load(Ordering::SeqCst) == 0
            && self
                .last
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                >= quiet
    }

    fn count(&self, f: impl FnOnce(&mut Requests)) {
        f(&mut self.counts.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// The page's own document, as the crawler fetched it.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    pub url: Url,
    pub body: Arc<Vec<u8>>,
    pub content_type: String,
}

/// Why a request is refused, or how it is answered.
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    Document,
    Fetch(Url),
    RefuseKind,
    RefuseHost,
}

/// The plan for one paused request (pure). The document is served once:
/// a second navigation (a script sending the page elsewhere) is refused.
fn plan(kind: &ResourceType, method: &str, raw: &str, doc: &Document, served: bool) -> Plan {
    if method != "GET" {
        return Plan::RefuseKind;
    }
    let Some(u) = url::parse(raw) else {
        return Plan::RefuseKind;
    };
    match kind {
        ResourceType::Document if !served && u.as_str() == doc.url.as_str() => Plan::Document,
        ResourceType::Script | ResourceType::Xhr | ResourceType::Fetch => {
            if url::host_key(&u) == url::host_key(&doc.url) {
                Plan::Fetch(u)
            } else {
                Plan::RefuseHost
            }
        }
        _ => Plan::RefuseKind,
    }
}

/// Answer every paused request of `page` until the stream ends (the page
/// closed) or the task is aborted; the fetches in flight go with it.
pub(crate) async fn serve(
    page: Page,
    mut events: EventStream<EventRequestPaused>,
    net: Net,
    doc: Document,
    activity: Arc<Activity>,
) {
    let mut tasks = tokio::task::JoinSet::new();
    let mut served = false;
    while let Some(ev) = events.next().await {
        activity.touch();
        let p = plan(
            &ev.resource_type,
            &ev.request.method,
            &ev.request.url,
            &doc,
            served,
        );
        tracing::trace!(url = %ev.request.url, kind = ?ev.resource_type, plan = ?p, "browser request");
        match p {
            Plan::Document => {
                served = true;
                let body = doc.body.clone();
                let ct = doc.content_type.clone();
                fulfill(&page, &ev, 200, &ct, &body).await;
            }
            Plan::RefuseKind => {
                activity.count(|c| c.refused_kind += 1);
                fail(&page, &ev).await;
            }
            Plan::RefuseHost => {
                activity.count(|c| c.refused_host += 1);
                fail(&page, &ev).await;
            }
            Plan::Fetch(u) => {
                activity.inflight.fetch_add(1, Ordering::SeqCst);
                let (page, net, activity) = (page.clone(), net.clone(), activity.clone());
                tasks.spawn(async move {
                    answer(&page, &ev, &net, &u, &activity).await;
                    activity.inflight.fetch_sub(1, Ordering::SeqCst);
                    activity.touch();
                });
            }
        }
        // Reap finished fetches so the set does not grow.
        while tasks.try_join_next().is_some() {}
    }
}

/// Fetch `u` for the browser through robots.txt, the gate and the budget.
async fn answer(page: &Page, ev: &EventRequestPaused, net: &Net, u: &Url, activity: &Activity) {
    let robots = match net.robots_for(u).await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(url = %u, error = %e, "browser request not fetched");
            activity.count(|c| c.failed += 1);
            return fail(page, ev).await;
        }
    };
    if !robots.allowed(u) {
        tracing::debug!(url = %u, "browser request refused: robots.txt disallows it");
        activity.count(|c| c.refused_robots += 1);
        return fail(page, ev).await;
    }
    let host = url::host_key(u);
    let same_host = move |n: &Url| url::host_key(n) == host;
    let req = Request {
        accept: Accept::Any,
        ..Request::default()
    };
    match net.fetch(u, &req, &same_host).await {
        Ok(resp) => {
            activity.count(|c| c.answered += 1);
            let ct = resp
                .header("content-type")
                .unwrap_or("application/octet-stream")
                .to_string();
            fulfill(page, ev, resp.status, &ct, &resp.body).await;
        }
        Err(e) => {
            if matches!(e, FetchError::Budget) {
                tracing::debug!(url = %u, "browser request not fetched: request budget spent");
            } else {
                tracing::debug!(url = %u, error = %e, "browser request failed");
            }
            activity.count(|c| c.failed += 1);
            fail(page, ev).await;
        }
    }
}

async fn fulfill(page: &Page, ev: &EventRequestPaused, status: u16, ct: &str, body: &[u8]) {
    let mut params = FulfillRequestParams::new(ev.request_id.clone(), i64::from(status));
    params.response_headers = Some(vec![HeaderEntry::new("content-type", ct)]);
    params.body = Some(STANDARD.encode(body).into());
    if let Err(e) = page.execute(params).await {
        tracing::debug!(error = %e, "could not answer a browser request");
    }
}

async fn fail(page: &Page, ev: &EventRequestPaused) {
    let params = FailRequestParams::new(ev.request_id.clone(), ErrorReason::BlockedByClient);
    if let Err(e) = page.execute(params).await {
        tracing::debug!(error = %e, "could not refuse a browser request");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        Document {
            url: url::parse("http://news.test/a").unwrap(),
            body: Arc::new(Vec::new()),
            content_type: "text/html".into(),
        }
    }

    #[test]
    fn only_the_page_itself_and_its_hosts_scripts_and_data_are_fetched() {
        let d = doc();
        let p = |k: ResourceType, m: &str, u: &str, served: bool| plan(&k, m, u, &d, served);
        use ResourceType as R;
        assert_eq!(
            p(R::Document, "GET", "http://news.test/a", false),
            Plan::Document
        );
        assert_eq!(
            p(R::Document, "GET", "http://news.test/a", true),
            Plan::RefuseKind
        );
        assert_eq!(
            p(R::Document, "GET", "http://news.test/b", false),
            Plan::RefuseKind
        );
        let api = url::parse("http://news.test/api/1.json").unwrap();
        assert_eq!(
            p(R::Fetch, "GET", api.as_str(), true),
            Plan::Fetch(api.clone())
        );
        assert_eq!(p(R::Xhr, "GET", api.as_str(), true), Plan::Fetch(api));
        assert_eq!(
            p(R::Xhr, "POST", "http://news.test/api", true),
            Plan::RefuseKind
        );
        assert_eq!(
            p(R::Script, "GET", "http://cdn.test/app.js", true),
            Plan::RefuseHost
        );
        assert_eq!(
            p(R::Script, "GET", "http://news.test:8080/app.js", true),
            Plan::RefuseHost
        );
        for k in [
            R::Image,
            R::Media,
            R::Font,
            R::Stylesheet,
            R::Ping,
            R::Other,
        ] {
            assert_eq!(p(k, "GET", "http://news.test/x", true), Plan::RefuseKind);
        }
        assert_eq!(
            p(R::Script, "GET", "data:text/javascript,1", true),
            Plan::RefuseKind
        );
    }
}
