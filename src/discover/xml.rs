//! What the two streaming XML readers (sitemaps, and the lenient feed reader)
//! share: an `NsReader` set to tolerate broken markup, the text of the field
//! being read (capped), and entity references resolved without expansion.

use std::borrow::Cow;
use std::io::BufRead;

use quick_xml::events::{BytesRef, Event};
use quick_xml::reader::NsReader;

/// Longest text kept for one field; a `loc` this long is not a real URL anyway.
pub(super) const MAX_FIELD: usize = 8 * 1024;

/// A reader that accepts a bare `&`, mismatched or unmatched end tags and
/// odd comments, as real feeds and sitemaps have them.
pub(super) fn tolerant_reader<R: BufRead>(source: R) -> NsReader<R> {
    let mut reader = NsReader::from_reader(source);
    let config = reader.config_mut();
    config.allow_dangling_amp = true;
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    config.check_comments = false;
    reader
}

/// The text read so far for each of the `N` fields of the entry being read,
/// by the field's number (a fieldless enum's `field as usize`).
pub(super) struct FieldTexts<const N: usize>([String; N]);

impl<const N: usize> Default for FieldTexts<N> {
    fn default() -> Self {
        FieldTexts(std::array::from_fn(|_| String::new()))
    }
}

impl<const N: usize> FieldTexts<N> {
    /// Append `text` to field `i`; a field never grows past [`MAX_FIELD`].
    pub(super) fn push(&mut self, i: usize, text: &str) {
        let slot = &mut self.0[i];
        if slot.len() + text.len() <= MAX_FIELD {
            slot.push_str(text);
        }
    }

    pub(super) fn get(&self, i: usize) -> &str {
        &self.0[i]
    }
}

/// After an end tag: one level up (`depth`), and the field opened at that
/// level closes.
pub(super) fn leave<F>(depth: &mut usize, field: &mut Option<(F, usize)>) {
    *depth = depth.saturating_sub(1);
    if field.as_ref().is_some_and(|(_, at)| at == depth) {
        *field = None;
    }
}

/// The text an event adds to the open field: text and CDATA as written, a
/// reference resolved by [`resolve_ref`], any other entity as `unknown`.
pub(super) fn text_of<'a>(
    event: &Event<'a>,
    unknown: Option<&'static str>,
) -> Option<Cow<'a, str>> {
    match event {
        Event::Text(t) => Some(t.xml10_content()),
        Event::CData(t) => Some(t.xml10_content()),
        Event::GeneralRef(r) => resolve_ref(r)
            .map(Cow::Owned)
            .or(unknown.map(Cow::Borrowed)),
        _ => None,
    }
}

/// The text of a character reference or one of the five predefined
/// entities; `None` for any other entity (`&nbsp;`, or a billion laughs),
/// which is never expanded.
fn resolve_ref(r: &BytesRef<'_>) -> Option<String> {
    match r.resolve_char_ref() {
        Ok(Some(c)) => Some(c.to_string()),
        Ok(None) => quick_xml::escape::resolve_predefined_entity(r).map(str::to_string),
        Err(_) => None,
    }
}
