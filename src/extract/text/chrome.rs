//! What tags, ARIA roles and class names say about an element: chrome to
//! prune (navigation, sharing, comments, ads, hidden elements...), and the
//! weight a class name gives a scoring candidate.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use html5ever::local_name;

use crate::extract::dom::{Dom, Kind, NodeId};
use crate::extract::paywall::PAYWALL;
use crate::phrases::{ClassWords, Phrases, builder, lower};

/// The class word lists the text pass asks about every element, each a
/// bit of [`Dom::class_bits`]: the low half for its role names (class names and id less those
/// that name a feature, [`FEATURE_PREFIXES`]: an article item `no_caption`
/// is not a caption, a wrapper `has-sidebar` not a sidebar), the
/// high half for its whole [`Dom::class_id`].
#[derive(Clone, Copy)]
pub(super) enum Word {
    Strong,
    ArticleChrome,
    Weak,
    Likely,
    Positive,
    Negative,
    BodyBox,
    ShortBox,
    LikelyBody,
    Slides,
    Paywall,
    Caption,
}

/// `caption` anywhere in the names.
static CAPTION: Phrases = Phrases::new(&["caption"]);

/// A list of [`Word`]: its phrases, tokens and token starts.
type WordList = (
    &'static Phrases,
    &'static [&'static str],
    &'static [&'static str],
);

/// The lists in [`Word`]'s order.
fn word_lists() -> [WordList; 12] {
    let c = |w: &'static ClassWords| (&w.anywhere, w.tokens, w.token_starts);
    [
        c(&CHROME_STRONG),
        c(&ARTICLE_CHROME),
        c(&CHROME_WEAK),
        c(&LIKELY),
        c(&POSITIVE),
        c(&NEGATIVE),
        c(&BODY_BOX),
        c(&SHORT_BOX),
        c(&LIKELY_BODY),
        c(&SLIDES),
        (&PAYWALL, &[], &[]),
        (&CAPTION, &[], &[]),
    ]
}

