//! Where a text's prose is. A paragraph is cut into sentences, and each
//! sentence is judged prose (written by the story's author) or chrome
//! (menus, headline lists, promotions and bylines that leak in from the page
//! around the story). Mentions count fully only in prose, which is what keeps
//! a story about something else from passing on the AI headlines its site
//! repeats in navigation and "related stories" lists.
//!
//! A sentence is prose when it has [`MIN_WORDS`] to [`MAX_WORDS`] words, ends
//! with `.`, `!`, `?` or `…` (closing quotes and brackets allowed after it),
//! and at most half of its words after the first start with a capital
//! letter (headline lists and menus are Title Case; menus run on without
//! sentence ends).
//!
//! Scripts without spaces or capitals follow the same rule: Chinese and
//! Japanese sentences end with `。`, `！` or `？` whether or not a space
//! follows, every two of their characters count as a word (see
//! [`super::word_count`]), and the capitals test applies only to a sentence
//! written mostly in words with case (Korean, spaced but caseless, and
//! Chinese are judged by length and ending alone).

/// Fewest words a prose sentence has.
pub const MIN_WORDS: u32 = 5;
/// Most words a prose sentence has (longer runs are menus and link lists).
pub const MAX_WORDS: u32 = 80;
/// Prose words a paragraph needs to count as a paragraph of the story.
pub const PARAGRAPH_WORDS: u32 = 12;

/// One sentence of a paragraph.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sentence<'a> {
    pub text: &'a str,
    pub words: u32,
    pub prose: bool,
}

fn is_terminal(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '。' | '！' | '？' | '．')
}

/// A full-width sentence end: a cut whether or not a space follows.
fn is_wide_terminal(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '．')
}

fn is_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '”' | '’' | '»' | ')' | ']' | '」' | '』' | '）' | '】' | '》' | '〉'
    )
}

/// A character of a script written without spaces between words: Chinese
/// characters (CJK ideographs, Japanese kanji) and Japanese kana. Hangul is
/// not: Korean puts spaces between words.
pub fn is_unspaced(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'     // hiragana, katakana
        | '\u{31F0}'..='\u{31FF}'   // katakana extensions
        | '\u{3400}'..='\u{4DBF}'   // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'   // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}'   // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}'   // half-width katakana
        | '\u{20000}'..='\u{2FFFF}' // CJK extensions B to F
    )
}

/// The sentences of one paragraph: a cut after a terminal mark (and any
/// closing quotes or brackets) that is followed by whitespace and then by
/// something other than a lower-case letter (so `U.S. officials` stays whole).
pub fn sentences(paragraph: &str) -> impl Iterator<Item = Sentence<'_>> {
    let mut rest = paragraph.trim();
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = cut_point(rest);
        let (head, tail) = rest.split_at(cut);
        rest = tail.trim_start();
        let text = head.trim();
        let words = super::word_count(text) as u32;
        Some(Sentence {
            text,
            words,
            prose: is_prose(text, words),
        })
    })
}

/// Byte offset where the first sentence of `s` ends (`s.len()` if it runs on).
fn cut_point(s: &str) -> usize {
    let mut chars = s.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if !is_terminal(c) {
            continue;
        }
        let wide = is_wide_terminal(c);
        let mut end = None;
        while let Some(&(j, d)) = chars.peek() {
            if is_terminal(d) || is_closer(d) {
                chars.next();
            } else {
                end = Some(j);
                break;
            }
        }
        let Some(end) = end else { return s.len() };
        if wide {
            return end;
        }
        let after = s[end..].trim_start();
        if after.len() < s.len() - end && !after.starts_with(char::is_lowercase) {
            return end;
        }
    }
    s.len()
}

/// The prose test of the module doc.
pub fn is_prose(sentence: &str, words: u32) -> bool {
    if !(MIN_WORDS..=MAX_WORDS).contains(&words) {
        return false;
    }
    let ends = sentence
        .trim_end()
        .trim_end_matches(is_closer)
        .ends_with(is_terminal);
    ends && capitalised_share(sentence) <= 0.5
}

