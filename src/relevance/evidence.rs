//! What a text says about its topic, gathered in one pass: strong mentions in
//! prose and in chrome, mentions repeated in the same words (boilerplate),
//! ambiguous terms without a context word near them, how many of the story's
//! paragraphs mention the topic, and whether the title or the lede does.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::prose::{self, PARAGRAPH_WORDS};
use super::Rule;

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
}

impl Evidence {
    /// Share of the story's paragraphs that mention the topic.
    pub fn spread(&self) -> f64 {
        if self.paragraphs == 0 {
            0.0
        } else {
            f64::from(self.paragraphs_with_mentions) / f64::from(self.paragraphs)
        }
    }
}

/// Bytes of context on each side that make a mention's "surrounding words".
const CONTEXT_BYTES: usize = 16;

/// Gather the evidence from a title and a text whose paragraphs are separated by `\n`.
pub(super) fn gather(rule: &Rule, title: &str, text: &str) -> Evidence {
    let mut ev = Evidence::default();
    let mut seen_contexts: HashSet<u64> = HashSet::new();
    let mut terms_used: HashSet<usize> = HashSet::new();
    // Ambiguous groups confirmed somewhere in the body (confirms the title).
    let mut confirmed_groups: HashSet<usize> = HashSet::new();
    let mut lede_found = false;
    let mut mentions: Vec<(usize, bool)> = Vec::new();
    for paragraph in text.split('\n') {
        let paragraph = paragraph.trim();
        if paragraph.is_empty() {
            continue;
        }
        // (term, prose, context hash) of each mention in this paragraph.
        mentions.clear();
        let mut contexts: Vec<u64> = Vec::new();
        let mut prose_words = 0;
        let mut all_words = 0;
        for s in prose::sentences(paragraph) {
            all_words += s.words;
            if s.prose {
                prose_words += s.words;
            }
            rule.strong.each(s.text, |start, end, i| {
                mentions.push((i, s.prose));
                contexts.push(context_hash(s.text, start, end));
            });
        }
        if all_words == 0 && mentions.is_empty() {
            continue;
        }
        let mut counted = 0;
        let mut group_ok: HashMap<usize, bool> = HashMap::new();
        let has_plain = mentions
            .iter()
            .any(|&(i, _)| rule.ambiguous_group[i].is_none());
        for (&(i, prose), &ctx) in mentions.iter().zip(&contexts) {
            if !prose {
                ev.chrome_mentions += 1;
                continue;
            }
            if let Some(g) = rule.ambiguous_group[i] {
                let ok = *group_ok
                    .entry(g)
                    .or_insert_with(|| has_plain || rule.context[g].any(paragraph));
                if !ok {
                    ev.unconfirmed_mentions += 1;
                    continue;
                }
                confirmed_groups.insert(g);
            }
            if !seen_contexts.insert(ctx) {
                ev.repeated_mentions += 1;
                continue;
            }
            counted += 1;
            terms_used.insert(i);
        }
        ev.prose_words += prose_words;
        ev.prose_mentions += counted;
        if prose_words >= PARAGRAPH_WORDS {
            ev.paragraphs += 1;
            ev.paragraphs_with_mentions += u32::from(counted > 0);
            if !lede_found && prose_words * 2 >= all_words {
                lede_found = true;
                ev.lede_mentions = counted;
            }
        }
    }
    ev.distinct_terms = terms_used.len() as u32;
    let title_plain = rule.strong.any(title) && {
        let mut plain = false;
        rule.strong.each(title, |_, _, i| {
            plain |= rule.ambiguous_group[i].is_none();
        });
        plain
    };
    rule.strong.each(title, |_, _, i| {
        let counted = match rule.ambiguous_group[i] {
            None => true,
            Some(g) => title_plain || confirmed_groups.contains(&g) || rule.context[g].any(title),
        };
        ev.title_mentions += u32::from(counted);
    });
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
