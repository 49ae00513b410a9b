//! Tests of the whole pipeline (pages → passages).

/// Issue 12 known failures: anchors only to ids that exist (`id="setup"` stays `#setup`, a
/// Sphinx `<section id>` is used, no invented slugs), percent-encoded; Sphinx/mdBook chrome
/// (`role="navigation"` sidebars, `related` bars, `headerlink` ¶) is not indexed.
#[test]
fn html_anchors_exist_in_the_page_and_chrome_is_skipped() {
    let html = r##"<html><head><title>Guide</title></head><body>
            <div class="related" role="navigation"><h3>Navigation</h3><ul><li>index</li><li>next</li></ul></div>
            <h2>Setup</h2><p>No id here.</p>
            <h2 id="setup">Setup again</h2><p>Has its own id.</p>
            <section id="my-sec"><h2>Inside a section<a class="headerlink" href="#my-sec">¶</a></h2><p>Sphinx style.</p></section>
            <h2 id="a b%c">Odd id</h2><p>Encoded.</p>
            <h2><a name="undoing-a-merge"></a>Undoing a merge</h2><p>DocBook target.</p>
            <div class="sphinxsidebar" role="navigation"><h3>Next topic</h3><p>Other page</p></div>
            <div class="menu-bar"><p>mdBook bar</p></div>
            </body></html>"##;
    let (title, sections) = html_sections(html);
    assert_eq!(title.as_deref(), Some("Guide"));
    let got: Vec<(String, Option<String>, String)> = sections
        .iter()
        .map(|s| (s.heading.clone(), s.anchor.clone(), s.blocks.join(" | ")))
        .collect();
    assert_eq!(
        got,
        [
            ("Setup".into(), None, "No id here.".into()),
            (
                "Setup again".into(),
                Some("setup".into()),
                "Has its own id.".into()
            ),
            (
                "Inside a section".into(),
                Some("my-sec".into()),
                "Sphinx style.".into()
            ),
            ("Odd id".into(), Some("a%20b%25c".into()), "Encoded.".into()),
            (
                "Undoing a merge".into(),
                Some("undoing-a-merge".into()),
                "DocBook target.".into()
            ),
        ]
    );
}

/// `--root-selector`: only the matched element is read (its chrome still skipped), the title
/// from `<title>`; a selector that matches nothing reads the whole page.
#[test]
fn root_selector_reads_only_the_content_element() {
    let html = r##"<html><head><title>Doc page</title></head><body>
            <div class="topbar"><p>Site menu text</p></div>
            <div id="content"><h1 id="intro">Intro</h1><p>Real content.</p>
              <nav><p>Inner nav</p></nav>
              <div id="content-inner"><p>Nested match is read once.</p></div></div>
            <div class="legal"><p>Legal footer text</p></div></body></html>"##;
    let root = RootSelector::parse("#content, #content-inner").unwrap();
    let (title, sections) = html_sections_in(html, Some(&root));
    assert_eq!(title.as_deref(), Some("Doc page"));
    let text: Vec<String> = sections.iter().flat_map(|s| s.blocks.clone()).collect();
    assert_eq!(text, ["Real content.", "Nested match is read once."]);
    assert_eq!(sections[0].anchor.as_deref(), Some("intro"));
    let nothing = RootSelector::parse("article.missing").unwrap();
    let (_, all) = html_sections_in(html, Some(&nothing));
    let all: Vec<String> = all.iter().flat_map(|s| s.blocks.clone()).collect();
    assert!(
        all.contains(&"Site menu text".to_string())
            && all.contains(&"Legal footer text".to_string())
    );
    assert!(RootSelector::parse("main[")
        .unwrap_err()
        .starts_with("invalid CSS selector \"main[\": "));
    assert_eq!(
        RootSelector::parse("###").unwrap_err(),
        "invalid CSS selector \"###\": empty selector"
    );
    assert_eq!(
        RootSelector::parse("main >").unwrap_err(),
        "invalid CSS selector \"main >\": dangling combinator"
    );
}

/// Issue 12 (passages fit the model): with the shipped static model (window 128), every
/// passage and its heading fit in `max_seq_len − 2` word pieces — the key sentence at piece
/// ~170 of a section is no longer cut off — and nothing is lost.
#[test]
fn passages_and_their_heading_fit_the_model_window() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../public/models/lightembed-en-static.bin"
    ))
    .unwrap();
    let model = lightembed::Model::from_bytes(&bytes).unwrap();
    let sizer = Sizer::new(&model);
    let tok = model.tokenizer();
    let heading = "Reading a file line by line in a loop";
    let text: String = (0..60)
        .map(|i| format!("Sentence number {i} explains one more detail of the file reader. "))
        .collect();
    let ps = sizer.passages(heading, &text);
    assert!(ps.len() >= 5, "{}", ps.len());
    let window = PASSAGE_TOKENS.min(model.header().max_seq_len as usize) - 2;
    for p in &ps {
        let n = tok.count_pieces(&format!("{heading}\n{p}"));
        assert!(n <= window, "{n} pieces > {window}: {p}");
        assert!(p.ends_with("file reader."), "cut at a sentence end: {p}");
    }
    for i in 0..60 {
        let s = format!("Sentence number {i} explains");
        assert!(ps.iter().any(|p| p.contains(&s)), "lost: {s}");
    }
}

