# amaranth: UnusedElaboratable=no
"""Bad parameters are refused with a message naming the parameter, the value and what is allowed."""

import pytest
from amaranth.hdl import unsigned

from hw import Arbiter, Fork, Join, ParameterError, SkidBuffer, TokenQueue, catalog

BAD_CONSTRUCTIONS = [
    (lambda: TokenQueue(unsigned(8), 0), r"TokenQueue: depth=0 is not allowed.*>= 1"),
    (lambda: TokenQueue(unsigned(8), 2.5), r"TokenQueue: depth=2.5 is not an integer"),
    (lambda: TokenQueue(0, 4), r"TokenQueue: width=0 is not allowed.*>= 1 bit"),
    (lambda: SkidBuffer(-4), r"SkidBuffer: width=-4 is not allowed"),
    (lambda: Fork(unsigned(8), 1), r"Fork: n=1 is not allowed.*>= 2"),
    (lambda: Fork(unsigned(8), 2, mode="lazy"), r"Fork: mode='lazy' is not allowed.*'eager'"),
    (lambda: Arbiter(unsigned(8), 1), r"Arbiter: n=1 is not allowed.*>= 2"),
    (lambda: Arbiter(unsigned(8), 2, tuple_beats=0), r"Arbiter: tuple_beats=0 is not allowed"),
    (lambda: Join(unsigned(8), 0), r"Join: n=0 is not allowed.*>= 2"),
    (lambda: Join("wide", 2), r"Join: payload shape 'wide' is not a shape"),
]


@pytest.mark.parametrize("construct,message", BAD_CONSTRUCTIONS)
def test_bad_construction_is_refused(construct, message):
    with pytest.raises(ParameterError, match=message):
        construct()


@pytest.mark.parametrize("name,values,message", [
    ("token_queue", {"depth": 0}, r"token_queue: depth=0 is not allowed"),
    ("fork", {"width": 0}, r"fork: width=0 is not allowed; width is the payload width"),
    ("fork", {"size": 3}, r"fork: unknown parameter 'size'; its parameters are: width, n, mode"),
    ("arbiter", {"n": True}, r"arbiter: n=True is not an integer"),
    ("queue", {}, r"unknown component 'queue'; known components: arbiter, fork"),
])
def test_catalog_refuses_before_building(name, values, message):
    with pytest.raises(ParameterError, match=message):
        catalog.build(name, **values)


def test_catalog_parses_command_line_values():
    assert catalog.parse_parameters("fork", ["n=0x3", "mode=lockstep"]) == {"n": 3, "mode": "lockstep"}
    with pytest.raises(ParameterError, match=r"'n' is not of the form NAME=VALUE"):
        catalog.parse_parameters("fork", ["n"])
