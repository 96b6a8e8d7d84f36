//! A small arena DOM built by html5ever's tree builder.
//!
//! Nodes live in one `Vec` and point at each other by index, so the tree is
//! cheap to build, cheap to drop and walked without recursion (see
//! [`Dom::descendants`]). Only what extraction reads is kept: element names,
//! attributes and text.
//!
//! Memory is bounded whatever the page: the document is fed to the parser in
//! chunks, and parsing stops (the tree keeps what came before) once the tree
//! holds [`MAX_NODES`] nodes or [`MAX_TEXT_BYTES`] of text; [`Dom::cut`] says
//! which cap cut.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};

use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{Attribute, ParseOpts, QualName, local_name, ns, parse_document};

use crate::record::ParseCap;

/// Most nodes in a tree (an article page has a few thousand, a long
/// encyclopedia page some 40,000; one node costs
/// 80 bytes plus its attributes).
pub const MAX_NODES: usize = 50_000;
/// Most text bytes in a tree (an article has tens of kilobytes).
pub const MAX_TEXT_BYTES: usize = 2 << 20;
/// Bytes fed to the parser between two looks at the caps.
const CHUNK: usize = 32 << 10;

/// Index of a node in [`Dom::nodes`]; the document is node 0.
pub type NodeId = usize;

/// What a node is.
#[derive(Debug, Clone)]
pub enum Kind {
    Document,
    Element,
    Text(StrTendril),
    /// Comments, processing instructions, doctypes: kept only as placeholders.
    Other,
}

/// A link to a node: its index, or [`Link::NONE`] (four bytes where an
/// `Option<usize>` takes sixteen: a page's walks read many nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Link(u32);

impl Link {
    const NONE: Link = Link(u32::MAX);

    fn get(self) -> Option<NodeId> {
        (self != Link::NONE).then_some(self.0 as NodeId)
    }

    fn to(id: NodeId) -> Link {
        // Trees hold at most MAX_NODES plus one chunk's worth of nodes.
        Link(u32::try_from(id).unwrap_or(u32::MAX))
    }
}

impl From<Option<NodeId>> for Link {
    fn from(id: Option<NodeId>) -> Link {
        id.map_or(Link::NONE, Link::to)
    }
}

/// One node and its links.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    /// Element name (empty for other nodes).
    pub name: QualName,
    /// Its attributes: `Dom::attrs[start..end]` ([`Dom::attrs`]).
    attrs: (u32, u32),
    parent: Link,
    first_child: Link,
    last_child: Link,
    prev: Link,
    next: Link,
    /// Of a text node: white space the pre-pass folded into one character
    /// ([`super::prepass::fold_marker`]), in bytes beyond that character. It
    /// sits in what would be padding (the node stays 80 bytes).
    folded: u32,
}

impl Node {
    pub fn parent(&self) -> Option<NodeId> {
        self.parent.get()
    }

    pub fn first_child(&self) -> Option<NodeId> {
        self.first_child.get()
    }

    pub fn last_child(&self) -> Option<NodeId> {
        self.last_child.get()
    }

    pub fn prev(&self) -> Option<NodeId> {
        self.prev.get()
    }

    pub fn next(&self) -> Option<NodeId> {
        self.next.get()
    }
}

/// A parsed document.
#[derive(Debug)]
pub struct Dom {
    pub nodes: Vec<Node>,
    /// Every element's attributes, one element's after another's (one
    /// allocation for the page rather than one per element).
    attrs: Vec<Attribute>,
    /// The cap that stopped the parse, if one did.
    pub cut: Option<ParseCap>,
    /// What the text pass reads of every element's class names, found once
    /// ([`Dom::class_bits`]).
    class_bits: std::cell::OnceCell<Vec<u32>>,
}

fn blank_name() -> QualName {
    QualName::new(None, ns!(), local_name!(""))
}

