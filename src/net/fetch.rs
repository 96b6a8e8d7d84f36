//! One fetch: robots and scope checked at every hop, the politeness gate taken
//! right before each send, redirects followed by hand, bodies read in a chunk
//! loop under raw and decoded caps, per-read and total timeouts.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::header::{self, HeaderMap};
use tokio::time::Instant;

use super::decode::{DecodeError, Decoder};
use super::error::classify;
use super::headers::{
    accept_header, accepts, conditional, header_list, media_type, parse_retry_after,
};
use super::polite::Permit;
use super::{ACCEPT_ENCODING, FetchError, Net, Request, Response, Wire};
use crate::url::{self, Url};

/// An answered request whose body has not been read yet.
pub(super) struct Hop {
    pub resp: reqwest::Response,
    pub status: u16,
    pub headers: HeaderMap,
    pub(crate) sent_at: Instant,
    pub deadline: Instant,
    pub gap_wait: Duration,
    pub retry_after: Option<Duration>,
    /// What a WARC record needs of the exchange besides the body.
    pub wire: Box<WireHop>,
    /// Held until the body is read: the host's concurrency slot.
    _permit: Permit,
}

impl Hop {
    /// Drop a body we do not want; a small one is read first so that the
    /// connection can be reused (bounded by a second and the deadline).
    pub(crate) async fn discard(mut self) {
        if self.resp.content_length().is_some_and(|n| n <= 16 * 1024) {
            let until = self.deadline.min(Instant::now() + Duration::from_secs(1));
            let drain = async { while let Ok(Some(_)) = self.resp.chunk().await {} };
            let _ = tokio::time::timeout_at(until, drain).await;
        }
    }
}

/// The request as sent and the answer's first line, for WARC records.
pub(super) struct WireHop {
    pub(crate) request_headers: HeaderMap,
    pub version: reqwest::Version,
    pub remote: Option<std::net::SocketAddr>,
    pub(crate) sent_utc: chrono::DateTime<chrono::Utc>,
}

