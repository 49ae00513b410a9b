//! Which files of a folder are read, and how: the file kinds by extension and the exclude rules
//! shared by `lightembed index`/`passages`/`site` and the npm package's `site`.
//!
//! Paths here are relative to the folder given (`/`-separated); the callers walk the folder.

use std::collections::HashSet;

use lightembed::Model;
use lightembed_ingest::{self as ingest, Passage, RootSelector, Sizer, Uniquer};

use crate::{fail, BuildError};

/// The folder `lightembed site` writes inside the site (and never indexes).
pub const BUNDLE_DIR: &str = "lightembed";

/// A file format the build reads, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.jsonl`: one `{"id","title","url","text"}` object per line.
    Jsonl,
    /// `.md`, `.markdown`.
    Markdown,
    /// `.html`, `.htm`.
    Html,
    /// `.txt` (and any file named explicitly with another extension).
    Text,
    /// `.pdf`: one section per page, passages with their page numbers.
    Pdf,
    /// `.docx` (Word).
    Docx,
    /// `.odt` (OpenDocument text).
    Odt,
    /// `.epub`.
    Epub,
}

impl Kind {
    /// How [`lightembed_ingest`] reads a file of this kind (JSONL lines are decoded as text).
    pub fn format(self) -> lightembed_ingest::Format {
        use lightembed_ingest::Format;
        match self {
            Kind::Markdown => Format::Markdown,
            Kind::Html => Format::Html,
            Kind::Jsonl | Kind::Text => Format::Text,
            Kind::Pdf => Format::Pdf,
            Kind::Docx => Format::Docx,
            Kind::Odt => Format::Odt,
            Kind::Epub => Format::Epub,
        }
    }

    /// The kind of a file named `name` (its extension, any case); `None` for other files.
    pub fn of(name: &str) -> Option<Kind> {
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext.to_ascii_lowercase().as_str() {
            "jsonl" => Kind::Jsonl,
            "md" | "markdown" => Kind::Markdown,
            "html" | "htm" => Kind::Html,
            "txt" => Kind::Text,
            "pdf" => Kind::Pdf,
            "docx" => Kind::Docx,
            "odt" => Kind::Odt,
            "epub" => Kind::Epub,
            _ => return None,
        })
    }
}

/// Which files a build leaves out.
#[derive(Debug, Clone)]
pub struct Excludes {
    /// `--exclude GLOB` patterns, matched against the path relative to the folder given
    /// (`/`-separated; for a file given directly, the path as given).
    globs: globset::GlobSet,
    /// The default rules (off with `--no-default-excludes`): a folder named `_sources` (Sphinx
    /// copies every page's source there), and a `.txt` file with an `.html`/`.htm` page of the
    /// same name beside it (`git-add.txt` next to `git-add.html`: the AsciiDoc source of that
    /// page). Both would index every page twice, once as raw markup.
    defaults: bool,
}

impl Excludes {
    /// Compiles the `--exclude` globs (`*` does not cross `/`; `**` does).
    ///
    /// Errors: `--exclude "GLOB": not a valid glob` and the reason.
    pub fn new(globs: &[String], defaults: bool) -> Result<Excludes, BuildError> {
        let mut b = globset::GlobSetBuilder::new();
        for g in globs {
            match globset::GlobBuilder::new(g).literal_separator(true).build() {
                Ok(glob) => b.add(glob),
                Err(e) => fail!("--exclude {g:?}: not a valid glob: {e}"),
            };
        }
        match b.build() {
            Ok(globs) => Ok(Excludes { globs, defaults }),
            Err(e) => fail!("--exclude: {e}"),
        }
    }

    /// The rules of `lightembed site`: pages only (the bundle folder itself, and sources or data
    /// files served beside the pages, are not what a visitor searches), then `user`'s globs.
    pub fn site(user: &[String], defaults: bool) -> Result<Excludes, BuildError> {
        let mut globs = vec![
            format!("{BUNDLE_DIR}/**"),
            "**/*.{md,markdown,txt,jsonl}".to_string(),
        ];
        globs.extend(user.iter().cloned());
        Excludes::new(&globs, defaults)
    }

