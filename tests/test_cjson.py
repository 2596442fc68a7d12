"""scheduling/cjson.py gives json's values, bytes and errors."""

from __future__ import annotations

import json
import math
import random

import pytest

from scheduling import cjson


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.randint(-(10**20), 10**20)
    if kind == 1:
        return rng.choice([0.1, -2.5e-300, 1e300, 3.0, float("inf"), float("-inf"), rng.random()])
    if kind == 2:
        characters = ["a", "é", "\n", '"', "\\", "\u2028", "😀", "\x00", " "]
        return "".join(rng.choice(characters) for _ in range(rng.randrange(6)))
    if kind == 3:
        return rng.choice([True, False, None])
    if kind in (4, 5):
        return rng.randrange(100)
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {str(random_value(rng, 4)): random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_compact_is_json_dumps_compact_and_loads_reads_it_back_as_json_does():
    rng = random.Random(3)
    for _ in range(2000):
        value = random_value(rng)
        text = json.dumps(value, separators=(",", ":"))
        assert cjson.compact(value) == text
        spaced = json.dumps(value, indent=rng.choice([None, 2]))
        for doc in (text, spaced, f" \n\t{spaced}\r\n "):
            assert repr(cjson.loads(doc)) == repr(json.loads(doc))


def test_nan_is_written_and_read_as_json_does():
    assert cjson.compact([float("nan")]) == "[NaN]"
    assert math.isnan(cjson.loads("[NaN]")[0])
    assert cjson.loads('{"a": -Infinity}') == {"a": float("-inf")}


@pytest.mark.parametrize(
    "doc", ["", " ", "{", '{"a": 1} x', "[1,]", "\ufeff{}", '{"a": 1}{}', "[" * 100_000, "1" * 5000, "tru", '"\x01"']
)
def test_what_json_refuses_it_refuses_with_json_error(doc: str):
    with pytest.raises(Exception) as theirs:
        json.loads(doc)
    with pytest.raises(Exception) as mine:
        cjson.loads(doc)
    assert type(mine.value) is type(theirs.value)
    assert str(mine.value) == str(theirs.value)


def test_bytes_and_values_json_cannot_hold_behave_as_in_json():
    assert cjson.loads(b'{"a": [1]}') == {"a": [1]}
    for bad in ({1, 2}, object(), {"k": b"x"}):
        with pytest.raises(TypeError) as theirs:
            json.dumps(bad, separators=(",", ":"))
        with pytest.raises(TypeError) as mine:
            cjson.compact(bad)
        assert str(mine.value) == str(theirs.value)
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        cjson.compact(loop)
    assert cjson.compact({1: 2, None: 3, 2.5: True}) == json.dumps({1: 2, None: 3, 2.5: True}, separators=(",", ":"))
    assert cjson.compact("é\n") == json.dumps("é\n")


def test_the_string_encoder_is_jsons():
    from json.encoder import encode_basestring_ascii

    assert cjson.encode_basestring_ascii is encode_basestring_ascii  # the same C function
    for text in ("", "a", "é\n\x00", '"\\', "😀\u2028"):
        assert cjson.encode_basestring_ascii(text) == encode_basestring_ascii(text)
