//! What request and response headers say: Accept values per request kind,
//! conditional validators, media type and charset, Retry-After.

use std::time::Duration;

use reqwest::header::{self, HeaderMap};

use super::{Accept, Request};

pub(super) fn accept_header(accept: Accept) -> header::HeaderValue {
    header::HeaderValue::from_static(match accept {
        Accept::Html => "text/html,application/xhtml+xml;q=0.9,application/xml;q=0.5,*/*;q=0.1",
        Accept::Listing => {
            "application/rss+xml,application/atom+xml,application/xml;q=0.9,text/xml;q=0.9,*/*;q=0.5"
        }
        Accept::Any => "*/*",
    })
}

pub(super) fn conditional(headers: &mut HeaderMap, req: &Request) {
    if let Some(v) = req.etag.as_deref().and_then(|e| e.parse().ok()) {
        headers.insert(header::IF_NONE_MATCH, v);
    }
    if let Some(v) = req.last_modified.as_deref().and_then(|e| e.parse().ok()) {
        headers.insert(header::IF_MODIFIED_SINCE, v);
    }
}

/// Does a request of this kind read a body of media type `ct`?
pub(super) fn accepts(accept: Accept, ct: &str) -> bool {
    let markup = matches!(ct, "text/html" | "application/xhtml+xml" | "text/xml")
        || ct.ends_with("+xml")
        || ct == "application/xml";
    match accept {
        Accept::Any => true,
        Accept::Html => markup,
        Accept::Listing => {
            markup
                || ct.ends_with("+json")
                || matches!(
                    ct,
                    "application/json"
                        | "text/plain"
                        | "application/gzip"
                        | "application/x-gzip"
                        | "application/octet-stream"
                )
        }
    }
}

/// (`text/html`, `utf-8`) from `Content-Type: text/html; charset="UTF-8"`.
pub(super) fn media_type(headers: &HeaderMap) -> (Option<String>, Option<String>) {
    match headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        Some(raw) => parse_media_type(raw),
        None => (None, None),
    }
}

/// A `Content-Type` value's media type and `charset`, both lower-cased.
pub(crate) fn parse_media_type(raw: &str) -> (Option<String>, Option<String>) {
    let mut parts = raw.split(';');
    let mime = parts
        .next()
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty());
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset"))
            .then(|| v.trim().trim_matches('"').to_ascii_lowercase())
    });
    (mime, charset.filter(|c| !c.is_empty()))
}

pub(super) fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// `Retry-After` as seconds or an HTTP date, as a wait from `now`.
pub(super) fn parse_retry_after(v: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - now;
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 2026 00:00:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 31 Dec 2025 23:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn accept_table() {
        let table = [
            (Accept::Html, "text/html", true),
            (Accept::Html, "application/xhtml+xml", true),
            (Accept::Html, "application/rss+xml", true),
            (Accept::Html, "application/pdf", false),
            (Accept::Html, "image/png", false),
            (Accept::Html, "application/json", false),
            (Accept::Listing, "application/json", true),
            (Accept::Listing, "application/x-gzip", true),
            (Accept::Listing, "text/plain", true),
            (Accept::Listing, "image/png", false),
            (Accept::Any, "image/png", true),
        ];
        for (a, ct, want) in table {
            assert_eq!(accepts(a, ct), want, "{a:?} {ct}");
        }
    }

    #[test]
    fn media_type_parsing() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            "Text/HTML; Charset=\"UTF-8\"".parse().unwrap(),
        );
        assert_eq!(
            media_type(&h),
            (Some("text/html".into()), Some("utf-8".into()))
        );
    }
}
