# amaranth: UnusedElaboratable=no
"""Bad parameters are refused with a message naming the parameter, the value and what is allowed."""

import dataclasses

import pytest
from amaranth.back import verilog
from amaranth.hdl import unsigned

from hw import Arbiter, Fork, Join, ParameterError, SkidBuffer, TokenQueue, catalog
from rsn.fu_kinds import component_catalog  # the catalog with the FU kinds' generators (xbar)

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
    with pytest.raises(ParameterError, match=r"fork: n is given twice \(3 and 4\); give it once"):
        catalog.parse_parameters("fork", ["n=3", "n=4"])


@pytest.mark.parametrize("name,values,message", [
    ("token_queue", {"depth": 100_000_000},
     r"token_queue: depth=100000000 exceeds the limit 65536; depth is the number of tokens held, 1\.\.65536"),
    ("token_queue", {"depth": 65536, "width": 64},
     r"token_queue: depth=65536 x width=64 = 4194304 bits exceeds the limit 2097152 bits"),
    ("skid_buffer", {"width": 1025}, r"skid_buffer: width=1025 exceeds the limit 1024"),
    ("fork", {"n": 65}, r"fork: n=65 exceeds the limit 64"),
    ("arbiter", {"n": 64, "width": 1024}, r"arbiter: n=64 x width=1024 = 65536 bits exceeds the limit 32768"),
    ("arbiter", {"tuple_beats": 65537}, r"arbiter: tuple_beats=65537 exceeds the limit 65536"),
    ("join", {"n": 64, "width": 1024}, r"join: n=64 x width=1024 = 65536 bits exceeds the limit 32768"),
    ("xbar", {"axons": 4097}, r"xbar: axons=4097 exceeds the limit 4096"),
    ("xbar", {"axons": 4096, "neurons": 4096},
     r"xbar: axons=4096 x neurons=4096 = 16777216 synapses exceeds the limit 1048576 synapses"),
    ("xbar", {"banks": 128, "neurons": 256}, r"xbar: banks=128 exceeds the limit 64"),
])
def test_catalog_refuses_parameters_that_would_exhaust_the_machine(name, values, message):
    with pytest.raises(ParameterError, match=message):
        catalog.build(name, component_catalog(), **values)


def test_a_huge_depth_is_refused_before_anything_is_built(monkeypatch):
    """`rivulet generate token_queue -p depth=100000000` once ran 5 minutes to 23 GB: the refusal
    comes before the component is constructed."""
    def constructed(**values):
        raise AssertionError(f"token_queue was constructed with {values}")
    generator = catalog.CATALOG["token_queue"]
    monkeypatch.setitem(catalog.CATALOG, "token_queue", dataclasses.replace(generator, construct=constructed))
    values = catalog.parse_parameters("token_queue", ["depth=100000000"])
    with pytest.raises(ParameterError, match=r"depth=100000000 exceeds the limit 65536"):
        catalog.build("token_queue", **values)


@pytest.mark.parametrize("name,values", [
    ("token_queue", {"depth": 65536, "width": 32}),
    ("token_queue", {"depth": 2048, "width": 1024}),
    ("arbiter", {"n": 64, "width": 512, "tuple_beats": 65536}),
    ("join", {"n": 32, "width": 1024}),
    ("xbar", {"axons": 1024, "neurons": 1024, "banks": 64}),
])
def test_the_limits_themselves_are_allowed(name, values):
    assert catalog.check_parameters(name, component_catalog(), **values).items() >= values.items()


def test_a_component_at_its_limits_elaborates():
    text = verilog.convert(catalog.build("join", n=32, width=1024), name="wide_join")
    assert "wide_join" in text
