//! `scraper check-url`: fetch one page the way the crawler would (robots.txt
//! honoured, politeness on) and show everything the extractor decided.

use chrono::Utc;

use super::signals;
use crate::config::{AiUsePolicy, Config};
use crate::consent;
use crate::discover::{self, Limits, Listing};
use crate::extract;
use crate::frontier::Kind;
use crate::net::{Accept, Net, Request};
use crate::relevance::Rule;
use crate::url;

/// Fetch `target` and print the extractor's decisions (`--json`: the `extract` object).
pub async fn check_url(
    config: &Config,
    target: &str,
    json: bool,
    proxy: Option<&str>,
) -> anyhow::Result<()> {
    let u = url::parse(target)
        .ok_or_else(|| anyhow::anyhow!("{target}: expected an absolute http(s) URL"))?;
    let net = Net::new(&config.crawl, proxy)?;
    net.set_allow_private(config.crawl.allow_private_addresses);
    let robots = net.robots(&u).await;
    if !robots.allowed(&u) {
        anyhow::bail!(
            "{u}: robots.txt does not allow {} to fetch this page ({:?})",
            config.crawl.user_agent,
            robots.outcome
        );
    }
    let req = Request {
        accept: Accept::Any,
        etag: None,
        last_modified: None,
    };
    let resp = net
        .fetch(&u, &req, &|_: &url::Url| true)
        .await
        .map_err(|e| anyhow::anyhow!("{u}: {e}"))?;
    if !(200..300).contains(&resp.status) {
        anyhow::bail!("{u}: the server answered HTTP {}", resp.status);
    }
    if let Some(kind @ (Kind::Feed | Kind::Sitemap)) =
        discover::sniff(&resp.url, resp.content_type.as_deref(), &resp.body)
    {
        let limits = Limits {
            max_urls: 50_000,
            max_decoded_bytes: config.crawl.max_body_bytes * 4,
        };
        let listing = discover::parse(kind, &resp.url, &resp.body, &limits)
            .map_err(|e| anyhow::anyhow!("{u}: {e}"))?
            .listing;
        let (urls, children) = match &listing {
            Listing::Feed(e) => (e.len(), 0),
            Listing::Sitemap { urls, sitemaps } => (urls.len(), sitemaps.len()),
        };
        if json {
            println!(
                "{}",
                serde_json::json!({"url": resp.url.as_str(), "kind": kind, "entries": urls, "sitemaps": children, "is_article": false})
            );
        } else {
            println!(
                "{}\n  a {kind:?} with {urls} entries and {children} child sitemaps: never stored as an article",
                resp.url
            );
        }
        return Ok(());
    }
    let rule = Rule::new(&config.keywords);
    let page = extract::extract(
        &resp.body,
        resp.charset.as_deref(),
        Some(&resp.url),
        &rule,
        Utc::now().date_naive(),
    );
    let mut signals = signals::from_headers(&net, &resp);
    let got = signals::add_page_signals(&net, &resp.url, &page, true, &mut signals).await;
    // Invariant: `add_page_signals` answers with the tdmrep.json it was asked for.
    let tdm = got.tdmrep.expect("tdmrep.json was asked for");
    let reserved = consent::reserves_ai_training(&signals);
    let decision = ai_decision(reserved, config.crawl.ai_use_policy);
    if json {
        let mut v = extract::to_json(resp.url.as_str(), &page);
        if let Some(o) = v.as_object_mut() {
            o.insert("ai_signals".into(), serde_json::json!(signals.labels()));
            o.insert("ai_reserved".into(), serde_json::json!(reserved));
            o.insert("ai_decision".into(), serde_json::json!(decision));
            o.insert(
                "robots_hash".into(),
                serde_json::json!(
                    (got.robots_hash != 0)
                        .then(|| crate::store::consent::hash_hex(got.robots_hash))
                ),
            );
            o.insert("tdmrep".into(), serde_json::json!(tdm.outcome));
        }
        println!("{v}");
    } else {
        if !resp.redirects.is_empty() {
            println!(
                "redirects: {}",
                resp.redirects
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            );
        }
        if let Some(d) = robots.crawl_delay {
            println!("robots.txt Crawl-delay: {:.1}s", d.as_secs_f64());
        }
        print!("{}", extract::describe(&page, resp.url.as_str()));
        let labels = signals.labels();
        println!(
            "AI-use:       {} (tdmrep.json: {})\n              decision: {decision}",
            if labels.is_empty() {
                "no signals".to_string()
            } else {
                labels.join(", ")
            },
            tdm.outcome
        );
    }
    Ok(())
}

/// What the crawl would do about AI-use signals under `policy`.
pub fn ai_decision(reserved: bool, policy: AiUsePolicy) -> &'static str {
    match (reserved, policy) {
        (false, _) => "no AI-training reservation: stored if it is a relevant article",
        (true, AiUsePolicy::Respect) => {
            "withheld: ai-use (the publisher reserves AI training; ai_use_policy: respect)"
        }
        (true, AiUsePolicy::Record) => {
            "stored and marked ai_reserved (the publisher reserves AI training; ai_use_policy: record)"
        }
        (true, AiUsePolicy::Ignore) => {
            "stored (the publisher reserves AI training; ai_use_policy: ignore)"
        }
    }
}
