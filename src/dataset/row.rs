//! One shard line read for the build: parsing with borrowed strings, the
//! classification of broken lines, the typed values the Parquet columns need,
//! and the identity keys deduplication compares (URL keys and the normalised
//! text hash). Pure functions. Pass 1 reads a line with [`Keys::parse`], pass 2
//! with [`Row::parse`]; both read every field through the same checks and a
//! test holds them to refusing the same lines, so a line the scan accepted is
//! a line the writer can write.

use std::borrow::Cow;

use serde::Deserialize;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

/// Why a line was skipped. Each kind is counted per shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// Not valid UTF-8.
    InvalidUtf8,
    /// Not a JSON object (syntax error, cut line).
    MalformedJson,
    /// A required field (`id`, `url`, `domain`, `title`, `text`, `keywords`, `fetched_at`) is absent.
    MissingField,
    /// A field has the wrong type or an unreadable value (e.g. `fetched_at` not RFC 3339).
    InvalidField,
}

/// A shard line as stored (see [`crate::record::Article`]), borrowing from the line where it can.
#[derive(Debug, Deserialize)]
pub struct Row<'a> {
    pub id: i64,
    #[serde(borrow)]
    pub url: Cow<'a, str>,
    #[serde(borrow)]
    pub domain: Cow<'a, str>,
    #[serde(borrow)]
    pub title: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub date: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub date_source: Option<Cow<'a, str>>,
    #[serde(default)]
    pub year: Option<i32>,
    #[serde(borrow)]
    pub text: Cow<'a, str>,
    #[serde(borrow, deserialize_with = "strs")]
    pub keywords: Vec<Cow<'a, str>>,
    #[serde(borrow)]
    pub fetched_at: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub lang: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub canonical_url: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub byline: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub run_id: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub robots_hash: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub crawler: Option<Cow<'a, str>>,
    #[serde(default)]
    pub ai_signals: Option<Vec<String>>,
    #[serde(default)]
    pub ai_reserved: Option<bool>,
    /// The relevance rule's score in [0, 1], when the crawler recorded one.
    #[serde(default)]
    pub relevance_score: Option<f64>,
    /// The text with its structure as Markdown, in records that carry it.
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub markdown: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub date_modified: Option<Cow<'a, str>>,
    /// Read to be checked as [`Keys`] checks it; pass 1 acts on it.
    #[serde(default)]
    #[allow(dead_code)]
    pub updated: bool,
    /// Whether the article is free to read, when the page said.
    #[serde(default)]
    pub accessible_for_free: Option<bool>,
    pub extractor_version: Option<Cow<'a, str>>,
    /// Read to be checked; not a column.
    #[serde(default)]
    #[expect(dead_code, reason = "read only to be checked, as `Keys` checks it")]
    warc_file: Option<Checked>,
    #[serde(default)]
    #[expect(dead_code, reason = "read only to be checked, as `Keys` checks it")]
    warc_offset: Option<u64>,
    /// Set by `scraper reextract` on a record the build drops (pass 1 reads it).
    #[serde(default)]
    #[expect(dead_code, reason = "read only to be checked, as `Keys` checks it")]
    withdrawn: Option<crate::record::Rejection>,
}

/// A string that borrows from the line when it has no escapes (serde only
/// borrows a `Cow<str>` field itself, not one inside an `Option` or a `Vec`).
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

fn opt_str<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'a, str>>, D::Error> {
    Ok(Option::<Str<'a>>::deserialize(d)?.map(|s| s.0))
}

fn strs<'de: 'a, 'a, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Cow<'a, str>>, D::Error> {
    Ok(Vec::<Str<'a>>::deserialize(d)?
        .into_iter()
        .map(|s| s.0)
        .collect())
}

/// A parsed, checked line with the typed values the columns need.
#[derive(Debug)]
pub struct Parsed<'a> {
    pub row: Row<'a>,
    /// Microseconds since the Unix epoch, UTC.
    pub fetched_at_us: i64,
    /// Days since the Unix epoch; `None` when absent or unreadable (pass 1
    /// counts an unreadable one, see [`Keys::parse`]).
    pub date_days: Option<i32>,
    /// `date_modified` in days since the Unix epoch; `None` when absent or unreadable.
    pub modified_days: Option<i32>,
}

