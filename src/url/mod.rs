//! URL identity and scope: pure functions, no I/O.
//!
//! * [`normalize`]: the form we fetch and store (scheme and host lower-cased,
//!   default port and fragment dropped, tracking and session parameters
//!   removed from the query and from path parameters (`;jsessionid=...`),
//!   the rest of the query sorted, `/index.html` collapsed, percent-encoding
//!   normalised: unreserved characters decoded, hex upper-cased, and
//!   double-encoded escapes (`%2520`) collapsed, so an encoding spiral is one URL;
//!   a raw `%` that starts no escape written `%25`).
//! * [`trap`]: general rules against crawler traps (length, parameters,
//!   repeated segments, per-pattern caps).
//! * [`seen_key`] / [`seen_hash`]: the seen-set identity, which also ignores
//!   the scheme, `www.` and a trailing slash.
//! * [`path_under`] / [`host_matches`]: the prefix and domain tests that
//!   `crate::source` builds the sources' scope from.
//!
//! The `url` crate's [`Url`] is re-exported so the rest of the crate names it
//! through this module.

pub use ::url::Url;

pub mod trap;

/// Query parameters that only track the visitor and never change the page.
const TRACKING_PARAMS: &[&str] = &[
    "gclid",
    "gclsrc",
    "dclid",
    "fbclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "igshid",
    "yclid",
    "_ga",
    "_gl",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "ref_src",
    "cmpid",
    "ocid",
    "sr_share",
    "guccounter",
    "guce_referrer",
    "guce_referrer_sig",
    "spm",
    "__twitter_impression",
    "wt.mc_id",
    // Session ids: a new one per visit would make every page look new.
    "sessionid",
    "jsessionid",
    "phpsessid",
    "sid",
];

fn is_tracking(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("utm_")
        || lower.starts_with("pk_")
        || lower.starts_with("mtm_")
        || TRACKING_PARAMS.contains(&lower.as_str())
}

/// A `Hasher` for keys that already are xxh3 hashes ([`seen_hash`]): it takes
/// a `u64` as it is, so hash sets and maps of URL hashes do no second hashing.
#[derive(Default)]
pub(crate) struct IdentityHasher(u64);

impl std::hash::Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64 ^ (n >> 64) as u64;
    }
}

/// Parse an absolute http(s) URL and normalise it.
pub fn parse(s: &str) -> Option<Url> {
    Url::parse(s.trim()).ok().and_then(normalize)
}

/// Resolve `href` against `base` and normalise; `None` for non-http(s) links.
pub fn resolve(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    base.join(href).ok().and_then(normalize)
}

