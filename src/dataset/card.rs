//! The Hugging Face dataset card, `dist/README.md`: a YAML header (licence and
//! languages from config, `configs`/`data_files`, features derived from the
//! Arrow schema, split sizes, `size_categories`), then the dataset's licence and,
//! apart from it, the code's (Cargo.toml's), every column, counts by
//! year, domain and language, the crawl runs covered and how to load this
//! revision, the relevance rule in force, and build notes (what each kind of
//! duplicate removed). The build time and source commit live here (and in
//! `build.json`), never in the data files.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use arrow_schema::Schema;

use super::dedup::Removed;
use super::minhash;
use super::revision::Revision;
use super::scan::ShardReport;
use crate::config::{Dataset, Keywords};

/// Domains listed one by one; the rest are summed in one row.
const MAX_DOMAINS: usize = 200;
/// Run ids listed one by one (all of them are in `build.json`).
const MAX_RUNS: usize = 1000;

/// Everything the card reports.
pub struct Card<'a> {
    pub dataset: &'a Dataset,
    pub keywords: &'a Keywords,
    pub relevance_filter: bool,
    pub schema: &'a Schema,
    pub files: &'a [String],
    pub rows: u64,
    pub arrow_bytes: u64,
    pub download_bytes: u64,
    pub years: &'a BTreeMap<Option<i32>, u64>,
    pub domains: &'a HashMap<String, u64>,
    /// Rows per `lang` (`None`: not recorded).
    pub langs: &'a HashMap<Option<String>, u64>,
    /// Rows per `extractor_version` (`None`: not recorded).
    pub versions: &'a BTreeMap<Option<String>, u64>,
    /// Pages withheld because the publisher reserves AI training: distinct
    /// URLs per domain over every run's `state/consent/` file, not in the dataset.
    pub withheld: &'a BTreeMap<String, u64>,
    pub reports: &'a [ShardReport],
    pub read: u64,
    pub removed: &'a Removed,
    pub revision: &'a Revision,
    pub build_secs: f64,
    pub commit: Option<String>,
}

/// What `scraper reextract` changed: older extractions replaced, records withdrawn.
fn extraction_notes(s: &mut String, r: &Removed) {
    let _ = writeln!(
        s,
        "- Older extractions replaced by a newer one (`scraper reextract`): {}",
        r.superseded
    );
    let _ = writeln!(
        s,
        "- Removed because the newest extraction is no longer an article: {}; \
         no longer relevant: {}; paywalled (`paywalled_text: skip`): {}",
        r.withdrawn_not_article, r.withdrawn_not_relevant, r.withdrawn_paywalled
    );
}

/// A YAML (and JSON) double-quoted scalar.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The Hub's size bucket for `n` rows.
pub fn size_category(n: u64) -> &'static str {
    match n {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        1_000_000..10_000_000 => "1M<n<10M",
        10_000_000..100_000_000 => "10M<n<100M",
        100_000_000..1_000_000_000 => "100M<n<1B",
        _ => "1B<n<10B",
    }
}