/// Every phrase of every list in one automaton, and the bit of each; every
/// whole token and token start of the lists, with the bits of the lists
/// that hold it.
struct AllWords {
    automaton: AhoCorasick,
    bit: Vec<u16>,
    tokens: std::collections::HashMap<&'static str, u16, foldhash::fast::FixedState>,
    /// Token starts by their first byte: those opening with byte `b` are
    /// `starts[start_at[b]..start_at[b + 1]]` (a token is compared with
    /// the few that open as it does, not with all).
    starts: Vec<(&'static str, u16)>,
    start_at: [u16; 257],
    /// The bits of an empty token start, which every token opens with.
    empty_start: u16,
}

static ALL_WORDS: LazyLock<AllWords> = LazyLock::new(|| {
    let (mut phrases, mut bit) = (Vec::new(), Vec::new());
    for (i, (list, _, _)) in word_lists().iter().enumerate() {
        for p in list.list() {
            debug_assert!(!p.contains(char::is_whitespace), "{p}");
            phrases.push(p.to_string());
            bit.push(1u16 << i);
        }
    }
    let mut tokens = std::collections::HashMap::default();
    let mut starts: Vec<(&'static str, u16)> = Vec::new();
    for (i, (_, list_tokens, list_starts)) in word_lists().iter().enumerate() {
        for &t in *list_tokens {
            *tokens.entry(t).or_default() |= 1u16 << i;
        }
        for &s in *list_starts {
            match starts.iter_mut().find(|(x, _)| *x == s) {
                Some((_, b)) => *b |= 1 << i,
                None => starts.push((s, 1 << i)),
            }
        }
    }
    let empty_start = starts
        .iter()
        .filter(|(s, _)| s.is_empty())
        .fold(0, |bits, (_, b)| bits | b);
    starts.retain(|(s, _)| !s.is_empty());
    starts.sort_by_key(|(s, _)| s.as_bytes()[0]);
    let mut start_at = [0u16; 257];
    for (byte, at) in start_at.iter_mut().enumerate() {
        *at = starts.partition_point(|(s, _)| usize::from(s.as_bytes()[0]) < byte) as u16;
    }
    let mut b = builder();
    b.kind(Some(AhoCorasickKind::DFA));
    AllWords {
        automaton: b.build(&phrases).expect("a few hundred phrases"),
        bit,
        tokens,
        starts,
        start_at,
        empty_start,
    }
});

/// The lists (bits in [`Word`]'s order) that `names` matches as
/// [`ClassWords::is_match`] would, in one pass over it.
fn word_bits(names: &str) -> u16 {
    let all = &*ALL_WORDS;
    let mut bits = 0u16;
    for m in all.automaton.find_overlapping_iter(names) {
        bits |= all.bit[m.pattern().as_usize()];
    }
    // A list's whole tokens and token starts, all lists in one split.
    for t in names.split(|c: char| c.is_whitespace() || c == '_' || c == '-') {
        if let Some(b) = all.tokens.get(t) {
            bits |= b;
        }
        bits |= all.empty_start;
        let Some(&first) = t.as_bytes().first() else {
            continue;
        };
        let (from, to) = (
            all.start_at[usize::from(first)],
            all.start_at[usize::from(first) + 1],
        );
        for &(s, b) in &all.starts[usize::from(from)..usize::from(to)] {
            if bits & b != b && t.starts_with(s) {
                bits |= b;
            }
        }
    }
    bits
}

/// [`word_bits`] of every element's role names (low half) and class names
/// (high half). No phrase holds white space, so the bits of `class` and
/// `id` together are those of each apart; a page repeats its class names,
/// and each value is read once.
fn all_class_bits(dom: &Dom) -> Vec<u32> {
    let mut out = vec![0u32; dom.nodes.len()];
    // Class values are short and many: a fast hasher, not SipHash.
    let mut seen: std::collections::HashMap<&str, u32, foldhash::fast::FixedState> =
        std::collections::HashMap::default();
    for (id, slot) in out.iter_mut().enumerate() {
        if !dom.is_element(id) {
            continue;
        }
        for a in dom.attrs(id) {
            if a.name.local == local_name!("class") || a.name.local == local_name!("id") {
                *slot |= *seen.entry(&a.value).or_insert_with(|| value_bits(&a.value));
            }
        }
    }
    out
}

/// [`all_class_bits`] of one `class` or `id` value.
fn value_bits(value: &str) -> u32 {
    let lower = if value.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(value.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(value)
    };
    let raw = word_bits(&lower);
    let role = if lower.split_ascii_whitespace().any(is_feature_name) {
        let kept: Vec<&str> = lower
            .split_ascii_whitespace()
            .filter(|t| !is_feature_name(t))
            .collect();
        word_bits(&kept.join(" "))
    } else {
        raw
    };
    (u32::from(raw) << 16) | u32::from(role)
}

/// Do the role names of `id` ([`Word`]) hold a word of list `w`?
pub(super) fn role_has(dom: &Dom, id: NodeId, w: Word) -> bool {
    dom.class_bits(all_class_bits)[id] & (1 << w as u32) != 0
}

/// Do the class names and id of `id` ([`Dom::class_id`]) hold a word of
/// list `w`?
pub(super) fn names_have(dom: &Dom, id: NodeId, w: Word) -> bool {
    dom.class_bits(all_class_bits)[id] & (1 << (16 + w as u32)) != 0
}

tag_set! {
    /// Elements never part of article text.
    fn is_pruned_tag:
    "button",
    "select",
    "input",
    "textarea",
    "label",
    "script",
    "style",
    "noscript",
    "iframe",
    "svg",
    "canvas",
    "video",
    "audio",
    "object",
    "embed",
    "dialog",
    "menu",
    "template",
    "head",
    "title",
    "meta",
    "link",
    "option",
    "datalist",
    "map",
    "area",
    // MathML stays (formulas are text); its TeX source does not.
    "annotation",
    "annotation-xml",
    "picture",
    "source",
    "img",
    "figcaption",
}
/// Landmarks of page chrome: pruned unless they hold the article itself
/// (unclosed `<header>`s and page-wide `<form>`s are common).
pub(super) const LANDMARK_TAGS: &[&str] = &["nav", "header", "footer", "aside", "form"];
/// ARIA roles of chrome.
const PRUNED_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "dialog",
    "alertdialog",
    "menu",
    "menubar",
    "search",
    "alert",
    "status",
    "tooltip",
    "timer",
    "marquee",
    "tablist",
    "toolbar",
];
pub(super) static CHROME_STRONG: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "comment|kommentar|comentario|disqus|sidebar|related|share|sharing|social|newsletter|subscri|cookie|consent|breadcrumb|outbrain|taboola|promo|advert|sponsor|popular|trending|recommend|signup|sign-up|popup|modal|banner|author-?bio|about-?the-?author|skip-?link|print-?only|screen-?reader|sr-only|visually-?hidden|tag-?list|pagination|pager|toolbar|paywall|more-?stories|also-?read|see-?also|rating|login|follow-?us|caption|copyright|credit|image-?description|image-?annotation",
    ),
    tokens: &["ad", "ads", "tag", "tags"],
    token_starts: &[],
};
/// The class words that make even an `article` chrome: the panels of a
/// site's account and consent dialogs, marked up as `article`s (`<article
/// class="password-message-modal">`). Other class words do not prune an
/// `article`: its classes name the story's features (`post
/// comments-open`, `sidebar-left`) as often as not.
static ARTICLE_CHROME: ClassWords = ClassWords {
    anywhere: Phrases::pattern("modal|popup|pop-up|login|cookie|consent|signup|sign-up"),
    tokens: &[],
    token_starts: &[],
};
/// Is `id` an `article` that [`ARTICLE_CHROME`] names a dialog's panel?
pub(super) fn article_chrome(dom: &Dom, id: NodeId) -> bool {
    dom.tag(id) == "article" && role_has(dom, id, Word::ArticleChrome)
}
static CHROME_WEAK: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "footer|header|masthead|menu|navbar|widget|byline|dateline|timestamp|meta|hidden|remark|extra|supplement|shoutbox|combx|community|agegate|legend|author|date",
    ),
    tokens: &[],
    token_starts: &["nav"],
};
static LIKELY: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "article|body|content|main|post|story|entry|text|blog|column|shadow|prose",
    ),
    tokens: &[],
    token_starts: &[],
};
static POSITIVE: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|prose",
    ),
    tokens: &[],
    token_starts: &[],
};
static NEGATIVE: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "hidden|banner|combx|comment|com-|contact|foot|footer|footnote|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget|byline|author|dateline|writtenby",
    ),
    tokens: &[],
    token_starts: &[],
};

