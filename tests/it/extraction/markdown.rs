//! The `markdown` field: structure kept (headings, lists, quotes, code with
//! its language, tables, emphasis; links as text), and `text` exactly the
//! plain reading of the Markdown, on fixture pages always and on every page
//! of the shared evaluation set (`../shared/eval`, or `SCRAPER_EVAL`; without
//! it those tests fail unless `SCRAPER_SKIP_EVAL=1`).

use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use scraper::config::Config;
use scraper::extract::{self, Page, text::markdown::plain};
use scraper::relevance::Rule;
use scraper::url::Url;

use crate::support::fixture::article_html;
use crate::support::tool::Tool;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rule() -> Rule {
    let config = Config::load(&root().join("config.yml")).expect("shipped config loads");
    Rule::new(&config.keywords)
}

fn page(html: &[u8], url: Option<&str>, rule: &Rule) -> Page {
    let url = url.map(|u| Url::parse(u).unwrap());
    let today = NaiveDate::from_ymd_opt(2026, 11, 29).unwrap();
    extract::extract(html, None, url.as_ref(), rule, today)
}

fn assert_round_trip(name: &str, p: &Page) {
    assert_eq!(
        plain(&p.markdown),
        p.text,
        "{name}: the plain reading of the Markdown differs from the text\n--- markdown:\n{}",
        p.markdown
    );
}

const STRUCTURED: &str = r#"<!doctype html><html lang="en"><head><title>How to fine-tune a language model</title>
<meta property="og:type" content="article"><meta property="article:published_time" content="2026-03-04T10:00:00Z"></head>
<body><nav><a href="/">Home</a> <a href="/ai">AI</a></nav>
<article><h1>How to fine-tune a language model</h1>
<p>Fine-tuning a <em>large language model</em> on your own data is <strong>cheaper than ever</strong>, and the
<a href="https://example.com/tools">open tools</a> have matured. This guide walks through the steps, with code.</p>
<h2>What you need</h2>
<ul><li>A GPU with 24 GB of memory, or a rented one for a few dollars an hour.</li>
<li>A dataset of examples:<ul><li>at least a thousand pairs of prompt and answer;</li><li>cleaned of duplicates.</li></ul></li>
<li>The <code>transformers</code> library, version 4 or later.</li></ul>
<h2>Steps</h2>
<ol start="3"><li>Load the base model and its tokenizer.</li><li>Train for two epochs with a small learning rate.</li></ol>
<blockquote><p>Most of the gains come from the data, not the hyperparameters, said one researcher who trains AI models.</p></blockquote>
<pre><code class="language-python">from transformers import AutoModel
model = AutoModel.from_pretrained("base")
for epoch in range(2):
    train(model)</code></pre>
<h3>Results</h3>
<table><thead><tr><th>Model</th><th>Score</th></tr></thead>
<tbody><tr><td>Base</td><td>61.2</td></tr><tr><td>Fine-tuned | v2</td><td>*74.9*</td></tr></tbody></table>
<p>Prices like $5 * 3 and names like snake_case_name, 1. numbers and # signs stay as written.</p>
</article><footer>Copyright 2026</footer></body></html>"#;

#[test]
fn structure_is_kept_and_text_is_its_plain_reading() {
    let rule = rule();
    let p = page(
        STRUCTURED.as_bytes(),
        Some("https://example.com/2026/03/04/fine-tune"),
        &rule,
    );
    assert_round_trip("structured", &p);
    let md = &p.markdown;
    for want in [
        "\n## What you need\n",
        "*large language model*",
        "**cheaper than ever**",
        "the open tools have",
        "\n- A GPU with 24 GB",
        "\n    - at least a thousand pairs",
        "The `transformers` library",
        "\n3. Load the base model",
        "\n4. Train for two epochs",
        "\n> Most of the gains",
        "\n```python\nfrom transformers import AutoModel\n",
        "\n    train(model)\n```",
        "\n### Results\n",
        "| Model | Score |\n|---|---|\n| Base | 61.2 |\n| Fine-tuned \\| v2 | \\*74.9\\* |",
        "$5 \\* 3",
    ] {
        assert!(md.contains(want), "{want:?} not in:\n{md}");
    }
    // The text itself is unchanged by all this: paragraphs, no syntax.
    assert!(p.text.contains("\nWhat you need\n"), "{}", p.text);
    assert!(
        p.text.contains("\nModel\nScore\nBase\n61.2\n"),
        "{}",
        p.text
    );
    assert!(!p.text.contains('#') || p.text.contains("# signs"));
}

