"""The session as a Jupyter notebook, written with nbformat: a markdown cell for the scenario,
then a markdown and a code cell per section of :mod:`.code_sections` (the same code as the
script's), the heatmap drawn inline. nbformat loads when a notebook is written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .session import SessionExporter

if TYPE_CHECKING:
    from attnsim.engine.scenario import Scenario

__all__ = ["EXPORTER", "notebook", "render"]


def notebook(sc: Scenario, *, notes: Sequence[str] = ()):
    """The notebook as an nbformat v4 node, validated."""
    import nbformat
    from nbformat import v4

    from attnsim import __version__

    from .code_sections import header_lines, sections

    head = header_lines(sc, __version__, notes)
    intro = "# " + head[0] + "\n\n" + "\n".join(head[2:])
    cells = [v4.new_markdown_cell(intro)]
    for s in sections(sc):
        cells.append(v4.new_markdown_cell(f"## {s.title}\n\n{s.prose}"))
        cells.append(v4.new_code_cell(s.code_for(script=False)))
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def render(sc: Scenario, *, notes: Sequence[str] = ()) -> str:
    """The notebook's text (JSON)."""
    import nbformat

    return nbformat.writes(notebook(sc, notes=notes)) + "\n"


EXPORTER = SessionExporter("ipynb", "Jupyter notebook", render)
