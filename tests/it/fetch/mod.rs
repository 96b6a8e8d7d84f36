//! Fetching (`net`): requests, robots.txt and politeness against the
//! local fixture web (reached through it as an HTTP proxy, with made-up hosts).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use scraper::config::{Crawl, Span};
use scraper::net::{FetchError, Net, Request, RobotsOutcome};
use scraper::url::{Url, parse};

use crate::support::web::{Reply, Web};

mod guard;
mod http;
mod web_bot_auth;

/// Small gaps and short timeouts so every test runs in a few seconds.
fn cfg() -> Crawl {
    Crawl {
        min_host_gap: Span::millis(0),
        connect_timeout: Span::secs(2),
        read_timeout: Span::secs(2),
        request_timeout: Span::secs(5),
        ..Crawl::default()
    }
}

fn net(web: &Web, cfg: &Crawl) -> Net {
    Net::new(cfg, Some(&web.proxy_url())).expect("client")
}

fn u(s: &str) -> Url {
    parse(s).expect("test URL")
}

fn any(_: &Url) -> bool {
    true
}

const ALLOW_ALL: &str = "User-agent: *\nAllow: /\n";

#[tokio::test]
async fn fetches_a_page_with_headers() {
    let web = Web::routes()
        .at("news.test", "/robots.txt", Reply::text(ALLOW_ALL))
        .at(
            "news.test",
            "/a",
            Reply::html("<p>hello</p>")
                .header("etag", "\"v1\"")
                .header("x-robots-tag", "noarchive")
                .header("tdm-reservation", "1"),
        )
        .start();
    let net = net(&web, &cfg());
    let r = net
        .fetch(&u("http://news.test/a"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"<p>hello</p>");
    assert_eq!(r.content_type.as_deref(), Some("text/html"));
    assert_eq!(r.charset.as_deref(), Some("utf-8"));
    assert_eq!(r.etag.as_deref(), Some("\"v1\""));
    assert_eq!(r.x_robots_tag, vec!["noarchive".to_string()]);
    assert_eq!(r.header("TDM-Reservation"), Some("1"));
    assert_eq!(r.wire_bytes, 12);
    let ua = web.log()[1].header("user-agent").unwrap().to_string();
    assert!(ua.starts_with("scraper/"), "{ua}");
    let ae = web.log()[1].header("accept-encoding").unwrap().to_string();
    assert_eq!(ae, "gzip, deflate, br, zstd");
    assert_eq!(net.requests(), 2);
}

#[tokio::test]
async fn status_codes_are_data() {
    let web = Web::routes()
        .at("news.test", "/robots.txt", Reply::text(ALLOW_ALL))
        .at(
            "news.test",
            "/boom",
            Reply::status(500)
                .header("content-type", "text/html")
                .body("oops"),
        )
        .start();
    let net = net(&web, &cfg());
    let r = net
        .fetch(&u("http://news.test/missing"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(r.status, 404);
    let r = net
        .fetch(&u("http://news.test/boom"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!((r.status, r.body.as_slice()), (500, &b"oops"[..]));
}

#[tokio::test]
async fn robots_fetched_once_per_host_under_concurrency() {
    let web = Web::routes()
        .at(
            "news.test",
            "/robots.txt",
            Reply::text(ALLOW_ALL).delay(Duration::from_millis(100)),
        )
        .fallback(|_| Reply::html("page"))
        .start();
    let mut c = cfg();
    c.per_host_concurrency = 8;
    let net = net(&web, &c);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let net = net.clone();
        tasks.push(tokio::spawn(async move {
            net.fetch(
                &u(&format!("http://news.test/p{i}")),
                &Request::html(),
                &any,
            )
            .await
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap().status, 200);
    }
    assert_eq!(web.count("news.test", "/robots.txt"), 1);
    assert_eq!(net.requests(), 9);
}

#[tokio::test]
async fn robots_access_results() {
    let web = Web::routes()
        .at("gone.test", "/robots.txt", Reply::status(404))
        .at("forbidden.test", "/robots.txt", Reply::status(403))
        .at("down.test", "/robots.txt", Reply::status(503))
        .at("err.test", "/robots.txt", Reply::status(500))
        .at("slow.test", "/robots.txt", Reply::hang())
        .at(
            "moved.test",
            "/robots.txt",
            Reply::redirect(301, "http://cdn.test/r.txt"),
        )
        .at(
            "cdn.test",
            "/r.txt",
            Reply::text("User-agent: *\nDisallow: /x\n"),
        )
        .fallback(|_| Reply::html("page"))
        .start();
    let mut c = cfg();
    c.request_timeout = Span::millis(500);
    c.read_timeout = Span::millis(500);
    let net = net(&web, &c);
    for host in ["gone.test", "forbidden.test"] {
        let r = net.robots(&u(&format!("http://{host}/"))).await;
        assert!(
            matches!(r.outcome, RobotsOutcome::AllowAll(_)),
            "{host}: {:?}",
            r.outcome
        );
        let page = net
            .fetch(&u(&format!("http://{host}/a")), &Request::html(), &any)
            .await;
        assert_eq!(page.unwrap().status, 200, "{host}");
    }
    for host in ["down.test", "err.test", "slow.test"] {
        let r = net.robots(&u(&format!("http://{host}/"))).await;
        assert!(
            matches!(r.outcome, RobotsOutcome::DisallowAll(_)),
            "{host}: {:?}",
            r.outcome
        );
        let page = net
            .fetch(&u(&format!("http://{host}/a")), &Request::html(), &any)
            .await;
        // 5xx: a robots refusal; a timeout: refused under its own class.
        assert!(
            matches!(
                page,
                Err(FetchError::RobotsDisallowed(_) | FetchError::Timeout)
            ),
            "{host}: {page:?}"
        );
        assert_eq!(
            web.count(host, "/a"),
            0,
            "{host} page must never be requested"
        );
    }
    let r = net.robots(&u("http://slow.test/")).await;
    assert_eq!(r.outcome, RobotsOutcome::DisallowAll("timeout".into()));
    let r = net.robots(&u("http://moved.test/")).await;
    assert_eq!(r.outcome, RobotsOutcome::Parsed(200));
    assert!(!r.allowed(&u("http://moved.test/x")));
    assert!(r.allowed(&u("http://moved.test/y")));
}

#[tokio::test]
async fn robots_rules_and_disallowed_paths_never_requested() {
    let txt = "User-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\n\n\
               User-agent: scraper\nDisallow: /only-us\nAllow: /\n\
               Sitemap: http://news.test/sitemap.xml\n";
    let web = Web::routes()
        .at("news.test", "/robots.txt", Reply::text(txt))
        .fallback(|_| Reply::html("page"))
        .start();
    let net = net(&web, &cfg());
    let r = net.robots(&u("http://news.test/")).await;
    assert_eq!(r.sitemaps, vec![u("http://news.test/sitemap.xml")]);
    // Our own group applies, not `*`.
    for (path, ok) in [("/private/x", true), ("/only-us", false), ("/a.pdf", true)] {
        let res = net
            .fetch(
                &u(&format!("http://news.test{path}")),
                &Request::html(),
                &any,
            )
            .await;
        assert_eq!(res.is_ok(), ok, "{path}");
    }
    assert_eq!(web.count("news.test", "/only-us"), 0);

    // With a product token that has no group, `*` applies: longest match, `*`, `$`.
    let mut c = cfg();
    c.user_agent = "otherbot/1.0".into();
    let other = Net::new(&c, Some(&web.proxy_url())).unwrap();
    for (path, ok) in [
        ("/private/x", false),
        ("/private/open/1", true),
        ("/doc.pdf", false),
        ("/doc.pdf?page=2", true),
        ("/only-us", true),
    ] {
        let res = other
            .fetch(
                &u(&format!("http://news.test{path}")),
                &Request::html(),
                &any,
            )
            .await;
        assert_eq!(res.is_ok(), ok, "{path}: {res:?}");
    }
    assert_eq!(
        web.count("news.test", "/private/x"),
        1,
        "only the first Net may ask"
    );
    assert_eq!(web.count_exact("news.test", "/doc.pdf"), 0);
}

#[tokio::test]
async fn robots_over_the_size_cap_is_cut_at_a_line() {
    let mut txt = String::from("User-agent: *\nDisallow: /early\n");
    while txt.len() < 40_000 {
        txt.push_str("# padding padding padding padding padding padding\n");
    }
    txt.push_str("Disallow: /late\n");
    let web = Web::routes()
        .at("big.test", "/robots.txt", Reply::text(txt.clone()))
        .at("gzbig.test", "/robots.txt", Reply::text(txt).gzip())
        .start();
    let mut c = cfg();
    c.max_robots_bytes = 30_000;
    let net = net(&web, &c);
    for host in ["big.test", "gzbig.test"] {
        let r = net.robots(&u(&format!("http://{host}/"))).await;
        assert_eq!(r.outcome, RobotsOutcome::Parsed(200), "{host}");
        assert!(r.bytes <= 30_000, "{host}: {}", r.bytes);
        assert!(!r.allowed(&u(&format!("http://{host}/early"))), "{host}");
        assert!(r.allowed(&u(&format!("http://{host}/late"))), "{host}");
    }
}

#[tokio::test]
async fn crawl_delay_raises_the_gap() {
    let web = Web::routes()
        .at(
            "slow.test",
            "/robots.txt",
            Reply::text("User-agent: *\nCrawl-delay: 0.3\n"),
        )
        .fallback(|_| Reply::html("page"))
        .start();
    let mut c = cfg();
    c.min_host_gap = Span::millis(20);
    let net = net(&web, &c);
    for i in 0..3 {
        net.fetch(&u(&format!("http://slow.test/{i}")), &Request::html(), &any)
            .await
            .unwrap();
    }
    assert_eq!(net.gap("slow.test"), Duration::from_millis(300));
    let wait = net.ready_in("slow.test");
    assert!(
        wait > Duration::from_millis(200) && wait <= Duration::from_millis(300),
        "{wait:?}"
    );
    let gap = web.min_gap("slow.test").unwrap();
    assert!(gap >= Duration::from_millis(300), "{gap:?}");
}

#[tokio::test]
async fn gap_held_between_requests_as_seen_by_the_server() {
    let web = Web::routes()
        .at("news.test", "/robots.txt", Reply::text(ALLOW_ALL))
        .fallback(|_| Reply::html("page"))
        .start();
    let mut c = cfg();
    // The server's clock judges, with no tolerance.
    c.min_host_gap = Span::millis(60);
    c.concurrency = 8;
    let net = net(&web, &c);
    let mut tasks = Vec::new();
    for i in 0..6 {
        let n = net.clone();
        tasks.push(tokio::spawn(async move {
            n.fetch(&u(&format!("http://news.test/{i}")), &Request::html(), &any)
                .await
        }));
        // Another host is not held up by news.test's gap.
        let n = net.clone();
        tasks.push(tokio::spawn(async move {
            n.fetch(
                &u(&format!("http://other.test/{i}")),
                &Request::html(),
                &any,
            )
            .await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(web.count_host("news.test"), 7);
    assert_eq!(
        web.gap_violations("news.test", Duration::from_millis(60)),
        0,
        "{:?}",
        web.min_gap("news.test")
    );
}

#[tokio::test]
async fn per_host_concurrency_is_held() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let web = Web::routes()
        .at("news.test", "/robots.txt", Reply::text(ALLOW_ALL))
        .fallback(|_| Reply::html("slow page").delay(Duration::from_millis(150)))
        .start();
    let mut c = cfg();
    c.per_host_concurrency = 2;
    let net = net(&web, &c);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..6 {
        let net = net.clone();
        let in_flight = in_flight.clone();
        tasks.push(tokio::spawn(async move {
            in_flight.fetch_add(1, Ordering::SeqCst);
            let r = net
                .fetch(&u(&format!("http://news.test/{i}")), &Request::html(), &any)
                .await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            r
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    // 6 pages of 150 ms, two at a time: at least three rounds.
    assert!(
        started.elapsed() >= Duration::from_millis(440),
        "{:?}",
        started.elapsed()
    );
    let times: Vec<Instant> = web
        .requests_to("news.test")
        .iter()
        .skip(1)
        .map(|r| r.at)
        .collect();
    // No three requests arrived within one page's service time.
    for w in times.windows(3) {
        assert!(
            w[2] - w[0] >= Duration::from_millis(140),
            "{:?}",
            w[2] - w[0]
        );
    }
}