    /// True when the file at `rel` (relative to its input root, `/`-separated) is left out.
    /// `page_beside` answers whether an `.html`/`.htm` file of the same name sits beside it (asked
    /// only for a `.txt` file under the default rules).
    pub fn excludes(&self, rel: &str, page_beside: impl FnOnce() -> bool) -> bool {
        if self.globs.is_match(rel) {
            return true;
        }
        if !self.defaults {
            return false;
        }
        if rel.split('/').any(|c| c == "_sources") {
            return true;
        }
        let is_txt = rel
            .rsplit_once('.')
            .is_some_and(|(_, e)| e.eq_ignore_ascii_case("txt"));
        is_txt && page_beside()
    }

    /// True when `rel` is a page `lightembed site` indexes under these rules: an `.html`/`.htm`
    /// file not excluded.
    pub fn is_site_page(&self, rel: &str) -> bool {
        Kind::of(rel) == Some(Kind::Html) && !self.excludes(rel, || false)
    }
}

/// What [`PageReader::read`] did with one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageOutcome {
    /// Passages added (after dropping repeats of text already read, e.g. an all-in-one
    /// `print.html`).
    pub passages: usize,
    /// The document was skipped (a text file that is binary, a PDF, Word, OpenDocument or EPUB
    /// file that cannot be read: [`lightembed_ingest::DocumentError`]'s message); the caller
    /// names it: `warning: skipping PATH: REASON`.
    pub skipped: Option<String>,
    /// A note on how it was read (a guessed charset); the caller prints `warning: PATH: NOTE`.
    pub warning: Option<String>,
}

/// Reads documents (pages, Markdown, text) into passages, the one reader of `lightembed index`,
/// `passages` and `site` and of the npm package's site build: decoded
/// ([`lightembed_ingest::decode`]), cut at headings into passages sized in the model's word
/// pieces, a passage whose text was already read skipped, ids unique across all documents read.
#[derive(Debug, Clone)]
pub struct PageReader {
    root: Option<RootSelector>,
    passage_tokens: usize,
    seen: HashSet<String>,
    ids: Uniquer,
}

impl PageReader {
    /// A reader that reads only the elements `root_selector` matches in HTML pages (the whole
    /// page where it matches nothing) and cuts passages of `passage_tokens` word pieces
    /// ([`lightembed_ingest::PASSAGE_TOKENS`] by default in the CLI).
    ///
    /// Errors: `--root-selector: reason` for a selector that does not parse.
    pub fn new(
        root_selector: Option<&str>,
        passage_tokens: usize,
    ) -> Result<PageReader, BuildError> {
        let root = match root_selector.map(RootSelector::parse) {
            Some(Err(e)) => fail!("--root-selector: {e}"),
            Some(Ok(r)) => Some(r),
            None => None,
        };
        Ok(PageReader {
            root,
            passage_tokens,
            seen: HashSet::new(),
            ids: Uniquer::new('~', 2),
        })
    }

    /// The ids given so far: records that bring their own ids (JSON Lines) claim them here, so
    /// ids stay unique across every input.
    pub fn ids(&mut self) -> &mut Uniquer {
        &mut self.ids
    }

    /// Reads the document at `url` (`kind` says how) from its bytes into `out`, sized for
    /// `model` ([`lightembed_ingest::document_passages`]). A text file that is binary (a NUL byte
    /// in its first 8 KiB) is skipped, and so is a PDF, Word, OpenDocument or EPUB file that
    /// cannot be read (encrypted, no text layer, broken, too large), with the reason.
    pub fn read(
        &mut self,
        model: &Model,
        url: &str,
        kind: Kind,
        bytes: &[u8],
        out: &mut Vec<Passage>,
    ) -> PageOutcome {
        if !kind.format().is_binary() && ingest::looks_binary(bytes) {
            return PageOutcome {
                skipped: Some("binary file (a NUL byte in its first 8 KiB)".into()),
                ..PageOutcome::default()
            };
        }
        let sizer = Sizer::with_tokens(model, self.passage_tokens);
        let before = out.len();
        // The warning joins both notes when both apply (a guessed charset; markup nested past
        // the depth limit).
        let (passages, warning) = match ingest::document_passages(
            bytes,
            kind.format(),
            url,
            &sizer,
            &mut self.seen,
            self.root.as_ref(),
        ) {
            Ok(read) => read,
            Err(e) => {
                return PageOutcome {
                    skipped: Some(e.to_string()),
                    ..PageOutcome::default()
                }
            }
        };
        for mut p in passages {
            p.id = self.ids.unique(&p.id);
            out.push(p);
        }
        PageOutcome {
            passages: out.len() - before,
            skipped: None,
            warning,
        }
    }

