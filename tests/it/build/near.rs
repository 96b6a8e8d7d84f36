//! Near-duplicate removal on a generated corpus with known answers: originals,
//! their near duplicates (syndicated copies with edits, AMP and print
//! variants, updated re-posts) under other URLs and no canonical link, and
//! distinct look-alikes (two stories on one topic sharing a quote, a series'
//! episodes sharing an intro and an outro). The build must remove the near
//! duplicates (recall >= 0.95) and nothing else (precision >= 0.99).

use std::collections::HashSet;

use scraper::dataset::Tuning;
use scraper::record::Article;

use super::{article, ids, run, write_shard};

/// xorshift64*: small and deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// Roughly Zipf over `0..n`: small indices are much more likely.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0) as usize % n
    }
}

const COMMON: &str = "the of and to a in that is was for it with as on be at by this had not are but \
from or have an they which one were all there would their we been has when who will more no if out \
so said what up its about into than them can only other new some could time these two may then do \
first any now such like over even most made after also did many before must through back years where \
much way well down should because each just those people how too little state good very make world \
still own see work long get here between both life being under never day same another know while \
last might great old year off come since against go came right used take three company says market";

/// A word source shaped like news prose: common words, a topic's own terms,
/// and a long tail of rarer words.
struct Words {
    common: Vec<&'static str>,
    rare: Vec<String>,
}

impl Words {
    fn new() -> Words {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        let syllables = [
            "ba", "co", "di", "fe", "ga", "hu", "ki", "lo", "ma", "ne", "po", "ra", "si", "tu",
            "ve", "zo", "tra", "ple", "stri", "qua",
        ];
        let rare = (0..8000)
            .map(|_| {
                (0..2 + rng.below(3))
                    .map(|_| syllables[rng.below(syllables.len())])
                    .collect()
            })
            .collect();
        Words {
            common: COMMON.split_whitespace().collect(),
            rare,
        }
    }

    fn sentence(&self, rng: &mut Rng, topic: &[String]) -> String {
        let n = 10 + rng.below(16);
        let mut out: Vec<&str> = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(match rng.below(10) {
                0..=4 => self.common[rng.zipf(self.common.len())],
                5 => &topic[rng.below(topic.len())],
                _ => &self.rare[rng.zipf(self.rare.len())],
            });
        }
        let mut s = out.join(" ");
        if let Some(first) = s.get(..1) {
            s.replace_range(..1, &first.to_uppercase());
        }
        s.push('.');
        s
    }

    /// Paragraphs of sentences, about `words` words in all.
    fn body(&self, rng: &mut Rng, topic: &[String], words: usize) -> Vec<String> {
        let mut paras = Vec::new();
        let mut count = 0;
        while count < words {
            let para: Vec<String> = (0..2 + rng.below(4))
                .map(|_| self.sentence(rng, topic))
                .collect();
            let para = para.join(" ");
            count += para.split(' ').count();
            paras.push(para);
        }
        paras
    }

    fn topic(&self, rng: &mut Rng) -> Vec<String> {
        (0..6)
            .map(|_| self.rare[rng.below(self.rare.len())].clone())
            .collect()
    }
}

/// What a generated record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Original,
    /// A near duplicate of the record with this index.
    NearDup(usize),
    /// Distinct, though it looks like the record with this index.
    LookAlike(usize),
}

