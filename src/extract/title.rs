//! The page's headline.
//!
//! Candidates: the main `<h1>`, JSON-LD `headline`, `og:title` /
//! `twitter:title`, and `<title>`. An `<h1>` that the metadata titles agree
//! with wins (it is the bare headline); otherwise the metadata title with the
//! site name cut off (`Headline | Site`, `Headline - Site`). An `<h1>` that
//! only links to the home page is the blog's masthead: it names the site
//! (when no `og:site_name` does) and is never the headline.

use super::dom::{Dom, NodeId};
use super::meta::{Meta, clean};

/// Separators between a headline and a site name in `<title>`.
const SEPARATORS: &[&str] = &[
    " | ", " - ", " – ", " — ", " :: ", " » ", " · ", " • ", " / ", " ‹ ", " « ",
];

/// Lower-cased word tokens.
fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Does `inner`'s token sequence occur in `outer`'s?
fn contains_tokens(outer: &str, inner: &str) -> bool {
    let (o, i) = (tokens(outer), tokens(inner));
    !i.is_empty() && o.windows(i.len()).any(|w| w == i.as_slice())
}

/// `title` without the site name `site` at either end, when it is there.
fn cut_site(title: &str, site: Option<&str>) -> String {
    let t = clean(title);
    if let Some(site) = site.map(clean).filter(|s| !s.is_empty()) {
        for sep in SEPARATORS {
            if let Some(head) = t
                .strip_suffix(&format!("{sep}{site}"))
                .or_else(|| t.strip_prefix(&format!("{site}{sep}")))
            {
                return head.trim().to_string();
            }
        }
    }
    t
}

/// Cut a site name off a title: keep the longest part between separators
/// when it is a real headline (at least three words).
pub fn strip_site(title: &str, site: Option<&str>) -> String {
    let t = cut_site(title, site);
    if t != clean(title) {
        // WordPress's default "Site » Blog Archive » Post".
        return cut_site(&t, Some("Blog Archive"));
    }
    for sep in SEPARATORS {
        if t.contains(sep) {
            let parts: Vec<&str> = t.split(sep).collect();
            if let Some(best) = parts.iter().max_by_key(|p| p.chars().count())
                && best.split_whitespace().count() >= 3
            {
                return best.trim().to_string();
            }
        }
    }
    t
}

/// Is the heading a link to the site's home page (`<h1><a href="/">Blog
/// name</a></h1>`), the masthead rather than a headline?
fn links_home(dom: &Dom, id: NodeId) -> bool {
    let text = clean(&dom.text(id));
    !text.is_empty()
        && dom.descendants(id).any(|a| {
            dom.is_element(a)
                && dom.tag(a) == "a"
                && dom.attr(a, "href").is_some_and(is_home)
                && clean(&dom.text(a)) == text
        })
}

