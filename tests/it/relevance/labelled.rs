//! The relevance judgement on the labelled pages in `tests/fixtures/relevance/`:
//! precision and recall against the labels, recall of the AI stories the old
//! two-tier rule kept, each false-positive kind rejected, and the same
//! machinery on a second topic with its own vocabulary.

use std::path::{Path, PathBuf};

use scraper::config::{Config, Keywords};
use scraper::relevance::Rule;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Labelled {
    kind: String,
    about: bool,
    title: String,
    text: String,
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/relevance")
        .join(name)
}

fn pages(name: &str) -> Vec<Labelled> {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture");
    serde_saphyr::from_str(&text).expect("fixture parses")
}

fn keywords(path: &Path) -> Keywords {
    Config::load(path).expect("config loads").keywords
}

fn shipped() -> Keywords {
    keywords(&Path::new(env!("CARGO_MANIFEST_DIR")).join("config.yml"))
}

/// The rule before the score: the two-tier gate with a strong term in the
/// title or first paragraph, or a body dense with strong terms.
fn old_rule(rule: &Rule, k: &Keywords, p: &Labelled) -> bool {
    let r = rule.evaluate(&p.title, &p.text);
    let body = rule.evaluate("", &p.text);
    let lede = r.strong_mentions >= k.min_strong_mentions && r.strong_in_title_or_lede;
    let dense =
        body.strong_mentions >= k.min_dense_mentions && body.density >= k.min_strong_density;
    r.broad_mentions >= k.min_target_mentions && (lede || dense)
}

#[derive(Debug, Default)]
struct Tally {
    tp: u32,
    fp: u32,
    fn_: u32,
}

impl Tally {
    fn add(&mut self, verdict: bool, about: bool) {
        match (verdict, about) {
            (true, true) => self.tp += 1,
            (true, false) => self.fp += 1,
            (false, true) => self.fn_ += 1,
            (false, false) => {}
        }
    }
    fn precision(&self) -> f64 {
        f64::from(self.tp) / f64::from((self.tp + self.fp).max(1))
    }
    fn recall(&self) -> f64 {
        f64::from(self.tp) / f64::from((self.tp + self.fn_).max(1))
    }
}

#[test]
fn labelled_ai_pages_meet_the_precision_and_recall_targets() {
    let k = shipped();
    let rule = Rule::new(&k);
    let set = pages("ai_pages.yml");
    assert!(set.len() >= 30, "{}", set.len());
    let (mut new, mut old, mut kept_by_old) =
        (Tally::default(), Tally::default(), Tally::default());
    let mut errors = Vec::new();
    for p in &set {
        let r = rule.evaluate(&p.title, &p.text);
        let was = old_rule(&rule, &k, p);
        assert_eq!(
            rule.is_relevant(&p.title, &p.text),
            r.relevant,
            "{}",
            p.title
        );
        new.add(r.relevant, p.about);
        old.add(was, p.about);
        if was && p.about {
            kept_by_old.add(r.relevant, true);
        }
        if r.relevant != p.about {
            errors.push(format!(
                "{} [{}] {:.2}: {}",
                p.title,
                p.kind,
                r.score,
                r.reasons.join("; ")
            ));
        }
    }
    println!("{}", errors.join("\n"));
    println!(
        "fixture set: {} pages; new rule precision {:.3} recall {:.3}; old rule precision {:.3} \
         recall {:.3}; recall of what the old rule kept {:.3}",
        set.len(),
        new.precision(),
        new.recall(),
        old.precision(),
        old.recall(),
        kept_by_old.recall()
    );
    // The set is hard for the old rule: most false-positive kinds pass it.
    assert!(old.precision() < 0.7, "{old:?}");
    assert!(new.precision() >= 0.95, "{new:?}\n{}", errors.join("\n"));
    assert!(
        kept_by_old.recall() >= 0.95,
        "{kept_by_old:?}\n{}",
        errors.join("\n")
    );
    // Some AI stories use too little of the vocabulary for either rule; the
    // score loses none the old rule found.
    assert!(
        new.recall() >= old.recall(),
        "{new:?}\n{}",
        errors.join("\n")
    );
}