/// Boxes inside article bodies that are not the article: embedded-media
/// consent placeholders, donation appeals, expandable info and fact boxes,
/// inline teasers of other stories.
static BODY_BOX: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "info-?box|fact-?box|infokasten|accordion|donat|spende|support-?us|embed-?(consent|placeholder|privacy)|(consent|privacy)-?(placeholder|shield|overlay|embed)|two-?click|2-?click|external-?content|inline-?(teaser|promo|related)|lesetipp|lese-?empfehlung|mehr-?zum-?thema|lire-?aussi|a-?lire|leer-?mas|read-?(also|next)",
    ),
    tokens: &[],
    token_starts: &[],
};
/// Text of a consent placeholder: a consent or cookie word ...
static CONSENT_WORD: Phrases = Phrases::new(&[
    "zustimm",
    "einverstanden",
    "einwillig",
    "consent",
    "akzeptier",
    "accept",
    "aceptar",
    "acepto",
    "autoris",
    "cookies",
    "datenschutz",
    "privacy",
    "confidentialité",
    "privacidad",
    "consentement",
    "consentimiento",
]);
/// ... and what it would load.
static EMBED_WORD: Phrases = Phrases::new(&[
    "externe inhalt",
    "externen inhalt",
    "externer inhalt",
    "external content",
    "third-party content",
    "third party content",
    "drittanbieter",
    "youtube",
    "vimeo",
    "twitter",
    "instagram",
    "tiktok",
    "spotify",
    "soundcloud",
    "datawrapper",
    "podcast",
    "contenu externe",
    "contenus externes",
    "contenido externo",
    "contenidos externos",
    "eingebettet",
    "embedded content",
    "embedded video",
    "embedded post",
]);
/// A donation appeal.
static DONATE: Phrases = Phrases::new(&[
    "jetzt spenden",
    "spenden sie",
    "unterstützen sie uns",
    "unterstützen sie unsere",
    "unterstützen sie unseren",
    "unterstützen sie unabhängigen",
    "donate now",
    "donate today",
    "make a donation",
    "support our journalism",
    "support independent journalism",
    "faire un don",
    "soutenez -nous",
    "soutenez notre",
    "haz una donación",
    "dona ahora",
    "apoya nuestro",
    "apoya el periodismo",
    "become a supporter",
    "werden sie unterstützer",
    "werden sie jetzt unterstützer",
    "devenez donateur",
    "faites un don",
    "hazte donante",
    "寄付で応援",
    "寄付をお願い",
]);
/// Longest text (visible characters) of a box judged by its text.
const BOX_TEXT: u32 = 700;

/// Short boxes named for what they promote rather than tell: a video's
/// teaser (its poster, title and duration), a membership or contribution
/// appeal. Only a box of at most [`BOX_TEXT`] characters: a long one so
/// named may be a video page's story.
static SHORT_BOX: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "video-?(teaser|promo|box|module|embed|player|wrapper|container)|membership|member-?(cta|offer|pitch|promo|signup|box)|contribution|supporter-?(box|cta|promo)|offer-?(box|teaser)",
    ),
    tokens: &[],
    token_starts: &[],
};

/// The label of a line that points to another story (`<p><b>Read
/// more:</b> <a>Other story</a></p>`).
static RELATED_LABEL: Phrases = Phrases::new(&[
    "read more",
    "read also",
    "also read",
    "related",
    "see also",
    "lesen sie auch",
    "lesen sie mehr",
    "mehr zum thema",
    "auch interessant",
    "à lire aussi",
    "lire aussi",
    "voir aussi",
    "lea también",
    "lee también",
    "te puede interesar",
    "leer más",
    "leggi anche",
    "leia também",
    "lees ook",
    "関連記事",
    "あわせて読みたい",
    "相关阅读",
    "延伸阅读",
    "관련 기사",
]);

/// Most characters of a line pointing to another story ([`related_line`]).
const RELATED_LINE_CHARS: u32 = 300;