impl Card<'_> {
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.header(&mut s);
        self.body(&mut s);
        s
    }

    fn header(&self, s: &mut String) {
        let d = self.dataset;
        s.push_str("---\n");
        let _ = writeln!(s, "license: {}", q(&d.license));
        s.push_str("language:\n");
        for l in &d.languages {
            let _ = writeln!(s, "- {}", q(l));
        }
        let _ = writeln!(s, "pretty_name: {}", q(&d.pretty_name));
        let _ = writeln!(s, "size_categories:\n- {}", q(size_category(self.rows)));
        s.push_str("task_categories:\n- text-generation\n- text-classification\n");
        s.push_str("tags:\n- news\n- artificial-intelligence\n- technology\n");
        s.push_str("configs:\n- config_name: default\n  data_files:\n  - split: train\n");
        s.push_str("    path: data/train-*\n");
        s.push_str("dataset_info:\n  features:\n");
        for f in self.schema.fields() {
            for line in super::schema::feature_yaml(f).lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
        let _ = writeln!(
            s,
            "  splits:\n  - name: train\n    num_bytes: {}\n    num_examples: {}",
            self.arrow_bytes, self.rows
        );
        let _ = writeln!(s, "  download_size: {}", self.download_bytes);
        let _ = writeln!(s, "  dataset_size: {}", self.arrow_bytes);
        s.push_str("---\n\n");
    }

    fn body(&self, s: &mut String) {
        let d = self.dataset;
        let _ = writeln!(s, "# {}\n", d.pretty_name);
        let _ = writeln!(
            s,
            "News and blog articles about AI and technology, collected by a focused, polite \
             crawler that honours robots.txt. One row per article: {} rows in {} Parquet \
             file(s) under `data/`, sorted by `id`.\n",
            self.rows,
            self.files.len()
        );
        s.push_str("## License\n\n");
        let _ = writeln!(s, "`{}`. {}\n", d.license, d.license_note);
        let _ = writeln!(
            s,
            "The code that built this dataset (the `scraper` crawler) has a licence of its \
             own, `{}`, which covers the code only, not the articles.\n",
            env!("CARGO_PKG_LICENSE")
        );
        self.fields(s);
        self.counts(s);
        self.languages(s);
        self.extractors(s);
        self.revision(s);
        self.withheld(s);
        self.rule(s);
        self.notes(s);
    }

    fn fields(&self, s: &mut String) {
        s.push_str("## Fields\n\n| field | type | meaning |\n|---|---|---|\n");
        for f in self.schema.fields() {
            let meaning = super::columns::meaning(f.name());
            let nullable = if f.is_nullable() { ", nullable" } else { "" };
            let _ = writeln!(
                s,
                "| `{}` | {}{} | {} |",
                f.name(),
                super::schema::dtype(f.data_type()),
                nullable,
                meaning
            );
        }
        s.push('\n');
    }

    fn counts(&self, s: &mut String) {
        s.push_str("## Articles by year\n\n| year | articles |\n|---|---:|\n");
        for (year, n) in self.years.iter().rev() {
            match year {
                Some(y) => {
                    let _ = writeln!(s, "| {y} | {n} |");
                }
                None => {
                    let _ = writeln!(s, "| unknown | {n} |");
                }
            }
        }
        let _ = writeln!(
            s,
            "\n## Articles by domain\n\n{} domains.\n\n| domain | articles |\n|---|---:|",
            self.domains.len()
        );
        domain_rows(s, self.domains);
        s.push('\n');
    }

    fn languages(&self, s: &mut String) {
        s.push_str("## Articles by language\n\n| language | articles |\n|---|---:|\n");
        let mut langs: Vec<(&Option<String>, &u64)> = self.langs.iter().collect();
        langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (lang, n) in langs {
            let _ = writeln!(s, "| {} | {n} |", lang.as_deref().unwrap_or("unknown"));
        }
        s.push('\n');
    }

    fn extractors(&self, s: &mut String) {
        s.push_str(
            "## Extractor versions\n\nThe extractor that made each row (`extractor_version`: \
             code version, then a hash of the keyword rule). `scraper reextract` rebuilds \
             records from the archived pages whenever the extractor improves; a build keeps \
             the newest extraction of each record.\n\n| extractor_version | articles |\n|---|---:|\n",
        );
        for (v, n) in self.versions {
            let _ = writeln!(s, "| {} | {n} |", v.as_deref().unwrap_or("not recorded"));
        }
        s.push('\n');
    }

    fn revision(&self, s: &mut String) {
        let r = self.revision;
        let repo = if self.dataset.hub_repo.is_empty() {
            "OWNER/NAME"
        } else {
            &self.dataset.hub_repo
        };
        s.push_str("## Revisions\n\n");
        let _ = writeln!(
            s,
            "Each publication is tagged on the Hub with its build date; this one is `{}` \
             (a second build on one day is tagged `{}.2`, and so on). Load exactly this \
             snapshot, whatever is published later, with:\n\n\
             ```python\nfrom datasets import load_dataset\n\n\
             ds = load_dataset(\"{repo}\", revision=\"{}\", split=\"train\")\n```\n",
            r.revision, r.revision, r.revision
        );
        match &r.changes {
            Some(c) => {
                let _ = writeln!(
                    s,
                    "Since the previous release ({} rows): {} rows added, {} updated \
                     (new versions replacing older ones), {} withdrawn, {} otherwise removed; \
                     {} new rows were near duplicates of rows published by earlier releases \
                     and left out.\n",
                    c.previous_rows,
                    c.added,
                    c.updated,
                    c.withdrawn,
                    c.removed,
                    r.near_earlier_release
                );
            }
            None => s.push_str("This is the first release built here.\n\n"),
        }
        let (first, last) = (r.runs.first(), r.runs.last());
        match (first, last) {
            (Some(first), Some(last)) => {
                let _ = writeln!(
                    s,
                    "It covers {} crawl runs, from `{}` to `{}` (all of them, with their \
                     record counts, in `build.json`).\n",
                    r.runs.len(),
                    first.run_id,
                    last.run_id
                );
                s.push_str("<details>\n<summary>Crawl runs</summary>\n\n| run | records read |\n|---|---:|\n");
                for run in r.runs.iter().rev().take(MAX_RUNS) {
                    let _ = writeln!(s, "| {} | {} |", run.run_id, run.records);
                }
                if r.runs.len() > MAX_RUNS {
                    let _ = writeln!(s, "| ({} earlier runs) | |", r.runs.len() - MAX_RUNS);
                }
                s.push_str("\n</details>\n\n");
            }
            _ => s.push_str("It covers no crawl run.\n\n"),
        }
    }

    fn withheld(&self, s: &mut String) {
        let total: u64 = self.withheld.values().sum();
        s.push_str(
            "## Withheld at the publisher's request

",
        );
        let _ = writeln!(
            s,
            "Pages the crawler fetched but did not store because their publisher reserves \
             AI training (robots.txt `Content-Signal: ai-train=no`, `noai` in `X-Robots-Tag` \
             or a robots meta tag, a TDMRep reservation): {total} pages from {} domains \
             (distinct URLs over all crawl runs, not counting pages stored later).\n",
            self.withheld.len()
        );
        if total == 0 {
            return;
        }
        s.push_str("| domain | withheld pages |\n|---|---:|\n");
        domain_rows(s, self.withheld);
        s.push('\n');
    }

    fn rule(&self, s: &mut String) {
        let k = self.keywords;
        s.push_str("## Relevance rule\n\n");
        if !self.relevance_filter {
            s.push_str(
                "**Not applied in this build** (`--no-relevance-filter`): every stored record \
                 was kept. The rule the crawler used is below.\n\n",
            );
        } else {
            s.push_str("Applied again to every record at build time (title and text).\n\n");
        }
        let _ = writeln!(
            s,
            "The two-tier rule of `config.yml` (`keywords`), computed from title and text \
             alone (the lede is the first paragraph). A record is relevant when it has at \
             least {} broad mentions and either\n\n\
             - at least {} strong mentions, one of them in the title or lede, or\n\
             - at least {} strong mentions in the body, {} or more per 1,000 words.\n",
            k.min_target_mentions,
            k.min_strong_mentions,
            k.min_dense_mentions,
            k.min_strong_density
        );
        let _ = writeln!(s, "- Strong terms: {}", k.strong_targets.join(", "));
        let _ = writeln!(s, "- Broad terms: {}\n", k.targets.join(", "));
    }

    fn notes(&self, s: &mut String) {
        let reports = self.reports;
        let sum = |f: fn(&ShardReport) -> u64| reports.iter().map(f).sum::<u64>();
        s.push_str("## Build notes\n\n");
        let _ = writeln!(
            s,
            "- Built: {} in {:.1} s (revision `{}`)",
            self.revision.built_at, self.build_secs, self.revision.revision
        );
        let _ = writeln!(
            s,
            "- Source commit: {}",
            self.commit
                .as_deref()
                .unwrap_or("unknown (not a git checkout)")
        );
        let _ = writeln!(s, "- Builder: scraper {}", env!("CARGO_PKG_VERSION"));
        let _ = writeln!(
            s,
            "- Shards read: {}; lines: {}; good records: {}",
            reports.len(),
            sum(|r| r.lines),
            self.read
        );
        self.removed_notes(s);
        extraction_notes(s, self.removed);
        input_notes(s, reports);
    }

    /// What the build removed, rule by rule.
    fn removed_notes(&self, s: &mut String) {
        let r = self.removed;
        let _ = writeln!(
            s,
            "- Removed by the relevance rule: {}{}",
            r.relevance,
            if self.relevance_filter {
                ""
            } else {
                " (rule not applied)"
            }
        );
        let _ = writeln!(
            s,
            "- Articles updated by their publisher since first stored (older versions \
             replaced by the latest): {}",
            r.updated
        );
        let _ = writeln!(
            s,
            "- Removed as the same URL or canonical URL as a lower id: {}",
            r.same_url
        );
        let _ = writeln!(
            s,
            "- Removed as the same normalised text as a lower id: {}",
            r.same_text
        );
        let _ = writeln!(
            s,
            "- Removed as a near duplicate of a lower id's text (MinHash of word {}-grams, \
             {} bands of {}, estimated Jaccard similarity at least {}): {}",
            minhash::SHINGLE,
            minhash::BANDS,
            minhash::ROWS,
            minhash::THRESHOLD,
            r.near_text
        );
        let _ = writeln!(
            s,
            "- Removed as a near duplicate of a row published by an earlier release \
             (the index in `index/`): {}",
            r.near_earlier_release
        );
        let _ = writeln!(s, "- Removed as a repeated id: {}", r.same_id);
    }
}

