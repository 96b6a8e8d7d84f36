//! What a text says about its topic, gathered in one pass: strong mentions in
//! prose and in chrome, mentions repeated in the same words (boilerplate),
//! ambiguous terms without a context word near them, how many of the story's
//! paragraphs mention the topic, and whether the title or the lede does.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::Vocab;
use super::prose::{self, PARAGRAPH_WORDS};

/// The evidence the score is computed from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// Words in prose sentences (see [`prose`]).
    pub prose_words: u32,
    /// Strong mentions in prose sentences that count: each in distinct
    /// surrounding words, ambiguous terms only with a context word.
    pub prose_mentions: u32,
    /// Strong mentions in chrome (menus, headline lists, promotions): not counted.
    pub chrome_mentions: u32,
    /// Prose mentions in the same surrounding words as an earlier one: not counted.
    pub repeated_mentions: u32,
    /// Ambiguous terms with no context word in their paragraph: not counted.
    pub unconfirmed_mentions: u32,
    /// Distinct strong terms among the counted mentions.
    pub distinct_terms: u32,
    /// Paragraphs with at least [`PARAGRAPH_WORDS`] prose words.
    pub paragraphs: u32,
    /// Of those, the ones with a counted mention.
    pub paragraphs_with_mentions: u32,
    /// Counted strong mentions in the title.
    pub title_mentions: u32,
    /// Counted strong mentions in the lede (the first paragraph that is mostly prose).
    pub lede_mentions: u32,
    /// Of the story's first [`EARLY_PARAGRAPHS`] paragraphs, the ones with a counted mention.
    pub early_paragraphs_with_mentions: u32,
    /// Ambiguous strong mentions in the title that did not count (no context
    /// word in the title, the group unconfirmed in the text).
    pub title_unconfirmed_mentions: u32,
    /// Broad (`targets`) mentions in the title.
    pub title_broad_mentions: u32,
    /// `related` mentions in the title.
    pub title_related_mentions: u32,
}

impl Evidence {
    /// Share of the story's paragraphs that mention the topic, counting at
    /// least [`MIN_PARAGRAPHS`] (a listing run together into one or two
    /// paragraphs does not spread).
    pub fn spread(&self) -> f64 {
        f64::from(self.paragraphs_with_mentions) / f64::from(self.paragraphs.max(MIN_PARAGRAPHS))
    }
}

/// Fewest paragraphs the spread divides by.
pub const MIN_PARAGRAPHS: u32 = 3;

/// The story's first paragraphs, where a story about the topic says so.
pub const EARLY_PARAGRAPHS: u32 = 3;

/// Bytes of context on each side that make a mention's "surrounding words".
const CONTEXT_BYTES: usize = 16;

/// One strong mention in the text.
struct Mention {
    term: usize,
    paragraph: usize,
    context: u64,
    /// In a prose sentence.
    prose: bool,
    /// An ambiguous term with a context word near it (see [`gather`]); always
    /// true for unambiguous terms.
    local: bool,
}

/// A paragraph's words.
struct Paragraph {
    prose_words: u32,
    all_words: u32,
}

