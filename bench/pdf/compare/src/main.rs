// Extracts each PDF with pdf-extract and pdf_oxide, per page, into OUT/<lib>/<name>.txt
// (pages separated by \x0c), and prints name, lib, seconds, error.
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = std::path::Path::new(&args[1]);
    for path in &args[2..] {
        let name = std::path::Path::new(path).file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(path).unwrap();
        for lib in ["pdf-extract", "pdf_oxide"] {
            let t = Instant::now();
            let b = bytes.clone();
            let r = std::panic::catch_unwind(move || -> Result<Vec<String>, String> {
                if lib == "pdf-extract" {
                    pdf_extract::extract_text_from_mem_by_pages(&b).map_err(|e| e.to_string())
                } else {
                    let d = pdf_oxide::PdfDocument::from_bytes(b).map_err(|e| e.to_string())?;
                    let n = d.page_count().map_err(|e| e.to_string())?;
                    (0..n).map(|i| d.extract_text(i).map_err(|e| e.to_string())).collect()
                }
            });
            let secs = t.elapsed().as_secs_f64();
            let (text, err) = match r {
                Ok(Ok(p)) => (p.join("\x0c"), String::new()),
                Ok(Err(e)) => (String::new(), e),
                Err(_) => (String::new(), "panic".into()),
            };
            std::fs::create_dir_all(out.join(lib)).unwrap();
            std::fs::write(out.join(lib).join(format!("{name}.txt")), text).unwrap();
            println!("{name}\t{lib}\t{secs:.3}\t{}", err.replace('\n', " "));
        }
    }
}
