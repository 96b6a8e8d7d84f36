//! Main-text selection: which part of the page is the article, and its text.
//!
//! 1. **Prune chrome**: `nav`, `header`, `footer`, `aside`, forms, buttons,
//!    hidden elements, captions, ARIA landmarks for navigation, teaser grids
//!    (`cards.rs`), and elements whose class or id names chrome
//!    (comments, sharing, related lists, ads, credits...), unless that
//!    element holds the article (`article`, `main`, `articleBody`, `hentry`).
//! 2. **Score** every paragraph-like block by its length and commas and give
//!    the score to its parent and grandparent, as Readability does; scale by
//!    link density and pick the best container (on a page of several
//!    stories, the one next to the headline's heading is favoured), then take
//!    in siblings that score well or are plain prose paragraphs, and a lead
//!    placed before the container (`lead.rs`).
//! 3. **Emit** the chosen blocks as paragraphs separated by `\n`, skipping
//!    link-heavy lists and tables (related stories) inside the content.
//!
//! If no container stands out, the whole pruned body is used, so every page
//! gets some text.

mod cards;
mod chrome;
mod emit;
mod hidden;
mod lead;
pub mod markdown;
mod select;
mod stats;

use cards::CardStats;
use chrome::{BoxWords, article_chrome, body_box, chrome, landmark};
pub use select::Content;
use select::select;
use stats::{Base, compute};

use super::dom::{Dom, NodeId};
use super::paywall::Marks;
#[cfg(test)]
use chrome::{class_pruned, tag_pruned};

/// Choose the main container and extract its paragraphs.
pub fn extract(dom: &Dom, anchor: Option<NodeId>) -> Content {
    extract_marked(dom, anchor, &Marks::default())
}

/// [`extract`], reading paywalled parts as `marks` names them (see
/// [`crate::extract::paywall`]).
///
/// When pruning by class names leaves less than `MIN_CHARS` of text, the
/// page is tried again without it and the longer result is kept.
pub fn extract_marked(dom: &Dom, anchor: Option<NodeId>, marks: &Marks) -> Content {
    let body = dom.find("body").unwrap_or(0);
    // Room for every node at once (the walk cannot say how many it yields).
    let mut order = Vec::with_capacity(dom.nodes.len());
    order.push(body);
    order.extend(dom.descendants(body));
    let hidden = hidden::Kept::new(dom, &order, marks);
    let keep = &hidden.keep;
    let dropped = &hidden.drop;
    let base = Base::new(dom, &order);
    let raw = compute(dom, body, &order, &base, &|id| dropped[id], keep);
    // Elements that hold the article itself are never pruned by class name.
    let mut holds_main = vec![false; dom.nodes.len()];
    for &id in order.iter().rev() {
        // Text holds nothing of its own (and `hidden.main` marks elements only).
        if !dom.is_element(id) {
            continue;
        }
        if (matches!(dom.tag(id), "article" | "main") && !article_chrome(dom, id))
            || dom
                .attr(id, "itemprop")
                .is_some_and(|p| p.eq_ignore_ascii_case("articleBody"))
            || is_hentry(dom, id)
            || hidden.main[id]
        {
            holds_main[id] = true;
        }
        if holds_main[id]
            && let Some(p) = dom.nodes[id].parent()
        {
            holds_main[p] = true;
        }
    }
    let cards = CardStats::new(dom, &order);
    let mut boxes = vec![false; dom.nodes.len()];
    let box_words = BoxWords::new(dom, &order);
    for &id in &order {
        boxes[id] =
            dom.is_element(id) && body_box(dom, id, raw.text[id], raw.paras[id], &box_words);
    }
    let guard = |id: NodeId| !holds_main[id] && !keep[id];
    let full = compute(
        dom,
        body,
        &order,
        &base,
        &|id| {
            dropped[id] || ((chrome(dom, id) || cards.is_grid(dom, id) || boxes[id]) && guard(id))
        },
        keep,
    );
    let first = select(dom, body, &order, &full, anchor);
    let result = if first.chars() >= MIN_CHARS {
        first
    } else {
        let landmarks = compute(
            dom,
            body,
            &order,
            &base,
            &|id| {
                dropped[id]
                    || (landmark(dom, id) || cards.is_grid(dom, id) || boxes[id]) && guard(id)
            },
            keep,
        );
        let second = select(dom, body, &order, &landmarks, anchor);
        if second.chars() >= MIN_CHARS {
            second
        } else {
            let third = select(dom, body, &order, &raw, anchor);
            // The most pruned result that is not much shorter than the longest: a
            // short article should not take in the page's chrome just to be longer.
            let longest = [&first, &second, &third]
                .iter()
                .map(|c| c.chars())
                .max()
                .unwrap_or(0);
            [first, second, third]
                .into_iter()
                .find(|c| c.chars() as f64 >= longest as f64 * SHORT_KEEP)
                .unwrap_or_default()
        }
    };
    hidden.label(dom, result)
}

