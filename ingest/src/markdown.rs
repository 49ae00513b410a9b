//! Markdown → page title and sections (`pulldown-cmark`).

use crate::ids::{slug, url_encode, Uniquer};
use crate::{collapse_ws, Section};

/// Markdown: a new section at every heading (anchor = `{#id}` attribute, percent-encoded, or the
/// heading's slug); paragraphs, list items, block quotes and fenced code are blocks. The first
/// level-1 heading is the page title.
pub fn markdown_sections(md: &str) -> (Option<String>, Vec<Section>) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut title = None;
    let mut sections = vec![Section::default()];
    let mut heading: Option<(pulldown_cmark::HeadingLevel, Option<String>, String)> = None;
    let mut block = String::new();
    let mut anchors = Uniquer::new('-', 1);
    let flush = |block: &mut String, sections: &mut Vec<Section>| {
        let b = collapse_ws(block);
        if !b.is_empty() {
            sections.last_mut().expect("one section").blocks.push(b);
        }
        block.clear();
    };
    for event in Parser::new_ext(
        md,
        Options::ENABLE_HEADING_ATTRIBUTES | Options::ENABLE_TABLES,
    ) {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                flush(&mut block, &mut sections);
                heading = Some((level, id.map(|s| s.to_string()), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, id, text)) = heading.take() {
                    let text = collapse_ws(&text);
                    if level == pulldown_cmark::HeadingLevel::H1
                        && title.is_none()
                        && !text.is_empty()
                    {
                        title = Some(text.clone());
                    }
                    // `{#id}` is used as written in the page; percent-encoded like HTML ids.
                    let base = id.map_or_else(|| slug(&text), |id| url_encode(&id));
                    let anchor = (!base.is_empty()).then(|| anchors.unique(&base));
                    sections.push(Section {
                        heading: text,
                        anchor,
                        blocks: Vec::new(),
                        page: None,
                    });
                }
            }
            Event::Text(t) | Event::Code(t) => match heading.as_mut() {
                Some((_, _, h)) => h.push_str(&t),
                None => block.push_str(&t),
            },
            Event::SoftBreak | Event::HardBreak => match heading.as_mut() {
                Some((_, _, h)) => h.push(' '),
                None => block.push(' '),
            },
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableCell
                | TagEnd::BlockQuote(_),
            ) => {
                if matches!(event, Event::End(TagEnd::TableCell)) {
                    block.push(' ');
                } else {
                    flush(&mut block, &mut sections);
                }
            }
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => flush(&mut block, &mut sections),
            _ => {}
        }
    }
    flush(&mut block, &mut sections);
    sections.retain(|s| !s.blocks.is_empty());
    (title, sections)
}