impl Row<'_> {
    /// Parse and check one line. Deterministic: the same bytes give the same answer.
    pub fn parse(line: &[u8]) -> Result<Parsed<'_>, Broken> {
        let row: Row<'_> = from_line(line)?;
        let (fetched_at_us, date_days, _) = times(&row.fetched_at, row.date.as_deref())?;
        let modified_days = row.date_modified.as_deref().and_then(parse_day);
        Ok(Parsed {
            row,
            fetched_at_us,
            date_days,
            modified_days,
        })
    }
}

/// What pass 1 reads of a line: the fields deduplication and the relevance
/// rule need. Every other field is read and checked exactly as [`Row`] reads
/// it ([`Checked`]) but not kept, so [`Keys::parse`] refuses exactly the
/// lines [`Row::parse`] refuses (a test holds them to it), without building
/// the lists and the Markdown pass 2 builds again anyway.
#[derive(Debug, Deserialize)]
#[expect(
    dead_code,
    reason = "the fields pass 1 does not use are read only to be checked"
)]
pub struct Keys<'a> {
    pub id: i64,
    #[serde(borrow)]
    pub url: Cow<'a, str>,
    domain: Checked,
    #[serde(borrow)]
    pub title: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    date: Option<Cow<'a, str>>,
    #[serde(default)]
    date_source: Option<Checked>,
    #[serde(default)]
    year: Option<i32>,
    #[serde(borrow)]
    pub text: Cow<'a, str>,
    keywords: Vec<Checked>,
    #[serde(borrow)]
    fetched_at: Cow<'a, str>,
    /// The relevance rule judges a record in its own language.
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub lang: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub canonical_url: Option<Cow<'a, str>>,
    #[serde(default)]
    byline: Option<Checked>,
    #[serde(default)]
    run_id: Option<Checked>,
    #[serde(default)]
    robots_hash: Option<Checked>,
    #[serde(default)]
    crawler: Option<Checked>,
    #[serde(default)]
    ai_signals: Option<Vec<Checked>>,
    #[serde(default)]
    ai_reserved: Option<bool>,
    #[serde(default)]
    relevance_score: Option<f64>,
    #[serde(default)]
    markdown: Option<Checked>,
    #[serde(default)]
    date_modified: Option<Checked>,
    /// A new version of an earlier record of the same URL.
    #[serde(default)]
    pub updated: bool,
    accessible_for_free: Option<bool>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub extractor_version: Option<Cow<'a, str>>,
    #[serde(default)]
    warc_file: Option<Checked>,
    #[serde(default)]
    warc_offset: Option<u64>,
    #[serde(default)]
    pub withdrawn: Option<crate::record::Rejection>,
}

impl Keys<'_> {
    /// Parse and check one line as [`Row::parse`] does; also whether its
    /// `date` was unreadable.
    pub fn parse(line: &[u8]) -> Result<(Keys<'_>, bool), Broken> {
        let keys: Keys<'_> = from_line(line)?;
        let (_, _, bad_date) = times(&keys.fetched_at, keys.date.as_deref())?;
        Ok((keys, bad_date))
    }
}

/// A JSON string read and checked (escapes and all, as a `Cow<str>` field
/// would be), then dropped: nothing is allocated for it.
#[derive(Debug)]
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        struct AnyStr;
        impl serde::de::Visitor<'_> for AnyStr {
            type Value = Checked;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }
        }
        d.deserialize_str(AnyStr)
    }
}

/// A line as UTF-8 JSON into `T`, with a broken line classified.
fn from_line<'a, T: Deserialize<'a>>(line: &'a [u8]) -> Result<T, Broken> {
    let text = std::str::from_utf8(line).map_err(|_| Broken::InvalidUtf8)?;
    serde_json::from_str(text).map_err(|e| classify(&e))
}

/// `fetched_at` in microseconds (an unreadable one makes the line broken),
/// and `date` in days with whether it was given but unreadable.
fn times(fetched_at: &str, date: Option<&str>) -> Result<(i64, Option<i32>, bool), Broken> {
    let fetched_at_us = chrono::DateTime::parse_from_rfc3339(fetched_at)
        .map_err(|_| Broken::InvalidField)?
        .timestamp_micros();
    let (date_days, bad_date) = match date {
        None => (None, false),
        Some(d) => match parse_day(d) {
            Some(days) => (Some(days), false),
            None => (None, true),
        },
    };
    Ok((fetched_at_us, date_days, bad_date))
}

