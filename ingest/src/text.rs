//! Plain text → one section of paragraphs.

use crate::{collapse_ws, Section};

/// Plain text: one section, paragraphs separated by blank lines (`\n` or `\r\n` line ends).
pub fn text_sections(content: &str) -> (Option<String>, Vec<Section>) {
    let blocks = content
        .replace("\r\n", "\n")
        .split("\n\n")
        .map(collapse_ws)
        .filter(|b| !b.is_empty())
        .collect();
    (
        None,
        vec![Section {
            blocks,
            ..Section::default()
        }],
    )
}