/// Share of the words after the first (two letters or more, starting with a
/// letter) that start with a capital; 0 when most of the sentence's words are
/// in a script without case (see the module doc), counting every two
/// characters of a script without spaces as a word.
fn capitalised_share(sentence: &str) -> f64 {
    let mut words = sentence
        .split(|c: char| !c.is_alphanumeric() || is_unspaced(c))
        .filter(|w| w.chars().nth(1).is_some() && w.starts_with(char::is_alphabetic));
    words.next();
    let (mut caps, mut all, mut caseless) = (0u32, 0u32, 0u32);
    for w in words {
        let first = w.chars().next().unwrap_or(' ');
        if first.is_uppercase() {
            caps += 1;
            all += 1;
        } else if first.is_lowercase() {
            all += 1;
        } else {
            caseless += 1;
        }
    }
    let unspaced = sentence.chars().filter(|&c| is_unspaced(c)).count() as u32;
    if caseless + unspaced.div_ceil(2) > all {
        return 0.0;
    }
    if all < 2 {
        return 1.0;
    }
    f64::from(caps) / f64::from(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(p: &str) -> Vec<(&str, bool)> {
        sentences(p).map(|s| (s.text, s.prose)).collect()
    }

    #[test]
    fn sentences_and_prose() {
        let table: &[(&str, &[(&str, bool)])] = &[
            ("", &[]),
            (
                "The model was trained on more data. It is faster!",
                &[
                    ("The model was trained on more data.", true),
                    ("It is faster!", false),
                ],
            ),
            (
                "U.S. officials said on Monday that the rules would change soon.",
                &[(
                    "U.S. officials said on Monday that the rules would change soon.",
                    true,
                )],
            ),
            (
                "“We will ship it this year,” she said. Then she left the room quietly.",
                &[
                    ("“We will ship it this year,” she said.", true),
                    ("Then she left the room quietly.", true),
                ],
            ),
            (
                "Artificial Intelligence View All AI, ML and Deep Learning Auto ML Data Labelling",
                &[(
                    "Artificial Intelligence View All AI, ML and Deep Learning Auto ML Data Labelling",
                    false,
                )],
            ),
            (
                "Business What Sam Altman's Firing Means for the Future of OpenAI Steven Levy.",
                &[(
                    "Business What Sam Altman's Firing Means for the Future of OpenAI Steven Levy.",
                    false,
                )],
            ),
            (
                "The AI model powers ChatGPT.",
                &[("The AI model powers ChatGPT.", true)],
            ),
            (
                "the new phone has a bigger battery and a brighter screen",
                &[(
                    "the new phone has a bigger battery and a brighter screen",
                    false,
                )],
            ),
        ];
        for (p, want) in table {
            assert_eq!(cut(p), *want, "{p:?}");
        }
    }

    #[test]
    fn sentences_without_spaces_or_capitals() {
        let table: &[(&str, &[(&str, bool)])] = &[
            (
                "研究团队近日发布了一项基于深度学习的新方法。该方法有望缩短新药研发周期！",
                &[
                    ("研究团队近日发布了一项基于深度学习的新方法。", true),
                    ("该方法有望缩短新药研发周期！", true),
                ],
            ),
            (
                "「OpenAI、Google、Anthropicが新モデルを発表した。」と記者は伝えた。",
                &[
                    ("「OpenAI、Google、Anthropicが新モデルを発表した。」", true),
                    ("と記者は伝えた。", false),
                ],
            ),
            (
                "首页 人工智能 科技 财经",
                &[("首页 人工智能 科技 财经", false)],
            ),
            (
                "국내 기업들이 새로운 언어 모델을 잇따라 공개했다. 경쟁이 본격화하고 있다.",
                &[
                    ("국내 기업들이 새로운 언어 모델을 잇따라 공개했다.", true),
                    ("경쟁이 본격화하고 있다.", false),
                ],
            ),
        ];
        for (p, want) in table {
            assert_eq!(cut(p), *want, "{p:?}");
        }
        assert_eq!(super::super::word_count("深度学习模型"), 3);
        assert_eq!(super::super::word_count("生成AIの時代"), 4);
    }

    #[test]
    fn long_runs_are_not_prose() {
        let run = "word ".repeat(90) + "end.";
        assert!(!is_prose(&run, 91));
    }
}