/// One near-duplicate variant of `paras` (a copy that lost its canonical link).
fn variant(w: &Words, rng: &mut Rng, topic: &[String], paras: &[String], which: usize) -> String {
    let mut p: Vec<String> = paras.to_vec();
    match which {
        // Syndicated with edits: a new first sentence, a few words changed, a credit line.
        0 => {
            let first = &mut p[0];
            let cut = first.find(". ").map_or(first.len(), |i| i + 2);
            first.replace_range(..cut, &format!("{} ", w.sentence(rng, topic)));
            let all: usize = p.iter().map(|x| x.split(' ').count()).sum();
            for _ in 0..all / 150 {
                let k = rng.below(p.len());
                let mut words: Vec<String> = p[k].split(' ').map(str::to_string).collect();
                let i = rng.below(words.len());
                words[i] = w.rare[rng.below(w.rare.len())].clone();
                p[k] = words.join(" ");
            }
            p.push(
                "This story first appeared on a partner site and is republished with permission."
                    .into(),
            );
        }
        // AMP or print variant: furniture lines in and out, paragraphs joined.
        1 => {
            p.insert(0, "Advertisement".into());
            if p.len() > 3 {
                let joined = format!("{} {}", p[2], p[3]);
                p.splice(2..4, [joined]);
            }
            p.insert(p.len() / 2, "Share this article: Email Print".into());
            p.push("Print this page. Back to top.".into());
        }
        // Updated re-post: an update note on top, a paragraph shortened.
        _ => {
            p.insert(
                0,
                format!(
                    "Update: {} {}",
                    w.sentence(rng, topic),
                    w.sentence(rng, topic)
                ),
            );
            let last = p.len() - 1;
            if let Some(cut) = p[last].rfind(". ") {
                p[last].truncate(cut + 1);
            }
        }
    }
    p.join("\n")
}

/// The corpus, in id order (ids 1..), with what each record is.
fn corpus() -> Vec<(String, Kind)> {
    let w = Words::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out: Vec<(String, Kind)> = Vec::new();
    let mut pending: Vec<(usize, Vec<String>, Vec<String>, usize)> = Vec::new();
    for story in 0..240 {
        let topic = w.topic(&mut rng);
        let words = 250 + rng.below(600);
        let paras = w.body(&mut rng, &topic, words);
        out.push((paras.join("\n"), Kind::Original));
        let me = out.len() - 1;
        match story % 4 {
            // Two near duplicates of this story, of two different kinds, come later.
            k @ (0 | 1) => {
                pending.push((me, paras.clone(), topic.clone(), k));
                pending.push((me, paras, topic, k + 1));
            }
            // Another story on the same topic, quoting the same statement.
            2 => {
                let quote = format!("\"{}\"", w.sentence(&mut rng, &topic));
                out[me].0.push_str(&format!("\nThe company said: {quote}"));
                let n = 250 + rng.below(600);
                let mut other = w.body(&mut rng, &topic, n);
                other.insert(1, format!("In a statement, the company said: {quote}"));
                out.push((other.join("\n"), Kind::LookAlike(me)));
            }
            // A series: three episodes with the same intro and outro.
            _ => {
                let intro = format!(
                    "Welcome to this week's edition of our newsletter on {}. {}",
                    topic[0],
                    w.sentence(&mut rng, &topic)
                );
                let outro = format!(
                    "That's all for this week. {} Subscribe to get the next edition.",
                    w.sentence(&mut rng, &topic)
                );
                // The first episode is the story itself (which gets the intro and outro too).
                let body = out[me].0.clone();
                out[me].0 = format!("{intro}\n{body}\n{outro}");
                for _ in 0..3 {
                    let n = 150 + rng.below(250);
                    let body = w.body(&mut rng, &topic, n);
                    out.push((
                        format!("{intro}\n{}\n{outro}", body.join("\n")),
                        Kind::LookAlike(out.len() - 1),
                    ));
                }
            }
        }
        // Copies appear some stories later, mixed in with new ones.
        while pending.len() > 6 || (story == 239 && !pending.is_empty()) {
            let k = rng.below(pending.len());
            let (of, paras, topic, which) = pending.swap_remove(k);
            out.push((
                variant(&w, &mut rng, &topic, &paras, which),
                Kind::NearDup(of),
            ));
        }
    }
    out
}

/// One article per text of the corpus, ids from 1, over seven hosts.
fn corpus_articles(corpus: &[(String, Kind)]) -> Vec<Article> {
    corpus
        .iter()
        .enumerate()
        .map(|(i, (text, _))| {
            let mut a = article(i as i64 + 1);
            a.url = format!("https://news{}.example/story/{}", i % 7, i + 1);
            a.text = text.clone();
            a
        })
        .collect()
}