fn node(kind: Kind, name: QualName, attrs: (u32, u32)) -> Node {
    Node {
        kind,
        name,
        attrs,
        parent: Link::NONE,
        first_child: Link::NONE,
        last_child: Link::NONE,
        prev: Link::NONE,
        next: Link::NONE,
        folded: 0,
    }
}

impl Dom {
    /// Parse a whole document. html5ever never fails; malformed input gives some tree.
    pub fn parse(html: &str) -> Dom {
        Dom::parse_folded(html, false)
    }

    /// [`Dom::parse`] of the pre-pass's output; `folded` says whether it
    /// folded white space runs into markers ([`super::prepass::Prepared::folded`]),
    /// which become one white space character each, the bytes they stood for
    /// kept in [`Dom::text_len`].
    pub fn parse_folded(html: &str, folded: bool) -> Dom {
        // About one node per tag (an end tag makes none, a text between
        // two tags one): room for them all at once rather than by doubling.
        let tags = memchr::memchr_iter(b'<', html.as_bytes()).count();
        let mut nodes = Vec::with_capacity(tags.min(MAX_NODES) + 1);
        // The pre-pass left about one attribute a tag.
        let attrs = Vec::with_capacity(tags.min(MAX_NODES));
        nodes.push(node(Kind::Document, blank_name(), (0, 0)));
        let sink = Sink {
            nodes: RefCell::new(nodes),
            attrs: RefCell::new(attrs),
            text_bytes: Cell::new(0),
            folded,
        };
        let mut parser = parse_document(sink, ParseOpts::default());
        let mut rest = html;
        let mut cut = None;
        while !rest.is_empty() {
            let mut n = rest.len().min(CHUNK);
            while !rest.is_char_boundary(n) {
                n += 1;
            }
            parser.process(StrTendril::from(&rest[..n]));
            rest = &rest[n..];
            let sink = &parser.tokenizer.sink.sink;
            if sink.nodes.borrow().len() >= MAX_NODES {
                cut = Some(ParseCap::DomNodes);
            } else if sink.text_bytes.get() >= MAX_TEXT_BYTES {
                cut = Some(ParseCap::Text);
            }
            if cut.is_some() && !rest.is_empty() {
                break;
            }
            cut = None;
        }
        let mut dom = parser.finish();
        dom.cut = cut;
        dom
    }

    /// Per node, bits that `build` finds in its class names; built on the
    /// first call and kept (the text pass asks about the same elements in
    /// several passes, and builds it with one function only).
    pub fn class_bits(&self, build: fn(&Dom) -> Vec<u32>) -> &[u32] {
        self.class_bits.get_or_init(|| build(self))
    }

    /// Local element name (`""` for non-elements).
    pub fn tag(&self, id: NodeId) -> &str {
        &self.nodes[id].name.local
    }

    /// Bytes of a text node's text as the page wrote it: white space the
    /// pre-pass folded counts in full, so that caps on lengths read the same
    /// whether or not it folded (0 for other nodes).
    pub fn text_len(&self, id: NodeId) -> usize {
        match &self.nodes[id].kind {
            Kind::Text(t) => t.len() + self.nodes[id].folded as usize,
            _ => 0,
        }
    }

    /// [`Dom::text`]'s length as the page wrote it ([`Dom::text_len`] of
    /// every text node under `id`), without building the text.
    pub fn written_len(&self, id: NodeId) -> usize {
        std::iter::once(id)
            .chain(self.descendants(id))
            .map(|d| self.text_len(d))
            .sum()
    }

    pub fn is_element(&self, id: NodeId) -> bool {
        matches!(self.nodes[id].kind, Kind::Element)
    }

    /// The attributes of `id` (those the pre-pass keeps).
    pub fn attrs(&self, id: NodeId) -> &[Attribute] {
        let (start, end) = self.nodes[id].attrs;
        &self.attrs[start as usize..end as usize]
    }

