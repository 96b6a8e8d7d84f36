//! Bytes to text: choose the character encoding and decode.
//!
//! Precedence: a byte-order mark, bytes that are valid non-ASCII UTF-8
//! (mislabelled UTF-8 is far more common than legacy text that happens to
//! be valid UTF-8), the HTTP `Content-Type` charset, a
//! `<meta charset>` / `http-equiv` declaration near the top of the page,
//! valid UTF-8, a `chardetng` guess (with the URL's top-level domain as a
//! hint), and finally windows-1252. Decoding never fails: malformed bytes
//! become U+FFFD.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// How far into the page a `<meta charset>` is looked for. The HTML standard
/// says 1024 bytes; real pages with long heads declare it a little later.
const PRESCAN_BYTES: usize = 4096;

/// Decode `bytes`; returns the text and the encoding used.
pub fn decode<'a>(
    bytes: &'a [u8],
    header: Option<&str>,
    tld: Option<&str>,
) -> (Cow<'a, str>, &'static Encoding) {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return (text, enc);
    }
    // Bytes that are valid UTF-8 and not plain ASCII are UTF-8 whatever the
    // page declares: legacy encodings almost never form valid UTF-8 by chance,
    // while mislabelled UTF-8 pages are common.
    if !bytes.is_ascii()
        && let Ok(text) = std::str::from_utf8(bytes)
    {
        // Valid already: what decoding it again would give, without the pass.
        return (Cow::Borrowed(text), UTF_8);
    }
    let declared = header
        .and_then(|h| Encoding::for_label(h.trim().as_bytes()))
        .or_else(|| meta_charset(&bytes[..bytes.len().min(PRESCAN_BYTES)]))
        .map(|e| {
            // A page cannot really be UTF-16 if we read its meta tag as ASCII.
            if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE {
                UTF_8
            } else if e == encoding_rs::X_USER_DEFINED {
                WINDOWS_1252
            } else {
                e
            }
        });
    let enc = match declared {
        Some(e) => e,
        None if std::str::from_utf8(bytes).is_ok() => UTF_8,
        None => guess(bytes, tld),
    };
    let (text, _) = enc.decode_without_bom_handling(bytes);
    (text, enc)
}

fn guess(bytes: &[u8], tld: Option<&str>) -> &'static Encoding {
    let mut det = chardetng::EncodingDetector::new();
    det.feed(&bytes[..bytes.len().min(1 << 20)], true);
    // chardetng panics on a TLD with a dot or capitals: pass only a clean label.
    let tld = tld
        .map(|t| t.trim_matches('.').to_ascii_lowercase())
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric()));
    let enc = det.guess(tld.as_deref().map(str::as_bytes), true);
    if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
        WINDOWS_1252
    } else {
        enc
    }
}

/// Find a charset declared by a `<meta>` tag in the first bytes of a page.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let head = head.to_ascii_lowercase();
    let mut i = 0;
    while let Some(pos) = memchr::memmem::find(&head[i..], b"<meta").map(|p| p + i) {
        let end = memchr::memchr(b'>', &head[pos..]).map_or(head.len(), |e| pos + e);
        let tag = &head[pos..end];
        if let Some(label) = charset_label(tag)
            && let Some(e) = Encoding::for_label(label)
        {
            return Some(e);
        }
        i = end.max(pos + 1);
        if i >= head.len() {
            break;
        }
    }
    None
}

/// The label after `charset=` in a lower-cased tag.
fn charset_label(tag: &[u8]) -> Option<&[u8]> {
    let c = memchr::memmem::find(tag, b"charset")?;
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut j = c + 7;
    while j < tag.len() && space(tag[j]) {
        j += 1;
    }
    if tag.get(j) != Some(&b'=') {
        return None;
    }
    j += 1;
    while j < tag.len() && (space(tag[j]) || tag[j] == b'"' || tag[j] == b'\'') {
        j += 1;
    }
    let start = j;
    while j < tag.len()
        && (tag[j].is_ascii_alphanumeric() || matches!(tag[j], b'-' | b'_' | b':' | b'.'))
    {
        j += 1;
    }
    Some(&tag[start..j])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_table() {
        let latin = b"<meta charset=\"iso-8859-1\"><p>caf\xe9</p>";
        let cases: &[(&[u8], Option<&str>, &str, &str)] = &[
            (
                b"\xef\xbb\xbf<p>caf\xc3\xa9",
                Some("windows-1252"),
                "UTF-8",
                "caf\u{e9}",
            ),
            (latin, None, "windows-1252", "caf\u{e9}"),
            (latin, Some("utf-8"), "UTF-8", "caf\u{fffd}"),
            (
                b"<meta charset=gb2312><p>caf\xc3\xa9",
                None,
                "UTF-8",
                "caf\u{e9}",
            ),
            (
                b"<META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=Shift_JIS'>",
                None,
                "Shift_JIS",
                "Shift_JIS",
            ),
            (b"<p>caf\xc3\xa9</p>", None, "UTF-8", "caf\u{e9}"),
            (b"<meta charset=utf-16><p>x", None, "UTF-8", "<p>x"),
        ];
        for (bytes, header, enc, contains) in cases {
            let (text, e) = decode(bytes, *header, None);
            assert_eq!(e.name(), *enc, "{bytes:?}");
            assert!(text.contains(contains), "{text}");
        }
    }

    #[test]
    fn guesses_legacy_bytes_without_declarations() {
        let bytes = "<p>Gr\u{fc}\u{df}e aus M\u{fc}nchen, sch\u{f6}ne Stra\u{df}e und \u{e4}hnliche W\u{f6}rter.</p>"
            .chars()
            .map(|c| c as u32 as u8)
            .collect::<Vec<u8>>();
        let (text, _) = decode(&bytes, None, Some(".DE"));
        assert!(text.contains("M\u{fc}nchen"), "{text}");
    }
}