/// The fetchable, stored form of a URL. `None` when the URL is not http(s) or has no host.
pub(crate) fn normalize(mut url: Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    if url.host_str() != Some(host.as_str()) {
        url.set_host(Some(&host)).ok()?;
    }
    url.set_fragment(None);
    if !url.username().is_empty() || url.password().is_some() {
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    // Default ports are dropped by the url crate on parse.
    let path = clean_path(url.path());
    if let Some(path) = path {
        url.set_path(&path);
    }
    if let Some(q) = url.query().and_then(normalize_escapes) {
        url.set_query(Some(&q));
    }
    if url.query().is_some() {
        let mut pairs: Vec<(String, String)> = url
            .query_pairs()
            .filter(|(k, _)| !k.is_empty() && !is_tracking(k))
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if pairs.is_empty() {
            url.set_query(None);
        } else {
            pairs.sort();
            url.query_pairs_mut().clear().extend_pairs(pairs);
        }
    }
    let path = url.path();
    for index in ["/index.html", "/index.htm", "/index.php"] {
        if let Some(stripped) = path.strip_suffix(index) {
            let new = format!("{stripped}/");
            url.set_path(&new);
            break;
        }
    }
    Some(url)
}

/// The path with session parameters (`;jsessionid=...`) dropped and its
/// escapes normalised; `None` when nothing changes.
fn clean_path(path: &str) -> Option<String> {
    let mut changed = false;
    let mut cleaned = String::with_capacity(path.len());
    if path.contains(';') {
        for (i, seg) in path.split('/').enumerate() {
            if i > 0 {
                cleaned.push('/');
            }
            let mut parts = seg.split(';');
            cleaned.push_str(parts.next().unwrap_or(""));
            for param in parts {
                let name = param.split('=').next().unwrap_or("");
                if is_tracking(name) {
                    changed = true;
                } else {
                    cleaned.push(';');
                    cleaned.push_str(param);
                }
            }
        }
    } else {
        cleaned.push_str(path);
    }
    match normalize_escapes(&cleaned) {
        Some(n) => Some(n),
        None => changed.then_some(cleaned),
    }
}

/// Percent-encoding in one canonical form: `%25` followed by an escape is
/// collapsed (`%2520` -> `%20`, however deep), escapes of unreserved
/// characters (letters, digits, `-._~`) are decoded and the rest upper-cased,
/// and a raw `%` that starts no escape becomes `%25` (so `/100%` and
/// `/100%25` are one URL). `None` when `s` is already canonical.
pub(crate) fn normalize_escapes(s: &str) -> Option<String> {
    if !s.contains('%') {
        return None;
    }
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut cur: Vec<u8> = s.as_bytes().to_vec();
    // Collapse double encodings until none is left (each pass shortens).
    loop {
        let mut out = Vec::with_capacity(cur.len());
        let mut i = 0;
        let mut collapsed = false;
        while i < cur.len() {
            if cur[i] == b'%'
                && cur.get(i + 1) == Some(&b'2')
                && cur.get(i + 2) == Some(&b'5')
                && cur.get(i + 3).copied().and_then(hex).is_some()
                && cur.get(i + 4).copied().and_then(hex).is_some()
            {
                out.push(b'%');
                i += 3;
                collapsed = true;
            } else {
                out.push(cur[i]);
                i += 1;
            }
        }
        cur = out;
        if !collapsed {
            break;
        }
    }
    let mut out = Vec::with_capacity(cur.len());
    let mut i = 0;
    while i < cur.len() {
        if cur[i] == b'%'
            && let (Some(h), Some(l)) = (
                cur.get(i + 1).copied().and_then(hex),
                cur.get(i + 2).copied().and_then(hex),
            )
        {
            let c = h * 16 + l;
            if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                out.push(c);
            } else {
                out.push(b'%');
                out.push(cur[i + 1].to_ascii_uppercase());
                out.push(cur[i + 2].to_ascii_uppercase());
            }
            i += 3;
        } else if cur[i] == b'%' {
            // A raw `%` that starts no escape means a literal percent sign.
            out.extend_from_slice(b"%25");
            i += 1;
        } else {
            out.push(cur[i]);
            i += 1;
        }
    }
    // Only ASCII bytes were rewritten, so the text stays valid UTF-8.
    let out = String::from_utf8(out).ok()?;
    (out != s).then_some(out)
}

/// Host without a leading `www.`.
pub fn domain(host: &str) -> &str {
    host.strip_prefix("www.").unwrap_or(host)
}

/// The seen-set identity: no scheme, no `www.`, no trailing slash; query kept.
pub fn seen_key(url: &Url) -> String {
    let host = domain(url.host_str().unwrap_or(""));
    let mut key = String::with_capacity(url.as_str().len());
    key.push_str(host);
    if let Some(port) = url.port() {
        key.push(':');
        key.push_str(&port.to_string());
    }
    let path = url.path();
    key.push_str(path.strip_suffix('/').unwrap_or(path));
    if let Some(q) = url.query() {
        key.push('?');
        key.push_str(q);
    }
    key
}

/// 64-bit xxh3 of [`seen_key`].
pub fn seen_hash(url: &Url) -> u64 {
    xxhash_rust::xxh3::xxh3_64(seen_key(url).as_bytes())
}

/// The host key used for per-host queues and politeness: host plus explicit port.
pub fn host_key(url: &Url) -> String {
    match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    }
}

/// Is `host` equal to `listed` or a subdomain of it? (deny-lists)
pub(crate) fn host_matches(host: &str, listed: &str) -> bool {
    let host = domain(host);
    let listed = domain(listed);
    host == listed
        || (host.len() > listed.len()
            && host.ends_with(listed)
            && host.as_bytes()[host.len() - listed.len() - 1] == b'.')
}

/// Is `s` an absolute http(s) URL with a host? (config checks of seeds and URLs)
pub(crate) fn check_http_url(s: &str) -> Result<(), String> {
    match Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        _ => Err(format!("expected an absolute http(s) URL, got `{s}`")),
    }
}

