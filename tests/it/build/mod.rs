//! Integration tests: `scraper build` (shards written with the crawler's own
//! `ShardWriter`, built, read back with the parquet crate), the dataset card
//! (checked by `huggingface_hub` when Python has it), and `scripts/publish.sh`.
//!
//! The card, Python and publish checks are in `card.rs`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::{FileReader, SerializedFileReader};

use scraper::config::Config;
use scraper::dataset::{BuildOptions, Removed, Summary, Tuning, build_with};
use scraper::record::Article;
use scraper::relevance::Rule;
use scraper::store::shard::ShardWriter;

mod card;
mod near;

/// Words that make each article's story its own (so that near-duplicate
/// removal keeps every one): a pseudo-random sentence seeded by the id.
fn story_words(id: i64, n: usize) -> String {
    const WORDS: [&str; 24] = [
        "chips",
        "lab",
        "budget",
        "cloud",
        "startup",
        "benchmark",
        "policy",
        "robot",
        "vision",
        "speech",
        "agents",
        "safety",
        "energy",
        "health",
        "finance",
        "court",
        "school",
        "search",
        "maps",
        "music",
        "games",
        "weather",
        "farms",
        "ships",
    ];
    let mut x = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            WORDS[(x % WORDS.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn article(id: i64) -> Article {
    let para = format!(
        "Paragraph {id} about a new language model and its training data: {}. \
         The company said the AI system improves inference on GPUs.",
        story_words(id, 30)
    );
    Article {
        id,
        url: format!("https://www.site{}.com/news/{id}", id % 3),
        domain: format!("site{}.com", id % 3),
        title: format!("OpenAI model story {id}"),
        date: chrono::NaiveDate::from_ymd_opt(2024, 3, 1 + (id % 28) as u32),
        date_source: Some(if id % 2 == 0 { "jsonld" } else { "url" }.into()),
        year: Some(2023 + (id % 3) as i32),
        text: format!("{para}\n{para} Second part.\nThird paragraph for {id}."),
        keywords: vec!["ai".into(), "model".into()],
        fetched_at: format!("2026-10-09T18:12:{:02}Z", id % 60).parse().unwrap(),
        lang: (id % 4 != 0).then(|| "en".into()),
        byline: (id % 5 == 0).then(|| format!("Writer {id}")),
        run_id: Some("run-1".into()),
        date_modified: (id % 3 == 0).then(|| "2026-11-30".parse().unwrap()),
        // Null, false and true all occur.
        accessible_for_free: [None, Some(false), Some(true)][(id % 3) as usize],
        ..Article::default()
    }
}

fn write_shard(data: &Path, name: &str, articles: &[Article]) -> PathBuf {
    let dir = data.join("articles");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.jsonl.zst"));
    let mut w = ShardWriter::create(&path, Duration::from_secs(3600)).unwrap();
    for (i, a) in articles.iter().enumerate() {
        w.append(a).unwrap();
        if i % 7 == 6 {
            w.flush().unwrap();
        }
    }
    w.finish().unwrap();
    path
}

fn opts(data: &Path, out: &Path) -> BuildOptions {
    BuildOptions {
        data: data.to_path_buf(),
        out: out.to_path_buf(),
        relevance_filter: false,
        strict: false,
    }
}

fn small() -> Tuning {
    Tuning {
        file_rows: 12,
        row_group_rows: 4,
        page_rows: 2,
        ..Tuning::default()
    }
}

fn run(data: &Path, out: &Path, tuning: &Tuning) -> Summary {
    build_with(&Config::default(), &opts(data, out), tuning).unwrap()
}

fn read_all(out: &Path) -> Vec<RecordBatch> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut batches = vec![];
    for f in files {
        assert!(f.to_str().unwrap().ends_with(".parquet"), "{f:?}");
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&f).unwrap())
            .unwrap()
            .build()
            .unwrap();
        batches.extend(reader.map(|b| b.unwrap()));
    }
    batches
}

fn ids(out: &Path) -> Vec<i64> {
    read_all(out)
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect()
}

fn opt_str(b: &RecordBatch, name: &str, i: usize) -> Option<String> {
    let col = b.column_by_name(name)?.as_string::<i32>();
    col.is_valid(i).then(|| col.value(i).to_string())
}

