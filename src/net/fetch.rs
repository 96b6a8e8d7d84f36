//! One fetch: robots and scope checked at every hop, the politeness gate taken
//! right before each send, redirects followed by hand, bodies read in a chunk
//! loop under raw and decoded caps, per-read and total timeouts.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::header::{self, HeaderMap};
use tokio::time::Instant;

use super::decode::{DecodeError, Decoder};
use super::polite::Permit;
use super::{Accept, FetchError, Net, Request, Response};
use crate::url::{self, Url};

/// An answered request whose body has not been read yet.
pub(super) struct Hop {
    pub resp: reqwest::Response,
    pub status: u16,
    pub headers: HeaderMap,
    pub sent_at: Instant,
    pub deadline: Instant,
    pub gap_wait: Duration,
    pub retry_after: Option<Duration>,
    /// Held until the body is read: the host's concurrency slot.
    _permit: Permit,
}

impl Hop {
    /// Drop a body we do not want; a small one is read first so that the
    /// connection can be reused (bounded by a second and the deadline).
    pub async fn discard(mut self) {
        if self.resp.content_length().is_some_and(|n| n <= 16 * 1024) {
            let until = self.deadline.min(Instant::now() + Duration::from_secs(1));
            let drain = async { while let Ok(Some(_)) = self.resp.chunk().await {} };
            let _ = tokio::time::timeout_at(until, drain).await;
        }
    }
}

/// How to read a body.
pub(super) struct BodyLimits {
    pub raw: u64,
    pub decoded: u64,
    /// Keep the first `decoded` bytes instead of failing (robots.txt).
    pub truncate: bool,
}