/// Gather the evidence from a title and a text whose paragraphs are separated by `\n`.
///
/// An ambiguous group counts in the whole text ("one sense per discourse")
/// when at least as many of its prose mentions have a context word in their
/// paragraph as have none; otherwise only those with one count.
pub(super) fn gather(rule: &Vocab, title: &str, text: &str) -> Evidence {
    let mut mentions: Vec<Mention> = Vec::new();
    let mut paragraphs: Vec<Paragraph> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    for paragraph in text.split('\n') {
        let paragraph = paragraph.trim();
        if paragraph.is_empty() {
            continue;
        }
        let first = mentions.len();
        let index = paragraphs.len();
        let mut p = Paragraph {
            prose_words: 0,
            all_words: 0,
        };
        for s in prose::sentences(paragraph) {
            p.all_words += s.words;
            if s.prose {
                p.prose_words += s.words;
            }
            rule.strong.each(s.text, |start, end, term| {
                mentions.push(Mention {
                    term,
                    paragraph: index,
                    context: context_hash(s.text, start, end),
                    prose: s.prose,
                    local: true,
                });
            });
        }
        paragraphs.push(p);
        texts.push(paragraph);
        spans.push(first..mentions.len());
    }
    // A context word in the paragraph, the one before or after, or the title
    // confirms an ambiguous term; so does an unambiguous strong term in the paragraph.
    for (index, span) in spans.iter().enumerate() {
        let here = &mut mentions[span.clone()];
        let has_plain = here.iter().any(|m| rule.ambiguous_group[m.term].is_none());
        let mut group_ok: HashMap<usize, bool> = HashMap::new();
        for m in here.iter_mut() {
            if let Some(g) = rule.ambiguous_group[m.term] {
                m.local = *group_ok.entry(g).or_insert_with(|| {
                    has_plain
                        || rule.context[g].any(title)
                        || texts[index.saturating_sub(1)..(index + 2).min(texts.len())]
                            .iter()
                            .any(|t| rule.context[g].any(t))
                });
            }
        }
    }
    // Per ambiguous group: prose mentions with and without local context.
    let mut votes: HashMap<usize, (u32, u32)> = HashMap::new();
    for m in mentions.iter().filter(|m| m.prose) {
        if let Some(g) = rule.ambiguous_group[m.term] {
            let v = votes.entry(g).or_default();
            if m.local {
                v.0 += 1;
            } else {
                v.1 += 1;
            }
        }
    }
    let confirmed = |g: usize| votes.get(&g).is_some_and(|&(yes, no)| yes > 0 && yes >= no);

    let mut ev = Evidence::default();
    let mut seen_contexts: HashSet<u64> = HashSet::new();
    let mut terms_used: HashSet<usize> = HashSet::new();
    let mut counted_in = vec![0u32; paragraphs.len()];
    for m in &mentions {
        if !m.prose {
            ev.chrome_mentions += 1;
            continue;
        }
        if !m.local && !rule.ambiguous_group[m.term].is_some_and(confirmed) {
            ev.unconfirmed_mentions += 1;
            continue;
        }
        if !seen_contexts.insert(m.context) {
            ev.repeated_mentions += 1;
            continue;
        }
        counted_in[m.paragraph] += 1;
        terms_used.insert(m.term);
    }
    let mut lede_found = false;
    for (p, &counted) in paragraphs.iter().zip(&counted_in) {
        ev.prose_words += p.prose_words;
        ev.prose_mentions += counted;
        if p.prose_words >= PARAGRAPH_WORDS {
            ev.paragraphs += 1;
            ev.paragraphs_with_mentions += u32::from(counted > 0);
            if ev.paragraphs <= EARLY_PARAGRAPHS {
                ev.early_paragraphs_with_mentions += u32::from(counted > 0);
            }
            if !lede_found && p.prose_words * 2 >= p.all_words {
                lede_found = true;
                ev.lede_mentions = counted;
            }
        }
    }
    ev.distinct_terms = terms_used.len() as u32;
    let mut title_plain = false;
    rule.strong.each(title, |_, _, i| {
        title_plain |= rule.ambiguous_group[i].is_none();
    });
    rule.strong.each(title, |_, _, i| {
        let counted = match rule.ambiguous_group[i] {
            None => true,
            Some(g) => title_plain || confirmed(g) || rule.context[g].any(title),
        };
        ev.title_mentions += u32::from(counted);
        ev.title_unconfirmed_mentions += u32::from(!counted);
    });
    ev.title_broad_mentions = rule.broad.total(title);
    ev.title_related_mentions = rule.related.total(title);
    ev
}

/// Hash of a mention's surrounding words, lower-cased.
fn context_hash(text: &str, start: usize, end: usize) -> u64 {
    let lo = floor_boundary(text, start.saturating_sub(CONTEXT_BYTES));
    let hi = floor_boundary(text, (end + CONTEXT_BYTES).min(text.len()));
    xxhash_rust::xxh3::xxh3_64(text[lo..hi].to_lowercase().as_bytes())
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// In a text longer than `per_words` prose words, mentions count as if the
/// text had been `per_words` long (passing mentions add up in long texts).
/// Here, a leaf both `score` and `model` read, so neither imports the other.
pub(super) fn long_text_factor(prose_words: u32, per_words: u32) -> f64 {
    if per_words == 0 || prose_words <= per_words {
        1.0
    } else {
        f64::from(per_words) / f64::from(prose_words)
    }
}
