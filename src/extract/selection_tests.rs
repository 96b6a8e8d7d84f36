//! Which container, date, title and byline whole pages give: tests on
//! small pages built to show one rule each.

use super::*;
use crate::record::DateSource;

fn page(html: &str) -> Page {
    let rule = Rule::new(&crate::config::Keywords::default());
    let today = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
    extract(html.as_bytes(), None, None, &rule, today)
}

const PROSE: &str = "<p>The researchers trained the model on public data, measured its errors on new tasks, and published the weights so that others could check the results for themselves.</p>";

#[test]
fn script_built_page_takes_its_jsonld_article_body() {
    let body = "First paragraph of the story, long enough to be prose. ".repeat(6);
    let html = format!(
        r#"<html><head><script type="application/ld+json">{{"@type":"NewsArticle","headline":"H","articleBody":"{body}\nSecond paragraph."}}</script></head><body><div id="app">Loading...</div></body></html>"#
    );
    let p = page(&html);
    assert!(p.text.starts_with("First paragraph"), "{}", p.text);
    assert!(p.text.ends_with("Second paragraph."), "{}", p.text);
    // A page with its own text keeps it.
    let html = format!(
        r#"<html><head><script type="application/ld+json">{{"@type":"NewsArticle","articleBody":"{body}"}}</script></head><body><article>{}</article></body></html>"#,
        PROSE.repeat(4)
    );
    assert!(page(&html).text.starts_with("The researchers"));
}

#[test]
fn a_date_just_above_the_headline_beats_the_mastheads_clock() {
    let html = format!(
        r#"<html><body><div class="top"><span>Thursday, 16 February 2012</span></div>
        <div class="box"><div class="boxHeader"><span>14 February 2012</span></div>
        <h1>Court lets the trial go on</h1>{}</div></body></html>"#,
        PROSE.repeat(4)
    );
    let p = page(&html);
    assert_eq!(p.date.map(|d| d.to_string()).as_deref(), Some("2012-02-14"));
    assert_eq!(p.date_source, Some(DateSource::TextDate));
    // Far above the headline, a date is no longer the story's own.
    let html = format!(
        r#"<html><body><div class="top"><span>Thursday, 16 February 2012</span></div>{}
        <h1>Court lets the trial go on</h1>{}</body></html>"#,
        "<p>Menu entry with words to fill the masthead of the page.</p>".repeat(40),
        PROSE.repeat(4)
    );
    assert_eq!(
        page(&html).date.map(|d| d.to_string()).as_deref(),
        Some("2012-02-16")
    );
}

