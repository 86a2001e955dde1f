"""The API reference's pages (:mod:`generator.reference`) as files: ``index.md`` linking a Markdown file per
group, and ``index.html``, one self-contained page (inline CSS, no script) of every group."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Final

from generator.definition import Definition
from generator.load import load_checked
from generator.reference import Block, Code, Heading, Page, Paragraph, Table, group_pages

__all__ = ["markdown", "page_html", "write_reference"]

TITLE: Final = "API reference"
STYLE: Final = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code, pre { font-family: ui-monospace, monospace; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; }
nav li { margin: 0.2rem 0; }
"""


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"{'#' * block.level} {block.text}\n"
    if isinstance(block, Paragraph):
        return f"{block.text}\n"
    if isinstance(block, Table):
        lines = [
            "| " + " | ".join(block.header) + " |",
            "|" + "---|" * len(block.header),
            *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows),
        ]
        return "\n".join(lines) + "\n"
    return f"```{block.language}\n{block.text}```\n"


def markdown(page: Page) -> str:
    """One group's page as Markdown."""
    return "\n".join(_md_block(block) for block in page.blocks)


def _inline(text: str) -> str:
    """The paragraphs' only markup, `code`, as <code>."""
    parts = html.escape(text, quote=False).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _html_block(block: Block) -> str:
    if isinstance(block, Heading):
        return f'<h{block.level} id="{block.anchor}">{html.escape(block.text)}</h{block.level}>'
    if isinstance(block, Paragraph):
        return f"<p>{_inline(block.text)}</p>"
    if isinstance(block, Table):
        head = "".join(f"<th>{html.escape(h)}</th>" for h in block.header)
        rows = "".join(
            "<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in block.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    assert isinstance(block, Code)
    return f'<pre><code class="language-{block.language}">{html.escape(block.text)}</code></pre>'


def page_html(pages: list[Page]) -> str:
    """Every group on one page, with a table of contents of groups and kinds."""
    toc = "".join(
        f'<li><a href="#{b.anchor}">{html.escape(b.text)}</a></li>'
        for page in pages
        for b in page.blocks
        if isinstance(b, Heading) and b.level <= 2
    )
    body = "\n".join(_html_block(b) for page in pages for b in page.blocks)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{TITLE}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{TITLE}</h1>\n<nav><ul>{toc}</ul></nav>\n{body}\n</body>\n</html>\n"
    )


def _index(pages: list[Page]) -> str:
    lines = [f"# {TITLE}\n", *(f"- [{page.title}]({page.name}.md)" for page in pages)]
    return "\n".join(lines) + "\n"


def write_reference(definitions_dir: Path, out_dir: Path) -> list[Path]:
    """The reference of the project's own kinds under ``definitions_dir`` (not the built-in ones); the
    files written. Raises DefinitionErrors as `apiforge generate` does."""
    root = definitions_dir.resolve()
    own: list[Definition] = [
        d for d in load_checked(definitions_dir) if d.source.resolve().is_relative_to(root)
    ]
    pages = group_pages(own)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"index.md": _index(pages), **{f"{p.name}.md": markdown(p) for p in pages}}
    files["index.html"] = page_html(pages)
    written = []
    for name, text in files.items():
        (out_dir / name).write_text(text)
        written.append(out_dir / name)
    return written