#[test]
fn round_trip_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let mut first: Vec<Article> = (1..=30).map(article).collect();
    first[4].canonical_url = Some("https://site2.com/amp/5".into());
    first[5].date = None;
    first[5].year = None;
    first[6].keywords = vec![];
    first[7].text = "Ünïcode “quotes” — and\ttabs.\nÉté.".into();
    first[8].markdown = Some(format!(
        "## Part one\n\n- {}",
        first[8].text.replace('\n', "\n- ")
    ));
    let second: Vec<Article> = (31..=45).map(article).collect();
    write_shard(&data, "2026-10-09T0000Z-a", &first);
    write_shard(&data, "2026-10-10T0000Z-b", &second);
    let summary = run(&data, &out, &small());
    assert!(summary.ok);
    assert_eq!(summary.rows, 45);
    assert!(summary.files.len() > 1, "small cuts give several files");

    let want: Vec<Article> = first.into_iter().chain(second).collect();
    let batches = read_all(&out);
    let schema = batches[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "id",
            "url",
            "domain",
            "title",
            "date",
            "date_source",
            "year",
            "keywords",
            "fetched_at",
            "lang",
            "canonical_url",
            "byline",
            "run_id",
            "robots_hash",
            "crawler",
            "ai_signals",
            "ai_reserved",
            "relevance_score",
            "date_modified",
            "accessible_for_free",
            "extractor_version",
            "markdown",
            "text"
        ],
        "every column, always, in a fixed order"
    );
    for f in schema.fields().iter().skip(9) {
        assert_eq!(f.is_nullable(), f.name() != "text", "{}", f.name());
    }
    let mut got = vec![];
    for b in &batches {
        for i in 0..b.num_rows() {
            let date = b
                .column_by_name("date")
                .unwrap()
                .as_primitive::<Date32Type>();
            let year = b
                .column_by_name("year")
                .unwrap()
                .as_primitive::<Int32Type>();
            let fetched = b.column_by_name("fetched_at").unwrap();
            let fetched = fetched.as_primitive::<TimestampMicrosecondType>();
            let kw = b.column_by_name("keywords").unwrap().as_list::<i32>();
            let kw = kw.value(i);
            let kw = kw.as_string::<i32>();
            got.push(Article {
                id: b.column(0).as_primitive::<Int64Type>().value(i),
                url: opt_str(b, "url", i).unwrap(),
                domain: opt_str(b, "domain", i).unwrap(),
                title: opt_str(b, "title", i).unwrap(),
                date: date.is_valid(i).then(|| {
                    chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()
                        + chrono::Duration::days(date.value(i).into())
                }),
                date_source: opt_str(b, "date_source", i),
                year: year.is_valid(i).then(|| year.value(i)),
                text: b
                    .column_by_name("text")
                    .unwrap()
                    .as_string::<i64>()
                    .value(i)
                    .into(),
                keywords: kw.iter().map(|k| k.unwrap().to_string()).collect(),
                fetched_at: chrono::DateTime::from_timestamp_micros(fetched.value(i)).unwrap(),
                lang: opt_str(b, "lang", i),
                canonical_url: opt_str(b, "canonical_url", i),
                byline: opt_str(b, "byline", i),
                run_id: opt_str(b, "run_id", i),
                robots_hash: opt_str(b, "robots_hash", i),
                ai_signals: Vec::new(),
                ai_reserved: None,
                relevance_score: None,
                crawler: opt_str(b, "crawler", i),
                markdown: b
                    .column_by_name("markdown")
                    .unwrap()
                    .as_string::<i64>()
                    .is_valid(i)
                    .then(|| {
                        b.column_by_name("markdown")
                            .unwrap()
                            .as_string::<i64>()
                            .value(i)
                            .to_string()
                    }),
                date_modified: {
                    let m = b
                        .column_by_name("date_modified")
                        .unwrap()
                        .as_primitive::<Date32Type>();
                    m.is_valid(i).then(|| {
                        let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
                        epoch + chrono::Duration::days(i64::from(m.value(i)))
                    })
                },
                updated: false,
                accessible_for_free: {
                    let c = b
                        .column_by_name("accessible_for_free")
                        .unwrap()
                        .as_boolean();
                    c.is_valid(i).then(|| c.value(i))
                },
                extractor_version: opt_str(b, "extractor_version", i),
                warc_file: None,
                warc_offset: None,
                withdrawn: None,
                rendered: false,
            });
        }
    }
    assert_eq!(got, want);

    // Writer options as promised: zstd, dictionaries where values repeat, page index, sorted by id.
    let f = File::open(&summary.files[0]).unwrap();
    let reader = SerializedFileReader::new(f).unwrap();
    let meta = reader.metadata();
    assert!(meta.num_row_groups() > 1);
    let rg = meta.row_group(0);
    assert_eq!(rg.sorting_columns().unwrap()[0].column_idx, 0);
    for col in rg.columns() {
        let path = col.column_path().string();
        assert!(
            matches!(col.compression(), parquet::basic::Compression::ZSTD(_)),
            "{path}"
        );
        let dict = col.dictionary_page_offset().is_some();
        let want_dict = [
            "domain",
            "date_source",
            "lang",
            "run_id",
            "robots_hash",
            "crawler",
            "extractor_version",
            "keywords.list.item",
            "ai_signals.list.item",
        ];
        assert_eq!(
            dict,
            want_dict.contains(&path.as_str()),
            "dictionary on {path}"
        );
        assert!(
            col.column_index_offset().is_some() || path == "text" || path == "markdown",
            "page index on {path}"
        );
        assert!(
            col.offset_index_offset().is_some(),
            "offset index on {path}"
        );
    }
}

