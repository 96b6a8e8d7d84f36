//! A fetched page's AI-use signals, assembled one way for the crawl's worker,
//! `check-url` and `probe`'s start page and sampled pages, so they cannot drift: the response's headers
//! (`X-Robots-Tag`, `tdm-reservation`, `Content-Usage`), then the robots.txt
//! `Content-Signal` lines and `Content-Usage` rule of the final URL's origin
//! and path, the page's meta tags, and, when asked
//! for, the origin's `tdmrep.json`. What the crawl does about them is
//! [`crate::consent::AiDecision`].

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
    let usage: Vec<&str> = resp
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("content-usage"))
        .map(|(_, v)| v.as_str())
        .collect();
    signals.content_usage_header(&usage);
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
    add_signals(net, url, Some(page), ask_tdmrep, signals).await
}

/// Add the signals of the site at `url` when no page was read there (the
/// start URL `probe` could not read, or a feed): robots.txt's, and with
/// `ask_tdmrep` the origin's `tdmrep.json` rule for its path.
pub async fn add_site_signals(
    net: &Net,
    url: &Url,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    add_signals(net, url, None, ask_tdmrep, signals).await
}

/// The one order: robots.txt's Content-Signal and Content-Usage lines, the
/// page's meta tags, then tdmrep.json.
async fn add_signals(
    net: &Net,
    url: &Url,
    page: Option<&Page>,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    let robots = net.robots(url).await;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    signals.content_signals(&robots.content_signals);
    signals.content_usage_robots(&robots.content_usage, &path);
    if let Some(page) = page {
        signals.meta(&page.consent_meta, net.agent());
    }
    let tdmrep = if ask_tdmrep {
        let tdm = net.tdmrep(url).await;
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
