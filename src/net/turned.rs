//! Publishers who turn the crawler away: a bot challenge (a CDN's wall or a
//! JavaScript interstitial) or `402 Payment Required` (pay per crawl). Both
//! are answers of their own, not pages and not transient failures: they are
//! never stored, their links are never followed, and each is counted under
//! its own class ([`FailureClass::Challenge`], [`FailureClass::PaymentRequired`]).
//!
//! Pure: [`classify`] looks at a status, the headers and the start of the
//! body. A challenge is recognised by
//! * a header a CDN or WAF sets on its challenge answers (`cf-mitigated:
//!   challenge`, `x-amzn-waf-action: challenge|captcha`), on any status;
//! * on a 403, 429 or 503: the challenge page's structure (below, score 2);
//! * on a 2xx: the same, on a thin page (score 3: a page that merely quotes
//!   "Just a moment..." in an article about bot walls is not one).
//!
//! The structure score: a challenge title (`Just a moment...`, `Attention
//! Required!`, `Checking your browser`, ...) 2; a challenge script or form
//! (`window._cf_chl_opt`, `/cdn-cgi/challenge-platform/h/`, `id="challenge-form"`,
//! `captcha-delivery.com`, `px-captcha`, ...) 2; a challenge sentence
//! ("Enable JavaScript and cookies to continue", "Verify you are human", ...) 1;
//! a thin page (under [`THIN_BYTES`] bytes) 1. No host names, no site rules.
//!
//! What the crawl does with them: a 402 is the publisher reserving its
//! content, recorded in the seen-set as failed for good (`payment_required`,
//! with its `crawler-price` kept) and asked again after
//! `retry_failed_after_days`; a challenged page is kept for the next run, and a
//! challenged seed or listing keeps its source's cut-off.

use crate::record::FailureClass;

/// Bytes of the body looked at.
const HEAD_BYTES: usize = 64 * 1024;

/// A page shorter than this is thin (interstitials are a few kilobytes).
pub(crate) const THIN_BYTES: usize = 32 * 1024;

/// Titles of challenge pages (lower case, matched at the title's start).
const TITLES: &[&str] = &[
    "just a moment",
    "attention required",
    "checking your browser",
    "verifying you are human",
    "human verification",
    "security check",
    "one more step",
    "please wait...",
    "ddos-guard",
    "pardon our interruption",
    "are you a robot",
    "access to this page has been denied",
];

/// Scripts, forms and elements only challenge pages carry (lower case).
/// Not `/cdn-cgi/challenge-platform/scripts/`: that script rides on ordinary pages.
const SCRIPTS: &[&str] = &[
    "window._cf_chl_opt",
    "/cdn-cgi/challenge-platform/h/",
    "id=\"challenge-form\"",
    "id=\"challenge-running\"",
    "class=\"cf-turnstile\"",
    "captcha-delivery.com",
    "id=\"px-captcha\"",
    "/_incapsula_resource",
    "awswafintegration",
    "sec-if-cpt-container",
];

/// Sentences of challenge pages (lower case).
const SENTENCES: &[&str] = &[
    "enable javascript and cookies to continue",
    "checking if the site connection is secure",
    "needs to review the security of your connection",
    "verify you are human",
    "please complete the security check",
    "please enable cookies",
    "press & hold to confirm",
];

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turned {
    /// A bot challenge; `marker` says what showed it.
    Challenge { status: u16, marker: String },
    /// `402 Payment Required`, with what pay-per-crawl says beside it: the
    /// price asked (`crawler-price`), the error code of a refused payment
    /// (`crawler-error`), and a terms link (`Link` with `rel` `terms-of-service`,
    /// `terms` or `payment`), each if given. The crawler never pays.
    Payment {
        price: Option<String>,
        error: Option<String>,
        terms: Option<String>,
    },
}

impl Turned {
    pub fn class(&self) -> FailureClass {
        match self {
            Turned::Challenge { .. } => FailureClass::Challenge,
            Turned::Payment { .. } => FailureClass::PaymentRequired,
        }
    }

    /// In words, for the event log.
    pub fn describe(&self) -> String {
        match self {
            Turned::Challenge { status, marker } => {
                format!("bot challenge ({status}, {marker})")
            }
            Turned::Payment {
                price,
                error,
                terms,
            } => payment_words(price.as_deref(), error.as_deref(), terms.as_deref()),
        }
    }
}

