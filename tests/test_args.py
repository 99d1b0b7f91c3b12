"""Redis's strict integer parser (string2ll), as every command's integer arguments use it:
the same answers inside and outside the range of small values parse_int keeps parsed."""

from __future__ import annotations

import pytest

from streamd.commands.args import parse_int
from streamd.commands.errors import CommandError


@pytest.mark.parametrize("text, value", [
    (b"0", 0), (b"1", 1), (b"-1", -1), (b"10", 10), (b"1024", 1024), (b"1025", 1025),
    (b"-2", -2), (b"9223372036854775807", 2**63 - 1), (b"-9223372036854775808", -2**63),
])
def test_canonical_integers_parse(text, value):
    assert parse_int(text) == value
    assert parse_int(bytearray(text)) == value  # a stored value may be a mutable buffer


@pytest.mark.parametrize("text", [
    b"", b"01", b"00", b"-0", b"+1", b" 1", b"1 ", b"1.0", b"0x1", b"--1", b"-",
    b"9223372036854775808", b"-9223372036854775809", b"\xd9\xa1",  # Arabic-Indic one
])
def test_everything_else_is_not_an_integer(text):
    with pytest.raises(CommandError) as exc:
        parse_int(text)
    assert str(exc.value) == "ERR value is not an integer or out of range"
