//! robots.txt per RFC 9309, fetched once per origin per run and cached.
//!
//! Access results: 2xx is parsed (the first `max_robots_bytes`, cut at a line
//! end); 4xx allows all (429 is treated as unreachable); 5xx, a network failure
//! or a timeout disallows all; redirects are followed up to five hops, after
//! which the file counts as unavailable (allow all). Rules are matched by
//! `robotxt` (longest match, Allow wins ties, `*` and `$`) for our product
//! token, falling back to `*`. `Crawl-delay` raises the host's politeness gap
//! and `Sitemap:` lines are handed to discovery.
//!
//! A robots.txt unreachable because of a network failure refuses its host's
//! URLs under that failure's class (`dns`, `tls`, `timeout`, ...); one that
//! answered 5xx refuses them as `robots`.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header;

use super::fetch::BodyLimits;
use super::{FetchError, Net};
use crate::record::RobotsOutcome;
use crate::url::{self, Url};

/// Redirect hops followed for robots.txt (RFC 9309 asks for at least five).
const MAX_ROBOTS_REDIRECTS: usize = 5;

/// The robots.txt rules that apply to us on one origin.
#[derive(Debug, Clone)]
pub struct Robots {
    pub outcome: RobotsOutcome,
    /// `Crawl-delay` of our group (or `*`), uncapped.
    pub crawl_delay: Option<Duration>,
    /// `Sitemap:` URLs, normalised.
    pub sitemaps: Vec<Url>,
    /// xxh3 of the body as received (0 when there was none), for provenance.
    pub hash: u64,
    /// Bytes parsed.
    pub bytes: usize,
    /// Why robots.txt was unreachable (a network failure): the disallow-all
    /// outcome is then reported under that failure's class.
    pub error: Option<FetchError>,
    /// `Content-Signal` entries for our group (see [`crate::consent::content_signals`]).
    pub(crate) content_signals: Vec<crate::consent::ContentSignal>,
    /// `Content-Usage` rules for our group (see [`crate::consent::aipref`]).
    pub(crate) content_usage: crate::consent::UsageRules,
    /// RSL `License:` lines, as written (see [`crate::consent::rsl`]).
    pub licenses: Vec<String>,
    /// The body as parsed (empty when there was none): the provenance snapshot.
    pub body: Vec<u8>,
    /// Answered 304 to a conditional request: the body is the one an earlier
    /// run remembered (`state/doc_cache.json`).
    pub(crate) revalidated: bool,
    rules: robotxt::Robots,
}

impl Robots {
    /// Parse a robots.txt body for `agent` (a product token such as `scraper`).
    pub fn parse(body: &[u8], agent: &str, status: u16) -> Robots {
        let rules = robotxt::Robots::parse(body, agent);
        Robots {
            outcome: RobotsOutcome::Parsed(status),
            crawl_delay: rules.crawl_delay(),
            sitemaps: rules
                .sitemaps()
                .iter()
                .filter_map(|u| url::normalize(u.clone()))
                .collect(),
            hash: xxhash_rust::xxh3::xxh3_64(body),
            bytes: body.len(),
            error: None,
            content_signals: crate::consent::content_signals(body, agent),
            content_usage: crate::consent::UsageRules::parse(body, agent),
            licenses: crate::consent::rsl::license_lines(body),
            body: body.to_vec(),
            revalidated: false,
            rules,
        }
    }

    pub(crate) fn allow_all(status: u16) -> Robots {
        Robots::fixed(
            RobotsOutcome::AllowAll(status),
            robotxt::Robots::allow_all(),
        )
    }

    pub(crate) fn disallow_all(reason: impl Into<String>) -> Robots {
        Robots::fixed(
            RobotsOutcome::DisallowAll(reason.into()),
            robotxt::Robots::disallow_all(),
        )
    }

    /// A verdict that does not come from a parsed file.
    fn fixed(outcome: RobotsOutcome, rules: robotxt::Robots) -> Robots {
        Robots {
            outcome,
            crawl_delay: None,
            sitemaps: Vec::new(),
            hash: 0,
            bytes: 0,
            error: None,
            content_signals: Vec::new(),
            content_usage: crate::consent::UsageRules::default(),
            licenses: Vec::new(),
            body: Vec::new(),
            revalidated: false,
            rules,
        }
    }

