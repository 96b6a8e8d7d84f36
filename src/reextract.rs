//! `scraper reextract`: the stored records made again from the archived
//! pages (`data/warc/*.warc.gz`, see [`crate::store::warc`]) with the
//! current extractor and relevance rule.
//!
//! Each `response` record with our `metadata` record beside it is decoded
//! (its `Content-Encoding`, its charset), extracted with the day the crawl
//! extracted it on, and made into a record with the same `id`, `url`,
//! `fetched_at` and provenance, a new `extractor_version`, and the same
//! `warc_file` / `warc_offset`. A page the extractor no longer calls an
//! article, or the rule no longer finds relevant, gives a record with
//! `withdrawn` set; the build drops it. Records are appended to a new shard
//! `articles/reextract-<run-id>.jsonl.zst` (append-only, as always);
//! records whose bytes equal the newest stored version of their id are not
//! written again unless `--all` asks for every one. Unchanged code gives
//! byte-identical records.
//!
//! A reextract shard is not a crawl run: it has no summary and is not re-read
//! at start as an unfinished run's shard. The page is decoded with
//! `net::decode_body` and made into a record with `extract::record::article`,
//! the function the crawl uses, so unchanged code gives the same bytes;
//! `crawl.paywalled_text` applies as in the crawl.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Context;
use xxhash_rust::xxh3::xxh3_64;

use crate::config::{Config, PaywalledText};
use crate::record::{Article, Provenance, Rejection};
use crate::relevance::Rule;
use crate::store::DataDir;
use crate::store::shard::{self, ShardWriter};
use crate::store::warc::{self, Record};

/// Shard names of `scraper reextract` start with this (crawl shards with a run id).
pub(crate) const SHARD_PREFIX: &str = "reextract-";

/// What `scraper reextract` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub data: PathBuf,
    /// Write every record, also those equal to the newest stored version.
    pub all: bool,
}

/// What a re-extraction did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// WARC files read, and those with a torn tail.
    pub files: usize,
    pub torn_files: usize,
    /// Responses with our metadata record (stored records).
    pub records: u64,
    /// Of those: equal to the newest stored version of their id.
    pub unchanged: u64,
    /// Written to the new shard (changed ones, or all with `--all`).
    pub written: u64,
    /// Written as withdrawn: no longer an article (or no title) / not relevant.
    pub withdrawn_not_article: u64,
    pub withdrawn_not_relevant: u64,
    /// Written as withdrawn: not free to read, under `crawl.paywalled_text: skip`.
    pub withdrawn_paywalled: u64,
    /// Archived responses that could not be decoded or read as HTTP.
    pub unreadable: u64,
    /// The new shard (none when nothing was written).
    pub shard: Option<PathBuf>,
    /// The `extractor_version` of the new records.
    pub version: String,
}

/// What the extractor needs besides the archive.
struct Extractor {
    rule: Rule,
    version: String,
    /// `crawl.paywalled_text`, applied as the crawl applies it.
    paywalled: PaywalledText,
    /// Decoded-body cap, as for a fetch.
    cap: u64,
}

/// The path of a new re-extraction shard whose name sorts after every
/// earlier one: the build takes shard order as the order of extractions, and
/// run ids only count seconds, so a second run within the same second moves
/// its clock on until its name comes last.
fn next_shard(articles: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    let mut last: Option<String> = None;
    for entry in std::fs::read_dir(articles)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.starts_with(SHARD_PREFIX) && last.as_ref().is_none_or(|l| name > *l) {
            last = Some(name);
        }
    }
    let now = chrono::Utc::now();
    let name = |at| {
        format!(
            "{SHARD_PREFIX}{}.jsonl.zst",
            crate::store::state::new_run_id(at)
        )
    };
    // At most a day ahead: a shard named further in the future (a clock set
    // wrong) is not worth waiting for; the build then sees them side by side.
    for s in 0..86_400 {
        let candidate = name(now + chrono::Duration::seconds(s));
        if last.as_ref().is_none_or(|l| candidate > *l) {
            return Ok(articles.join(candidate));
        }
    }
    tracing::warn!(
        ?last,
        "a re-extraction shard is named more than a day ahead of the clock"
    );
    Ok(articles.join(name(now)))
}

/// Run `scraper reextract` (takes the run lock: no crawl writes meanwhile).
pub fn reextract(config: &Config, opts: &Options) -> anyhow::Result<Summary> {
    let data = DataDir::open(&opts.data)?;
    let newest = newest_stored(&data)?;
    let path = next_shard(&data.articles)?;
    let mut out = ShardWriter::create(&path, config.crawl.flush_every.0)?;
    let ex = Extractor {
        rule: Rule::new(&config.keywords),
        version: crate::extract::version::version(&config.keywords),
        cap: config.crawl.max_body_bytes,
        paywalled: config.crawl.paywalled_text,
    };
    let mut sum = Summary {
        version: ex.version.clone(),
        ..Summary::default()
    };
    for file in warc::list(&data.warc_dir())? {
        let name = file_name(&file);
        let mut response: Option<Record> = None;
        // The DOM a browser rendered from that response (`crate::render`).
        let mut rendered: Option<Vec<u8>> = None;
        let mut write_err = None;
        let scan = warc::read_records(&file, |rec| match rec.header("WARC-Type") {
            Some("response") => {
                rendered = None;
                response = Some(rec);
            }
            Some("conversion") => {
                let id = response.as_ref().and_then(|r| r.header("WARC-Record-ID"));
                if id.is_some() && id == rec.header("WARC-Refers-To") {
                    rendered = Some(rec.block);
                }
            }
            Some("metadata") => {
                let Some(resp) = response
                    .take_if(|r| r.header("WARC-Record-ID") == rec.header("WARC-Concurrent-To"))
                else {
                    return;
                };
                let Some(prov) = warc::parse_provenance(&rec.block) else {
                    return;
                };
                sum.records += 1;
                let article = match ex.article(&resp, rendered.take(), prov, &name) {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!(file = %name, offset = resp.offset, error = %e, "archived response not readable");
                        sum.unreadable += 1;
                        return;
                    }
                };
                let line = serde_json::to_vec(&article).expect("an Article always serialises");
                if newest.get(&article.id) == Some(&xxh3_64(&line)) {
                    sum.unchanged += 1;
                    if !opts.all {
                        return;
                    }
                }
                sum.count_written(article.withdrawn);
                if let Err(e) = out.append(&article) {
                    write_err.get_or_insert(e);
                }
            }
            _ => {}
        })?;
        if let Some(e) = write_err {
            return Err(e).context("writing the re-extracted records");
        }
        sum.files += 1;
        if scan.truncated_bytes > 0 {
            sum.torn_files += 1;
            tracing::warn!(file = %name, bytes = scan.truncated_bytes, "WARC file with a torn tail (a killed run): read up to its last whole record");
        }
    }
    sum.shard = out.finish()?;
    Ok(sum)
}

