//! Benchmark input generator: realistic article records written into shards
//! with the crawler's own `ShardWriter`, for timing `scraper build`.
//!
//! ```text
//! cargo bench --bench gen_shards -- --out /tmp/bench/data --records 1000000
//!     [--per-shard 4000] [--jobs 2]
//! ```
//!
//! (`benches/build_vs_duckdb.sh` builds it with `cargo build --release --bench
//! gen_shards` and runs the binary, to share the release build's artifacts.)
//!
//! Texts average about 4 KB (1,000,000 records is about 4 GB of text): paragraphs
//! of sentences drawn from a Zipf-like vocabulary of common English words, tech
//! terms and ~20,000 made-up words, so zstd compresses them roughly as it does
//! real news. About 3% of records repeat an earlier URL (scheme, `www.` or
//! tracking variants), 1% are syndicated copies of an earlier text under another
//! domain, 0.5% carry a canonical URL pointing at an earlier record, 1% are
//! near duplicates of an earlier text (a new first sentence and a credit line,
//! or an update paragraph on top), which only near-duplicate removal catches. Every
//! record is a pure function of its id, so output is the same on every run.
//! Without `--out` it prints this usage and exits (so a plain `cargo bench` is cheap).
//!
//! `--sentence-pool N` draws every sentence from N pre-made ones instead of
//! making each word by word: about ten times faster, for sets of millions of
//! records (texts still differ: each is a random run of ~40 of them).
//!
//! `--text-percent P` scales every text's target length to P% (default 100),
//! for sets of millions of records on a small disk.
//!
//! Every record also carries a `markdown` rendering of its text, as the
//! crawler stores one for every article: paragraphs apart, a `##` subhead
//! now and then, a link in some paragraphs (about 10% longer than the text).
//! `--no-markdown` leaves it out (the generator before 2026-12-03 did).
//!
//! `--day N` (with the same `--records`) instead adds one shard of day `N` to
//! an existing set: `--new` records (default 5,400) with the next ids, then
//! `--updates` (default 50) new versions (`updated`, new id, same URL, an
//! update paragraph on top) and `--withdrawals` (default 10) records written
//! again under their id and URL as `scraper reextract` withdraws them, both
//! of earlier records spread over the whole id range. Day `N`'s ids start at
//! `records + (N - 1) * 1,000,000` (see `benches/cdc_delta.sh`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use scraper::record::Article;
use scraper::store::shard::ShardWriter;

const COMMON: &str = "the of and to a in that is was he for it with as his on be at by i this had not \
are but from or have an they which one you were her all she there would their we him been has when \
who will more no if out so said what up its about into than them can only other new some could time \
these two may then do first any my now such like our over man me even most made after also did many \
before must through back years where much your way well down should because each just those people \
how too little state good very make world still own see men work long get here between both life being \
under never day same another know while last might us great old year off come since against go came \
right used take three company says according market week percent users government industry report";
const TECH: &str = "data software cloud chip semiconductor startup computing platform developers \
research researchers model models training inference gpu gpus server servers network security privacy \
app apps device devices smartphone processor memory storage engineers product launch billion million \
investors funding valuation regulators policy lawmakers open source benchmark performance energy";
const AI: &str = "AI|artificial intelligence|machine learning|large language model|LLM|generative AI|\
chatbot|OpenAI|Anthropic|Gemini|DeepMind|neural network|deep learning|AI model|AI agent|ChatGPT|\
foundation model|Copilot|Llama|reinforcement learning";

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
    /// Roughly Zipf over `0..n`: small indices are much more likely.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0) as usize % n
    }
}

struct Vocab {
    common: Vec<&'static str>,
    tech: Vec<&'static str>,
    ai: Vec<&'static str>,
    made_up: Vec<String>,
    domains: Vec<String>,
    /// Pre-made sentences (`--sentence-pool`): when not empty, every
    /// sentence is one of these, which makes large sets much faster to make.
    pool: Vec<String>,
    /// Text length as a percentage of the default (`--text-percent`, 100).
    text_percent: usize,
    /// Give every record a markdown rendering (`--no-markdown` turns it off).
    markdown: bool,
}

