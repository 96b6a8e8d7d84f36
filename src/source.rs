//! The configured sites (`config.yml`'s `sources:`) and the one index of
//! them: which URLs they cover ([`Sources::contains`]), which source a URL
//! belongs to ([`Sources::source_of`], for health), the sources on a host
//! ([`Sources::on_host`]) and the open scope's deny-list ([`denied`]). The
//! crawl's scope, the health tally and `probe` all ask this one index. Pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::url::{self, Url};

/// One site: exactly its host (with or without `www.`) and optional path prefix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub host: String,
    #[serde(default)]
    pub path: Option<String>,
    /// Pages, RSS/Atom/JSON feeds or sitemaps to start from. Empty means the host's home page.
    #[serde(default)]
    pub seeds: Vec<String>,
    /// Whether this source's pages are rendered in a browser; absent: the
    /// crawl-wide `crawl.render.mode` (see `crate::render`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<Render>,
}

/// When a page is rendered in headless Chromium before extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Render {
    /// Never: the static HTML only.
    Never,
    /// When the static read finds no article but the markup looks like an
    /// application shell, or `scraper probe` measured that rendering adds
    /// the story for this source.
    #[default]
    Auto,
    /// Every page of the source.
    Always,
}

impl Render {
    pub fn as_str(self) -> &'static str {
        match self {
            Render::Never => "never",
            Render::Auto => "auto",
            Render::Always => "always",
        }
    }
}

impl Source {
    /// The name a source goes by in health files and reports: its host plus
    /// its path, if any (`example.com/blog`).
    pub fn key(&self) -> String {
        match self.path.as_deref().map(|p| p.trim_end_matches('/')) {
            Some(p) if !p.is_empty() => format!("{}{p}", self.host.to_ascii_lowercase()),
            _ => self.host.to_ascii_lowercase(),
        }
    }

    /// `sources[i]` as `config.yml` must write it: a bare host, a path
    /// starting with `/`, absolute http(s) seeds.
    pub(crate) fn validate(&self, i: usize) -> Result<(), String> {
        let s = self;
        if s.host.is_empty() || s.host.contains('/') || s.host.contains(':') {
            return Err(format!(
                "sources[{i}].host: expected a bare host name such as `example.com`, got `{}`",
                s.host
            ));
        }
        if let Some(p) = &s.path
            && !p.starts_with('/')
        {
            return Err(format!(
                "sources[{i}].path: expected a path starting with `/`, got `{p}`"
            ));
        }
        for seed in &s.seeds {
            url::check_http_url(seed).map_err(|e| format!("sources[{i}].seeds: {e}"))?;
        }
        Ok(())
    }

    /// The entry as one line of `config.yml`'s `sources:` list, in the flow
    /// style the shipped file uses (`- {host: ..., path: ..., seeds: [...]}`).
    pub(crate) fn yaml_line(&self) -> String {
        let mut parts = vec![format!("host: {}", yaml_scalar(&self.host))];
        if let Some(p) = &self.path {
            parts.push(format!("path: {}", yaml_scalar(p)));
        }
        let seeds: Vec<String> = self.seeds.iter().map(|s| yaml_scalar(s)).collect();
        parts.push(format!("seeds: [{}]", seeds.join(", ")));
        if let Some(r) = self.render {
            parts.push(format!("render: {}", r.as_str()));
        }
        format!("- {{{}}}", parts.join(", "))
    }
}

/// A plain scalar when it is safe in a YAML flow collection, else double-quoted.
fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "./-_~%=&?+@:".contains(c))
        && !s.contains(": ")
        && !s.ends_with(':')
        && !s.starts_with(['-', '?', ':', '@', '%', '&']);
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// One covered prefix: domain without `www.`, path prefix or "/", and the
/// key of the configured source it comes from (`None` for a `--seed` host).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Covered {
    domain: String,
    path: String,
    key: Option<String>,
}

/// Which URLs the configured sources (and `--seed` hosts) cover, and which
/// source each URL belongs to.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The configured sources, longest path first (the most specific wins).
    listed: Vec<Covered>,
    /// Hosts added for `--seed` URLs: in scope, but no source of their own.
    added: Vec<Covered>,
    /// Configured seeds (normalised) by the key of the source that lists them.
    seeds: BTreeMap<String, String>,
    /// Hosts (and their subdomains) never fetched in open scope.
    deny: Vec<String>,
}

impl Sources {
    pub fn new(sources: &[Source]) -> Sources {
        let mut index = Sources::default();
        for s in sources {
            let key = s.key();
            let domain = url::domain(&s.host.to_ascii_lowercase()).to_string();
            let path = s.path.clone().unwrap_or_else(|| "/".to_string());
            index.listed.push(Covered {
                domain,
                path,
                key: Some(key.clone()),
            });
            for seed in s.seeds.iter().filter_map(|u| url::parse(u)) {
                index.seeds.entry(seed.to_string()).or_insert(key.clone());
            }
        }
        index
            .listed
            .sort_by(|a, b| b.path.len().cmp(&a.path.len()).then(a.cmp(b)));
        index
    }

    /// The scope of one host and path prefix (`probe`'s source).
    pub fn one(host: &str, path: Option<&str>) -> Sources {
        let mut s = Sources::default();
        s.add(host, path);
        s
    }

    /// The same index with the open scope's deny-list (`crawl.deny_hosts`).
    pub(crate) fn with_deny(mut self, deny_hosts: &[String]) -> Sources {
        self.deny = deny_hosts.to_vec();
        self
    }

