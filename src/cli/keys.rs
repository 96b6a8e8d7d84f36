//! `scraper keys`: what a Web Bot Auth operator publishes (see
//! `scraper::net::sign`). By default the key directory (JSON, to serve at
//! `<signature_agent>/.well-known/http-message-signatures-directory`);
//! `--response` the whole signed HTTP response for that URL (status line,
//! headers with `Signature-Input` and `Signature` over `"@authority";req`,
//! body); `--card` a Signature Agent Card describing the crawler (identity,
//! purpose, contact, rate, keys). `--also FILE` adds another key (the next or
//! the previous one, during a rotation) to the directory and its signatures.
//! `--generate FILE` makes a new key first. Only public keys are printed.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use scraper::config::Config;
use scraper::net::sign::{self, Signer};

use super::args::KeysArgs;
use super::load_config;

/// The media type of a key directory.
const DIRECTORY_TYPE: &str = "application/http-message-signatures-directory+json";

/// `scraper keys [--generate FILE] [--also FILE]... [--response | --card]`.
pub fn keys(config: &Path, a: &KeysArgs) -> anyhow::Result<ExitCode> {
    let cfg = if config.exists() || a.generate.is_none() {
        Some(load_config(config)?)
    } else {
        None
    };
    let agent = cfg
        .as_ref()
        .and_then(|c| c.crawl.web_bot_auth.as_ref())
        .map_or("", |w| w.signature_agent.as_str())
        .to_string();
    let signer = match a.generate.as_deref() {
        Some(path) => {
            let s = sign::generate(path, &agent)?;
            eprintln!(
                "wrote a new Ed25519 key to {} (keep it secret; keyid {})",
                path.display(),
                s.keyid()
            );
            s
        }
        None => {
            let Some(w) = cfg.as_ref().and_then(|c| c.crawl.web_bot_auth.as_ref()) else {
                anyhow::bail!(
                    "{}: crawl.web_bot_auth is not set (add key_file and signature_agent, or make a key with `scraper keys --generate FILE`)",
                    config.display()
                );
            };
            Signer::from_config(w)?
        }
    };
    let mut signers = vec![signer];
    for path in &a.also {
        let pem = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--also `{}`: cannot read it: {e}", path.display()))?;
        let from = format!("--also `{}`", path.display());
        signers.push(Signer::from_pem(&pem, &from, &agent)?);
    }
    let refs: Vec<&Signer> = signers.iter().collect();
    let directory = serde_json::json!({
        "keys": refs.iter().map(|s| s.jwk()).collect::<Vec<_>>()
    });
    if a.card {
        let card = agent_card(cfg.as_ref(), &agent, &directory);
        println!("{}", serde_json::to_string_pretty(&card)?);
    } else if a.response {
        if agent.is_empty() {
            anyhow::bail!(
                "{}: --response signs for crawl.web_bot_auth.signature_agent, which is not set",
                config.display()
            );
        }
        let valid = Duration::from_secs(a.valid_hours.max(1) * 3600);
        let (input, signature) = Signer::directory_headers(&refs, SystemTime::now(), valid);
        let body = serde_json::to_string_pretty(&directory)?;
        println!(
            "HTTP/1.1 200 OK\r\nContent-Type: {DIRECTORY_TYPE}\r\nCache-Control: max-age={}\r\nSignature-Input: {input}\r\nSignature: {signature}\r\n\r\n{body}",
            valid.as_secs()
        );
    } else {
        println!("{}", serde_json::to_string_pretty(&directory)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// A Signature Agent Card: who the crawler is, what it does with what it
/// fetches, whom to ask, how fast it goes, and its keys.
fn agent_card(
    cfg: Option<&Config>,
    agent: &str,
    directory: &serde_json::Value,
) -> serde_json::Value {
    let crawl = cfg.map(|c| &c.crawl);
    let user_agent = crawl.map_or(String::new(), |c| c.user_agent.clone());
    // `name/0.1 (+https://...)`: the URL in the comment describes the crawler.
    let about = user_agent
        .split("(+")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .map(str::to_string);
    let contact = crawl
        .and_then(|c| c.web_bot_auth.as_ref())
        .and_then(|w| w.contact.clone())
        .or_else(|| about.clone());
    let usage = crawl.map_or(scraper::consent::AiUsage::TrainAi, |c| c.ai_usage);
    let rate = crawl.map_or(String::new(), |c| {
        format!(
            "at most {} request(s) at a time per host, at least {} apart (longer when robots.txt Crawl-delay says so); backs off on 429 and 503 Retry-After",
            c.per_host_concurrency, c.min_host_gap
        )
    });
    serde_json::json!({
        "client_name": scraper::consent::agent_token(&user_agent),
        "client_uri": about,
        "contacts": contact.into_iter().collect::<Vec<_>>(),
        "expected-user-agent": user_agent,
        "rfc9309-product-token": scraper::consent::agent_token(&user_agent),
        "rfc9309-compliance": ["User-Agent", "Allow", "Disallow", "Crawl-delay", "Content-Usage", "Content-Signal", "License"],
        "trigger": "crawler",
        "purpose": usage.to_string(),
        "targeted-content": "news and blog articles of the configured sources (text only)",
        "rate-control": "robots.txt Crawl-delay; HTTP 429/503 with Retry-After",
        "rate-expectation": rate,
        "payment": "never: 402 Payment Required answers are recorded, not paid",
        "signature-agent": agent,
        "keys": directory["keys"].clone(),
    })
}
