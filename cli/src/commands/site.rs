//! `lightembed site`: index a built static site and write its search bundle (`SITE/lightembed/`).

use crate::args::SiteCommand;
use crate::site::SiteArgs;
use anyhow::Result;

/// Builds the bundle ([`crate::site::run`]).
pub fn run(c: SiteCommand) -> Result<u8> {
    crate::site::run(SiteArgs {
        site: c.site,
        model: c.model,
        dims: c.dims,
        exclude: c.exclude,
        default_excludes: !c.no_default_excludes,
        quiet: c.quiet,
        prune: !c.full_model,
        root_selector: c.root_selector,
        gzip: !c.no_gzip,
        partitions: c.partitions.map(|p| p as usize),
        probes: c.probes as usize,
        cells: c.cells.map(|c| c as usize),
        cell_probes: c.cell_probes as usize,
        tier_postings: c.tier_postings as usize,
        common_tier_postings: c.common_tier_postings as usize,
    })
}
