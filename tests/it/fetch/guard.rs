//! Not a weapon: private and local addresses are refused unless allowed.

use scraper::net::{FetchError, Net, Request, RobotsOutcome};

use super::{ALLOW_ALL, any, cfg, u};
use crate::support::web::{Reply, Web};

#[tokio::test]
async fn private_addresses_refused_unless_allowed() {
    let web = Web::routes()
        .fallback(|req| match req.path.as_str() {
            "/robots.txt" => Reply::text(ALLOW_ALL),
            "/to-metadata" => Reply::redirect(302, "http://169.254.169.254/latest/meta-data/"),
            _ => Reply::html(format!("host {}", req.host)),
        })
        .start();
    let port = web.addr().port();
    // No proxy: the crawler talks to 127.0.0.1 directly.
    let net = Net::new(&cfg(), None).unwrap();
    for url in [
        format!("http://127.0.0.1:{port}/a"),
        format!("http://localhost:{port}/a"),
        "http://[::1]/a".to_string(),
    ] {
        let r = net.fetch(&u(&url), &Request::html(), &any).await;
        assert!(
            matches!(r, Err(FetchError::PrivateAddress(_))),
            "{url}: {r:?}"
        );
    }
    assert!(web.log().is_empty());

    net.set_allow_private(true);
    let r = net
        .fetch(
            &u(&format!("http://localhost:{port}/a")),
            &Request::html(),
            &any,
        )
        .await
        .unwrap();
    assert_eq!(r.body, format!("host localhost:{port}").as_bytes());

    // Through a proxy the host name is what is judged, also after a redirect.
    let proxied = Net::new(&cfg(), Some(&web.proxy_url())).unwrap();
    let r = proxied
        .fetch(&u("http://news.test/to-metadata"), &Request::html(), &any)
        .await;
    assert_eq!(r.unwrap_err().class().as_str(), "private_address");
    assert_eq!(web.count_host("169.254.169.254"), 0);

    // A proxy named `localhost` is still reachable: the guard judges targets, not the proxy.
    let named = Net::new(&cfg(), Some(&format!("http://localhost:{port}"))).unwrap();
    let r = named
        .fetch(&u("http://news.test/a"), &Request::html(), &any)
        .await
        .unwrap();
    assert_eq!(r.body, b"host news.test");
}

#[tokio::test]
async fn tls_failure_is_classified() {
    // Speaking TLS to a plain HTTP server fails the handshake.
    let web = Web::routes().start();
    let net = Net::new(&cfg(), None).unwrap();
    net.set_allow_private(true);
    let url = u(&format!("https://localhost:{}/a", web.addr().port()));
    let robots = net.robots(&url).await;
    assert_eq!(robots.outcome, RobotsOutcome::DisallowAll("tls".into()));
    let r = net.fetch(&url, &Request::html(), &any).await;
    // The refusal carries the failure that made robots.txt unreachable.
    assert!(matches!(r, Err(FetchError::Tls(_))), "{r:?}");
}

#[tokio::test]
async fn unreachable_port_is_a_connect_failure() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let net = Net::new(&cfg(), None).unwrap();
    net.set_allow_private(true);
    let robots = net.robots(&u(&format!("http://localhost:{port}/"))).await;
    assert_eq!(robots.outcome, RobotsOutcome::DisallowAll("connect".into()));
}

#[tokio::test]
async fn unresolvable_name_is_a_dns_failure() {
    let net = Net::new(&cfg(), None).unwrap();
    let robots = net.robots(&u("http://no-such-host.invalid/")).await;
    // A machine whose resolver cannot be reached times out instead.
    let outcome = robots.outcome.clone();
    assert!(
        outcome == RobotsOutcome::DisallowAll("dns".into())
            || outcome == RobotsOutcome::DisallowAll("timeout".into()),
        "{outcome:?}"
    );
}