/// Is the paragraph `id` a line that points to another story: a label
/// ([`RELATED_LABEL`]) and a link, no other words?
fn related_line(dom: &Dom, id: NodeId, text: u32) -> bool {
    if text > RELATED_LINE_CHARS {
        return false;
    }
    let Some(t) = dom.text_within(id, 4 * RELATED_LINE_CHARS as usize) else {
        return false;
    };
    let t = lower(t.trim());
    let label = std::cell::Cell::new(0);
    if !RELATED_LABEL.opens(&t, |_, phrase| {
        label.set(label.get().max(phrase.chars().count()));
        true
    }) {
        return false;
    }
    let label = label.get();
    let (mut all, mut linked) = (0usize, 0usize);
    for d in dom.descendants(id) {
        if let Kind::Text(x) = &dom.nodes[d].kind {
            let n = x.trim().chars().count();
            all += n;
            if dom
                .ancestors(d)
                .take_while(|&a| a != id)
                .any(|a| dom.tag(a) == "a")
            {
                linked += n;
            }
        }
    }
    linked > 0 && all - linked <= label + 2
}

/// A members-only sign-up pitch, by its text (in a box of its own: a
/// heading or a link beside the words).
static MEMBER_PITCH: Phrases = Phrases::new(&[
    "become a member",
    "members-only",
    "members only",
    "for members",
    "join today",
    "join now",
    "werden sie mitglied",
    "nur für mitglieder",
    "jetzt mitglied werden",
    "devenez membre",
    "réservé aux membres",
    "hazte socio",
    "solo para socios",
    "hazte miembro",
    "diventa socio",
    "torne-se membro",
    "word lid",
    "会員登録",
    "会員限定",
]);

/// Which kinds of box judged by their text ([`body_box`]) a page can hold
/// at all: their phrases anywhere in the text of its body. Each element's
/// text is a stretch of the body's, so a phrase missing from the body's
/// text is missing from every element's, and most pages need no element's
/// text read. Where the page has some, the phrases found ([`BoxWords::hits`])
/// say which elements' stretches hold one: only those are read.
#[derive(Default)]
pub(super) struct BoxWords {
    donate: bool,
    consent: bool,
    member: bool,
    related: bool,
    /// Per node, where its text starts and ends in the body's text, lowered
    /// node by node (lowering a whole text or its parts differs only in the
    /// Greek final sigma, which no phrase holds); empty when no phrase
    /// was found (nothing to place).
    span: Vec<(u32, u32)>,
    /// Every phrase found in that text, as (start, end, its list's bit), by start.
    hits: Vec<(u32, u32, u8)>,
}

/// The phrases of the text-judged boxes in one automaton (a page's whole
/// text is read once), and the list of each: donation, consent, embed,
/// membership, related line.
static BOX_PHRASES: LazyLock<(AhoCorasick, Vec<u8>)> = LazyLock::new(|| {
    let (mut phrases, mut list) = (Vec::new(), Vec::new());
    for (i, words) in [
        &DONATE,
        &CONSENT_WORD,
        &EMBED_WORD,
        &MEMBER_PITCH,
        &RELATED_LABEL,
    ]
    .iter()
    .enumerate()
    {
        for p in words.list() {
            phrases.push(p.to_string());
            list.push(1u8 << i);
        }
    }
    let mut b = builder();
    b.kind(Some(AhoCorasickKind::DFA));
    (b.build(&phrases).expect("a few hundred phrases"), list)
});

impl BoxWords {
    /// `order`: the body, then its descendants in document order.
    pub(super) fn new(dom: &Dom, order: &[NodeId]) -> BoxWords {
        // The text's length after each node of `order`.
        let mut ends = Vec::with_capacity(order.len());
        let mut t = String::new();
        for &id in order {
            if let Kind::Text(s) = &dom.nodes[id].kind {
                let at = t.len();
                if s.is_ascii() {
                    t.push_str(s);
                    t[at..].make_ascii_lowercase();
                } else {
                    t.push_str(&lower(s));
                }
            }
            ends.push(t.len() as u32);
        }
        let (automaton, list) = &*BOX_PHRASES;
        let mut found = 0u8;
        let mut hits = Vec::new();
        for m in automaton.find_overlapping_iter(&t) {
            let bit = list[m.pattern().as_usize()];
            found |= bit;
            hits.push((m.start() as u32, m.end() as u32, bit));
        }
        hits.sort_unstable();
        // Spans are read only to place the phrases found: most pages have none.
        let mut span = Vec::new();
        if !hits.is_empty() {
            span = vec![(0u32, 0u32); dom.nodes.len()];
            let mut at = 0;
            for (&id, &end) in order.iter().zip(&ends) {
                span[id] = (at, end);
                at = end;
            }
            // A subtree's text ends where its last text does.
            for &id in order.iter().skip(1).rev() {
                if let Some(p) = dom.nodes[id].parent() {
                    span[p].1 = span[p].1.max(span[id].1);
                }
            }
        }
        BoxWords {
            donate: found & 1 != 0,
            consent: found & 0b110 == 0b110,
            member: found & 0b1000 != 0,
            related: found & 0b10000 != 0,
            span,
            hits,
        }
    }

