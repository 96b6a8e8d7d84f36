//! Publisher consent for AI use: what a site says about using its pages
//! ([`Signals`]), and the one decision the crawl takes from it
//! ([`AiDecision`] under [`AiUsePolicy`]), checked against the use this
//! crawl makes of the pages ([`AiUsage`], `crawl.ai_usage`: AI training by
//! default). Pure: callers hand in the robots.txt body, response headers,
//! page tags, the site's `tdmrep.json` and RSL documents; nothing here does I/O.
//!
//! Signals read, each with the document it follows:
//! * Content Signals (contentsignals.org, as managed robots.txt files write
//!   it, 2025): robots.txt `Content-Signal:` lines in our group or the `*`
//!   group, or outside any group, and the `Content-Signal` response header;
//!   `search`, `ai-input`, `ai-train` and `use` ([`content_signal`]).
//! * The IETF AI preferences: vocabulary draft-ietf-aipref-vocab-08 (labels
//!   `train-ai` and `search`, no nesting) attached as draft-ietf-aipref-attach-05
//!   says: the `Content-Usage` header, robots.txt `Content-Usage` rules inside
//!   our group for crawlable paths ([`aipref`]).
//! * RSL 1.0: a licence from robots.txt `License:`, `Link: rel="license"` or
//!   `<link rel="license">`; its `permits`/`prohibits` usage and `payment`
//!   ([`rsl`]).
//! * TDMRep (W3C CG final report, 2024): the `tdm-reservation` / `tdm-policy`
//!   header and meta tag, and `/.well-known/tdmrep.json` (the most specific
//!   matching `location` wins).
//! * `noai` / `noimageai` in `X-Robots-Tag` (plain, or `agent: directive` for
//!   our token) and in `<meta name="robots">` / `<meta name="<our token>">`.
//!
//! [`reserves_ai_training`] says whether any of them reserves the crawl's
//! use: for training, `ai-train=no`, `train-ai=n`, `noai`, a TDM reservation
//! (`1`), or an RSL licence that prohibits `ai-train` (or `ai-all`, `all`)
//! or allows it only for payment (the crawler never pays). `noimageai` is
//! recorded but reserves nothing we keep (we store text only), and neither
//! do other keys (`ai-input`, `use`, old aipref labels). Any one reservation
//! wins. Malformed values are ignored.
//!
//! Files, none importing another that imports it back: `terms.rs` (the
//! shared words: [`Source`], [`AiUsage`]), `robots.rs` (robots.txt groups,
//! patterns, the product token), `content_signal.rs`, `aipref.rs`,
//! `tdmrep.rs`, `rsl.rs` (one per signal), `signals.rs` (the signals of a
//! page, using all of those), `decision.rs` (the decision). Fetching is
//! `net`'s; the assembly of a fetched page's signals is `crawl::signals`.
//!
//! A `Content-Usage` expression is judged on its own (a header's `train-ai=y`
//! does not lift a robots.txt `bots=n`); a malformed one is ignored and counted
//! per host (`bad_content_usage`), never a reason to fail the page.

pub mod aipref;
pub mod content_signal;
mod decision;
mod robots;
pub mod rsl;
mod signals;
mod tdmrep;
mod terms;

