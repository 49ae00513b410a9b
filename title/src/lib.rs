//! `lightembed-title`: the one rule that titles a passage for display.
//!
//! A passage's title is [`section_title`] of its page title and its section heading:
//! `Heading — Page title`, or the page title alone. Ingestion (`lightembed_ingest`, which
//! re-exports it as `lightembed_ingest::section_title`) titles every passage with it; the search
//! side (`lightembed_index::fragments`) titles a site bundle's hits with it from the page title and
//! heading its core stores apart (so its bytes need no display title). The rule lives in this
//! dependency-free crate because `lightembed-index` must not depend on `lightembed-ingest` (search-only
//! builds, the site widget's wasm, carry no HTML parser).
//!
//! A display title is never split back into its parts (headings and page titles may themselves
//! hold ` — `, as Sphinx's `Page — Project` titles do): whoever needs the page title or the
//! heading keeps them apart.

#![warn(missing_docs)]

/// The separator between a heading and its page title in a display title.
pub const TITLE_SEPARATOR: &str = " — ";

/// A section's display title: `Heading — Page title`, or `page_title` alone when `heading` is
/// empty or `page_title` starts with it (a page whose first heading repeats its title).
///
/// ```
/// use lightembed_title::section_title;
/// assert_eq!(section_title("Garden", "Watering"), "Watering — Garden");
/// assert_eq!(section_title("Garden", ""), "Garden");
/// assert_eq!(section_title("Install — Garden 1.0", "Install"), "Install — Garden 1.0");
/// ```
pub fn section_title(page_title: &str, heading: &str) -> String {
    if heading.is_empty() || page_title.starts_with(heading) {
        page_title.to_string()
    } else {
        format!("{heading}{TITLE_SEPARATOR}{page_title}")
    }
}

/// The page a result's URL points at when it is a page of a PDF (`file.pdf#page=12` → 12), as
/// ingestion links a PDF's passages; `None` for any other URL. What a result shows as "p. N".
pub fn pdf_page(url: &str) -> Option<u32> {
    let (_, fragment) = url.rsplit_once('#')?;
    let n: u32 = fragment.strip_prefix("page=")?.parse().ok()?;
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    #[test]
    fn pdf_pages_come_from_the_url() {
        assert_eq!(super::pdf_page("manual.pdf#page=12"), Some(12));
        assert_eq!(super::pdf_page("a/b.pdf#page=1"), Some(1));
        assert_eq!(super::pdf_page("b.html#page=x"), None);
        assert_eq!(super::pdf_page("b.html#pages"), None);
        assert_eq!(super::pdf_page("b.pdf"), None);
        assert_eq!(super::pdf_page("b.pdf#page=0"), None);
    }

    use super::*;

    /// The rule on real shapes: a heading before its page, the page alone without a heading or
    /// when the page title starts with the heading (also a longer heading that merely shares a
    /// prefix is kept), and dashes inside either part kept as written.
    #[test]
    fn headings_come_before_their_page_title() {
        let cases = [
            ("Garden", "Watering", "Watering — Garden"),
            ("Garden", "", "Garden"),
            ("Ownership", "Ownership", "Ownership"),
            ("What is Ownership?", "What", "What is Ownership?"),
            ("Pots", "Pots and pans", "Pots and pans — Pots"),
            (
                "Install — Garden 1.0 documentation",
                "Windows",
                "Windows — Install — Garden 1.0 documentation",
            ),
            (
                "Install — Garden 1.0 documentation",
                "Install",
                "Install — Garden 1.0 documentation",
            ),
            (
                "notes.txt",
                "Salt & pepper 🌶",
                "Salt & pepper 🌶 — notes.txt",
            ),
        ];
        for (page, heading, want) in cases {
            assert_eq!(section_title(page, heading), want, "{page:?} / {heading:?}");
        }
    }

    /// Case matters: a heading that differs from the start of the page title only in case is
    /// a heading of its own.
    #[test]
    fn the_page_prefix_test_is_exact() {
        assert_eq!(section_title("Garden", "garden"), "garden — Garden");
        assert_eq!(section_title("Gärten", "Garten"), "Garten — Gärten");
    }
}
