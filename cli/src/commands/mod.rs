//! One file per command: each turns its parsed arguments ([`crate::args`]) into a call of the
//! library code, prints the result and returns the exit code. Nothing here parses pages, embeds
//! or searches by itself.

pub mod embed;
pub mod fingerprint;
pub mod index;
pub mod inspect;
pub mod passages;
pub mod search;
pub mod serve;
pub mod site;
pub mod tokenize;
pub mod verify;

use crate::args::Command;
use anyhow::Result;

/// Runs one parsed command.
pub fn run(command: Command) -> Result<u8> {
    match command {
        Command::Inspect(c) => inspect::run(c),
        Command::Verify(c) => verify::run(c),
        Command::Tokenize(c) => tokenize::run(c),
        Command::Embed(c) => embed::run(c),
        Command::Index(c) => index::run(c),
        Command::Passages(c) => passages::run(c),
        Command::Site(c) => site::run(c),
        Command::Search(c) => search::run(c),
        Command::Fingerprint(c) => fingerprint::run(c),
        Command::Serve(c) => serve::run(c),
    }
}
