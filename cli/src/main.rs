//! The `lightembed` binary: parse the command line, run it ([`lightembed_cli::main`]).

use clap::Parser;

fn main() -> std::process::ExitCode {
    lightembed_cli::main(lightembed_cli::args::Cli::parse())
}
