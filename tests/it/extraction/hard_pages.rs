//! The hard-page fixtures (`tests/fixtures/hard-pages/`): pages whose
//! article is streamed, hydrated, paywalled, hidden, split by ad and teaser
//! rows (also inside each part's wrapper), spread over slides or mixed with
//! boxes that are not the article (HTML-drawn charts among them, their
//! labels dotted abbreviations too, beside a table of short cells), formulas
//! in MathML, summaries in a body's `header`, standfirsts in the story's
//! own `header` inside the container or a one-sentence subheadline under
//! the headline, release notes whose items hold sub-lists of links or
//! links that run on from the words before them, and pages whose first
//! date is a teaser's or a live blog's last update, an embedded post's, the
//! masthead's (today), a cited work's or one in a web address written in
//! the text, or whose own date is only in its article's footer, written
//! with slashes in the page's day/month order, or in a list of other stories;
//! and pages whose story is revealed by React 19's `$RR` call, sits only in
//! `<noscript>` (a forum thread), carries a paywall class on every paragraph
//! though served in full, is spread over slide blocks or sibling cards, or
//! has boilerplate inside its body (related-story lines, a donation appeal,
//! a kicker glued to the headline, a video teaser, a
//! members' sign-up pitch), in English, German, French, Spanish and Japanese.
//! Body text F1 (4-token shingles, as `../shared/eval/score.py` computes
//! it), dates and `accessible_for_free` must stay above a floor, by kind
//! too. `python3 tests/fixtures/hard-pages/score.py BIN...` prints the
//! figures for any binaries side by side.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::LazyLock;

use chrono::NaiveDate;
use regex::Regex;
use scraper::config::Keywords;
use scraper::extract;
use scraper::relevance::Rule;

/// Least mean text F1 over all pages, and over the pages of one kind (every
/// kind reads 1.000 today; a kind's rule broken costs it more than 0.03).
const FLOOR_ALL: f64 = 0.95;
const FLOOR_KIND: f64 = 0.97;
/// Least share of pages with the expected date.
const FLOOR_DATE: f64 = 0.95;
/// Kinds made to hold one date rule each: every page of them has its date.
const DATE_KINDS: &[&str] = &[
    "teaser-dates",
    "liveblog",
    "redated",
    "refreshed",
    "refreshed-labelled",
    "dated-table",
    "embed-dates",
    "masthead-date",
    "cited-dates",
    "link-dates",
    "story-footer",
    "slash-dates",
    "slash-dates-us",
    "story-list",
];

static TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\w+").unwrap());

fn shingles(text: &str) -> HashMap<Vec<String>, usize> {
    let toks: Vec<String> = TOKEN
        .find_iter(&text.to_lowercase())
        .map(|m| m.as_str().to_string())
        .collect();
    let mut out = HashMap::new();
    if toks.len() < 4 {
        if !toks.is_empty() {
            out.insert(toks, 1);
        }
        return out;
    }
    for w in toks.windows(4) {
        *out.entry(w.to_vec()).or_insert(0) += 1;
    }
    out
}

/// Precision and recall of `got` against `want`.
fn pr(got: &str, want: &str) -> (f64, f64) {
    let (g, w) = (shingles(got), shingles(want));
    let tp: usize = g
        .iter()
        .map(|(k, n)| (*n).min(w.get(k).copied().unwrap_or(0)))
        .sum();
    let (gs, ws): (usize, usize) = (g.values().sum(), w.values().sum());
    let p = if gs > 0 { tp as f64 / gs as f64 } else { 0.0 };
    let r = if ws > 0 { tp as f64 / ws as f64 } else { 0.0 };
    (p, r)
}

fn f1(p: f64, r: f64) -> f64 {
    if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    }
}

#[test]
fn hard_pages_keep_their_whole_article_date_and_paywall_mark() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hard-pages");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let cases = manifest.as_array().unwrap();
    assert!(cases.len() >= 40, "{} pages", cases.len());
    let rule = Rule::new(&Keywords::default());
    let today = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
    // kind -> (precision sum, recall sum, pages, dates right, free marks right)
    let mut by_kind: BTreeMap<String, (f64, f64, usize, usize, usize)> = BTreeMap::new();
    let mut langs = std::collections::BTreeSet::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let kind = c["kind"].as_str().unwrap().to_string();
        langs.insert(c["lang"].as_str().unwrap().to_string());
        let html = std::fs::read(dir.join(format!("{name}.html"))).unwrap();
        let want = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
        let page = extract::extract(&html, None, None, &rule, today);
        let (p, r) = pr(&page.text, &want);
        let date_ok = page.date.map(|d| d.to_string()).as_deref() == c["date"].as_str();
        assert!(
            date_ok || !DATE_KINDS.contains(&kind.as_str()),
            "{name}: date {:?}, want {}",
            page.date,
            c["date"]
        );
        let free_ok = page.accessible_for_free == c["accessible_for_free"].as_bool();
        let e = by_kind.entry(kind).or_default();
        *e = (
            e.0 + p,
            e.1 + r,
            e.2 + 1,
            e.3 + date_ok as usize,
            e.4 + free_ok as usize,
        );
        // What was read from hidden or streamed markup is named (the
        // `check-url` report shows it: `src/cli/print/page.rs`).
        let hidden = [
            "stream",
            "next",
            "nuxt",
            "apollo",
            "paywall",
            "hidden",
            "slideshow",
            "noscript",
        ];
        if hidden.iter().any(|h| name.starts_with(h)) {
            assert!(
                !page.hidden_parts.is_empty(),
                "{name}: no hidden part named"
            );
        }
    }
    assert!(langs.len() >= 6, "{langs:?}");
    let (mut p, mut r, mut n, mut dates) = (0.0, 0.0, 0, 0);
    for (kind, (kp, kr, kn, kd, kf)) in &by_kind {
        let kf1 = f1(kp / *kn as f64, kr / *kn as f64);
        assert!(kf1 >= FLOOR_KIND, "{kind}: text F1 {kf1:.3}");
        assert_eq!(
            kf,
            kn,
            "{kind}: accessible_for_free wrong on {} pages",
            kn - kf
        );
        (p, r, n, dates) = (p + kp, r + kr, n + kn, dates + kd);
    }
    let all = f1(p / n as f64, r / n as f64);
    assert!(all >= FLOOR_ALL, "text F1 {all:.3}");
    let date_share = dates as f64 / n as f64;
    assert!(date_share >= FLOOR_DATE, "dates right on {date_share:.3}");
}