/// Broken input skipped, counted over all shards, and a table of the shards
/// that had any.
fn input_notes(s: &mut String, reports: &[ShardReport]) {
    let sum = |f: fn(&ShardReport) -> u64| reports.iter().map(f).sum::<u64>();
    let _ = writeln!(
        s,
        "- Broken input skipped: {} malformed JSON, {} invalid UTF-8, {} missing a \
         required field, {} with an invalid field, {} corrupt frames, {} truncated \
         shard tails ({} bytes), {} unreadable shards",
        sum(|r| r.malformed_json),
        sum(|r| r.invalid_utf8),
        sum(|r| r.missing_field),
        sum(|r| r.invalid_field),
        sum(|r| r.bad_frames),
        sum(|r| u64::from(r.truncated_bytes > 0)),
        sum(|r| r.truncated_bytes),
        sum(|r| u64::from(r.unreadable.is_some())),
    );
    let _ = writeln!(
        s,
        "- Dates that could not be read (kept, stored as null): {}",
        sum(|r| r.bad_dates)
    );
    let broken: Vec<&ShardReport> = reports.iter().filter(|r| r.broken() > 0).collect();
    if !broken.is_empty() {
        s.push_str(
            "\n| shard | malformed JSON | invalid UTF-8 | missing field | invalid field | \
             corrupt frames | truncated bytes |\n|---|---:|---:|---:|---:|---:|---:|\n",
        );
        for b in broken {
            let _ = writeln!(
                s,
                "| {}{} | {} | {} | {} | {} | {} | {} |",
                b.name,
                b.unreadable
                    .as_deref()
                    .map(|e| format!(" (unreadable: {e})"))
                    .unwrap_or_default(),
                b.malformed_json,
                b.invalid_utf8,
                b.missing_field,
                b.invalid_field,
                b.bad_frames,
                b.truncated_bytes
            );
        }
    }
}
/// Table rows `| domain | count |`, largest count first (ties by name): the
/// first [`MAX_DOMAINS`], then one row for the rest.
fn domain_rows<'a>(s: &mut String, counts: impl IntoIterator<Item = (&'a String, &'a u64)>) {
    let mut rows: Vec<(&String, &u64)> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (domain, n) in rows.iter().take(MAX_DOMAINS) {
        let _ = writeln!(s, "| {domain} | {n} |");
    }
    if rows.len() > MAX_DOMAINS {
        let rest: u64 = rows[MAX_DOMAINS..].iter().map(|(_, n)| **n).sum();
        let _ = writeln!(
            s,
            "| ({} other domains) | {rest} |",
            rows.len() - MAX_DOMAINS
        );
    }
}