    /// The lists (bits) of the phrases found wholly within the text of `id`.
    fn within(&self, id: NodeId) -> u8 {
        let Some(&(s, e)) = self.span.get(id) else {
            return 0;
        };
        let first = self.hits.partition_point(|h| h.0 < s);
        self.hits[first..]
            .iter()
            .take_while(|h| h.0 < e)
            .filter(|h| h.1 <= e)
            .fold(0, |bits, h| bits | h.2)
    }

    fn any(&self) -> bool {
        self.donate || self.consent || self.member
    }
}

/// Most paragraphs of prose (`p` of [`BOX_PROSE_CHARS`] or more) of a box
/// judged by its text: a box is a few lines of its own (a notice, a
/// button's label, a link), and a block of more paragraphs that holds
/// such words (a short story's whole body) is not one.
const BOX_PARAS: u32 = 2;
/// Least length of a paragraph of prose ([`BOX_PARAS`]), weighed as
/// [`crate::extract::weighted_len`] weighs.
const BOX_PROSE_CHARS: usize = 80;

/// Paragraphs of prose below `id` ([`BOX_PARAS`]).
fn prose_paras(dom: &Dom, id: NodeId) -> u32 {
    let mut n = 0;
    for d in dom.descendants(id) {
        if dom.tag(d) == "p"
            && dom
                .text_within(d, 4 * BOX_PROSE_CHARS)
                .is_none_or(|t| crate::extract::weighted_len(t.trim()) >= BOX_PROSE_CHARS)
        {
            n += 1;
        }
    }
    n
}

/// Is `id` a box inside the body that is not the article (see
/// [`BODY_BOX`]), by its class names or, for a short block of few
/// paragraphs, by its text? `text` is its visible length.
pub(super) fn body_box(dom: &Dom, id: NodeId, text: u32, paras: u32, words: &BoxWords) -> bool {
    let tag = dom.tag(id);
    if !matches!(
        tag,
        "div" | "section" | "aside" | "figure" | "details" | "p" | "span"
    ) {
        return false;
    }
    if tag == "p" && words.related && words.within(id) & 0b10000 != 0 && related_line(dom, id, text)
    {
        return true;
    }
    let body = names_have(dom, id, Word::LikelyBody);
    if names_have(dom, id, Word::BodyBox) && !body {
        return true;
    }
    if text == 0 || text > BOX_TEXT {
        return false;
    }
    if names_have(dom, id, Word::ShortBox) && !body {
        return true;
    }
    if !words.any() || (paras > BOX_PARAS && prose_paras(dom, id) > BOX_PARAS) {
        return false;
    }
    // Which phrases its text holds, from the page's ([`BoxWords::within`]):
    // most elements hold none and need not be read.
    let inside = words.within(id);
    if !((words.donate && inside & 1 != 0)
        || (words.consent && inside & 0b110 == 0b110)
        || (words.member && inside & 0b1000 != 0))
    {
        return false;
    }
    let Some(t) = dom.text_within(id, 4 * BOX_TEXT as usize) else {
        return false;
    };
    let t = lower(&t);
    (words.donate && DONATE.contains(&t))
        || (words.consent && CONSENT_WORD.contains(&t) && EMBED_WORD.contains(&t))
        || (words.member
            && matches!(tag, "div" | "section" | "aside")
            && dom.element_children(id).nth(1).is_some()
            && MEMBER_PITCH.contains(&t))
}

/// Class names of the article body itself (`article-body`), which a box
/// word inside them (`article-body--accordion`) does not make a box.
static LIKELY_BODY: ClassWords = ClassWords {
    anywhere: Phrases::pattern("article-?body|entry-?content|post-?content|story-?body"),
    tokens: &[],
    token_starts: &[],
};

/// Class names of slideshows and listicles, whose captions and hidden
/// slides are the article.
static SLIDES: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "slide-?show|gallery|galerie|carousel|swiper|diashow|diaporama|listicle|fotostrecke|klickstrecke|photo-?story|slider",
    ),
    tokens: &["slide", "slides"],
    token_starts: &[],
};

/// Is `id` a slideshow: named as one, with at least three slides (its
/// element children, or those of its one wrapper)?
pub(super) fn is_slideshow(dom: &Dom, id: NodeId) -> bool {
    if !names_have(dom, id, Word::Slides) {
        return false;
    }
    let kids: Vec<NodeId> = dom.element_children(id).collect();
    match kids.as_slice() {
        [one] => dom.element_children(*one).count() >= 3,
        k => k.len() >= 3,
    }
}

/// Is the element pruned only for being hidden or a caption (what a
/// slideshow or a paywalled part may hold as its text)?
pub(super) fn hidden_or_caption(dom: &Dom, id: NodeId) -> bool {
    is_hidden(dom, id) || dom.tag(id) == "figcaption" || names_have(dom, id, Word::Caption)
}