impl Vocab {
    fn new() -> Vocab {
        let mut rng = Rng::new(7);
        let onsets = [
            "b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "st", "tr", "pl",
            "gr", "ch", "sh", "br",
        ];
        let vowels = ["a", "e", "i", "o", "u", "ea", "io", "ou"];
        let codas = ["", "n", "r", "s", "t", "l", "nd", "st", "ng", "ck"];
        let made_up = (0..20_000)
            .map(|_| {
                let syllables = 1 + rng.below(3) as usize;
                let mut w = String::new();
                for _ in 0..syllables {
                    w.push_str(onsets[rng.below(onsets.len() as u64) as usize]);
                    w.push_str(vowels[rng.below(vowels.len() as u64) as usize]);
                }
                w.push_str(codas[rng.below(codas.len() as u64) as usize]);
                w
            })
            .collect();
        let outlets = [
            "techcrunch.com",
            "theverge.com",
            "wired.com",
            "arstechnica.com",
            "technologyreview.com",
            "venturebeat.com",
            "zdnet.com",
            "theregister.com",
            "engadget.com",
            "bbc.com",
            "cnbc.com",
            "spectrum.ieee.org",
            "openai.com",
            "blog.google",
            "huggingface.co",
            "blogs.nvidia.com",
        ];
        let mut domains: Vec<String> = outlets.iter().map(|s| s.to_string()).collect();
        domains.extend((0..44).map(|i| format!("news{i}.example.org")));
        Vocab {
            text_percent: 100,
            markdown: true,
            common: COMMON.split_whitespace().collect(),
            tech: TECH.split_whitespace().collect(),
            ai: AI.split('|').collect(),
            made_up,
            domains,
            pool: Vec::new(),
        }
    }

    /// Fill the sentence pool with `n` sentences (a fixed seed).
    fn with_pool(mut self, n: usize) -> Vocab {
        let mut rng = Rng::new(0x900D);
        let pool = (0..n)
            .map(|i| {
                let mut s = String::new();
                self.sentence(&mut rng, &mut s, if i % 3 == 0 { 8 } else { 0 });
                s
            })
            .collect();
        self.pool = pool;
        self
    }

