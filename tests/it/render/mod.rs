//! Rendering in headless Chromium (`crate::render`) against a loopback web
//! whose articles only scripts write, beside ordinary static pages:
//!
//! - `app.test`: a client-side-rendered page (an empty `#root`, a script that
//!   fetches the story as JSON, asks for a robots-disallowed URL, an image
//!   and another host's script) and a page whose body sits in a script's
//!   JSON of no known framework; robots.txt with a Disallow and a
//!   Crawl-delay.
//! - `lazy.test`: a headline and a lede as served; the rest of the story is
//!   fetched when the reader scrolls to its end (an IntersectionObserver).
//! - `news.test`: ordinary static articles.
//!
//! `probe` must recommend rendering for the lazy source and not the static one;
//! under `render: auto` the shells are rendered and stored with their text
//! (the lazy story once the probe's verdict is remembered), the static pages
//! are not rendered, and the server never sees a disallowed, refused-kind or
//! other-host request, a gap shorter than the host's, or more requests than
//! the budget.
//!
//! Without Chromium the test fails; `SCRAPER_SKIP_BROWSER=1` skips it.
//! `SCRAPER_CHROMIUM` names another binary.

use std::time::{Duration, Instant};

use crate::support::fixture::{Workspace, article_html, stderr};
use crate::support::tool::Tool;
use crate::support::web::{Reply, Req, Web};

const SOURCES: &str = "  - {host: app.test, seeds: [http://app.test/sitemap.xml]}\n  - {host: lazy.test, seeds: [http://lazy.test/sitemap.xml]}\n  - {host: news.test, seeds: [http://news.test/sitemap.xml]}";

/// The per-host gap configured, and app.test's Crawl-delay.
const GAP: Duration = Duration::from_millis(50);
const APP_DELAY: Duration = Duration::from_millis(120);
/// Arrival times jitter a little against send times.
const SLACK: Duration = Duration::from_millis(12);

fn chromium() -> String {
    std::env::var("SCRAPER_CHROMIUM").unwrap_or_else(|_| "chromium".to_string())
}

fn on_path(name: &str) -> bool {
    if name.contains('/') {
        return std::path::Path::new(name).is_file();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| d.join(name).is_file())
}

/// Five paragraphs of an AI story, each tagged with `tag` so the test can
/// tell which text reached the record.
fn paragraphs(tag: &str) -> Vec<String> {
    vec![
        format!(
            "The artificial intelligence lab said its newest large language model beats earlier AI systems on reasoning benchmarks by a wide margin ({tag} one)."
        ),
        format!(
            "Researchers described how the model was trained with reinforcement learning from human feedback, and how machine learning engineers measured its behaviour on coding and long documents ({tag} two)."
        ),
        format!(
            "Critics warned that generative AI tools still make confident mistakes, and that the companies building foundation models have not explained what data went into training them ({tag} three)."
        ),
        format!(
            "The company plans to offer the model to developers through its API next month, with a smaller version for phones, and its chief scientist promised ten times more compute ({tag} four)."
        ),
        format!(
            "The deep learning community will be watching closely how these neural network systems are used by businesses and governments in the months ahead ({tag} five)."
        ),
    ]
}

fn json_story(title: &str, tag: &str) -> String {
    serde_json::json!({"title": title, "paragraphs": paragraphs(tag)}).to_string()
}

fn head(title: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <meta property=\"og:type\" content=\"article\"></head>"
    )
}

fn sitemap(host: &str, paths: &[&str]) -> Reply {
    let urls: String = paths
        .iter()
        .map(|p| format!("<url><loc>http://{host}{p}</loc></url>"))
        .collect();
    Reply::xml(format!(
        "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
    ))
}

