"""What every primitive does to its streams: the token signature and the output register rule."""

from amaranth.hdl import Const
from amaranth.lib import stream

from samflow.tokens import TokenKind, token_layout

__all__ = ["token_stream", "release_outputs", "emit", "emit_token", "free", "is_kind"]


def token_stream(width: int) -> stream.Signature:
    return stream.Signature(token_layout(width))


def free(*outputs):
    """The output registers can all take a token this cycle."""
    condition = Const(1)
    for output in outputs:
        condition &= ~output.valid | output.ready
    return condition


def release_outputs(m, *outputs):
    """An offered token leaves when taken; an ``emit`` later in the same cycle overrides this."""
    for output in outputs:
        with m.If(output.ready):
            m.d.sync += output.valid.eq(0)


def emit(m, output, kind, value=0):
    m.d.sync += [output.valid.eq(1), output.payload.kind.eq(kind), output.payload.value.eq(value)]


def emit_token(m, output, token):
    """Copy a whole token (a payload view) to ``output``."""
    m.d.sync += [output.valid.eq(1), output.payload.eq(token)]


def is_kind(token, kind: TokenKind):
    return token.kind == kind
