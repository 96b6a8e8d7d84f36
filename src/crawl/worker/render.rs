//! The crawl's side of rendering (`crate::render`): which pages are
//! rendered, and the worker's one step after the static parse. A page is
//! rendered when its source's mode (`sources[].render`, else
//! `crawl.render.mode`) is `always`, or `auto` and either the probe's
//! remembered verdict says rendering adds the story for the source, or the
//! static read found no article in markup that looks like an application
//! shell. The rendered DOM is extracted like a fetched page; it replaces the
//! static reading unless it has less of a story. With archiving on, the
//! WARC keeps the rendered DOM as a `conversion` record beside the response.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::{Body, Ctx, Job, Meta};
use crate::config::{Archive, Config, RenderMode};
use crate::extract::{self, Page};
use crate::net::{Response, Wire};
use crate::render::verdicts::Verdicts;
use crate::render::{Doc, RenderError, Renderer};
use crate::url::Url;

/// Which pages are rendered, and the renderer.
pub struct Rendering {
    pub renderer: Renderer,
    default: RenderMode,
    /// Sources with a `render:` of their own, by key.
    sources: HashMap<String, RenderMode>,
    verdicts: Verdicts,
}

impl std::fmt::Debug for Rendering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rendering")
            .field("default", &self.default)
            .finish()
    }
}

/// What rendering one page cost (on the page's [`Meta`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderNote {
    /// The rendered DOM was read (`false`: rendering failed; the static page stands).
    pub ok: bool,
    /// Its reading replaced the static one (it had no less of a story).
    pub kept: bool,
    pub wall: Duration,
    /// Requests the browser made that the crawler fetched.
    pub requests: u64,
}

impl Rendering {
    /// `None` when no page can be rendered: every mode is `never`, or no
    /// browser is installed and nothing asks for `always` (logged). A missing
    /// browser when a source or the crawl asks for `always` is an error
    /// naming what to install.
    pub(crate) fn setup(
        config: &Config,
        state_dir: &std::path::Path,
    ) -> anyhow::Result<Option<Rendering>> {
        let default = config.crawl.render.mode;
        let sources: HashMap<String, RenderMode> = config
            .sources
            .iter()
            .filter_map(|s| s.render.map(|m| (s.key(), m)))
            .collect();
        let modes = || std::iter::once(default).chain(sources.values().copied());
        if modes().all(|m| m == RenderMode::Never) {
            return Ok(None);
        }
        let renderer = match Renderer::new((&config.crawl.render).into()) {
            Ok(r) => r,
            Err(e) if modes().any(|m| m == RenderMode::Always) => {
                anyhow::bail!("a source asks for `render: always`: {e}")
            }
            Err(e) => {
                tracing::warn!(error = %e, "pages are not rendered (render: auto)");
                return Ok(None);
            }
        };
        Ok(Some(Rendering {
            renderer,
            default,
            sources,
            verdicts: Verdicts::load(state_dir),
        }))
    }

    /// Why `url` is rendered after the static read gave `page` from `html`, or `None`.
    pub(crate) fn wants(
        &self,
        ctx: &Ctx,
        url: &Url,
        page: &Page,
        html: &[u8],
    ) -> Option<&'static str> {
        let source = ctx.scope.source_of(url);
        let mode = source
            .and_then(|k| self.sources.get(k).copied())
            .unwrap_or(self.default);
        let probed = source.is_some_and(|k| self.verdicts.says_render(k));
        decide(
            mode,
            probed,
            page.is_article,
            page.text.chars().count(),
            html,
        )
    }
}

/// The rule itself (pure): `probed` says the probe's verdict for the page's
/// source is `render`. The shell test is made only when it can decide.
fn decide(
    mode: RenderMode,
    probed: bool,
    is_article: bool,
    text_chars: usize,
    html: &[u8],
) -> Option<&'static str> {
    match mode {
        RenderMode::Never => None,
        RenderMode::Always => Some("render: always"),
        RenderMode::Auto if probed => Some("the probe found that rendering adds the story here"),
        RenderMode::Auto if is_article => None,
        RenderMode::Auto => crate::render::shell::shell_reason(html, text_chars),
    }
}