/// The client-side app: the story from a JSON fetch, plus requests the
/// crawler must refuse (robots, an image, another host).
const APP_JS: &str = r#"(async function () {
  var id = location.pathname.split('/').pop();
  var img = document.createElement('img'); img.src = '/img/hero.jpg'; document.body.appendChild(img);
  var s = document.createElement('script'); s.src = 'http://cdn.other.test/lib.js'; document.head.appendChild(s);
  fetch('/private/track.json').catch(function () {});
  var r = await fetch('/api/story/' + id + '.json');
  var d = await r.json();
  var art = document.createElement('article');
  var h = document.createElement('h1'); h.textContent = d.title; art.appendChild(h);
  d.paragraphs.forEach(function (t) { var p = document.createElement('p'); p.textContent = t; art.appendChild(p); });
  document.getElementById('root').appendChild(art);
  document.title = d.title;
})();"#;

fn csr_page() -> String {
    format!(
        "{}<body><div id=\"root\"></div><script src=\"/static/app.js\"></script></body></html>",
        head("App news")
    )
}

fn json_page() -> String {
    let data = serde_json::json!({"headline": "Open model release tops the leaderboard", "body": paragraphs("json-body")});
    format!(
        "{}<body><header><a href=\"/\">App news</a></header><main id=\"story\"></main>\
         <script id=\"story-data\" type=\"application/json\">{data}</script>\
         <script>var d = JSON.parse(document.getElementById('story-data').textContent);\
         var a = document.createElement('article'); var h = document.createElement('h1'); h.textContent = d.headline; a.appendChild(h);\
         d.body.forEach(function (t) {{ var p = document.createElement('p'); p.textContent = t; a.appendChild(p); }});\
         document.getElementById('story').appendChild(a); document.title = d.headline;</script></body></html>",
        head("Loading")
    )
}

fn lazy_page() -> String {
    format!(
        "{}<body><article><h1>Chip makers bet on AI inference</h1>\
         <p>Chip makers told investors this week that AI inference, not training, will drive demand for the next decade.</p>\
         <div id=\"more\"></div><div style=\"height:4000px\"></div><div id=\"sentinel\">Loading the rest of the story</div></article>\
         <script>var io = new IntersectionObserver(function (es) {{\
           if (!es.some(function (e) {{ return e.isIntersecting; }})) return; io.disconnect();\
           fetch('/api/more/3.json').then(function (r) {{ return r.json(); }}).then(function (d) {{\
             var m = document.getElementById('more');\
             d.paragraphs.forEach(function (t) {{ var p = document.createElement('p'); p.textContent = t; m.appendChild(p); }});\
             document.getElementById('sentinel').remove(); }}); }});\
         io.observe(document.getElementById('sentinel'));</script></body></html>",
        head("Chip makers bet on AI inference")
    )
}

fn route(r: &Req) -> Reply {
    match (r.host.as_str(), r.path.as_str()) {
        ("app.test", "/robots.txt") => Reply::text(
            "User-agent: *\nDisallow: /private\nCrawl-delay: 0.12\nSitemap: http://app.test/sitemap.xml\n",
        ),
        ("lazy.test" | "news.test", "/robots.txt") => Reply::text(format!(
            "User-agent: *\nDisallow: /private\nSitemap: http://{}/sitemap.xml\n",
            r.host
        )),
        ("app.test", "/sitemap.xml") => sitemap("app.test", &["/csr/1", "/json/2"]),
        ("lazy.test", "/sitemap.xml") => sitemap("lazy.test", &["/story/3"]),
        ("news.test", "/sitemap.xml") => sitemap("news.test", &["/a/1", "/a/2"]),
        (_, "/") => Reply::html(format!("{}<body><h1>Home</h1></body></html>", head("Home"))),
        ("app.test", "/csr/1") => Reply::html(csr_page()),
        ("app.test", "/json/2") => Reply::html(json_page()),
        ("app.test", "/static/app.js") => Reply::bytes("text/javascript", APP_JS),
        ("app.test", "/api/story/1.json") => Reply::bytes(
            "application/json",
            json_story("A new language model learns to plan", "csr-body"),
        ),
        ("lazy.test", "/story/3") => Reply::html(lazy_page()),
        ("lazy.test", "/api/more/3.json") => {
            Reply::bytes("application/json", json_story("", "lazy-body"))
        }
        ("news.test", p) if p.starts_with("/a/") => {
            let n: usize = p[3..].parse().unwrap_or(0);
            Reply::html(article_html("news.test", n, "2024-05-02"))
        }
        _ => Reply::not_found(),
    }
}

