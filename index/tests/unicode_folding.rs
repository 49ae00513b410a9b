//! Keyword folding of non-English text gives the same terms and highlights whether the Unicode
//! data is compiled in (the default) or loaded at run time (feature `runtime-unicode`, the site
//! widget's wasm): both builds are checked against one golden file,
//! `tests/fixtures/keywords/unicode_terms.tsv` (text, terms, stemmed terms, highlight spans of
//! the text's own first term), written by the default build with `LIGHTEMBED_REGEN=1`.

use lightembed_index::keywords::{highlight_spans, terms_with};

const GOLDEN: &str = "../tests/fixtures/keywords/unicode_terms.tsv";

/// Accents, ligatures, full- and halfwidth forms, CJK, Turkish and German case rules, marks that
/// belong to their letter (Indic, Thai) and ones folded away (Arabic, Hebrew), compatibility
/// characters (fractions, Roman numerals, squared words, math letters), format characters.
const TEXTS: &[&str] = &[
    "Café naïve résumé coöperate",
    "ﬁne ﬂow ﬃx oﬀset",
    "ＡＢＣ１２３ fullwidth Ｌｅｔｔｅｒｓ",
    "ｶﾞｷﾞ halfwidth ｱｲｳ",
    "東京都 日本語の文章 한국어 텍스트",
    "Straße GROẞE Größe",
    "İstanbul ışık IĞDIR Çocuk",
    "Ǆemal ǅungla ǆ",
    "½ cup ¼ x² y³",
    "Ⅻ chapters ⅻ ⅰⅱ",
    "ﷺ مُحَمَّد الكِتاب",
    "שָׁלוֹם עוֹלָם",
    "हिन्दी किताब पढ़ना",
    "ภาษาไทย สวัสดี",
    "Ελληνικά άλφα ΐ",
    "Кириллица ёж й ї",
    "soft\u{AD}hyphen zero\u{200B}width joiner\u{200D}s",
    "e\u{301}cole combining a\u{308}\u{301}",
    "℃ ™ № ℡",
    "𝐁𝐨𝐥𝐝 𝑖𝑡𝑎𝑙𝑖𝑐 math",
    "㍿ ㌔ ㎏ ㏄",
    "Ω Å K signs",
    "Việt Nam tiếng Việt",
    "ŉ ſtate Ĳssel",
    "Ａｒｅｎ’ｔ “quoted” – dashes — ellipsis…",
    "ﬀ\u{FE20}x ǰ̌",
];

fn row(text: &str) -> String {
    let first = terms_with(text, false)
        .into_iter()
        .next()
        .unwrap_or_default();
    let spans: Vec<String> = highlight_spans(text, &first, false)
        .into_iter()
        .map(|(a, b)| format!("{a}-{b}"))
        .collect();
    format!(
        "{}\t{}\t{}\t{}",
        text.escape_unicode(),
        terms_with(text, false).join(" "),
        terms_with(text, true).join(" "),
        spans.join(" ")
    )
}

#[test]
fn folding_matches_the_golden_file() {
    #[cfg(feature = "runtime-unicode")]
    {
        let mut all = TEXTS.iter().flat_map(|t| t.chars());
        let subset = lightembed::unicode::encode(Some(&mut all));
        lightembed::unicode::load(&subset).unwrap();
        assert!(TEXTS.iter().all(|t| lightembed::unicode::covers(t)));
    }
    let got: Vec<String> = TEXTS.iter().map(|t| row(t)).collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if cfg!(not(feature = "runtime-unicode")) && std::env::var_os("LIGHTEMBED_REGEN").is_some() {
        std::fs::write(&path, got.join("\n") + "\n").unwrap();
    }
    let want = std::fs::read_to_string(&path).expect("golden file (LIGHTEMBED_REGEN=1 writes it)");
    let want: Vec<&str> = want.lines().collect();
    assert_eq!(want.len(), TEXTS.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    // The file says something: folding happened.
    assert!(
        want[0].contains("\tcafe naive resume cooperate\t"),
        "{}",
        want[0]
    );
}