/// A WARC file's name, for logs and records.
fn file_name(file: &std::path::Path) -> String {
    file.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string()
}

impl Summary {
    /// A record written, counted by why it was withdrawn (if it was).
    fn count_written(&mut self, withdrawn: Option<Rejection>) {
        match withdrawn {
            Some(Rejection::NotRelevant) => self.withdrawn_not_relevant += 1,
            Some(Rejection::Paywalled) => self.withdrawn_paywalled += 1,
            Some(_) => self.withdrawn_not_article += 1,
            None => {}
        }
        self.written += 1;
    }
}

impl Extractor {
    /// The record made again from one archived response, or from the DOM a
    /// browser rendered from it when the archive kept one.
    fn article(
        &self,
        resp: &Record,
        rendered: Option<Vec<u8>>,
        mut prov: Provenance,
        file: &str,
    ) -> Result<Article, String> {
        let http = resp.http().ok_or("not an HTTP response")?;
        let target = resp.header("WARC-Target-URI").ok_or("no WARC-Target-URI")?;
        let url = crate::url::parse(target).ok_or("WARC-Target-URI is not an http(s) URL")?;
        let encoding = http.header("content-encoding");
        let body = crate::net::decode_body(encoding, http.payload, self.cap)?;
        let (_, charset) = http
            .header("content-type")
            .map_or((None, None), crate::net::parse_media_type);
        let today = prov
            .extracted_on
            .ok_or("metadata without a readable extracted-on day")?;
        let page = match &rendered {
            Some(dom) => crate::extract::extract(dom, Some("utf-8"), Some(&url), &self.rule, today),
            None => {
                crate::extract::extract(&body, charset.as_deref(), Some(&url), &self.rule, today)
            }
        };
        prov.warc_file = Some(file.to_string());
        prov.warc_offset = Some(resp.offset);
        let mut a = crate::extract::record::article(&page, &url, &prov, &self.version);
        a.rendered = rendered.is_some();
        if self.paywalled == PaywalledText::Flag {
            crate::extract::record::keep_free_part(&mut a, &page);
        }
        // The crawl's storing decision, for what the page alone decides.
        a.withdrawn = if crate::discover::kind_from_url(&url).is_some() || !page.is_article {
            Some(Rejection::NotArticle)
        } else if !page.relevance.relevant {
            Some(Rejection::NotRelevant)
        } else if a.title.trim().is_empty() {
            Some(Rejection::NoTitle)
        } else if page.accessible_for_free == Some(false) && self.paywalled == PaywalledText::Skip {
            Some(Rejection::Paywalled)
        } else {
            None
        };
        Ok(a)
    }
}

/// Per id, the xxh3 of the line of its newest stored version (highest
/// extractor code, then last in shard order), to skip unchanged records.
fn newest_stored(data: &DataDir) -> anyhow::Result<HashMap<i64, u64>> {
    #[derive(serde::Deserialize)]
    struct Min<'a> {
        id: i64,
        #[serde(default, borrow)]
        extractor_version: Option<std::borrow::Cow<'a, str>>,
    }
    let mut best: HashMap<i64, (u32, u64)> = HashMap::new();
    for path in shard::list(&data.articles)? {
        shard::read_lines(&path, |line| {
            if let Ok(m) = serde_json::from_slice::<Min>(line) {
                let code = crate::extract::version::code_of(m.extractor_version.as_deref());
                let e = best.entry(m.id).or_insert((code, 0));
                if code >= e.0 {
                    *e = (code, xxh3_64(line));
                }
            }
        })?;
    }
    Ok(best.into_iter().map(|(id, (_, h))| (id, h)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_shard_sorts_after_every_earlier_one_even_in_the_same_second() {
        let dir = tempfile::tempdir().unwrap();
        let ahead = chrono::Utc::now() + chrono::Duration::seconds(3);
        let mut earlier = format!(
            "{SHARD_PREFIX}{}.jsonl.zst",
            crate::store::state::new_run_id(ahead)
        );
        std::fs::write(dir.path().join(&earlier), b"").unwrap();
        std::fs::write(dir.path().join("20990101T000000Z-ffff.jsonl.zst"), b"").unwrap();
        for _ in 0..3 {
            let next = next_shard(dir.path()).unwrap();
            let name = next.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with(SHARD_PREFIX) && name > earlier,
                "{name} <= {earlier}"
            );
            std::fs::write(&next, b"").unwrap();
            earlier = name;
        }
    }
}