pub(super) fn is_hidden(dom: &Dom, id: NodeId) -> bool {
    // One look at each attribute (an element has each name once), by atom.
    dom.attrs(id).iter().any(|a| {
        let name = &a.name.local;
        if *name == local_name!("hidden") {
            true
        } else if *name == local_name!("aria-hidden") {
            &*a.value == "true" && dom.tag(id) != "span"
        } else if *name == local_name!("style") {
            let s: String = a.value.chars().filter(|c| !c.is_whitespace()).collect();
            let s = s.to_ascii_lowercase();
            s.contains("display:none") || s.contains("visibility:hidden")
        } else {
            false
        }
    })
}

/// Tag-level pruning (no class names).
pub(super) fn tag_pruned(dom: &Dom, id: NodeId) -> bool {
    let tag = dom.tag(id);
    (is_pruned_tag(tag) && !(tag == "figcaption" && caption_prose(dom, id))) || is_hidden(dom, id)
}

/// Least words of a caption kept as text ([`caption_prose`]).
const CAPTION_WORDS: usize = 15;

/// Is a caption (`figcaption`, or an element named a caption) a sentence
/// of the story: only text and inline markup, at least [`CAPTION_WORDS`]
/// words, with a full stop? Such a caption tells what the picture shows in
/// the story's own words. A shorter one is a label or a credit, and one
/// holding blocks is a box (an embed's consent placeholder, a gallery);
/// both stay pruned.
pub(super) fn caption_prose(dom: &Dom, id: NodeId) -> bool {
    let inline_only = dom
        .descendants(id)
        .filter(|&d| dom.is_element(d))
        .all(|d| is_inline_tag(dom.tag(d)));
    if !inline_only {
        return false;
    }
    dom.spaced_text_within(id, 4000)
        .is_some_and(|t| spaced_sentence(&t, CAPTION_WORDS))
}

/// Has `t` at least `words` words (split at white space) and a full stop,
/// a question or exclamation mark?
pub(super) fn spaced_sentence(t: &str, words: usize) -> bool {
    let t = t.trim();
    t.split_whitespace().nth(words - 1).is_some()
        && (t.contains(". ") || t.ends_with(['.', '!', '?']))
}

tag_set! {
    /// Markup inside a line of text.
    fn is_inline_tag:
    "a", "em", "i", "b", "strong", "span", "br", "small", "cite", "abbr", "sup", "sub", "q",
}

/// Chrome by landmark tag, ARIA role or class name.
pub(super) fn chrome(dom: &Dom, id: NodeId) -> bool {
    landmark(dom, id)
        || dom
            .attr(id, "role")
            .is_some_and(|r| PRUNED_ROLES.contains(&r.trim().to_ascii_lowercase().as_str()))
        || class_pruned(dom, id)
}

pub(super) fn class_pruned(dom: &Dom, id: NodeId) -> bool {
    if matches!(dom.tag(id), "html" | "body" | "main" | "a") {
        return false;
    }
    if dom.class_bits(all_class_bits)[id] & 0xffff == 0 {
        return false;
    }
    if dom.tag(id) == "article" {
        return role_has(dom, id, Word::ArticleChrome);
    }
    let has = |w| role_has(dom, id, w);
    let hit = (has(Word::Strong) && !(has(Word::Caption) && caption_prose(dom, id)))
        || (has(Word::Weak) && !has(Word::Likely) && !names_a_part(dom, id));
    hit && !in_code(dom, id)
}

/// Levels from a highlighted token up to its `code` or `pre`.
const CODE_LEVELS: usize = 6;

/// Is `id` inside a `pre` or `code` (within [`CODE_LEVELS`])? There class
/// names are a syntax highlighter's tokens (`token comment`, `hljs-meta`,
/// `tag`), and their text is the code's.
fn in_code(dom: &Dom, id: NodeId) -> bool {
    dom.ancestors(id)
        .take(CODE_LEVELS)
        .any(|a| matches!(dom.tag(a), "pre" | "code"))
}

/// Does a weak chrome word on `id` name its part in a table of data or a
/// sentence rather than page chrome? A paragraph's opening dateline
/// ([`opens_with_dateline`]) is the sentence's. The cells and rows of a table of [`DATA_ROWS`] rows or
/// more are named for their place (`header_cell`, a `date` column, a
/// `footer` row of totals); a table of one or two rows is a layout's line
/// of page furniture (date, author, comment count) as often.
fn names_a_part(dom: &Dom, id: NodeId) -> bool {
    if opens_with_dateline(dom, id) {
        return true;
    }
    matches!(dom.tag(id), "td" | "th" | "tr")
        && dom
            .ancestors(id)
            .take(TABLE_LEVELS)
            .find(|&a| dom.tag(a) == "table")
            .is_some_and(|t| {
                dom.descendants(t)
                    .filter(|&d| dom.tag(d) == "tr")
                    .nth(DATA_ROWS - 1)
                    .is_some()
            })
}

