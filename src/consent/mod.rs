//! Publisher consent for AI use: what a site says about training AI on its
//! pages ([`Signals`]), and the one decision the crawl takes from it
//! ([`AiDecision`] under [`AiUsePolicy`]). Pure: callers hand in
//! the robots.txt body, response headers, page meta tags and the site's
//! `tdmrep.json`; nothing here does I/O.
//!
//! Signals read:
//! * robots.txt `Content-Signal:` lines (`search=yes, ai-train=no`), taken from
//!   the group for our product token, else the `*` group, as robots rules are;
//!   lines outside any group apply to everyone unless the group says otherwise.
//! * `noai` / `noimageai` in `X-Robots-Tag` (plain, or `agent: directive` for
//!   our token) and in `<meta name="robots">` / `<meta name="<our token>">`.
//! * TDMRep: the `tdm-reservation` / `tdm-policy` header and meta tag, and the
//!   rules of `/.well-known/tdmrep.json` (the most specific matching
//!   `location` wins).
//!
//! [`reserves_ai_training`] says whether any of them reserves AI training:
//! `ai-train=no`, `noai`, or a TDM reservation (`1`). `noimageai` is recorded
//! but reserves nothing we keep (we store text only), and neither do other
//! Content-Signal keys (`search`, `ai-input`). Where TDMRep sources disagree,
//! the reservation wins. Malformed values are ignored.
//!
//! * The IETF AI-preferences vocabulary ([`aipref`]): the `Content-Usage`
//!   header and robots.txt `Content-Usage` rules (`train-ai=n`). Each
//!   expression is one signal; it reserves AI training when `train-ai` or
//!   `train-genai` resolves to `n` within it (`bots=n` included). Expressions
//!   that are not valid Structured Fields are ignored and counted.
//!
//! Files: `signals.rs` (the signals of a page), `robots.rs` (robots.txt's
//! Content-Signal lines, groups and patterns, the product token),
//! `tdmrep.rs` (tdmrep.json rules), `aipref.rs` (Content-Usage),
//! `decision.rs` (the decision). Fetching is `net`'s; the assembly of a
//! fetched page's signals is `crawl::signals`.

pub mod aipref;
mod decision;
mod robots;
mod signals;
mod tdmrep;

