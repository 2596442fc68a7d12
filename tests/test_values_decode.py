"""scheduling/values.decode reads input files as the utf-8-sig codec does."""

from __future__ import annotations

import pytest

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("data", [b"a,b\n", BOM + b"a,b\n", BOM + BOM + b"x", b"ok\xff", BOM + b"ok\xc3", b"\xef\xbb"])
def test_input_files_are_decoded_as_utf_8_sig_decodes_them(data: bytes):
    """scheduling/values.decode strips the BOM itself (the utf-8-sig codec's import is not paid)."""
    from scheduling.errors import InputError
    from scheduling.values import decode

    try:
        expected: object = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        expected = exc.start
    try:
        assert decode(data, "f") == expected
    except InputError as err:
        assert isinstance(expected, int)
        assert f"offset {expected})" in str(err)