/// Is `id` the dateline that opens a paragraph (`<p><span
/// class="dateline">CAIRO —</span> Gunmen opened fire...`)? A phrase of at
/// most [`DATELINE_WORDS`] words ending in a dash, the first thing in the
/// `p`: the place the story was filed from, the start of its first
/// sentence.
fn opens_with_dateline(dom: &Dom, id: NodeId) -> bool {
    if !matches!(dom.tag(id), "span" | "b" | "strong" | "em" | "i") {
        return false;
    }
    let Some(p) = dom.nodes[id].parent().filter(|&p| dom.tag(p) == "p") else {
        return false;
    };
    let first = dom.children(p).find(|&c| match &dom.nodes[c].kind {
        Kind::Text(t) => !t.trim().is_empty(),
        Kind::Element => true,
        _ => false,
    });
    let text = dom.text(id);
    let text = text.trim();
    first == Some(id)
        && text.ends_with(['—', '–', '-'])
        && text.split_whitespace().count() <= DATELINE_WORDS
        && dom.nodes[id].next().is_some()
}

/// Most words of a dateline ([`opens_with_dateline`]): `WASHINGTON (AP) —`.
const DATELINE_WORDS: usize = 5;

/// Least rows of a table of data ([`names_a_part`]).
const DATA_ROWS: usize = 3;
/// Levels from a cell up to its table (`table > tbody > tr > td`).
const TABLE_LEVELS: usize = 4;

pub(super) fn class_weight(dom: &Dom, id: NodeId) -> f64 {
    let mut w = 0.0;
    if role_has(dom, id, Word::Negative) {
        w -= 25.0;
    }
    if role_has(dom, id, Word::Positive) {
        w += 25.0;
    }
    w
}

/// Prefixes of class names that tell what an element has or lacks, not
/// what it is: `no_caption`, `has-sidebar`, `with-comments`.
const FEATURE_PREFIXES: &[&str] = &[
    "no-", "no_", "has-", "has_", "with-", "with_", "without-", "without_",
];