use super::*;

#[test]
fn html_sections_follow_headings_and_skip_chrome() {
    let html = r##"<html><head><title>Structs - The Book</title><script>x()</script></head><body>
            <nav><p>Chapter list</p></nav>
            <h1 id="structs"><a href="#structs">Structs</a></h1>
            <p>A struct groups   values.</p>
            <h2><a class="header" href="#defining" id="defining">Defining</a></h2>
            <ul><li>first <code>item</code></li><li><p>second</p></li></ul>
            <pre><code>let x = 1;</code></pre>
            <footer><p>Copyright</p></footer></body></html>"##;
    let (title, sections) = html_sections(html);
    assert_eq!(title.as_deref(), Some("Structs - The Book"));
    assert_eq!(sections.len(), 2);
    assert_eq!(sections[0].heading, "Structs");
    assert_eq!(sections[0].anchor.as_deref(), Some("structs"));
    assert_eq!(sections[0].blocks, vec!["A struct groups values."]);
    assert_eq!(sections[1].anchor.as_deref(), Some("defining"));
    assert_eq!(
        sections[1].blocks,
        vec!["first item", "second", "let x = 1;"]
    );
}

/// `(heading, anchor, blocks)` of each section, for comparing with a literal.
fn outline(sections: &[Section]) -> Vec<(&str, Option<&str>, Vec<&str>)> {
    sections
        .iter()
        .map(|s| {
            (
                s.heading.as_str(),
                s.anchor.as_deref(),
                s.blocks.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

#[test]
fn markdown_sections_have_slugs_and_skip_empty_headings() {
    let md = "# Guide\n\nIntro *text*.\n\n## Install it\n\n- one\n- two\n\n## Empty\n\n## Install it\n\n```\ncargo build\n```\n";
    let (title, sections) = markdown_sections(md);
    assert_eq!(title.as_deref(), Some("Guide"));
    let got = outline(&sections);
    assert_eq!(
        got,
        vec![
            ("Guide", Some("guide"), vec!["Intro text."]),
            ("Install it", Some("install-it"), vec!["one", "two"]),
            ("Install it", Some("install-it-1"), vec!["cargo build"]),
        ]
    );
    assert_eq!(slug("Hello, World! (2)"), "hello-world-2");
}

// ---------------------------------------------------------------------------------------
// Whole pages through `page_passages`, with the shipped static model (window 128).

fn static_model() -> &'static lightembed::Model {
    static MODEL: std::sync::OnceLock<lightembed::Model> = std::sync::OnceLock::new();
    MODEL.get_or_init(|| {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../public/models/lightembed-en-static.bin"
        ))
        .expect("public/models/lightembed-en-static.bin");
        lightembed::Model::from_bytes(&bytes).expect("the shipped model loads")
    })
}

fn passages_of(content: &str, format: Format) -> Vec<Passage> {
    let sizer = Sizer::new(static_model());
    page_passages(content, format, "page", &sizer, &mut HashSet::new())
}

fn texts(ps: &[Passage]) -> Vec<&str> {
    ps.iter().map(|p| p.text.as_str()).collect()
}

/// Old app extractor failure: `&` followed by non-ASCII text panicked (a byte index inside a
/// character) or was cut; entities beyond the five XML ones were left as they were.
#[test]
fn entities_and_non_ascii_text_survive() {
    let ps = passages_of("<p>Q&A über Größe</p>", Format::Html);
    assert_eq!(texts(&ps), ["Q&A über Größe"]);
    let ps = passages_of(
        "<p>Tom & ジェリー</p><p>Salt & pepper 🌶</p><p>Don&rsquo;t</p><p>caf&eacute;</p>",
        Format::Html,
    );
    assert_eq!(texts(&ps), ["Tom & ジェリー Salt & pepper 🌶 Don’t café"]);
    for format in [Format::Markdown, Format::Text] {
        let ps = passages_of(
            "Tom & ジェリー\n\nSalt & pepper 🌶\n\nQ&A über Größe\n",
            format,
        );
        assert_eq!(
            texts(&ps),
            ["Tom & ジェリー Salt & pepper 🌶 Q&A über Größe"],
            "{format:?}"
        );
    }
}

/// Old app extractor failure: a `<` inside an inline script was taken for a tag and the rest
/// of the page was lost.
#[test]
fn a_less_than_sign_in_an_inline_script_does_not_drop_the_rest() {
    let ps = passages_of(
        "<script>for (i = 0; i < n; i++) {}</script><p>After</p>",
        Format::Html,
    );
    assert_eq!(texts(&ps), ["After"]);
    let ps = passages_of(
            "<html><head><script>if (a < b && c > d) x()</script></head><body><h1>T</h1><p>Before</p><script>y < 2</script><p>After</p></body></html>",
            Format::Html,
        );
    assert_eq!(texts(&ps), ["Before After"]);
}

/// Old app extractor failure: table cells were glued together (`NamePrice`, `Apple1.20`).
#[test]
fn table_cells_do_not_fuse() {
    let ps = passages_of(
        "<table><tr><th>Name</th><th>Price</th></tr><tr><td>Apple</td><td>1.20</td></tr></table>",
        Format::Html,
    );
    assert_eq!(texts(&ps), ["Name Price Apple 1.20"]);
    let ps = passages_of(
        "| Name | Price |\n|---|---|\n| Apple | 1.20 |\n",
        Format::Markdown,
    );
    assert_eq!(texts(&ps), ["Name Price Apple 1.20"]);
}

/// Old app extractor failure: a `# comment` line inside fenced code became a heading (and
/// the page title when it came first).
#[test]
fn a_hash_line_in_fenced_code_is_neither_a_heading_nor_the_title() {
    let md = "```sh\n# comment\nls -l\n```\n\n# Real title\n\nIntro.\n\n~~~\n# another\n~~~\n";
    let ps = passages_of(md, Format::Markdown);
    let got: Vec<(&str, &str, &str, &str)> = ps
        .iter()
        .map(|p| {
            (
                p.heading.as_str(),
                p.page_title.as_str(),
                p.url.as_str(),
                p.text.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("", "Real title", "page", "# comment ls -l"),
            (
                "Real title",
                "Real title",
                "page#real-title",
                "Intro. # another"
            ),
        ]
    );
    // Only code: no title at all (the page URL stands in).
    let ps = passages_of("```\n# comment\n```\n", Format::Markdown);
    assert_eq!((ps[0].heading.as_str(), ps[0].title.as_str()), ("", "page"));
}

/// Ids are numbered per URL, titles follow "Heading — Page title", the embedded text is
/// heading + newline + text, and text already seen on another page is skipped.
#[test]
fn sphinx_api_entries_are_sections_and_the_enclosing_section_resumes() {
    let html = r##"<html><head><title>json — Python docs</title></head><body>
            <section id="module-json"><h1>json — JSON encoder</h1><p>Intro text.</p>
            <dl class="py function"><dt class="sig sig-object py" id="json.dumps">json.dumps(obj, indent=None)</dt>
            <dd><p>Serialize obj.</p></dd>
            <dt class="sig sig-object py" id="json.loads">json.loads(s)</dt><dd><p>Deserialize s.</p></dd></dl>
            <dl><dt>plain term</dt><dd>plain definition</dd></dl>
            <p>After the list.</p></section></body></html>"##;
    let (_, sections) = html_sections(html);
    let got = outline(&sections);
    assert_eq!(
        got,
        vec![
            (
                "json — JSON encoder",
                Some("module-json"),
                vec!["Intro text."]
            ),
            (
                "json.dumps(obj, indent=None)",
                Some("json.dumps"),
                vec!["Serialize obj."]
            ),
            ("json.loads(s)", Some("json.loads"), vec!["Deserialize s."]),
            (
                "json — JSON encoder",
                Some("module-json"),
                vec!["plain term", "plain definition", "After the list."]
            ),
        ]
    );
}

#[test]
fn page_passages_ids_titles_embed_text_and_dedup() {
    let sizer = Sizer::new(static_model());
    let mut seen = HashSet::new();
    let html = "<html><head><title>Intro - Book</title></head><body>\
            <p>Loose text first.</p>\
            <h1 id=\"intro\">Intro</h1><p>About the book.</p>\
            <h2>No id</h2><p>One.</p><h2>No id either</h2><p>Two.</p>\
            <h2 id=\"x\">Shared</h2><p>Seen text.</p></body></html>";
    let ps = page_passages(html, Format::Html, "ch1.html", &sizer, &mut seen);
    let got: Vec<(&str, &str, &str, &str)> = ps
        .iter()
        .map(|p| {
            (
                p.id.as_str(),
                p.title.as_str(),
                p.url.as_str(),
                p.embed_text.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "ch1.html:1",
                "Intro - Book",
                "ch1.html",
                "Loose text first."
            ),
            (
                "ch1.html#intro:1",
                "Intro - Book",
                "ch1.html#intro",
                "Intro\nAbout the book."
            ),
            (
                "ch1.html:2",
                "No id — Intro - Book",
                "ch1.html",
                "No id\nOne."
            ),
            (
                "ch1.html:3",
                "No id either — Intro - Book",
                "ch1.html",
                "No id either\nTwo."
            ),
            (
                "ch1.html#x:1",
                "Shared — Intro - Book",
                "ch1.html#x",
                "Shared\nSeen text."
            ),
        ]
    );
    assert!(
        ps.iter()
            .all(|p| p.page_title == "Intro - Book"
                && p.embed_text == embed_text(&p.heading, &p.text))
    );
    // The same text on another page (a book's print.html) is not indexed twice.
    let again = page_passages(
        "<h1>All</h1><p>Seen text.</p><p>New text.</p><p>One.</p>",
        Format::Html,
        "print.html",
        &sizer,
        &mut seen,
    );
    assert_eq!(texts(&again), ["Seen text. New text. One."]);
    let again = page_passages("<p>Two.</p>", Format::Html, "p2.html", &sizer, &mut seen);
    assert!(again.is_empty());
    // A byte-order mark is not text; plain text has no headings and the URL as title.
    let ps = passages_of("\u{feff}one\r\n\r\ntwo", Format::Text);
    assert_eq!(
        (ps[0].id.as_str(), ps[0].title.as_str(), ps[0].text.as_str()),
        ("page:1", "page", "one two")
    );
    assert_eq!(Format::from_name("A.MD"), Format::Markdown);
    assert_eq!(Format::from_name("x.Htm"), Format::Html);
    assert_eq!(Format::from_name("notes"), Format::Text);
}

/// Detection alone ([`charset_label`], what the browser app uses with `TextDecoder`).
#[test]
fn charset_label_detects_utf8_declared_and_fallback() {
    let known = |l: &str| encoding_rs::Encoding::for_label(l.as_bytes()).is_some();
    // Latin-1 text: a guess.
    assert_eq!(
        charset_label(b"caf\xe9 cr\xe8me", Format::Text, known),
        Charset::Fallback
    );
    // A page declaring windows-1252 (double quotes, any case).
    let html = b"<html><head><META Charset=\"Windows-1252\"><title>Q</title></head><body><p>\x93quoted\x94 caf\xe9</p></body></html>";
    assert_eq!(
        charset_label(html, Format::Html, known),
        Charset::Declared("windows-1252".into())
    );
    // http-equiv form; the label as written (the decoder maps it: latin1 → windows-1252).
    assert_eq!(
        charset_label(
            b"<meta http-equiv=Content-Type content='text/html; charset=latin1'>\xe9",
            Format::Html,
            known
        ),
        Charset::Declared("latin1".into())
    );
    // UTF-8, with or without a BOM (also for HTML declaring something else).
    assert_eq!(
        charset_label("\u{feff}Größe".as_bytes(), Format::Text, known),
        Charset::Utf8
    );
    assert_eq!(
        charset_label("<meta charset=koi8-r>é".as_bytes(), Format::Html, known),
        Charset::Utf8
    );
    assert_eq!(charset_label(b"", Format::Text, known), Charset::Utf8);
    // Unknown labels are skipped for the next <meta>; what the caller's decoder knows counts.
    let two = b"<meta charset=bogus><meta charset=koi8-r><p>\xf0";
    assert_eq!(
        charset_label(two, Format::Html, known),
        Charset::Declared("koi8-r".into())
    );
    assert_eq!(
        charset_label(two, Format::Html, |_| false),
        Charset::Fallback
    );
    // UTF-8/UTF-16 declared on bytes that are not UTF-8, text and Markdown, a declaration
    // after 1024 bytes: a guess.
    for l in ["utf-8", "utf8", "utf-16", "unicode"] {
        let page = format!("<meta charset={l}><p>");
        let mut page = page.into_bytes();
        page.push(0xe9);
        assert_eq!(
            charset_label(&page, Format::Html, known),
            Charset::Fallback,
            "{l}"
        );
    }
    let md = b"<meta charset=koi8-r>\xe9";
    assert_eq!(
        charset_label(md, Format::Markdown, known),
        Charset::Fallback
    );
    assert_eq!(charset_label(md, Format::Text, known), Charset::Fallback);
    let mut late = vec![b' '; 1100];
    late.extend_from_slice(md);
    assert_eq!(charset_label(&late, Format::Html, known), Charset::Fallback);
}

/// [`is_utf8_or_utf16_label`] lists exactly the labels `encoding_rs` maps to UTF-8/UTF-16.
#[test]
fn utf8_and_utf16_labels_agree_with_encoding_rs() {
    let utf = [
        encoding_rs::UTF_8,
        encoding_rs::UTF_16LE,
        encoding_rs::UTF_16BE,
    ];
    for l in [
        "unicode-1-1-utf-8",
        "unicode11utf8",
        "unicode20utf8",
        "utf-8",
        "utf8",
        "x-unicode20utf8",
        "unicodefffe",
        "utf-16be",
        "csunicode",
        "iso-10646-ucs-2",
        "ucs-2",
        "unicode",
        "unicodefeff",
        "utf-16",
        "utf-16le",
    ] {
        assert!(is_utf8_or_utf16_label(l), "{l}");
        let enc = encoding_rs::Encoding::for_label(l.as_bytes());
        assert!(enc.is_some_and(|e| utf.contains(&e)), "{l}");
    }
    for l in [
        "windows-1252",
        "latin1",
        "iso-8859-1",
        "koi8-r",
        "shift_jis",
        "utf-7",
        "x-user-defined",
    ] {
        assert!(!is_utf8_or_utf16_label(l), "{l}");
        assert!(
            !encoding_rs::Encoding::for_label(l.as_bytes()).is_some_and(|e| utf.contains(&e)),
            "{l}"
        );
    }
}

/// Charsets: Latin-1 text and a page declaring windows-1252 decode to the right characters
/// (no U+FFFD); only the undeclared guess warns.
#[test]
fn decode_latin1_text_and_declared_charsets() {
    let (t, w) = decode(b"caf\xe9", Format::Text);
    assert_eq!(t, "café");
    assert_eq!(w.as_deref(), Some("not UTF-8; decoded as windows-1252"));

    let html = b"<html><head><meta charset=\"windows-1252\"><title>Q</title></head><body><p>\x93quoted\x94 caf\xe9</p></body></html>";
    let (t, w) = decode(html, Format::Html);
    assert!(t.contains("\u{201c}quoted\u{201d} café"), "{t}");
    assert!(!t.contains('\u{fffd}'));
    assert_eq!(w, None);
    let ps = passages_of(&t, Format::Html);
    assert_eq!(texts(&ps), ["“quoted” café"]);

    // http-equiv, single quotes, upper case, ISO-8859-1 (= windows-1252 in browsers).
    let html = b"<META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=ISO-8859-1'><p>\x93x\x94 \xfcber</p>";
    let (t, w) = decode(html, Format::Html);
    assert!(t.contains("“x” über"), "{t}");
    assert_eq!(w, None);
    // Another declared charset.
    let (t, _) = decode(
        b"<meta charset=koi8-r><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>",
        Format::Html,
    );
    assert!(t.contains("Привет"), "{t}");
    // A declaration of UTF-8 on bytes that are not: the windows-1252 guess, with the warning.
    let (t, w) = decode(b"<meta charset=utf-8><p>caf\xe9</p>", Format::Html);
    assert!(t.contains("café"));
    assert!(w.is_some());
    // A declaration past the first 1024 bytes is not seen (as in browsers): a guess.
    let mut late = vec![b' '; 1100];
    late.extend_from_slice(b"<meta charset=koi8-r><p>\xe9</p>");
    assert!(decode(&late, Format::Html).1.is_some());
    // UTF-16 with a byte-order mark, either order ("Unicode" from Windows tools): decoded,
    // no warning, and not binary although it is full of NULs.
    let text = "# Giraffes\n\nTall café 🦒\n";
    for (bom, le) in [(&b"\xFF\xFE"[..], true), (&b"\xFE\xFF"[..], false)] {
        let mut bytes = bom.to_vec();
        for u in text.encode_utf16() {
            bytes.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        assert!(!looks_binary(&bytes));
        assert_eq!(decode(&bytes, Format::Markdown), (text.into(), None));
    }
    assert!(looks_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
    assert!(!looks_binary("plain café".as_bytes()));
    // UTF-8 (with or without a BOM) as it is; Markdown/text never read <meta>.
    assert_eq!(
        decode("\u{feff}Größe 🌶".as_bytes(), Format::Text),
        ("Größe 🌶".into(), None)
    );
    assert_eq!(
        decode(b"<meta charset=koi8-r> ok", Format::Html).0,
        "<meta charset=koi8-r> ok"
    );
    assert!(decode(b"<meta charset=koi8-r>\xe9", Format::Markdown)
        .1
        .is_some());
}

// ---------------------------------------------------------------------------------------
// Issues: duplicate removal keyed on text alone, admonition titles as headings, generated
// back-of-book index pages, deeply nested HTML.

/// Issue: a page with "Linux" and "macOS" sections that share their steps lost the macOS
/// section, because duplicate removal (`seen`) was keyed on the text alone. The same text under
/// another heading is another place and is kept; a copy of a page under another URL (mdBook's
/// `print.html`: same headings, same text) is still dropped.
#[test]
fn the_same_text_under_another_heading_is_kept_and_copies_are_dropped() {
    let sizer = Sizer::new(static_model());
    let mut seen = HashSet::new();
    let steps = "<p>Download the archive.</p><p>Run the installer.</p>";
    let body = format!(
        "<h2 id=\"linux\">Linux</h2>{steps}<h2 id=\"macos\">macOS</h2>{steps}\
         <h2 id=\"windows\">Windows</h2><p>Run setup.exe.</p>"
    );
    let page = format!("<html><head><title>Install</title></head><body>{body}</body></html>");
    let ps = page_passages(&page, Format::Html, "install.html", &sizer, &mut seen);
    let got: Vec<(&str, &str)> = ps
        .iter()
        .map(|p| (p.id.as_str(), p.embed_text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "install.html#linux:1",
                "Linux\nDownload the archive. Run the installer."
            ),
            (
                "install.html#macos:1",
                "macOS\nDownload the archive. Run the installer."
            ),
            ("install.html#windows:1", "Windows\nRun setup.exe."),
        ]
    );
    // The book's print.html repeats the chapter, headings and all: nothing new but its preface.
    let print = format!(
        "<html><head><title>The Book</title></head><body><h1 id=\"preface\">Preface</h1>\
         <p>How to read this book.</p>{body}</body></html>"
    );
    let ps = page_passages(&print, Format::Html, "print.html", &sizer, &mut seen);
    let ids: Vec<&str> = ps.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["print.html#preface:1"]);
    // The same text under yet another heading, on another page: another place, kept.
    let ps = page_passages(
        &format!("<h2 id=\"bsd\">FreeBSD</h2>{steps}"),
        Format::Html,
        "bsd.html",
        &sizer,
        &mut seen,
    );
    assert_eq!(texts(&ps), ["Download the archive. Run the installer."]);
}

/// Issue: admonition boxes (DocBook `<div class="note"><h3 class="title">Note</h3>`) became
/// sections: everything after the box, up to the next real heading, was filed under "Note". A
/// box title is no heading of the page's outline: the box's text (its title included) and the
/// text after it stay in the current section. Sphinx's box titles are `<p>`s and were already
/// read so; both generators' markup is checked.
#[test]
fn admonition_titles_are_not_headings() {
    let docbook = r##"<html><head><title>Guide</title></head><body><div class="chapter">
        <div class="section"><div class="titlepage"><div><div><h2 class="title" style="clear: both"><a name="setup"></a>Setup</h2></div></div></div>
        <p>Install the package.</p>
        <div class="note" style="margin-left: 0.5in; margin-right: 0.5in;"><h3 class="title">Note</h3><p>Root is needed.</p></div>
        <p>Then start the service.</p>
        <div class="warning" style="margin-left: 0.5in; margin-right: 0.5in;"><h3 class="title">Warning</h3><p>Back up first.</p></div>
        <div class="tip"><h3 class="title">Tip</h3><p>Use sudo.</p></div>
        <div class="caution"><h3 class="title">Caution</h3><p>Mind the disk.</p></div>
        <div class="important"><h3 class="title">Important</h3><p>Read the log.</p></div>
        <p>Finally check the status.</p></div>
        <div class="section"><div class="titlepage"><div><div><h2 class="title" style="clear: both"><a name="usage"></a>Usage</h2></div></div></div>
        <p>Run it.</p></div></div></body></html>"##;
    let (_, sections) = html_sections(docbook);
    assert_eq!(
        outline(&sections),
        [
            (
                "Setup",
                Some("setup"),
                vec![
                    "Install the package.",
                    "Note",
                    "Root is needed.",
                    "Then start the service.",
                    "Warning",
                    "Back up first.",
                    "Tip",
                    "Use sudo.",
                    "Caution",
                    "Mind the disk.",
                    "Important",
                    "Read the log.",
                    "Finally check the status."
                ]
            ),
            ("Usage", Some("usage"), vec!["Run it."]),
        ]
    );
    let sphinx = r##"<html><head><title>Guide</title></head><body><div class="body" role="main">
        <section id="setup"><h1>Setup<a class="headerlink" href="#setup">¶</a></h1>
        <p>Install the package.</p>
        <div class="admonition note"><p class="admonition-title">Note</p><p>Root is needed.</p></div>
        <p>Then start the service.</p>
        <div class="admonition warning"><p class="admonition-title">Warning</p><p>Back up first.</p></div>
        <p>Finally check the status.</p>
        <section id="usage"><h2>Usage<a class="headerlink" href="#usage">¶</a></h2><p>Run it.</p></section>
        </section></div></body></html>"##;
    let (_, sections) = html_sections(sphinx);
    assert_eq!(
        outline(&sections),
        [
            (
                "Setup",
                Some("setup"),
                vec![
                    "Install the package.",
                    "Note",
                    "Root is needed.",
                    "Then start the service.",
                    "Warning",
                    "Back up first.",
                    "Finally check the status."
                ]
            ),
            ("Usage", Some("usage"), vec!["Run it."]),
        ]
    );
    // A theme that titles its boxes with a heading element: the same.
    let themed = r##"<section id="setup"><h1>Setup</h1><p>Install.</p>
        <div class="admonition note"><h4 class="admonition-title">Note</h4><p>Root is needed.</p></div>
        <p>Then start.</p></section>"##;
    let (_, sections) = html_sections(themed);
    assert_eq!(
        outline(&sections),
        [(
            "Setup",
            Some("setup"),
            vec!["Install.", "Note", "Root is needed.", "Then start."]
        )]
    );
}

/// Issue: generated back-of-book index pages (DocBook's `bookindex.html`, Sphinx's
/// `genindex.html`, `genindex-*.html`, `py-modindex.html`: link lists naming every topic) ranked
/// high for many questions. They are recognised by their markup, not their file name, and yield
/// no passages; an index inside a one-page book is skipped like chrome; a normal page about an
/// "index" is read.
#[test]
fn generated_index_pages_are_skipped() {
    let docbook = r##"<html><head><title>Index</title></head><body>
        <div class="navheader"><table width="100%" summary="Navigation header"><tr><th colspan="3" align="center">Index</th></tr>
        <tr><td width="20%" align="left"><a accesskey="p" href="apb.html">Prev</a> </td><th width="60%" align="center"> </th><td width="20%" align="right"> </td></tr></table><hr></div>
        <div class="index"><div class="titlepage"><div><div><h2 class="title"><a name="bookindex"></a>Index</h2></div></div></div>
        <div class="index"><div class="indexdiv"><h3>A</h3><dl>
        <dt>apt-get, <a class="indexterm" href="ch02.html#install">Installing packages</a></dt>
        <dd><dl><dt>upgrade, <a class="indexterm" href="ch02.html#upgrade">Upgrading the system</a></dt></dl></dd></dl></div>
        <div class="indexdiv"><h3>B</h3><dl><dt>backup, <a class="indexterm" href="ch05.html">Backing up your files</a></dt></dl></div></div></div>
        <div class="navfooter"><hr><table width="100%" summary="Navigation footer"><tr><td width="40%" align="left"><a accesskey="p" href="apb.html">Prev</a> </td>
        <td width="20%" align="center"> </td><td width="40%" align="right"> </td></tr><tr><td width="40%" align="left" valign="top">Appendix B. Glossary </td>
        <td width="20%" align="center"><a accesskey="h" href="index.html">Home</a></td><td width="40%" align="right" valign="top"> </td></tr></table></div>
        </body></html>"##;
    assert_eq!(passages_of(docbook, Format::Html), []);
    // A one-page book: its chapters are read, its index is not.
    let one_page = r##"<html><head><title>Admin Guide</title></head><body><div class="book">
        <div class="chapter"><div class="titlepage"><div><div><h2 class="title"><a name="install"></a>Installing</h2></div></div></div>
        <p>Run apt-get install.</p></div>
        <div class="index"><div class="titlepage"><div><div><h2 class="title"><a name="idx"></a>Index</h2></div></div></div>
        <div class="indexdiv"><h3>A</h3><dl><dt>apt-get, <a href="#install">Installing</a></dt></dl></div></div>
        </div></body></html>"##;
    let (_, sections) = html_sections(one_page);
    assert_eq!(
        outline(&sections),
        [("Installing", Some("install"), vec!["Run apt-get install."])]
    );

    // Sphinx, as Python's docs: the split index's first page, one letter's page, the module index.
    let sphinx = |body: &str| {
        format!(
            "<html><head><title>Index — Python 3.11 documentation</title></head><body>\
             <div class=\"document\"><div class=\"documentwrapper\"><div class=\"bodywrapper\">\
             <div class=\"body\" role=\"main\">{body}</div></div></div></div>\
             <div class=\"sphinxsidebar\" role=\"navigation\"><p>Quick search</p></div></body></html>"
        )
    };
    let split = sphinx(
        "<h1 id=\"index\">Index</h1><p>Index pages by letter:</p>\
         <div class=\"genindex-jumpbox\"><p><a href=\"genindex-A.html\"><strong>A</strong></a> | \
         <a href=\"genindex-B.html\"><strong>B</strong></a></p>\
         <p><a href=\"genindex-all.html\"><strong>Full index on one page</strong> (can be huge)</a></p></div>",
    );
    let letter = sphinx(
        "<h1 id=\"index\">Index &ndash; A</h1><table style=\"width: 100%\" class=\"indextable\"><tr>\
         <td style=\"width: 33%; vertical-align: top;\"><ul><li><a href=\"library/functions.html#abs\">abs()</a></li>\
         <li>abc<ul><li><a href=\"library/abc.html#module-abc\">module</a></li></ul></li></ul></td></tr></table>",
    );
    let all_in_one = sphinx(
        "<h1 id=\"index\">Index</h1><div class=\"genindex-jumpbox\"><a href=\"#A\"><strong>A</strong></a></div>\
         <h2 id=\"A\">A</h2><table style=\"width: 100%\" class=\"indextable genindextable\"><tr><td><ul>\
         <li><a href=\"api.html#abs\">abs() (built-in function)</a></li></ul></td></tr></table>",
    );
    let modindex = sphinx(
        "<h1>Python Module Index</h1><div class=\"modindex-jumpbox\"><a href=\"#cap-a\"><strong>a</strong></a></div>\
         <table class=\"indextable modindextable\"><tr class=\"cap\" id=\"cap-a\"><td></td><td><strong>a</strong></td><td></td></tr>\
         <tr><td></td><td><a href=\"library/abc.html#module-abc\"><code class=\"xref\">abc</code></a></td>\
         <td><em>Abstract base classes according to PEP 3119.</em></td></tr></table>",
    );
    for page in [&split, &letter, &all_in_one, &modindex] {
        assert_eq!(passages_of(page, Format::Html), [], "{page}");
    }

    // Pages about an index, or named like one, are read.
    let normal = r##"<html><head><title>Optics</title></head><body>
        <h1 id="index">Index</h1><p>The index of refraction of water is 1.33.</p>
        <div class="index"><ul><li>Snell's law relates the indices.</li></ul></div>
        <table class="index"><tr><td>glass</td><td>1.5</td></tr></table></body></html>"##;
    let sizer = Sizer::new(static_model());
    let ps = page_passages(
        normal,
        Format::Html,
        "genindex.html",
        &sizer,
        &mut HashSet::new(),
    );
    assert_eq!(
        texts(&ps),
        ["The index of refraction of water is 1.33. Snell's law relates the indices. glass 1.5"]
    );
}

/// Issue: deeply nested HTML took quadratic time (100k nested `<div>`s, 1.1 MB: 42 s as
/// reported, 25 min in a debug test build; now 0.7 s): html5ever walks its stack of open elements
/// at every block start tag. Tags nested deeper than [`MAX_DEPTH`] are ignored, with a warning for
/// the caller, and their text is still read. (No timing assertion: times measured by hand.)
#[test]
fn deeply_nested_html_is_read_to_a_depth_limit_with_a_warning() {
    let n = 100_000;
    let html = format!(
        "<html><head><title>Deep</title></head><body>{}<p>Deep paragraph.</p>{}\
         <p>After the divs.</p></body></html>",
        "<div>".repeat(n),
        "</div>".repeat(n)
    );
    let (title, sections, warning) = html_sections_with_warning(&html, None);
    assert_eq!(title.as_deref(), Some("Deep"));
    assert_eq!(
        outline(&sections),
        [("", None, vec!["Deep paragraph.", "After the divs."])]
    );
    assert_eq!(warning.as_deref(), Some(DEPTH_WARNING));
    let sizer = Sizer::new(static_model());
    let (ps, warning) = page_passages_with_warning(
        &html,
        Format::Html,
        "deep.html",
        &sizer,
        &mut HashSet::new(),
        None,
    );
    assert_eq!(texts(&ps), ["Deep paragraph. After the divs."]);
    assert_eq!(warning.as_deref(), Some(DEPTH_WARNING));
    assert!(DEPTH_WARNING.contains(&format!(" {MAX_DEPTH} ")));

    // Just past the limit: the elements below it are read as text of the one above.
    let nest = |depth: usize, inner: &str| {
        format!("{}{inner}{}", "<div>".repeat(depth), "</div>".repeat(depth))
    };
    let (_, sections, warning) = html_sections_with_warning(
        &nest(MAX_DEPTH + 5, "<h2 id=\"x\">Deep heading</h2><p>Text.</p>"),
        None,
    );
    assert_eq!(outline(&sections), [("", None, vec!["Deep heading Text."])]);
    assert!(warning.is_some());
    // Up to the limit (plus <html> and <body>): read as it is, no warning.
    let (_, sections, warning) = html_sections_with_warning(
        &nest(MAX_DEPTH - 1, "<h2 id=\"x\">Deep heading</h2><p>Text.</p>"),
        None,
    );
    assert_eq!(
        outline(&sections),
        [("Deep heading", Some("x"), vec!["Text."])]
    );
    assert_eq!(warning, None);
}

/// The depth is measured as the parser nests: long lists, tables, paragraphs and links without
/// end tags, and tags inside comments, scripts, styles and attribute values, are not deep
/// nesting, so such pages are read as they are (no warning).
#[test]
fn long_pages_without_end_tags_are_not_deep() {
    let n = 2 * MAX_DEPTH;
    let repeat = |s: &str| s.repeat(n);
    let pages = [
        format!("<ul>{}</ul>", repeat("<li>item <span>open")),
        format!("<div>{}</div>", repeat("<p>para <b>bold <a name=x>anchor")),
        format!("<select>{}</select>", repeat("<option>choice")),
        format!(
            "<select>{}</select>",
            repeat("<optgroup label=g><option>choice")
        ),
        format!("<table>{}</table>", repeat("<tr><td>cell<td><i>cell")),
        format!(
            "<table><tbody>{}</table>",
            repeat("<tr><th>h<td>cell</tbody><tbody>")
        ),
        format!("<dl>{}</dl>", repeat("<dt>term<dd>definition")),
        repeat("<h2>heading<h3>sub"),
        format!("<form>{}</form>", repeat("<form><input name=q>")),
        repeat("<br><img src=x.png><hr><wbr><input>"),
        format!("<p>{}</p>", repeat("<ruby>漢<rb>字<rt>ji</ruby>")),
        format!("<svg>{}</svg><p>after</p>", repeat("<path d='M0 0'/><g/>")),
        format!("<!-- {} --><p>after</p>", repeat("<div>")),
        format!(
            "<script>var s = '{}';</script><p>after</p>",
            repeat("<div>")
        ),
        format!(
            "<style>/* {} */</style><textarea>{}</textarea>",
            repeat("<div>"),
            repeat("<div>")
        ),
        repeat("<div title='a > b <div>'>x</div>"),
        repeat("<a href=#>link</a><a href=#>unclosed"),
    ];
    for page in &pages {
        let (_, _, warning) = html_sections_with_warning(page, None);
        assert_eq!(warning, None, "{}", &page[..page.len().min(200)]);
    }
}

/// `Passage::new` applies the one title rule and the embedding rule and keeps the page title
/// and heading apart, whatever dashes they hold (a Sphinx page title `Page — Project`): the
/// title of a passage is never the source of its parts. `page_passages` makes its passages
/// with it.
#[test]
fn passages_keep_page_title_and_heading_apart_from_the_display_title() {
    let p = Passage::new(
        "install.html#win:1",
        "Install — Garden 1.0 documentation",
        "Windows — 64-bit",
        "install.html#win",
        "Run setup.",
    );
    assert_eq!(
        p.title,
        "Windows — 64-bit — Install — Garden 1.0 documentation"
    );
    assert_eq!(p.page_title, "Install — Garden 1.0 documentation");
    assert_eq!(p.heading, "Windows — 64-bit");
    assert_eq!(p.embed_text, "Windows — 64-bit\nRun setup.");
    assert_eq!(
        (p.id.as_str(), p.url.as_str()),
        ("install.html#win:1", "install.html#win")
    );
    let bare = Passage::new("notes.txt:1", "notes.txt", "", "notes.txt", "a b");
    assert_eq!(
        (bare.title.as_str(), bare.embed_text.as_str()),
        ("notes.txt", "a b")
    );

    let model = lightembed::Model::from_bytes(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/models/static_fp32_uncased.bin"
        ))
        .unwrap(),
    )
    .unwrap();
    let sizer = Sizer::new(&model);
    let html = "<title>Install — Garden 1.0 documentation</title><p>Intro.</p>\
        <h2 id=\"win\">Windows</h2><p>Run setup.</p><h2 id=\"i\">Install</h2><p>Again.</p>";
    let ps = page_passages(
        html,
        Format::Html,
        "install.html",
        &sizer,
        &mut HashSet::new(),
    );
    let got: Vec<(&str, &str, &str)> = ps
        .iter()
        .map(|p| (p.title.as_str(), p.page_title.as_str(), p.heading.as_str()))
        .collect();
    let page = "Install — Garden 1.0 documentation";
    assert_eq!(
        got,
        [
            (page, page, ""),
            (
                "Windows — Install — Garden 1.0 documentation",
                page,
                "Windows"
            ),
            (page, page, "Install"),
        ]
    );
    for p in &ps {
        assert_eq!(
            *p,
            Passage::new(
                p.id.clone(),
                p.page_title.clone(),
                p.heading.clone(),
                p.url.clone(),
                p.text.clone()
            )
        );
    }
}
