//! How the binary shows `scraper probe`: a readable layout on stdout, or one
//! JSON object with `--json`.

use scraper::inspect::probe::{FoundVia, Probe};

/// `scraper probe`.
pub fn show(p: &Probe, json: bool) {
    if json {
        // Invariant: a Probe holds only strings, numbers and lists.
        println!("{}", serde_json::to_string(p).expect("a Probe serialises"));
        return;
    }
    println!("probe of {} ({} requests)", p.start_url, p.requests);
    for n in &p.notes {
        println!("note: {n}");
    }
    let r = &p.robots;
    println!(
        "\nrobots.txt: {} ({}){}{}",
        r.outcome,
        r.detail,
        r.crawl_delay_ms
            .map(|ms| format!(", Crawl-delay {}s", ms as f64 / 1000.0))
            .unwrap_or_default(),
        if r.allows_start {
            ""
        } else {
            ", DISALLOWS the start URL"
        }
    );
    let signals = if p.ai_signals.is_empty() {
        "no signals".to_string()
    } else {
        p.ai_signals.join(", ")
    };
    println!(
        "AI-use: {signals}{}",
        if p.ai_reserved {
            " (reserves AI training)"
        } else {
            ""
        }
    );
    if let Some(e) = &p.start_error {
        println!("start page: {e}");
    }
    listings(p);
    if !p.by_month.is_empty() || p.undated > 0 {
        println!("\nlisted URLs by month ({} in all):", p.listed);
        for (m, n) in &p.by_month {
            println!("  {m}  {n}");
        }
        if p.undated > 0 {
            println!("  undated  {}", p.undated);
        }
    }
    sample(p);
    rendering(p);
    println!("\nverdict: {}", p.verdict);
    if let Some(entry) = &p.suggested {
        println!("\nsuggested entry for config.yml (under `sources:`):\n{entry}");
    }
}

/// The feeds and sitemaps found, and the common paths tried in vain.
fn listings(p: &Probe) {
    println!(
        "\nfeeds and sitemaps ({} found):",
        p.listings.iter().filter(|l| l.entries.is_some()).count()
    );
    let mut missing = Vec::new();
    for l in &p.listings {
        let what = match (l.kind, l.entries) {
            (Some(k), Some(n)) => format!(
                "{}, {n} entries{}",
                k.as_str(),
                if l.children > 0 {
                    format!(", {} child sitemaps", l.children)
                } else {
                    String::new()
                }
            ),
            _ if l.found_via == FoundVia::CommonPath => {
                let path = l
                    .url
                    .split_once("://")
                    .and_then(|(_, r)| r.find('/').map(|i| &r[i..]));
                missing.push(format!("{} ({})", path.unwrap_or(&l.url), l.answer));
                continue;
            }
            _ => match &l.error {
                Some(e) => format!("{}: {e}", l.answer),
                None => l.answer.to_string(),
            },
        };
        let mark = if l.entries.is_some() { "ok" } else { "failed" };
        println!(
            "  {mark:<7} {} ({what}; found via {})",
            l.url,
            l.found_via.as_str()
        );
    }
    if !missing.is_empty() {
        println!("  tried without success: {}", missing.join(", "));
    }
}

/// The sampled pages as served and as rendered, and the strategy recommended.
fn rendering(p: &Probe) {
    let r = &p.render;
    if r.compared.is_empty() && r.reason.is_empty() {
        return;
    }
    println!("\nrendering:");
    for c in &r.compared {
        match &c.error {
            Some(e) => println!("  failed  {}: {e}", c.url),
            None => println!(
                "  {}  {}: as served {} chars{}, rendered {} chars{} ({} ms, {} requests)",
                if c.gains() { "gains " } else { "same  " },
                c.url,
                c.static_chars,
                if c.static_article { " (article)" } else { "" },
                c.rendered_chars,
                if c.rendered_article { " (article)" } else { "" },
                c.render_ms,
                c.requests
            ),
        }
    }
    let word = match r.recommended {
        Some(true) => "recommended",
        Some(false) => "not needed",
        None => "not measured",
    };
    println!("  rendering {word}: {}", r.reason);
    if let Some(f) = &r.remembered_in {
        println!("  remembered in {f}");
    }
}

/// The sampled pages with the extractor's and the relevance verdicts.
fn sample(p: &Probe) {
    if !p.sample.is_empty() {
        println!("\nsample of listed pages:");
        for s in &p.sample {
            match &s.error {
                Some(e) => println!("  {}\n    {e}", s.url),
                None => println!(
                    "  {}\n    {} | {} | {} characters | {}{}",
                    s.url,
                    if s.is_article {
                        "article"
                    } else {
                        "not an article"
                    },
                    if s.relevant {
                        "relevant"
                    } else {
                        "not relevant"
                    },
                    s.text_chars,
                    s.title.as_deref().unwrap_or("(no title)"),
                    s.date
                        .as_deref()
                        .map(|d| format!(" | {d}"))
                        .unwrap_or_default()
                ),
            }
        }
    }
}
