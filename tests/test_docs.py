"""Documentation derived from the code stays in step with it."""

from pathlib import Path

from scheduling import docs

ROOT = Path(__file__).resolve().parent.parent


def test_algorithms_md_is_generated_from_the_registry():
    committed = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    assert committed == docs.render(), "run `make docs` to regenerate docs/algorithms.md"