fn is_feature_name(name: &str) -> bool {
    FEATURE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A landmark of page chrome by its tag ([`LANDMARK_TAGS`]), but for a
/// `header` that holds a sentence of prose as its own text: the summary set
/// at the top of an article body, not a site's or a story's heading block.
pub(super) fn landmark(dom: &Dom, id: NodeId) -> bool {
    let tag = dom.tag(id);
    LANDMARK_TAGS.contains(&tag) && !(tag == "header" && holds_prose(dom, id))
}

/// Least length of the prose a `header` holds as its own text.
const HEADER_PROSE_CHARS: usize = 80;

fn holds_prose(dom: &Dom, id: NodeId) -> bool {
    dom.children(id).any(|c| match &dom.nodes[c].kind {
        Kind::Text(t) => {
            let t = t.trim();
            t.len() >= HEADER_PROSE_CHARS && (t.contains(". ") || t.ends_with('.'))
        }
        _ => false,
    })
}

#[cfg(test)]
mod phrase_tests {
    //! The box phrase lists held to the regexes they replaced.
    use regex::Regex;

    use super::*;
    use crate::phrases::oracle::texts;

    fn same(list: &Phrases, regex: &str) {
        let re = Regex::new(regex).unwrap();
        let mut phrases = list.list().to_vec();
        let words: Vec<String> = regex
            .trim_start_matches("(?i)")
            .split(['|', '(', ')'])
            .map(str::to_string)
            .collect();
        phrases.extend(words.iter().map(String::as_str));
        for t in texts(&phrases) {
            assert_eq!(
                list.contains(&lower(&t)),
                re.is_match(&t),
                "{regex} on {t:?}"
            );
        }
    }

    #[test]
    fn class_words_match_their_regexes() {
        for (words, regex) in [
            (
                &CHROME_STRONG,
                r"comment|kommentar|comentario|disqus|sidebar|related|share|sharing|social|newsletter|subscri|cookie|consent|breadcrumb|outbrain|taboola|promo|advert|sponsor|popular|trending|recommend|signup|sign-up|popup|modal|(^|[\s_-])ads?($|[\s_-])|banner|author-?bio|about-?the-?author|skip-?link|print-?only|screen-?reader|sr-only|visually-?hidden|(^|[\s_-])tags?($|[\s_-])|tag-?list|pagination|pager|toolbar|paywall|more-?stories|also-?read|see-?also|rating|login|follow-?us|caption|copyright|credit|image-?description|image-?annotation",
            ),
            (
                &CHROME_WEAK,
                r"footer|header|masthead|menu|(^|[\s_-])nav|navbar|widget|byline|dateline|timestamp|meta|hidden|remark|extra|supplement|shoutbox|combx|community|agegate|legend|author|date",
            ),
            (
                &LIKELY,
                r"article|body|content|main|post|story|entry|text|blog|column|shadow|prose",
            ),
            (
                &POSITIVE,
                r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|prose",
            ),
            (
                &NEGATIVE,
                r"hidden|banner|combx|comment|com-|contact|foot|footer|footnote|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget|byline|author|dateline|writtenby",
            ),
            (
                &BODY_BOX,
                r"info-?box|fact-?box|infokasten|accordion|donat|spende|support-?us|embed-?(consent|placeholder|privacy)|(consent|privacy)-?(placeholder|shield|overlay|embed)|two-?click|2-?click|external-?content|inline-?(teaser|promo|related)|lesetipp|lese-?empfehlung|mehr-?zum-?thema|lire-?aussi|a-?lire|leer-?mas|read-?(also|next)",
            ),
            (
                &LIKELY_BODY,
                r"article-?body|entry-?content|post-?content|story-?body",
            ),
            (
                &SLIDES,
                r"slide-?show|gallery|galerie|carousel|swiper|diashow|diaporama|listicle|fotostrecke|klickstrecke|photo-?story|(^|[\s_-])slides?($|[\s_-])|slider",
            ),
        ] {
            let re = Regex::new(regex).unwrap();
            for n in crate::phrases::oracle::class_texts(&words.anywhere.list()) {
                assert_eq!(words.is_match(&n), re.is_match(&n), "{regex} on {n:?}");
            }
        }
    }

    #[test]
    fn box_words_match_their_regexes() {
        same(
            &CONSENT_WORD,
            r"(?i)(zustimm|einverstanden|einwillig|consent|akzeptier|accept|aceptar|acepto|autoris|cookies|datenschutz|privacy|confidentialité|privacidad|consentement|consentimiento)",
        );
        same(
            &EMBED_WORD,
            r"(?i)(externe[nr]? inhalt|external content|third[- ]party content|drittanbieter|youtube|vimeo|twitter|instagram|tiktok|spotify|soundcloud|datawrapper|podcast|contenu externe|contenus externes|contenido externo|contenidos externos|eingebettet|embedded (content|video|post))",
        );
        same(
            &DONATE,
            r"(?i)(jetzt spenden|spenden sie|unterstützen sie (uns|unsere|unseren|unabhängigen)|donate (now|today)|make a donation|support (our|independent) journalism|faire un don|soutenez (-nous|notre)|haz una donación|dona ahora|apoya (nuestro|el periodismo)|become a supporter|werden sie (jetzt )?unterstützer|devenez donateur|faites un don|hazte donante|寄付で応援|寄付をお願い)",
        );
    }
}

#[cfg(test)]
mod bits_tests {
    use super::*;

    #[test]
    fn box_phrases_hold_no_sigma_and_are_found_within_elements() {
        // Text lowered node by node differs from text lowered whole only in
        // the Greek final sigma ([`BoxWords`]).
        for p in [
            &DONATE,
            &CONSENT_WORD,
            &EMBED_WORD,
            &MEMBER_PITCH,
            &RELATED_LABEL,
        ] {
            assert!(p.list().iter().all(|x| !x.contains(['σ', 'ς'])));
        }
        let dom = Dom::parse(
            "<body><div id=a><p>Jetzt <b>SPENDEN</b></p></div><div id=b>Jetzt spen</div><div id=c>den</div></body>",
        );
        let body = dom.find("body").unwrap();
        let mut order = vec![body];
        order.extend(dom.descendants(body));
        let words = BoxWords::new(&dom, &order);
        let by_id = |v: &str| {
            order
                .iter()
                .copied()
                .find(|&d| dom.attr(d, "id") == Some(v))
                .unwrap()
        };
        assert!(words.donate);
        assert_eq!(words.within(by_id("a")) & 1, 1);
        // "jetzt spen" + "den": a phrase across two elements is in neither.
        assert_eq!(words.within(by_id("b")), 0);
        assert_eq!(words.within(by_id("c")), 0);
    }

    #[test]
    fn class_bits_match_the_lists() {
        let mut all: Vec<String> = [
            "teaser-row",
            "video-teaser",
            "crawler-post-meta",
            "ad",
            "main-nav x",
            "no_caption story-item",
        ]
        .map(String::from)
        .to_vec();
        // Every token start, opening a token and inside one.
        for (_, _, starts) in word_lists() {
            for s in starts {
                all.push(format!("x {s}y"));
                all.push(format!("y{s} z"));
            }
        }
        for names in &all {
            let names = names.as_str();
            let b = word_bits(names);
            for (i, (list, tokens, starts)) in word_lists().iter().enumerate() {
                let w = ClassWords {
                    anywhere: Phrases::new(&[]),
                    tokens,
                    token_starts: starts,
                };
                let want = list.contains(names) || w.is_match(names);
                assert_eq!(b & (1 << i) != 0, want, "{names} list {i}");
            }
        }
    }
}