    /// Add a host (and optional path prefix) to the scope, e.g. for `--seed`;
    /// it is covered but belongs to no source.
    pub fn add(&mut self, host: &str, path: Option<&str>) {
        let c = Covered {
            domain: url::domain(&host.to_ascii_lowercase()).to_string(),
            path: path.unwrap_or("/").to_string(),
            key: None,
        };
        if !self.added.contains(&c) {
            self.added.push(c);
        }
    }

    fn all(&self) -> impl Iterator<Item = &Covered> {
        self.listed.iter().chain(&self.added)
    }

    /// Exactly the host (with or without `www.`) and the path prefix; subdomains are out.
    pub fn contains(&self, u: &Url) -> bool {
        let Some(host) = u.host_str() else {
            return false;
        };
        let host = url::domain(host);
        self.all()
            .any(|c| c.domain == host && url::path_under(u.path(), &c.path))
    }

    /// Is the host listed at all (whatever the path)?
    pub(crate) fn has_host(&self, host: &str) -> bool {
        let host = url::domain(host);
        self.all().any(|c| c.domain == host)
    }

    /// The key of the source `u` belongs to: a configured seed belongs to the
    /// source that lists it (a feed may live on another host); any other URL
    /// to the most specific source whose host and path cover it.
    pub(crate) fn source_of(&self, u: &Url) -> Option<&str> {
        if let Some(k) = self.seeds.get(u.as_str()) {
            return Some(k);
        }
        let host = url::domain(u.host_str()?);
        self.listed
            .iter()
            .find(|c| c.domain == host && url::path_under(u.path(), &c.path))
            .and_then(|c| c.key.as_deref())
    }

    /// Sources on `host` with the path robots.txt must allow for each.
    pub(crate) fn on_host<'a>(
        &'a self,
        host: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let host = url::domain(host);
        self.listed
            .iter()
            .filter(move |c| c.domain == host)
            .filter_map(|c| Some((c.key.as_deref()?, c.path.as_str())))
    }

    /// Is `host` (or a domain above it) on this index's deny-list?
    pub fn denied(&self, host: &str) -> bool {
        denied(&self.deny, host)
    }
}

/// Is `host` (a port is ignored) or a domain above it on `deny_hosts`? The
/// one deny-list test, for the open scope's admission and its redirects.
pub fn denied(deny_hosts: &[String], host: &str) -> bool {
    let name = host.split(':').next().unwrap_or(host);
    deny_hosts
        .iter()
        .any(|listed| url::host_matches(name, listed))
}

/// A source for unit tests: `host`, an optional path prefix, its seeds.
#[cfg(test)]
pub(crate) fn src(host: &str, path: Option<&str>, seeds: &[&str]) -> Source {
    Source {
        host: host.into(),
        path: path.map(str::to_string),
        seeds: seeds.iter().map(|s| s.to_string()).collect(),
        render: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_map_to_the_most_specific_source_and_seeds_to_their_own() {
        let index = Sources::new(&[
            src("www.ex.test", None, &[]),
            src(
                "ex.test",
                Some("/blog/"),
                &["http://feeds.other.test/ex.xml"],
            ),
        ]);
        let of = |u: &str| index.source_of(&url::parse(u).unwrap()).map(str::to_string);
        assert_eq!(of("http://ex.test/a").as_deref(), Some("www.ex.test"));
        assert_eq!(
            of("http://www.ex.test/blog/x").as_deref(),
            Some("ex.test/blog")
        );
        assert_eq!(
            of("http://ex.test/blogroll").as_deref(),
            Some("www.ex.test")
        );
        assert_eq!(
            of("http://feeds.other.test/ex.xml").as_deref(),
            Some("ex.test/blog")
        );
        assert_eq!(of("http://feeds.other.test/other.xml"), None);
        assert_eq!(index.on_host("ex.test").count(), 2);
    }

    #[test]
    fn added_hosts_are_in_scope_but_belong_to_no_source() {
        let mut index = Sources::new(&[src("news.test", Some("/tech"), &[])]);
        index.add("Seed.Test", None);
        let u = |s: &str| url::parse(s).unwrap();
        assert!(index.contains(&u("http://www.news.test/tech/a")));
        assert!(!index.contains(&u("http://news.test/sport/a")));
        assert!(index.has_host("news.test"));
        assert!(index.contains(&u("http://seed.test/any")));
        assert_eq!(index.source_of(&u("http://seed.test/any")), None);
        assert_eq!(index.on_host("seed.test").count(), 0);
        assert!(!index.contains(&u("http://sub.news.test/tech/a")));
    }

    #[test]
    fn the_deny_list_covers_subdomains_and_ignores_ports() {
        let index = Sources::new(&[]).with_deny(&["social.test".to_string()]);
        assert!(index.denied("social.test"));
        assert!(index.denied("m.social.test:8080"));
        assert!(!index.denied("notsocial.test"));
    }

    #[test]
    fn scope_rules() {
        let sources = vec![
            Source {
                host: "www.example.com".into(),
                path: None,
                seeds: vec![],
                render: None,
            },
            Source {
                host: "lab.org".into(),
                path: Some("/blog".into()),
                seeds: vec![],
                render: None,
            },
        ];
        let scope = Sources::new(&sources);
        let table = [
            ("https://example.com/x", true),
            ("https://www.example.com/x", true),
            ("https://shop.example.com/x", false),
            ("https://lab.org/blog/post", true),
            ("https://lab.org/blog", true),
            ("https://lab.org/blogroll", false),
            ("https://lab.org/about", false),
            ("https://www.lab.org/blog/a", true),
            ("https://other.com/", false),
        ];
        for (u, want) in table {
            assert_eq!(scope.contains(&url::parse(u).unwrap()), want, "{u}");
        }
    }
}