fn classify(e: &serde_json::Error) -> Broken {
    use serde_json::error::Category;
    match e.classify() {
        Category::Data if e.to_string().starts_with("missing field") => Broken::MissingField,
        Category::Data => Broken::InvalidField,
        Category::Syntax | Category::Eof | Category::Io => Broken::MalformedJson,
    }
}

/// `yyyy-mm-dd` (a longer RFC 3339 value keeps its calendar day) as days since 1970-01-01.
fn parse_day(s: &str) -> Option<i32> {
    let day = s.get(..10)?;
    if s.len() > 10 && !s[10..].starts_with(['T', 't', ' ']) {
        return None;
    }
    let date = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from((date - epoch).num_days()).ok()
}

/// The URL identity used for dedup: [`crate::url::seen_hash`] of the normalised
/// URL, or a hash of the trimmed text when it does not parse as http(s).
pub fn url_key(url: &str) -> u64 {
    match crate::url::parse(url) {
        Some(u) => crate::url::seen_hash(&u),
        None => xxh3_64(url.trim().as_bytes()),
    }
}

/// The key of a `canonical_url`, or `None` when it is unusable: unparsable, or
/// a site's home page (a misconfigured site that points every article at its
/// home page must not collapse them all into one).
pub fn canonical_key(canonical: Option<&str>) -> Option<u64> {
    let url = crate::url::parse(canonical?)?;
    if url.path() == "/" && url.query().is_none() {
        return None;
    }
    Some(crate::url::seen_hash(&url))
}

/// 128-bit xxh3 of the text with case folded and every run of white space
/// (`char::is_whitespace`) made one space, leading and trailing dropped.
/// `None` for a text with no words.
///
/// One pass, no allocation: the normalised bytes go through a small buffer
/// into a streaming hasher. Runs of 32 or 8 ASCII bytes take a branch-light
/// path ([`fold_block`], [`fold_words`]) when they hold no control byte, no two spaces in a
/// row and no space right after an emitted one, which is most of ordinary
/// prose; anything else goes byte by byte or char by char.
pub fn text_key(text: &str) -> Option<u128> {
    const CAP: usize = 8192;
    /// Room kept free in `buf` per step: a step emits at most eight chars, each
    /// at most three lowercase chars of four bytes.
    const STEP_ROOM: usize = 128;
    let mut hasher = Xxh3Default::new();
    let mut buf = [0u8; CAP];
    let mut n = 0;
    let mut words = false;
    // The last byte emitted is a space (true at the start, so leading white space emits nothing).
    let mut last_space = true;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if n + STEP_ROOM > CAP {
            // Keep a trailing space back: it is dropped if the text ends there.
            if last_space {
                hasher.update(&buf[..n - 1]);
                buf[0] = b' ';
                n = 1;
            } else {
                hasher.update(&buf[..n]);
                n = 0;
            }
        }
        // Plain ASCII prose: 32 bytes at a time, else 8.
        if let (Some(src), Some(dst)) = (bytes.get(i..i + 32), buf.get_mut(n..n + 32))
            && let Some(ends_in_space) = fold_block(src, dst, last_space)
        {
            n += 32;
            i += 32;
            last_space = ends_in_space;
            words = true;
            continue;
        }
        if let (Some(src), Some(dst)) = (bytes.get(i..i + 8), buf.get_mut(n..n + 8))
            && let Some(ends_in_space) = fold_words(src, dst, last_space)
        {
            n += 8;
            i += 8;
            last_space = ends_in_space;
            words = true;
            continue;
        }
        let end = bytes.len().min(i + 8);
        while i < end {
            let b = bytes[i];
            if b < 0x80 {
                i += 1;
                let ws = b == b' ' || (b'\t'..=b'\r').contains(&b);
                buf[n] = if ws { b' ' } else { b.to_ascii_lowercase() };
                n += usize::from(!(ws && last_space));
                last_space = ws;
                words |= !ws;
                continue;
            }
            // `i` sits on a char boundary: it only ever advances by whole chars.
            let Some(ch) = text[i..].chars().next() else {
                break;
            };
            i += ch.len_utf8();
            if ch.is_whitespace() {
                buf[n] = b' ';
                n += usize::from(!last_space);
                last_space = true;
                continue;
            }
            for lower in ch.to_lowercase() {
                n += lower.encode_utf8(&mut buf[n..]).len();
            }
            last_space = false;
            words = true;
        }
    }
    if last_space && n > 0 {
        n -= 1;
    }
    hasher.update(&buf[..n]);
    words.then(|| hasher.digest128())
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// [`text_key`]'s fast path for 32 bytes, written per byte without branches
/// so that the compiler turns it into vector instructions: when every byte is
/// ASCII and no white space byte follows another (or an emitted space, when
/// `last_space`), each byte maps to exactly one: white space to a space, the
/// rest lowercased. Returns whether the block ends in a space; `None` (with
/// `dst` written, to be ignored) when the slower paths must take these bytes.
#[inline(always)]
fn fold_block(src: &[u8], dst: &mut [u8], last_space: bool) -> Option<bool> {
    const N: usize = 32;
    let (Some(src), Some(dst)) = (src.get(..N), dst.get_mut(..N)) else {
        return None;
    };
    let is_ws = |b: u8| u8::from(b == b' ') | u8::from(b.wrapping_sub(b'\t') < 5);
    // The byte before each one: for the first, the last emitted.
    let mut prev = [0u8; N];
    prev[0] = if last_space { b' ' } else { b'x' };
    prev[1..].copy_from_slice(&src[..N - 1]);
    let mut bad = 0u8;
    for ((d, &b), &p) in dst.iter_mut().zip(src).zip(&prev) {
        let ws = is_ws(b);
        bad |= u8::from(b >= 0x80) | (ws & is_ws(p));
        let lower = b | (u8::from(b.wrapping_sub(b'A') < 26) << 5);
        *d = if ws != 0 { b' ' } else { lower };
    }
    (bad == 0).then_some(is_ws(src[N - 1]) != 0)
}

