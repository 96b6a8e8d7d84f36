//! What the publisher says a page is about: its section and keywords
//! (`article:section`, `keywords` and `news_keywords` meta, JSON-LD
//! `articleSection` and `keywords`) and the URL's section path. Shown beside
//! the verdict in `extract` and `check-url` JSON, with which labels name the
//! topic; **not part of the verdict or the score**, for three reasons:
//!
//! * the verdict must be computable from a stored record alone (title and
//!   text), so that `build` and `reextract` agree with the crawl; records do
//!   not carry these labels;
//! * the labelled articles the model is fitted on carry none of them, so no
//!   weight for them could be fitted, only guessed;
//! * a URL section is one site's filing scheme: in the labelled set one
//!   outlet's `/ai/` section holds most of the URLs with a topic section, so a
//!   weight fitted on it would be a weight for that site.
//!
//! A label names the topic when it holds a strong or `related` term, read as
//! [`super::Judge::hint`] reads a URL slug.

use serde::Serialize;
use serde_json::Value;

use super::Judge;

/// The publisher's own labels for a page.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Publisher {
    /// `article:section` or JSON-LD `articleSection`.
    pub section: Option<String>,
    /// `keywords` / `news_keywords` meta or JSON-LD `keywords`, at most [`MAX_KEYWORDS`].
    pub keywords: Vec<String>,
    /// The URL path's section: its segments before the slug, dates left out.
    pub url_section: Option<String>,
    /// The labels above that name the topic.
    pub on_topic: Vec<String>,
}

/// Keywords kept (some pages list hundreds).
pub const MAX_KEYWORDS: usize = 20;

/// The section and keywords of the JSON-LD objects (top level or `@graph`).
fn jsonld(values: &[Value]) -> (Option<String>, Vec<String>) {
    let mut section = None;
    let mut keywords = Vec::new();
    let objects = values.iter().flat_map(|v| {
        let graph = v.get("@graph").and_then(Value::as_array);
        std::iter::once(v).chain(graph.into_iter().flatten())
    });
    for o in objects {
        if section.is_none() {
            section = strings(o.get("articleSection")).into_iter().next();
        }
        if keywords.is_empty() {
            keywords = strings(o.get("keywords"));
        }
    }
    (section, keywords)
}

/// A string (split at commas) or an array of strings.
fn strings(v: Option<&Value>) -> Vec<String> {
    let parts: Vec<&str> = match v {
        Some(Value::String(s)) => s.split(',').collect(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    parts
        .into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The URL path's segments before the last one, without dates and numbers.
pub fn url_section(url: &str) -> Option<String> {
    let path = url.split("://").nth(1)?.split_once('/')?.1;
    let path = path.split(['?', '#']).next()?;
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (_, before) = segments.split_last()?;
    let kept: Vec<&str> = before
        .iter()
        .copied()
        .filter(|s| !s.chars().all(|c| c.is_ascii_digit()))
        .collect();
    (!kept.is_empty()).then(|| format!("/{}/", kept.join("/")))
}

impl Judge<'_> {
    /// The publisher's labels for a page: `metas` are its `(name, content)`
    /// meta pairs, `jsonld` its JSON-LD objects, `url` its address.
    pub fn publisher(
        &self,
        metas: &[(String, String)],
        jsonld_values: &[Value],
        url: Option<&str>,
    ) -> Publisher {
        let meta = |k: &str| {
            metas
                .iter()
                .find(|(n, v)| n == k && !v.trim().is_empty())
                .map(|(_, v)| v.trim().to_string())
        };
        let (ld_section, ld_keywords) = jsonld(jsonld_values);
        let section = meta("article:section").or(ld_section);
        let mut keywords = match meta("news_keywords").or_else(|| meta("keywords")) {
            Some(k) => strings(Some(&Value::String(k))),
            None => ld_keywords,
        };
        keywords.truncate(MAX_KEYWORDS);
        let url_section = url.and_then(url_section);
        let on_topic = section
            .iter()
            .chain(&keywords)
            .chain(&url_section)
            .filter(|l| self.names_topic(l))
            .cloned()
            .collect();
        Publisher {
            section,
            keywords,
            url_section,
            on_topic,
        }
    }

    /// A label holds a strong term (an ambiguous one counts: a publisher's
    /// `AI` section is not Amnesty International's) or a `related` term; a
    /// label without capitals (`/ai/`) is also read in capitals.
    fn names_topic(&self, label: &str) -> bool {
        let spaced = label.replace(['-', '_', '/', '+'], " ");
        let mut readings = vec![spaced];
        if !label.chars().any(char::is_uppercase) {
            readings.push(readings[0].to_uppercase());
        }
        readings
            .iter()
            .any(|t| self.vocab.strong.any(t) || self.vocab.related.any(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relevance::{Keywords, Rule};

    #[test]
    fn labels_are_read_and_judged() {
        let rule = Rule::new(&Keywords {
            strong_targets: vec!["AI".into(), "machine learning".into()],
            related: vec!["robot".into()],
            ..Keywords::default()
        });
        let judge = rule.judge(None);
        let metas = vec![
            ("article:section".to_string(), "Technology".to_string()),
            (
                "keywords".to_string(),
                "Machine Learning, startups, ".to_string(),
            ),
        ];
        let p = judge.publisher(
            &metas,
            &[],
            Some("https://ex.com/ai/2024/05/robots-take-over?x=1"),
        );
        assert_eq!(p.section.as_deref(), Some("Technology"));
        assert_eq!(p.keywords, vec!["Machine Learning", "startups"]);
        assert_eq!(p.url_section.as_deref(), Some("/ai/"));
        assert_eq!(p.on_topic, vec!["Machine Learning", "/ai/"]);
        let ld: Value = serde_json::from_str(
            r#"{"@graph": [{"@type": "NewsArticle", "articleSection": ["Robots", "Tech"],
                "keywords": ["sport"]}]}"#,
        )
        .expect("json");
        let p = judge.publisher(&[], &[ld], Some("https://ex.com/2024/05/01/story"));
        assert_eq!(p.section.as_deref(), Some("Robots"));
        assert_eq!(p.url_section, None);
        assert_eq!(p.on_topic, vec!["Robots"]);
        assert_eq!(url_section("https://ex.com/story"), None);
        assert_eq!(
            url_section("https://ex.com/tech/machine-learning/story").as_deref(),
            Some("/tech/machine-learning/")
        );
    }
}
