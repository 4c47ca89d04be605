"""Export a notebook to one self-contained HTML page in which every jaxmagic view renders.

nbconvert's HTML shows saved widgets only through a widget manager fetched from a CDN,
so offline they are blank. This exporter reads each jaxmagic widget's document from
the saved widget state and mounts our own bundle on it; no network is needed to view
the page. Other outputs are kept as nbconvert would show them (text, images, HTML).

    python -m jaxmagic.export notebook.ipynb [--execute] [-o notebook.html]
"""

from __future__ import annotations

import argparse
import base64
import html
import re
import sys
from pathlib import Path
from typing import Any

from .views.static_html import doc_mount, page_scripts

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

_CSS = """
body{margin:0 auto;max-width:1200px;padding:16px;font-family:system-ui,sans-serif;color:#1f2328}
.cell{margin:14px 0}.src{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px 10px;
overflow:auto;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre}
.out{margin:6px 0 0 0;overflow:auto}.out pre{margin:0;font:13px/1.45 ui-monospace,monospace;white-space:pre-wrap}
.err pre{color:#b3261e}.md{line-height:1.5}
@media (prefers-color-scheme: dark){body{background:#0d1117;color:#e6edf3}.src{background:#161b22;border-color:#30363d}}
"""


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _widget_docs(nb: Any) -> dict[str, dict]:
    """model_id -> jaxmagic document, from the notebook's saved widget state."""
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    docs = {}
    for model_id, model in state.items():
        doc = model.get("state", {}).get("doc")
        if isinstance(doc, dict) and doc.get("schema") == "jaxmagic":
            docs[model_id] = doc
    return docs


def _markdown(source: str) -> str:
    try:
        from nbconvert.filters.markdown_mistune import markdown2html_mistune

        return markdown2html_mistune(source)
    except Exception:  # nbconvert missing or changed: readable, if plain
        return f"<pre>{_esc(source)}</pre>"


def _output_html(output: dict, docs: dict[str, dict]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return f"<pre>{_esc(_ANSI.sub('', _text(output.get('text', ''))))}</pre>"
    if kind == "error":
        return f"<div class='err'><pre>{_esc(_ANSI.sub('', chr(10).join(output.get('traceback', []))))}</pre></div>"
    data = output.get("data", {})
    model_id = (data.get(WIDGET_VIEW) or {}).get("model_id")
    if model_id in docs:
        return doc_mount(docs[model_id])
    if "image/svg+xml" in data:
        encoded = base64.b64encode(_text(data["image/svg+xml"]).encode()).decode()
        return f"<img src='data:image/svg+xml;base64,{encoded}'>"
    if "image/png" in data:
        return f"<img src='data:image/png;base64,{_text(data['image/png']).strip()}'>"
    if "text/html" in data:
        return _text(data["text/html"])  # the notebook's own output, as nbconvert would show it
    if "text/plain" in data:
        return f"<pre>{_esc(_text(data['text/plain']))}</pre>"
    return ""


def notebook_html(nb: Any, title: str = "notebook") -> str:
    """The page for an (executed) notebook."""
    docs = _widget_docs(nb)
    cells = []
    for cell in nb.get("cells", []):
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            cells.append(f"<div class='cell md'>{_markdown(source)}</div>")
            continue
        if cell.get("cell_type") != "code":
            continue
        outputs = "".join(f"<div class='out'>{_output_html(o, docs)}</div>" for o in cell.get("outputs", []))
        cells.append(f"<div class='cell'><div class='src'>{_esc(source)}</div>{outputs}</div>")
    return (
        f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{_esc(title)}</title>"
        f"<meta name='viewport' content='width=device-width'><style>{_CSS}</style></head><body>\n"
        + "\n".join(cells)
        + f"\n{page_scripts()}\n</body></html>\n"
    )


class MissingExtra(ImportError):
    """A package of the `export` extra is not installed: the message says what to install."""


def _require(module: str) -> Any:
    """Import `module`, one of the export extra's packages (the extension itself does not need them).

    Why an extra: nbformat and nbclient (with a kernel) are only needed to read or run a notebook
    file, which a notebook user never does; `pip install jaxmagic` stays light.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(
            f"python -m jaxmagic.export needs {module}, which is not installed: pip install 'jaxmagic[export]'"
        ) from exc


def execute(nb: Any, cwd: str | Path, timeout: int = 600) -> Any:
    """Run the notebook in a fresh kernel, keeping widget state (nbclient)."""
    NotebookClient = _require("nbclient").NotebookClient

    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}, store_widget_state=True
    )
    client.execute()
    return nb


def export(source: str | Path, output: str | Path | None = None, run: bool = False) -> Path:
    nbformat = _require("nbformat")
    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"no notebook at {source}")
    nb = nbformat.read(source, as_version=4)
    if run:
        execute(nb, source.parent)
    target = Path(output) if output else source.with_suffix(".html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(notebook_html(nb, title=source.stem), encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxmagic.export", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("notebook")
    parser.add_argument("-o", "--output", help="HTML file to write (default: next to the notebook)")
    parser.add_argument("--execute", action="store_true", help="run the notebook first (nbclient)")
    args = parser.parse_args(argv)
    if args.execute:
        _require("nbclient")  # before reading: say what is missing first, not after a partial run
    try:
        target = export(args.notebook, args.output, args.execute)
    except (MissingExtra, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # nbformat's NotJSONError and validation errors are ValueErrors
        print(f"error: {args.notebook} is not a notebook nbformat can read: {str(exc)[:300]}", file=sys.stderr)
        return 2
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