#[test]
fn pubdate_marks_on_different_days_are_a_listing_not_the_page() {
    let list = r#"<ul class="more"><li><a href="/a">A</a> <time datetime="2019-09-22T07:30:29Z" pubdate>22 Sept</time></li><li><a href="/b">B</a> <time datetime="2019-09-20T19:01:28Z" pubdate>20 Sept</time></li></ul>"#;
    let html = format!(
        r#"<html><body><h1>Story</h1><p class="publication"><time datetime="2019-06-28T13:49:45Z">28 June 2019</time></p>{}{list}</body></html>"#,
        PROSE.repeat(4)
    );
    let p = page(&html);
    assert_eq!(p.date.map(|d| d.to_string()).as_deref(), Some("2019-06-28"));
    assert_eq!(p.date_source, Some(DateSource::Time));
    // One marked time, or marks that agree, still name the page's date.
    let html = html.replacen(
        "<ul",
        r#"<p><time datetime="2019-06-27" pubdate="pubdate">27 June</time></p><ul"#,
        1,
    );
    let html = html.replace(r#" pubdate>2"#, ">2");
    assert_eq!(
        page(&html).date.map(|d| d.to_string()).as_deref(),
        Some("2019-06-27")
    );
}

#[test]
fn a_site_vocabulary_meta_dates_a_page_with_no_other_date() {
    let html = |key: &str| {
        format!(
            r#"<html><head><meta content="2013-02-16T04:36:36-05:00" property="{key}"></head><body><h1>Spring</h1>{}</body></html>"#,
            PROSE.repeat(3)
        )
    };
    let p = page(&html("five_hundred_pixels:uploaded"));
    assert_eq!(p.date.map(|d| d.to_string()).as_deref(), Some("2013-02-16"));
    assert_eq!(p.date_source, Some(DateSource::Meta));
    assert_eq!(
        page(&html("prism.publicationDate")).date_source,
        Some(DateSource::Meta)
    );
    // A change or a publisher is not a publication date.
    assert_eq!(page(&html("site:modificationDate")).date, None);
    assert_eq!(page(&html("publisher")).date, None);
}

#[test]
fn a_list_of_recent_posts_dates_the_page_it_links_to() {
    let html = |href: &str| {
        format!(
            r#"<html><head><link rel="canonical" href="https://www.shop.test/blog/fall-in-love/"></head><body><h1>Fall in love</h1>{}
            <div class="widget"><div class="item"><h4><a href="https://www.shop.test/blog/school-day/">School day</a></h4> <div class="widget-date">14/06/2019</div></div>
            <div class="item"><h4><a href="{href}">Fall in love</a></h4> <div class="widget-date">08/08/2017</div></div></div></body></html>"#,
            PROSE.repeat(3)
        )
    };
    for href in [
        "https://www.shop.test/blog/fall-in-love/",
        "http://shop.test/blog/fall-in-love",
        "/blog/fall-in-love/",
    ] {
        let p = page(&html(href));
        assert_eq!(
            p.date.map(|d| d.to_string()).as_deref(),
            Some("2017-08-08"),
            "{href}"
        );
    }
    // Without a link to the page, the list's first date is all there is.
    let p = page(&html("/blog/other/"));
    assert_eq!(p.date.map(|d| d.to_string()).as_deref(), Some("2019-06-14"));
}

#[test]
fn a_subheading_that_ends_the_text_is_dropped() {
    let html = format!(
        r#"<html><body><article><div class="body">{}<h2>What comes next</h2>{}<h3>The harbour in pictures</h3></div><div class="related"><ul><li><a href="/a">Another story</a></li><li><a href="/b">And one more</a></li></ul></div></article></body></html>"#,
        PROSE.repeat(3),
        PROSE.replace("researchers", "engineers")
    );
    let p = page(&html);
    assert!(p.text.contains("What comes next"), "{}", p.text);
    assert!(p.text.ends_with("for themselves."), "{}", p.text);
    assert!(!p.text.contains("harbour"), "{}", p.text);
}

#[test]
fn a_story_split_into_wrapped_parts_is_kept_whole() {
    let part = |n: &str, k: usize| {
        format!(
            r#"<div class="blah"><div class="inner"><section class="part">{}</section></div><div class="slot"></div></div>"#,
            PROSE.replace("researchers", n).repeat(k)
        )
    };
    let html = format!(
        r#"<html><body><article><div class="container">{}{}{}</div></article><div class="rail"><p>Sign up, read more, follow us, share this, and so on.</p></div></body></html>"#,
        part("first team", 8),
        part("second team", 3),
        part("third team", 3)
    );
    let p = page(&html);
    for n in ["first team", "second team", "third team"] {
        assert!(p.text.contains(n), "{n}: {}", p.text);
    }
    assert!(!p.text.contains("Sign up"), "{}", p.text);
}

#[test]
fn the_byline_comes_from_markup_and_leaves_comments_alone() {
    let html = |author: &str| {
        format!(
            r#"<html><body><h1>Story</h1>{author}{}<div class="comments"><span class="comment-author">stephan said</span><p>Nice.</p></div></body></html>"#,
            PROSE.repeat(3)
        )
    };
    let byline = |a: &str| page(&html(a)).byline;
    assert_eq!(
        byline(r#"<div itemprop="author" itemscope><span>Text:</span> <span itemprop="name">Steven Musil</span></div>"#).as_deref(),
        Some("Steven Musil")
    );
    assert_eq!(
        byline(r#"<p class="date-author">von Janic Cathomen, 01.12.2021</p>"#).as_deref(),
        Some("Janic Cathomen")
    );
    assert_eq!(
        byline(r#"<div class="byline"><span>Author</span><a href="/a">Andreas Kalt</a></div>"#)
            .as_deref(),
        Some("Andreas Kalt")
    );
    // No byline of its own: a commenter is not the author.
    assert_eq!(byline(""), None);
}

#[test]
fn a_blogs_masthead_heading_is_not_the_headline() {
    let html = |title: &str, og: &str| {
        format!(
            r#"<html><head><title>{title}</title>{og}</head><body><header><h1 class="site-title"><a href="https://blog.test/">Nur mein Standpunkt</a></h1></header><article><h1 class="entry-title">Blogposting of the week</h1>{}</article></body></html>"#,
            PROSE.repeat(3)
        )
    };
    let t = |title: &str, og: &str| page(&html(title, og)).title;
    let want = Some("Blogposting of the week".to_string());
    assert_eq!(t("Blogposting of the week – Nur mein Standpunkt", ""), want);
    assert_eq!(
        t(
            "Nur mein Standpunkt",
            r#"<meta property="og:title" content="Blogposting of the week">"#
        ),
        want
    );
    // Without the post's own heading, the title names the post, not the blog.
    let html = html(
        "Nur mein Standpunkt » Blog Archive » Blogposting of the week",
        "",
    )
    .replace(
        r#"<h1 class="entry-title">Blogposting of the week</h1>"#,
        "",
    );
    assert_eq!(page(&html).title, want);
}

#[test]
fn a_person_beats_an_organisation_as_the_author() {
    let html = |author: &str| {
        format!(
            r#"<html><head><meta property="og:site_name" content="Helmholtz Klima"><script type="application/ld+json">{{"@type":"NewsArticle","headline":"H","author":{author}}}</script></head><body><h1>H</h1><p class="author">Von Christian Mihatsch</p>{}<div class="authority-control">Authority control</div></body></html>"#,
            PROSE.repeat(3)
        )
    };
    let byline = |a: &str| page(&html(a)).byline;
    let person = Some("Christian Mihatsch".to_string());
    assert_eq!(
        byline(r#"{"@type":"Organization","name":"Helmholtz Klima"}"#),
        person
    );
    // The site's own name as a plain string is the publisher too.
    assert_eq!(byline(r#""Helmholtz Klima""#), person);
    // A person in JSON-LD is taken as it is.
    assert_eq!(
        byline(r#"{"@type":"Person","name":"Jane Doe"}"#).as_deref(),
        Some("Jane Doe")
    );
}

#[test]
fn a_line_written_as_a_byline_names_the_author_when_nothing_is_marked_up() {
    let html = |line: &str| {
        format!(
            "<html><body><h1>The Green Deal is not enough</h1>{line}{}</body></html>",
            PROSE.repeat(3)
        )
    };
    let byline = |line: &str| page(&html(line)).byline;
    assert_eq!(
        byline("<h4>By Giovanni Gaggero | 12/10/2020</h4>").as_deref(),
        Some("Giovanni Gaggero")
    );
    assert_eq!(
        byline("<div>Ein Artikel von <strong>Pamela Sladky</strong> | 27.01.2020</div>").as_deref(),
        Some("Pamela Sladky")
    );
    // Headings and prose that happen to start the same way are not bylines.
    assert_eq!(byline("<h3>Von Wiener Walzer und Mozartkugeln</h3>"), None);
    assert_eq!(
        byline("<p>By Christmas, the company had shipped it.</p>"),
        None
    );
}

#[test]
fn taxonomy_class_names_do_not_prune_a_wordpress_post() {
    let html = format!(
        r#"<html><body><div class="post-1 post type-post hentry tag-social-media custom_tags-share">{}</div><div class="sidebar">{}</div></body></html>"#,
        PROSE.repeat(5),
        "<p>Sidebar words here, not the story at all, with commas, and more.</p>".repeat(2)
    );
    let p = page(&html);
    assert!(p.text.starts_with("The researchers"), "{}", p.text);
    assert!(!p.text.contains("Sidebar"), "{}", p.text);
}

#[test]
fn lead_in_the_article_header_is_kept_and_teaser_grid_is_not() {
    let card = r#"<li><a href="/other"><img src="i.jpg"></a><h3>Other story</h3><p>A teaser of another story, with a comma, and some more words to make it long.</p></li>"#;
    let html = format!(
        r#"<html><body><article><header><h1>Headline of the story</h1><p>The lead paragraph sums the story up in two sentences. It stands in the header, above the body of the story.</p></header><div class="body">{}</div></article><ul class="more">{}</ul></body></html>"#,
        PROSE.repeat(7),
        card.repeat(8)
    );
    let p = page(&html);
    assert!(p.text.starts_with("The lead paragraph"), "{}", p.text);
    assert!(!p.text.contains("teaser"), "{}", p.text);
}

#[test]
fn on_a_page_of_several_stories_the_headlined_one_wins() {
    let story = |h: &str, body: &str| {
        format!(
            "<div class=\"item\"><article><header><h1>{h}</h1></header><div class=\"text\">{body}</div></article></div>"
        )
    };
    // A story that scores higher comes first (more commas), but not
    // overwhelmingly higher: the headline is a boost, not an override.
    let other = "<p>Another story entirely, about the harbour, the ferries, the weather, the fish market, and the mayor.</p>".repeat(7);
    let html = format!(
        r#"<html><head><meta property="og:title" content="The model that checks itself | Site"></head><body><main>{}{}</main></body></html>"#,
        story("Harbour news of the week", &other),
        story("The model that checks itself", &PROSE.repeat(7)),
    );
    let p = page(&html);
    assert!(p.text.starts_with("The researchers"), "{}", p.text);
    assert!(!p.text.contains("harbour"), "{}", p.text);
}

#[test]
fn an_endless_scroll_page_keeps_the_story_under_its_headline() {
    let block = |h: &str, body: &str| {
        format!(
            "<div class=\"scrollblock\"><article class=\"entry\"><header><h1>{h}</h1></header><div class=\"entry-text\">{body}</div></article></div>"
        )
    };
    let other: String = (0..30)
        .map(|i| format!("<p>Another story, part {i}, about the harbour, the ferries, the weather, the fish market, and the mayor.</p>"))
        .collect();
    // The sidebar links the same headline: the `<h1>` is still the one.
    let html = format!(
        r#"<html><head><meta property="og:title" content="The model that checks itself"></head><body><main><section class="col">{}{}</section><aside><h2><a href="/x">The model that checks itself</a></h2></aside></main></body></html>"#,
        block("The model that checks itself", &PROSE.repeat(3)),
        block("Harbour news of the week", &other),
    );
    let p = page(&html);
    assert!(p.text.starts_with("The researchers"), "{}", p.text);
    assert!(!p.text.contains("harbour"), "{}", p.text);
    // Rows of a layout grid are not stories: the long text stays.
    let html = html
        .replace("<article class=\"entry\">", "<div>")
        .replace("</article>", "</div>");
    let t = page(&html).text;
    assert!(t.contains("harbour"), "{t}");
}

#[test]
fn parsing_caps_are_reported_on_the_page() {
    let url = crate::url::parse("https://a.test/").unwrap();
    let rule = Rule::new(&crate::config::Keywords::default());
    let today = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
    let links: String = (0..3000)
        .map(|n| format!("<a href=\"/p/{n}\">{n}</a>"))
        .collect();
    let p = extract(links.as_bytes(), None, Some(&url), &rule, today);
    assert_eq!(p.links.len(), meta::MAX_LINKS);
    assert_eq!(p.links[0].as_str(), "https://a.test/p/0");
    assert_eq!(p.cuts, [crate::record::ParseCap::Links]);
    let deep = format!("{}<p>x</p>", "<div>".repeat(1000));
    assert_eq!(page(&deep).cuts, [crate::record::ParseCap::Depth]);
    assert!(page(PROSE).cuts.is_empty());
}