/// No forbidden request reached the server, and no host was asked sooner than its gap.
fn assert_polite(web: &Web, phase: &str) {
    for r in web.log() {
        assert!(
            !r.path.starts_with("/private"),
            "{phase}: robots.txt disallows {}{}",
            r.host,
            r.path
        );
        assert!(
            !r.path.starts_with("/img/"),
            "{phase}: an image was fetched"
        );
        assert_ne!(
            r.host, "cdn.other.test",
            "{phase}: another host was fetched"
        );
    }
    for (host, gap) in [
        ("app.test", APP_DELAY),
        ("lazy.test", GAP),
        ("news.test", GAP),
    ] {
        assert_eq!(
            web.gap_violations(host, gap - SLACK),
            0,
            "{phase}: {host} asked sooner than {gap:?}: {:?}",
            web.requests_to(host)
                .iter()
                .map(|r| r.path.clone())
                .collect::<Vec<_>>()
        );
    }
}

fn probe(ws: &Workspace, host: &str, data: &str) -> serde_json::Value {
    let out = ws
        .command(&[
            "probe",
            &format!("http://{host}/"),
            "--json",
            "--proxy",
            &ws.proxy,
            "--data",
            data,
        ])
        .output()
        .expect("run probe");
    assert!(out.status.success(), "probe {host}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("probe JSON")
}

fn crawl(ws: &Workspace, data: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["crawl", "--data", data, "--proxy", &ws.proxy];
    args.extend_from_slice(extra);
    let out = ws.command(&args).output().expect("run crawl");
    assert!(out.status.success(), "crawl: {}", stderr(&out));
    out
}

fn records(ws: &Workspace, data: &str) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let dir = ws.dir.path().join(data).join("articles");
    for shard in scraper::store::shard::list(&dir).expect("shards") {
        scraper::store::shard::read_lines(&shard, |l| out.push(serde_json::from_slice(l).unwrap()))
            .expect("shard");
    }
    out
}

fn record<'a>(recs: &'a [serde_json::Value], url: &str) -> Option<&'a serde_json::Value> {
    recs.iter().find(|r| r["url"] == url)
}

