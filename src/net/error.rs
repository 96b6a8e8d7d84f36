//! [`FetchError`]: why a fetch gave no usable answer, with its class
//! ([`FailureClass`]) for counting, and the mapping from reqwest's errors to it.

use crate::record::FailureClass;
use crate::url::Url;

/// Why a fetch gave no usable answer. [`FetchError::class`] names it for counting.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FetchError {
    #[error("the fetch budget is spent")]
    Budget,
    #[error("host is rested for the rest of this run (Retry-After too long or repeated failures)")]
    Rested,
    #[error("robots.txt disallows {0}")]
    RobotsDisallowed(Url),
    #[error("redirect to {0}, which is outside the crawl scope")]
    OutOfScope(Url),
    #[error("too many redirects")]
    TooManyRedirects,
    #[error("redirect loop")]
    RedirectLoop,
    #[error("timed out")]
    Timeout,
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("name resolution failed: {0}")]
    Dns(String),
    #[error("TLS failed: {0}")]
    Tls(String),
    #[error("body larger than the configured cap")]
    TooLarge,
    #[error("content type `{0}` is not wanted; body not read")]
    NotHtml(String),
    #[error("reading the body failed: {0}")]
    Body(String),
    #[error("only http and https URLs are fetched")]
    Scheme,
    #[error("{0} is a private or local address")]
    PrivateAddress(String),
}

impl FetchError {
    /// The class it is counted and logged under.
    pub fn class(&self) -> FailureClass {
        match self {
            FetchError::Budget => FailureClass::Budget,
            FetchError::Rested => FailureClass::Rested,
            FetchError::RobotsDisallowed(_) => FailureClass::Robots,
            FetchError::OutOfScope(_) => FailureClass::OutOfScope,
            FetchError::TooManyRedirects => FailureClass::TooManyRedirects,
            FetchError::RedirectLoop => FailureClass::RedirectLoop,
            FetchError::Timeout => FailureClass::Timeout,
            FetchError::Connect(_) => FailureClass::Connect,
            FetchError::Dns(_) => FailureClass::Dns,
            FetchError::Tls(_) => FailureClass::Tls,
            FetchError::TooLarge => FailureClass::TooLarge,
            FetchError::NotHtml(_) => FailureClass::NotHtml,
            FetchError::Body(_) => FailureClass::Body,
            FetchError::Scheme => FailureClass::Scheme,
            FetchError::PrivateAddress(_) => FailureClass::PrivateAddress,
        }
    }

    /// Did the network fail (as opposed to a policy refusal)? These count
    /// towards resting a host.
    pub(crate) fn is_network(&self) -> bool {
        matches!(
            self,
            FetchError::Timeout
                | FetchError::Connect(_)
                | FetchError::Dns(_)
                | FetchError::Tls(_)
                | FetchError::Body(_)
        )
    }
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
pub(super) fn classify(e: &reqwest::Error) -> FetchError {
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
