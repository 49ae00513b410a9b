//! Fuzz the WordPiece tokenizer with the real bert-base-uncased vocab over arbitrary UTF-8, in both
//! cased and uncased modes and with small and large `max_seq_len`: never panic, output always
//! `[CLS] … [SEP]` within `max_seq_len`, every id inside the vocabulary.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lightembed::tokenizer::{Tokenizer, TokenizerConfig};
use std::sync::OnceLock;

const VOCAB: &str = include_str!("../../tests/fixtures/tokenizer/vocab.txt");

fn tokenizers() -> &'static [Tokenizer; 4] {
    static T: OnceLock<[Tokenizer; 4]> = OnceLock::new();
    T.get_or_init(|| {
        let vocab: Vec<String> = VOCAB.lines().map(str::to_owned).collect();
        let id = |t: &str| vocab.iter().position(|v| v == t).unwrap() as u32;
        let make = |lower: bool, max_seq_len: usize| {
            Tokenizer::new(
                vocab.clone(),
                TokenizerConfig {
                    unk_token_id: id("[UNK]"),
                    cls_token_id: id("[CLS]"),
                    sep_token_id: id("[SEP]"),
                    pad_token_id: id("[PAD]"),
                    mask_token_id: id("[MASK]"),
                    max_input_chars_per_word: 100,
                    continuing_subword_prefix: "##".to_owned(),
                    do_lower_case: lower,
                    strip_accents: lower,
                    max_seq_len,
                },
            )
        };
        [make(true, 512), make(false, 512), make(true, 2), make(false, 7)]
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for tok in tokenizers() {
        let ids = tok.encode(&text);
        let cfg = tok.config();
        assert!(ids.len() >= 2 && ids.len() <= cfg.max_seq_len);
        assert_eq!(ids[0], cfg.cls_token_id);
        assert_eq!(*ids.last().unwrap(), cfg.sep_token_id);
        assert!(ids.iter().all(|&i| tok.id_to_token(i).is_some()));
    }
});
