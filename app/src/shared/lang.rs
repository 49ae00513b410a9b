//! The app's languages: which models and which bundled corpus go with each, and where each
//! language's index is stored.
//!
//! A model's language comes from its `model_id` (`lightembed-{lang}-{n}l`, docs/architecture.md
//! "Model identities"; `scripts/models_manifest.py` writes it into `models/manifest.json` as
//! `"lang"`). The UI lists the chosen language's models and indexes that language's corpus. Each
//! language keeps its index in its own IndexedDB database ([`db_name`]): English in the app's
//! original database, so nothing changes for it, another language beside it. Switching language
//! never puts one corpus's passages into the other's index, and switching back restores the
//! other index without embedding anything.

/// One language the app offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language {
    /// The code in model ids (`en`, `tr`).
    pub code: &'static str,
    /// The name shown in the picker, in the language itself.
    pub name: &'static str,
    /// The bundled corpus (JSON lines written by `lightembed passages`), relative to the page.
    pub corpus_url: &'static str,
    /// What the "load corpus" button indexes: "Index {corpus_name}".
    pub corpus_name: &'static str,
    /// The corpus's work, for the footer.
    pub corpus_work: &'static str,
    /// Where its text comes from, for the footer.
    pub corpus_source: &'static str,
    /// The search box's placeholder once something is indexed.
    pub ask: &'static str,
}

/// English: the Rust book (`scripts/make_corpus.sh`).
pub const ENGLISH: Language = Language {
    code: "en",
    name: "English",
    corpus_url: "corpus/rust-book.jsonl",
    corpus_name: "the Rust book",
    corpus_work: "The Rust Programming Language",
    corpus_source: "rust-doc",
    ask: "Ask the Rust book something…",
};

/// Turkish: the how-to guides of LibreOffice's Turkish help, Writer's and the general ones
/// (`scripts/make_corpus_tr.sh`).
pub const TURKISH: Language = Language {
    code: "tr",
    name: "Türkçe",
    corpus_url: "corpus/libreoffice-help-tr.jsonl",
    corpus_name: "the LibreOffice help (Türkçe)",
    corpus_work: "LibreOffice Yardım",
    corpus_source: "libreoffice-help-tr",
    ask: "LibreOffice yardımına bir soru sorun…",
};

/// Every language, the default (English) first.
pub const LANGUAGES: [Language; 2] = [ENGLISH, TURKISH];

/// The language with this code.
pub fn language(code: &str) -> Option<&'static Language> {
    LANGUAGES.iter().find(|l| l.code == code)
}

/// The language a model id names by the project's scheme `lightembed-{lang}-{n}l`
/// (`lightembed-tr-0l` → `tr`); `None` for an id outside the scheme (test fixtures, other models).
pub fn model_lang(model_id: &str) -> Option<&str> {
    let rest = model_id.strip_prefix("lightembed-")?;
    let (lang, layers) = rest.rsplit_once('-')?;
    let n = layers.strip_suffix('l')?;
    let ok = (2..=8).contains(&lang.len())
        && lang.bytes().all(|b| b.is_ascii_lowercase())
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit());
    ok.then_some(lang)
}

/// Whether a model of language `model_lang` (`None`: unknown) is offered under `code`: its own
/// language, or every language when it names none.
pub fn offered_under(model_lang: Option<&str>, code: &str) -> bool {
    model_lang.is_none_or(|l| l == code)
}

/// The IndexedDB database that holds language `code`'s index, passages and cached models:
/// `base` itself for English (the database the app always used) and for no language, else
/// `{base}-{code}`.
pub fn db_name(base: &str, code: Option<&str>) -> String {
    match code {
        None | Some("en") => base.to_string(),
        Some(c) => format!("{base}-{c}"),
    }
}

/// The `localStorage` key that remembers the model chosen for language `code`: the app's
/// original key for English, so an English choice made before languages existed is kept.
pub fn model_key(code: &str) -> String {
    if code == "en" {
        "lightembed.model".to_string()
    } else {
        format!("lightembed.model.{code}")
    }
}

/// The `localStorage` key of the chosen language.
pub const LANG_KEY: &str = "lightembed.lang";

/// The languages offered for models whose languages are `model_langs` (`None`: a model that
/// names none, offered under every language): those of [`LANGUAGES`] with at least one model,
/// in that order; English alone when there is none.
pub fn offered_languages<'a>(
    model_langs: impl IntoIterator<Item = Option<&'a str>> + Clone,
) -> Vec<Language> {
    let offered: Vec<Language> = LANGUAGES
        .iter()
        .filter(|l| {
            model_langs
                .clone()
                .into_iter()
                .any(|m| offered_under(m, l.code))
        })
        .copied()
        .collect();
    if offered.is_empty() {
        vec![ENGLISH]
    } else {
        offered
    }
}

