//! Language of a page as an ISO 639-1 code.
//!
//! `whatlang` on the first ~2 KB of the main text decides when it is
//! confident; otherwise the page's own `<html lang>` (primary subtag) is
//! used, and failing that whatlang's best guess.

/// ISO 639-3 (whatlang) to ISO 639-1.
const CODES: &[(&str, &str)] = &[
    ("epo", "eo"),
    ("eng", "en"),
    ("rus", "ru"),
    ("cmn", "zh"),
    ("spa", "es"),
    ("por", "pt"),
    ("ita", "it"),
    ("ben", "bn"),
    ("fra", "fr"),
    ("deu", "de"),
    ("ukr", "uk"),
    ("kat", "ka"),
    ("ara", "ar"),
    ("hin", "hi"),
    ("jpn", "ja"),
    ("heb", "he"),
    ("yid", "yi"),
    ("pol", "pl"),
    ("amh", "am"),
    ("jav", "jv"),
    ("kor", "ko"),
    ("nob", "nb"),
    ("dan", "da"),
    ("swe", "sv"),
    ("fin", "fi"),
    ("tur", "tr"),
    ("nld", "nl"),
    ("hun", "hu"),
    ("ces", "cs"),
    ("ell", "el"),
    ("bul", "bg"),
    ("bel", "be"),
    ("mar", "mr"),
    ("kan", "kn"),
    ("ron", "ro"),
    ("slv", "sl"),
    ("hrv", "hr"),
    ("srp", "sr"),
    ("mkd", "mk"),
    ("lit", "lt"),
    ("lav", "lv"),
    ("est", "et"),
    ("tam", "ta"),
    ("vie", "vi"),
    ("urd", "ur"),
    ("tha", "th"),
    ("guj", "gu"),
    ("uzb", "uz"),
    ("pan", "pa"),
    ("aze", "az"),
    ("ind", "id"),
    ("tel", "te"),
    ("pes", "fa"),
    ("mal", "ml"),
    ("ori", "or"),
    ("mya", "my"),
    ("nep", "ne"),
    ("sin", "si"),
    ("khm", "km"),
    ("tuk", "tk"),
    ("aka", "ak"),
    ("zul", "zu"),
    ("sna", "sn"),
    ("afr", "af"),
    ("lat", "la"),
    ("slk", "sk"),
    ("cat", "ca"),
    ("tgl", "tl"),
    ("hye", "hy"),
    ("cym", "cy"),
];

/// How much text is looked at.
const SAMPLE_BYTES: usize = 2048;

/// Detect the language from the text, falling back to the `lang` attribute.
pub fn detect(text: &str, html_lang: Option<&str>) -> Option<String> {
    let mut cut = text.len().min(SAMPLE_BYTES);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let info = whatlang::detect(&text[..cut]);
    let guessed = info
        .as_ref()
        .and_then(|i| CODES.iter().find(|(l3, _)| *l3 == i.lang().code()))
        .map(|(_, l1)| l1.to_string());
    if info.as_ref().is_some_and(|i| i.is_reliable()) && guessed.is_some() {
        return guessed;
    }
    let declared = html_lang.and_then(|l| {
        let primary = l.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        (primary.len() == 2 && primary.bytes().all(|b| b.is_ascii_lowercase())).then_some(primary)
    });
    declared.or(guessed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_table() {
        let en = "The quick brown fox jumps over the lazy dog while the researchers \
                  explain how the new language model was trained on public data. It is \
                  the first time that the company has shared so much about its work.";
        let de = "Die Forscher erklären, wie das neue Sprachmodell mit öffentlichen \
                  Daten trainiert wurde und warum das für die Zukunft wichtig ist.";
        assert_eq!(detect(en, Some("de")).as_deref(), Some("en"));
        assert_eq!(detect(de, None).as_deref(), Some("de"));
        assert_eq!(detect("", Some("fr-CA")).as_deref(), Some("fr"));
        assert_eq!(detect("", Some("x-klingon")), None);
    }
}