#[test]
fn near_duplicates_go_and_look_alikes_stay() {
    let corpus = corpus();
    let articles = corpus_articles(&corpus);
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let half = articles.len() / 2;
    write_shard(&data, "20261101T000000Z-aaaa", &articles[..half]);
    write_shard(&data, "20261102T000000Z-bbbb", &articles[half..]);
    let s = run(&data, &out, &Tuning::default());

    let kept: HashSet<i64> = ids(&out).into_iter().collect();
    let (mut dups, mut found, mut removed, mut wrong) = (0, 0, 0, 0);
    for (i, (_, kind)) in corpus.iter().enumerate() {
        let gone = !kept.contains(&(i as i64 + 1));
        dups += u32::from(matches!(kind, Kind::NearDup(_)));
        found += u32::from(gone && matches!(kind, Kind::NearDup(_)));
        removed += u32::from(gone);
        wrong += u32::from(gone && !matches!(kind, Kind::NearDup(_)));
        if let Kind::NearDup(of) = kind {
            assert!(kept.contains(&(*of as i64 + 1)), "the original {of} stays");
        }
    }
    let recall = f64::from(found) / f64::from(dups);
    let precision = f64::from(removed - wrong) / f64::from(removed.max(1));
    let look_alikes = corpus
        .iter()
        .filter(|c| matches!(c.1, Kind::LookAlike(_)))
        .count();
    // How hard the corpus is: the exact Jaccard similarity of word 5-grams of each pair.
    let jaccard = scraper::dataset::exact_jaccard;
    let (mut low_dup, mut high_alike) = (1.0f64, 0.0f64);
    for (text, kind) in &corpus {
        match kind {
            Kind::NearDup(of) => low_dup = low_dup.min(jaccard(text, &corpus[*of].0)),
            Kind::LookAlike(of) => high_alike = high_alike.max(jaccard(text, &corpus[*of].0)),
            Kind::Original => {}
        }
    }
    eprintln!(
        "exact Jaccard: lowest near-duplicate pair {low_dup:.3}, highest look-alike pair {high_alike:.3}"
    );
    eprintln!(
        "near duplicates: {} records, {dups} near-duplicate pairs, {look_alikes} look-alikes; \
         recall {recall:.3} ({found}/{dups}), pair precision {precision:.3} ({wrong} wrong)",
        corpus.len()
    );
    assert!(dups >= 200 && look_alikes >= 150, "a corpus of some size");
    assert!(recall >= 0.95, "recall {recall}");
    assert!(precision >= 0.99, "precision {precision}");
    assert_eq!(s.removed.near_text, u64::from(removed), "{:?}", s.removed);
    assert_eq!((s.removed.same_url, s.removed.same_text), (0, 0));
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        card.contains(&format!(
            "estimated Jaccard similarity at least 0.75): {removed}\n"
        )),
        "{card}"
    );
}

