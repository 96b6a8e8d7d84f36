//! TDMRep's `/.well-known/tdmrep.json`, fetched once per origin per run and
//! cached, like robots.txt: through the politeness gate, counted as a request,
//! and only where robots.txt allows the path. A 2xx JSON array gives rules
//! ([`crate::consent::parse_tdmrep`]); a 404, any other status, a network
//! failure or a file that does not parse give no rules, which is no
//! reservation known. Redirects are followed within the origin (three hops).

use std::sync::Arc;

use reqwest::header;

use super::fetch::BodyLimits;
use super::{FetchError, Net};
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
        if let Some(t) = self.fresh_tdmrep(&target) {
            tracing::debug!(url = %key, outcome = %t.outcome, "tdmrep.json: answered recently, reused without asking");
            return Arc::new(t);
        }
        let got = cell
            .get_or_try_init(|| async {
                let t = self.fetch_tdmrep(target.clone()).await?;
                tracing::debug!(url = %key, outcome = %t.outcome, rules = t.rules.len(), "tdmrep.json: cached");
                Ok::<_, FetchError>(Arc::new(t))
            })
            .await;
        match got {
            Ok(t) => t.clone(),
            Err(e) => Arc::new(TdmRep::none(failed(&e))),
        }
    }

    /// The remembered answer for `url` when it is at most
    /// `tdmrep_refresh_days` old: the rules of a 2xx, none for a 4xx.
    fn fresh_tdmrep(&self, url: &Url) -> Option<TdmRep> {
        let days = self.inner.limits.tdmrep_refresh_days;
        let today = self.inner.today.load(std::sync::atomic::Ordering::SeqCst) as u32;
        let doc = self
            .cached_doc(url)
            .filter(|d| days > 0 && d.day.saturating_add(days) > today)?;
        match doc.status {
            200..=299 => consent::parse_tdmrep(doc.body.as_bytes())
                .ok()
                .map(|rules| TdmRep {
                    outcome: TdmOutcome::Status(doc.status),
                    rules,
                }),
            400..=499 if doc.status != 429 => Some(TdmRep::none(TdmOutcome::Status(doc.status))),
            _ => None,
        }
    }

    async fn fetch_tdmrep(&self, mut current: Url) -> Result<TdmRep, FetchError> {
        let origin = url::host_key(&current);
        let limits = BodyLimits {
            raw: self.inner.limits.max_robots_bytes,
            decoded: self.inner.limits.max_robots_bytes,
            truncate: false,
        };
        for _ in 0..=MAX_HOPS {
            let robots = self.robots_for(&current).await?;
            if !robots.allowed(&current) {
                return Ok(TdmRep::none(TdmOutcome::Robots));
            }
            let (headers, cached) = self.doc_request(&current, "application/json,*/*;q=0.5");
            let hop = match self.send(&current, headers).await {
                Ok(h) => h,
                Err(
                    e @ (FetchError::Budget | FetchError::Rested | FetchError::PrivateAddress(_)),
                ) => return Err(e),
                Err(e) => return Ok(TdmRep::none(failed(&e))),
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
                    None => return Ok(TdmRep::none(TdmOutcome::Status(status))),
                }
            }
            if status == 304
                && let Some(c) = cached
            {
                hop.discard().await;
                self.inner.gate.success(&origin);
                self.touch_doc(&current);
                tracing::debug!(url = %current, "tdmrep.json: 304, the remembered file still holds");
                return Ok(match consent::parse_tdmrep(c.body.as_bytes()) {
                    Ok(rules) => TdmRep {
                        outcome: TdmOutcome::Status(304),
                        rules,
                    },
                    Err(e) => TdmRep::none(TdmOutcome::Malformed(e.to_string())),
                });
            }
            if !(200..300).contains(&status) {
                hop.discard().await;
                self.inner.gate.success(&origin);
                if (400..500).contains(&status) && status != 429 {
                    // No file (or none for us): remembered, so it is not asked every run.
                    self.remember_absent(&current, status);
                }
                return Ok(TdmRep::none(TdmOutcome::Status(status)));
            }
            return Ok(self.read_tdmrep(hop, &current, &limits).await);
        }
        Ok(TdmRep::none(TdmOutcome::TooManyRedirects))
    }

    /// A 2xx answer's body: its rules (the file is remembered for the next
    /// runs), or why it gave none.
    async fn read_tdmrep(
        &self,
        hop: super::fetch::Hop,
        current: &Url,
        limits: &BodyLimits,
    ) -> TdmRep {
        let (status, headers) = (hop.status, hop.headers.clone());
        match self.read_body(hop, current, limits).await {
            Ok((body, _)) => match consent::parse_tdmrep(&body) {
                Ok(rules) => {
                    self.remember_doc(current, &headers, status, &body);
                    TdmRep {
                        outcome: TdmOutcome::Status(status),
                        rules,
                    }
                }
                Err(e) => {
                    tracing::debug!(url = %current, error = %e, "tdmrep.json: unreadable");
                    TdmRep::none(TdmOutcome::Malformed(e.to_string()))
                }
            },
            Err(e) => TdmRep::none(failed(&e)),
        }
    }
}
