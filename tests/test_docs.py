"""Documentation derived from the code stays in step with it."""

from pathlib import Path

from scheduling import docs, schema

ROOT = Path(__file__).resolve().parent.parent


def test_algorithms_md_is_generated_from_the_registry():
    committed = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    assert committed == docs.render(), "run `make docs` to regenerate docs/algorithms.md"


def test_the_field_tables_of_formats_md_are_generated_from_the_schema():
    committed = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert committed == docs.render_formats(committed), "run `make docs` to regenerate docs/formats.md's tables"


def test_a_stale_field_table_is_found(monkeypatch):
    committed = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert "| `epochs` | integer 1 to 10^12 |" in committed
    monkeypatch.setattr(schema, "TRACE_COLUMNS", tuple(c for c in schema.TRACE_COLUMNS if c.name != "epochs"))
    assert docs.render_formats(committed) != committed  # a column dropped from the schema
    monkeypatch.undo()
    stale = committed.replace("| `epochs` | integer 1 to 10^12 |", "| `epochs` | integer >= 1 |")
    assert docs.render_formats(stale) == committed  # a table edited by hand is regenerated
