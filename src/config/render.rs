//! `crawl.render`: when and how pages are rendered in headless Chromium
//! (the renderer is `crate::render`; a source's own `render:` overrides `mode`).

use serde::{Deserialize, Serialize};

use super::Span;
use crate::source::Render as Mode;

/// `crawl.render`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Render {
    /// The crawl-wide default: `never`, `auto` or `always`.
    pub mode: Mode,
    /// The browser: a name looked up on PATH, or a path.
    pub browser: String,
    /// Pages rendered at once.
    pub tabs: usize,
    /// Longest one page may take to render.
    pub page_timeout: Span,
    /// Resident bytes of the browser's processes past which it is restarted.
    pub max_memory: u64,
}

impl Default for Render {
    fn default() -> Render {
        let o = crate::render::Options::default();
        Render {
            mode: Mode::Auto,
            browser: o.browser,
            tabs: o.tabs,
            page_timeout: Span(o.page_timeout),
            max_memory: o.max_memory,
        }
    }
}

impl Render {
    pub(super) fn validate(&self) -> Result<(), String> {
        if self.tabs == 0 || self.tabs > 16 {
            return Err(format!(
                "crawl.render.tabs: expected 1 to 16, got {}",
                self.tabs
            ));
        }
        if self.page_timeout.0 < std::time::Duration::from_secs(1) {
            return Err("crawl.render.page_timeout: expected at least 1s".into());
        }
        if self.max_memory < 64 << 20 {
            return Err("crawl.render.max_memory: expected at least 67108864 (64 MiB)".into());
        }
        if self.browser.trim().is_empty() {
            return Err("crawl.render.browser: expected a binary name or path".into());
        }
        Ok(())
    }
}

impl From<&Render> for crate::render::Options {
    fn from(r: &Render) -> crate::render::Options {
        crate::render::Options {
            browser: r.browser.clone(),
            tabs: r.tabs,
            page_timeout: r.page_timeout.0,
            max_memory: r.max_memory,
        }
    }
}
