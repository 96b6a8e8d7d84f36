//! `crawl.paywalled_text` end to end: the real binary against a host whose
//! articles declare a paywalled part (JSON-LD `isAccessibleForFree: false`
//! with its `cssSelector`) holding the second half of the story, hidden
//! from readers without a subscription, next to a host that says nothing.

use crate::support::fixture::{
    Workspace, article_html, article_path, day, listing_html, news_web_with, stderr,
};
use crate::support::web::{Reply, Req};

const SOURCES: &str = "  - {host: wall.test, seeds: [http://wall.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}";
/// Stories on the paywalled host.
const LISTED: usize = 3;
/// Words only the paywalled part of each story holds.
const BEHIND: &str = "Subscribers also read that the lab will publish its evaluation data.";

fn crawl(policy: &str) -> Vec<serde_json::Value> {
    crawl_in(policy).1
}

/// The crawl's workspace (its raw responses archived) and its records.
fn crawl_in(policy: &str) -> (Workspace, Vec<serde_json::Value>) {
    let web = news_web_with(|r: &Req| {
        if r.host != "wall.test" {
            return None;
        }
        Some(match r.path.as_str() {
            "/robots.txt" => Reply::not_found(),
            "/" => Reply::html(listing_html(
                "Home",
                &(0..LISTED).map(article_path).collect::<Vec<_>>(),
            )),
            p if p.contains("/story-") => {
                let n: usize = p
                    .rsplit("story-")
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let ld = r#"<script type="application/ld+json">{"@type":"NewsArticle","isAccessibleForFree":false,"hasPart":{"@type":"WebPageElement","isAccessibleForFree":false,"cssSelector":".premium-part"}}</script></head>"#;
                let rest = format!(
                    "<div class=\"premium-part\" style=\"display:none\"><p>{BEHIND} The artificial intelligence researchers said the large language model would be tested again next year.</p><p>{}</p></div></article>",
                    "The machine learning team added that the benchmark would stay open to outside researchers, and that every AI model it tests will be listed with its scores."
                );
                Reply::html(
                    article_html("wall.test", n, &day(n))
                        .replace("</head>", ld)
                        .replace("</article>", &rest),
                )
            }
            _ => Reply::not_found(),
        })
    });
    let ws = Workspace::new(
        &web,
        SOURCES,
        &format!("paywalled_text: {policy}\narchive: articles"),
    );
    let out = ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let records = ws.records();
    (ws, records)
}

/// `scraper reextract`'s one-line report.
fn reextract(ws: &Workspace, args: &[&str]) -> String {
    let out = ws
        .command(&[&["reextract", "--data", "data"], args].concat())
        .output()
        .expect("run scraper");
    assert!(out.status.success(), "reextract failed: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn walled(records: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    records
        .iter()
        .filter(|r| r["domain"] == "wall.test")
        .collect()
}

#[test]
fn store_keeps_the_paywalled_text_and_marks_the_record() {
    let records = crawl("store");
    let wall = walled(&records);
    assert_eq!(wall.len(), LISTED, "{records:?}");
    for r in &wall {
        assert_eq!(r["accessible_for_free"], false, "{r}");
        assert!(r["text"].as_str().unwrap().contains(BEHIND), "{r}");
    }
    // A page that says nothing has no field.
    assert!(
        records
            .iter()
            .filter(|r| r["domain"] != "wall.test")
            .all(|r| r.get("accessible_for_free").is_none())
    );
}

#[test]
fn flag_stores_only_the_free_part_and_skip_stores_nothing() {
    let records = crawl("flag");
    let wall = walled(&records);
    assert_eq!(wall.len(), LISTED);
    for r in &wall {
        assert_eq!(r["accessible_for_free"], false, "{r}");
        let text = r["text"].as_str().unwrap();
        assert!(
            !text.contains(BEHIND) && text.contains("newest large language model"),
            "{r}"
        );
        assert!(!r["markdown"].as_str().unwrap().contains(BEHIND));
    }
    let records = crawl("skip");
    assert!(walled(&records).is_empty());
    assert!(!records.is_empty(), "the other host is still stored");
}

#[test]
fn reextract_applies_the_paywall_policy_as_the_crawl_did() {
    // `flag`: the records made again from the archive are the stored ones.
    let (ws, records) = crawl_in("flag");
    assert_eq!(walled(&records).len(), LISTED);
    let said = reextract(&ws, &[]);
    assert!(
        said.contains(&format!("{} unchanged, 0 written", records.len())),
        "{said}"
    );
    // `skip` on the same archive (the config changed since the crawl): the
    // paywalled stories are written again as withdrawn, the others unchanged.
    let config = ws.dir.path().join("config.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("paywalled_text: flag", "paywalled_text: skip"),
    )
    .unwrap();
    let said = reextract(&ws, &[]);
    assert!(
        said.contains(&format!(
            "{LISTED} written (0 no longer an article, 0 no longer relevant, {LISTED} paywalled)"
        )),
        "{said}"
    );
    let again: Vec<_> = ws
        .records()
        .into_iter()
        .filter(|r| r["domain"] == "wall.test" && !r["withdrawn"].is_null())
        .collect();
    assert_eq!(again.len(), LISTED, "{again:?}");
}
