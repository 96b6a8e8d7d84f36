//! Paywalls: whether a page says its article is free to read, and which
//! elements hold the part reserved for subscribers.
//!
//! `accessible_for_free`, in this order: JSON-LD `isAccessibleForFree`
//! (the article's object first; a `hasPart` marked `false` counts too),
//! the `article:content_tier` meta (`free`, `metered`, `locked`), then
//! paywall markup in the body (an element named as a paywall, or the
//! `cssSelector` a JSON-LD part names); `None` when the page says nothing.
//!
//! Publishers that serve the whole text to crawlers mark the subscribers'
//! part so (Google's structured data for paywalled content asks for it),
//! and the text pass reads what such an element holds as the article's
//! (see `text`), hidden or not.

use serde_json::Value;

use super::dom::{Dom, NodeId};
use super::meta::Meta;
use crate::phrases::Phrases;

/// Class names and ids of paywalled parts and paywall prompts.
pub(crate) static PAYWALL: Phrases = Phrases::pattern(
    "paywall|pay-wall|regwall|reg-wall|subscribers?-only|subscriber-?content|premium-?(content|article|text)|paid-?content|plus-?content|members?-only|metered-?content|abo-?only|(article|content|text)--?(locked|premium|paid)|locked-?content|is-locked",
);

/// What the page says about free access, and the selectors of its
/// paywalled parts.
#[derive(Debug, Default, Clone)]
pub struct Marks {
    /// JSON-LD or meta verdict.
    pub declared: Option<bool>,
    /// Class names (`.x`) and ids (`#x`) from JSON-LD `cssSelector`s of
    /// parts not free to read, lower-cased, without the `.` or `#`.
    pub classes: Vec<String>,
    pub ids: Vec<String>,
    /// Leave the paywalled parts out (the text a reader without a
    /// subscription sees) rather than read them.
    pub free_only: bool,
}

/// Read the page's declarations.
pub fn marks(m: &Meta) -> Marks {
    let mut out = Marks::default();
    let articles = m
        .articles()
        .chain(m.jsonld.iter().filter(|v| !super::meta::is_article(v)));
    for v in articles {
        if let Some(free) = v.get("isAccessibleForFree").and_then(as_bool) {
            out.declared.get_or_insert(free);
        }
        let parts = match v.get("hasPart") {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(p @ Value::Object(_)) => vec![p],
            _ => vec![],
        };
        for p in parts {
            if p.get("isAccessibleForFree").and_then(as_bool) != Some(false) {
                continue;
            }
            out.declared.get_or_insert(false);
            let sel = p.get("cssSelector").and_then(Value::as_str).unwrap_or("");
            for s in sel.split(',').map(str::trim) {
                if let Some(c) = s.strip_prefix('.').filter(|c| simple(c)) {
                    out.classes.push(c.to_ascii_lowercase());
                } else if let Some(i) = s.strip_prefix('#').filter(|c| simple(c)) {
                    out.ids.push(i.to_ascii_lowercase());
                }
            }
        }
    }
    if out.declared.is_none()
        && let Some(tier) = m.get(&["article:content_tier"])
    {
        match tier.trim().to_ascii_lowercase().as_str() {
            "free" => out.declared = Some(true),
            "locked" | "metered" => out.declared = Some(false),
            _ => {}
        }
    }
    out
}

/// A selector of one class or id, nothing else.
fn simple(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

impl Marks {
    /// Is the element named as a paywalled part or a paywall prompt? `ci`
    /// is its [`Dom::class_id`].
    pub fn is_paywall(&self, dom: &Dom, id: NodeId, ci: &str) -> bool {
        self.is_paywall_named(dom, id, !ci.is_empty() && PAYWALL.contains(ci))
    }

    /// [`Marks::is_paywall`], given whether the class names and id hold
    /// a paywall word ([`PAYWALL`]).
    pub fn is_paywall_named(&self, dom: &Dom, id: NodeId, named: bool) -> bool {
        if named {
            return true;
        }
        if dom
            .attrs(id)
            .iter()
            .any(|a| a.name.local.contains("paywall"))
        {
            return true;
        }
        if !self.classes.is_empty()
            && let Some(c) = dom.attr(id, "class")
            && c.split_ascii_whitespace()
                .any(|t| self.classes.iter().any(|k| t.eq_ignore_ascii_case(k)))
        {
            return true;
        }
        dom.attr(id, "id")
            .is_some_and(|i| self.ids.iter().any(|k| i.trim().eq_ignore_ascii_case(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(html: &str) -> (Dom, Marks) {
        let p = super::super::prepass::prepare(html);
        let dom = Dom::parse(&p.html);
        let m = super::super::meta::gather(&dom, None, &p.jsonld);
        let marks = marks(&m);
        (dom, marks)
    }

    #[test]
    fn declarations_in_order() {
        let ld = r#"<script type="application/ld+json">{"@type":"NewsArticle","isAccessibleForFree":"False","hasPart":{"@type":"WebPageElement","isAccessibleForFree":false,"cssSelector":".rest, #more"}}</script><meta property="article:content_tier" content="free">"#;
        let (_, m) = page(ld);
        assert_eq!(m.declared, Some(false));
        assert_eq!(
            (m.classes.as_slice(), m.ids.as_slice()),
            (&["rest".to_string()][..], &["more".to_string()][..])
        );
        let (_, m) = page(r#"<meta property="article:content_tier" content="metered">"#);
        assert_eq!(m.declared, Some(false));
        let (_, m) = page(
            r#"<script type="application/ld+json">{"@type":"Article","isAccessibleForFree":true}</script>"#,
        );
        assert_eq!(m.declared, Some(true));
        let (_, m) = page("<p>nothing</p>");
        assert_eq!(m.declared, None);
    }

    #[test]
    fn paywall_elements_by_name_attribute_or_selector() {
        let (dom, m) = page(
            r#"<script type="application/ld+json">{"@type":"Article","hasPart":{"isAccessibleForFree":false,"cssSelector":".abc"}}</script><div id=a class="article-paywall"></div><div id=b data-paywall="1"></div><div id=c class="x abc"></div><div id=d class="article-body"></div>"#,
        );
        let by = |v: &str| {
            dom.descendants(0)
                .find(|&d| dom.attr(d, "id") == Some(v))
                .unwrap()
        };
        let pw = |v: &str| m.is_paywall(&dom, by(v), &dom.class_id(by(v)));
        assert!(pw("a"));
        assert!(pw("b"));
        assert!(pw("c"));
        assert!(!pw("d"));
    }
}

#[cfg(test)]
mod class_word_tests {
    use super::PAYWALL;

    #[test]
    fn paywall_names_match_their_regex() {
        let re = regex::Regex::new(r"paywall|pay-wall|regwall|reg-wall|subscribers?-only|subscriber-?content|premium-?(content|article|text)|paid-?content|plus-?content|members?-only|metered-?content|abo-?only|(article|content|text)--?(locked|premium|paid)|locked-?content|is-locked").unwrap();
        for n in crate::phrases::oracle::class_texts(&PAYWALL.list()) {
            assert_eq!(PAYWALL.contains(&n), re.is_match(&n), "on {n:?}");
        }
    }
}
