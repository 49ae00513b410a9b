//! The Rust tokenizer produces exactly the ids HF `tokenizers` 0.22.1 produces, for every line of
//! `tests/fixtures/tokenizer/lines.txt`, uncased (lowercase + strip accents) and cased.
//!
//! Fixtures come from `reference/make_tokenizer_parity.py`; they are compiled in (`include_str!`)
//! so this test also runs as wasm32 under Node (`cargo test --target wasm32-unknown-unknown`).

use lightembed::tokenizer::{Tokenizer, TokenizerConfig};
use serde::Deserialize;

const VOCAB: &str = include_str!("../../tests/fixtures/tokenizer/vocab.txt");
const LINES: &str = include_str!("../../tests/fixtures/tokenizer/lines.txt");
const SOURCES: &str = include_str!("../../tests/fixtures/tokenizer/sources.json");
const EXPECTED_UNCASED: &str =
    include_str!("../../tests/fixtures/tokenizer/expected_uncased.jsonl");
const EXPECTED_CASED: &str = include_str!("../../tests/fixtures/tokenizer/expected_cased.jsonl");
const EXPECTED_CASED_WORDS: &str =
    include_str!("../../tests/fixtures/tokenizer/expected_cased_words.txt");

/// How many mismatching lines a failure prints in full.
const SHOW: usize = 8;

/// `println!` natively; the console under wasm-bindgen-test (where stdout goes nowhere).
macro_rules! report {
    ($($arg:tt)*) => {{
        #[cfg(target_arch = "wasm32")]
        wasm_bindgen_test::console_log!($($arg)*);
        #[cfg(not(target_arch = "wasm32"))]
        println!($($arg)*);
    }};
}

#[derive(Deserialize)]
struct Expected {
    ids: Vec<u32>,
}

#[derive(Deserialize)]
struct Source {
    source: String,
    first: usize,
    count: usize,
}

/// Splits a fixture file written as `"\n".join(items) + "\n"`.
fn split_lines(text: &str) -> Vec<&str> {
    text.strip_suffix('\n')
        .expect("fixture ends with a newline")
        .split('\n')
        .collect()
}

fn tokenizer(uncased: bool) -> Tokenizer {
    // With `runtime-unicode` (the site widget's build) the decomposition data comes from a file:
    // here the subset a site bundle would carry for these lines, which must cover each of them.
    #[cfg(feature = "runtime-unicode")]
    {
        let subset = lightembed::unicode::encode(Some(&mut LINES.chars()));
        lightembed::unicode::load(&subset).unwrap();
        for line in split_lines(LINES) {
            assert!(lightembed::unicode::covers(line), "not covered: {line:?}");
        }
        assert!(
            !lightembed::unicode::covers("\u{1E0A}"),
            "Ḋ is not in the lines"
        );
    }
    let vocab: Vec<String> = split_lines(VOCAB).into_iter().map(String::from).collect();
    let id = |token: &str| vocab.iter().position(|t| t == token).unwrap() as u32;
    let config = TokenizerConfig {
        unk_token_id: id("[UNK]"),
        cls_token_id: id("[CLS]"),
        sep_token_id: id("[SEP]"),
        pad_token_id: id("[PAD]"),
        mask_token_id: id("[MASK]"),
        max_input_chars_per_word: 100,
        continuing_subword_prefix: "##".into(),
        do_lower_case: uncased,
        strip_accents: uncased,
        max_seq_len: 512,
    };
    Tokenizer::new(vocab, config)
}

fn source_of(sources: &[Source], line: usize) -> &str {
    sources
        .iter()
        .find(|s| (s.first..s.first + s.count).contains(&line))
        .map_or("?", |s| s.source.as_str())
}

fn check(uncased: bool) {
    let mode = if uncased { "uncased" } else { "cased" };
    let tok = tokenizer(uncased);
    let lines = split_lines(LINES);
    let expected: Vec<Expected> = split_lines(if uncased {
        EXPECTED_UNCASED
    } else {
        EXPECTED_CASED
    })
    .into_iter()
    .map(|l| serde_json::from_str(l).expect("expected_*.jsonl line"))
    .collect();
    let sources: Vec<Source> = serde_json::from_str(SOURCES).expect("sources.json");
    assert_eq!(
        lines.len(),
        expected.len(),
        "{mode}: lines.txt and expected_{mode}.jsonl differ in length"
    );
    assert!(
        lines.len() >= 2000,
        "the parity corpus has at least 2,000 lines"
    );

    let tokens = |ids: &[u32]| -> Vec<&str> {
        ids.iter()
            .map(|&i| tok.id_to_token(i).unwrap_or("<?>"))
            .collect()
    };
    let mut mismatches = Vec::new();
    let mut ids = Vec::new();
    for (n, (line, want)) in lines.iter().zip(&expected).enumerate() {
        tok.encode_into(line, &mut ids);
        if ids != want.ids {
            mismatches.push(n);
        }
    }
    let identical = lines.len() - mismatches.len();
    report!(
        "tokenizer parity ({mode}): {identical}/{} lines identical to HF tokenizers",
        lines.len()
    );
    if mismatches.is_empty() {
        return;
    }

    let mut msg = format!(
        "{mode}: {} of {} lines differ from HF tokenizers\n",
        mismatches.len(),
        lines.len()
    );
    for &n in mismatches.iter().take(SHOW) {
        let got = tok.encode(lines[n]);
        let want = &expected[n].ids;
        let first_diff = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        msg += &format!(
            "\nline {} ({}): {:?}\n  first difference at position {first_diff}\n  HF:   {:?}\n        {:?}\n  Rust: {:?}\n        {:?}\n  Rust words: {:?}\n",
            n + 1,
            source_of(&sources, n),
            lines[n],
            want,
            tokens(want),
            got,
            tokens(&got),
            tok.words(lines[n]),
        );
    }
    if mismatches.len() > SHOW {
        let rest: Vec<_> = mismatches[SHOW..].iter().take(50).map(|n| n + 1).collect();
        msg += &format!("\n... and {} more, lines {rest:?}", mismatches.len() - SHOW);
    }
    panic!("{msg}");
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn parity_uncased() {
    check(true);
}

#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn parity_cased() {
    check(false);
}

