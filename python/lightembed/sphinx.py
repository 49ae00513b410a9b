"""Search by meaning for Sphinx HTML output: ``extensions = ["lightembed.sphinx"]``.

After an HTML build (``sphinx-build -b html``, ``dirhtml`` too) the extension indexes the output
with the same pipeline as ``lightembed site`` (Sphinx's content element and API entries become
sections; its chrome, ``_sources/``, the search page and the general index are left out) and
writes the search bundle to ``OUTDIR/lightembed/``. Every page gets the widget's stylesheet and
module script in its ``<head>``, and the ``<lightembed-search>`` box in place of Sphinx's own
search box (the sidebar's ``searchbox.html`` or ``searchfield.html``), or beside it.

Configuration (``conf.py``), all optional:

``lightembed_exclude``
    Globs of pages to leave out, relative to the output folder (default: ``[]``; ``search.html``,
    ``genindex.html``, ``genindex-*.html`` and ``py-modindex.html`` are always left out).
``lightembed_model``
    Path of a ``.bin`` model (default: the bundled English static model).
``lightembed_dims``
    Index dims, a Matryoshka prefix of the model (default: 128 when the model has it).
``lightembed_placeholder``
    The box's placeholder text (default: ``"Search the docs"``).
``lightembed_replace_search``
    ``True`` (default): the box replaces Sphinx's search box; ``False``: it sits above it.
``lightembed_root_selector``
    CSS selector of the pages' content element (default: none: Sphinx's chrome is skipped anyway).

A failed index build fails the Sphinx build with lightembed's message (``sphinx.errors.ExtensionError``).
"""

from __future__ import annotations

import html
import os
import pathlib
from typing import Any, Dict

from lightembed import LightembedError, __version__, build_site

#: Pages Sphinx generates that are not content: its search page and its indexes.
GENERATED_PAGES = ("search.html", "genindex.html", "genindex-*.html", "py-modindex.html")

_TEMPLATES = pathlib.Path(__file__).with_name("sphinx_templates")

#: In the sidebar the results are listed below the box, in flow, not dropped down over the page:
#: themes clip their sidebar (alabaster's has ``overflow-y: auto``), which cut a drop-down off at
#: the sidebar's end. The sidebar's list and link rules (bullets, indents, dotted underlines) are
#: kept off the results; these selectors outweigh the themes' ``div.sphinxsidebar ul ul`` and
#: ``div.sphinxsidebar a``, which come later in the page.
_SIDEBAR_CSS = (
    "div.lightembed-searchbox lightembed-search ul.lightembed-results { position: static; margin: 0; }"
    " div.lightembed-searchbox lightembed-search ul.lightembed-sections"
    " { list-style: none; margin: .2rem 0 0; padding: 0 0 0 .8rem; }"
    " div.lightembed-searchbox lightembed-search a { border-bottom: 0; }"
)


def _config_inited(app: Any, config: Any) -> None:
    # Our searchbox.html comes before the theme's (templates_path is searched first).
    config.templates_path = [str(_TEMPLATES), *list(config.templates_path or [])]


def _page_context(app: Any, pagename: str, templatename: str, context: Dict[str, Any], doctree: Any) -> None:
    if app.builder.format != "html":
        return
    pathto = context["pathto"]
    css = pathto("lightembed/lightembed-ui.css", 1)
    js = pathto("lightembed/lightembed-ui.js", 1)
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="stylesheet" href="{html.escape(css)}">'
        f'\n<script type="module" src="{html.escape(js)}"></script>'
        f"\n<style>{_SIDEBAR_CSS}</style>"
    )
    context["lightembed_placeholder"] = app.config.lightembed_placeholder
    context["lightembed_replace_search"] = app.config.lightembed_replace_search


def _build_finished(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from sphinx.errors import ExtensionError
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    cfg = app.config
    exclude = [*GENERATED_PAGES, *cfg.lightembed_exclude]
    try:
        bundle = build_site(
            app.outdir,
            model=cfg.lightembed_model or None,
            dims=cfg.lightembed_dims,
            exclude=exclude,
            root_selector=cfg.lightembed_root_selector,
        )
    except LightembedError as e:
        raise ExtensionError(f"lightembed: {e}") from e
    log.info("lightembed: search bundle written to %s", os.fspath(bundle))


def setup(app: Any) -> Dict[str, Any]:
    """Registers the extension (Sphinx calls this for ``extensions = ["lightembed.sphinx"]``)."""
    app.add_config_value("lightembed_exclude", [], "html", list)
    app.add_config_value("lightembed_model", None, "html")
    app.add_config_value("lightembed_dims", None, "html")
    app.add_config_value("lightembed_placeholder", "Search the docs", "html", str)
    app.add_config_value("lightembed_replace_search", True, "html", bool)
    app.add_config_value("lightembed_root_selector", None, "html")
    app.connect("config-inited", _config_inited)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _build_finished)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
