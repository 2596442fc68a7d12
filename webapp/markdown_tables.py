"""A small, safe Markdown reader for the tables the reproductions write (``table.md``): headings
(``#``..``######``), paragraphs and pipe tables, with ``**bold**`` and `` `code` `` inline. Every
piece of text is HTML-escaped before the inline marks become tags, so no HTML in the file reaches
the page as markup; anything else Markdown knows shows as its text."""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def inline(text: str) -> str:
    """``text`` escaped, with ``**bold**`` and `` `code` `` as tags."""
    html = _CODE.sub(r"<code>\1</code>", escape(text))
    return _BOLD.sub(r"<strong>\1</strong>", html)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(lines: list[str]) -> str:
    head, body = (lines[0], lines[2:]) if len(lines) > 1 and _RULE.match(lines[1].strip()) else (None, lines)
    out = ['<div class="scroll"><table class="table metrics">']
    if head is not None:
        out.append("<thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in _cells(head)) + "</tr></thead>")
    out.append("<tbody>")
    for line in body:  # the first cell names the row, as in the site's other tables
        first, *rest = _cells(line)
        cells = "".join(f"<td>{inline(c)}</td>" for c in rest)
        out.append(f'<tr><th scope="row">{inline(first)}</th>{cells}</tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def render(markdown: str) -> SafeString:
    """``markdown`` as HTML: blocks separated by blank lines; a block of lines starting with ``|``
    is a table (its second line a ``|---|`` rule makes the first its header row)."""
    blocks: list[str] = []
    lines: list[str] = []

    def flush() -> None:
        if not lines:
            return
        if all(line.lstrip().startswith("|") for line in lines):
            blocks.append(_table(lines))
        else:
            blocks.append("<p>" + "<br>".join(inline(line) for line in lines) + "</p>")
        lines.clear()

    for raw in markdown.splitlines():
        line = raw.rstrip()
        heading = _HEADING.match(line)
        if heading:
            flush()
            level = min(len(heading.group(1)) + 1, 6)  # the page's own h1/h2 stay above
            blocks.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif not line.strip():
            flush()
        else:
            lines.append(line)
    flush()
    return mark_safe("\n".join(blocks))  # every piece of text went through escape()