#[test]
fn two_builds_give_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    write_shard(&data, "a", &(1..=40).map(article).collect::<Vec<_>>());
    write_shard(&data, "b", &(41..=60).map(article).collect::<Vec<_>>());
    let one = run(&data, &dir.path().join("one"), &small());
    let serial = Tuning {
        jobs: 1,
        frame_cache: 1,
        ..small()
    };
    let two = run(&data, &dir.path().join("two"), &serial);
    assert_eq!(one.files.len(), two.files.len());
    for (a, b) in one.files.iter().zip(&two.files) {
        assert_eq!(a.file_name(), b.file_name());
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{a:?} differs"
        );
    }
    // One file of many row groups: encoding them on several threads gives
    // the same bytes as on one.
    let one_file = |jobs| Tuning {
        jobs,
        file_rows: u64::MAX,
        ..small()
    };
    let wide = run(&data, &dir.path().join("wide"), &one_file(4));
    let narrow = run(&data, &dir.path().join("narrow"), &one_file(1));
    assert_eq!(wide.files.len(), 1);
    assert!(std::fs::read(&wide.files[0]).unwrap() == std::fs::read(&narrow.files[0]).unwrap());
    // A rebuild in place replaces the files and leaves no stale ones behind.
    let again = run(&data, &dir.path().join("one"), &Tuning::default());
    assert_eq!(again.files.len(), 1);
    assert_eq!(
        std::fs::read_dir(dir.path().join("one/data"))
            .unwrap()
            .count(),
        1
    );
}

/// One zstd frame with a checksum, as the shard writer makes them.
fn frame(text: &[u8]) -> Vec<u8> {
    let mut c = zstd::bulk::Compressor::new(3).unwrap();
    c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
        .unwrap();
    c.compress(text).unwrap()
}

fn line(a: &Article) -> Vec<u8> {
    let mut v = serde_json::to_vec(a).unwrap();
    v.push(b'\n');
    v
}

