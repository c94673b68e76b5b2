"""Build the course's website (``make site``): every notebook a page, from its stored outputs.

Jupyter Book renders the pages (MyST Markdown and MyST-NB, on Sphinx). The book's sources
are assembled in ``website/_build/book/`` from the repository, and nothing is executed:

- each notebook of the instructors' edition, whose outputs are stored, with every solution
  taken out: an answer cell shows the stub a learner starts from, and no output; the cells
  only instructors have are left out, and a predict-first reveal shows what was measured but
  not its verdict;
- each widget (a slider or a playground) as the picture the browser test took of it
  (``figures/widgets/``, ``make screenshots``), with a note on how to run it live;
- the Colab install cell left out (it does nothing off Colab);
- the documents of ``docs/`` and the instructors' guide, their links to the repository's other
  files pointed at GitHub;
- attnlib's API reference, from its docstrings.

The Colab and Binder buttons on each notebook's page open the learner's edition
(``notebooks/``) of the repository that ``[tool.attnlib.course]`` in pyproject.toml names.

    python website/build.py            # build website/_build/html
    python website/build.py --sources  # only assemble website/_build/book
"""

from __future__ import annotations

import argparse
import base64
import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "website"
BUILD = SITE / "_build"
BOOK = BUILD / "book"
HTML = BUILD / "html"
WIDGET_PICTURES = REPO / "figures" / "widgets"

sys.path.insert(0, str(REPO / "instructors"))
import editions  # noqa: E402  (the learner's stub, the course's repository)

from attnlib.course.predictions import REVEAL_CALL  # noqa: E402

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
LIVE_NOTE = (
    "*A picture of the widget.* It runs live in the notebook: open this page in Colab or "
    "Binder (the buttons at the top), or in JupyterLab with `make lab`."
)

Notebook = dict[str, Any]


def notebook_title(notebook: Notebook) -> str:
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            for line in editions.cell_source(cell).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise ValueError("a notebook without a '# ' title")


def widget_pictures(number: str, cell_id: str) -> list[Path]:
    return sorted(WIDGET_PICTURES.glob(f"{number}-{cell_id}-*.png"))


def _picture_output(path: Path) -> dict[str, Any]:
    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": encoded, "text/plain": f"<the widget, as {path.name}>"},
    }


def _note_output() -> dict[str, Any]:
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/markdown": LIVE_NOTE, "text/plain": LIVE_NOTE},
    }


def page_notebook(notebook: Notebook, number: str) -> Notebook:
    """``notebook`` (the instructors' edition) as its page shows it: no solution, every widget
    a picture, no Colab install cell. Raises when a widget has no picture."""
    page = copy.deepcopy(notebook)
    cells = []
    for cell in page["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if editions.COLAB_TAG in tags or editions.INSTRUCTORS_ONLY_TAG in tags:
            continue
        if cell["cell_type"] == "code" and REVEAL_CALL.search(editions.cell_source(cell)):
            # The measurements stay on the page; the verdict and its explanations are the
            # reveal's result, which a reader meets only by running the notebook.
            cell["outputs"] = [o for o in cell["outputs"] if o["output_type"] != "execute_result"]
        if editions.is_answer_cell(cell):
            stub = editions.stub_solutions(editions.cell_source(cell))
            cell["source"] = editions._as_lines(stub)
            cell["outputs"], cell["execution_count"] = [], None
        elif cell["cell_type"] == "code" and any(
            WIDGET_MIME in output.get("data", {}) for output in cell["outputs"]
        ):
            pictures = widget_pictures(number, cell["id"])
            if not pictures:
                raise FileNotFoundError(
                    f"no picture of the widget of cell {cell['id']} in notebook {number}: "
                    f"run `make screenshots` (figures/widgets/{number}-{cell['id']}-1.png)"
                )
            kept = [o for o in cell["outputs"] if WIDGET_MIME not in o.get("data", {})]
            cell["outputs"] = [*kept, *map(_picture_output, pictures), _note_output()]
        cells.append(cell)
    page["cells"] = cells
    return page


def _github(repository: str, branch: str, path: str) -> str:
    return f"https://github.com/{repository}/blob/{branch}/{path}"


# The repository's Markdown documents that are pages of the site, and each page's name.
DOCUMENTS = {
    "docs/notebooks.md": "notebooks",
    "docs/package.md": "package",
    "docs/measurements.md": "measurements",
    "docs/setup.md": "setup",
    "instructors/README.md": "instructors",
}


def document_page(source: str, repository: str, branch: str, notebooks: list[str]) -> str:
    """One of ``DOCUMENTS`` as its page: a link to another page (a document or a notebook,
    of either edition) stays on the site, a link to any other file of the repository goes
    to GitHub, and the pictures are copied beside it."""
    document = REPO / source
    text = document.read_text(encoding="utf-8")

    def relink(match: re.Match[str]) -> str:
        bang, label, target = match.group(1), match.group(2), match.group(3)
        if re.match(r"[a-z]+:|#", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = (document.parent / path).resolve().relative_to(REPO).as_posix()
        suffix = f"#{anchor}" if anchor else ""
        if bang:  # a picture: copied into the book
            (BOOK / resolved).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / resolved, BOOK / resolved)
            return f"![{label}]({resolved})"
        if resolved in DOCUMENTS:
            return f"[{label}]({DOCUMENTS[resolved]}.md{suffix})"
        stem = Path(resolved).stem
        if resolved.endswith(".ipynb") and stem in notebooks:
            return f"[{label}]({stem}.ipynb{suffix})"
        return f"[{label}]({_github(repository, branch, resolved)}{suffix})"

    return re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)", relink, text)