    /// The value of attribute `name` (one the pre-pass keeps:
    /// [`super::prepass::READ_ATTRS`]).
    pub fn attr(&self, id: NodeId, name: &str) -> Option<&str> {
        debug_assert!(
            super::prepass::READ_ATTRS.contains(&name),
            "{name} is left out by the pre-pass: add it to READ_ATTRS"
        );
        // Names are short: compared byte by byte, not through `memcmp`.
        let same =
            |a: &str| a.len() == name.len() && a.bytes().zip(name.bytes()).all(|(x, y)| x == y);
        self.attrs(id)
            .iter()
            .find(|a| same(&a.name.local))
            .map(|a| &*a.value)
    }

    pub fn children(&self, id: NodeId) -> Children<'_> {
        Children {
            dom: self,
            next: self.nodes[id].first_child(),
        }
    }

    /// The element's `class` and `id` attributes, lower-cased and joined by
    /// a space: what the class-name rules (chrome, bylines, dates) match.
    pub fn class_id(&self, id: NodeId) -> String {
        let mut s = String::new();
        if let Some(c) = self.attr(id, "class") {
            s.push_str(c);
        }
        if let Some(i) = self.attr(id, "id") {
            s.push(' ');
            s.push_str(i);
        }
        s.make_ascii_lowercase();
        s
    }

    /// Is `a` an ancestor of (or equal to) `b`?
    pub fn is_ancestor(&self, a: NodeId, b: NodeId) -> bool {
        a == b || self.ancestors(b).any(|c| c == a)
    }

    /// The ancestors of `id`, nearest first (not `id` itself).
    pub fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.nodes[id].parent(), |&p| self.nodes[p].parent())
    }

    /// `id` itself, then its ancestors, nearest first.
    pub fn self_and_ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::once(id).chain(self.ancestors(id))
    }

    /// The ancestors of `id`, nearest first, up to but not including `stop`
    /// or the document node (a walk that stays inside `<body>`).
    pub fn ancestors_until(&self, id: NodeId, stop: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.ancestors(id).take_while(move |&a| a != stop && a != 0)
    }

    /// The element children of `id`, in order.
    pub fn element_children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.children(id).filter(|&c| self.is_element(c))
    }

    /// All descendants of `id` in document order (not `id` itself).
    pub fn descendants(&self, id: NodeId) -> Descendants<'_> {
        Descendants {
            dom: self,
            root: id,
            next: self.nodes[id].first_child(),
        }
    }

    /// The next node in document order after `id`'s subtree, bounded by `root`.
    pub fn skip_subtree(&self, id: NodeId, root: NodeId) -> Option<NodeId> {
        let mut cur = id;
        loop {
            if cur == root {
                return None;
            }
            if let Some(n) = self.nodes[cur].next() {
                return Some(n);
            }
            cur = self.nodes[cur].parent()?;
        }
    }

    /// All text below `id`, concatenated as it appears.
    pub fn text(&self, id: NodeId) -> String {
        let mut out = String::new();
        if let Kind::Text(t) = &self.nodes[id].kind {
            out.push_str(t);
        }
        for d in self.descendants(id) {
            if let Kind::Text(t) = &self.nodes[d].kind {
                out.push_str(t);
            }
        }
        out
    }

    /// [`Dom::text`], or `None` as soon as it would exceed `max` bytes (so
    /// that probing many large ancestors stays cheap).
    pub fn text_within(&self, id: NodeId, max: usize) -> Option<String> {
        self.bounded_text(id, max, false)
    }

    /// [`Dom::text_within`] with a space wherever an element starts, so that
    /// words in separate elements (`<span>Author</span><a>Jane Doe</a>`) stay
    /// apart; runs of white space are left for the caller to collapse.
    pub fn spaced_text_within(&self, id: NodeId, max: usize) -> Option<String> {
        self.bounded_text(id, max, true)
    }

    fn bounded_text(&self, id: NodeId, max: usize, spaced: bool) -> Option<String> {
        let mut out = String::new();
        let mut seen = 0;
        for d in std::iter::once(id).chain(self.descendants(id)) {
            match &self.nodes[d].kind {
                Kind::Text(t) => {
                    // Counted as the page wrote it, folded white space included.
                    seen += self.text_len(d);
                    if seen > max {
                        return None;
                    }
                    out.push_str(t);
                }
                Kind::Element if spaced && !out.is_empty() => {
                    out.push(' ');
                    seen += 1;
                }
                _ => {}
            }
        }
        Some(out)
    }

    /// First element with this tag name anywhere in the document.
    pub fn find(&self, tag: &str) -> Option<NodeId> {
        // Names are interned: one atom comparison a node, not a string's.
        let want = html5ever::LocalName::from(tag);
        let is = |d: NodeId| self.is_element(d) && self.nodes[d].name.local == want;
        // Nodes are stored in the order they were made, which is document
        // order but where the tree builder moved some: when just one node
        // has the name, and it is in the tree, it is the first; else walk.
        let mut made = (1..self.nodes.len()).filter(|&d| is(d));
        match (made.next(), made.next()) {
            (None, _) => None,
            (Some(d), None) if self.ancestors(d).last() == Some(0) => Some(d),
            _ => self.descendants(0).find(|&d| is(d)),
        }
    }
}