    /// Unreachable because of a network failure: nothing allowed, and the
    /// refusal of every URL carries `error`'s class (`dns`, `tls`, `timeout`, ...).
    pub fn unreachable(error: FetchError) -> Robots {
        Robots {
            error: Some(error.clone()),
            ..Robots::disallow_all(error.class().as_str())
        }
    }

    /// The error for a URL these rules refuse: the network failure that made
    /// robots.txt unreachable, or [`FetchError::RobotsDisallowed`].
    pub fn refusal(&self, url: &Url) -> FetchError {
        self.error
            .clone()
            .unwrap_or_else(|| FetchError::RobotsDisallowed(url.clone()))
    }

    /// May we fetch `url` (its path and query)?
    pub fn allowed(&self, url: &Url) -> bool {
        match self.outcome {
            RobotsOutcome::DisallowAll(_) => false,
            RobotsOutcome::AllowAll(_) => true,
            RobotsOutcome::Parsed(_) => self.rules.is_url_allowed(url),
        }
    }
}

/// `scheme://host[:port]`: robots.txt applies per origin.
fn origin(url: &Url) -> String {
    format!("{}://{}", url.scheme(), url::host_key(url))
}

impl Net {
    /// The robots.txt rules for `url`'s origin. Fetched once per origin per
    /// run (concurrent callers share one fetch), through the politeness gate
    /// and counted as a request. A spent budget gives a disallow-all answer
    /// that is not cached.
    pub async fn robots(&self, url: &Url) -> Arc<Robots> {
        self.robots_for(url)
            .await
            .unwrap_or_else(|e| Arc::new(Robots::disallow_all(e.class().as_str())))
    }

    /// [`Net::robots`], but a spent budget, a rested host or a refused
    /// (private) address is an `Err` (and not cached), so that callers can
    /// report it as such.
    pub(crate) async fn robots_for(&self, url: &Url) -> Result<Arc<Robots>, FetchError> {
        let key = origin(url);
        let cell = {
            let mut map = self.inner.robots.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(key.clone()).or_default().clone()
        };
        cell.get_or_try_init(|| async {
            let robots = self.fetch_robots(url).await?;
            if let Some(d) = robots.crawl_delay {
                self.inner.gate.apply_crawl_delay(&url::host_key(url), d);
            }
            tracing::debug!(origin = %key, outcome = ?robots.outcome, delay = ?robots.crawl_delay, "robots: cached");
            Ok(Arc::new(robots))
        })
        .await
        .cloned()
    }