/// The model to load for language `code` from `models` (`(url, language)` pairs, in the list's
/// order): `remembered` when it is offered under `code`, else the first that is.
pub fn pick_model<'a>(
    models: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    code: &str,
    remembered: Option<&str>,
) -> Option<String> {
    let offered: Vec<&str> = models
        .into_iter()
        .filter(|(_, lang)| offered_under(*lang, code))
        .map(|(url, _)| url)
        .collect();
    remembered
        .filter(|r| offered.contains(r))
        .or_else(|| offered.first().copied())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_name_their_language() {
        assert_eq!(model_lang("lightembed-en-0l"), Some("en"));
        assert_eq!(model_lang("lightembed-en-2l"), Some("en"));
        assert_eq!(model_lang("lightembed-tr-0l"), Some("tr"));
        assert_eq!(model_lang("lightembed-tr-12l"), Some("tr"));
        for other in [
            "lightembed-en",
            "lightembed-fixtr",
            "lightembed-EN-0l",
            "lightembed-en-l",
            "lightembed-en-2x",
            "lightembed--0l",
            "static-fp32",
            "stätic-tern",
            "",
        ] {
            assert_eq!(model_lang(other), None, "{other}");
        }
    }

    #[test]
    fn languages_have_their_own_corpus_and_database() {
        assert_eq!(LANGUAGES[0], ENGLISH, "English is the default");
        assert_eq!(language("tr"), Some(&TURKISH));
        assert_eq!(language("de"), None);
        // English keeps the app's original corpus, database and model key.
        assert_eq!(ENGLISH.corpus_url, "corpus/rust-book.jsonl");
        assert_eq!(db_name("lightembed", Some("en")), "lightembed");
        assert_eq!(db_name("lightembed", None), "lightembed");
        assert_eq!(db_name("lightembed", Some("tr")), "lightembed-tr");
        assert_eq!(model_key("en"), "lightembed.model");
        assert_eq!(model_key("tr"), "lightembed.model.tr");
        assert!(offered_under(Some("tr"), "tr"));
        assert!(!offered_under(Some("tr"), "en"));
        assert!(offered_under(None, "en") && offered_under(None, "tr"));
        let urls: std::collections::HashSet<_> = LANGUAGES.iter().map(|l| l.corpus_url).collect();
        assert_eq!(urls.len(), LANGUAGES.len());
    }

    #[test]
    fn the_model_list_follows_the_language() {
        let models = [
            ("models/lightembed-en-static.bin", Some("en")),
            ("models/lightembed-tr-static.bin", Some("tr")),
            ("models/lightembed-en-2l.bin", Some("en")),
        ];
        let langs = |ms: &[(&str, Option<&str>)]| -> Vec<&str> {
            offered_languages(ms.iter().map(|m| m.1))
                .iter()
                .map(|l| l.code)
                .collect()
        };
        assert_eq!(langs(&models), ["en", "tr"]);
        assert_eq!(langs(&models[..1]), ["en"]);
        assert_eq!(
            langs(&[("x.bin", Some("de"))]),
            ["en"],
            "nothing offered: English"
        );
        assert_eq!(
            langs(&[("x.bin", None)]),
            ["en", "tr"],
            "a model of no language: every one"
        );
        let pick = |code, remembered| pick_model(models.iter().copied(), code, remembered);
        // The first of the language, as before languages existed for English.
        assert_eq!(
            pick("en", None).as_deref(),
            Some("models/lightembed-en-static.bin")
        );
        assert_eq!(
            pick("en", Some("models/lightembed-en-2l.bin")).as_deref(),
            Some("models/lightembed-en-2l.bin")
        );
        assert_eq!(
            pick("tr", None).as_deref(),
            Some("models/lightembed-tr-static.bin")
        );
        // A remembered model of another language (or gone) is not loaded.
        assert_eq!(
            pick("tr", Some("models/lightembed-en-2l.bin")).as_deref(),
            Some("models/lightembed-tr-static.bin")
        );
        assert_eq!(
            pick("en", Some("models/old.bin")).as_deref(),
            Some("models/lightembed-en-static.bin")
        );
        assert_eq!(pick("de", None), None);
        // A forced model (`?model=`, language unknown) serves every language.
        assert_eq!(
            pick_model([("/e2e/x.bin", None)], "tr", None).as_deref(),
            Some("/e2e/x.bin")
        );
    }
}
