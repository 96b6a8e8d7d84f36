//! Fetch tests: redirects, caps, content types, timeouts, faults, conditional
//! requests, Retry-After, budget and resting.

use std::time::{Duration, Instant};

use scraper::config::Span;
use scraper::net::{Accept, FetchError, Request};
use scraper::url::Url;

use super::{ALLOW_ALL, any, cfg, net, u};
use crate::support::web::{Reply, Web};

fn site() -> crate::support::web::Routes {
    Web::routes().at("news.test", "/robots.txt", Reply::text(ALLOW_ALL))
}

#[tokio::test]
async fn redirect_chain_is_recorded() {
    let web = site()
        .at("news.test", "/r1", Reply::redirect(301, "/r2"))
        .at(
            "news.test",
            "/r2",
            Reply::redirect(302, "http://www.news.test/final?utm_source=x"),
        )
        .at("www.news.test", "/robots.txt", Reply::text(ALLOW_ALL))
        .at("www.news.test", "/final", Reply::html("done"))
        .start();
    let mut c = cfg();
    c.min_host_gap = Span::millis(80);
    let net = net(&web, &c);
    let r = net
        .fetch(&u("http://news.test/r1"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.url.as_str(), "http://www.news.test/final");
    let chain: Vec<&str> = r.redirects.iter().map(Url::as_str).collect();
    assert_eq!(chain, ["http://news.test/r1", "http://news.test/r2"]);
    assert_eq!(r.body, b"done");
    // The new host's robots.txt was asked before its page.
    assert_eq!(web.count("www.news.test", "/robots.txt"), 1);
    // Every hop waited for its own host's turn.
    assert_eq!(web.count_host("news.test"), 3);
    assert_eq!(
        web.gap_violations("news.test", Duration::from_millis(80)),
        0
    );
    assert_eq!(
        web.gap_violations("www.news.test", Duration::from_millis(80)),
        0
    );
    assert!(r.gap_wait >= Duration::from_millis(150), "{:?}", r.gap_wait);
}

#[tokio::test]
async fn redirect_refusals() {
    let web = Web::routes()
        .at(
            "news.test",
            "/robots.txt",
            Reply::text("User-agent: *\nDisallow: /private\n"),
        )
        .at(
            "news.test",
            "/to-private",
            Reply::redirect(301, "/private/x"),
        )
        .at("news.test", "/loop-a", Reply::redirect(302, "/loop-b"))
        .at("news.test", "/loop-b", Reply::redirect(302, "/loop-a"))
        .at(
            "news.test",
            "/away",
            Reply::redirect(302, "http://elsewhere.test/x"),
        )
        .fallback(|req| {
            // /hop/N redirects to /hop/N+1.
            match req
                .path
                .strip_prefix("/hop/")
                .and_then(|n| n.parse::<u32>().ok())
            {
                Some(n) => Reply::redirect(301, &format!("/hop/{}", n + 1)),
                None => Reply::html("page"),
            }
        })
        .start();
    let net = net(&web, &cfg());
    let r = net
        .fetch(&u("http://news.test/to-private"), &Request::html(), &any)
        .await;
    assert!(
        matches!(r, Err(FetchError::RobotsDisallowed(ref x)) if x.path() == "/private/x"),
        "{r:?}"
    );
    assert_eq!(web.count("news.test", "/private/x"), 0);

    let r = net
        .fetch(&u("http://news.test/loop-a"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::RedirectLoop)), "{r:?}");
    assert_eq!(web.count("news.test", "/loop-a"), 1);

    let before = net.requests();
    let r = net
        .fetch(&u("http://news.test/hop/0"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::TooManyRedirects)), "{r:?}");
    // max_redirects = 5: the start and five hops were asked, no more.
    assert_eq!(net.requests() - before, 6);
    assert_eq!(web.count("news.test", "/hop/6"), 0);

    let only_news = |url: &Url| url.host_str() == Some("news.test");
    let r = net
        .fetch(&u("http://news.test/away"), &Request::html(), &only_news)
        .await;
    assert!(matches!(r, Err(FetchError::OutOfScope(_))), "{r:?}");
    assert_eq!(web.count_host("elsewhere.test"), 0);
    assert_eq!(r.unwrap_err().class().as_str(), "out_of_scope");
}

