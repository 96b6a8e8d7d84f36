//! The date rules on whole small pages: a re-dated story, an older page
//! refreshed later, a byline under the headline beside a table of dated
//! rows, an embedded post, the site's masthead, a bibliographic reference,
//! the story's own footer, a slash date in the page's day/month order, a
//! list of other stories.

use chrono::NaiveDate;

use crate::extract::{Page, extract};
use crate::record::DateSource;
use crate::relevance::Rule;

fn page(html: &str) -> Page {
    let rule = Rule::new(&crate::config::Keywords::default());
    let today = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
    extract(html.as_bytes(), None, None, &rule, today)
}

fn day(p: &Page) -> Option<String> {
    p.date.map(|d| d.to_string())
}

const PROSE: &str = "<p>The council said the new line would carry more than ten thousand passengers a day once the last section opens, and that fares would stay as they are.</p>";

/// A page with these machine dates and this line shown by the headline.
fn dated(published: &str, modified: &str, shown: &str) -> String {
    format!(
        r#"<html><head><meta property="article:published_time" content="{published}T17:40:00+01:00">
        <meta property="article:modified_time" content="{modified}T09:15:00+01:00"></head>
        <body><article><h1>Tram line opens</h1><p class="date-time">{shown}</p>{}</article></body></html>"#,
        PROSE.repeat(4)
    )
}

#[test]
fn a_story_redated_within_days_takes_the_day_it_shows() {
    let p = page(&dated(
        "2021-03-16",
        "2021-03-20",
        "20. März 2021 - 15:00 Uhr",
    ));
    assert_eq!(day(&p).as_deref(), Some("2021-03-20"));
    assert_eq!(p.date_source, Some(DateSource::Byline));
    // The change labelled as one, in any of several languages, leaves the
    // first publication in place.
    for shown in [
        "Aktualisiert am 20. März 2021",
        "Updated March 20, 2021",
        "Atualizado em 20 de março de 2021",
    ] {
        let p = page(&dated("2021-03-16", "2021-03-20", shown));
        assert_eq!(day(&p).as_deref(), Some("2021-03-16"), "{shown}");
    }
    // Shown day not the change's: the machine publication holds.
    let p = page(&dated("2021-03-16", "2021-03-20", "18 March 2021"));
    assert_eq!(day(&p).as_deref(), Some("2021-03-16"));
}

#[test]
fn an_older_page_refreshed_later_keeps_its_first_publication() {
    let p = page(&dated("2017-04-12", "2020-02-19", "Le 19 février 2020"));
    assert_eq!(day(&p).as_deref(), Some("2017-04-12"));
    assert_eq!(p.date_source, Some(DateSource::PublishedTime));
}