/// Does `href` point at a site's root (`/`, `https://host/`, `/index.html`)?
fn is_home(href: &str) -> bool {
    let h = href.trim();
    if h.is_empty() || h.starts_with(['#', '?']) {
        return false;
    }
    let path = match h.find("://") {
        Some(i) => h[i + 3..].find('/').map_or("", |j| &h[i + 3 + j..]),
        None if h.starts_with("//") => h[2..].find('/').map_or("", |j| &h[2 + j..]),
        None => h,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    matches!(path, "" | "/" | "./") || path.trim_start_matches('/').starts_with("index.")
}

/// Choose the title. `root` is the main content container, if known.
pub fn choose(dom: &Dom, m: &Meta, root: Option<NodeId>) -> Option<String> {
    // The blog's name in a masthead heading linked to the home page names
    // the site when no metadata does.
    let masthead =
        m.h1.iter()
            .find(|(id, _)| links_home(dom, *id))
            .map(|(_, t)| clean(t));
    let site = m
        .get(&["og:site_name", "application-name"])
        .or(masthead.as_deref());
    let headline = m
        .article_field("headline")
        .map(|h| clean(&h))
        .filter(|h| !h.is_empty());
    let og = m
        .get(&["og:title", "twitter:title", "dc.title", "headline"])
        .map(clean)
        .filter(|t| !t.is_empty());
    let doc = m.title.as_deref().map(clean).filter(|t| !t.is_empty());

    let h1 = main_h1(dom, m, root);
    let metas: Vec<&String> = [&headline, &og, &doc].into_iter().flatten().collect();
    // The h1 must be found in a metadata title and be most of its headline
    // (not a section label such as "Opinion" or the blog's name).
    if let Some(h1) = &h1
        && metas.iter().any(|t| {
            // Found in the title once a known site name is cut off (the
            // blog's name in a masthead `<h1>` is not the headline).
            contains_tokens(&cut_site(t, site), h1)
                && 2 * tokens(h1).len() >= tokens(&strip_site(t, site)).len()
        })
    {
        return Some(h1.clone());
    }
    if let Some(h) = headline {
        return Some(h);
    }
    if let Some(o) = og {
        return Some(strip_site(&o, site));
    }
    if let Some(d) = doc {
        return Some(strip_site(&d, site));
    }
    h1
}

/// The heading (`h1`/`h2`) that shows the metadata headline (JSON-LD
/// `headline`, else `og:title` without the site name), when exactly one
/// heading does. It marks where the article starts on pages that hold
/// several stories.
pub fn anchor(dom: &Dom, m: &Meta) -> Option<NodeId> {
    let site = m.get(&["og:site_name", "application-name"]);
    let want = m
        .article_field("headline")
        .or_else(|| m.get(&["og:title", "twitter:title"]).map(str::to_string))
        .map(|t| tokens(&strip_site(&t, site)))
        .filter(|t| t.len() >= 3)?;
    // One matching heading, or one `<h1>` among several matches (the same
    // headline linked from a sidebar list of the site's stories).
    let found: Vec<NodeId> = dom
        .descendants(0)
        .filter(|&id| {
            dom.is_element(id)
                && matches!(dom.tag(id), "h1" | "h2")
                && tokens(&dom.text(id)) == want
        })
        .collect();
    if let [one] = found[..] {
        return Some(one);
    }
    let mut h1 = found.iter().filter(|&&id| dom.tag(id) == "h1");
    match (h1.next(), h1.next()) {
        (Some(&one), None) => Some(one),
        _ => None,
    }
}

/// The `<h1>` of the content: the one inside or nearest before the content
/// container, else the only one on the page, else the first.
fn main_h1(dom: &Dom, m: &Meta, root: Option<NodeId>) -> Option<String> {
    let texts: Vec<(NodeId, String)> =
        m.h1.iter()
            .map(|(id, t)| (*id, clean(t)))
            .filter(|(id, t)| !t.is_empty() && t.chars().count() < 300 && !links_home(dom, *id))
            .collect();
    if texts.len() <= 1 {
        return texts.into_iter().next().map(|(_, t)| t);
    }
    if let Some(r) = root {
        let scope = dom.nodes[r]
            .parent()
            .and_then(|p| dom.nodes[p].parent())
            .unwrap_or(r);
        let inside = |id: NodeId| {
            let mut cur = Some(id);
            while let Some(c) = cur {
                if c == scope {
                    return true;
                }
                cur = dom.nodes[c].parent();
            }
            false
        };
        if let Some((_, t)) = texts.iter().find(|(id, _)| inside(*id)) {
            return Some(t.clone());
        }
    }
    texts.into_iter().next().map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_site_table() {
        let table = [
            (
                "A long headline here | The Site",
                None,
                "A long headline here",
            ),
            (
                "The Site - A long headline here",
                None,
                "A long headline here",
            ),
            ("Short | Site", None, "Short | Site"),
            (
                "Headline about things — Example News",
                Some("Example News"),
                "Headline about things",
            ),
            ("No separators at all", None, "No separators at all"),
        ];
        for (t, site, want) in table {
            assert_eq!(strip_site(t, site), want, "{t}");
        }
    }

    #[test]
    fn home_links_are_told_apart() {
        for (href, want) in [
            ("/", true),
            ("https://blog.test/", true),
            ("https://blog.test", true),
            ("//blog.test/index.html", true),
            ("./", true),
            ("/2020/01/post/", false),
            ("https://blog.test/about", false),
            ("#top", false),
        ] {
            assert_eq!(is_home(href), want, "{href}");
        }
    }
}
