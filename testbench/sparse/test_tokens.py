"""The token layout: its width, and that the encoding the runner and the models use is the one
Amaranth packs for the layout."""

import pytest

from samflow.tokens import TokenError, TokenKind, decode, encode, token_bits, token_layout

TOKENS = [0, 1, -1, 32767, -32768, "S0", "S4", "S9", "D", "N"]


@pytest.mark.parametrize("width", [5, 8, 16, 32])
def test_width_cost_is_two_bits(width):
    assert token_bits(width) == width + 2


@pytest.mark.parametrize("token", TOKENS)
def test_encoding_is_amaranths_packing_of_the_layout(token):
    layout = token_layout(16)
    if isinstance(token, int):
        fields = {"value": token, "kind": TokenKind.DATA}
    elif token.startswith("S"):
        fields = {"value": int(token[1:]), "kind": TokenKind.STOP}
    else:
        fields = {"value": 0, "kind": TokenKind.DONE if token == "D" else TokenKind.EMPTY}
    assert encode(token, 16) == layout.const(fields).as_bits()
    assert decode(encode(token, 16), 16) == token


def test_repeat_signals_share_the_layout():
    assert [decode(encode(t, 16, repsig=True), 16, repsig=True) for t in "RSD"] == ["R", "S", "D"]
    assert encode("S", 16, repsig=True) == encode("S0", 16)


@pytest.mark.parametrize("token, message", [
    (32768, "does not fit a signed 16-bit token"),
    ("S10", "is not a token"),
    ("X", "is not a token"),
    (1.5, "fractional"),
    (True, "is not a token"),
])
def test_bad_tokens_are_refused(token, message):
    with pytest.raises(TokenError, match=message):
        encode(token, 16)


def test_too_narrow_a_layout_is_refused():
    with pytest.raises(ValueError, match="at least 5 bits"):
        token_layout(4)
