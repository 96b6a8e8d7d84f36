//! The publishers' policy documents: TDMRep's `/.well-known/tdmrep.json`,
//! fetched once per origin per run, and RSL licences (`application/rsl+xml`),
//! fetched once per licence URL per run. Both are cached like robots.txt:
//! asked through the politeness gate, counted as requests, only where
//! robots.txt allows the path, and remembered across runs (reused for
//! `tdmrep_refresh_days`). A 2xx that parses gives rules
//! ([`crate::consent::parse_tdmrep`], [`crate::consent::rsl::parse_rsl`]); a
//! 404, any other status, a network failure or a document that does not
//! parse give none, which is no reservation known. Redirects are followed
//! within the origin (three hops).

use std::sync::Arc;

use reqwest::header;

use super::fetch::BodyLimits;
use super::{FetchError, Net};
use crate::consent::rsl::{self, RslDoc};
use crate::consent::{self, TdmRule};
use crate::record::TdmOutcome;
use crate::url::{self, Url};

/// Redirect hops followed for tdmrep.json.
const MAX_HOPS: usize = 3;

/// One origin's `tdmrep.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TdmRep {
    /// How it was obtained (printed as `200`, `404`, `timeout`, `robots`,
    /// `malformed: ...`; `budget` and `rested`, not cached, when it could not
    /// be asked for).
    pub outcome: TdmOutcome,
    pub rules: Vec<TdmRule>,
}

impl TdmRep {
    fn none(outcome: TdmOutcome) -> TdmRep {
        TdmRep {
            outcome,
            rules: Vec::new(),
        }
    }
}

/// One RSL licence document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RslLicense {
    /// How it was obtained (as for [`TdmRep::outcome`]).
    pub outcome: TdmOutcome,
    /// The document, when it was read.
    pub doc: Option<RslDoc>,
}

/// A policy document kind: where it is cached and how it parses.
#[derive(Clone, Copy)]
enum DocKind {
    TdmRep,
    Rsl,
}

impl DocKind {
    fn name(self) -> &'static str {
        match self {
            DocKind::TdmRep => "tdmrep.json",
            DocKind::Rsl => "RSL licence",
        }
    }

    fn accept(self) -> &'static str {
        match self {
            DocKind::TdmRep => "application/json,*/*;q=0.5",
            DocKind::Rsl => "application/rsl+xml,application/xml;q=0.9,*/*;q=0.5",
        }
    }
}

/// A parsed policy document.
enum Parsed {
    TdmRep(Vec<TdmRule>),
    Rsl(RslDoc),
}

fn parse_doc(kind: DocKind, body: &[u8]) -> Result<Parsed, String> {
    match kind {
        DocKind::TdmRep => consent::parse_tdmrep(body).map(Parsed::TdmRep),
        DocKind::Rsl => rsl::parse_rsl(body).map(Parsed::Rsl),
    }
}

/// A fetched policy document: how it was obtained, and what it said.
type Got = (TdmOutcome, Option<Parsed>);

fn tdm_of((outcome, parsed): Got) -> TdmRep {
    TdmRep {
        outcome,
        rules: match parsed {
            Some(Parsed::TdmRep(r)) => r,
            _ => Vec::new(),
        },
    }
}

fn rsl_of((outcome, parsed): Got) -> RslLicense {
    RslLicense {
        outcome,
        doc: match parsed {
            Some(Parsed::Rsl(d)) => Some(d),
            _ => None,
        },
    }
}

/// The outcome of a request that failed: not asked (budget spent, host
/// rested) or a failure's class.
fn failed(e: &FetchError) -> TdmOutcome {
    match e {
        FetchError::Budget => TdmOutcome::Budget,
        FetchError::Rested => TdmOutcome::Rested,
        e => TdmOutcome::Failed(e.class()),
    }
}

fn well_known(url: &Url) -> Option<Url> {
    url::parse(&format!(
        "{}://{}/.well-known/tdmrep.json",
        url.scheme(),
        url::host_key(url)
    ))
}

impl Net {
    /// Our robots.txt product token (`scraper` from `scraper/0.1 (+...)`).
    pub fn agent(&self) -> &str {
        &self.inner.agent
    }

    /// The use the crawl makes of the pages (`crawl.ai_usage`).
    pub fn usage(&self) -> crate::consent::AiUsage {
        self.inner.usage
    }

    /// The `tdmrep.json` rules of `url`'s origin (fetched at most once per
    /// origin per run; concurrent callers share one fetch). A spent budget or
    /// a rested host gives no rules, not cached.
    pub async fn tdmrep(&self, url: &Url) -> Arc<TdmRep> {
        let Some(target) = well_known(url) else {
            return Arc::new(TdmRep::none(TdmOutcome::BadOrigin));
        };
        let key = target.as_str().to_string();
        let cell = {
            let mut map = self.inner.tdmrep.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(key.clone()).or_default().clone()
        };
        if let Some(got) = self.fresh_doc(DocKind::TdmRep, &target) {
            tracing::debug!(url = %key, outcome = %got.0, "tdmrep.json: answered recently, reused without asking");
            return Arc::new(tdm_of(got));
        }
        let got = cell
            .get_or_try_init(|| async {
                let t = tdm_of(self.fetch_doc(DocKind::TdmRep, target.clone()).await?);
                tracing::debug!(url = %key, outcome = %t.outcome, rules = t.rules.len(), "tdmrep.json: cached");
                Ok::<_, FetchError>(Arc::new(t))
            })
            .await;
        match got {
            Ok(t) => t.clone(),
            Err(e) => Arc::new(TdmRep::none(failed(&e))),
        }
    }

