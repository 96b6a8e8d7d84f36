//! The fitted model's weights: `scripts/relevance-fit.py` reproduces the
//! shipped `keywords.model` from `tests/fixtures/relevance/train_features.jsonl`
//! (the evidence features and labels of `../shared/eval/relevance/train.jsonl`,
//! 774 real articles; numbers only, no texts), writes a block that loads, and
//! the table still says what the rule computes on those articles (checked
//! when the labelled file is at hand: it is not shipped).

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::NaiveDate;
use scraper::config::Config;
use scraper::extract;
use scraper::relevance::{FEATURES, Rule};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn table() -> PathBuf {
    root().join("tests/fixtures/relevance/train_features.jsonl")
}

fn fit(args: &[&str]) -> std::process::Output {
    Command::new("python3")
        .arg(root().join("scripts/relevance-fit.py"))
        .arg("--features")
        .arg(table())
        .args(args)
        .output()
        .expect("python3 runs (the fit script needs it, nothing else)")
}

#[test]
fn the_shipped_weights_reproduce_from_the_labelled_features() {
    let config = root().join("config.yml");
    let out = fit(&["--config", config.to_str().expect("utf-8 path"), "--check"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("CHECK ok"), "{stdout}");
    // The fit is the one the config's note states.
    let cv = stdout
        .lines()
        .find(|l| l.starts_with("CV "))
        .expect("a CV line");
    let f1: f64 = cv
        .rsplit("f1=")
        .next()
        .and_then(|v| v.trim().parse().ok())
        .expect("an F1");
    assert!(f1 >= 0.93, "{cv}");
    let shipped = std::fs::read_to_string(&config).expect("config");
    assert!(shipped.contains(&format!("F1 {f1:.3}")), "{cv}");
}

#[test]
fn a_refit_writes_a_block_that_loads_and_a_changed_weight_fails_the_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.yml");
    let shipped = std::fs::read_to_string(root().join("config.yml")).expect("config");
    // Empty the block, as a user starting on a new topic would have it.
    let begin = shipped
        .find("# relevance-fit: begin")
        .expect("begin marker");
    let end = shipped.find("  # relevance-fit: end").expect("end marker");
    let emptied = format!("{}\n{}", &shipped[..begin + 22], &shipped[end..]);
    std::fs::write(&config, &emptied).expect("write");
    let without = Config::load(&config).expect("a config without a model loads");
    assert!(without.keywords.model.is_none());
    let c = config.to_str().expect("utf-8 path");
    assert!(fit(&["--config", c, "--write"]).status.success());
    let with = Config::load(&config).expect("the written config loads");
    let ours = Config::load(&root().join("config.yml")).expect("shipped");
    assert_eq!(with.keywords.model, ours.keywords.model);
    assert_eq!(
        with.keywords.min_relevance_score,
        ours.keywords.min_relevance_score
    );
    assert!(fit(&["--config", c, "--check"]).status.success());
    let written = std::fs::read_to_string(&config).expect("read");
    let bias = format!(
        "bias: {}",
        ours.keywords.model.as_ref().expect("a model").bias
    );
    std::fs::write(&config, written.replace(&bias, "bias: -1.0")).expect("write");
    // One fold shuffle is enough to see a changed bias (and a third of the time).
    let out = fit(&["--config", c, "--check", "--select", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bias"));
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The page `scripts/relevance-fit.py` (and the shared `score.py`) wraps a labelled text in.
fn page(title: &str, text: &str, year: &str) -> String {
    let paras: String = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{}</p>", escape(l)))
        .collect();
    let t = escape(title);
    format!(
        "<html><head><title>{t}</title><meta property=\"og:type\" content=\"article\">\
         <meta property=\"article:published_time\" content=\"{year}-06-01\"></head>\
         <body><article><h1>{t}</h1>{paras}</article></body></html>"
    )
}

#[test]
fn the_features_table_is_what_the_rule_computes_on_the_labelled_articles() {
    let labels = root().join("../shared/eval/relevance/train.jsonl");
    let Ok(text) = std::fs::read_to_string(&labels) else {
        println!("{} not found: the table is not checked", labels.display());
        return;
    };
    let rule = Rule::new(
        &Config::load(&root().join("config.yml"))
            .expect("config")
            .keywords,
    );
    let rows: Vec<Value> = std::fs::read_to_string(table())
        .expect("table")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a table row"))
        .collect();
    let recs: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a labelled row"))
        .collect();
    assert_eq!(rows.len(), recs.len());
    let today = NaiveDate::from_ymd_opt(2026, 12, 1).expect("date");
    // Every fifth article keeps the test short in a debug build.
    for (row, rec) in rows.iter().zip(&recs).step_by(5) {
        let s = |v: &Value, k: &str| v[k].as_str().unwrap_or("").to_string();
        let html = page(&s(rec, "title"), &s(rec, "text"), &s(rec, "year"));
        let r = extract::extract(html.as_bytes(), None, None, &rule, today).relevance;
        let at = &row["i"];
        assert_eq!(row["about"], rec["about_ai"], "row {at}");
        assert_eq!(row["floor"], Value::Bool(r.gate && !r.thin), "row {at}");
        for f in &r.features {
            let want = row["x"][&f.feature].as_f64();
            assert_eq!(want, Some(f.value), "row {at} {}", f.feature);
        }
        assert_eq!(r.features.len(), FEATURES.len());
    }
}

#[test]
fn the_reasons_rank_the_evidence_by_its_effect() {
    let rule = Rule::new(
        &Config::load(&root().join("config.yml"))
            .expect("config")
            .keywords,
    );
    let text = [
        "OpenAI on Tuesday released a new large language model that it says reasons better.",
        "The company said the change would roll out over the coming weeks, starting with \
         customers in North America and Europe, and that prices would not change.",
        "Researchers said machine learning benchmarks improved across the board, with the \
         largest gains on maths problems and on code, and ChatGPT users get it first.",
        "The company said the change would roll out over the coming weeks, starting with \
         customers in North America and Europe, and that prices would not change for now.",
        "Menu: AI | Robots | Gadgets",
    ]
    .join("\n")
    .repeat(3);
    let r = rule.evaluate("Robots and algorithms: the new model", &text);
    assert!(r.relevant, "{:?}", r.reasons);
    let effects: Vec<f64> = r
        .reasons
        .iter()
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .collect();
    // The bias first, then the features by size of effect.
    assert!(effects.len() >= 5, "{:?}", r.reasons);
    assert!(
        effects[1..].windows(2).all(|w| w[0].abs() >= w[1].abs()),
        "{:?}",
        r.reasons
    );
    assert!(
        r.reasons
            .iter()
            .any(|s| s.contains("related term in the title (keywords.related)")),
        "{:?}",
        r.reasons
    );
    assert!(
        r.reasons.iter().any(|s| s.contains("not counted")),
        "{:?}",
        r.reasons
    );
    let json = serde_json::to_value(&r).expect("serialises");
    assert_eq!(
        json["features"].as_array().map(Vec::len),
        Some(FEATURES.len())
    );
    assert!(Path::new(&table()).exists());
}
