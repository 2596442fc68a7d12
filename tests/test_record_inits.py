"""scheduling/record_inits.py: the record classes' ``__init__`` defs compiled ahead, the same as compiled at import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scheduling import model, records
from scheduling.record_inits import CODES
from scheduling.record_inits_build import modules


def test_the_generated_module_is_current():
    # stale: run `.venv/bin/python -m scheduling.record_inits_build` (a stale file only costs start-up time)
    done = subprocess.run([sys.executable, "-m", "scheduling.record_inits_build", "--check"], check=False)
    assert done.returncode == 0


@pytest.mark.parametrize("source", sorted(CODES))
def test_each_code_is_what_compiling_its_source_gives(source: str):
    namespace: dict[str, object] = {"__record_missing": None}
    for name in source.split("(", 1)[1].split(")", maxsplit=1)[0].split(", "):
        if "=" in name:
            namespace[name.split("=")[1]] = None
    exec(source, namespace)
    fresh, ahead = namespace["__init__"].__code__, CODES[source]  # type: ignore[attr-defined]
    for attribute in ("co_code", "co_consts", "co_names", "co_varnames", "co_argcount", "co_flags", "co_name"):
        assert getattr(fresh, attribute) == getattr(ahead, attribute), attribute


def test_the_record_classes_take_the_compiled_defs_with_their_own_defaults_and_factories(monkeypatch):
    import importlib

    classes = []
    for name in modules():
        module = importlib.import_module(name)
        classes += [c for c in vars(module).values() if isinstance(c, type) and "__record_declaration__" in vars(c)]
    assert model.Job in classes
    for cls in classes:
        assert cls.__init__.__code__.co_filename.endswith("record_inits.py"), cls
    monkeypatch.setattr(records, "_COMPILED", [{}])  # compiled at import, as without the module
    for cls in classes:
        _, specs, frozen = cls.__record_declaration__
        compiled = records._init(cls, specs, frozen)
        ahead = cls.__init__
        assert compiled.__code__.co_code == ahead.__code__.co_code
        assert len(compiled.__defaults__ or ()) == len(ahead.__defaults__ or ())
        for a, b in zip(compiled.__defaults__ or (), ahead.__defaults__ or (), strict=True):
            assert a is b
        assert compiled.__qualname__ == ahead.__qualname__ and compiled.__module__ == ahead.__module__


def test_a_class_built_from_the_compiled_def_behaves_as_declared():
    job = model.Job(job_id="j", arrival=3)
    assert job.arrival == 3 and job.weight == 1.0  # a default
    cluster = model.Cluster(slot_seconds=1, resources=("gpu",), servers=())
    other = model.Cluster(slot_seconds=1, resources=("gpu",), servers=())
    assert cluster.gpu_speeds == {} and cluster.network is not None  # factories called per instance
    assert cluster == other
    with pytest.raises(TypeError):
        model.Job(arrival=3)  # a required field