/// Iterator over direct children.
pub struct Children<'a> {
    dom: &'a Dom,
    next: Option<NodeId>,
}

impl Iterator for Children<'_> {
    type Item = NodeId;
    fn next(&mut self) -> Option<NodeId> {
        let cur = self.next?;
        self.next = self.dom.nodes[cur].next();
        Some(cur)
    }
}

/// Pre-order iterator over a subtree, without recursion.
pub struct Descendants<'a> {
    dom: &'a Dom,
    root: NodeId,
    next: Option<NodeId>,
}

impl Descendants<'_> {
    /// Do not descend into the node last returned.
    pub fn skip_children_of(&mut self, id: NodeId) {
        self.next = self.dom.skip_subtree(id, self.root);
    }
}

impl Iterator for Descendants<'_> {
    type Item = NodeId;
    fn next(&mut self) -> Option<NodeId> {
        let cur = self.next?;
        let n = &self.dom.nodes[cur];
        self.next = match n.first_child() {
            Some(c) => Some(c),
            None => self.dom.skip_subtree(cur, self.root),
        };
        Some(cur)
    }
}

/// The html5ever tree sink that fills the arena.
struct Sink {
    nodes: RefCell<Vec<Node>>,
    /// [`Dom::attrs`].
    attrs: RefCell<Vec<Attribute>>,
    /// Text bytes appended so far.
    text_bytes: Cell<usize>,
    /// Whether text may hold the pre-pass's fold markers.
    folded: bool,
}

impl Sink {
    fn push(&self, n: Node) -> NodeId {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(n);
        nodes.len() - 1
    }

    fn detach(nodes: &mut [Node], id: NodeId) {
        let (parent, prev, next) = (nodes[id].parent, nodes[id].prev, nodes[id].next);
        if let Some(p) = prev.get() {
            nodes[p].next = next;
        } else if let Some(par) = parent.get() {
            nodes[par].first_child = next;
        }
        if let Some(n) = next.get() {
            nodes[n].prev = prev;
        } else if let Some(par) = parent.get() {
            nodes[par].last_child = prev;
        }
        nodes[id].parent = Link::NONE;
        nodes[id].prev = Link::NONE;
        nodes[id].next = Link::NONE;
    }

    fn append_child(nodes: &mut [Node], parent: NodeId, child: NodeId) {
        Self::detach(nodes, child);
        let last = nodes[parent].last_child;
        nodes[child].parent = Link::to(parent);
        nodes[child].prev = last;
        match last.get() {
            Some(l) => nodes[l].next = Link::to(child),
            None => nodes[parent].first_child = Link::to(child),
        }
        nodes[parent].last_child = Link::to(child);
    }