#[test]
fn script_built_articles_are_rendered_politely_and_static_ones_are_not() {
    if !Tool::Browser.need(
        "the rendering test",
        || on_path(&chromium()),
        "apt-get install -y chromium, as .ci/run does",
    ) {
        return;
    }
    let started = Instant::now();
    let web = Web::start(route);
    let crawl_cfg = format!(
        "min_host_gap: 50ms\nmax_duration: 20s\narchive: articles\nrender: {{mode: auto, browser: \"{}\", tabs: 2, page_timeout: 8s}}",
        chromium()
    );
    let ws = Workspace::new(&web, SOURCES, &crawl_cfg);

    // The lazy source alone, for the crawl that uses the probe's verdict.
    let lazy_ws = Workspace::new(
        &web,
        "  - {host: lazy.test, seeds: [http://lazy.test/sitemap.xml]}",
        &crawl_cfg,
    );
    let lazy_data = lazy_ws.data().display().to_string();

    // 1. The probe, both ways: rendering for the script-built sources only.
    for (host, want, data) in [
        ("lazy.test", true, lazy_data.as_str()),
        ("news.test", false, "probed"),
    ] {
        let p = probe(&ws, host, data);
        let r = &p["render"];
        assert_eq!(r["recommended"], want, "{host}: {r}");
        assert!(r["reason"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
        let reason = r["reason"].as_str().unwrap();
        assert!(p["verdict"].as_str().unwrap().contains(reason), "{p}");
        assert_polite(&web, &format!("probe {host}"));
        web.clear_log();
    }
    let read = |p: std::path::PathBuf| -> serde_json::Value {
        let text = std::fs::read_to_string(p).expect("the probe remembers its verdicts");
        serde_json::from_str(&text).unwrap()
    };
    let verdicts = read(ws.dir.path().join("probed/state/render_verdicts.json"));
    assert_eq!(
        verdicts["sources"]["news.test"]["render"], false,
        "{verdicts}"
    );
    let verdicts = read(lazy_ws.data().join("state/render_verdicts.json"));
    assert_eq!(
        verdicts["sources"]["lazy.test"]["render"], true,
        "{verdicts}"
    );

    // 2. A crawl without verdicts: the application shells are told by their markup.
    let out = crawl(&ws, "data", &[]);
    assert_polite(&web, "crawl without verdicts");
    let recs = records(&ws, "data");
    let csr = record(&recs, "http://app.test/csr/1")
        .unwrap_or_else(|| panic!("csr page not stored: {}", stderr(&out)));
    assert_eq!(csr["rendered"], true, "{csr}");
    assert!(
        csr["text"].as_str().unwrap().contains("(csr-body five)"),
        "{csr}"
    );
    assert_eq!(csr["title"], "A new language model learns to plan");
    let json = record(&recs, "http://app.test/json/2").expect("JSON-in-script page stored");
    assert!(
        json["text"].as_str().unwrap().contains("(json-body three)"),
        "{json}"
    );
    for n in [1, 2] {
        let r = record(&recs, &format!("http://news.test/a/{n}")).expect("static article stored");
        assert!(
            r.get("rendered").is_none(),
            "a static page was rendered: {r}"
        );
    }
    assert!(
        !recs
            .iter()
            .any(|r| r["text"].as_str().unwrap_or("").contains("lazy-body")),
        "the lazy story needs the probe's verdict"
    );
    let last: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.data().join("state/last_run.json")).unwrap(),
    )
    .unwrap();
    assert!(
        last["hosts"]["app.test"]["rendered"].as_u64() >= Some(2),
        "{}",
        last["hosts"]
    );
    assert!(
        last["hosts"]["news.test"].get("rendered").is_none(),
        "{}",
        last["hosts"]
    );
    let err = stderr(&out);
    assert!(
        err.contains("Rendered ") && err.contains("by robots.txt"),
        "{err}"
    );
    // The archive keeps the rendered DOM beside the response as served.
    let mut kinds = Vec::new();
    for file in scraper::store::warc::list(&ws.data().join("warc")).unwrap() {
        scraper::store::warc::read_records(&file, |rec| {
            if rec.header("WARC-Target-URI") == Some("http://app.test/csr/1") {
                let block = String::from_utf8_lossy(&rec.block).into_owned();
                kinds.push((rec.header("WARC-Type").unwrap_or("").to_string(), block));
            }
        })
        .unwrap();
    }
    let kind = |k: &str| kinds.iter().find(|(t, _)| t == k).map(|(_, b)| b.as_str());
    let served = kind("response").is_some_and(|b| b.contains("<div id=\"root\"></div>"));
    assert!(served, "{kinds:?}");
    let dom = kind("conversion").is_some_and(|b| b.contains("(csr-body five)"));
    assert!(dom, "{kinds:?}");
    assert!(kind("metadata").is_some(), "{kinds:?}");
    // `reextract` reads the rendered DOM, not the empty shell.
    let re = ws
        .command(&["reextract", "--data", "data", "--all"])
        .output()
        .unwrap();
    assert!(re.status.success(), "reextract: {}", stderr(&re));
    let again: Vec<serde_json::Value> = records(&ws, "data")
        .into_iter()
        .filter(|r| r["url"] == "http://app.test/csr/1")
        .collect();
    assert_eq!(again.len(), 2, "{again:?}");
    for r in &again {
        assert!(r.get("withdrawn").is_none(), "{r}");
        assert_eq!(r["rendered"], true, "{r}");
        assert!(
            r["text"].as_str().unwrap().contains("(csr-body five)"),
            "{r}"
        );
    }
    web.clear_log();

    // 3. With the probe's verdicts: the lazy story is rendered, scrolled and stored whole.
    let out = crawl(&lazy_ws, "data", &[]);
    assert_polite(&web, "crawl with verdicts");
    let recs = records(&lazy_ws, "data");
    let lazy = record(&recs, "http://lazy.test/story/3").unwrap_or_else(|| {
        let _ = std::fs::write("/tmp/render_lazy_fail.log", stderr(&out));
        panic!("lazy story not stored: {}", stderr(&out))
    });
    assert_eq!(lazy["rendered"], true, "{lazy}");
    let text = lazy["text"].as_str().unwrap();
    assert!(
        text.contains("Chip makers told investors") && text.contains("(lazy-body five)"),
        "{text}"
    );
    web.clear_log();

    // 4. The request budget binds the browser's requests too.
    let ws2 = Workspace::new(
        &web,
        "  - {host: app.test, seeds: [http://app.test/sitemap.xml]}",
        &crawl_cfg,
    );
    crawl(&ws2, "data", &["--max-pages", "5"]);
    let log = web.log();
    assert!(
        log.len() <= 5,
        "over budget: {:?}",
        log.iter().map(|r| r.target()).collect::<Vec<_>>()
    );
    assert!(
        log.iter().any(|r| r.path == "/static/app.js"),
        "the browser asked for nothing"
    );
    assert_polite(&web, "crawl on a budget");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}

