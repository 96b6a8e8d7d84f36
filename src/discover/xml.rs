//! What the two streaming XML readers (sitemaps, and the lenient feed reader)
//! share: an `NsReader` set to tolerate broken markup, the text of the field
//! being read (capped), and entity references resolved without expansion.

use std::io::BufRead;

use quick_xml::events::BytesRef;
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

/// An entry whose text fields are filled from the document's text events.
pub(super) trait Fields {
    type Field: Copy;
    fn text_mut(&mut self, field: Self::Field) -> &mut String;
}

/// Append `text` to the open field (opened at some depth) of the open entry,
/// if both are open; a field never grows past [`MAX_FIELD`].
pub(super) fn push_text<E: Fields>(
    entry: Option<&mut E>,
    field: Option<(E::Field, usize)>,
    text: &str,
) {
    if let (Some(entry), Some((field, _))) = (entry, field) {
        let slot = entry.text_mut(field);
        if slot.len() + text.len() <= MAX_FIELD {
            slot.push_str(text);
        }
    }
}

/// The text of a character reference or one of the five predefined
/// entities; `None` for any other entity (`&nbsp;`, or a billion laughs),
/// which is never expanded.
pub(super) fn resolve_ref(r: &BytesRef<'_>) -> Option<String> {
    match r.resolve_char_ref() {
        Ok(Some(c)) => Some(c.to_string()),
        Ok(None) => quick_xml::escape::resolve_predefined_entity(r).map(str::to_string),
        Err(_) => None,
    }
}
