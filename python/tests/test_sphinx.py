"""lightembed.sphinx: a real Sphinx build of a small project (two levels of pages, an API entry)
with ``extensions = ["lightembed.sphinx"]``: the bundle is written into the output, every page
links the widget with a path that works from its own folder, the box replaces Sphinx's search
box (or sits above it), the generated pages are not indexed, the content is searchable, and a
failed index build fails the Sphinx build with lightembed's message."""

from __future__ import annotations

import json
import re

import pytest

from conftest import run

sphinx = pytest.importorskip("sphinx")
from sphinx.cmd.build import build_main  # noqa: E402

CONF = """
project = "Garden Handbook"
extensions = ["lightembed.sphinx"]
html_theme = "alabaster"
{extra}
"""

INDEX = """
Garden Handbook
===============

.. toctree::

   tools/pruning
   api

Watering
--------

Water tomato plants deeply twice a week in the morning; mulch keeps the soil moist between waterings.
"""

PRUNING = """
Pruning
=======

Cut roses back by a third in late winter, just above an outward-facing bud, with sharp shears.
"""

API = """
API
===

.. py:function:: compost(days)

   Turns kitchen scraps into compost after the given number of days in a warm heap.
"""


def make_project(tmp_path, extra=""):
    src = tmp_path / "src"
    (src / "tools").mkdir(parents=True)
    (src / "conf.py").write_text(CONF.format(extra=extra), encoding="utf-8")
    (src / "index.rst").write_text(INDEX, encoding="utf-8")
    (src / "tools" / "pruning.rst").write_text(PRUNING, encoding="utf-8")
    (src / "api.rst").write_text(API, encoding="utf-8")
    return src


def build(src, out):
    return build_main(["-q", "-b", "html", str(src), str(out)])


@pytest.fixture
def console(console_script):
    """Runs the wheel's `lightembed` console script."""
    return lambda *args: run([console_script, *args])


def test_a_sphinx_build_gets_search_by_meaning(tmp_path, console):
    src = make_project(tmp_path)
    out = tmp_path / "html"
    assert build(src, out) == 0
    manifest = json.loads((out / "lightembed" / "manifest.json").read_text())
    assert manifest["index"]["pages"] == 3  # index, tools/pruning, api: not search or genindex
    top = (out / "index.html").read_text()
    nested = (out / "tools" / "pruning.html").read_text()
    # The widget's files, relative to each page's folder.
    assert '<script type="module" src="lightembed/lightembed-ui.js"></script>' in top
    assert '<script type="module" src="../lightembed/lightembed-ui.js"></script>' in nested
    assert '<link rel="stylesheet" href="../lightembed/lightembed-ui.css">' in nested
    # The box replaces Sphinx's search box.
    assert '<lightembed-search placeholder="Search the docs"></lightembed-search>' in top
    assert 'id="searchbox"' not in top and 'action="search.html"' not in top
    # The bundle is searchable, and by meaning: no query word is in the page.
    r = console("search", "--index", str(out / "lightembed"), "--json", "-k", "1", "how often should I irrigate tomatoes")
    assert r.returncode == 0, r.stderr
    hit = json.loads(r.stdout)["results"][0]
    assert hit["url"] == "index.html#watering"
    r = console("search", "--index", str(out / "lightembed"), "--json", "-k", "1", "make compost from scraps")
    assert json.loads(r.stdout)["results"][0]["url"].startswith("api.html#")


def test_configuration_is_honoured(tmp_path, console):
    src = make_project(
        tmp_path,
        extra='lightembed_exclude = ["api.html"]\nlightembed_placeholder = "Ask the <handbook>"\n'
        "lightembed_replace_search = False\nlightembed_dims = 64\n",
    )
    out = tmp_path / "html"
    assert build(src, out) == 0
    manifest = json.loads((out / "lightembed" / "manifest.json").read_text())
    assert manifest["index"]["pages"] == 2
    assert manifest["index"]["dims"] == 64
    top = (out / "index.html").read_text()
    assert '<lightembed-search placeholder="Ask the &lt;handbook&gt;"></lightembed-search>' in top
    # Beside Sphinx's own search box, not instead of it.
    assert re.search(r'action="search\.html"', top)


def test_a_failed_index_build_fails_the_sphinx_build(tmp_path, capsys):
    src = make_project(tmp_path, extra='lightembed_dims = 100\n')
    out = tmp_path / "html"
    assert build(src, out) != 0
    err = capsys.readouterr().err
    assert "lightembed: --dims: " in err
    assert not (out / "lightembed").exists()