#[tokio::test]
async fn body_caps_raw_and_decoded() {
    let web = site()
        .at("news.test", "/big", Reply::html(vec![b'x'; 300_000]))
        .at("news.test", "/endless", Reply::endless("text/html"))
        .at(
            "news.test",
            "/bomb",
            Reply::gzip_bomb("text/html", 64 << 20),
        )
        .at(
            "news.test",
            "/small-gz",
            Reply::html("hello ".repeat(1000)).gzip(),
        )
        .start();
    let mut c = cfg();
    c.max_raw_bytes = 100_000;
    c.max_body_bytes = 1 << 20;
    let net = net(&web, &c);
    for path in ["/big", "/endless", "/bomb"] {
        let started = Instant::now();
        let r = net
            .fetch(
                &u(&format!("http://news.test{path}")),
                &Request::html(),
                &any,
            )
            .await;
        assert!(matches!(r, Err(FetchError::TooLarge)), "{path}: {r:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{path}");
    }
    let r = net
        .fetch(&u("http://news.test/small-gz"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(r.body.len(), 6000);
    assert!(r.wire_bytes < 200, "{}", r.wire_bytes);
}

/// Several large bodies at once under a budget of 1.5 body caps: each holds
/// part of the budget while it grows, yet they all arrive (the finisher
/// token lets one finish at a time) instead of waiting on each other until
/// the read deadline.
#[tokio::test]
async fn large_bodies_share_a_small_budget_without_stalling() {
    const HOSTS: usize = 6;
    const PAGES: usize = 2;
    const SIZE: usize = 448 << 10;
    let mut routes = Web::routes();
    for h in 0..HOSTS {
        let host = format!("big{h}.test");
        routes = routes.at(&host, "/robots.txt", Reply::text(ALLOW_ALL));
        for p in 0..PAGES {
            // Chunks of 16 KiB, dripped at 1.5 MB/s: about 0.3 s a body.
            let reply = Reply::html("")
                .repeat(vec![b'x'; 16 << 10], Some((SIZE / (16 << 10)) as u64))
                .drip(1_500_000);
            routes = routes.at(&host, &format!("/p{p}"), reply);
        }
    }
    let web = routes.start();
    let mut c = cfg();
    c.min_host_gap = Span::millis(20);
    c.max_body_bytes = 512 << 10;
    c.max_body_bytes_in_flight = 768 << 10;
    c.read_timeout = Span::secs(2);
    c.request_timeout = Span::secs(20);
    let net = std::sync::Arc::new(net(&web, &c));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for h in 0..HOSTS {
        for p in 0..PAGES {
            let net = net.clone();
            tasks.push(tokio::spawn(async move {
                let url = u(&format!("http://big{h}.test/p{p}"));
                // The response (and its share of the budget) is dropped here,
                // as the crawler drops it after parsing.
                let r = net.fetch(&url, &Request::html(), &any).await;
                (url, r.map(|r| r.body.len()))
            }));
        }
    }
    for t in tasks {
        let (url, r) = t.await.unwrap();
        assert_eq!(r.ok(), Some(SIZE), "{url}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    for h in 0..HOSTS {
        let host = format!("big{h}.test");
        assert_eq!(web.gap_violations(&host, Duration::from_millis(20)), 0);
    }
}

#[tokio::test]
async fn unwanted_types_skipped_without_reading_the_body() {
    let web = site()
        .at("news.test", "/file.pdf", Reply::endless("application/pdf"))
        .at(
            "news.test",
            "/img",
            Reply::bytes("image/png", vec![1u8; 1000]),
        )
        .at(
            "news.test",
            "/feed",
            Reply::bytes("application/rss+xml", "<rss/>"),
        )
        .at("news.test", "/data", Reply::bytes("application/json", "{}"))
        .start();
    let net = net(&web, &cfg());
    let started = Instant::now();
    let r = net
        .fetch(&u("http://news.test/file.pdf"), &Request::html(), &any)
        .await;
    assert!(
        matches!(r, Err(FetchError::NotHtml(ref ct)) if ct == "application/pdf"),
        "{r:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    let r = net
        .fetch(&u("http://news.test/img"), &Request::html(), &any)
        .await;
    assert_eq!(r.unwrap_err().class().as_str(), "not_html");
    let any_type = Request {
        accept: Accept::Any,
        ..Request::default()
    };
    let r = net
        .fetch(&u("http://news.test/img"), &any_type, &any)
        .await
        .unwrap();
    assert_eq!(r.body.len(), 1000);
    let r = net
        .fetch(&u("http://news.test/feed"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(r.body, b"<rss/>");
    assert!(
        net.fetch(&u("http://news.test/data"), &Request::html(), &any)
            .await
            .is_err()
    );
    let r = net
        .fetch(&u("http://news.test/data"), &Request::listing(), &any)
        .await
        .unwrap();
    assert_eq!(r.body, b"{}");
}

#[tokio::test]
async fn read_timeout_on_a_slow_drip_and_total_timeout_on_a_hang() {
    let web = site()
        .at("news.test", "/drip", Reply::html(vec![b'x'; 100]).drip(1))
        .at(
            "news.test",
            "/steady",
            Reply::html(vec![b'x'; 400]).drip(100),
        )
        .at("news.test", "/hang", Reply::hang())
        .at(
            "news.test",
            "/late",
            Reply::html("x").delay(Duration::from_secs(5)),
        )
        .start();
    let mut c = cfg();
    c.read_timeout = Span::millis(300);
    c.request_timeout = Span::millis(1500);
    let net = net(&web, &c);
    // Each read waits a second: the per-read timeout fires.
    let t = Instant::now();
    let r = net
        .fetch(&u("http://news.test/drip"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::Timeout)), "{r:?}");
    assert!(
        t.elapsed() < Duration::from_millis(1200),
        "{:?}",
        t.elapsed()
    );
    // Reads keep coming, but the whole body would take 4 s: the total timeout fires.
    let t = Instant::now();
    let r = net
        .fetch(&u("http://news.test/steady"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::Timeout)), "{r:?}");
    assert!(
        t.elapsed() >= Duration::from_millis(1400),
        "{:?}",
        t.elapsed()
    );
    assert!(
        t.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t.elapsed()
    );
    for path in ["/hang", "/late"] {
        let t = Instant::now();
        let r = net
            .fetch(
                &u(&format!("http://news.test{path}")),
                &Request::html(),
                &any,
            )
            .await;
        assert_eq!(r.unwrap_err().class().as_str(), "timeout", "{path}");
        assert!(
            t.elapsed() < Duration::from_millis(2000),
            "{path}: {:?}",
            t.elapsed()
        );
    }
}

#[tokio::test]
async fn reset_mid_body_is_a_body_error() {
    let web = site()
        .at(
            "news.test",
            "/reset",
            Reply::html(vec![b'x'; 50_000]).reset_after(1000),
        )
        .start();
    let net = net(&web, &cfg());
    let r = net
        .fetch(&u("http://news.test/reset"), &Request::html(), &any)
        .await;
    assert_eq!(r.unwrap_err().class().as_str(), "body");
}

#[tokio::test]
async fn conditional_request_gets_304() {
    let web = site()
        .fallback(|req| {
            if req.header("if-none-match") == Some("\"v1\"") {
                Reply::status(304).header("etag", "\"v1\"")
            } else {
                Reply::html("fresh").header("etag", "\"v1\"")
            }
        })
        .start();
    let net = net(&web, &cfg());
    let first = net
        .fetch(&u("http://news.test/a"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(first.etag.as_deref(), Some("\"v1\""));
    let req = Request {
        etag: first.etag.clone(),
        last_modified: Some("Sat, 28 Nov 2026 10:00:00 GMT".into()),
        ..Request::default()
    };
    let again = net
        .fetch(&u("http://news.test/a"), &req, &any)
        .await
        .unwrap();
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let logged = web.requests_to("news.test").pop().unwrap();
    assert_eq!(logged.header("if-none-match"), Some("\"v1\""));
    assert_eq!(
        logged.header("if-modified-since"),
        Some("Sat, 28 Nov 2026 10:00:00 GMT")
    );
}

#[tokio::test]
async fn retry_after_seconds_and_http_date_pause_the_host() {
    let web = Web::routes()
        .at("a.test", "/robots.txt", Reply::status(404))
        .at(
            "a.test",
            "/limited",
            Reply::status(429).header("retry-after", "1"),
        )
        .at("b.test", "/robots.txt", Reply::status(404))
        .at("c.test", "/robots.txt", Reply::status(404))
        .at(
            "c.test",
            "/limited",
            Reply::status(503).header("retry-after", "3600"),
        )
        .fallback(|req| {
            if req.path == "/limited" {
                let when = chrono::Utc::now() + chrono::Duration::seconds(2);
                let date = when.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
                Reply::status(503).header("retry-after", &date)
            } else {
                Reply::html("ok")
            }
        })
        .start();
    let net = net(&web, &cfg());
    for host in ["a.test", "b.test"] {
        let r = net
            .fetch(
                &u(&format!("http://{host}/limited")),
                &Request::html(),
                &any,
            )
            .await
            .unwrap();
        assert!(matches!(r.status, 429 | 503));
        let wait = r.retry_after.unwrap();
        assert!(wait <= Duration::from_secs(2), "{host}: {wait:?}");
        net.fetch(&u(&format!("http://{host}/next")), &Request::html(), &any)
            .await
            .unwrap();
        let log = web.requests_to(host);
        let gap = log[2].at - log[1].at;
        // The HTTP date has one-second resolution: at least a second either way.
        assert!(gap >= Duration::from_millis(950), "{host}: {gap:?}");
    }
    // Longer than max_retry_after: the host is rested for the run.
    let r = net
        .fetch(&u("http://c.test/limited"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(r.retry_after, Some(Duration::from_secs(3600)));
    let r = net
        .fetch(&u("http://c.test/next"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::Rested)), "{r:?}");
    assert_eq!(web.count("c.test", "/next"), 0);
}

#[tokio::test]
async fn budget_rest_and_repeated_failures() {
    let web = site()
        .at("bad.test", "/robots.txt", Reply::status(404))
        .fallback(|req| {
            if req.host == "bad.test" {
                Reply::html(vec![b'x'; 10_000]).reset_after(10)
            } else {
                Reply::html("ok")
            }
        })
        .start();
    let mut c = cfg();
    c.host_max_failures = 2;
    let net = net(&web, &c);
    for _ in 0..2 {
        let r = net
            .fetch(&u("http://bad.test/x"), &Request::html(), &any)
            .await;
        assert_eq!(r.unwrap_err().class().as_str(), "body");
    }
    let r = net
        .fetch(&u("http://bad.test/x"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::Rested)), "{r:?}");
    assert_eq!(web.count("bad.test", "/x"), 2);

    net.rest("news.test");
    let r = net
        .fetch(&u("http://news.test/a"), &Request::html(), &any)
        .await;
    assert_eq!(r.unwrap_err().class().as_str(), "rested");
    assert_eq!(web.count_host("news.test"), 0);

    let sent = net.requests();
    assert_eq!(sent, 3);
    net.set_budget(sent + 2);
    net.fetch(&u("http://ok.test/1"), &Request::html(), &any)
        .await
        .unwrap();
    let r = net
        .fetch(&u("http://ok.test/2"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::Budget)), "{r:?}");
    let r = net
        .fetch(&u("http://fresh.test/"), &Request::html(), &any)
        .await;
    assert!(matches!(r, Err(FetchError::Budget)), "{r:?}");
    assert_eq!(net.requests(), sent + 2);
    assert_eq!(web.log().len() as u64, sent + 2);
}

#[tokio::test]
async fn only_http_and_https() {
    let web = site().start();
    let net = net(&web, &cfg());
    let ftp = Url::parse("ftp://news.test/file").unwrap();
    let r = net.fetch(&ftp, &Request::html(), &any).await;
    assert_eq!(r.unwrap_err().class().as_str(), "scheme");
    assert!(web.log().is_empty());
}
