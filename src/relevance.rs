//! The two-tier relevance rule, computable from a stored record alone (title
//! and text; the lede is the first paragraph), so that crawl and build agree.
//!
//! OWNER: extraction work (issue 3). This is the interface; bodies are placeholders.

use serde::Serialize;

use crate::config::Keywords;

/// A compiled rule built once from `config.yml`'s `keywords`.
#[derive(Debug, Clone)]
pub struct Rule {
    pub keywords: Keywords,
}

/// How often one term matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermCount {
    pub term: String,
    pub count: u32,
}

/// The rule's verdict and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Relevance {
    pub strong_mentions: u32,
    pub broad_mentions: u32,
    pub strong_terms: Vec<TermCount>,
    pub broad_terms: Vec<TermCount>,
    pub strong_in_title_or_lede: bool,
    /// Strong mentions per 1,000 words.
    pub density: f64,
    pub relevant: bool,
    /// Which rule decided, in words.
    pub reason: String,
}

impl Rule {
    pub fn new(keywords: &Keywords) -> Rule {
        Rule {
            keywords: keywords.clone(),
        }
    }

    /// Evaluate the rule on a title and a text whose paragraphs are separated by `\n`.
    pub fn evaluate(&self, _title: &str, _text: &str) -> Relevance {
        Relevance {
            strong_mentions: 0,
            broad_mentions: 0,
            strong_terms: vec![],
            broad_terms: vec![],
            strong_in_title_or_lede: false,
            density: 0.0,
            relevant: false,
            reason: "placeholder".into(),
        }
    }
}

impl Relevance {
    /// Broad terms found, most frequent first: the record's `keywords`.
    pub fn keywords(&self) -> Vec<String> {
        self.broad_terms.iter().map(|t| t.term.clone()).collect()
    }
}
