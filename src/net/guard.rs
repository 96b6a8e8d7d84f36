//! Not a weapon: refuse hosts that are, or resolve to, loopback, private,
//! link-local (cloud metadata such as 169.254.169.254) or otherwise
//! non-public addresses, unless private addresses are allowed.
//!
//! Two layers: [`host_refusal`] checks the URL's host itself (IP literals and
//! `localhost` names) before every hop, which is all that can be checked when a
//! proxy resolves names for us; [`GuardedResolver`] filters what DNS returns
//! for everything else, so a public-looking name that resolves to 10.0.0.1 is
//! refused too. The proxy's own host is exempt from the resolver filter.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::url::Url;

/// Is `ip` a public unicast address that a crawler may contact?
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let seg = ip.segments();
    // NAT64 (64:ff9b::/96) embeds an IPv4 address.
    if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2..6].iter().all(|s| *s == 0) {
        let [a, b] = seg[6].to_be_bytes();
        let [c, d] = seg[7].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (seg[0] & 0xfe00) == 0xfc00 // unique local
        || (seg[0] & 0xffc0) == 0xfe80 // link-local
        || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
        || seg[0] == 0) // other reserved, including IPv4-compatible
}

/// Why `url`'s host may not be contacted, judged from the URL alone.
pub(crate) fn host_refusal(url: &Url) -> Option<String> {
    match url.host()? {
        url::Host::Ipv4(ip) if !is_public_v4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(ip) if !is_public_v6(ip) => Some(ip.to_string()),
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            (d == "localhost" || d.ends_with(".localhost")).then_some(d)
        }
        _ => None,
    }
}

/// The error a refused name resolves to (found again by downcasting).
#[derive(Debug)]
pub(crate) struct PrivateAddressError(pub String);

impl std::fmt::Display for PrivateAddressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} resolves only to private or local addresses", self.0)
    }
}

impl std::error::Error for PrivateAddressError {}

/// System DNS (getaddrinfo) with non-public addresses removed.
pub(crate) struct GuardedResolver {
    pub(crate) allow_private: Arc<AtomicBool>,
    /// Proxy host names: always resolved as they are.
    pub(crate) exempt: HashSet<String>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let filter = !self.allow_private.load(Ordering::SeqCst) && !self.exempt.contains(&host);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = if filter {
                addrs.into_iter().filter(|a| is_public(a.ip())).collect()
            } else {
                addrs
            };
            if kept.is_empty() {
                tracing::debug!(host, "refused: resolves only to private addresses");
                return Err(Box::new(PrivateAddressError(host)) as _);
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Host names of the proxies in use (`--proxy` and the environment).
pub(crate) fn proxy_hosts(proxy: Option<&str>) -> HashSet<String> {
    let vars = [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ];
    let from_env = vars.iter().filter_map(|v| std::env::var(v).ok());
    proxy
        .map(str::to_string)
        .into_iter()
        .chain(from_env)
        .filter_map(|p| {
            let p = if p.contains("://") {
                p
            } else {
                format!("http://{p}")
            };
            Url::parse(&p).ok()?.host_str().map(str::to_ascii_lowercase)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_table() {
        let table = [
            ("8.8.8.8", true),
            ("93.184.216.34", true),
            ("127.0.0.1", false),
            ("10.1.2.3", false),
            ("172.16.0.1", false),
            ("192.168.1.1", false),
            ("169.254.169.254", false),
            ("100.64.0.1", false),
            ("0.0.0.0", false),
            ("255.255.255.255", false),
            ("::1", false),
            ("fe80::1", false),
            ("fd00::1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:8.8.8.8", true),
            ("64:ff9b::a9fe:a9fe", false),
            ("2606:4700::1111", true),
        ];
        for (ip, want) in table {
            assert_eq!(is_public(ip.parse().unwrap()), want, "{ip}");
        }
    }

    #[test]
    fn url_hosts() {
        let refused = |s: &str| host_refusal(&Url::parse(s).unwrap()).is_some();
        assert!(refused("http://127.0.0.1/"));
        assert!(refused("http://[::1]:8080/"));
        assert!(refused("http://localhost/"));
        assert!(refused("http://api.localhost./"));
        assert!(refused("http://169.254.169.254/latest/meta-data/"));
        assert!(!refused("http://news.test/"));
        assert!(!refused("https://8.8.8.8/"));
    }

    #[tokio::test]
    async fn resolver_filters_private_answers() {
        use reqwest::dns::Resolve as _;
        let allow = Arc::new(AtomicBool::new(false));
        let r = GuardedResolver {
            allow_private: allow.clone(),
            exempt: HashSet::new(),
        };
        let err = r.resolve("localhost".parse().unwrap()).await.err().unwrap();
        assert!(err.downcast_ref::<PrivateAddressError>().is_some());
        allow.store(true, Ordering::SeqCst);
        let addrs: Vec<_> = r
            .resolve("localhost".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()));
        let exempt = GuardedResolver {
            allow_private: Arc::new(AtomicBool::new(false)),
            exempt: ["localhost".to_string()].into(),
        };
        assert!(exempt.resolve("localhost".parse().unwrap()).await.is_ok());
    }

    #[test]
    fn proxy_hosts_include_the_flag() {
        assert!(proxy_hosts(Some("http://Proxy.Local:3128")).contains("proxy.local"));
    }
}