/// [`text_key`]'s fast path: case-fold `src` (whole eight-byte words) into
/// `dst` when every byte is ASCII, none is a control byte, no two spaces
/// follow each other and no space follows an emitted one (`last_space`).
/// Returns whether the folded bytes end in a space; `None` (with `dst` partly
/// written, to be ignored) when the slow path must take these bytes.
#[inline(always)]
fn fold_words(src: &[u8], dst: &mut [u8], mut last_space: bool) -> Option<bool> {
    for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(8)) {
        let w = u64::from_le_bytes(s.try_into().ok()?);
        if w & HIGH != 0 {
            return None;
        }
        // Per byte (all below 0x80, so no carries between bytes): high bit set when...
        let control = !(w + ONES * (0x80 - 0x20)) & HIGH; // ... below 0x20
        let spaces = !(w + ONES * (0x80 - 0x21)) & HIGH; // ... 0x20 (no controls)
        if control != 0 || spaces & (spaces >> 8) != 0 || (spaces & 0x80 != 0 && last_space) {
            return None;
        }
        let upper = (w + ONES * (0x80 - 0x41)) & !(w + ONES * (0x80 - 0x5B)) & HIGH;
        d.copy_from_slice(&(w | (upper >> 2)).to_le_bytes());
        last_space = spaces >> 63 != 0;
    }
    Some(last_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"id":7,"url":"https://ex.com/a","domain":"ex.com","title":"T","date":"2024-03-04","date_source":"jsonld","year":2024,"text":"One.\nTwo.","keywords":["ai"],"fetched_at":"2026-10-09T18:12:33Z","lang":"en"}"#;

    #[test]
    fn parses_a_good_line() {
        let p = Row::parse(GOOD.as_bytes()).unwrap();
        assert_eq!(p.row.id, 7);
        assert_eq!(p.row.text, "One.\nTwo.");
        assert_eq!(p.date_days, Some(19786));
        assert_eq!(p.fetched_at_us, 1_791_569_553_000_000);
        assert_eq!((p.row.relevance_score, &p.row.markdown), (None, &None));
        // Strings without escapes borrow from the line, inside options and lists too.
        assert!(matches!(p.row.lang, Some(Cow::Borrowed("en"))));
        assert!(matches!(p.row.keywords[..], [Cow::Borrowed("ai")]));
        let escaped = GOOD.replace(r#""lang":"en""#, r#""lang":"e\u006e","byline":null"#);
        let p = Row::parse(escaped.as_bytes()).unwrap();
        assert_eq!(p.row.lang.as_deref(), Some("en"));
        assert_eq!(p.row.byline, None);
        let scored = GOOD.replace(
            r#""lang":"en""#,
            r##""relevance_score":0.75,"markdown":"# T\n\nOne.""##,
        );
        let p = Row::parse(scored.as_bytes()).unwrap();
        assert_eq!(p.row.relevance_score, Some(0.75));
        assert_eq!(p.row.markdown.as_deref(), Some("# T\n\nOne."));
    }

    #[test]
    fn classifies_broken_lines() {
        let table: [(&[u8], Broken); 9] = [
            (b"{\"id\":1,", Broken::MalformedJson),
            (b"not json", Broken::MalformedJson),
            (b"{\"id\":\"\xff\"}", Broken::InvalidUtf8),
            (br#"{"id":1,"url":"u"}"#, Broken::MissingField),
            (br#"{"id":"x","url":"u"}"#, Broken::InvalidField),
            (
                br#"{"id":1,"url":"u","domain":"d","title":"t","text":"x","keywords":[],"fetched_at":"yesterday"}"#,
                Broken::InvalidField,
            ),
            (
                br#"{"id":1,"url":"u","domain":"d","title":"t","text":"x","keywords":[1],"fetched_at":"2026-10-09T18:12:33Z"}"#,
                Broken::InvalidField,
            ),
            (
                br#"{"id":1,"url":"u","domain":"d","title":"t","text":"x","keywords":[],"fetched_at":"2026-10-09T18:12:33Z","lang":5}"#,
                Broken::InvalidField,
            ),
            (
                br#"{"id":1,"url":"u","domain":"d","title":"t","text":"x","fetched_at":"2026-10-09T18:12:33Z"}"#,
                Broken::MissingField,
            ),
        ];
        for (line, want) in table {
            assert_eq!(
                Row::parse(line).err(),
                Some(want),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    /// Pass 1 ([`Keys::parse`]) must refuse exactly the lines pass 2
    /// ([`Row::parse`]) refuses, the same way: every field of a full record
    /// given every kind of wrong value, or left out.
    #[test]
    fn keys_refuse_what_rows_refuse() {
        let full: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
            r##"{"id":7,"url":"https://ex.com/a","domain":"ex.com","title":"T","date":"2024-03-04",
            "date_source":"jsonld","year":2024,"text":"One.\nTwo.","keywords":["ai","ml"],
            "fetched_at":"2026-10-09T18:12:33Z","lang":"en","canonical_url":"https://ex.com/a",
            "byline":"B","run_id":"r","robots_hash":"h","crawler":"c","ai_signals":["x"],
            "ai_reserved":false,"relevance_score":0.5,"markdown":"# T\n\nOne.",
            "extractor_version":"1.k00000000","warc_file":"r.warc.gz","warc_offset":123,
            "withdrawn":"not relevant"}"##,
        )
        .unwrap();
        let wrong = [
            "null",
            "5",
            "-1.5",
            "true",
            "\"s\"",
            "[]",
            "[1]",
            "[\"a\",null]",
            "{}",
            "\"2024-99-99\"",
            "\"\\ud800\"",
            "\"\\ud83d\\ude00\"",
            "\"\\x\"",
        ];
        let classify = |line: &str| {
            let (row, keys) = (Row::parse(line.as_bytes()), Keys::parse(line.as_bytes()));
            assert_eq!(row.as_ref().err(), keys.as_ref().err(), "{line}");
            if let (Ok(r), Ok((k, bad_date))) = (row, keys) {
                assert_eq!((r.row.id, &r.row.url, &r.row.text), (k.id, &k.url, &k.text));
                assert_eq!(bad_date, r.row.date.is_some() && r.date_days.is_none());
            }
        };
        let mut cases = 0;
        for field in full.keys() {
            let mut without = full.clone();
            without.remove(field);
            classify(&serde_json::Value::Object(without).to_string());
            for value in wrong {
                let line = serde_json::Value::Object(full.clone()).to_string();
                let old = serde_json::to_string(&full[field]).unwrap();
                let needle = format!("\"{field}\":{old}");
                assert!(line.contains(&needle), "{needle}");
                classify(&line.replace(&needle, &format!("\"{field}\":{value}")));
                cases += 1;
            }
        }
        assert!(cases >= 24 * wrong.len());
    }

    #[test]
    fn dates() {
        assert_eq!(parse_day("1970-01-02"), Some(1));
        assert_eq!(parse_day("2024-03-04T10:00:00+09:00"), Some(19786));
        assert_eq!(parse_day("2024-13-01"), None);
        assert_eq!(parse_day("2024-03-04x"), None);
        assert_eq!(parse_day("March"), None);
    }

    /// The normalisation `text_key` hashes, spelled out plainly.
    fn reference_key(text: &str) -> Option<u128> {
        let mut out = String::new();
        for word in text.split(char::is_whitespace).filter(|w| !w.is_empty()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.extend(word.chars().flat_map(char::to_lowercase));
        }
        (!out.is_empty()).then(|| xxhash_rust::xxh3::xxh3_128(out.as_bytes()))
    }

    #[test]
    fn text_key_matches_the_plain_normalisation() {
        let mut x = 0x9e37_79b9_u32;
        let pieces = [
            "Word",
            " ",
            "\n",
            "\t\r",
            "ÉCOLE",
            "à",
            "\u{3000}",
            "İ",
            "x",
            "  ",
            "Ünïcödé",
            "\u{a0}",
            "ABC",
            "\u{1F600}",
            "\u{b}",
            "\u{1}",
            "ab cd ef gh ij kl",
            "Mixed Case Words Here",
            "a  b",
            " x",
        ];
        for len in [0, 1, 2, 3, 5, 8, 9, 17, 40, 300, 3000, 20_000] {
            let mut t = String::new();
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                t.push_str(pieces[x as usize % pieces.len()]);
            }
            assert_eq!(text_key(&t), reference_key(&t), "{len}");
        }
    }

    #[test]
    fn text_key_matches_on_every_alignment() {
        // Short alphabets make every mix of spaces, capitals, controls and
        // multi-byte chars land on every position of an eight-byte word.
        let alphabet = [
            'a', 'Z', ' ', ' ', '\n', '\u{b}', '\u{7f}', 'é', 'İ', '\u{2003}', '.',
        ];
        let mut rand = crate::xorshift::XorShift32::new(0x2545_f491);
        for len in 0..200 {
            for _ in 0..20 {
                let t: String = (0..len)
                    .map(|_| alphabet[rand.below(alphabet.len())])
                    .collect();
                assert_eq!(text_key(&t), reference_key(&t), "{t:?}");
            }
        }
    }

    #[test]
    fn text_key_matches_on_plain_prose_with_rare_specials() {
        // Long plain runs take the 32-byte path; the rare specials land at
        // every offset within and across its words.
        let specials = ["  ", "\n", "\t ", "É", "\u{2003}", " \n ", "\u{1}"];
        let mut rand = crate::xorshift::XorShift32::new(0x7a5b_3c1d);
        let mut next = |n: usize| rand.below(n);
        for _ in 0..400 {
            let mut t = String::new();
            for _ in 0..next(120) {
                match next(40) {
                    0 => t.push_str(specials[next(specials.len())]),
                    1..=8 => t.push(' '),
                    k => t.push(char::from(b"AbcdefghIjklmnOpqrstuvwxyZ.,"[k % 28])),
                }
            }
            assert_eq!(text_key(&t), reference_key(&t), "{t:?}");
        }
    }

    #[test]
    fn text_key_folds_case_and_space() {
        let a = text_key("Hello  World.\nSecond\tline ").unwrap();
        let b = text_key(" hello world. second line").unwrap();
        assert_eq!(a, b);
        assert_ne!(a, text_key("hello world second line").unwrap());
        assert_eq!(text_key("ÉCOLE  à"), text_key("école à"));
        assert_eq!(text_key(" \n\t "), None);
        let long = "word ".repeat(10_000);
        assert_eq!(text_key(&long), text_key(&long.to_uppercase()));
    }

    #[test]
    fn url_keys() {
        assert_eq!(
            url_key("https://www.ex.com/a/?utm_source=x"),
            url_key("http://ex.com/a")
        );
        assert_ne!(url_key("https://ex.com/a"), url_key("https://ex.com/b"));
        assert_eq!(canonical_key(Some("https://ex.com/")), None);
        assert_eq!(
            canonical_key(Some("https://ex.com/a")),
            Some(url_key("https://ex.com/a"))
        );
    }
}