/// `payment required (402, price USD 0.01, crawler-error 2, terms https://...)`.
pub fn payment_words(price: Option<&str>, error: Option<&str>, terms: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(p) = price {
        parts.push(format!("price {p}"));
    }
    if let Some(e) = error {
        parts.push(format!("crawler-error {e}"));
    }
    if let Some(t) = terms {
        parts.push(format!("terms {t}"));
    }
    if parts.is_empty() {
        "payment required (402)".to_string()
    } else {
        format!("payment required (402, {})", parts.join(", "))
    }
}

/// The target of a `Link` whose `rel` names terms (`terms-of-service`,
/// `terms`, `payment`, `license`): where a 402 says its terms are.
fn terms_link(headers: &[(String, String)]) -> Option<String> {
    headers
        .iter()
        .filter(|(k, _)| k == "link")
        .flat_map(|(_, v)| v.split(','))
        .find_map(|link| {
            let (target, params) = link.trim().strip_prefix('<')?.split_once('>')?;
            let rel = params.split(';').find_map(|p| {
                let (k, v) = p.trim().split_once('=')?;
                k.trim()
                    .eq_ignore_ascii_case("rel")
                    .then(|| v.trim().trim_matches('"').to_ascii_lowercase())
            })?;
            rel.split_whitespace()
                .any(|r| matches!(r, "terms-of-service" | "terms" | "payment" | "license"))
                .then(|| target.trim().chars().take(300).collect())
        })
}

/// Was this answer a challenge or a payment demand? `headers` have
/// lower-case names; `body` is the decoded body (empty when not read).
pub(crate) fn classify(status: u16, headers: &[(String, String)], body: &[u8]) -> Option<Turned> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_ascii_lowercase())
    };
    if status == 402 {
        let first = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| headers.iter().find(|(k, _)| k == n))
                .map(|(_, v)| v.trim().chars().take(80).collect::<String>())
                .filter(|v| !v.is_empty())
        };
        return Some(Turned::Payment {
            price: first(&["crawler-price", "x-crawler-price"]),
            error: first(&["crawler-error", "x-crawler-error"]),
            terms: terms_link(headers),
        });
    }
    let marker = if header("cf-mitigated").is_some_and(|v| v == "challenge") {
        Some("cf-mitigated: challenge".to_string())
    } else if let Some(v) =
        header("x-amzn-waf-action").filter(|v| v == "challenge" || v == "captcha")
    {
        Some(format!("x-amzn-waf-action: {v}"))
    } else {
        let needed = match status {
            200..=299 => 3,
            403 | 429 | 503 => 2,
            _ => return None,
        };
        page_markers(body)
            .filter(|(score, _)| *score >= needed)
            .map(|(_, m)| m)
    };
    marker.map(|marker| Turned::Challenge { status, marker })
}

/// The structure score of a page and its strongest marker (see the module doc).
///
/// Every marker is ASCII, so the body's first [`HEAD_BYTES`] are searched
/// as bytes, without case for ASCII letters, in one pass of one automaton
/// (titles, scripts and sentences together); of several markers of a kind,
/// the first in its list is named.
fn page_markers(body: &[u8]) -> Option<(u32, String)> {
    if body.is_empty() {
        return None;
    }
    let head = &body[..body.len().min(HEAD_BYTES)];
    let markers = Markers::get();
    let mut found = vec![false; markers.kinds.len()];
    // Matches come in order of their end; every `<title` is as long, so the
    // first one seen is the first in the page.
    let mut title_at = None;
    for m in markers.automaton.find_overlapping_iter(head) {
        let i = m.pattern().as_usize();
        if i == Markers::TITLE_TAG && title_at.is_none() {
            title_at = Some(m.end());
        }
        found[i] = true;
    }
    let first_of =
        |kind: Kind| (0..markers.kinds.len()).find(|&i| found[i] && markers.kinds[i].0 == kind);
    let mut score = 0;
    let mut strongest = None;
    if let Some(at) = title_at
        && let Some(t) = title_text(head, at)
        && TITLES.iter().any(|m| t.starts_with(m))
    {
        score += 2;
        let end = t.find('<').unwrap_or(t.len()).min(60);
        strongest = Some(format!("title: {}", t[..end].trim()));
    }
    if let Some(i) = first_of(Kind::Script) {
        score += 2;
        strongest.get_or_insert_with(|| format!("page: {}", markers.kinds[i].1));
    }
    if let Some(i) = first_of(Kind::Sentence) {
        score += 1;
        strongest.get_or_insert_with(|| format!("text: {}", markers.kinds[i].1));
    }
    if body.len() < THIN_BYTES {
        score += 1;
    }
    strongest.map(|m| (score, m))
}