pub use aipref::{Usage, UsageRules};
pub use decision::{AiDecision, AiUsePolicy};
#[cfg(test)]
use robots::location_matches;
pub use robots::{ContentSignal, agent_token, content_signals, parse_content_signal};
pub use signals::{Signal, Signals, Source, reserves_ai_training, x_robots_directives};
pub use tdmrep::{TdmRule, parse_tdmrep, tdmrep_match};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_token() {
        assert_eq!(agent_token("scraper/0.1 (+https://x.y)"), "scraper");
        assert_eq!(agent_token("My-Bot"), "my-bot");
        assert_eq!(agent_token(""), "*");
        // A robots.txt group line keeps `*`; the crawler's own token never has one.
        assert_eq!(robots::token("*"), "*");
        assert_eq!(robots::token("Other*Bot/2"), "other*bot");
        assert_eq!(agent_token("Other*Bot/2"), "other");
    }

    fn cs(key: &str, allowed: bool) -> ContentSignal {
        ContentSignal {
            key: key.into(),
            allowed,
        }
    }

    #[test]
    fn content_signal_values() {
        let table: [(&str, Vec<ContentSignal>); 7] = [
            (
                "search=yes, ai-train=no",
                vec![cs("search", true), cs("ai-train", false)],
            ),
            ("AI-Train = NO", vec![cs("ai-train", false)]),
            ("ai-train=maybe, search=yes", vec![cs("search", true)]),
            ("ai-train", vec![]),
            ("=no, bad key=no, ai-input=no", vec![cs("ai-input", false)]),
            ("ai-train=yes, ai-train=no", vec![cs("ai-train", false)]),
            ("", vec![]),
        ];
        for (value, want) in table {
            assert_eq!(parse_content_signal(value), want, "{value}");
        }
    }

    #[test]
    fn content_signal_groups() {
        let txt = b"Content-Signal: search=yes\n\
            User-agent: *\nContent-Signal: ai-train=no\nDisallow: /private\n\n\
            User-agent: otherbot\nUser-agent: Scraper\nContent-Signal: ai-train=yes # ok for us\nAllow: /\n\n\
            User-agent: thirdbot\nContent-signal: ai-input=no\nContent-Signal: ai-train=no\n";
        let table: [(&str, Vec<ContentSignal>); 4] = [
            // Our own group wins over `*`; the global line fills in.
            ("scraper", vec![cs("ai-train", true), cs("search", true)]),
            ("otherbot", vec![cs("ai-train", true), cs("search", true)]),
            (
                "thirdbot",
                vec![
                    cs("ai-input", false),
                    cs("ai-train", false),
                    cs("search", true),
                ],
            ),
            // Nobody named: the `*` group.
            ("newbot", vec![cs("ai-train", false), cs("search", true)]),
        ];
        for (agent, want) in table {
            assert_eq!(content_signals(txt, agent), want, "{agent}");
        }
        // No group for us and no `*`: only lines outside groups.
        let txt = b"User-agent: a\nContent-Signal: ai-train=no\n";
        assert_eq!(content_signals(txt, "scraper"), vec![]);
        // A group that names us without signals says nothing, even if `*` does.
        let txt = b"User-agent: *\nContent-Signal: ai-train=no\n\nUser-agent: scraper\nDisallow:\n";
        assert_eq!(content_signals(txt, "scraper"), vec![]);
        assert_eq!(content_signals(b"\xff\xfe garbage:::\n", "scraper"), vec![]);
    }

    #[test]
    fn x_robots_tag_forms() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let table: [(Vec<String>, Vec<&str>); 6] = [
            (v(&["noai, noimageai"]), vec!["noai", "noimageai"]),
            (v(&["NoAI"]), vec!["noai"]),
            (
                v(&["googlebot: noai", "scraper: noimageai"]),
                vec!["noimageai"],
            ),
            (
                v(&["noindex, otherbot: noai, nofollow, scraper: noai"]),
                vec!["noindex", "noai"],
            ),
            (
                v(&["unavailable_after: 25 Jun 2030 15:00:00 PST"]),
                vec!["unavailable_after: 25 jun 2030 15:00:00 pst"],
            ),
            (v(&["", " , ,"]), vec![]),
        ];
        for (values, want) in table {
            assert_eq!(x_robots_directives(&values, "scraper"), want, "{values:?}");
        }
        let mut s = Signals::default();
        s.x_robots_tag(&v(&["otherbot: noai", "noimageai"]), "scraper");
        assert_eq!(s.labels(), vec!["x-robots-tag:noimageai"]);
        assert!(!reserves_ai_training(&s));
        s.x_robots_tag(&v(&["Scraper: noai"]), "scraper");
        assert!(reserves_ai_training(&s));
    }

    #[test]
    fn meta_tags() {
        let m = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        };
        type Case = (Vec<(String, String)>, Vec<&'static str>, bool);
        let table: [Case; 7] = [
            (m(&[("robots", "noindex, noai")]), vec!["meta:noai"], true),
            (
                m(&[("scraper", "noimageai noai")]),
                vec!["meta:noimageai", "meta:noai"],
                true,
            ),
            (m(&[("otherbot", "noai")]), vec![], false),
            (m(&[("tdm-reservation", "1")]), vec!["tdm-meta:1"], true),
            (
                m(&[
                    ("tdm-policy", "https://p.test/policy.json"),
                    ("tdm-reservation", " 1 "),
                ]),
                vec!["tdm-meta:1;policy=https://p.test/policy.json"],
                true,
            ),
            (m(&[("tdm-reservation", "0")]), vec!["tdm-meta:0"], false),
            (m(&[("tdm-reservation", "yes please")]), vec![], false),
        ];
        for (metas, labels, reserved) in table {
            let mut s = Signals::default();
            s.meta(&metas, "scraper");
            assert_eq!(s.labels(), labels, "{metas:?}");
            assert_eq!(reserves_ai_training(&s), reserved, "{metas:?}");
        }
    }

    #[test]
    fn tdm_headers() {
        let table = [
            (Some("1"), None, vec!["tdm-header:1"], true),
            (
                Some("1"),
                Some("https://p.test/x"),
                vec!["tdm-header:1;policy=https://p.test/x"],
                true,
            ),
            (Some("0"), None, vec!["tdm-header:0"], false),
            (Some("true"), None, vec![], false),
            (None, Some("https://p.test/x"), vec![], false),
        ];
        for (res, pol, labels, reserved) in table {
            let mut s = Signals::default();
            s.tdm_headers(res, pol);
            assert_eq!(s.labels(), labels, "{res:?}");
            assert_eq!(reserves_ai_training(&s), reserved);
        }
    }

    #[test]
    fn tdmrep_file() {
        let body = br#"[
            {"location": "/", "tdm-reservation": 1, "tdm-policy": "https://p.test/policy.json"},
            {"location": "/open/*", "tdm-reservation": 0},
            {"location": "/open/*.pdf$", "tdm-reservation": "1"},
            {"location": "/odd", "tdm-reservation": 2},
            {"tdm-reservation": 1},
            "not an object"
        ]"#;
        let rules = parse_tdmrep(body).unwrap();
        assert_eq!(rules.len(), 3);
        let table = [
            ("/2024/05/story", Some(true)),
            ("/open/page", Some(false)),
            ("/open/doc.pdf", Some(true)),
            ("/open/doc.pdf?x=1", Some(false)),
            ("/odd", Some(true)),
        ];
        for (path, want) in table {
            assert_eq!(
                tdmrep_match(&rules, path).map(|r| r.reserved),
                want,
                "{path}"
            );
        }
        let only_blog =
            parse_tdmrep(br#"[{"location": "/blog/*", "tdm-reservation": 1}]"#).unwrap();
        assert!(tdmrep_match(&only_blog, "/news/x").is_none());
        assert!(tdmrep_match(&only_blog, "/blog/x").is_some());
        assert!(parse_tdmrep(b"{\"location\": \"/\"}").is_err());
        assert!(parse_tdmrep(b"<html>").is_err());
        assert_eq!(parse_tdmrep(b"[]").unwrap(), vec![]);

        let mut s = Signals::default();
        s.tdmrep(&rules, "/2024/05/story");
        assert_eq!(
            s.labels(),
            vec!["tdmrep.json:1;policy=https://p.test/policy.json"]
        );
        assert!(reserves_ai_training(&s));
    }

    #[test]
    fn patterns() {
        let table = [
            ("/", "/anything", true),
            ("*", "/anything", true),
            ("/a*c", "/abc", true),
            ("/a*c", "/ab", false),
            ("/a$", "/a", true),
            ("/a$", "/ab", false),
            ("/*/x$", "/y/x", true),
            ("/*/x$", "/y/x/z", false),
            ("/blog", "/blogpost", true),
        ];
        for (p, path, want) in table {
            assert_eq!(location_matches(p, path), want, "{p} {path}");
        }
    }

    #[test]
    fn content_usage_signals() {
        let mut s = Signals::default();
        s.content_usage_header(&["train-ai=n", "search=y"]);
        assert_eq!(s.labels(), vec!["content-usage:train-ai=n,search=y"]);
        assert!(reserves_ai_training(&s));
        // Malformed or empty header values: counted or skipped, never recorded.
        let mut s = Signals::default();
        s.content_usage_header(&["Train-AI=n"]);
        s.content_usage_header(&["foo=n"]);
        s.content_usage_header(&[]);
        assert_eq!((s.labels().len(), s.malformed), (0, 1));
        assert!(!reserves_ai_training(&s));
        // robots.txt: the rule for the page's path.
        let rules = UsageRules::parse(
            b"User-agent: *\nContent-Usage: search=y\nContent-Usage: /news/ train-genai=n\n",
            "scraper",
        );
        let mut s = Signals::default();
        s.content_usage_robots(&rules, "/about");
        assert_eq!(s.labels(), vec!["robots.txt:content-usage:search=y"]);
        assert!(!reserves_ai_training(&s));
        s.content_usage_robots(&rules, "/news/story");
        assert!(reserves_ai_training(&s));
        // Expressions resolve one by one: the header's `train-ai=y` does not
        // lift a `bots=n` rule of robots.txt; `n` wins across sources.
        let rules = UsageRules::parse(b"User-agent: *\nContent-Usage: bots=n\n", "scraper");
        let mut s = Signals::default();
        s.content_usage_header(&["train-ai=y"]);
        assert!(!reserves_ai_training(&s));
        s.content_usage_robots(&rules, "/x");
        assert!(reserves_ai_training(&s));
        assert_eq!(
            s.labels(),
            vec![
                "content-usage:train-ai=y",
                "robots.txt:content-usage:bots=n"
            ]
        );
    }

    #[test]
    fn decision_table() {
        let table = [
            (vec![Signal::ContentSignal(cs("ai-train", false))], true),
            (vec![Signal::ContentSignal(cs("ai-train", true))], false),
            (vec![Signal::ContentSignal(cs("ai-input", false))], false),
            (vec![Signal::ContentSignal(cs("search", false))], false),
            (
                vec![Signal::Directive {
                    source: Source::Meta,
                    value: "noimageai".into(),
                }],
                false,
            ),
            // TDMRep sources that disagree: the reservation wins.
            (
                vec![
                    Signal::Tdm {
                        source: Source::TdmRepJson,
                        reserved: false,
                        policy: None,
                    },
                    Signal::Tdm {
                        source: Source::Header,
                        reserved: true,
                        policy: None,
                    },
                ],
                true,
            ),
            (vec![], false),
        ];
        for (seen, want) in table {
            let s = Signals {
                seen,
                ..Signals::default()
            };
            assert_eq!(reserves_ai_training(&s), want, "{:?}", s.labels());
        }
    }
}
