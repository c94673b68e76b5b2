"""The course's website, as a reader sees it: `website/build.py` builds it (as `make site`
does), it is served on 127.0.0.1, and headless Chromium opens every page. No page may have
a link to a page or file of the site that is not there, an image that does not load, or a
page error; every notebook is a page, every widget a picture, and no solution is on any
page. A screenshot of every page is taken: into figures/site/ with `make screenshots`
(which sets ATTNLIB_SITE_SCREENSHOTS), elsewhere into a temporary folder.

Links that leave the site (GitHub, Colab, Binder) are not followed: there is no network.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlparse

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS

from instructors import editions
from website import build

REPO = Path(__file__).resolve().parents[2]
HTML = REPO / "website" / "_build" / "html"
NOTEBOOKS = sorted((REPO / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """The built site, served on 127.0.0.1; yields its address."""
    subprocess.run([sys.executable, str(REPO / "website" / "build.py")], check=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(HTML))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def pages(site: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """What Chromium found on every page the site's own links reach from its front page."""
    from playwright.sync_api import sync_playwright

    configured = os.environ.get("ATTNLIB_SITE_SCREENSHOTS")
    screenshots = Path(configured) if configured else tmp_path_factory.mktemp("site")
    screenshots.mkdir(parents=True, exist_ok=True)
    found: dict[str, dict[str, Any]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        queue = [urljoin(site, "index.html")]
        while queue:
            url = queue.pop(0)
            if url in found:
                continue
            errors.clear()
            response = page.goto(url, wait_until="load")
            images = page.eval_on_selector_all(
                "img",
                "(images) => images.map((i) => ({src: i.currentSrc || i.src, ok: i.complete"
                " && i.naturalWidth > 0}))",
            )
            links = page.eval_on_selector_all("a[href]", "(links) => links.map((a) => a.href)")
            text = page.inner_text("article") if page.locator("article").count() else ""
            name = urlparse(url).path.rsplit("/", 1)[-1] or "index.html"
            page.screenshot(path=str(screenshots / f"{name[:-5]}.png"))
            found[url] = {
                "status": response.status if response else None,
                "images": images,
                "errors": list(errors),
                "text": text,
                "html": page.content(),
            }
            for link in links:
                link = urldefrag(link).url
                if not link.startswith(site) or link in found or link in queue:
                    continue
                if urlparse(link).path.endswith((".html", "/")):
                    queue.append(link)
                else:  # a file (the notebook's download, a picture): fetched, not opened
                    fetched = page.request.get(link)
                    found[link] = {"status": fetched.status, "images": [], "errors": []}
                    found[link] |= {"text": "", "html": ""}
        browser.close()
    return found


def test_every_linked_page_and_file_is_there(pages: dict, site: str) -> None:
    missing = {url: info["status"] for url, info in pages.items() if info["status"] != 200}
    assert not missing


def test_every_image_loads(pages: dict) -> None:
    broken = [
        f"{url}: {image['src']}"
        for url, info in pages.items()
        for image in info["images"]
        if not image["ok"]
    ]
    assert not broken


def test_no_page_error(pages: dict) -> None:
    assert not {url: info["errors"] for url, info in pages.items() if info["errors"]}


def test_every_notebook_document_guide_and_the_api_are_pages(pages: dict, site: str) -> None:
    names = {urlparse(url).path.rsplit("/", 1)[-1] for url in pages}
    expected = (
        {f"{path.stem}.html" for path in NOTEBOOKS}
        | {f"{page}.html" for page in build.DOCUMENTS.values()}
        | {"api.html"}
    )
    assert expected <= names


def test_the_api_page_has_every_public_name_with_its_docstring(pages: dict, site: str) -> None:
    import attnlib

    html = pages[urljoin(site, "api.html")]["html"]
    absent = [name for name in attnlib.__all__ if f'id="attnlib.{name}"' not in html]
    assert not absent
    assert "Shapes" in pages[urljoin(site, "api.html")]["text"]


def test_every_widget_is_a_picture_with_a_note(pages: dict, site: str) -> None:
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        widgets = sum(
            1
            for cell in cells
            for output in cell.get("outputs", [])
            if "application/vnd.jupyter.widget-view+json" in output.get("data", {})
        )
        text = pages[urljoin(site, f"{path.stem}.html")]["text"]
        assert text.count("A picture of the widget.") == widgets, path.name


def test_no_solution_is_on_any_page(pages: dict, site: str) -> None:
    """No solution line that the learner's edition does not show (the stub, the prose) is
    on its notebook's page (lines compared without whitespace, as editions.py does)."""
    shown = []
    for path in NOTEBOOKS:
        notebook = editions.read(path)
        learner = editions.learner_edition(notebook)
        learner_text = re.sub(r"\s+", "", "".join(map(editions.cell_source, learner["cells"])))
        page = re.sub(r"\s+", "", pages[urljoin(site, f"{path.stem}.html")]["text"])
        for cell in filter(editions.is_answer_cell, notebook["cells"]):
            for line in editions.solution_lines(editions.cell_source(cell)):
                if line in page and line not in learner_text:
                    shown.append(f"{path.name}: {line}")
    assert not shown
    assert any(editions.STUB.splitlines()[1] in info["text"] for info in pages.values())


def test_the_site_gives_a_way_to_run_each_notebook(pages: dict, site: str) -> None:
    repository, branch = editions.course_repository()
    for path in NOTEBOOKS:
        html = pages[urljoin(site, f"{path.stem}.html")]["html"]
        colab = f"colab.research.google.com/github/{repository}/blob/{branch}/notebooks/"
        assert colab + path.name in html, path.name
        assert "mybinder.org/v2/gh/" + repository in html, path.name