#[test]
fn a_live_blog_is_not_redated_by_its_last_entry() {
    let html = dated("2021-03-16", "2021-03-18", "18 March 2021").replacen(
        "</head>",
        r#"<script type="application/ld+json">{"@type":"LiveBlogPosting","coverageStartTime":"2021-03-16T07:00:00+01:00","datePublished":"2021-03-18T18:00:00+01:00"}</script></head>"#,
        1,
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-03-16"));
    // The type named by its full schema.org address, in a graph.
    let html = dated("2021-03-16", "2021-03-18", "18 March 2021").replacen(
        "</head>",
        r#"<script type="application/ld+json">{"@graph":[{"@type":"https://schema.org/LiveBlogPosting","coverageStartTime":"2021-03-16T07:00:00+01:00","datePublished":"2021-03-18T18:00:00+01:00"}]}</script></head>"#,
        1,
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-03-16"));
}

#[test]
fn the_byline_under_the_headline_beats_a_table_of_dated_rows() {
    let rows: String = (1..=5)
        .map(|i| format!(r#"<tr><td class="list-name">Name {i}</td><td class="list-date">Feb 1{i}, 2013</td></tr>"#))
        .collect();
    let html = format!(
        r#"<html><body><div class="head"><h1>Island frees itself</h1><div class="meta"><div class="date">2. August 2012</div></div></div>
        <div class="content"><div class="entry">{}</div><table>{rows}</table></div></body></html>"#,
        PROSE.repeat(4)
    );
    let p = page(&html);
    assert_eq!(day(&p).as_deref(), Some("2012-08-02"));
    assert_eq!(p.date_source, Some(DateSource::Byline));
    // Without a dated byline there, the headline's block gives nothing and
    // the rows are still read (no date is lost).
    let p = page(&html.replace("2. August 2012", "Staff writer"));
    assert_eq!(day(&p).as_deref(), Some("2013-02-11"));
}

#[test]
fn an_embedded_post_dates_the_post_not_the_page() {
    let html = format!(
        r#"<html><body><article><h1>Tram line opens</h1><div class="meta"><span class="date">4 March 2021</span></div>
        {PROSE}<blockquote class="instagram-media"><p><a href="https://social.test/p/1">A post shared by the city</a></p>
        <p><time datetime="2020-11-02T10:00:00+00:00">Nov 2, 2020</time></p></blockquote>{PROSE}</article></body></html>"#
    );
    let p = page(&html);
    assert_eq!(day(&p).as_deref(), Some("2021-03-04"));
    assert_eq!(p.date_source, Some(DateSource::Byline));
}

#[test]
fn the_mastheads_date_is_today_not_the_pages() {
    let masthead = r#"<header><h1 class="logo"><a href="/">City News</a></h1><span class="site-date">Friday, 9 April 2021</span><nav><a href="/a">A</a></nav></header>"#;
    let html = format!(
        r#"<html><body>{masthead}<div id="content"><h2>Tram line opens</h2><p>4 March 2021</p>{}</div></body></html>"#,
        PROSE.repeat(3)
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-03-04"));
    // A header that holds a story's headline is that story's.
    let html = format!(
        r#"<html><body><header><h2>Tram line opens</h2><span class="date">9 April 2021</span></header><div>{}</div></body></html>"#,
        PROSE.repeat(3)
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-04-09"));
}

#[test]
fn a_cited_works_date_is_not_the_pages() {
    let html = format!(
        r#"<html><body><article><p>Science · 4 March 2021</p><h1>Tram line opens</h1>{}
        <p>In: Journal of Transport; Vol. 12, Issue 3, pp. 45 - 67, 2 February 2021, DOI 10.5555/jt.1</p></article></body></html>"#,
        PROSE.repeat(3)
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-03-04"));
}

#[test]
fn the_stories_own_footer_dates_it() {
    let html = format!(
        r#"<html><body><article><h1>Tram line opens</h1>{PROSE}<p>Comments can be sent until 30 April 2021.</p>{PROSE}
        <footer class="entry-footer"><span class="posted-on">Posted on <time>4 March 2021</time></span></footer></article>
        <footer class="site-footer"><p>Events: 9 May 2021</p></footer></body></html>"#
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-03-04"));
    // The footer of a page-wide article without a headline stays the site's.
    let html = html.replace("<h1>Tram line opens</h1>", "");
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-04-30"));
}

#[test]
fn a_slash_date_is_read_in_the_pages_order() {
    let html = |lang: &str, side: &str| {
        format!(
            r#"<html lang="{lang}"><body><article><h1>Tram line opens</h1><div class="meta"><span class="date">04/03/2021</span></div>{}</article>
            <aside><ul><li><a href="/a">Other</a> <span class="date">{side}</span></li></ul></aside></body></html>"#,
            PROSE.repeat(3)
        )
    };
    assert_eq!(
        day(&page(&html("en-GB", ""))).as_deref(),
        Some("2021-03-04")
    );
    assert_eq!(
        day(&page(&html("en-US", ""))).as_deref(),
        Some("2021-04-03")
    );
    // English of no region: the page's other slash dates decide.
    assert_eq!(
        day(&page(&html("en", "25/02/2021"))).as_deref(),
        Some("2021-03-04")
    );
    assert_eq!(
        day(&page(&html("en", "02/25/2021"))).as_deref(),
        Some("2021-04-03")
    );
    // A machine's `datetime` is not read in the page's order.
    let html = r#"<html lang="pt-BR"><body><article><h1>Obra</h1><time datetime="05/04/2022 08:43:31 am"></time>
        <p class="date">04.05.2022</p></article></body></html>"#;
    assert_eq!(day(&page(html)).as_deref(), Some("2022-05-04"));
}

#[test]
fn a_list_of_other_stories_dates_them_not_the_page() {
    let items: String = [
        "Council approves the new budget",
        "Storm warning for the coast",
        "Club wins the cup",
    ]
    .iter()
    .enumerate()
    .map(|(i, t)| {
        format!(r#"<li><a href="/s/{i}">{t}</a> <span class="date">2{i} May 2021</span></li>"#)
    })
    .collect();
    let html = format!(
        r#"<html><body><div class="rail"><ul>{items}</ul></div><main><h1>Tram line opens</h1><p>4 March 2021</p>{}</main></body></html>"#,
        PROSE.repeat(3)
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-03-04"));
    // A byline written as a list (author, date, comments) is the page's.
    let html = format!(
        r#"<html><body><main><h1>Tram line opens</h1><ul class="post-meta"><li><a href="/author/jo">Jo Marsh</a></li>
        <li><span class="date">4 March 2021</span></li><li><a href="/#comments">3 comments</a></li></ul>{}</main></body></html>"#,
        PROSE.repeat(3)
    );
    assert_eq!(day(&page(&html)).as_deref(), Some("2021-03-04"));
}
