//! Sections → passages sized in the model's own word pieces.
//!
//! * [`split_passages_in_tokens`]: passages sized in the model's own word pieces, so that each
//!   passage (with its heading) fits the model's window — `lightembed index` uses it with the
//!   model's tokenizer ([`lightembed::tokenizer::Tokenizer::count_pieces`]). Cuts at sentence ends
//!   (`.` `!` `?` followed by a space; `。` `！` `？` `．` anywhere), then words, then characters
//!   (text without spaces), and repeats the last sentence of a passage at the start of the next
//!   when it is short (≤ a quarter of the budget), so a sentence on a boundary is still found.
//!
//! Pure string functions, no I/O.

use crate::collapse_ws;

/// Full-width sentence ends that close a sentence with no space after them (CJK text).
fn is_fullwidth_stop(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '．')
}

/// Sentences of a paragraph, each with the glue (`" "` or `""`) that joined it to the previous.
fn split_sentences_glued(para: &str) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut glue = " ";
    let mut chars = para.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let end = i + c.len_utf8();
        let ascii_stop = matches!(c, '.' | '!' | '?') && next == Some(' ');
        if ascii_stop || (is_fullwidth_stop(c) && next.is_some()) {
            let sentence = para[start..end].trim();
            if !sentence.is_empty() {
                out.push((sentence.to_string(), glue));
            }
            glue = if next == Some(' ') { " " } else { "" };
            start = end;
        }
    }
    let tail = para[start..].trim();
    if !tail.is_empty() {
        out.push((tail.to_string(), glue));
    }
    out
}

/// A piece of text that is never cut further, with its size in word pieces and the glue that
/// joins it to the piece before it.
struct Unit {
    text: String,
    tokens: usize,
    glue: &'static str,
}

/// Splits text into passages of at most `budget` word pieces each, as counted by `count` (the
/// model tokenizer's untruncated count without `[CLS]`/`[SEP]`; it must add up over
/// whitespace-joined texts, as WordPiece does). Pass `budget = max_seq_len − 2 − pieces of the
/// heading` so that heading + passage fit the model's window.
///
/// Paragraphs are blank-line separated (`\r\n` accepted); whitespace inside a passage is
/// collapsed. Sentences are packed greedily; a sentence longer than the budget is cut between
/// words, and a word longer than the budget (text without spaces) between characters. A short
/// last sentence (≤ `budget / 4` pieces) is repeated at the start of the next passage. Empty
/// text → no passages. A `budget` of 0 behaves as 1.
pub fn split_passages_in_tokens(
    text: &str,
    budget: usize,
    count: &dyn Fn(&str) -> usize,
) -> Vec<String> {
    let budget = budget.max(1);
    let text = text.replace("\r\n", "\n");
    let mut units: Vec<Unit> = Vec::new();
    for para in text
        .split("\n\n")
        .map(collapse_ws)
        .filter(|p| !p.is_empty())
    {
        for (k, (sentence, glue)) in split_sentences_glued(&para).into_iter().enumerate() {
            let glue = if k == 0 { " " } else { glue };
            let tokens = count(&sentence);
            if tokens <= budget {
                units.push(Unit {
                    text: sentence,
                    tokens,
                    glue,
                });
            } else {
                cut_long_sentence(&sentence, glue, budget, count, &mut units);
            }
        }
    }
    pack(units, budget)
}

