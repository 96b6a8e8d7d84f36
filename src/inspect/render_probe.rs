//! `probe`'s rendering comparison (the seed crawler's "stage 0"): the pages
//! the probe sampled are read as served and as a browser renders them
//! (`crate::render`, every request through the probe's own `Net`, so robots,
//! gap and `--max-requests` hold), and the two readings compared. The
//! verdict says which strategy the source needs and why; with a data folder
//! it is remembered in `data/state/render_verdicts.json`, where a crawl
//! under `render: auto` reads it.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::config::Config;
use crate::net::Net;
use crate::relevance::Rule;
use crate::render::verdicts::{Verdict, Verdicts};
use crate::render::{Doc, Renderer};
use crate::url::Url;

/// Pages compared at most (each costs a render).
pub(crate) const MAX_COMPARED: usize = 3;

/// A sampled page as the probe fetched it.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    pub url: Url,
    pub body: Vec<u8>,
    pub content_type: Option<String>,
    pub is_article: bool,
    pub text_chars: u64,
}

/// One page read both ways.
#[derive(Debug, Clone, Serialize)]
pub struct Compared {
    pub url: String,
    pub static_article: bool,
    pub static_chars: u64,
    pub rendered_article: bool,
    pub rendered_chars: u64,
    /// Rendering failed: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub render_ms: u64,
    /// Requests the browser made that the probe fetched.
    pub requests: u64,
}

impl Compared {
    /// Rendering adds the story: an article only once rendered, or half as
    /// much text again (and at least 500 characters more).
    pub fn gains(&self) -> bool {
        self.error.is_none()
            && ((!self.static_article && self.rendered_article)
                || (self.rendered_chars >= self.static_chars * 3 / 2
                    && self.rendered_chars >= self.static_chars + 500))
    }

    /// Rendering loses the story the static read had.
    pub fn loses(&self) -> bool {
        self.error.is_none() && self.static_article && !self.rendered_article
    }
}

/// The comparison and its verdict.
#[derive(Debug, Clone, Serialize, Default)]
pub struct RenderReport {
    pub compared: Vec<Compared>,
    /// `Some(true)`: render this source; `Some(false)`: the static HTML
    /// holds the story; `None`: not measured (no browser, no page).
    pub recommended: Option<bool>,
    pub reason: String,
    /// Where the verdict was remembered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remembered_in: Option<String>,
}

/// Render each fetched page and compare.
pub(crate) async fn compare(
    config: &Config,
    net: &Net,
    rule: &Rule,
    today: chrono::NaiveDate,
    pages: &[Fetched],
) -> RenderReport {
    let mut report = RenderReport::default();
    if pages.is_empty() {
        report.reason = "no sampled page could be read: rendering not compared".into();
        return report;
    }
    let renderer = match Renderer::new((&config.crawl.render).into()) {
        Ok(r) => r,
        Err(e) => {
            report.reason = format!("rendering not compared: {e}");
            return report;
        }
    };
    // Up to `crawl.render.tabs` pages at once, through the one browser.
    let runs = pages
        .iter()
        .take(MAX_COMPARED)
        .map(|f| compare_one(&renderer, net, rule, today, f));
    report.compared = futures_util::future::join_all(runs).await;
    renderer.shutdown().await;
    let (recommended, reason) = judge(&report.compared);
    report.recommended = recommended;
    report.reason = reason;
    report
}

/// One page read both ways.
async fn compare_one(
    renderer: &Renderer,
    net: &Net,
    rule: &Rule,
    today: chrono::NaiveDate,
    f: &Fetched,
) -> Compared {
    let doc = Doc {
        url: f.url.clone(),
        body: Arc::new(f.body.clone()),
        content_type: f.content_type.clone(),
    };
    let mut c = Compared {
        url: f.url.to_string(),
        static_article: f.is_article,
        static_chars: f.text_chars,
        rendered_article: false,
        rendered_chars: 0,
        error: None,
        render_ms: 0,
        requests: 0,
    };
    match renderer.render(net, doc).await {
        Ok(r) => {
            let page = crate::extract::extract(
                r.html.as_bytes(),
                Some("utf-8"),
                Some(&f.url),
                rule,
                today,
            );
            c.rendered_article = page.is_article;
            c.rendered_chars = page.text.chars().count() as u64;
            c.render_ms = r.wall.as_millis() as u64;
            c.requests = r.requests.answered;
        }
        Err(e) => c.error = Some(e.to_string()),
    }
    c
}

