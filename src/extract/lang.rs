//! Language of a page as an ISO 639-1 code.
//!
//! `whatlang` on ~2 KB of the main text's prose decides when it is
//! confident; otherwise the page's own `<html lang>` (primary subtag) is
//! used, and failing that whatlang's best guess.
//!
//! The sample is the text's paragraphs that read as sentences (enough
//! words, few code or markup characters), in order: a page whose text opens
//! with edition menus and an inline script (an English newspaper page read
//! as French by its first 2 KB) is judged by its story.

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

/// Words a paragraph needs to be sampled as prose.
const PROSE_WORDS: usize = 8;
/// Prose sampled below this many bytes: the text's opening is used instead.
const MIN_PROSE_SAMPLE: usize = 200;

/// Whether a paragraph reads as sentences: at least `PROSE_WORDS` words (or,
/// in scripts without spaces, 72 bytes: about 24 characters), a sentence
/// end, and under 2% of its bytes code or markup punctuation. Menus have no
/// sentence end; scripts are mostly punctuation.
fn reads_as_prose(p: &str) -> bool {
    let words = p.split_whitespace().count();
    if words < PROSE_WORDS && p.len() < PROSE_WORDS * 3 * 3 {
        return false;
    }
    if !p.contains(['.', '!', '?', '。', '！', '？', '؟', '।']) {
        return false;
    }
    let code = p
        .bytes()
        .filter(|b| b"{}()[];=<>|\\_$#".contains(b))
        .count();
    code * 50 < p.len()
}

/// The text detection reads: prose paragraphs in order up to `SAMPLE_BYTES`,
/// or the text's first `SAMPLE_BYTES` when it has too little prose.
fn sample(text: &str) -> std::borrow::Cow<'_, str> {
    let mut prose = String::new();
    for p in text.lines().filter(|p| reads_as_prose(p)) {
        if !prose.is_empty() {
            prose.push('\n');
        }
        prose.push_str(p);
        if prose.len() >= SAMPLE_BYTES {
            break;
        }
    }
    if prose.len() >= MIN_PROSE_SAMPLE {
        let end = cut(&prose).len();
        prose.truncate(end);
        return std::borrow::Cow::Owned(prose);
    }
    std::borrow::Cow::Borrowed(cut(text))
}

/// `s` cut to at most `SAMPLE_BYTES`, at a character boundary.
fn cut(s: &str) -> &str {
    let mut end = s.len().min(SAMPLE_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Detect the language from the text, falling back to the `lang` attribute.
pub fn detect(text: &str, html_lang: Option<&str>) -> Option<String> {
    let info = whatlang::detect(&sample(text));
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

    #[test]
    fn menus_and_scripts_before_the_story_do_not_decide() {
        // Edition menus and an inline script open the text, as a newspaper's page
        // read without its markup does; the story after them is English.
        let chrome = "US edition UK edition Australia edition International edition Europe edition\n\
                      News Opinion Sport Culture Lifestyle Show More\n\
                      document.addEventListener('DOMContentLoaded', function(){ var columnInput = \
                      document.getElementById('News-button'); if (!columnInput) return; \
                      columnInput.addEventListener('keydown', function(e){ if (e.keyCode === 13) \
                      { e.preventDefault(); columnInput.click(); } }); });\n";
        let story = "Livestreamers who sell goods online have started to use digital copies of \
                     themselves to keep their channels running through the night.\n\
                     The copies are made from a few minutes of video, and the companies that make \
                     them say that sales rise when a stream never stops.\n\
                     Regulators have asked whether viewers should be told when they are watching \
                     a copy and not the person whose name is on the channel.\n";
        let text = format!("{}{}", chrome.repeat(8), story);
        assert!(cut(&text).starts_with("US edition"));
        assert!(sample(&text).starts_with("Livestreamers"));
        assert_eq!(detect(&text, None).as_deref(), Some("en"));
        // A text with too little prose is judged by its opening, as before.
        assert_eq!(sample("Menu\nHome\nNews").as_ref(), "Menu\nHome\nNews");
    }
}
