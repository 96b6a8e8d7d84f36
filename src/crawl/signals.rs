//! A fetched page's AI-use signals, assembled one way for the crawl's worker
//! and for `check-url`, so the two cannot drift: the response's headers
//! (`X-Robots-Tag`, `tdm-reservation`), then the robots.txt `Content-Signal`
//! lines of the final URL's origin, the page's meta tags, and, when asked
//! for, the origin's `tdmrep.json`.

use std::sync::Arc;

use crate::consent::Signals;
use crate::extract::Page;
use crate::net::{Net, Response, TdmRep};
use crate::url::Url;

/// The signals a response's headers carry.
pub fn from_headers(net: &Net, resp: &Response) -> Signals {
    let mut signals = Signals::default();
    signals.x_robots_tag(&resp.x_robots_tag, net.agent());
    signals.tdm_headers(resp.header("tdm-reservation"), resp.header("tdm-policy"));
    signals
}

/// What the page adds to the header signals.
pub struct PageConsent {
    /// xxh3 of the robots.txt the page was fetched under (0: none).
    pub robots_hash: u64,
    /// The origin's `tdmrep.json`, when it was asked for.
    pub tdmrep: Option<Arc<TdmRep>>,
}

/// Add the robots.txt, meta and (with `ask_tdmrep`) TDMRep signals of the
/// page at `url` to `signals`.
pub async fn add_page_signals(
    net: &Net,
    url: &Url,
    page: &Page,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    let robots = net.robots(url).await;
    signals.content_signals(&robots.content_signals);
    signals.meta(&page.consent_meta, net.agent());
    let tdmrep = if ask_tdmrep {
        let tdm = net.tdmrep(url).await;
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        signals.tdmrep(&tdm.rules, &path);
        Some(tdm)
    } else {
        None
    };
    PageConsent {
        robots_hash: robots.hash,
        tdmrep,
    }
}