#[test]
fn broken_input_is_counted_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    write_shard(&data, "a-good", &(1..=5).map(article).collect::<Vec<_>>());
    let mut text = line(&article(6));
    text.extend_from_slice(b"{\"id\": 7, \"url\": \"https://x.com/7\"\n"); // cut line
    text.extend_from_slice(b"{\"id\": 8, \"title\": \"\xff\xfe\"}\n"); // invalid UTF-8
    text.extend_from_slice(br#"{"id": 9, "url": "https://x.com/9"}"#); // missing fields
    text.push(b'\n');
    // Lines an Article can no longer hold, written as an older or broken writer would.
    let with = |id: i64, field: &str, value: &str| {
        let mut v: serde_json::Value = serde_json::from_slice(&line(&article(id))).unwrap();
        v[field] = value.into();
        let mut l = serde_json::to_vec(&v).unwrap();
        l.push(b'\n');
        l
    };
    text.extend(with(10, "fetched_at", "yesterday")); // invalid field
    text.extend(with(11, "date", "someday")); // kept, date null
    text.extend(line(&article(12)));
    let mut corrupt = frame(&line(&article(13)));
    let n = corrupt.len();
    corrupt[n - 1] ^= 0xff; // checksum no longer matches
    let torn = frame(&line(&article(15)));
    let mut bytes = frame(&text);
    bytes.extend(corrupt);
    bytes.extend(frame(&line(&article(14))));
    bytes.extend(&torn[..torn.len() / 2]);
    let articles = data.join("articles");
    File::create(articles.join("b-broken.jsonl.zst"))
        .unwrap()
        .write_all(&bytes)
        .unwrap();

    let summary = run(&data, &out, &Tuning::default());
    assert!(summary.ok);
    assert_eq!(ids(&out), vec![1, 2, 3, 4, 5, 6, 11, 12, 14]);
    let r = &summary.reports[1];
    assert_eq!(r.name, "b-broken.jsonl.zst");
    let counts = (
        r.malformed_json,
        r.invalid_utf8,
        r.missing_field,
        r.invalid_field,
    );
    assert_eq!(counts, (1, 1, 1, 1));
    assert_eq!(
        (r.bad_frames, r.truncated_bytes as usize),
        (1, torn.len() / 2)
    );
    assert_eq!(r.bad_dates, 1);
    assert_eq!(summary.reports[0].broken(), 0);
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains("1 malformed JSON, 1 invalid UTF-8, 1 missing a required field"));
    assert!(
        card.contains("| b-broken.jsonl.zst | 1 | 1 | 1 | 1 | 1 |"),
        "{card}"
    );

    // --strict: a failing result and nothing written.
    let strict_out = dir.path().join("strict");
    let strict = BuildOptions {
        strict: true,
        ..opts(&data, &strict_out)
    };
    let s = build_with(&Config::default(), &strict, &Tuning::default()).unwrap();
    assert!(!s.ok);
    assert!(!strict_out.exists());
    // The binary maps it to exit status 1.
    let config = dir.path().join("config.yml");
    std::fs::write(&config, "").unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_scraper"))
        .args(["--config", config.to_str().unwrap(), "build", "--strict"])
        .args([
            "--data",
            data.to_str().unwrap(),
            "--out",
            strict_out.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn dedup_keeps_the_lowest_id() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let a1 = article(1);
    let a2 = article(2);
    write_shard(&data, "run-1", &[a1.clone(), a2.clone()]);
    run(&data, &out, &Tuning::default());
    assert_eq!(ids(&out), vec![1, 2]);

    let mut tracking_copy = article(3); // same URL as 1, other scheme, www and tracking
    tracking_copy.url = a1.url.replace("https://www.", "http://") + "?utm_source=rss";
    let mut amp = article(4); // canonical points at 2
    amp.url = "https://amp.site2.com/2".into();
    amp.canonical_url = Some(a2.url.clone());
    let mut syndicated = article(5); // same text as 1, case and spaces changed
    syndicated.url = "https://other.org/copy".into();
    syndicated.text = format!("  {}  ", a1.text.to_uppercase().replace(' ', "   "));
    let mut same_id = article(6);
    same_id.id = 2;
    let new = article(7);
    write_shard(
        &data,
        "run-2",
        &[tracking_copy, amp, syndicated, same_id, new],
    );
    let s = run(&data, &out, &Tuning::default());
    assert_eq!(
        ids(&out),
        vec![1, 2, 7],
        "earlier ids stay, later copies go"
    );
    let want = Removed {
        updated: 0,
        relevance: 0,
        same_url: 2,
        same_text: 1,
        same_id: 1,
        near_text: 0,
        ..Removed::default()
    };
    assert_eq!(s.removed, want);
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains("Removed as the same URL or canonical URL as a lower id: 2"));
}

/// A config whose rule keeps AI stories.
fn ai_rule_config() -> Config {
    Config::parse(
        "keywords:\n  targets: [model, training, ai]\n  strong_targets: [AI, OpenAI, language model]\n  \
         min_article_words: 20\n",
        Path::new("test.yml"),
    )
    .unwrap()
}