pub use aipref::{Usage, UsageRules};
pub(crate) use content_signal::content_signals;
pub use content_signal::{ContentSignal, parse_content_signal};
pub use decision::{AiDecision, AiUsePolicy};
pub use robots::agent_token;
#[cfg(test)]
use robots::location_matches;
pub(crate) use signals::reserves_ai_training;
#[cfg(test)]
use signals::x_robots_directives;
pub use signals::{Signal, Signals};
pub use tdmrep::TdmRule;
pub(crate) use tdmrep::parse_tdmrep;
#[cfg(test)]
use tdmrep::tdmrep_match;
pub use terms::{AiUsage, Source};

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
        ContentSignal::new(key, if allowed { "yes" } else { "no" }, Source::RobotsTxt)
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
        // robots.txt: the rule for the page's path, inside the group.
        let rules = UsageRules::parse(
            b"User-agent: *\nContent-Usage: search=y\nContent-Usage: /news/ train-ai=n\n",
            "scraper",
        );
        let mut s = Signals::default();
        s.content_usage_robots(&rules, "/about");
        assert_eq!(s.labels(), vec!["robots.txt:content-usage:search=y"]);
        assert!(!reserves_ai_training(&s));
        s.content_usage_robots(&rules, "/news/story");
        assert!(reserves_ai_training(&s));
        // Several statements: any `n` wins; the header's `train-ai=y` does
        // not lift a robots.txt `train-ai=n`.
        let rules = UsageRules::parse(b"User-agent: *\nContent-Usage: train-ai=n\n", "scraper");
        let mut s = Signals::default();
        s.content_usage_header(&["train-ai=y"]);
        assert!(!reserves_ai_training(&s));
        s.content_usage_robots(&rules, "/x");
        assert!(reserves_ai_training(&s));
        // An old label is recorded, but reserves nothing.
        let rules = UsageRules::parse(b"User-agent: *\nContent-Usage: bots=n\n", "scraper");
        let mut s = Signals::default();
        s.content_usage_robots(&rules, "/x");
        s.content_usage_header(&["train-genai=n"]);
        assert_eq!(
            s.labels(),
            vec![
                "robots.txt:content-usage:bots=n",
                "content-usage:train-genai=n"
            ]
        );
        assert!(!reserves_ai_training(&s));
        // A crawl for a search index asks about `search`, not training.
        let mut s = Signals {
            usage: AiUsage::Search,
            ..Signals::default()
        };
        s.content_usage_header(&["train-ai=n"]);
        s.tdm_headers(Some("1"), None);
        assert!(!reserves_ai_training(&s));
        s.content_usage_header(&["search=n"]);
        assert!(reserves_ai_training(&s));
        assert_eq!(s.reserving(), vec!["content-usage:search=n"]);
    }

    #[test]
    fn content_signal_header() {
        let mut s = Signals::default();
        s.content_signal_header(&["search=yes, ai-train=no", "use=immediate"]);
        assert_eq!(
            s.labels(),
            vec![
                "content-signal:search=yes",
                "content-signal:ai-train=no",
                "content-signal:use=immediate"
            ]
        );
        assert!(reserves_ai_training(&s));
        let mut s = Signals::default();
        s.content_signal_header(&["ai-input=no, use=reference"]);
        assert!(!reserves_ai_training(&s), "{:?}", s.labels());
    }

    /// One row per signal and per form it comes in (the documents' own
    /// examples where they give some): the labels recorded and whether AI
    /// training is reserved.
    #[test]
    fn every_signal_and_form() {
        let robots = |txt: &'static [u8]| {
            move |s: &mut Signals| {
                s.content_signals(&content_signals(txt, "scraper"));
                s.content_usage_robots(&UsageRules::parse(txt, "scraper"), "/news/a");
            }
        };
        let rsl_terms = |xml: &[u8]| {
            rsl::parse_rsl(xml)
                .unwrap()
                .terms_for("https://n.test", "/news/a")
                .cloned()
        };
        type Row = (
            &'static str,
            Box<dyn Fn(&mut Signals)>,
            Vec<&'static str>,
            bool,
        );
        let table: Vec<Row> = vec![
            // Content Signals, a managed robots.txt's `*` group.
            (
                "content-signal robots group",
                Box::new(robots(b"User-Agent: *\nContent-Signal: search=yes,ai-train=no\nAllow: /\n")),
                vec!["robots.txt:search=yes", "robots.txt:ai-train=no"],
                true,
            ),
            (
                "content-signal robots outside groups",
                Box::new(robots(b"Content-Signal: ai-train=no, use=reference\nUser-Agent: *\nAllow: /\n")),
                vec!["robots.txt:ai-train=no", "robots.txt:use=reference"],
                true,
            ),
            (
                "content-signal header",
                Box::new(|s: &mut Signals| s.content_signal_header(&["search=yes, ai-train=no"])),
                vec!["content-signal:search=yes", "content-signal:ai-train=no"],
                true,
            ),
            (
                "content-signal header allows",
                Box::new(|s: &mut Signals| s.content_signal_header(&["ai-train=yes, ai-input=no"])),
                vec!["content-signal:ai-train=yes", "content-signal:ai-input=no"],
                false,
            ),
            // aipref: the attachment draft's robots.txt example, scoped by path.
            (
                "content-usage robots group",
                Box::new(robots(b"User-Agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n")),
                vec!["robots.txt:content-usage:train-ai=n"],
                true,
            ),
            (
                "content-usage robots outside groups",
                Box::new(robots(b"Content-Usage: train-ai=n\nUser-Agent: *\nAllow: /\n")),
                vec![],
                false,
            ),
            (
                "content-usage old label",
                Box::new(robots(b"User-Agent: *\nContent-Usage: bots=n\n")),
                vec!["robots.txt:content-usage:bots=n"],
                false,
            ),
            (
                "content-usage header",
                Box::new(|s: &mut Signals| s.content_usage_header(&["train-ai=n, search=y"])),
                vec!["content-usage:train-ai=n,search=y"],
                true,
            ),
            // RSL: prohibited, paid, free.
            (
                "rsl prohibits",
                Box::new(move |s: &mut Signals| {
                    let t = rsl_terms(b"<rsl><content url='/'><license><prohibits type='usage'>ai-train</prohibits></license></content></rsl>");
                    s.rsl("https://n.test/l.xml", Source::RobotsTxt, t);
                }),
                vec!["rsl:https://n.test/l.xml;prohibits=ai-train;payment=free"],
                true,
            ),
            (
                "rsl paid",
                Box::new(move |s: &mut Signals| {
                    let t = rsl_terms(b"<rsl><content url='https://n.test/news/'><license><permits type='usage'>ai-train</permits><payment type='training'/></license></content></rsl>");
                    s.rsl("https://n.test/l.xml", Source::Header, t);
                }),
                vec!["rsl:https://n.test/l.xml;permits=ai-train;payment=training"],
                true,
            ),
            (
                "rsl free",
                Box::new(move |s: &mut Signals| {
                    let t = rsl_terms(b"<rsl><content url='/'><license><permits type='usage'>ai-all</permits><payment type='attribution'/></license></content></rsl>");
                    s.rsl("https://n.test/l.xml", Source::Meta, t);
                }),
                vec!["rsl:https://n.test/l.xml;permits=ai-all;payment=attribution"],
                false,
            ),
            (
                "rsl unread",
                Box::new(|s: &mut Signals| s.rsl("https://n.test/l.xml", Source::Meta, None)),
                vec!["rsl:https://n.test/l.xml;unread"],
                false,
            ),
            // TDMRep and noai.
            (
                "tdm header",
                Box::new(|s: &mut Signals| s.tdm_headers(Some("1"), None)),
                vec!["tdm-header:1"],
                true,
            ),
            (
                "noai header",
                Box::new(|s: &mut Signals| s.x_robots_tag(&["noai".into()], "scraper")),
                vec!["x-robots-tag:noai"],
                true,
            ),
        ];
        for (what, add, labels, reserved) in table {
            let mut s = Signals::default();
            add(&mut s);
            assert_eq!(s.labels(), labels, "{what}");
            assert_eq!(reserves_ai_training(&s), reserved, "{what}");
        }
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