/// `/news/a` is under `/news` and `/news/`; `/newsroom` is not under `/news`.
pub(crate) fn path_under(path: &str, prefix: &str) -> bool {
    if prefix == "/" || prefix.is_empty() {
        return true;
    }
    let trimmed = prefix.trim_end_matches('/');
    path == trimmed
        || path
            .strip_prefix(trimmed)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_table() {
        let table = [
            ("HTTP://Example.COM:80/a#frag", "http://example.com/a"),
            ("https://example.com:443/", "https://example.com/"),
            ("https://example.com:8443/x", "https://example.com:8443/x"),
            (
                "https://ex.com/a?utm_source=x&b=2&a=1&fbclid=z",
                "https://ex.com/a?a=1&b=2",
            ),
            ("https://ex.com/a?utm_medium=m&gclid=1", "https://ex.com/a"),
            ("https://ex.com/list?page=2", "https://ex.com/list?page=2"),
            ("https://ex.com/news/index.html", "https://ex.com/news/"),
            ("https://ex.com/index.html?x=1", "https://ex.com/?x=1"),
            ("https://user:pw@ex.com/p", "https://ex.com/p"),
            ("https://ex.com./p", "https://ex.com/p"),
            (
                "https://ex.com/cal?day=3&PHPSESSID=ab12",
                "https://ex.com/cal?day=3",
            ),
            (
                "https://ex.com/shop/item;jsessionid=A1B2C3?x=1",
                "https://ex.com/shop/item?x=1",
            ),
            (
                "https://ex.com/a;sid=9/b;v=2;JSESSIONID=x",
                "https://ex.com/a/b;v=2",
            ),
            (
                "https://ex.com/%7Euser/%61b%2fc",
                "https://ex.com/~user/ab%2Fc",
            ),
            ("https://ex.com/a%2520b", "https://ex.com/a%20b"),
            ("https://ex.com/a%25252520b", "https://ex.com/a%20b"),
            ("https://ex.com/100%25", "https://ex.com/100%25"),
            ("https://ex.com/100%", "https://ex.com/100%25"),
            ("https://ex.com/pct/%%", "https://ex.com/pct/%25%25"),
            ("https://ex.com/a%zz", "https://ex.com/a%25zz"),
            ("https://ex.com/s?q=5%", "https://ex.com/s?q=5%25"),
            ("https://ex.com/s?q=a%252Bb", "https://ex.com/s?q=a%2Bb"),
        ];
        for (input, want) in table {
            assert_eq!(parse(input).unwrap().as_str(), want, "{input}");
        }
        for bad in [
            "mailto:a@b.c",
            "javascript:void(0)",
            "ftp://x.com/f",
            "data:text/html,hi",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn pagination_stays_distinct() {
        let a = parse("https://ex.com/list?page=2").unwrap();
        let b = parse("https://ex.com/list?page=3").unwrap();
        assert_ne!(seen_hash(&a), seen_hash(&b));
    }

    #[test]
    fn seen_key_ignores_www_scheme_and_trailing_slash() {
        let table = [
            ("https://www.ex.com/a/", "ex.com/a"),
            ("http://ex.com/a", "ex.com/a"),
            ("https://ex.com/", "ex.com"),
            ("https://ex.com/a?b=1&a=2", "ex.com/a?a=2&b=1"),
        ];
        for (input, want) in table {
            assert_eq!(seen_key(&parse(input).unwrap()), want, "{input}");
        }
        let a = parse("https://www.ex.com/a/").unwrap();
        let b = parse("http://ex.com/a?utm_source=rss").unwrap();
        assert_eq!(seen_hash(&a), seen_hash(&b));
    }

    #[test]
    fn resolve_links() {
        let base = parse("https://ex.com/news/story").unwrap();
        assert_eq!(
            resolve(&base, "../about#team").unwrap().as_str(),
            "https://ex.com/about"
        );
        assert_eq!(
            resolve(&base, "//cdn.ex.com/x").unwrap().as_str(),
            "https://cdn.ex.com/x"
        );
        assert!(resolve(&base, "#top").is_none());
        assert!(resolve(&base, "mailto:x@y.z").is_none());
    }

    #[test]
    fn deny_list_matches_subdomains() {
        assert!(host_matches("m.facebook.com", "facebook.com"));
        assert!(host_matches("www.facebook.com", "facebook.com"));
        assert!(!host_matches("notfacebook.com", "facebook.com"));
    }
}