#[test]
fn every_false_positive_kind_is_rejected_and_scores_below_the_ai_stories_the_old_rule_kept() {
    let rule = Rule::new(&shipped());
    let set = pages("ai_pages.yml");
    let mut kinds = std::collections::BTreeMap::<&str, (u32, f64)>::new();
    let mut lowest_ai = f64::MAX;
    for p in &set {
        let r = rule.evaluate(&p.title, &p.text);
        if p.about && old_rule(&rule, &shipped(), p) {
            lowest_ai = lowest_ai.min(r.score);
        } else {
            // The model is fitted on pages past the gate only (scripts/relevance-fit.py):
            // on a page the gate refuses, the score is an extrapolation, never the
            // verdict, so only pages past the gate must rank below the AI stories. (With
            // the shipped fit the gate refuses every business_passing and gadget_headline
            // page: for those kinds the check is the rejection alone.)
            let e = kinds.entry(p.kind.as_str()).or_insert((0, 0.0));
            e.0 += u32::from(r.relevant);
            if r.gate {
                e.1 = e.1.max(r.score);
            }
        }
    }
    for kind in [
        "thin_brief",
        "ambiguous_acronym",
        "ambiguous_term",
        "business_passing",
        "gadget_headline",
        "chrome",
    ] {
        let (passed, best) = kinds
            .get(kind)
            .copied()
            .unwrap_or_else(|| panic!("no {kind} page"));
        assert_eq!(passed, 0, "{kind}");
        assert!(best < lowest_ai, "{kind}: {best} >= {lowest_ai}");
    }
}

#[test]
fn the_reasons_name_what_was_not_counted() {
    let rule = Rule::new(&shipped());
    let set = pages("ai_pages.yml");
    let find = |kind: &str| set.iter().find(|p| p.kind == kind).expect(kind);
    let chrome = find("chrome");
    let r = rule.evaluate(&chrome.title, &chrome.text);
    assert!(r.gate && !r.relevant, "{r:?}");
    assert!(r.evidence.chrome_mentions >= 10, "{r:?}");
    assert!(
        r.reasons
            .iter()
            .any(|s| s.contains("menus or headline lists")),
        "{r:?}"
    );
    let acronym = find("ambiguous_acronym");
    let r = rule.evaluate(&acronym.title, &acronym.text);
    assert!(r.evidence.unconfirmed_mentions >= 3, "{r:?}");
    assert!(
        r.reasons
            .iter()
            .any(|s| s.contains("without a context word")),
        "{r:?}"
    );
    let thin = find("thin_brief");
    let r = rule.evaluate(&thin.title, &thin.text);
    assert_eq!(r.score, 0.0);
    assert!(r.reason.contains("thin"), "{}", r.reason);
}

#[test]
fn a_second_topic_runs_on_the_same_machinery_from_its_own_config() {
    let space = Rule::new(&keywords(&fixture("space_config.yml")));
    let ai = Rule::new(&shipped());
    let space_pages = pages("space_pages.yml");
    let ai_pages = pages("ai_pages.yml");
    for p in &space_pages {
        let r = space.evaluate(&p.title, &p.text);
        assert_eq!(r.relevant, p.about, "{} {:?}", p.title, r.reasons);
        assert!(!ai.is_relevant(&p.title, &p.text), "{}", p.title);
    }
    for p in ai_pages.iter().filter(|p| p.about) {
        assert!(!space.is_relevant(&p.title, &p.text), "{}", p.title);
    }
    // The chocolate story passes the space gate on "rocket" and "Mars", and
    // is turned down because neither has a context word.
    let choc = space_pages.iter().find(|p| p.kind == "ambiguous").unwrap();
    let r = space.evaluate(&choc.title, &choc.text);
    assert!(r.gate && r.evidence.unconfirmed_mentions >= 2, "{r:?}");
}

#[test]
fn ambiguous_terms_must_be_strong_targets() {
    let text =
        "keywords:\n  strong_targets: [AI]\n  ambiguous:\n    - {terms: [Ai], context: [model]}\n";
    let err = Config::parse(text, Path::new("c.yml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("keywords.ambiguous[0].terms") && err.contains("Ai"),
        "{err}"
    );
    let text = "keywords:\n  min_relevance_score: 1.5\n";
    let err = Config::parse(text, Path::new("c.yml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("min_relevance_score"), "{err}");
    let text = "keywords:\n  score: {mentions: 0, spread: 0, title_or_lede: 0, diversity: 0}\n";
    assert!(Config::parse(text, Path::new("c.yml")).is_err());
    let text = "keywords:\n  ambiguous:\n    - {terms: [AI], contexts: [model]}\n";
    let err = Config::parse(text, Path::new("c.yml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("contexts"), "{err}");
}