/// Cuts a sentence of more than `budget` pieces into runs of whole words (or, for a word that
/// alone exceeds the budget, runs of characters), each ≤ `budget` pieces. The first run keeps the
/// sentence's `glue`; a run that starts a word is glued with a space, one inside a word with "".
fn cut_long_sentence(
    sentence: &str,
    glue: &'static str,
    budget: usize,
    count: &dyn Fn(&str) -> usize,
    units: &mut Vec<Unit>,
) {
    let start = units.len();
    let push = |units: &mut Vec<Unit>, text: String, tokens: usize, mid_word: bool| {
        let glue = match (units.len() == start, mid_word) {
            (true, _) => glue,
            (false, true) => "",
            (false, false) => " ",
        };
        units.push(Unit { text, tokens, glue });
    };
    let (mut run, mut run_tokens) = (String::new(), 0usize);
    for word in sentence.split(' ') {
        let w = count(word);
        if !run.is_empty() && run_tokens + w > budget {
            push(units, std::mem::take(&mut run), run_tokens, false);
            run_tokens = 0;
        }
        if w <= budget {
            if !run.is_empty() {
                run.push(' ');
            }
            run.push_str(word);
            run_tokens += w;
            continue;
        }
        // Characters: the sum of per-character counts bounds the count of the run from above
        // (a piece covers at least one character), so a run never exceeds the budget.
        let (mut piece, mut piece_tokens, mut mid_word) = (String::new(), 0usize, false);
        for c in word.chars() {
            let t = count(c.encode_utf8(&mut [0u8; 4])).max(1);
            if piece_tokens + t > budget && !piece.is_empty() {
                push(units, std::mem::take(&mut piece), piece_tokens, mid_word);
                piece_tokens = 0;
                mid_word = true;
            }
            piece.push(c);
            piece_tokens += t;
        }
        push(units, piece, piece_tokens, mid_word); // non-empty: w > budget ≥ 1
    }
    if !run.is_empty() {
        push(units, run, run_tokens, false);
    }
}

