//! Which files of a folder are read, and how: the file kinds by extension and the exclude rules
//! shared by `lightembed index`/`passages`/`site` and the npm package's `site`.
//!
//! Paths here are relative to the folder given (`/`-separated); the callers walk the folder.

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
}

impl Kind {
    /// How [`lightembed_ingest`] reads a file of this kind (JSONL lines are decoded as text).
    pub fn format(self) -> lightembed_ingest::Format {
        use lightembed_ingest::Format;
        match self {
            Kind::Markdown => Format::Markdown,
            Kind::Html => Format::Html,
            Kind::Jsonl | Kind::Text => Format::Text,
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