/// The start of the text of the `<title` tag whose name ends at `at`, in
/// lower case (as much as a title marker and the marker's name need).
fn title_text(head: &[u8], at: usize) -> Option<String> {
    let open = head[at..].iter().position(|&b| b == b'>')? + at + 1;
    let rest = &head[open..head.len().min(open + 256)];
    Some(String::from_utf8_lossy(rest).trim_start().to_lowercase())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    TitleTag,
    Script,
    Sentence,
}

/// One automaton of every marker, built on first use.
struct Markers {
    automaton: aho_corasick::AhoCorasick,
    /// Per pattern: its kind and its text.
    kinds: Vec<(Kind, &'static str)>,
}

impl Markers {
    /// The pattern `<title`, first.
    const TITLE_TAG: usize = 0;

    fn get() -> &'static Markers {
        static MARKERS: std::sync::OnceLock<Markers> = std::sync::OnceLock::new();
        MARKERS.get_or_init(|| {
            let kinds: Vec<(Kind, &'static str)> = std::iter::once((Kind::TitleTag, "<title"))
                .chain(SCRIPTS.iter().map(|s| (Kind::Script, *s)))
                .chain(SENTENCES.iter().map(|s| (Kind::Sentence, *s)))
                .collect();
            let automaton = crate::phrases::builder()
                .ascii_case_insensitive(true)
                .build(kinds.iter().map(|(_, s)| s))
                .expect("a small list of markers");
            Markers { automaton, kinds }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const INTERSTITIAL: &str = "<!DOCTYPE html><html><head><title>Just a moment...</title></head>\
        <body><noscript>Enable JavaScript and cookies to continue</noscript>\
        <script>(function(){window._cf_chl_opt={cvId:'3'};})();</script></body></html>";

    #[test]
    fn challenges_by_header_and_by_structure() {
        let wall = classify(403, &h(&[("cf-mitigated", "challenge")]), b"");
        assert_eq!(wall.map(|t| t.class()), Some(FailureClass::Challenge));
        let page = classify(200, &[], INTERSTITIAL.as_bytes()).expect("interstitial");
        assert!(
            matches!(&page, Turned::Challenge { status: 200, marker } if marker.contains("just a moment")),
            "{page:?}"
        );
        // A bare title on a thin 200: still one (2 + thin 1).
        let bare =
            "<html><head><title>Attention Required! | Example</title></head><body>x</body></html>";
        assert!(classify(200, &[], bare.as_bytes()).is_some());
        // A 503 whose page carries the challenge script only.
        let script = "<html><body><div id=\"challenge-running\"></div></body></html>";
        assert!(classify(503, &[], script.as_bytes()).is_some());
        // A WAF's header.
        let waf = classify(202, &h(&[("x-amzn-waf-action", "captcha")]), b"");
        assert!(waf.is_some());
    }

    #[test]
    fn ordinary_pages_and_errors_are_not_challenges() {
        // An article about bot walls quoting the sentence, on a page of real size.
        let article = format!(
            "<html><head><title>Why sites say 'Enable JavaScript'</title></head><body><article>\
             <p>Readers see \"Enable JavaScript and cookies to continue\" more often.</p>{}</article>\
             <script src=\"/cdn-cgi/challenge-platform/scripts/jsd/main.js\"></script></body></html>",
            "<p>Long text about content delivery networks and crawlers.</p>".repeat(800)
        );
        assert_eq!(classify(200, &[], article.as_bytes()), None);
        assert_eq!(
            classify(403, &[], b"<html><title>Forbidden</title></html>"),
            None
        );
        assert_eq!(classify(404, &[], INTERSTITIAL.as_bytes()), None);
        assert_eq!(
            classify(200, &h(&[("cf-mitigated", "none")]), b"<p>hi</p>"),
            None
        );
    }

    #[test]
    fn payment_required_with_its_price() {
        let t = classify(402, &h(&[("crawler-price", "USD 0.01")]), b"");
        assert_eq!(
            t,
            Some(Turned::Payment {
                price: Some("USD 0.01".into()),
                error: None,
                terms: None,
            })
        );
        assert_eq!(
            t.unwrap().describe(),
            "payment required (402, price USD 0.01)"
        );
        // A refused payment: its error code and the terms link are kept.
        let t = classify(
            402,
            &h(&[
                ("crawler-price", "USD 0.02"),
                ("crawler-error", "3"),
                ("link", "<https://pay.test/terms>; rel=\"terms-of-service\""),
            ]),
            b"",
        );
        assert_eq!(
            t.unwrap().describe(),
            "payment required (402, price USD 0.02, crawler-error 3, terms https://pay.test/terms)"
        );
        assert_eq!(
            classify(402, &[], b"").map(|t| t.class()),
            Some(FailureClass::PaymentRequired)
        );
    }

    /// The markers as they were first read: the lower-cased head searched
    /// phrase by phrase. The automaton must give the same score and name.
    fn page_markers_oracle(body: &[u8]) -> Option<(u32, String)> {
        if body.is_empty() {
            return None;
        }
        let head = String::from_utf8_lossy(&body[..body.len().min(HEAD_BYTES)]).to_lowercase();
        let mut score = 0;
        let mut strongest = None;
        let title = head
            .find("<title")
            .and_then(|i| head[i..].find('>').map(|j| i + j + 1))
            .map(|s| head[s..].trim_start())
            .filter(|t| TITLES.iter().any(|m| t.starts_with(m)));
        if let Some(t) = title {
            score += 2;
            let end = t.find('<').unwrap_or(t.len()).min(60);
            strongest = Some(format!("title: {}", t[..end].trim()));
        }
        if let Some(s) = SCRIPTS.iter().find(|m| head.contains(*m)) {
            score += 2;
            strongest.get_or_insert_with(|| format!("page: {s}"));
        }
        if let Some(s) = SENTENCES.iter().find(|m| head.contains(*m)) {
            score += 1;
            strongest.get_or_insert_with(|| format!("text: {s}"));
        }
        if body.len() < THIN_BYTES {
            score += 1;
        }
        strongest.map(|m| (score, m))
    }

    #[test]
    fn one_pass_of_markers_reads_as_the_phrase_by_phrase_search() {
        let filler = "<p>Ordinary text of an article.</p>".repeat(2_000);
        let mut bodies: Vec<String> = vec![
            INTERSTITIAL.to_string(),
            INTERSTITIAL.to_uppercase(),
            String::new(),
            "<TITLE>  Just A Moment... please</TITLE>".to_string(),
            "<title>News</title><p>Verify You Are Human</p>".to_string(),
            // Two scripts and two sentences: the first of each list is named.
            "<div class=\"cf-turnstile\"></div><script>window._cf_chl_opt={}</script>\
             <p>please enable cookies</p><p>verify you are human</p>"
                .to_string(),
            // A marker past the head is not looked at; one inside it is.
            format!("{filler}{filler}<p>verify you are human</p>"),
            format!("<title>Security check</title>{filler}"),
            "<title>Über uns</title><p>İstanbul verify you are human</p>".to_string(),
        ];
        for s in SCRIPTS.iter().chain(SENTENCES).chain(TITLES) {
            bodies.push(format!("<html><title>{s}</title><body>{s}</body></html>"));
            bodies.push(format!("<p>{}</p>", s.to_uppercase()));
        }
        for b in &bodies {
            assert_eq!(
                page_markers(b.as_bytes()),
                page_markers_oracle(b.as_bytes()),
                "{}",
                &b[..b.len().min(120)]
            );
        }
        assert_eq!(
            page_markers(bodies[5].as_bytes()).map(|(_, m)| m),
            Some("page: window._cf_chl_opt".to_string())
        );
    }
}