def api_page() -> str:
    import attnlib

    names = "\n".join(f"   {name}" for name in attnlib.__all__)
    return (
        "# attnlib's API\n\n"
        "Every public name of `attnlib`, with its docstring: the formula, the shapes and, for\n"
        "masks, the polarity (`True` means *may attend*).\n\n"
        "```{eval-rst}\n"
        ".. currentmodule:: attnlib\n\n"
        ".. autosummary::\n\n"
        f"{names}\n"
        "```\n\n"
        "```{eval-rst}\n"
        ".. automodule:: attnlib\n"
        "   :members:\n"
        "   :imported-members:\n"
        "```\n"
    )


def index_page(titles: dict[str, str], repository: str) -> str:
    """website/index.md with the list of notebooks and the repository's links filled in."""
    items = "\n".join(f"- [{title}]({stem}.ipynb)" for stem, title in titles.items())
    text = (SITE / "index.md").read_text(encoding="utf-8")
    return text.replace("<!-- the notebooks -->", items).replace("OWNER/REPOSITORY", repository)


def config(repository: str, branch: str) -> dict[str, Any]:
    return {
        "title": "attnlib: attention, from the dot product to the Transformer",
        "author": "the attnlib authors",
        "copyright": "2026",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "repository": {
            "url": f"https://github.com/{repository}",
            "branch": branch,
            "path_to_book": "notebooks",  # the buttons open the learner's edition
        },
        "launch_buttons": {
            "colab_url": "https://colab.research.google.com",
            "binderhub_url": "https://mybinder.org",
            "notebook_interface": "jupyterlab",
        },
        "html": {"use_repository_button": True, "use_issues_button": False},
        "sphinx": {
            # attnlib's docstrings are Google-style, with a "Shapes:" section of their own.
            "extra_extensions": [
                "sphinx.ext.autodoc",
                "sphinx.ext.autosummary",
                "sphinx.ext.napoleon",
            ],
            "config": {
                "napoleon_custom_sections": ["Shapes"],
                # Links between the documents name headings as GitHub does (#grading-a-class).
                "myst_heading_anchors": 3,
                "autodoc_member_order": "bysource",
                "autodoc_typehints": "description",
                "html_show_sourcelink": False,
                "nb_mime_priority_overrides": [["html", "text/markdown", 25]],
            },
        },
    }


def assemble() -> list[str]:
    """Write the book's sources into website/_build/book; returns the pages, in order."""
    repository, branch = editions.course_repository()
    if BOOK.exists():
        shutil.rmtree(BOOK)
    BOOK.mkdir(parents=True)
    titles = {}
    for path in editions.source_notebooks():
        notebook = editions.read(path)
        titles[path.stem] = notebook_title(notebook)
        page = page_notebook(notebook, path.name[:2])
        (BOOK / path.name).write_text(editions.dumps(page), encoding="utf-8")
    (BOOK / "index.md").write_text(index_page(titles, repository), encoding="utf-8")
    for source, page in DOCUMENTS.items():
        text = document_page(source, repository, branch, list(titles))
        (BOOK / f"{page}.md").write_text(text, encoding="utf-8")
    (BOOK / "api.md").write_text(api_page(), encoding="utf-8")
    about = [*DOCUMENTS.values(), "api"]
    toc = {
        "format": "jb-book",
        "root": "index",
        "parts": [
            {"caption": "The course", "chapters": [{"file": stem} for stem in titles]},
            {"caption": "About it", "chapters": [{"file": page} for page in about]},
        ],
    }
    (BOOK / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False), encoding="utf-8")
    (BOOK / "_config.yml").write_text(
        yaml.safe_dump(config(repository, branch), sort_keys=False), encoding="utf-8"
    )
    return ["index", *titles, *about]


# Taken out of the Sphinx configuration Jupyter Book writes: sphinx-thebe (live code on the
# page, which the site does not offer) declares its script twice, a page error in every
# page; intersphinx fetches other projects' inventories over the network as it builds.
LEFT_OUT = ("sphinx_thebe", "sphinx.ext.intersphinx")


def sphinx_configuration() -> None:
    """Jupyter Book's Sphinx configuration for the book (conf.py), less ``LEFT_OUT``."""
    tools = Path(sys.executable).parent
    subprocess.run([str(tools / "jupyter-book"), "config", "sphinx", str(BOOK)], check=True)
    conf = BOOK / "conf.py"
    text = conf.read_text(encoding="utf-8")
    for extension in LEFT_OUT:
        if f"'{extension}', " not in text:
            raise RuntimeError(f"{extension} is no longer in Jupyter Book's conf.py")
        text = text.replace(f"'{extension}', ", "")
    conf.write_text(text, encoding="utf-8")


def build() -> None:
    assemble()
    sphinx_configuration()
    if HTML.exists():
        shutil.rmtree(HTML)
    sphinx_build = Path(sys.executable).with_name("sphinx-build")
    subprocess.run(
        # A warning (a docstring Sphinx cannot read, a broken reference) fails the build.
        [str(sphinx_build), "-b", "html", "--quiet", "-W", "--keep-going", str(BOOK), str(HTML)],
        check=True,
    )
    (HTML / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: keep _static/
    pages = sorted(p.name for p in HTML.glob("*.html"))
    print(f"site: {HTML.relative_to(REPO)}, {len(pages)} pages")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", action="store_true", help="only assemble the sources")
    args = parser.parse_args(argv)
    if args.sources:
        assemble()
    else:
        build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
