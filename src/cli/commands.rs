//! One function per `scraper` command: read the arguments, call the library,
//! hand the value it returns to [`super::print`], and choose the exit code.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use super::args::{
    BuildArgs, CheckUrlArgs, CompactArgs, CrawlArgs, DashboardArgs, ExtractArgs, HealthArgs,
    ProbeArgs, ReextractArgs, RenumberArgs, StatsArgs,
};
use super::{
    EXIT_INTERRUPTED, EXIT_OUTAGE, done, leave, load_config, one_thread_runtime, print, runtime,
};
use scraper::config::Overrides;

/// `scraper crawl`: 0 at a limit or out of work, 130 interrupted, 69 an outage.
pub fn crawl(config: &Path, a: &CrawlArgs) -> anyhow::Result<ExitCode> {
    let mut config = load_config(config)?;
    config.apply_overrides(&Overrides {
        max_pages: a.max_pages,
        max_hits: a.max_hits,
        max_duration: a.max_duration.map(|s| s.0),
        min_lastmod: a
            .min_lastmod
            .as_deref()
            .map(scraper::date::MinLastmod::parse)
            .transpose()
            .map_err(|e| anyhow::anyhow!("--min-lastmod: {e}"))?,
        scope: a.scope,
        partition: a.partition,
    });
    let opts = scraper::crawl::Options {
        data: a.data.clone(),
        seeds: a.seeds.clone(),
        resume: a.resume,
        proxy: a.proxy.clone(),
    };
    let max = config.crawl.max_duration.0;
    let progress = super::progress::Progress::new((!max.is_zero()).then_some(max));
    let end = runtime()?.block_on(scraper::crawl::run(config, opts, Box::new(progress)))?;
    print::crawl::show(&end);
    if let Some(cause) = &end.outage {
        eprintln!(
            "outage: {cause}; nothing saved (watermark, queue and state unchanged), exit {EXIT_OUTAGE}"
        );
        return Ok(ExitCode::from(EXIT_OUTAGE));
    }
    Ok(if end.interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// `scraper check-url URL`.
pub fn check_url(config: &Path, a: &CheckUrlArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let report = one_thread_runtime()?.block_on(scraper::inspect::check_url(
        &config,
        &a.url,
        a.proxy.as_deref(),
    ))?;
    print::check_url::show(&report, a.json);
    leave(config);
    Ok(ExitCode::SUCCESS)
}

/// `scraper extract FILE...`.
pub fn extract(config: &Path, a: &ExtractArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let result = super::extract_files::run_files(&config, &a.paths, a.url.as_deref());
    leave(config);
    result.map(done)
}

/// `scraper stats`: the report, or its JSON with `--json`.
pub fn stats(a: &StatsArgs) -> anyhow::Result<ExitCode> {
    let stats = scraper::report::stats::collect(&a.data)?;
    print::stats::show(&stats, a.json).map(done)
}

/// `scraper health`.
pub fn health(config: &Path, a: &HealthArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let report =
        scraper::store::health::report(&a.data.join("state"), &config.sources, &config.health)?;
    print::health::show(report, a.json, a.problems);
    Ok(ExitCode::SUCCESS)
}

/// `scraper probe URL|HOST`.
pub fn probe(config: &Path, a: &ProbeArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let opts = scraper::inspect::probe::Options {
        sample: a.sample,
        max_requests: a.max_requests,
        proxy: a.proxy.clone(),
        render: !a.no_render,
        data: (!a.no_render).then(|| a.data.clone()),
    };
    let p = runtime()?.block_on(scraper::inspect::probe::probe(&config, &a.target, &opts))?;
    print::probe::show(&p, a.json);
    Ok(ExitCode::SUCCESS)
}

/// `scraper build`: 1 when `--strict` found broken input (nothing written).
pub fn build(config: &Path, a: &BuildArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let s = scraper::dataset::build(
        &config,
        &scraper::dataset::BuildOptions {
            data: a.data.clone(),
            out: a.out.clone(),
            relevance_filter: !a.no_relevance_filter,
            strict: a.strict,
        },
    )?;
    if !s.ok {
        print::build::strict_failed(&s);
        return Ok(ExitCode::from(1));
    }
    print::build::show(&s);
    Ok(ExitCode::SUCCESS)
}

/// `scraper compact`: the seen-set, validators, listings, URL families and document cache.
pub fn compact(a: &CompactArgs) -> anyhow::Result<ExitCode> {
    use scraper::store::state;
    let data = scraper::store::DataDir::open(&a.data)?;
    let now = chrono::Utc::now();
    let stamp = state::new_run_id(now);
    let seen = scraper::store::seen::compact(&data.state, &stamp)?;
    print::state::compacted(&seen);
    let cap = state::Validators::DEFAULT_CAP;
    let validators = state::validators::compact(&data.state, &stamp, cap)?;
    print::state::folded(validators, "validators", &format!("validators/{stamp}"));
    let listings = state::listings::compact(&data.state, &stamp)?;
    print::state::folded(listings, "listings", &format!("listings/{stamp}"));
    let families = state::families::compact(&data.state, &stamp)?;
    print::state::folded(families, "URL families", &format!("families/{stamp}"));
    let today = scraper::store::seen::day_stamp(now);
    let docs = state::compact_doc_cache(&data.state, &stamp, today)?;
    print::state::folded(docs, "document-cache", &format!("doc_cache/{stamp}"));
    Ok(ExitCode::SUCCESS)
}

/// `scraper reextract`.
pub fn reextract(config: &Path, a: &ReextractArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let s = scraper::reextract::reextract(
        &config,
        &scraper::reextract::Options {
            data: a.data.clone(),
            all: a.all,
        },
    )?;
    print::state::reextracted(&s);
    Ok(ExitCode::SUCCESS)
}

/// `scraper renumber SHARD`.
pub fn renumber(config: &Path, a: &RenumberArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let data = scraper::store::DataDir::open(&a.data)?;
    let r = scraper::store::renumber::renumber(&data, &a.shard, config.crawl.first_id)?;
    print::state::renumbered(&r);
    Ok(ExitCode::SUCCESS)
}

/// `scraper dashboard`: serve the live page on `127.0.0.1:port` until Ctrl-C.
pub fn dashboard(config: &Path, a: &DashboardArgs) -> anyhow::Result<ExitCode> {
    // The health panel needs the sources: from the config when there is one.
    let config = if config.exists() {
        Some(load_config(config)?)
    } else {
        None
    };
    runtime()?.block_on(serve(&a.data, a.port, config))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(
    data: &Path,
    port: u16,
    config: Option<scraper::config::Config>,
) -> anyhow::Result<()> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr} (is another dashboard running? try --port)")
    })?;
    eprintln!(
        "dashboard for {} on http://{}/ (add ?budget=40m for a countdown); Ctrl-C to stop",
        data.join("state").join("crawl.log").display(),
        listener.local_addr()?
    );
    tokio::select! {
        r = scraper::report::dashboard::serve_with(listener, data.to_path_buf(), config) => r,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
