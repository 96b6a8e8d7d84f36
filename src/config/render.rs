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
    /// Pages rendered at once (checked as it is read, so an error names its line).
    #[serde(deserialize_with = "tabs")]
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

fn tabs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if n == 0 || n > 16 {
        return Err(serde::de::Error::custom(format!(
            "crawl.render.tabs: expected 1 to 16, got {n}"
        )));
    }
    Ok(n)
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{Config, RenderMode};

    #[test]
    fn render_settings_and_modes_parse_and_bad_values_name_their_line() {
        let text = "sources:\n  - {host: a.test, render: always}\n  - {host: b.test}\ncrawl:\n  render:\n    mode: never\n    tabs: 3\n";
        let c = Config::parse(text, Path::new("c.yml")).unwrap();
        assert_eq!(c.sources[0].render, Some(RenderMode::Always));
        assert_eq!(c.sources[1].render, None);
        assert_eq!(c.crawl.render.mode, RenderMode::Never);
        assert_eq!(c.crawl.render.tabs, 3);
        assert_eq!(Config::default().crawl.render.mode, RenderMode::Auto);
        for (bad, line, want) in [
            (
                "sources:\n  - {host: a.test, render: sometimes}\n",
                "2",
                "sometimes",
            ),
            ("crawl:\n  render:\n    mode: maybe\n", "3", "maybe"),
            (
                "crawl:\n  render:\n\n    tabs: 0\n",
                "4",
                "crawl.render.tabs",
            ),
            ("crawl:\n  render:\n    tab: 2\n", "3", "tab"),
        ] {
            let err = Config::parse(bad, Path::new("c.yml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("c.yml") && err.contains(want), "{bad}: {err}");
            assert!(
                err.contains(&format!("line {line}")) || err.contains(&format!("{line}:")),
                "{bad}: no line {line} in {err}"
            );
        }
        let err = Config::parse(
            "crawl:\n  render:\n    max_memory: 1000\n",
            Path::new("c.yml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("crawl.render.max_memory"), "{err}");
    }
}