/// The worker's step after the static parse: render the page when it is
/// wanted and return the better reading. `resp` and `wire` are the fetched
/// answer (its body is the document the browser is given).
pub(crate) async fn after_parse(
    ctx: &Arc<Ctx>,
    job: &Job,
    meta: &mut Meta,
    body: Body,
    resp: Response,
    wire: Option<Box<Wire>>,
) -> Body {
    let (Some(rendering), Body::Page(page)) = (ctx.render.as_ref(), &body) else {
        return body;
    };
    let Some(why) = rendering.wants(ctx, &resp.url, page, &resp.body) else {
        return body;
    };
    tracing::debug!(url = %resp.url, why, "rendering");
    // The body's lease on the memory budget is held until the DOM is read.
    let _lease = resp.body_lease.clone();
    let doc = Doc {
        url: resp.url.clone(),
        body: Arc::new(resp.body),
        content_type: resp
            .headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.clone()),
    };
    let rendered = rendering.renderer.render(&ctx.net, doc.clone()).await;
    let r = match rendered {
        Ok(r) => r,
        Err(e) => {
            note_failure(&resp.url, job, &e);
            meta.rendered = Some(RenderNote {
                ok: false,
                kept: false,
                wall: Duration::ZERO,
                requests: 0,
            });
            return body;
        }
    };
    let mut note = RenderNote {
        ok: true,
        kept: false,
        wall: r.wall,
        requests: r.requests.answered,
    };
    let better = extract_rendered(ctx, &doc.url, r.html.clone(), page).await;
    note.kept = better.is_some();
    meta.rendered = Some(note);
    let Some(better) = better else {
        return body;
    };
    archive(ctx, meta, &better, &doc, wire, &r.html);
    Body::Page(Box::new(better))
}

fn note_failure(url: &Url, job: &Job, e: &RenderError) {
    tracing::warn!(%url, host = %job.host, error = %e, "rendering failed; the static page stands");
}

/// The rendered DOM through the extractor (on the blocking pool, in a parse
/// slot); `None` when it has less of a story than the static reading.
async fn extract_rendered(
    ctx: &Arc<Ctx>,
    url: &Url,
    html: String,
    static_page: &Page,
) -> Option<Page> {
    let _slot = ctx.parses.acquire(html.len()).await;
    let (c, u) = (ctx.clone(), url.clone());
    let page = tokio::task::spawn_blocking(move || {
        extract::extract(html.as_bytes(), Some("utf-8"), Some(&u), &c.rule, c.today)
    })
    .await
    .ok()?;
    let rank = |p: &Page| (p.is_article, p.text.len());
    (rank(&page) >= rank(static_page)).then_some(page)
}

/// Under `crawl.archive`, the response (as fetched) and the rendered DOM
/// beside it, when the rendered page is one the archive keeps.
fn archive(
    ctx: &Ctx,
    meta: &mut Meta,
    page: &Page,
    doc: &Doc,
    wire: Option<Box<Wire>>,
    html: &str,
) {
    let keep = match ctx.archive {
        Archive::None => false,
        Archive::All => true,
        Archive::Articles => page.is_article && page.relevance.relevant,
    };
    if !keep || super::noarchive(page, &meta.x_robots_tag) {
        meta.captured = None;
        return;
    }
    if meta.captured.is_none()
        && let Some(w) = wire
    {
        meta.captured = Some(Box::new(crate::store::warc::capture(
            doc.url.as_str(),
            &w,
            &doc.body,
        )));
    }
    if let Some(c) = meta.captured.as_mut() {
        crate::store::warc::add_rendered(c, html.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_pages_are_rendered() {
        let shell =
            br#"<html><body><div id="root"></div><script src="/app.js"></script></body></html>"#;
        let plain = b"<html><body><h1>About</h1><p>Who we are.</p></body></html>";
        use RenderMode::{Always, Auto, Never};
        assert!(decide(Auto, false, false, 0, shell).is_some());
        assert!(decide(Auto, false, false, 20, plain).is_none());
        assert!(
            decide(Auto, false, true, 0, shell).is_none(),
            "an article as served"
        );
        assert!(
            decide(Auto, true, true, 2000, plain).is_some(),
            "the probe's verdict"
        );
        assert!(decide(Always, false, true, 2000, plain).is_some());
        assert!(decide(Never, true, false, 0, shell).is_none());
    }
}