/// Share of the longest result a more pruned one must reach to be kept.
const SHORT_KEEP: f64 = 0.6;

/// A microformats entry (`hentry`, `h-entry`): the post itself, whatever
/// taxonomy words its other class names carry (`tag-social`, `custom_tags-ai`).
fn is_hentry(dom: &Dom, id: NodeId) -> bool {
    dom.attr(id, "class").is_some_and(|c| {
        c.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("hentry") || t.eq_ignore_ascii_case("h-entry"))
    })
}

/// Text below which extraction is retried without class-name pruning.
const MIN_CHARS: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lead_outside_the_container_comes_first() {
        let body_p = "<p>The body paragraph talks about the model, its training data, its costs, and what the researchers found when they tried it on new tasks.</p>";
        let html = format!(
            "<html><body><article><header><h1>T</h1><p class=\"article-lead\">The lead sums up the story in one sentence that is long enough to count as prose.</p></header><div class=\"body\">{}</div></article></body></html>",
            body_p.repeat(6)
        );
        let dom = Dom::parse(&html);
        let c = extract(&dom, None);
        assert!(
            c.paragraphs[0].starts_with("The lead sums up"),
            "{:?}",
            c.paragraphs
        );
    }

    /// The paragraphs of `body` (a `<body>`'s inner HTML, `{}` standing for
    /// four paragraphs of prose).
    fn paragraphs(body: &str) -> Vec<String> {
        let prose = "<p>The council met on Tuesday to discuss the plan, which would add new routes, more buses and a later service on weekdays.</p>"
            .repeat(4);
        let html = format!("<html><body>{}</body></html>", body.replace("{}", &prose));
        extract(&Dom::parse(&html), None).paragraphs
    }

    #[test]
    fn a_page_of_posts_in_full_keeps_the_headline_post_only() {
        let first = "<p>The first story tells how the harbour was dredged, why the work took a year, and what it cost the port and the town.</p>";
        let second = "<p>The second story is another post on the same page, about a school that opened a new library, with a cafe and a garden.</p>";
        let html = format!(
            "<html><body><main><div class=\"posts\">\
             <div class=\"post\"><h1><a href=\"/a\">Harbour dredged</a></h1><div class=\"post__body\">{}</div></div>\
             <div class=\"post\"><h2><a href=\"/b\">Library opens</a></h2><div class=\"post__body\">{}</div></div>\
             </div></main></body></html>",
            first.repeat(3),
            second.repeat(5)
        );
        let p = extract(&Dom::parse(&html), None).paragraphs;
        assert!(p.iter().any(|x| x.starts_with("The first story")), "{p:?}");
        assert!(
            !p.iter().any(|x| x.starts_with("The second story")),
            "{p:?}"
        );
    }

    #[test]
    fn a_short_last_section_made_like_the_first_joins_and_a_teaser_section_does_not() {
        let p = paragraphs(
            "<main><h1>Buses</h1><section>{}{}{}</section>\
             <section><h2>What next</h2><p>The last part of the story says when the council meets next. The vote is in June.</p>\
             <p>Until then the old timetable stays, and the night buses keep running on Fridays only.</p></section>\
             <section><h3><a href=\"/s/2\">Trams return</a></h3><p>Another story says the trams come back in May. The line is rebuilt.</p></section>\
             </main>",
        );
        assert!(p.iter().any(|x| x.starts_with("The last part")), "{p:?}");
        assert!(p.iter().any(|x| x.starts_with("Until then")), "{p:?}");
        assert!(!p.iter().any(|x| x.starts_with("Another story")), "{p:?}");
    }

    #[test]
    fn a_block_holding_only_a_subheading_between_parts_is_kept() {
        let p = paragraphs(
            "<main><div class=\"col\"><section class=\"prose\">{}{}</section>\
             <section class=\"prose mt-10\"><h2>What comes next</h2></section>\
             <section class=\"prose mt-10\"><p>The last part of the story says when the council meets next, and what it will vote on.</p></section></div></main>",
        );
        let i = p.iter().position(|x| x == "What comes next");
        assert!(
            i.is_some_and(|i| p[i + 1].starts_with("The last part")),
            "{p:?}"
        );
    }

    #[test]
    fn mathml_reads_as_its_symbols_without_its_tex_source() {
        let p = paragraphs(
            "<article>{}<p>The saving is <math><semantics><mrow><mi>S</mi><mo>=</mo><mi>n</mi><mn>2</mn></mrow><annotation encoding=\"application/x-tex\">S = n \\times 2</annotation></semantics></math> a year.</p></article>",
        );
        assert_eq!(p.last().unwrap(), "The saving is S = n 2 a year.", "{p:?}");
    }

    #[test]
    fn a_caption_that_is_a_sentence_of_the_story_stays_and_labels_credits_and_boxes_go() {
        let said = "Members of the council listen as the mayor explains why the new bus routes will start in the spring and not before.";
        let told = "Drivers of the old night buses wait at the depot for the vote, which decides whether their shifts will run past midnight.";
        let p = paragraphs(&format!(
            "<article>{{}}<figure><img src=\"a.jpg\"><figcaption>{said}</figcaption></figure>\
             <figure><img src=\"b.jpg\"><figcaption>The mayor on Tuesday. Photo: A. Person</figcaption></figure>\
             <p class=\"wp-caption-text\">{told}</p>\
             <figure><figcaption class=\"caption\"><div>Loading the video means you accept the privacy policy of the video platform, whose cookies will be set in your browser.</div></figcaption></figure>\
             <p>The last paragraph of the story says when the council meets next, and what it will be asked to vote on then.</p></article>"
        ));
        assert!(
            p.iter().any(|x| x == said) && p.iter().any(|x| x == told),
            "{p:?}"
        );
        assert!(!p.iter().any(|x| x.contains("Photo: A. Person")), "{p:?}");
        assert!(!p.iter().any(|x| x.contains("privacy policy")), "{p:?}");
        assert!(p.last().unwrap().starts_with("The last paragraph"), "{p:?}");
    }

    #[test]
    fn status_notices_and_dialog_panels_marked_up_as_articles_are_chrome() {
        let p = paragraphs(
            "<main><article class=\"story sidebar-left\">{}</article></main>\
             <span role=\"status\" aria-live=\"polite\">Saved to your list of stories to read later!</span>\
             <article class=\"password-message-modal\"><p>You will get an e-mail from us shortly telling you how to reset your password.</p></article>",
        );
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(p.iter().all(|x| x.starts_with("The council met")), "{p:?}");
    }

    #[test]
    fn class_names_of_what_an_element_lacks_do_not_prune_it() {
        let p = paragraphs(
            "<article><div class=\"item no_caption\"><p>The first part of the story says what happened at the meeting, and who was there to vote on it.</p></div>{}</article>",
        );
        assert!(p[0].starts_with("The first part"), "{p:?}");
    }

    #[test]
    fn a_header_holding_a_sentence_is_the_summary() {
        let p = paragraphs(
            "<header><a href=\"/\">Site</a></header><div itemprop=\"articleBody\"><header>Most of what the brain does happens out of sight. New research looks at the moment an idea arrives.</header>{}</div>",
        );
        assert!(p[0].starts_with("Most of what"), "{p:?}");
        assert!(!p.iter().any(|x| x == "Site"), "{p:?}");
    }

    #[test]
    fn a_standfirst_in_the_story_header_inside_the_container_is_the_lead() {
        let p = paragraphs(
            "<main><article><header><h1>Council backs the plan</h1><p>The bus plan passed by a wide margin after a long debate, and the first new routes start in the spring.</p><div class=\"meta\">By A. Writer</div></header>{}</article></main>",
        );
        assert!(p[0].starts_with("The bus plan passed"), "{p:?}");
        assert!(!p.iter().any(|x| x.contains("A. Writer")), "{p:?}");
    }

    #[test]
    fn a_header_after_the_text_gives_no_lead() {
        let p = paragraphs(
            "<article>{}<header><h2>Next</h2><p>The next story is about something else entirely, and it is long enough to be read as prose.</p></header></article>",
        );
        assert!(p[0].starts_with("The council met"), "{p:?}");
        assert!(!p.iter().any(|x| x.contains("next story")), "{p:?}");
    }

    #[test]
    fn sub_lists_of_links_stay_with_a_list_of_sentences_and_menus_do_not() {
        let p = paragraphs(
            "<article>{}<ul><li>The planner now shows the platform for every train, and warns about short changes.</li><li>Still in progress:<ul><li><a href=\"/1\">Bug 412 – Night buses missing after midnight</a></li><li><a href=\"/2\">Bug 418 – Fares shown twice for returns</a></li><li><a href=\"/3\">Bug 431 – Step-free routes ignore broken lifts</a></li></ul></li></ul><ul><li><span>Trains</span><ul><li><a href=\"/t\">Timetables</a></li><li><a href=\"/d\">Live departures</a></li></ul></li><li><span>Buses</span><ul><li><a href=\"/r\">Routes</a></li><li><a href=\"/n\">Night buses</a></li></ul></li></ul></article>",
        );
        for line in [
            "The planner now shows",
            "Still in progress:",
            "Bug 412",
            "Bug 431",
        ] {
            assert!(p.iter().any(|x| x.starts_with(line)), "{line}: {p:?}");
        }
        for line in ["Trains", "Timetables", "Routes"] {
            assert!(!p.iter().any(|x| x == line), "{line}: {p:?}");
        }
    }

    #[test]
    fn chart_labels_with_dots_are_skipped_and_tables_of_short_cells_kept() {
        let labels: String = [
            "U.S. total",
            "Jan. 2023",
            "Sept. 2023",
            "Jan. 2024",
            "40",
            "20",
            "0",
            "Est.",
        ]
        .iter()
        .map(|l| format!("<div style=\"position:absolute\"><p>{l}</p></div>"))
        .collect();
        let cells: String = [
            "Rank", "Line", "1.", "Harwick", "2.", "St. Ives", "3.", "Coast",
        ]
        .chunks(2)
        .map(|r| format!("<tr><td><p>{}</p></td><td><p>{}</p></td></tr>", r[0], r[1]))
        .collect();
        let p = paragraphs(&format!(
            "<article>{{}}<div class=\"g-artboard\">{labels}</div><table>{cells}</table></article>"
        ));
        assert!(!p.iter().any(|x| x.contains("Jan. 2023")), "{p:?}");
        assert!(p.iter().any(|x| x == "St. Ives"), "{p:?}");
        assert!(p.iter().any(|x| x == "1."), "{p:?}");
    }

    #[test]
    fn a_data_tables_cells_named_for_their_place_stay() {
        let rows: String = ["Load map", "Save map", "Settings"]
            .iter()
            .map(|r| format!("<tr><td>{r}</td><td class=\"date\">Done</td></tr>"))
            .collect();
        let p = paragraphs(&format!(
            "<article>{{}}<table><tr><td class=\"header_cell\">General UX</td><td class=\"header_cell\">Final review</td></tr>{rows}</table><table><tr><td>12 May</td><td class=\"author\">Text: A. Writer</td></tr></table></article>"
        ));
        for cell in ["General UX", "Final review", "Save map"] {
            assert!(p.iter().any(|x| x == cell), "{cell}: {p:?}");
        }
        assert!(!p.iter().any(|x| x.contains("A. Writer")), "{p:?}");
    }

    #[test]
    fn a_one_sentence_subheadline_under_the_headline_is_the_lead() {
        let p = paragraphs(
            "<article><div class=\"top\"><header><h1>Old bug crashes servers</h1><h2>A two-year-old bug exposes thousands of servers to attack.</h2><p>By A. Writer</p></header></div><div class=\"body\">{}</div></article>",
        );
        assert!(p[0].starts_with("A two-year-old bug"), "{p:?}");
        let p = paragraphs(
            "<article><div class=\"top\"><header><h1>Old bug crashes servers</h1><p>Von Anna Beispiel 19. Oktober 2019 00:04 Uhr</p></header></div><div class=\"body\">{}</div></article>",
        );
        assert!(p[0].starts_with("The council met"), "{p:?}");
    }

    #[test]
    fn links_that_run_on_from_the_words_before_them_are_the_items_text() {
        let p = paragraphs(
            "<article>{}<ul><li>Ana Silva <a href=\"/1\">fixed the departure board for stations</a> with two platforms</li><li>Tom <a href=\"/2\">removed the old ticket screen</a> from the app</li><li>Lea <a href=\"/3\">converted the fare tables</a> to the new format</li></ul><ul><li>Neil has patches up to <a href=\"/4\">improve the night timetable</a>, and <a href=\"/5\">show the replacement buses</a></li></ul><ul><li><a href=\"/6\">Storm warning for the coast this weekend</a> (Courier)</li><li><a href=\"/7\">Local team wins the cup final again</a> (Courier)</li></ul></article>",
        );
        for line in [
            "Ana Silva fixed",
            "Tom removed",
            "Lea converted",
            "Neil has patches",
        ] {
            assert!(p.iter().any(|x| x.starts_with(line)), "{line}: {p:?}");
        }
        assert!(!p.iter().any(|x| x.contains("Storm warning")), "{p:?}");
    }

    #[test]
    fn a_dateline_opening_a_paragraph_stays_with_its_sentence() {
        let p = paragraphs(
            "<article><p><span class=\"dateline\">CAIRO —</span> Gunmen opened fire on visitors at the museum on Wednesday, killing at least nineteen people.</p>{}<p><span class=\"date\">06.03.2016</span>Another story begins here, and it is only a teaser of a later one.</p></article>",
        );
        assert!(p[0].starts_with("CAIRO — Gunmen"), "{p:?}");
        assert!(!p.iter().any(|x| x.contains("06.03.2016")), "{p:?}");
    }

    #[test]
    fn a_linked_name_in_a_table_cell_is_its_value() {
        let rows: String = [("Harwick", "42"), ("St. Ives", "35"), ("Coast", "28")]
            .iter()
            .map(|(n, v)| {
                format!("<tr><td><div><a href=\"/l/{v}\">{n} line</a></div></td><td>{v} trains a day</td><td>since 2019</td></tr>")
            })
            .collect();
        let p = paragraphs(&format!(
            "<article>{{}}<table>{rows}</table><div class=\"more\"><a href=\"/a\">All lines</a> <a href=\"/b\">All stations</a></div></article>"
        ));
        for cell in ["Harwick line", "St. Ives line", "35 trains a day"] {
            assert!(p.iter().any(|x| x == cell), "{cell}: {p:?}");
        }
        assert!(!p.iter().any(|x| x.contains("All lines")), "{p:?}");
    }

    #[test]
    fn highlighted_code_keeps_its_comments() {
        let p = paragraphs(
            "<article>{}<pre class=\"language-js\"><code><span class=\"token comment\">// load-add.js</span><br><span class=\"token keyword\">const</span> binary = read();</code></pre><div class=\"comments\"><p>Great post, thanks for sharing it with all of us here today!</p></div></article>",
        );
        assert!(p.iter().any(|x| x.starts_with("// load-add.js")), "{p:?}");
        assert!(!p.iter().any(|x| x.contains("Great post")), "{p:?}");
    }

    /// `EXTRACT_DEBUG=page.html cargo test debug_page -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn debug_page() {
        let Ok(path) = std::env::var("EXTRACT_DEBUG") else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        let (text, _) = crate::extract::charset::decode(&bytes, None, None);
        let prepared = crate::extract::prepass::prepare(&text);
        let dom = Dom::parse(&prepared.html);
        let body = dom.find("body").unwrap_or(0);
        let mut order = vec![body];
        order.extend(dom.descendants(body));
        let base = Base::new(&dom, &order);
        let raw = compute(&dom, body, &order, &base, &|_| false, &[]);
        let st = compute(&dom, body, &order, &base, &|id| chrome(&dom, id), &[]);
        for &id in &order {
            if dom.is_element(id) && raw.text[id] > 500 {
                let mut depth = 0;
                let mut cur = dom.nodes[id].parent();
                while let Some(c) = cur {
                    depth += 1;
                    cur = dom.nodes[c].parent();
                }
                println!(
                    "{}{} class={:?} id={:?} raw={} kept={} pruned={} tagpruned={} classpruned={}",
                    " ".repeat(depth),
                    dom.tag(id),
                    dom.attr(id, "class").unwrap_or(""),
                    dom.attr(id, "id").unwrap_or(""),
                    raw.text[id],
                    st.text[id],
                    st.pruned[id],
                    tag_pruned(&dom, id),
                    class_pruned(&dom, id)
                );
            }
        }
        let cards = CardStats::new(&dom, &order);
        for &id in &order {
            if dom.is_element(id) && cards.is_grid(&dom, id) {
                println!(
                    "GRID {} class={:?} text={}",
                    dom.tag(id),
                    dom.attr(id, "class"),
                    raw.text[id]
                );
            }
        }
        let meta = crate::extract::meta::gather(&dom, None, &prepared.jsonld);
        let anchor = crate::extract::title::anchor(&dom, &meta);
        let c = extract(&dom, anchor);
        println!(
            "ROOT {:?} {:?} anchor {:?}",
            c.root.map(|r| dom.tag(r)),
            c.root.and_then(|r| dom.attr(r, "class")),
            anchor.map(|a| dom.tag(a))
        );
        println!("{}", c.paragraphs.join("\n"));
    }
}
