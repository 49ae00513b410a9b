//! The `lightembed` binary: parse the command line, run it ([`lightembed_cli::main`]).

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Under WASI (the npm package's launcher runs this build under Node) the working folder is
    // the host's, passed in `LIGHTEMBED_CWD`, so relative paths mean what they mean to the user.
    #[cfg(target_os = "wasi")]
    if let Some(dir) = std::env::var_os("LIGHTEMBED_CWD") {
        let _ = std::env::set_current_dir(dir);
    }
    // A PDF the reader panics on is skipped with its reason; the panic itself is not news.
    lightembed_ingest::pdf::quiet_reader_panics();
    lightembed_cli::main(lightembed_cli::args::Cli::parse())
}