    /// The RSL licence at `license` (fetched at most once per URL per run,
    /// as tdmrep.json is; a spent budget or a rested host gives none, not cached).
    pub async fn rsl(&self, license: &Url) -> Arc<RslLicense> {
        let key = license.as_str().to_string();
        let cell = {
            let mut map = self.inner.rsl.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(key.clone()).or_default().clone()
        };
        if let Some(got) = self.fresh_doc(DocKind::Rsl, license) {
            return Arc::new(rsl_of(got));
        }
        let got = cell
            .get_or_try_init(|| async {
                let l = rsl_of(self.fetch_doc(DocKind::Rsl, license.clone()).await?);
                tracing::debug!(url = %key, outcome = %l.outcome, read = l.doc.is_some(), "RSL licence: cached");
                Ok::<_, FetchError>(Arc::new(l))
            })
            .await;
        match got {
            Ok(l) => l.clone(),
            Err(e) => Arc::new(RslLicense {
                outcome: failed(&e),
                doc: None,
            }),
        }
    }

    /// The remembered answer for `url` when it is at most
    /// `tdmrep_refresh_days` old: what a 2xx said, nothing for a 4xx.
    fn fresh_doc(&self, kind: DocKind, url: &Url) -> Option<Got> {
        let days = self.inner.limits.tdmrep_refresh_days;
        let today = self.inner.today.load(std::sync::atomic::Ordering::SeqCst) as u32;
        let doc = self
            .cached_doc(url)
            .filter(|d| days > 0 && d.day.saturating_add(days) > today)?;
        match doc.status {
            200..=299 => parse_doc(kind, doc.body.as_bytes())
                .ok()
                .map(|p| (TdmOutcome::Status(doc.status), Some(p))),
            400..=499 if doc.status != 429 => Some((TdmOutcome::Status(doc.status), None)),
            _ => None,
        }
    }

    async fn fetch_doc(&self, kind: DocKind, mut current: Url) -> Result<Got, FetchError> {
        let origin = url::host_key(&current);
        let limits = BodyLimits {
            raw: self.inner.limits.max_robots_bytes,
            decoded: self.inner.limits.max_robots_bytes,
            truncate: false,
        };
        for _ in 0..=MAX_HOPS {
            let robots = self.robots_for(&current).await?;
            if !robots.allowed(&current) {
                return Ok((TdmOutcome::Robots, None));
            }
            let (headers, cached) = self.doc_request(&current, kind.accept());
            let hop = match self.send(&current, headers).await {
                Ok(h) => h,
                Err(
                    e @ (FetchError::Budget | FetchError::Rested | FetchError::PrivateAddress(_)),
                ) => return Err(e),
                Err(e) => return Ok((failed(&e), None)),
            };
            let status = hop.status;
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let next = hop
                    .headers
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|l| url::resolve(&current, l))
                    .filter(|n| url::host_key(n) == origin);
                hop.discard().await;
                self.inner.gate.success(&origin);
                match next {
                    Some(n) => {
                        current = n;
                        continue;
                    }
                    None => return Ok((TdmOutcome::Status(status), None)),
                }
            }
            if status == 304
                && let Some(c) = cached
            {
                hop.discard().await;
                self.inner.gate.success(&origin);
                self.touch_doc(&current);
                tracing::debug!(url = %current, doc = kind.name(), "304, the remembered document still holds");
                return Ok(match parse_doc(kind, c.body.as_bytes()) {
                    Ok(p) => (TdmOutcome::Status(304), Some(p)),
                    Err(e) => (TdmOutcome::Malformed(e), None),
                });
            }
            if !(200..300).contains(&status) {
                hop.discard().await;
                self.inner.gate.success(&origin);
                if (400..500).contains(&status) && status != 429 {
                    // No file (or none for us): remembered, so it is not asked every run.
                    self.remember_absent(&current, status);
                }
                return Ok((TdmOutcome::Status(status), None));
            }
            return Ok(self.read_doc(kind, hop, &current, &limits).await);
        }
        Ok((TdmOutcome::TooManyRedirects, None))
    }

    /// A 2xx answer's body: what it says (the document is remembered for
    /// the next runs), or why it said nothing.
    async fn read_doc(
        &self,
        kind: DocKind,
        hop: super::fetch::Hop,
        current: &Url,
        limits: &BodyLimits,
    ) -> Got {
        let (status, headers) = (hop.status, hop.headers.clone());
        match self.read_body(hop, current, limits).await {
            Ok((body, _)) => match parse_doc(kind, &body) {
                Ok(p) => {
                    self.remember_doc(current, &headers, status, &body);
                    (TdmOutcome::Status(status), Some(p))
                }
                Err(e) => {
                    tracing::debug!(url = %current, doc = kind.name(), error = %e, "unreadable");
                    (TdmOutcome::Malformed(e), None)
                }
            },
            Err(e) => (failed(&e), None),
        }
    }
}