/// Greedy packing of units into passages of ≤ `budget` pieces, with a one-unit overlap when the
/// last unit of a passage is short.
fn pack(units: Vec<Unit>, budget: usize) -> Vec<String> {
    let overlap_max = budget / 4;
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_tokens = 0usize;
    let mut last: Option<(String, usize)> = None;
    for u in units {
        if cur_tokens > 0 && cur_tokens + u.tokens > budget {
            out.push(std::mem::take(&mut cur));
            cur_tokens = 0;
            // Carry the previous passage's last unit when it is short and leaves room for this one.
            if let Some((text, t)) = last.take() {
                if t <= overlap_max && t + u.tokens <= budget {
                    cur = text;
                    cur_tokens = t;
                }
            }
        }
        if !cur.is_empty() {
            cur.push_str(u.glue);
        }
        cur.push_str(&u.text);
        cur_tokens += u.tokens;
        last = Some((u.text, u.tokens));
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The passage size of the pipeline, in the model's word pieces including `[CLS]` and `[SEP]`:
/// a passage and its heading take at most this many, or the model's window (`max_seq_len`) when
/// that is smaller. 128: the size both shipped models were trained and measured at (a passage is
/// the unit a result points to; longer ones make coarser results and excerpts). A model whose
/// window is larger (the static model has no position table, so its window costs nothing) never
/// truncates a passage.
pub const PASSAGE_TOKENS: usize = 128;

/// Sizes passages in the model's own word pieces: each passage plus its heading fits
/// `min(PASSAGE_TOKENS, max_seq_len)` (including `[CLS]` and `[SEP]`), so no passage text is
/// invisible to the vector side.
pub struct Sizer<'m> {
    tokenizer: &'m lightembed::tokenizer::Tokenizer,
    /// Word pieces a passage and its heading may use: `min(PASSAGE_TOKENS, max_seq_len) − 2`.
    window: usize,
}

impl<'m> Sizer<'m> {
    /// The sizer for `model`'s tokenizer, passages of [`PASSAGE_TOKENS`] (or the model's window
    /// when smaller).
    pub fn new(model: &'m lightembed::Model) -> Sizer<'m> {
        Sizer::with_tokens(model, PASSAGE_TOKENS)
    }

    /// The sizer for passages of `tokens` word pieces (including `[CLS]` and `[SEP]`), capped at
    /// the model's window.
    pub fn with_tokens(model: &'m lightembed::Model, tokens: usize) -> Sizer<'m> {
        Sizer {
            tokenizer: model.tokenizer(),
            window: tokens
                .min(model.header().max_seq_len as usize)
                .saturating_sub(2)
                .max(1),
        }
    }

    /// Passages of `text` under `heading`: the heading's pieces come off the budget, but a
    /// heading never leaves less than half the window to the text.
    pub fn passages(&self, heading: &str, text: &str) -> Vec<String> {
        let count = |t: &str| self.tokenizer.count_pieces(t);
        let budget = self
            .window
            .saturating_sub(count(heading))
            .max(self.window / 2);
        split_passages_in_tokens(text, budget, &count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for WordPiece counts: one piece per whitespace word, one per CJK character.
    fn pieces(t: &str) -> usize {
        t.split_whitespace()
            .map(|w| {
                let cjk = w
                    .chars()
                    .filter(|c| {
                        ('\u{3000}'..='\u{9fff}').contains(c)
                            || ('\u{ff00}'..='\u{ffef}').contains(c)
                    })
                    .count();
                let rest: String = w
                    .chars()
                    .filter(|c| {
                        !(('\u{3000}'..='\u{9fff}').contains(c)
                            || ('\u{ff00}'..='\u{ffef}').contains(c))
                    })
                    .collect();
                cjk + usize::from(!rest.is_empty())
            })
            .sum()
    }

    #[test]
    fn token_passages_fit_the_budget_and_cut_at_sentence_ends() {
        let text = "This is a sentence with eight words here. ".repeat(40);
        let ps = split_passages_in_tokens(&text, 50, &pieces);
        assert!(ps.iter().all(|p| pieces(p) <= 50), "{ps:?}");
        // 6 sentences (48 pieces) per passage, cut after a full stop.
        assert!(ps.iter().all(|p| p.ends_with("here.")), "{ps:?}");
        assert_eq!(pieces(&ps[0]), 48);
        // Every sentence is in some passage; short boundary sentences (8 ≤ 50/4) are repeated.
        assert!(ps.iter().map(|p| p.matches("here.").count()).sum::<usize>() >= 40);
        assert!(ps[1].starts_with("This is a sentence"));
    }

    #[test]
    fn short_boundary_sentences_overlap() {
        let text = "Alpha beta gamma delta epsilon zeta eta theta iota kappa. Short one. Lambda mu nu xi omicron pi rho sigma tau upsilon.";
        let ps = split_passages_in_tokens(text, 14, &pieces);
        assert_eq!(ps.len(), 2, "{ps:?}");
        assert!(ps[0].ends_with("Short one."));
        assert!(ps[1].starts_with("Short one. Lambda"), "{ps:?}");
    }

    /// The known failure: 140 × a 15-character Chinese sentence (2,100 characters, no spaces)
    /// became one passage; now several, each within the window, each cut after `。`.
    #[test]
    fn cjk_without_spaces_is_cut_after_full_stops() {
        let sentence = "我们的搜索引擎在浏览器中运行。";
        let text = sentence.repeat(140);
        let budget = 126; // a 128-piece window minus [CLS]/[SEP]
        let ps = split_passages_in_tokens(&text, budget, &pieces);
        assert!(ps.len() >= 16, "{}", ps.len());
        for p in &ps {
            assert!(pieces(p) <= budget, "{} pieces", pieces(p));
            assert!(p.ends_with('。'));
            assert!(
                !p.contains(' '),
                "no spaces are invented between CJK sentences"
            );
        }
        let stops = ps.concat().matches('。').count();
        assert!(
            stops >= 140,
            "{stops}: every sentence is kept (short ones twice, as overlap)"
        );
    }

    #[test]
    fn words_and_characters_longer_than_the_budget_are_cut() {
        let words: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let ps = split_passages_in_tokens(&words.join(" "), 30, &pieces);
        assert_eq!(
            ps.iter().map(|p| pieces(p)).collect::<Vec<_>>(),
            vec![30, 30, 30, 10]
        );
        assert_eq!(ps.join(" "), words.join(" "));
        let cjk = "字".repeat(70); // one "word" of 70 pieces
        let ps = split_passages_in_tokens(&cjk, 30, &pieces);
        assert_eq!(
            ps.iter().map(|p| pieces(p)).collect::<Vec<_>>(),
            vec![30, 30, 10]
        );
        assert!(split_passages_in_tokens(" \n\n ", 30, &pieces).is_empty());
    }
}
