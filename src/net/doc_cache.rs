//! robots.txt and `/.well-known/tdmrep.json` across runs: the body and the
//! validators (ETag, Last-Modified) each answered with, so the next run asks
//! conditionally and a `304` reuses the remembered body. Both files are still
//! requested once per origin per run, so robots.txt is never used more than a
//! run old (RFC 9309 allows caching up to 24 hours; daily runs re-read it).
//! Loaded from `state/doc_cache/<run-id>.json` files (and the legacy
//! `state/doc_cache.json`; the later day wins) and saved by the crawl as one
//! file per run holding what it found new or changed, or last wrote over 15
//! days ago ([`crate::store::state::DocCache`]); documents not answered for
//! 30 days are dropped. Here only the lookups and updates.

use std::collections::BTreeMap;

use reqwest::header::{self, HeaderMap};
use serde::{Deserialize, Serialize};

/// One remembered answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// The status the body came with.
    pub status: u16,
    /// The body, as text (robots.txt and tdmrep.json are text).
    pub body: String,
    /// Day stamp of the last answer (200 or 304).
    pub day: u32,
}

/// The documents by URL (`http://host/robots.txt`, `.../tdmrep.json`).
pub(crate) type DocMap = BTreeMap<String, CachedDoc>;

impl CachedDoc {
    /// A 2xx answer worth remembering: one with a validator.
    pub(crate) fn from_answer(
        headers: &HeaderMap,
        status: u16,
        body: &[u8],
        day: u32,
    ) -> Option<CachedDoc> {
        let get = |name: header::HeaderName| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let etag = get(header::ETAG);
        let last_modified = get(header::LAST_MODIFIED);
        if etag.is_none() && last_modified.is_none() {
            return None;
        }
        Some(CachedDoc {
            etag,
            last_modified,
            status,
            body: String::from_utf8_lossy(body).into_owned(),
            day,
        })
    }

    /// Add `If-None-Match` / `If-Modified-Since` for this document.
    pub fn conditional(&self, headers: &mut HeaderMap) {
        if let Some(v) = self.etag.as_deref().and_then(|e| e.parse().ok()) {
            headers.insert(header::IF_NONE_MATCH, v);
        }
        if let Some(v) = self.last_modified.as_deref().and_then(|e| e.parse().ok()) {
            headers.insert(header::IF_MODIFIED_SINCE, v);
        }
    }
}