/// Turn an article into one the AI rule rejects.
fn garden_notes(a: &mut Article) {
    a.title = format!("Garden notes {}", a.id);
    a.text = "Tomatoes need sun.\nWater them in the morning.".into();
}

#[test]
fn relevance_rule_is_applied_again() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let mut all: Vec<Article> = (1..=10).map(article).collect();
    all.iter_mut().skip(5).for_each(garden_notes);
    write_shard(&data, "run-1", &all);
    let config = ai_rule_config();
    let rule = Rule::new(&config.keywords);
    let want: Vec<i64> = all
        .iter()
        .filter(|a| rule.evaluate(&a.title, &a.text).relevant)
        .map(|a| a.id)
        .collect();
    assert_eq!(
        want,
        vec![1, 2, 3, 4, 5],
        "the AI stories pass, the garden notes do not"
    );
    let o = BuildOptions {
        relevance_filter: true,
        ..opts(&data, &out)
    };
    let s = build_with(&config, &o, &Tuning::default()).unwrap();
    assert_eq!(s.removed.relevance as usize, 10 - want.len());
    assert_eq!(ids(&out), want);
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    let line = format!("Removed by the relevance rule: {}", 10 - want.len());
    assert!(card.contains(&line));
    // The relevance_score column holds the score under the rule this build
    // applied (the records carry none).
    let scores: Vec<Option<f64>> = read_all(&out)
        .iter()
        .flat_map(|b| {
            let col = b
                .column_by_name("relevance_score")
                .unwrap()
                .as_primitive::<arrow_array::types::Float64Type>();
            (0..col.len())
                .map(|i| col.is_valid(i).then(|| col.value(i)))
                .collect::<Vec<_>>()
        })
        .collect();
    let expected: Vec<Option<f64>> = all
        .iter()
        .filter(|a| want.contains(&a.id))
        .map(|a| Some(rule.evaluate(&a.title, &a.text).score))
        .collect();
    assert_eq!(scores, expected);
    assert!(scores.iter().all(|s| s.is_some_and(|s| s >= 0.5)));
}

#[test]
fn a_build_that_keeps_nothing_writes_one_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let mut all: Vec<Article> = (1..=3).map(article).collect();
    all.iter_mut().for_each(garden_notes);
    write_shard(&data, "run-1", &all);
    let config = ai_rule_config();
    let o = BuildOptions {
        relevance_filter: true,
        ..opts(&data, &out)
    };
    let s = build_with(&config, &o, &Tuning::default()).unwrap();
    assert_eq!((s.rows, s.removed.relevance, s.files.len()), (0, 3, 1));
    assert!(ids(&out).is_empty());
    let meta =
        parquet::file::reader::SerializedFileReader::new(File::open(&s.files[0]).unwrap()).unwrap();
    use parquet::file::reader::FileReader;
    assert_eq!(meta.metadata().file_metadata().num_rows(), 0);
}

#[test]
fn consent_provenance_columns_and_withheld_counts_in_the_card() {
    use scraper::store::consent::ConsentLog;
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let mut reserved = article(1);
    reserved.robots_hash = Some("00000000000000ab".into());
    reserved.ai_signals = vec!["robots.txt:ai-train=no".into()];
    reserved.ai_reserved = Some(true);
    reserved.crawler = Some("scraper/0.1.0".into());
    let mut plain = article(2);
    plain.ai_reserved = Some(false);
    plain.crawler = Some("scraper/0.1.0".into());
    let old = article(3);
    write_shard(&data, "run-1", &[reserved.clone(), plain, old]);
    // Withheld pages over two runs: a URL withheld twice counts once, and a
    // URL the dataset holds (stored by a later run) not at all.
    let state = data.join("state");
    let mut one = ConsentLog::new(&state, "run-1");
    one.withheld("https://x.test/1", "x.test", &["x-robots-tag:noai".into()]);
    one.withheld("https://x.test/2", "x.test", &[]);
    let mut two = ConsentLog::new(&state, "run-2");
    two.withheld("https://x.test/1", "x.test", &[]);
    two.withheld(&reserved.url, &reserved.domain, &[]);
    run(&data, &out, &Tuning::default());

    let batches = read_all(&out);
    let b = &batches[0];
    assert_eq!(b.num_rows(), 3);
    assert_eq!(
        opt_str(b, "robots_hash", 0).as_deref(),
        Some("00000000000000ab")
    );
    assert_eq!(opt_str(b, "crawler", 1).as_deref(), Some("scraper/0.1.0"));
    assert_eq!(opt_str(b, "crawler", 2), None);
    let flags = b.column_by_name("ai_reserved").unwrap().as_boolean();
    assert_eq!(
        (0..3)
            .map(|i| flags.is_valid(i).then(|| flags.value(i)))
            .collect::<Vec<_>>(),
        [Some(true), Some(false), None]
    );
    let signals = b.column_by_name("ai_signals").unwrap().as_list::<i32>();
    assert_eq!(
        signals.value(0).as_string::<i32>().value(0),
        "robots.txt:ai-train=no"
    );
    assert_eq!(signals.value(1).len(), 0);
    assert!(
        signals.is_null(2),
        "an old record has no signals column value"
    );

    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        card.contains("- name: ai_reserved\n    dtype: bool"),
        "{card}"
    );
    assert!(card.contains("2 pages from 1 domains"), "{card}");
    assert!(card.contains("| x.test | 2 |"), "{card}");
}