impl Net {
    /// Fetch `url`: see the module docs of [`crate::net`] and the crate's
    /// politeness rules. Redirect targets must pass `in_scope`.
    pub async fn fetch(
        &self,
        url: &Url,
        req: &Request,
        in_scope: &(dyn Fn(&Url) -> bool + Send + Sync),
    ) -> Result<Response, FetchError> {
        let mut current = url::normalize(url.clone()).ok_or(FetchError::Scheme)?;
        let mut redirects: Vec<Url> = Vec::new();
        let mut visited: HashSet<String> = HashSet::new();
        visited.insert(current.as_str().to_string());
        let mut gap_wait = Duration::ZERO;
        let mut first_sent: Option<Instant> = None;
        loop {
            self.check_host(&current)?;
            let robots = self.robots_for(&current).await?;
            if !robots.allowed(&current) {
                tracing::debug!(url = %current, outcome = ?robots.outcome, "robots: disallowed");
                return Err(FetchError::RobotsDisallowed(current));
            }
            tracing::debug!(url = %current, "robots: allowed");
            let mut extra = HeaderMap::new();
            extra.insert(header::ACCEPT, accept_header(req.accept));
            if redirects.is_empty() {
                conditional(&mut extra, req);
            }
            let hop = self.send(&current, extra).await?;
            gap_wait += hop.gap_wait;
            first_sent.get_or_insert(hop.sent_at);

            if is_redirect(hop.status) {
                let location = hop
                    .headers
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|l| url::resolve(&current, l));
                if let Some(next) = location {
                    tracing::debug!(from = %current, to = %next, status = hop.status, "redirect");
                    hop.discard().await;
                    self.inner.gate.success(&url::host_key(&current));
                    redirects.push(current.clone());
                    if redirects.len() > self.inner.limits.max_redirects {
                        tracing::debug!(url = %url, hops = redirects.len(), "redirect: too many");
                        return Err(FetchError::TooManyRedirects);
                    }
                    if !visited.insert(next.as_str().to_string()) {
                        tracing::debug!(url = %next, "redirect: loop");
                        return Err(FetchError::RedirectLoop);
                    }
                    if !in_scope(&next) {
                        tracing::debug!(url = %next, "redirect: out of scope");
                        return Err(FetchError::OutOfScope(next));
                    }
                    current = next;
                    continue;
                }
                // A redirect without a usable Location is answered as it is.
            }
            return self
                .finish(hop, current, redirects, req.accept, gap_wait, first_sent)
                .await;
        }
    }

    /// Read the final hop's body (when wanted) and build the [`Response`].
    async fn finish(
        &self,
        hop: Hop,
        url: Url,
        redirects: Vec<Url>,
        accept: Accept,
        gap_wait: Duration,
        first_sent: Option<Instant>,
    ) -> Result<Response, FetchError> {
        let (content_type, charset) = media_type(&hop.headers);
        let wanted = content_type.as_deref().is_none_or(|ct| accepts(accept, ct));
        let success = (200..300).contains(&hop.status);
        if success && !wanted {
            self.inner.gate.success(&url::host_key(&url));
            let ct = content_type.unwrap_or_default();
            tracing::debug!(%url, content_type = %ct, "skip: content type not wanted, body not read");
            return Err(FetchError::NotHtml(ct));
        }
        let headers = header_list(&hop.headers);
        let status = hop.status;
        let retry_after = hop.retry_after;
        let sent_at = hop.sent_at;
        let limits = BodyLimits {
            raw: self.inner.limits.max_raw_bytes,
            decoded: self.inner.limits.max_body_bytes,
            truncate: false,
        };
        let (body, wire_bytes) = if wanted && status != 304 {
            self.read_body(hop, &url, &limits).await?
        } else {
            self.inner.gate.success(&url::host_key(&url));
            (Vec::new(), 0)
        };
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let x_robots_tag = headers
            .iter()
            .filter(|(k, _)| k == "x-robots-tag")
            .map(|(_, v)| v.clone())
            .collect();
        let now = Instant::now();
        tracing::debug!(%url, status, bytes = body.len(), wire_bytes, "fetched");
        Ok(Response {
            etag: get("etag"),
            last_modified: get("last-modified"),
            url,
            status,
            redirects,
            content_type,
            charset,
            body,
            retry_after,
            x_robots_tag,
            headers,
            sent_at: sent_at.into_std(),
            elapsed: now - first_sent.unwrap_or(sent_at),
            wire_bytes,
            gap_wait,
        })
    }

    /// Send one request: budget, politeness slot, then `send()` with the
    /// total deadline. Handles Retry-After and failure counting.
    pub(super) async fn send(&self, url: &Url, headers: HeaderMap) -> Result<Hop, FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Scheme);
        }
        self.check_host(url)?;
        let host = url::host_key(url);
        if self.budget_spent() {
            tracing::debug!(%url, "skip: budget spent");
            return Err(FetchError::Budget);
        }
        let permit = self.inner.gate.acquire(&host).await.map_err(|_| {
            tracing::debug!(%url, "skip: host rested");
            FetchError::Rested
        })?;
        self.take_request()?;
        let gap_wait = permit.waited;
        if !gap_wait.is_zero() {
            tracing::debug!(%url, wait_ms = gap_wait.as_millis() as u64, "gap: waited for host");
        }
        let sent_at = Instant::now();
        let deadline = sent_at + self.inner.limits.request_timeout;
        let request = self.inner.client.get(url.as_str()).headers(headers).send();
        let resp = match tokio::time::timeout_at(deadline, request).await {
            Err(_) => Err(FetchError::Timeout),
            Ok(Err(e)) => Err(classify(&e)),
            Ok(Ok(r)) => Ok(r),
        };
        let resp = match resp {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(%url, error = %e, "send failed");
                self.inner.gate.failure(&host);
                return Err(e);
            }
        };
        // The failure count is reset only once the whole answer is in
        // (see `read_body` and `fetch`), so a host that resets every body is rested.
        self.inner.gate.answered(&host);
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let mut retry_after = None;
        if status == 429 || status == 503 {
            retry_after = headers
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, chrono::Utc::now()));
            match retry_after {
                Some(d) if d > self.inner.limits.max_retry_after => {
                    tracing::debug!(%url, secs = d.as_secs(), "retry-after too long: resting host");
                    self.inner.gate.rest(&host);
                }
                Some(d) => {
                    tracing::debug!(%url, secs = d.as_secs_f64(), "retry-after: pausing host");
                    self.inner.gate.pause_until(&host, Instant::now() + d);
                }
                None => {
                    tracing::debug!(%url, status, "no retry-after: backing off");
                    self.inner.gate.back_off(&host);
                }
            }
        }
        Ok(Hop {
            resp,
            status,
            headers,
            sent_at,
            deadline,
            gap_wait,
            retry_after,
            _permit: permit,
        })
    }

    /// Read a body in a chunk loop: per-read timeout, total deadline, raw and
    /// decoded caps. Returns the decoded bytes and the bytes on the wire.
    pub(super) async fn read_body(
        &self,
        mut hop: Hop,
        url: &Url,
        limits: &BodyLimits,
    ) -> Result<(Vec<u8>, u64), FetchError> {
        let too_large = |what: &str| {
            tracing::debug!(%url, what, "skip: body over the cap");
            FetchError::TooLarge
        };
        if !limits.truncate && hop.resp.content_length().is_some_and(|n| n > limits.raw) {
            return Err(too_large("content-length"));
        }
        let encoding = hop
            .headers
            .get(header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut decoder = Decoder::new(encoding.as_deref(), limits.decoded)
            .map_err(|e| FetchError::Body(format!("{e:?}")))?;
        let host = url::host_key(url);
        let mut wire = 0u64;
        loop {
            let now = Instant::now();
            let read_until = (now + self.inner.limits.read_timeout).min(hop.deadline);
            let chunk = match tokio::time::timeout_at(read_until, hop.resp.chunk()).await {
                Err(_) => {
                    tracing::debug!(%url, wire, "body: timed out");
                    self.inner.gate.failure(&host);
                    return Err(FetchError::Timeout);
                }
                Ok(Err(e)) => {
                    let err = match classify(&e) {
                        FetchError::Timeout => FetchError::Timeout,
                        other => FetchError::Body(other.to_string()),
                    };
                    tracing::debug!(%url, error = %err, "body: read failed");
                    self.inner.gate.failure(&host);
                    return Err(err);
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(c))) => c,
            };
            wire += chunk.len() as u64;
            let room = limits.raw.saturating_sub(wire - chunk.len() as u64) as usize;
            let over_raw = wire > limits.raw;
            let piece = if over_raw {
                &chunk[..room.min(chunk.len())]
            } else {
                &chunk[..]
            };
            match decoder.push(piece) {
                Ok(()) => {}
                Err(DecodeError::TooLarge) if limits.truncate => {
                    self.inner.gate.success(&host);
                    return Ok((decoder.into_partial(), wire));
                }
                Err(DecodeError::TooLarge) => return Err(too_large("decoded")),
                Err(DecodeError::Corrupt(m)) => return Err(FetchError::Body(m)),
            }
            if over_raw {
                if limits.truncate {
                    break;
                }
                return Err(too_large("raw"));
            }
        }
        self.inner.gate.success(&host);
        match decoder.finish() {
            Ok(body) => Ok((body, wire)),
            Err(DecodeError::TooLarge) => Err(too_large("decoded")),
            Err(DecodeError::Corrupt(m)) => Err(FetchError::Body(m)),
        }
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn accept_header(accept: Accept) -> header::HeaderValue {
    header::HeaderValue::from_static(match accept {
        Accept::Html => "text/html,application/xhtml+xml;q=0.9,application/xml;q=0.5,*/*;q=0.1",
        Accept::Listing => {
            "application/rss+xml,application/atom+xml,application/xml;q=0.9,text/xml;q=0.9,*/*;q=0.5"
        }
        Accept::Any => "*/*",
    })
}

fn conditional(headers: &mut HeaderMap, req: &Request) {
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
fn media_type(headers: &HeaderMap) -> (Option<String>, Option<String>) {
    let Some(raw) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return (None, None);
    };
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

fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
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

/// Every error in `e`'s chain, also looking inside `io::Error` wrappers
/// (whose `source()` skips the error they wrap).
fn chain_of<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(cur) = stack.pop() {
        if out.len() > 32 {
            break;
        }
        out.push(cur);
        if let Some(inner) = cur
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            stack.push(inner);
        } else if let Some(next) = cur.source() {
            stack.push(next);
        }
    }
    out
}

/// Map a reqwest error to our classes by walking its source chain.
fn classify(e: &reqwest::Error) -> FetchError {
    let all = chain_of(e);
    if let Some(p) = all
        .iter()
        .find_map(|s| s.downcast_ref::<super::guard::PrivateAddressError>())
    {
        return FetchError::PrivateAddress(p.0.clone());
    }
    let tls = all
        .iter()
        .any(|s| s.downcast_ref::<rustls::Error>().is_some());
    let chain = all
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    let lower = chain.to_ascii_lowercase();
    if e.is_timeout() || lower.contains("timed out") {
        FetchError::Timeout
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        FetchError::Dns(chain)
    } else if tls || lower.contains("certificate") || lower.contains("tls handshake") {
        FetchError::Tls(chain)
    } else if e.is_connect() {
        FetchError::Connect(chain)
    } else if e.is_body() || e.is_decode() {
        FetchError::Body(chain)
    } else {
        FetchError::Connect(chain)
    }
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