    fn insert_before(nodes: &mut [Node], sibling: NodeId, child: NodeId) {
        Self::detach(nodes, child);
        let parent = nodes[sibling].parent;
        let prev = nodes[sibling].prev;
        nodes[child].parent = parent;
        nodes[child].prev = prev;
        nodes[child].next = Link::to(sibling);
        nodes[sibling].prev = Link::to(child);
        match prev.get() {
            Some(p) => nodes[p].next = Link::to(child),
            None => {
                if let Some(par) = parent.get() {
                    nodes[par].first_child = Link::to(child);
                }
            }
        }
    }

    /// Append text to the node before which it lands, merging adjacent text.
    fn text_node(&self, text: StrTendril) -> NodeId {
        let (text, folded) = self.unfold(text);
        self.text_bytes
            .set(self.text_bytes.get() + text.len() + folded as usize);
        let mut n = node(Kind::Text(text), blank_name(), (0, 0));
        n.folded = folded;
        self.push(n)
    }

    /// Add `t` to the text node `to` (adjacent texts make one node).
    fn extend_text(&self, nodes: &mut [Node], to: NodeId, t: StrTendril) {
        let (t, folded) = self.unfold(t);
        if let Kind::Text(existing) = &mut nodes[to].kind {
            existing.push_tendril(&t);
        }
        nodes[to].folded = nodes[to].folded.saturating_add(folded);
        self.text_bytes
            .set(self.text_bytes.get() + t.len() + folded as usize);
    }

    /// `text` with each fold marker turned back into one white space
    /// character, and the bytes the markers stood for beyond that one.
    fn unfold(&self, text: StrTendril) -> (StrTendril, u32) {
        if !self.folded || memchr::memchr2(0xF3, 0xF4, text.as_bytes()).is_none() {
            return (text, 0);
        }
        // Most such texts are one marker: the tendril stays inline (no allocation).
        let mut out = StrTendril::new();
        let mut folded = 0u32;
        let mut rest: &str = &text;
        while let Some(at) = memchr::memchr2(0xF3, 0xF4, rest.as_bytes()) {
            out.push_slice(&rest[..at]);
            let c = rest[at..].chars().next().unwrap_or(' ');
            match super::prepass::unfold_marker(c) {
                Some((w, len)) => {
                    out.push_char(w);
                    folded = folded.saturating_add(len - 1);
                }
                None => out.push_char(c),
            }
            rest = &rest[at + c.len_utf8()..];
        }
        out.push_slice(rest);
        (out, folded)
    }
}

