//! The expected value of a queued URL, from what is known before fetching it.
//!
//! Two numbers, both pure functions of their inputs:
//!
//! * [`url_value`]: the URL's own evidence in `[0, 1]`, fixed when it is
//!   queued (stored as [`super::Entry::value`]). From [`Clues`]: the topic
//!   score of its anchor text or of the title a feed item or news sitemap gave
//!   (`text`, by `relevance::Rule::hint`), the topic score of its URL slug
//!   (`slug`), whether the linking page was relevant, and how old the listing
//!   said it was. With `e = 1 - (1 - text)(1 - 0.8 slug)`:
//!   - words that match the vocabulary: `0.4 + 0.6 e`;
//!   - words known (an anchor, a title, or a slug of three or more words) that
//!     match nothing: `0.1`, a page known to be about something else;
//!   - nothing known: `0.3`;
//!
//!   then `+ 0.1` when the linking page was relevant, `+ 0.05` when a listing
//!   dated it within the last 3 days and `- 0.1` when over a year ago, clamped
//!   to `[0, 1]`.
//! * [`expected`]: the chance that fetching the URL stores an article, from
//!   its value and its host's yield. In log-odds:
//!   `logit(E) = logit(y) + 6 (value - 0.3)`, where `y` is the host's hit ratio
//!   smoothed towards [`PRIOR_YIELD`] (as if 4 fetches at that ratio came
//!   first; a host with no fetches has `y = PRIOR_YIELD`). So a URL that knows
//!   nothing is worth its host's yield; an anchor scored 0.5 (one strong term)
//!   gives value 0.7, which multiplies the odds by 11, and a known non-topic
//!   title (value 0.1) divides them by 3.3. Within a host `y` is the same for every URL, so the
//!   queue orders by value alone; across hosts, budget pacing compares `E`.

use super::weight::Yield;

/// A host's assumed hit ratio before it has been fetched.
pub(crate) const PRIOR_YIELD: f64 = 0.25;
/// Weight of the prior in fetches.
const PRIOR_FETCHES: f64 = 4.0;
/// Value of a URL about which nothing is known.
pub const NEUTRAL: f64 = 0.3;

/// What is known about a URL before fetching it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Clues {
    /// Topic score of the anchor text or listed title, `[0, 1]`.
    pub text: f64,
    /// There was anchor text or a title to score (even if it matched nothing).
    pub text_known: bool,
    /// Topic score of the URL slug, `[0, 1]`.
    pub slug: f64,
    /// The slug has three or more words (it says what the page is about).
    pub slug_known: bool,
    /// The linking page was relevant.
    pub parent_relevant: bool,
    /// Days since the date a listing gave (negative: in the future).
    pub age_days: Option<f64>,
}

/// The URL's own evidence (see the module docs).
pub fn url_value(c: &Clues) -> f64 {
    let text = c.text.clamp(0.0, 1.0);
    let slug = c.slug.clamp(0.0, 1.0);
    let e = 1.0 - (1.0 - text) * (1.0 - 0.8 * slug);
    let mut v = if e > 0.0 {
        0.4 + 0.6 * e
    } else if c.text_known || c.slug_known {
        0.1
    } else {
        NEUTRAL
    };
    if c.parent_relevant {
        v += 0.1;
    }
    match c.age_days {
        Some(d) if d <= 3.0 => v += 0.05,
        Some(d) if d > 365.0 => v -= 0.1,
        _ => {}
    }
    v.clamp(0.0, 1.0)
}

/// A host's hit ratio smoothed towards [`PRIOR_YIELD`].
pub(crate) fn host_yield(y: &Yield, alpha: f64) -> f64 {
    // The moving average remembers about 1/alpha fetches.
    let n = (y.fetched as f64).min(1.0 / alpha.max(1e-3));
    (y.ema * n + PRIOR_YIELD * PRIOR_FETCHES) / (n + PRIOR_FETCHES)
}

/// Chance that a URL of `value` on a host of smoothed yield `y` is a hit.
pub fn expected(value: f64, y: f64) -> f64 {
    let y = y.clamp(1e-4, 1.0 - 1e-4);
    let logit = (y / (1.0 - y)).ln() + 6.0 * (value - NEUTRAL);
    1.0 / (1.0 + (-logit).exp())
}

/// The words of a URL's last meaningful path segment (`/2025/05/openai-ships-gpt-5/`
/// gives `openai-ships-gpt-5`), with `_`, `+` and `.` as spaces and a file
/// extension dropped; and whether it has three or more words of letters.
pub(crate) fn slug_words(path: &str) -> (String, bool) {
    let seg = path
        .split('/')
        .rev()
        .map(|s| s.rsplit_once('.').map_or(s, |(a, _)| a))
        .find(|s| s.chars().any(char::is_alphabetic))
        .unwrap_or("");
    let words: String = seg
        .chars()
        .map(|c| if matches!(c, '_' | '+' | '.') { ' ' } else { c })
        .collect();
    let known = words
        .split(|c: char| c == '-' || c.is_whitespace())
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count()
        >= 3;
    (words, known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_order_as_documented() {
        let none = Clues::default();
        let strong = Clues {
            text: 0.65,
            text_known: true,
            ..Clues::default()
        };
        let off_topic = Clues {
            text_known: true,
            ..Clues::default()
        };
        let relevant_parent = Clues {
            parent_relevant: true,
            ..Clues::default()
        };
        assert!((url_value(&none) - NEUTRAL).abs() < 1e-9);
        assert!((url_value(&strong) - 0.79).abs() < 1e-9);
        assert!((url_value(&off_topic) - 0.1).abs() < 1e-9);
        assert!(url_value(&relevant_parent) > url_value(&none));
        let old = Clues {
            age_days: Some(800.0),
            ..strong
        };
        let fresh = Clues {
            age_days: Some(0.5),
            ..strong
        };
        assert!(url_value(&fresh) > url_value(&strong));
        assert!(url_value(&old) < url_value(&strong));
    }

    #[test]
    fn expected_mixes_value_and_yield() {
        // Nothing known: worth the host's yield.
        assert!((expected(NEUTRAL, 0.4) - 0.4).abs() < 1e-9);
        // A strong anchor on a poor host beats a blank link on a middling one.
        assert!(expected(0.79, 0.05) > expected(NEUTRAL, 0.3));
        // Monotone in both.
        assert!(expected(0.5, 0.2) < expected(0.6, 0.2));
        assert!(expected(0.5, 0.2) < expected(0.5, 0.3));
        let fresh = Yield::default();
        assert!((host_yield(&fresh, 0.1) - PRIOR_YIELD).abs() < 1e-9);
        let rich = Yield {
            fetched: 50,
            hits: 45,
            ema: 0.9,
        };
        assert!(host_yield(&rich, 0.1) > 0.7);
    }

    #[test]
    fn slugs() {
        let table = [
            ("/2025/05/openai-ships-gpt-5/", "openai-ships-gpt-5", true),
            ("/news/ai_act_passes.html", "ai act passes", true),
            ("/p/123", "p", false),
            ("/", "", false),
            ("/sport/", "sport", false),
        ];
        for (path, words, known) in table {
            assert_eq!(slug_words(path), (words.to_string(), known), "{path}");
        }
    }
}