    /// Fetch and interpret one origin's robots.txt. `Err` only for outcomes
    /// that must not be cached (a spent budget, a rested host).
    async fn fetch_robots(&self, url: &Url) -> Result<Robots, FetchError> {
        let Some(mut current) = url::parse(&format!("{}/robots.txt", origin(url))) else {
            return Ok(Robots::disallow_all("bad origin"));
        };
        let limits = BodyLimits {
            raw: self.inner.limits.max_robots_bytes,
            decoded: self.inner.limits.max_robots_bytes,
            truncate: true,
        };
        let mut hops = 0;
        loop {
            let (headers, cached) = self.doc_request(&current, "text/plain,*/*;q=0.5");
            let hop = match self.send(&current, headers).await {
                Ok(h) => h,
                Err(
                    e @ (FetchError::Budget | FetchError::Rested | FetchError::PrivateAddress(_)),
                ) => {
                    return Err(e);
                }
                Err(e) => return Ok(Robots::unreachable(e)),
            };
            let status = hop.status;
            if !(200..300).contains(&status) {
                self.inner.gate.success(&url::host_key(&current));
            }
            if status == 304
                && let Some(c) = cached
            {
                hop.discard().await;
                tracing::debug!(url = %current, "robots: 304, the remembered file still holds");
                self.touch_doc(&current);
                let mut r = Robots::parse(c.body.as_bytes(), &self.inner.agent, c.status);
                r.revalidated = true;
                return Ok(r);
            }
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let next = hop
                    .headers
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|l| url::resolve(&current, l));
                hop.discard().await;
                hops += 1;
                match next {
                    Some(next) if hops <= MAX_ROBOTS_REDIRECTS => {
                        tracing::debug!(from = %current, to = %next, "robots: redirect");
                        current = next;
                        continue;
                    }
                    _ => return Ok(Robots::allow_all(status)),
                }
            }
            return Ok(match status {
                200..=299 => {
                    let headers = hop.headers.clone();
                    match self.read_body(hop, &current, &limits).await {
                        Ok((mut body, _)) => {
                            if body.len() as u64 >= limits.decoded {
                                // Cut mid-line: drop the partial last line.
                                let end =
                                    body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                                body.truncate(end);
                            }
                            self.remember_doc(&current, &headers, status, &body);
                            Robots::parse(&body, &self.inner.agent, status)
                        }
                        Err(e) => Robots::unreachable(e),
                    }
                }
                429 => Robots::disallow_all("429"),
                400..=499 => Robots::allow_all(status),
                _ => Robots::disallow_all(status.to_string()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RobotsAccess;

    fn u(s: &str) -> Url {
        url::parse(s).unwrap()
    }

    #[test]
    fn rules_table() {
        let txt = b"User-agent: *\nDisallow: /private\nAllow: /private/ok\nDisallow: /*.pdf$\n\
                    Disallow: /search?\nCrawl-delay: 2\nSitemap: https://a.test/sitemap.xml\n\n\
                    User-agent: otherbot\nDisallow: /\n";
        let r = Robots::parse(txt, "scraper", 200);
        let table = [
            ("https://a.test/", true),
            ("https://a.test/private", false),
            ("https://a.test/private/x", false),
            ("https://a.test/private/ok/page", true),
            ("https://a.test/doc.pdf", false),
            ("https://a.test/doc.pdf?x=1", true),
            ("https://a.test/search?q=1", false),
            ("https://a.test/search", true),
            ("https://a.test/robots.txt", true),
        ];
        for (url, want) in table {
            assert_eq!(r.allowed(&u(url)), want, "{url}");
        }
        assert_eq!(r.crawl_delay, Some(Duration::from_secs(2)));
        assert_eq!(r.sitemaps, vec![u("https://a.test/sitemap.xml")]);
        assert_ne!(r.hash, 0);
    }

    #[test]
    fn our_group_wins_over_star() {
        let txt = b"User-agent: *\nDisallow: /\n\nUser-agent: Scraper\nDisallow: /no\n";
        let r = Robots::parse(txt, "scraper", 200);
        assert!(r.allowed(&u("https://a.test/yes")));
        assert!(!r.allowed(&u("https://a.test/no")));
    }

    #[test]
    fn access_outcomes() {
        assert!(Robots::allow_all(404).allowed(&u("https://a.test/x")));
        assert!(!Robots::disallow_all("503").allowed(&u("https://a.test/x")));
    }

    /// The written form is the one Rust's `Debug` gave (older logs hold it),
    /// and reads back.
    #[test]
    fn outcomes_write_their_old_form_and_read_back() {
        for o in [
            RobotsOutcome::Parsed(200),
            RobotsOutcome::AllowAll(404),
            RobotsOutcome::DisallowAll("timeout".into()),
            RobotsOutcome::DisallowAll("bad origin".into()),
        ] {
            let v = serde_json::to_value(&o).unwrap();
            assert_eq!(v, serde_json::Value::String(format!("{o:?}")));
            assert_eq!(serde_json::from_value::<RobotsOutcome>(v).unwrap(), o);
        }
        for bad in ["Parsed", "Parsed(x)", "Other(1)", "DisallowAll(x)"] {
            assert!(bad.parse::<RobotsOutcome>().is_err(), "{bad}");
        }
        assert_eq!(
            RobotsOutcome::DisallowAll("dns".into()).access(),
            (RobotsAccess::Unreachable, "dns".to_string())
        );
    }
}