impl WireHop {
    fn new(
        request_headers: HeaderMap,
        resp: &reqwest::Response,
        conn: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
        sent_utc: chrono::DateTime<chrono::Utc>,
    ) -> Box<WireHop> {
        let remote = conn.map(|(_, remote)| remote);
        let version = resp.version();
        Box::new(WireHop {
            request_headers,
            version,
            remote,
            sent_utc,
        })
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
                return Err(robots.refusal(&current));
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
                .finish(hop, current, redirects, req, gap_wait, first_sent)
                .await;
        }
    }

    /// Read the final hop's body (when wanted) and build the [`Response`].
    async fn finish(
        &self,
        hop: Hop,
        url: Url,
        redirects: Vec<Url>,
        req: &Request,
        gap_wait: Duration,
        first_sent: Option<Instant>,
    ) -> Result<Response, FetchError> {
        let accept = req.accept;
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
        let mut lease = self.inner.bodies.lease(&url);
        let mut wire = req.keep_raw.then(|| self.wire(&url, &hop));
        let raw = wire.as_mut().map(|w| &mut w.raw_body);
        let (body, wire_bytes) = if wanted && status != 304 {
            self.read_body_raw(hop, &url, &limits, &mut lease, raw)
                .await?
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
            body_lease: Some(std::sync::Arc::new(lease)),
            wire: wire.map(Box::new),
        })
    }

    /// The exchange as a WARC record shows it (the body comes later): the
    /// request as sent (the client's default headers and `Host` added, as
    /// hyper writes them), the answer's version, reason and raw header bytes.
    fn wire(&self, url: &Url, hop: &Hop) -> Wire {
        let mut request = Vec::new();
        let host = match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
            None => url.host_str().unwrap_or("").to_string(),
        };
        request.push(("host".to_string(), host.into_bytes()));
        request.push((
            "user-agent".to_string(),
            self.inner.user_agent.clone().into_bytes(),
        ));
        request.push((
            "accept-encoding".to_string(),
            ACCEPT_ENCODING.as_bytes().to_vec(),
        ));
        for (k, v) in &hop.wire.request_headers {
            request.push((k.as_str().to_string(), v.as_bytes().to_vec()));
        }
        let headers = hop
            .headers
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.as_bytes().to_vec()))
            .collect();
        let code = reqwest::StatusCode::from_u16(hop.status).ok();
        // hyper keeps only non-standard reason phrases; the standard one is written.
        let reason = code
            .and_then(|c| c.canonical_reason())
            .unwrap_or_default()
            .to_string();
        Wire {
            date: hop.wire.sent_utc,
            // Through a proxy the peer is the proxy, not the publisher.
            ip: if self.inner.proxied {
                None
            } else {
                hop.wire.remote.map(|a| a.ip())
            },
            version: match hop.wire.version {
                reqwest::Version::HTTP_09 => "HTTP/0.9",
                reqwest::Version::HTTP_10 => "HTTP/1.0",
                reqwest::Version::HTTP_2 => "HTTP/2",
                reqwest::Version::HTTP_3 => "HTTP/3",
                _ => "HTTP/1.1",
            },
            status: hop.status,
            reason,
            request_target: match url.query() {
                Some(q) => format!("{}?{q}", url.path()),
                None => url.path().to_string(),
            },
            request_headers: request,
            headers,
            raw_body: Vec::new(),
        }
    }

    /// Send one request: budget, politeness slot, then `send()` with the
    /// total deadline, signed (Web Bot Auth) right before it goes. Handles
    /// Retry-After and failure counting.
    pub(super) async fn send(&self, url: &Url, mut headers: HeaderMap) -> Result<Hop, FetchError> {
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
        if let Some(signer) = self.inner.signer.as_ref().filter(|s| s.signs_for(&host)) {
            signer.sign(url, &mut headers, std::time::SystemTime::now());
        }
        let sent_at = Instant::now();
        let sent_utc = chrono::Utc::now();
        let deadline = sent_at + self.inner.limits.request_timeout;
        let request_headers = headers.clone();
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
        let conn = resp
            .extensions()
            .get::<hyper_util::client::legacy::connect::HttpInfo>()
            .map(|i| (i.local_addr(), i.remote_addr()));
        self.inner.gate.answered(&host, sent_at, conn);
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        if let Some(signer) = &self.inner.signer
            && headers.contains_key("accept-signature")
        {
            signer.asked_by(&host);
        }
        let wire = WireHop::new(request_headers, &resp, conn, sent_utc);
        let retry_after = if status == 429 || status == 503 {
            self.hold_back(url, &host, status, &headers)
        } else {
            None
        };
        Ok(Hop {
            resp,
            status,
            headers,
            sent_at,
            deadline,
            gap_wait,
            retry_after,
            wire,
            _permit: permit,
        })
    }

    /// A 429 or 503: pause `host` for its Retry-After (rest it for the run
    /// past `max_retry_after`), or back off without one. Returns the wait asked.
    fn hold_back(
        &self,
        url: &Url,
        host: &str,
        status: u16,
        headers: &HeaderMap,
    ) -> Option<Duration> {
        let retry_after = headers
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, chrono::Utc::now()));
        match retry_after {
            Some(d) if d > self.inner.limits.max_retry_after => {
                tracing::debug!(%url, secs = d.as_secs(), "retry-after too long: resting host");
                self.inner.gate.rest(host);
            }
            Some(d) => {
                tracing::debug!(%url, secs = d.as_secs_f64(), "retry-after: pausing host");
                self.inner.gate.pause_until(host, Instant::now() + d);
            }
            None => {
                tracing::debug!(%url, status, "no retry-after: backing off");
                self.inner.gate.back_off(host);
            }
        }
        retry_after
    }

    /// [`Net::read_body_leased`] with a lease of its own, given back when
    /// the call returns (robots.txt, tdmrep.json: parsed right away).
    pub(super) async fn read_body(
        &self,
        hop: Hop,
        url: &Url,
        limits: &BodyLimits,
    ) -> Result<(Vec<u8>, u64), FetchError> {
        let mut lease = self.inner.bodies.lease(url);
        self.read_body_leased(hop, url, limits, &mut lease).await
    }

    /// Read a body in a chunk loop: per-read timeout, total deadline, raw and
    /// decoded caps, and the body budget (`lease` covers what the buffer
    /// holds; compressed input is decoded in small steps so one step cannot
    /// blow far past it). Returns the decoded bytes and the bytes on the wire.
    pub(super) async fn read_body_leased(
        &self,
        hop: Hop,
        url: &Url,
        limits: &BodyLimits,
        lease: &mut super::budget::Lease,
    ) -> Result<(Vec<u8>, u64), FetchError> {
        self.read_body_raw(hop, url, limits, lease, None).await
    }

    /// [`Net::read_body_leased`], keeping a copy of the bytes as they came
    /// off the wire in `raw` when the body is content-encoded (an identity
    /// body is its own raw copy: `raw` stays empty). The lease covers both
    /// buffers.
    async fn read_body_raw(
        &self,
        mut hop: Hop,
        url: &Url,
        limits: &BodyLimits,
        lease: &mut super::budget::Lease,
        mut raw: Option<&mut Vec<u8>>,
    ) -> Result<(Vec<u8>, u64), FetchError> {
        let too_large = |what: &str| {
            tracing::debug!(%url, what, "skip: body over the cap");
            FetchError::TooLarge
        };
        if !limits.truncate && hop.resp.content_length().is_some_and(|n| n > limits.raw) {
            return Err(too_large("content-length"));
        }
        let mut decoder = decoder_for(&hop.headers, limits)?;
        let host = url::host_key(url);
        let mut wire = 0u64;
        loop {
            let now = Instant::now();
            let read_until = (now + self.inner.limits.read_timeout).min(hop.deadline);
            let Some(chunk) = self.next_chunk(&mut hop, read_until, url, &host).await? else {
                break;
            };
            wire += chunk.len() as u64;
            let room = limits.raw.saturating_sub(wire - chunk.len() as u64) as usize;
            let over_raw = wire > limits.raw;
            let piece = if over_raw {
                &chunk[..room.min(chunk.len())]
            } else {
                &chunk[..]
            };
            let step = if decoder.is_identity() {
                piece.len().max(1)
            } else {
                DECODE_STEP
            };
            for part in piece.chunks(step) {
                // Identity: cover the buffer's growth before it happens.
                if decoder.is_identity() {
                    let next = decoder.held_after(part.len());
                    self.cover(lease, next, read_until, url, &host).await?;
                } else if let Some(raw) = raw.as_deref_mut() {
                    // The raw copy of an encoded body: covered before it grows.
                    let grown = raw_growth(raw, part.len(), limits.raw);
                    self.cover(lease, decoder.held() + grown, read_until, url, &host)
                        .await?;
                    raw.reserve_exact(grown - raw.len());
                    raw.extend_from_slice(part);
                }
                match decoder.push(part) {
                    Ok(()) => {}
                    Err(DecodeError::TooLarge) if limits.truncate => {
                        self.inner.gate.success(&host);
                        return Ok((decoder.into_partial(), wire));
                    }
                    Err(DecodeError::TooLarge) => return Err(too_large("decoded")),
                    Err(DecodeError::Corrupt(m)) => return Err(FetchError::Body(m)),
                }
                // Compressed: one small decode step may have grown it.
                let kept = raw.as_deref().map_or(0, Vec::capacity);
                self.cover(lease, decoder.held() + kept, read_until, url, &host)
                    .await?;
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

impl Net {
    /// The next chunk of a body (`None` at its end), or the failure that
    /// ends the read (the host's failure counted).
    async fn next_chunk(
        &self,
        hop: &mut Hop,
        until: Instant,
        url: &Url,
        host: &str,
    ) -> Result<Option<impl std::ops::Deref<Target = [u8]>>, FetchError> {
        match tokio::time::timeout_at(until, hop.resp.chunk()).await {
            Err(_) => {
                tracing::debug!(%url, "body: timed out");
                self.inner.gate.failure(host);
                Err(FetchError::Timeout)
            }
            Ok(Err(e)) => {
                let err = match classify(&e) {
                    FetchError::Timeout => FetchError::Timeout,
                    other => FetchError::Body(other.to_string()),
                };
                tracing::debug!(%url, error = %err, "body: read failed");
                self.inner.gate.failure(host);
                Err(err)
            }
            Ok(Ok(chunk)) => Ok(chunk),
        }
    }

    /// Make `lease` cover `held` bytes of body buffer, or fail the fetch as
    /// a timeout when the budget has no room before the read deadline.
    async fn cover(
        &self,
        lease: &mut super::budget::Lease,
        held: usize,
        until: Instant,
        url: &Url,
        host: &str,
    ) -> Result<(), FetchError> {
        if lease.cover(held as u64, until).await {
            return Ok(());
        }
        tracing::debug!(%url, held, "body budget: no room before the read deadline");
        self.inner.gate.failure(host);
        Err(FetchError::Timeout)
    }
}

/// The capacity a raw copy grows to when `more` bytes join it: doubling
/// from 64 KiB, never past `cap` (the raw cap), so the lease can cover it
/// before it grows.
fn raw_growth(raw: &Vec<u8>, more: usize, cap: u64) -> usize {
    let needed = raw.len() + more;
    if needed <= raw.capacity() {
        return raw.capacity();
    }
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    needed.max(raw.capacity().saturating_mul(2).max(64 << 10).min(cap))
}

/// Raw bytes of a compressed body decoded at a time: gzip and deflate expand
/// at most about 1,000 times, so one step adds at most about 1 MiB before the
/// body budget is asked for it.
const DECODE_STEP: usize = 1024;

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The decoder for a body's `Content-Encoding`, capped at the decoded limit.
fn decoder_for(headers: &HeaderMap, limits: &BodyLimits) -> Result<Decoder, FetchError> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok());
    Decoder::new(encoding, limits.decoded).map_err(|e| FetchError::Body(format!("{e:?}")))
}
