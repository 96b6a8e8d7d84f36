//! A fetched page's AI-use signals, assembled one way for the crawl's worker,
//! `check-url` and `probe`'s start page and sampled pages, so they cannot
//! drift: the response's headers (`X-Robots-Tag`, `tdm-reservation`,
//! `Content-Usage`, `Content-Signal`, `Link: rel="license"`) and an HTML
//! page's `<link rel="license">`, then the robots.txt `Content-Signal` lines,
//! `Content-Usage` rule (for a path robots.txt lets us crawl) and `License:`
//! lines of the final URL's origin and path, the page's meta tags, and, when
//! asked for (a page the crawl would keep), the origin's `tdmrep.json` and
//! the RSL licences pointed to. Every signal is checked against
//! `crawl.ai_usage`. What the crawl does about them is
//! [`crate::consent::AiDecision`].

use std::sync::Arc;

use crate::consent::{Signals, Source, rsl};
use crate::extract::Page;
use crate::net::{Net, Response, TdmRep};
use crate::record::TdmOutcome;
use crate::url::{self, Url};

/// The signals a response's headers (and an HTML body's `<link rel="license">`) carry.
pub(crate) fn from_headers(net: &Net, resp: &Response) -> Signals {
    let mut signals = Signals {
        usage: net.usage(),
        ..Signals::default()
    };
    signals.x_robots_tag(&resp.x_robots_tag, net.agent());
    signals.tdm_headers(resp.header("tdm-reservation"), resp.header("tdm-policy"));
    let values = |name: &str| -> Vec<&str> {
        resp.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    };
    signals.content_usage_header(&values("content-usage"));
    signals.content_signal_header(&values("content-signal"));
    for target in rsl::link_licenses(&values("link")) {
        if let Some(u) = url::resolve(&resp.url, &target) {
            signals.license_ref(Source::Header, u.to_string());
        }
    }
    let html = resp
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
    if html {
        for target in rsl::html_licenses(&resp.body) {
            if let Some(u) = url::resolve(&resp.url, &target) {
                signals.license_ref(Source::Meta, u.to_string());
            }
        }
    }
    signals
}

/// What the page adds to the header signals.
pub(crate) struct PageConsent {
    /// xxh3 of the robots.txt the page was fetched under (0: none).
    pub robots_hash: u64,
    /// The origin's `tdmrep.json`, when it was asked for.
    pub tdmrep: Option<Arc<TdmRep>>,
    /// `Budget` or `Rested` when tdmrep.json or an RSL licence could not be
    /// asked for: the page is then not decided on.
    pub(crate) unasked: Option<TdmOutcome>,
}

/// Add the robots.txt, meta and (with `ask_tdmrep`) TDMRep and RSL signals
/// of the page at `url` to `signals`.
pub(crate) async fn add_page_signals(
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
/// `ask_tdmrep` the origin's `tdmrep.json` rule for its path and its RSL licences.
pub(crate) async fn add_site_signals(
    net: &Net,
    url: &Url,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    add_signals(net, url, None, ask_tdmrep, signals).await
}

/// The one order: robots.txt's Content-Signal, Content-Usage and License
/// lines, the page's meta tags, then tdmrep.json and the RSL licences.
async fn add_signals(
    net: &Net,
    url: &Url,
    page: Option<&Page>,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    signals.usage = net.usage();
    let robots = net.robots(url).await;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    signals.content_signals(&robots.content_signals);
    // draft-ietf-aipref-attach-05: a rule states preferences only for paths
    // the group lets the crawler fetch.
    if robots.allowed(url) {
        signals.content_usage_robots(&robots.content_usage, &path);
    }
    for line in &robots.licenses {
        if let Some(u) = url::resolve(url, line) {
            signals.license_ref(Source::RobotsTxt, u.to_string());
        }
    }
    if let Some(page) = page {
        signals.meta(&page.consent_meta, net.agent());
    }
    let mut got = PageConsent {
        robots_hash: robots.hash,
        tdmrep: None,
        unasked: None,
    };
    if ask_tdmrep {
        let tdm = net.tdmrep(url).await;
        signals.tdmrep(&tdm.rules, &path);
        let licenses = add_licenses(net, url, &path, signals).await;
        got.unasked = not_asked(&tdm.outcome).or(licenses);
        got.tdmrep = Some(tdm);
    }
    got
}

/// `Budget` and `Rested`: a document that could not be asked for.
fn not_asked(outcome: &TdmOutcome) -> Option<TdmOutcome> {
    matches!(outcome, TdmOutcome::Budget | TdmOutcome::Rested).then(|| outcome.clone())
}

/// Read each RSL licence pointed to and add what it says about the page;
/// `Some` when one could not be asked for (budget spent, host rested).
async fn add_licenses(
    net: &Net,
    url: &Url,
    path: &str,
    signals: &mut Signals,
) -> Option<TdmOutcome> {
    let origin = format!("{}://{}", url.scheme(), url::host_key(url));
    let mut unasked = None;
    for (found, license) in signals.licenses.clone() {
        let terms = match url::parse(&license) {
            Some(l) => {
                let got = net.rsl(&l).await;
                unasked = unasked.or(not_asked(&got.outcome));
                got.doc
                    .as_ref()
                    .and_then(|d| d.terms_for(&origin, path).cloned())
            }
            None => None,
        };
        signals.rsl(&license, found, terms);
    }
    unasked
}
