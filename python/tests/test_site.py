"""lightembed.build_site: the CLI's `site` command in-process."""

from __future__ import annotations

import json
import shutil

import pytest

import lightembed
from conftest import STATIC_MODEL, cli_error, run

PAGES = {
    "index.html": "<html><head><title>Garden tools</title></head><body><main><h1>Garden tools</h1>"
    "<h2 id='spade'>Spades</h2><p>A stainless steel spade with a wooden handle lasts for decades."
    "</p><h2 id='shears'>Shears</h2><p>Pruning shears cut cleanly only when they are sharp; rub the"
    " bevel with a whetstone.</p></main></body></html>",
    "soil.html": "<html><head><title>Soil</title></head><body><h1>Soil</h1><p>Compost and leaf "
    "mould feed the soil; clay holds water, sand drains it.</p></body></html>",
    "bees/index.htm": "<html><head><title>Beekeeping</title></head><body><h1>Beekeeping</h1><p>A "
    "hive needs a sunny spot sheltered from the wind, and water nearby.</p></body></html>",
}


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    for name, html in PAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(html, encoding="utf-8")
    return root


def test_build_site_writes_a_bundle_the_cli_searches(cli, site, tmp_path):
    bundle = lightembed.build_site(site)
    assert bundle == site / "lightembed"
    manifest = json.loads((bundle / "manifest.json").read_text())
    for key in ("core", "model", "wasm"):
        assert (bundle / manifest["files"][key]).is_file(), key
    assert manifest["index"]["dims"] == 128  # the site default
    # The same site built by the CLI has as many passages.
    copy = tmp_path / "copy"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns("lightembed"))
    proc = run([cli, "site", "--site", copy, "--quiet"])
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads((copy / "lightembed" / "manifest.json").read_text())
    assert manifest["index"]["passages"] == theirs["index"]["passages"]
    # The CLI searches the bundle Python wrote.
    proc = run([cli, "search", "--index", bundle, "--json", "beehive location"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["url"].startswith("bees/")
    # Re-running replaces the bundle; options reach the CLI.
    lightembed.build_site(site, model=lightembed.Model.load(STATIC_MODEL), dims=64,
                          exclude=["bees/**"], full_model=True)
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["index"]["dims"] == 64
    assert manifest["index"]["passages"] < theirs["index"]["passages"]


def test_build_site_errors_are_the_clis(cli, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    message = cli_error(run([cli, "site", "--site", empty]))
    assert message == (
        f"--site {empty}: no .html or .htm pages in this folder "
        "(lightembed site indexes a built site's HTML pages)"
    )
    with pytest.raises(lightembed.LightembedError) as e:
        lightembed.build_site(empty)
    assert str(e.value) == message
    with pytest.raises(lightembed.LightembedError, match="not a folder"):
        lightembed.build_site(tmp_path / "missing")
    (empty / "a.html").write_text("<h1>A</h1><p>text</p>")
    with pytest.raises(lightembed.LightembedError, match="^--dims: invalid dims: 100 is not one of"):
        lightembed.build_site(empty, dims=100)