    fn word<'a>(&'a self, rng: &mut Rng, ai_rate: u64) -> &'a str {
        match rng.below(1000) {
            r if r < ai_rate => self.ai[rng.zipf(self.ai.len())],
            r if r < 550 => self.common[rng.zipf(self.common.len())],
            r if r < 650 => self.tech[rng.zipf(self.tech.len())],
            _ => &self.made_up[rng.zipf(self.made_up.len())],
        }
    }

    fn sentence(&self, rng: &mut Rng, out: &mut String, ai_rate: u64) {
        if !self.pool.is_empty() {
            out.push_str(&self.pool[rng.below(self.pool.len() as u64) as usize]);
            return;
        }
        let n = 8 + rng.below(18);
        for i in 0..n {
            let w = self.word(rng, ai_rate);
            if i == 0 {
                let mut c = w.chars();
                if let Some(first) = c.next() {
                    out.extend(first.to_uppercase());
                    out.push_str(c.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(w);
                if rng.chance(60) {
                    out.push(',');
                }
            }
        }
        out.push_str(". ");
    }
}

/// The original record with this id (before any duplication).
fn original(v: &Vocab, id: i64) -> Article {
    let mut rng = Rng::new(id as u64);
    let ai_rate = if rng.chance(700) {
        4 + rng.below(12)
    } else {
        0
    };
    let domain = v.domains[rng.zipf(v.domains.len())].clone();
    let mut title = String::new();
    v.sentence(&mut rng, &mut title, ai_rate * 4);
    let title = title.trim_end_matches(". ").to_string();
    // About 4 KB on average, from ~800 B to ~12 KB.
    let target = 800 + rng.below(4000) as usize + rng.below(2) as usize * rng.below(7000) as usize;
    let target = target * v.text_percent / 100;
    let mut text = String::with_capacity(target + 300);
    while text.len() < target {
        let sentences = 2 + rng.below(5);
        for _ in 0..sentences {
            v.sentence(&mut rng, &mut text, ai_rate);
        }
        text.pop();
        text.push('\n');
    }
    text.pop();
    let year = 2016 + rng.below(11) as i32;
    let (month, day) = (1 + rng.below(12), 1 + rng.below(28));
    let slug: String = title
        .to_lowercase()
        .split_whitespace()
        .take(6)
        .collect::<Vec<_>>()
        .join("-");
    let keywords = v
        .tech
        .iter()
        .take(1 + rng.below(4) as usize)
        .map(|s| s.to_string())
        .collect();
    Article {
        id,
        url: format!("https://www.{domain}/{year}/{month:02}/{slug}-{id}"),
        domain,
        title,
        date: format!("{year}-{month:02}-{day:02}").parse().ok(),
        date_source: Some(["meta", "jsonld", "time", "url"][rng.below(4) as usize].into()),
        year: Some(year),
        text,
        keywords,
        fetched_at: format!(
            "2026-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            1 + rng.below(10),
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
            rng.below(60)
        )
        .parse()
        .expect("a generated time is RFC 3339"),
        lang: Some("en".into()),
        byline: rng
            .chance(600)
            .then(|| format!("By {}", v.made_up[rng.below(500) as usize])),
        ..Article::default()
    }
}

/// The record stored under `id`: mostly an original, sometimes a copy of an earlier one.
fn record(v: &Vocab, id: i64) -> Article {
    let mut rng = Rng::new((id as u64).wrapping_mul(31).wrapping_add(17));
    let mut a = original(v, id);
    if id < 100 {
        return a;
    }
    let earlier = rng.below(id as u64) as i64;
    match rng.below(1000) {
        0..30 => {
            let e = original(v, earlier);
            a.url = match rng.below(3) {
                0 => e.url.replace("https://www.", "http://"),
                1 => format!("{}?utm_source=rss&utm_medium=feed", e.url),
                _ => format!("{}/", e.url),
            };
            a.domain = e.domain;
        }
        30..40 => a.text = original(v, earlier).text,
        40..45 => a.canonical_url = Some(original(v, earlier).url),
        45..55 => a.text = near_copy(v, &mut rng, &original(v, earlier).text),
        _ => {}
    }
    a
}

/// An earlier text, edited as a syndicated copy or an updated re-post.
fn near_copy(v: &Vocab, rng: &mut Rng, text: &str) -> String {
    let mut lead = String::new();
    v.sentence(rng, &mut lead, 0);
    if rng.chance(500) {
        // Syndicated: its first sentence rewritten, a credit line added.
        let rest = text.find(". ").map_or(text, |i| &text[i + 2..]);
        format!("{lead}{rest}\nThis article first appeared on a partner site.")
    } else {
        // Re-posted with an update on top.
        v.sentence(rng, &mut lead, 0);
        format!("Update: {}\n{text}", lead.trim_end())
    }
}

/// The record as stored: its markdown made from its final text.
fn stored(v: &Vocab, mut a: Article) -> Article {
    if v.markdown {
        a.markdown = Some(markdown_of(&a));
    }
    a
}

/// A markdown rendering of the text, a pure function of the record: the
/// paragraphs a blank line apart, a `##` subhead before about one in five
/// (not the first), and a link around a word in about one in four.
fn markdown_of(a: &Article) -> String {
    let mut rng = Rng::new((a.id as u64) ^ 0x3D3D);
    let mut md = String::with_capacity(a.text.len() + a.text.len() / 8);
    for (i, para) in a.text.split('\n').enumerate() {
        if i > 0 {
            md.push_str("\n\n");
            if rng.chance(200) {
                let words: Vec<&str> = para
                    .split_whitespace()
                    .take(2 + rng.below(4) as usize)
                    .collect();
                md.push_str("## ");
                md.push_str(words.join(" ").trim_end_matches(['.', ',']));
                md.push_str("\n\n");
            }
        }
        let linked = rng.chance(250).then(|| rng.below(12) as usize);
        for (k, word) in para.split(' ').enumerate() {
            if k > 0 {
                md.push(' ');
            }
            if Some(k) == linked && word.chars().all(|c| c.is_alphanumeric()) {
                md.push_str(&format!(
                    "[{word}](https://www.{}/tag/{})",
                    a.domain,
                    word.to_lowercase()
                ));
            } else {
                md.push_str(word);
            }
        }
    }
    md
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(out) = arg(&args, "--out").map(PathBuf::from) else {
        eprintln!(
            "usage: cargo bench --bench gen_shards -- --out DATA_DIR --records N [--per-shard 4000] [--jobs 2] [--no-markdown]"
        );
        return;
    };
    let num = |name: &str, default: usize| {
        arg(&args, name).map_or(default, |v| v.parse().expect("a number"))
    };
    let records = num("--records", 100_000);
    let per_shard = num("--per-shard", 4000).max(1);
    let jobs = num(
        "--jobs",
        std::thread::available_parallelism().map_or(2, |n| n.get()),
    );
    let dir = out.join("articles");
    std::fs::create_dir_all(&dir).expect("create the articles folder");
    if let Some(day) = arg(&args, "--day").map(|d| d.parse::<usize>().expect("a day number")) {
        let day = Day {
            n: day.max(1),
            base: records,
            new: num("--new", 5_400),
            updates: num("--updates", 50),
            withdrawals: num("--withdrawals", 10),
        };
        let mut vocab = Vocab::new();
        vocab.markdown = !args.iter().any(|a| a == "--no-markdown");
        write_day(&vocab, &dir, &day);
        return;
    }
    let shards = records.div_ceil(per_shard);
    let started = Instant::now();
    let mut vocab = match num("--sentence-pool", 0) {
        0 => Vocab::new(),
        n => Vocab::new().with_pool(n),
    };
    vocab.text_percent = num("--text-percent", 100).max(1);
    vocab.markdown = !args.iter().any(|a| a == "--no-markdown");
    let next = AtomicUsize::new(0);
    let bytes = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= shards {
                        break;
                    }
                    let ids = (k * per_shard)..((k + 1) * per_shard).min(records);
                    let n = write_shard(&vocab, &dir, k, ids);
                    bytes.fetch_add(n, Ordering::Relaxed);
                }
            });
        }
    });
    eprintln!(
        "gen_shards: {records} records, {:.2} GB of text, in {shards} shards under {} ({:.1} s)",
        bytes.load(Ordering::Relaxed) as f64 / 1e9,
        dir.display(),
        started.elapsed().as_secs_f64()
    );
}