/// The cased normaliser + pre-tokenizer give HF's words for every line. Independent of the
/// vocabulary: with the uncased vocabulary most capitalised words are `[UNK]` in cased mode, which
/// would hide a normalisation difference inside them from `parity_cased`.
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn parity_cased_words() {
    let tok = tokenizer(false);
    let sources: Vec<Source> = serde_json::from_str(SOURCES).expect("sources.json");
    let lines = split_lines(LINES);
    let expected = split_lines(EXPECTED_CASED_WORDS);
    assert_eq!(lines.len(), expected.len());
    let mismatches: Vec<usize> = (0..lines.len())
        .filter(|&n| tok.words(lines[n]).join(" ") != expected[n])
        .collect();
    report!(
        "tokenizer parity (cased words): {}/{} lines identical to HF tokenizers",
        lines.len() - mismatches.len(),
        lines.len()
    );
    if let Some(&n) = mismatches.first() {
        panic!(
            "{} lines differ, first: line {} ({}): {:?}\n  HF:   {:?}\n  Rust: {:?}",
            mismatches.len(),
            n + 1,
            source_of(&sources, n),
            lines[n],
            expected[n],
            tok.words(lines[n]).join(" "),
        );
    }
}

/// Spot checks that make the corpus-wide assertion meaningful: the fixture really exercises what
/// it claims (Turkish İ, CJK, emoji, zero-width characters, truncation, long words).
#[test]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn corpus_covers_the_hard_cases() {
    let lines = split_lines(LINES);
    let has = |pred: &dyn Fn(&str) -> bool| lines.iter().filter(|l| pred(l)).count();
    assert!(has(&|l| l.contains('İ')) >= 50);
    assert!(has(&|l| l.contains('ı')) >= 50);
    assert!(has(&|l| l.chars().any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c))) >= 100);
    assert!(has(&|l| l.chars().any(|c| ('\u{AC00}'..='\u{D7AF}').contains(&c))) >= 50);
    assert!(has(&|l| l.chars().any(|c| ('\u{3040}'..='\u{30FF}').contains(&c))) >= 50);
    assert!(has(&|l| l.contains('\u{200D}')) >= 20);
    assert!(has(&|l| l.chars().any(|c| ('\u{1F3FB}'..='\u{1F3FF}').contains(&c))) >= 10);
    assert!(has(&|l| l.chars().any(|c| ('\u{1F1E6}'..='\u{1F1FF}').contains(&c))) >= 10);
    assert!(
        has(&|l| l
            .chars()
            .any(|c| matches!(c, '\u{200B}' | '\u{200C}' | '\u{FEFF}' | '\u{FFFD}')))
            >= 10
    );
    assert!(has(&|l| l.chars().any(|c| c < ' ' && c != '\t')) >= 30);
    assert!(has(&|l| l.chars().any(|c| ('\u{0300}'..='\u{036F}').contains(&c))) >= 50);
    assert!(has(&|l| l.chars().any(|c| ('\u{0400}'..='\u{04FF}').contains(&c))) >= 50);
    assert!(has(&|l| l.chars().any(|c| ('\u{0370}'..='\u{03FF}').contains(&c))) >= 50);
    assert!(has(&|l| l.chars().any(|c| ('\u{0600}'..='\u{06FF}').contains(&c))) >= 50);
    assert!(has(&|l| l.chars().any(|c| ('\u{0900}'..='\u{097F}').contains(&c))) >= 30);
    let expected: Vec<Expected> = split_lines(EXPECTED_UNCASED)
        .into_iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        expected.iter().filter(|e| e.ids.len() == 512).count() >= 5,
        "lines truncated at 512"
    );
    let unk = split_lines(VOCAB)
        .iter()
        .position(|t| *t == "[UNK]")
        .unwrap() as u32;
    assert!(expected.iter().filter(|e| e.ids.contains(&unk)).count() >= 100);
}
