//! A web of many hosts of one shape for the partition tests and benchmark
//! (`benches/partition.rs`): each host lists its stories and links to the next
//! host's home page; every story is a relevant article worded its own way.

use crate::support::fixture::{article_path, day, listing_html};
use crate::support::web::{Reply, Req, Web};

/// Stories per host.
pub const STORIES: usize = 6;

/// A relevant article whose wording is its own (so near-duplicate removal in
/// `scraper build` keeps every one): the fixture article's shape, with
/// sentences drawn from a vocabulary by a generator seeded with host and number.
pub fn unique_article(host: &str, n: usize) -> String {
    const WORDS: [&str; 48] = [
        "researchers",
        "engineers",
        "startups",
        "regulators",
        "investors",
        "students",
        "hospitals",
        "banks",
        "schools",
        "farmers",
        "lawyers",
        "designers",
        "reported",
        "tested",
        "measured",
        "questioned",
        "praised",
        "doubted",
        "deployed",
        "licensed",
        "cheaper",
        "faster",
        "larger",
        "safer",
        "riskier",
        "quieter",
        "new",
        "open",
        "chips",
        "datasets",
        "benchmarks",
        "contracts",
        "servers",
        "phones",
        "robots",
        "translations",
        "summaries",
        "forecasts",
        "diagnoses",
        "audits",
        "in",
        "across",
        "despite",
        "before",
        "after",
        "while",
        "Europe",
        "Asia",
    ];
    let mut seed: u64 = 0xcbf2_9ce4_8422_2325;
    for b in host.bytes().chain(n.to_le_bytes()) {
        seed = (seed ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        WORDS[(seed >> 33) as usize % WORDS.len()]
    };
    let mut sentence = |lead: &str| {
        let words: Vec<&str> = (0..14).map(|_| next()).collect();
        format!("{lead} {}.", words.join(" "))
    };
    let paras: Vec<String> = [
        "The artificial intelligence lab said its large language model",
        "Machine learning teams at OpenAI and DeepMind noted that the AI system",
        "Critics of generative AI and of the large language model argued that",
        "The artificial intelligence industry expects that machine learning",
        "Observers of the AI model race concluded that",
    ]
    .iter()
    .map(|lead| {
        format!(
            "{} {} {}",
            sentence(lead),
            sentence("Meanwhile"),
            sentence("Also")
        )
    })
    .collect();
    let title = format!("AI lab {host} ships large language model number {n}");
    let body: String = paras.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta property="og:type" content="article"><meta property="article:published_time" content="{}T09:30:00Z">
</head><body><nav><a href="/">Home</a></nav><main><article><h1>{title}</h1>
{body}<p>More at <a href="http://partner.test{}">our partner</a>.</p></article></main></body></html>"#,
        day(n),
        article_path(200 + n % 3)
    )
}

/// A web where every host name serves the same shape: `/` lists its
/// stories and links to the home page of `next(host)`; every story is a
/// relevant article (which links to `partner.test`); robots.txt is missing.
pub fn many_hosts_web(hosts: Vec<String>) -> Web {
    Web::start(move |r: &Req| {
        let host = r.host.as_str();
        match r.path.as_str() {
            "/robots.txt" => Reply::not_found(),
            "/" => {
                let mut links: Vec<String> = (0..STORIES).map(article_path).collect();
                if let Some(i) = hosts.iter().position(|h| h == host) {
                    links.push(format!("http://{}/", hosts[(i + 1) % hosts.len()]));
                }
                Reply::html(listing_html("Home", &links))
            }
            p if p.contains("/story-") => {
                let n: usize = p
                    .rsplit("story-")
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                Reply::html(unique_article(host, n))
            }
            _ => Reply::not_found(),
        }
    })
}

pub fn hosts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("site{i}.test")).collect()
}

pub fn sources(hosts: &[String]) -> String {
    hosts
        .iter()
        .map(|h| format!("  - {{host: {h}, seeds: [http://{h}/]}}"))
        .collect::<Vec<_>>()
        .join("\n")
}