/// A near copy of a row published by an earlier build is removed once the
/// earlier shards are gone, from the index the earlier build left beside the
/// dataset (`index/`), and the card and `build.json` count it; a new story
/// and a look-alike of an old one stay.
#[test]
fn near_copies_of_earlier_releases_go_without_their_shards() {
    let corpus = corpus();
    let original = corpus.iter().position(|c| c.1 == Kind::Original).unwrap();
    let copy = corpus
        .iter()
        .position(|c| c.1 == Kind::NearDup(original))
        .unwrap();
    let alike = corpus
        .iter()
        .position(|c| matches!(c.1, Kind::LookAlike(_)))
        .unwrap();
    let record = |id: i64, text: &str| {
        let mut a = article(id);
        a.url = format!("https://news.example/story/{id}");
        a.text = text.to_string();
        a
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    // Day one: the original and the look-alike's model are published.
    let of = match corpus[alike].1 {
        Kind::LookAlike(of) => of,
        _ => unreachable!(),
    };
    let day_one = [record(1, &corpus[original].0), record(2, &corpus[of].0)];
    let one = write_shard(&data, "20261101T000000Z-aaaa", &day_one);
    let s = run(&data, &out, &Tuning::default());
    assert_eq!((s.rows, s.removed.near_earlier_release), (2, 0));
    // Day two, the first shard no longer read: a near copy, a look-alike, a new story.
    std::fs::remove_file(one).unwrap();
    let fresh = corpus
        .iter()
        .enumerate()
        .rev()
        .find(|(i, c)| c.1 == Kind::Original && *i != original && *i != of)
        .unwrap()
        .0;
    let day_two = [
        record(10, &corpus[copy].0),
        record(11, &corpus[alike].0),
        record(12, &corpus[fresh].0),
    ];
    write_shard(&data, "20261102T000000Z-bbbb", &day_two);
    let s = run(&data, &out, &Tuning::default());
    assert_eq!(ids(&out), vec![11, 12]);
    assert_eq!(s.removed.near_earlier_release, 1, "{:?}", s.removed);
    assert_eq!(s.removed.near_text, 0);
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        card.contains("published by an earlier release (the index in `index/`): 1\n"),
        "{card}"
    );
    assert!(
        card.contains("1 new rows were near duplicates of rows published by earlier releases"),
        "{card}"
    );
    let build: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build.json")).unwrap()).unwrap();
    assert_eq!(build["near_earlier_release"], 1);
    // Rows 1 and 2 are gone with their shard; 11 and 12 are new.
    assert_eq!(build["changes"]["previous_rows"], 2);
    assert_eq!(build["changes"]["added"], 2);
    assert_eq!(build["changes"]["removed"], 2);
    // The index now holds both days' rows: a third build adds nothing to it.
    let segments = std::fs::read_dir(out.join("index")).unwrap().count();
    run(&data, &out, &Tuning::default());
    assert_eq!(
        std::fs::read_dir(out.join("index")).unwrap().count(),
        segments
    );
}

/// A build whose memory knob is so small that every sort spills a run every
/// 1,024 records (the record table, the exact-duplicate claims, the band
/// keys, the candidate pairs) writes the same bytes as one that never spills.
#[test]
fn a_build_that_spills_every_sort_writes_the_same_bytes() {
    let mut articles = corpus_articles(&corpus());
    // Exact copies under new ids: every third the same URL, the rest the same text.
    let n = articles.len();
    for k in 0..1200 {
        let mut a = articles[(k * 7) % n].clone();
        a.id = (n + 1 + k) as i64;
        if k % 3 != 0 {
            a.url = format!("https://mirror.example/{}", a.id);
        }
        articles.push(a);
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let third = articles.len() / 3;
    // Shards out of id order, so the table is sorted for real.
    write_shard(&data, "20261101T000000Z-aaaa", &articles[2 * third..]);
    write_shard(&data, "20261102T000000Z-bbbb", &articles[..third]);
    write_shard(&data, "20261103T000000Z-cccc", &articles[third..2 * third]);
    let small = Tuning {
        file_rows: 64,
        ..Tuning::default()
    };
    let big = run(&data, &dir.path().join("big"), &small);
    let tiny = Tuning {
        memory_bytes: 1,
        ..small.clone()
    };
    let spilled = run(&data, &dir.path().join("tiny"), &tiny);
    assert_eq!(big.removed, spilled.removed);
    assert!(
        big.removed.near_text > 100 && big.removed.same_url > 300,
        "{:?}",
        big.removed
    );
    assert!(big.removed.same_text > 700, "{:?}", big.removed);
    assert!(big.files.len() > 5);
    assert_eq!(big.files.len(), spilled.files.len());
    for (a, b) in big.files.iter().zip(&spilled.files) {
        assert_eq!(a.file_name(), b.file_name());
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{a:?} differs"
        );
    }
}
