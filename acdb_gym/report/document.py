"""The report as a document: prose lines, tables and images, rendered as Markdown or HTML.

``report.md`` and ``report.html`` are two renderings of one list of :data:`Part` values built by
:mod:`acdb_gym.report.markdown` (and the revision, transfer and cost sections): a :class:`Table`
holds the same header and cell strings in both files, an :class:`Image` names the same PNG, so
the two files cannot show different numbers. A ``str`` part is one Markdown line of prose (a
heading, a paragraph, a bullet); :mod:`acdb_gym.report.html` renders the few line forms the
report writes (``#`` headings, ``-`` bullets, ``**bold**`` and ``code`` spans).

This module knows nothing of the report's contents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from acdb_gym.report.tables import md_table

__all__ = ["Image", "Part", "Table", "markdown_lines", "markdown_text"]


@dataclass(frozen=True)
class Table:
    """A table of display strings.

    Attributes:
        headers: the column titles.
        body: the rows, each with one cell per header.
    """

    headers: tuple[str, ...]
    body: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        for index, row in enumerate(self.body):
            if len(row) != len(self.headers):
                raise ValueError(
                    f"table row {index} has {len(row)} cells for {len(self.headers)} headers: "
                    f"{row!r}"
                )

    @classmethod
    def of(cls, headers: Sequence[str], body: Iterable[Sequence[str]]) -> Table:
        """A table from any sequences of strings."""
        return cls(tuple(headers), tuple(tuple(row) for row in body))


@dataclass(frozen=True)
class Image:
    """A plot written next to the report.

    Attributes:
        src: the PNG's file name, relative to the report.
        alt: the alternative text.
    """

    src: str
    alt: str


Part = str | Table | Image
"""One piece of the report: a prose line (Markdown), a table or an image."""


def markdown_lines(parts: Iterable[Part]) -> list[str]:
    """The Markdown lines of the parts (a table or an image is followed by a blank line)."""
    lines: list[str] = []
    for part in parts:
        if isinstance(part, Table):
            lines += md_table(part.headers, part.body)
        elif isinstance(part, Image):
            lines += [f"![{part.alt}]({part.src})", ""]
        else:
            lines.append(part)
    return lines


def markdown_text(parts: Iterable[Part]) -> str:
    """The Markdown document: the lines without trailing blank lines, ending with a newline."""
    lines = markdown_lines(parts)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"