impl TreeSink for Sink {
    type Handle = NodeId;
    type Output = Dom;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Dom {
        Dom {
            nodes: self.nodes.into_inner(),
            attrs: self.attrs.into_inner(),
            cut: None,
            class_bits: std::cell::OnceCell::new(),
        }
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> NodeId {
        0
    }

    fn elem_name<'a>(&'a self, target: &'a NodeId) -> Ref<'a, QualName> {
        Ref::map(self.nodes.borrow(), |n| &n[*target].name)
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _: ElementFlags) -> NodeId {
        let range = {
            let mut all = self.attrs.borrow_mut();
            let start = all.len() as u32;
            all.extend(attrs);
            (start, all.len() as u32)
        };
        self.push(node(Kind::Element, name, range))
    }

    fn create_comment(&self, _text: StrTendril) -> NodeId {
        self.push(node(Kind::Other, blank_name(), (0, 0)))
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> NodeId {
        self.push(node(Kind::Other, blank_name(), (0, 0)))
    }

    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        match child {
            NodeOrText::AppendNode(c) => {
                Self::append_child(&mut self.nodes.borrow_mut(), *parent, c);
            }
            NodeOrText::AppendText(t) => {
                {
                    let mut nodes = self.nodes.borrow_mut();
                    if let Some(last) = nodes[*parent].last_child()
                        && matches!(nodes[last].kind, Kind::Text(_))
                    {
                        self.extend_text(&mut nodes, last, t);
                        return;
                    }
                }
                let id = self.text_node(t);
                Self::append_child(&mut self.nodes.borrow_mut(), *parent, id);
            }
        }
    }

    fn append_based_on_parent_node(
        &self,
        element: &NodeId,
        prev_element: &NodeId,
        child: NodeOrText<NodeId>,
    ) {
        let has_parent = self.nodes.borrow()[*element].parent().is_some();
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {}

    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        *target
    }

    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        let id = match new_node {
            NodeOrText::AppendNode(n) => n,
            NodeOrText::AppendText(t) => {
                {
                    let mut nodes = self.nodes.borrow_mut();
                    if let Some(prev) = nodes[*sibling].prev()
                        && matches!(nodes[prev].kind, Kind::Text(_))
                    {
                        self.extend_text(&mut nodes, prev, t);
                        return;
                    }
                }
                self.text_node(t)
            }
        };
        Self::insert_before(&mut self.nodes.borrow_mut(), *sibling, id);
    }

    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        // Rare (a second `<html>` or `<body>` tag): the element's
        // attributes move to the end, where the new ones can join them.
        let mut nodes = self.nodes.borrow_mut();
        let mut all = self.attrs.borrow_mut();
        let (start, end) = nodes[*target].attrs;
        let mut mine: Vec<Attribute> = all[start as usize..end as usize].to_vec();
        for a in attrs {
            if !mine.iter().any(|e| e.name == a.name) {
                mine.push(a);
            }
        }
        let start = all.len() as u32;
        all.extend(mine);
        nodes[*target].attrs = (start, all.len() as u32);
    }

    fn remove_from_parent(&self, target: &NodeId) {
        Self::detach(&mut self.nodes.borrow_mut(), *target);
    }

    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        let mut nodes = self.nodes.borrow_mut();
        while let Some(c) = nodes[*node].first_child() {
            Self::append_child(&mut nodes, *new_parent, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_tree_and_fixes_misnesting() {
        let dom = Dom::parse("<p>one <b>two<i>three</b> four</i><p>five");
        let body = dom.find("body").unwrap();
        let ps: Vec<_> = dom.children(body).collect();
        assert_eq!(ps.len(), 2);
        assert_eq!(dom.text(ps[0]), "one twothree four");
        assert_eq!(dom.text(ps[1]), "five");
    }

    #[test]
    fn folded_white_space_keeps_the_tree_and_its_lengths() {
        use crate::extract::prepass::{prepare, prepare_folding};
        let page = "<html><head>\n    <title>T</title>\n  </head>\n  <body>\n    \
            <div class=byline>\n      <span>By</span>\n      <a>Jane Doe</a>\n    </div>\n    \
            <!-- note -->\n    <script>x()</script>\n      <p>Words here.</p>\r\n        \
            <table>\n  <tr>\n    <td>\n      <em>cell</em>\n    </td>\n  </tr>\n</table>\n    \
            <pre>\n  a\n\n  b</pre>\n      <ul>\n        <li>one</li>\n        <li>two</li>\n      \
            </ul>\n  </body>\n</html>";
        let plain = Dom::parse(&prepare(page).html);
        let p = prepare_folding(page);
        assert!(p.html.len() < prepare(page).html.len());
        let folded = Dom::parse_folded(&p.html, p.folded);
        assert_eq!(plain.nodes.len(), folded.nodes.len());
        let squash = |s: String| s.split_whitespace().collect::<Vec<_>>().join(" ");
        for id in 0..plain.nodes.len() {
            assert_eq!(plain.tag(id), folded.tag(id));
            assert_eq!(plain.text_len(id), folded.text_len(id), "node {id}");
            assert_eq!(plain.written_len(id), folded.written_len(id), "node {id}");
            assert_eq!(squash(plain.text(id)), squash(folded.text(id)));
            for max in [10, 30, 60, 1000] {
                assert_eq!(
                    plain.spaced_text_within(id, max).is_some(),
                    folded.spaced_text_within(id, max).is_some(),
                    "node {id} within {max}"
                );
            }
        }
        let pre = folded.find("pre").unwrap();
        assert_eq!(folded.text(pre), "  a\n\n  b");
    }

    #[test]
    fn table_foster_parenting_keeps_text() {
        let dom = Dom::parse("<table>stray<tr><td>cell</td></tr></table>");
        let body = dom.find("body").unwrap();
        let t = dom.text(body);
        assert!(t.contains("stray") && t.contains("cell"), "{t}");
    }

    #[test]
    fn a_node_stays_small() {
        // What MAX_NODES's note says a node costs (besides its attributes).
        assert!(
            std::mem::size_of::<Node>() <= 80,
            "{}",
            std::mem::size_of::<Node>()
        );
    }

    #[test]
    fn find_gives_the_first_in_document_order() {
        // The second `em` is made last but moved before the table.
        let dom = Dom::parse("<table><tr><td><em>one</em></td></tr><em>two</em></table>");
        let em = dom.find("em").unwrap();
        assert_eq!(dom.text(em), "two");
        assert_eq!(dom.text(dom.find("td").unwrap()), "one");
        assert_eq!(dom.find("video"), None);
    }

    #[test]
    fn ancestor_walks_stop_where_asked() {
        let dom = Dom::parse("<div id=a><section id=b><p id=c>x <i>y</i></p>text</section></div>");
        let by_id = |v: &str| {
            dom.descendants(0)
                .find(|&d| dom.attr(d, "id") == Some(v))
                .unwrap()
        };
        let (a, b, c) = (by_id("a"), by_id("b"), by_id("c"));
        let body = dom.find("body").unwrap();
        let tags = |ids: Vec<NodeId>| ids.iter().map(|&i| dom.tag(i)).collect::<Vec<_>>();
        assert_eq!(
            tags(dom.self_and_ancestors(c).collect()),
            ["p", "section", "div", "body", "html", ""]
        );
        assert_eq!(dom.ancestors_until(c, body).collect::<Vec<_>>(), [b, a]);
        assert_eq!(dom.ancestors_until(c, a).collect::<Vec<_>>(), [b]);
        // Never the document node, whatever `stop` is.
        assert_eq!(
            tags(dom.ancestors_until(c, c).collect()),
            ["section", "div", "body", "html"]
        );
        assert_eq!(tags(dom.element_children(c).collect()), ["i"]);
        assert_eq!(dom.children(b).count(), 2);
        assert_eq!(dom.element_children(b).collect::<Vec<_>>(), [c]);
    }

    #[test]
    fn caps_cut_the_tree_and_say_so() {
        let small = Dom::parse("<p>one</p><p>two</p>");
        assert_eq!(small.cut, None);
        // Half a million elements: cut near the node cap, the start kept.
        let many = format!("<p>first</p>{}", "<span>a</span>".repeat(500_000));
        let dom = Dom::parse(&many);
        assert_eq!(dom.cut, Some(ParseCap::DomNodes));
        assert!(dom.nodes.len() < MAX_NODES + CHUNK, "{}", dom.nodes.len());
        let p = dom.find("p").expect("the start of the page is kept");
        assert_eq!(dom.text(p), "first");
        // One paragraph of 8 MB: cut near the text cap.
        let long = format!("<p>{}</p>", "word ".repeat(1_600_000));
        let dom = Dom::parse(&long);
        assert_eq!(dom.cut, Some(ParseCap::Text));
        let text: usize = dom
            .nodes
            .iter()
            .map(|n| match &n.kind {
                Kind::Text(t) => t.len(),
                _ => 0,
            })
            .sum();
        assert!(text <= MAX_TEXT_BYTES + CHUNK, "{text}");
        // A page just under the caps is parsed whole.
        let fits = "<span>a</span>".repeat(MAX_NODES / 4);
        assert_eq!(Dom::parse(&fits).cut, None);
    }
}