/// The verdict in a word and in words (pure).
pub(crate) fn judge(compared: &[Compared]) -> (Option<bool>, String) {
    let ok: Vec<&Compared> = compared.iter().filter(|c| c.error.is_none()).collect();
    if ok.is_empty() {
        return (
            None,
            "rendering failed on every compared page: no verdict".into(),
        );
    }
    let gained = ok.iter().filter(|c| c.gains()).count();
    let lost = ok.iter().filter(|c| c.loses()).count();
    let median = |f: fn(&Compared) -> u64| {
        let mut v: Vec<u64> = ok.iter().map(|c| f(c)).collect();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let (s, r) = (median(|c| c.static_chars), median(|c| c.rendered_chars));
    let render = gained * 2 > ok.len() && lost <= gained;
    let reason = if render {
        format!(
            "render: the story appears only after scripts run on {gained} of {} compared pages (median text {s} characters as served, {r} rendered)",
            ok.len()
        )
    } else {
        format!(
            "static: the HTML as served already holds the story ({gained} of {} compared pages gain from rendering, {lost} lose; median text {s} characters as served, {r} rendered)",
            ok.len()
        )
    };
    (Some(render), reason)
}

/// Remember the verdict for the source `key` in `data/state/`.
pub(crate) fn remember(
    data: &Path,
    key: &str,
    report: &mut RenderReport,
    today: chrono::NaiveDate,
) -> anyhow::Result<()> {
    let Some(render) = report.recommended else {
        return Ok(());
    };
    let state = data.join("state");
    let mut all = Verdicts::load(&state);
    let ok: Vec<&Compared> = report
        .compared
        .iter()
        .filter(|c| c.error.is_none())
        .collect();
    let mid = |f: fn(&Compared) -> u64| {
        let mut v: Vec<u64> = ok.iter().map(|c| f(c)).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    all.sources.insert(
        key.to_string(),
        Verdict {
            render,
            day: today.format("%Y-%m-%d").to_string(),
            compared: ok.len() as u64,
            gained: ok.iter().filter(|c| c.gains()).count() as u64,
            static_chars: mid(|c| c.static_chars),
            rendered_chars: mid(|c| c.rendered_chars),
            reason: report.reason.clone(),
        },
    );
    all.save(&state)?;
    report.remembered_in = Some(
        state
            .join(crate::render::verdicts::FILE)
            .display()
            .to_string(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(sa: bool, sc: u64, ra: bool, rc: u64) -> Compared {
        Compared {
            url: String::new(),
            static_article: sa,
            static_chars: sc,
            rendered_article: ra,
            rendered_chars: rc,
            error: None,
            render_ms: 0,
            requests: 0,
        }
    }

    #[test]
    fn rendering_is_recommended_only_when_it_adds_the_story() {
        let shells = [c(false, 0, true, 2000), c(false, 40, true, 1800)];
        assert_eq!(judge(&shells).0, Some(true));
        let same = [c(true, 2000, true, 2010), c(true, 1500, true, 1500)];
        let (v, why) = judge(&same);
        assert_eq!(v, Some(false));
        assert!(why.starts_with("static"), "{why}");
        // Lazy paragraphs: an article either way, but far more text rendered.
        let lazy = [c(true, 700, true, 2400)];
        assert_eq!(judge(&lazy).0, Some(true));
        // One page of three gains: not enough.
        let one = [
            c(false, 0, true, 2000),
            c(true, 900, true, 900),
            c(true, 800, true, 810),
        ];
        assert_eq!(judge(&one).0, Some(false));
        let mut failed = c(false, 0, false, 0);
        failed.error = Some("timeout".into());
        assert_eq!(judge(&[failed]).0, None);
    }
}