    /// Adds `text` as one document at `url` titled `title` (Pagefind's custom records): cut into
    /// passages like a page without headings. Returns the passages added.
    pub fn read_record(
        &mut self,
        model: &Model,
        url: &str,
        title: &str,
        text: &str,
        out: &mut Vec<Passage>,
    ) -> usize {
        let sizer = Sizer::with_tokens(model, self.passage_tokens);
        let page_title = if title.is_empty() { url } else { title };
        let before = out.len();
        for (n, chunk) in sizer
            .passages("", &ingest::collapse_ws(text))
            .into_iter()
            .enumerate()
        {
            if !self.seen.insert(chunk.clone()) {
                continue;
            }
            out.push(Passage {
                id: self.ids.unique(&format!("{url}:{}", n + 1)),
                title: page_title.to_string(),
                page_title: page_title.to_string(),
                heading: String::new(),
                url: url.to_string(),
                embed_text: ingest::embed_text("", &chunk),
                text: chunk,
                page: None,
            });
        }
        out.len() - before
    }
}

/// The error of a build that found no text: how many files were read, and how many the excludes
/// left out when that explains it (`--exclude` that matched every page).
pub fn no_text(files_read: usize, excluded: usize) -> BuildError {
    let files = if files_read == 1 { "file" } else { "files" };
    if excluded > 0 {
        let left = if excluded == 1 {
            "file was"
        } else {
            "files were"
        };
        BuildError(format!(
            "no text found in the inputs ({files_read} {files} read; {excluded} {left} left out by \
             --exclude and the default rules)"
        ))
    } else {
        BuildError(format!(
            "no text found in the inputs ({files_read} {files} read)"
        ))
    }
}

/// The URL of a file at `rel` (relative to the site or input folder, `/`-separated): each path
/// component percent-encoded ([`lightembed_ingest::url_path_encode`]).
pub fn url_of(rel: &str) -> String {
    rel.split('/')
        .map(lightembed_ingest::url_path_encode)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_rules_keep_pages_only() {
        let ex = Excludes::site(&["drafts/**".to_string()], true).unwrap();
        assert!(ex.is_site_page("index.html"));
        assert!(ex.is_site_page("a/B.HTM"));
        assert!(!ex.is_site_page("notes.md"));
        assert!(!ex.is_site_page("lightembed/x.html"));
        assert!(!ex.is_site_page("drafts/x.html"));
        assert!(!ex.is_site_page("_sources/x.html"));
        assert!(Excludes::site(&[], false)
            .unwrap()
            .is_site_page("_sources/x.html"));
        assert_eq!(
            Excludes::site(&["a[".to_string()], true).unwrap_err().0,
            "--exclude \"a[\": not a valid glob: error parsing glob 'a[': unclosed character class; missing ']'"
        );
    }

    #[test]
    fn txt_beside_a_page_is_asked_about() {
        let ex = Excludes::new(&[], true).unwrap();
        assert!(ex.excludes("git-add.txt", || true));
        assert!(!ex.excludes("git-add.txt", || false));
        assert!(!Excludes::new(&[], false)
            .unwrap()
            .excludes("git-add.txt", || true));
    }

    #[test]
    fn urls_are_encoded_per_component() {
        assert_eq!(url_of("a b/c#d.html"), "a%20b/c%23d.html");
        assert_eq!(Kind::of("x.Markdown"), Some(Kind::Markdown));
        assert_eq!(Kind::of("x"), None);
    }
}