/// Two machines crawled from the same state: their shards share ids. After
/// `scraper renumber`, the second run's articles have ids past every other
/// shard's, `next_id` is past them, every article survives the build under
/// a unique id, and the rest of each record is unchanged.
#[test]
fn renumber_moves_a_conflicting_run_past_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    // Distinct URLs and texts so that dedup keeps all of them.
    let run_article = |id: i64, run: &str| {
        let mut a = article(id);
        a.url = format!("https://{run}.example/news/{id}");
        let story = article(if run == "a" { id } else { 100 + id }).text;
        a.text = format!("{run} story {id}, told at length.\n{story}");
        a
    };
    let first: Vec<Article> = (1..=5).map(|i| run_article(i, "a")).collect();
    let second: Vec<Article> = (3..=9).map(|i| run_article(i, "b")).collect();
    write_shard(&data, "20260101T000000Z-aaaa", &first);
    let b = write_shard(&data, "20260101T000001Z-bbbb", &second);
    // Torn tail of a crashed run: dropped and counted.
    let mut f = std::fs::OpenOptions::new().append(true).open(&b).unwrap();
    f.write_all(&[0x28, 0xb5, 0x2f, 0xfd, 0x00]).unwrap();
    drop(f);
    // The remote's counter, written by the first run.
    std::fs::create_dir_all(data.join("state")).unwrap();
    std::fs::write(data.join("state/next_id"), "6\n20260101T000000Z-aaaa\n").unwrap();

    let config = dir.path().join("config.yml");
    std::fs::write(&config, "").unwrap();
    let renumber = |shard: &Path| {
        Command::new(env!("CARGO_BIN_EXE_scraper"))
            .args(["--config", config.to_str().unwrap(), "renumber"])
            .args(["--data", data.to_str().unwrap(), shard.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let o = renumber(&b);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("renumbered 7 records"), "{said}");
    assert!(said.contains("ids 6..=12 (were 3..=9)"), "{said}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("5 bytes of torn tail"));
    assert_eq!(
        std::fs::read_to_string(data.join("state/next_id")).unwrap(),
        "13\n20260101T000001Z-bbbb\n"
    );
    // No temporary file is left beside the shards.
    let names: Vec<String> = std::fs::read_dir(data.join("articles"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    run(&data, &out, &Tuning::default());
    assert_eq!(ids(&out), (1..=12).collect::<Vec<_>>());
    // Everything but the id is as the crawler wrote it.
    let mut lines = Vec::new();
    scraper::store::shard::read_lines(&b, |l| lines.push(l.to_vec())).unwrap();
    for (line, want) in lines.iter().zip(&second) {
        let got: Article = serde_json::from_slice(line).unwrap();
        assert_eq!(Article { id: want.id, ..got }, *want);
    }

    // Run again: the shard is already past the others and its own counter
    // does not count, so its ids stay where they are.
    let o = renumber(&b);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("ids 6..=12 (were 6..=12)"));
    // Not a shard of this data folder: a clear error, nothing changed.
    let stray = dir.path().join("elsewhere.jsonl.zst");
    std::fs::copy(&b, &stray).unwrap();
    let o = renumber(&stray);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a shard of"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