fn write_shard(v: &Vocab, dir: &Path, k: usize, ids: std::ops::Range<usize>) -> usize {
    let run_id = format!("2026-01-01T00{:04}Z-bench", k);
    let path = dir.join(format!("{run_id}.jsonl.zst"));
    let _ = std::fs::remove_file(&path);
    let mut w = ShardWriter::create(&path, Duration::from_secs(3600)).expect("create shard");
    let mut text_bytes = 0;
    for id in ids {
        let mut a = stored(v, record(v, id as i64));
        a.run_id = Some(run_id.clone());
        text_bytes += a.text.len();
        w.append(&a).expect("append");
    }
    w.finish().expect("finish shard");
    text_bytes
}

/// One day of changes to a generated set (see the module docs).
struct Day {
    n: usize,
    /// Records of the base set (ids `0..base`).
    base: usize,
    new: usize,
    updates: usize,
    withdrawals: usize,
}

fn write_day(v: &Vocab, dir: &Path, day: &Day) {
    let run_id = format!("2026-01-{:02}T000000Z-day", 1 + day.n);
    let path = dir.join(format!("{run_id}.jsonl.zst"));
    let _ = std::fs::remove_file(&path);
    let mut w = ShardWriter::create(&path, Duration::from_secs(3600)).expect("create shard");
    let first = (day.base + (day.n - 1) * 1_000_000) as i64;
    let mut next = first;
    let mut rng = Rng::new(0xDA7 + day.n as u64);
    for _ in 0..day.new {
        let mut a = stored(v, record(v, next));
        a.run_id = Some(run_id.clone());
        w.append(&a).expect("append");
        next += 1;
    }
    // Earlier records, one per stretch of the id range, so the edits fall everywhere.
    let earlier = |k: usize, of: usize, rng: &mut Rng| {
        let stretch = (day.base / of.max(1)).max(1);
        (k * stretch + rng.below(stretch as u64) as usize) as i64
    };
    for k in 0..day.updates {
        let mut a = record(v, earlier(k, day.updates, &mut rng));
        let mut lead = String::new();
        v.sentence(&mut rng, &mut lead, 0);
        a.text = format!("Update: {}\n{}", lead.trim_end(), a.text);
        a.id = next;
        a.updated = true;
        a.date_modified = format!("2026-01-{:02}", 1 + day.n).parse().ok();
        a.run_id = Some(run_id.clone());
        let a = stored(v, a);
        w.append(&a).expect("append");
        next += 1;
    }
    for k in 0..day.withdrawals {
        let mut a = stored(v, record(v, earlier(k, day.withdrawals, &mut rng) + 1));
        a.withdrawn = Some(scraper::record::Rejection::NotArticle);
        a.run_id = Some(run_id.clone());
        w.append(&a).expect("append");
    }
    w.finish().expect("finish shard");
    eprintln!(
        "gen_shards: day {}: {} new records, {} updates, {} withdrawals in {}",
        day.n,
        day.new,
        day.updates,
        day.withdrawals,
        path.display()
    );
}