/// The renderer alone: a page whose script never ends is cut at the time
/// limit without harming the next page, and a browser that died is started
/// again.
#[test]
fn a_hung_page_times_out_and_a_dead_browser_is_started_again() {
    if !Tool::Browser.need(
        "the rendering test",
        || on_path(&chromium()),
        "apt-get install -y chromium, as .ci/run does",
    ) {
        return;
    }
    use scraper::render::{Doc, Options, RenderError, Renderer};
    let web = Web::start(route);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let crawl = scraper::config::Crawl {
            min_host_gap: scraper::config::Span(Duration::from_millis(20)),
            ..Default::default()
        };
        let net = scraper::net::Net::new(&crawl, Some(&web.proxy_url())).unwrap();
        let renderer = Renderer::new(Options {
            browser: chromium(),
            tabs: 2,
            page_timeout: Duration::from_secs(3),
            max_memory: 1 << 30,
        })
        .unwrap();
        let doc = |path: &str, html: String| Doc {
            url: scraper::url::parse(&format!("http://app.test{path}")).unwrap(),
            body: std::sync::Arc::new(html.into_bytes()),
            content_type: Some("text/html".into()),
        };
        let hung = doc(
            "/hung",
            format!(
                "{}<body><p>x</p><script>while (true) {{}}</script></body></html>",
                head("Hung")
            ),
        );
        let t = Instant::now();
        let r = renderer.render(&net, hung).await;
        assert!(matches!(r, Err(RenderError::Timeout(_))), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
        let csr = renderer
            .render(&net, doc("/csr/1", csr_page()))
            .await
            .unwrap();
        assert!(csr.html.contains("(csr-body two)"), "{}", csr.html);
        assert_eq!(csr.requests.answered, 2, "{:?}", csr.requests);
        assert_eq!(csr.requests.refused_robots, 1, "{:?}", csr.requests);
        assert_eq!(csr.requests.refused_host, 1, "{:?}", csr.requests);
        let pid = renderer.browser_pid().await.expect("a running browser");
        // SAFETY: kill has no memory-safety preconditions; the pid is our child.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let again = renderer
            .render(&net, doc("/json/2", json_page()))
            .await
            .unwrap();
        assert!(again.html.contains("(json-body one)"));
        let totals = renderer.totals();
        assert_eq!(totals.launches, 2, "{totals:?}");
        assert_eq!((totals.rendered, totals.failed), (2, 1), "{totals:?}");
        renderer.shutdown().await;
    });
}