/// Fixture pages of the crawl tests and the fuzz corpora: the round trip
/// holds on every one, whatever they are made of.
#[test]
fn plain_reading_holds_on_fixture_pages() {
    let rule = rule();
    let mut n = 0;
    for i in 0..40 {
        let html = article_html("news.test", i, "2026-03-04");
        assert_round_trip(
            &format!("fixture {i}"),
            &page(html.as_bytes(), Some("https://news.test/a"), &rule),
        );
        n += 1;
    }
    for dir in ["fuzz/corpus/extract", "tests/fixtures/fuzz/html"] {
        for entry in std::fs::read_dir(root().join(dir)).expect("fixture folder") {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            assert_round_trip(&path.display().to_string(), &page(&bytes, None, &rule));
            n += 1;
        }
    }
    assert!(n > 45);
}

/// The shared evaluation set: `SCRAPER_EVAL` when set, else next to the
/// repository; `None` when the folder has no `manifest.json`.
fn eval_dir() -> Option<PathBuf> {
    let candidates = match std::env::var_os("SCRAPER_EVAL") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => vec![
            root().join("../shared/eval"),
            root().join("../../shared/eval"),
        ],
    };
    candidates
        .into_iter()
        .find(|d| d.join("manifest.json").is_file())
}

fn read_page(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        bytes
    }
}

// The eval set in eight parts, so each test stays short on a debug build.
macro_rules! eval_parts {
    ($($name:ident = $part:expr;)*) => {
        $(
            #[test]
            fn $name() {
                eval_part($part);
            }
        )*
    };
}

eval_parts! {
    plain_reading_holds_on_eval_pages_part_1 = 0;
    plain_reading_holds_on_eval_pages_part_2 = 1;
    plain_reading_holds_on_eval_pages_part_3 = 2;
    plain_reading_holds_on_eval_pages_part_4 = 3;
    plain_reading_holds_on_eval_pages_part_5 = 4;
    plain_reading_holds_on_eval_pages_part_6 = 5;
    plain_reading_holds_on_eval_pages_part_7 = 6;
    plain_reading_holds_on_eval_pages_part_8 = 7;
}

const PARTS: usize = 8;

/// Every `PARTS`-th page of the eval set, from `part`.
fn eval_part(part: usize) {
    let what = "the eval round trip (fixture pages are checked always)";
    if Tool::Eval.skipped(what) {
        return;
    }
    let Some(dir) = eval_dir() else {
        Tool::Eval.missing(what, "no manifest.json in SCRAPER_EVAL or ../shared/eval: set SCRAPER_EVAL to the set's folder")
    };
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut cases: Vec<(String, Option<String>)> = manifest["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["html"].as_str().unwrap().to_string(),
                c["url"].as_str().map(str::to_string),
            )
        })
        .collect();
    cases.sort();
    cases.dedup_by(|a, b| a.0 == b.0);
    let cases: Vec<(String, Option<String>)> =
        cases.into_iter().skip(part).step_by(PARTS).collect();
    let rule = rule();
    let (mut pages, mut headings, mut lists, mut failed) = (0, 0, 0, Vec::new());
    for (html, url) in &cases {
        let p = page(&read_page(&dir.join(html)), url.as_deref(), &rule);
        pages += 1;
        headings += usize::from(
            p.markdown
                .lines()
                .any(|l| l.trim_start_matches("> ").starts_with('#')),
        );
        lists += usize::from(p.markdown.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("- ")
                || l.split_once(". ")
                    .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        }));
        if plain(&p.markdown) != p.text {
            failed.push(html.clone());
        }
    }
    eprintln!(
        "eval: {pages} pages; Markdown with headings on {headings}, lists on {lists}; round trip failed on {}",
        failed.len()
    );
    assert!(failed.is_empty(), "plain(markdown) != text on {failed:?}");
    assert!(pages * PARTS > 500, "{pages} pages");
    // Real articles have subheadings and lists: the Markdown must show them.
    assert!(
        headings * 5 > pages,
        "headings on only {headings} of {pages} pages"
    );
    assert!(lists * 10 > pages, "lists on only {lists} of {pages} pages");
}
