"""Fabric descriptions: the default loads; every malformed field is refused with a clear message."""

import pytest

from rsn.fabric_spec import FabricError, default_fabric, load_fabric, parse_fabric

BASE = {"rows": 2, "cols": 2, "tiles": ["mem mac", "alu mem"]}


def test_default_fabric_loads():
    spec = default_fabric()
    assert (spec.rows, spec.cols) == (3, 3)
    assert spec.kind((1, 1)) == "mac"
    assert {port.name for port in spec.host_ports} == {"in0", "in1", "out0", "out1"}
    assert spec.neighbour((0, 0), "N") is None and spec.neighbour((0, 0), "E") == (0, 1)


def test_failed_links_count_both_ways():
    spec = parse_fabric({**BASE, "failed_links": [[0, 0, "E"]]})
    assert spec.link_failed((0, 0), "E") and spec.link_failed((0, 1), "W")
    assert not spec.link_failed((0, 0), "S")


def test_a_failed_link_may_be_a_host_ports():
    port = {"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"}
    spec = parse_fabric({**BASE, "host_ports": [port], "failed_links": [[0, 0, "W"]]})
    assert spec.link_failed((0, 0), "W")


@pytest.mark.parametrize("change,message", [
    ({"rows": 0}, r"rows=0 is not allowed; use an integer 1..16"),
    ({"cols": 17}, r"cols=17 is not allowed"),
    ({"tiles": ["mem mac"]}, r"tiles must list 2 rows"),
    ({"tiles": ["mem", "alu mem"]}, r"tiles row 0 'mem' has 1 kinds, not 2"),
    ({"tiles": ["mem gpu", "alu mem"]}, r"tile \[0, 1\] has unknown kind 'gpu'; kinds are mem, mac, alu"),
    ({"queue_depth": 0}, r"queue_depth=0 is not allowed"),
    ({"register_every": 0}, r"register_every=0 is not allowed; use an integer 1..16"),
    ({"queue_mode": "fast"}, r"queue_mode='fast' is not allowed; use one of 'registered', 'fall_through', "
                             r"'bypass'"),
    ({"mem": {"depth": 1000}}, r"\[mem\]: depth=1000 is not allowed; addresses wrap modulo the depth, so "
                               r"use a power of two from 16 to 4096"),
    ({"mac": {"depth": 2}}, r"\[mac\]: depth=2 is not allowed; use an integer 4..4096"),
    ({"mem": {"size": 64}}, r"\[mem\]: unknown parameter\(s\) \['size'\]; mem tiles take: depth"),
    ({"alu": {"depth": 64}}, r"\[alu\]: unknown parameter\(s\) \['depth'\]; alu tiles take: none"),
    ({"mem": 64}, r"\[mem\] must be a table of mem parameters, not 64"),
    ({"gpu": {"cores": 4}}, r"unknown field\(s\) \['gpu'\]; .* and a table per FU kind "
                            r"\(.*\[alu\], \[mac\], \[mem\]"),
    ({"failed_tiles": [[5, 0]]}, r"failed tile \[5, 0\] is outside the 2x2 grid"),
    ({"failed_links": [[0, 0, "X"]]}, r"failed link \[0, 0, 'X'\] is not \[row, col, side\]"),
    ({"host_ports": [{"name": "a", "tile": [0, 0], "side": "E", "direction": "in"}]},
     r"host port a on side E of tile \[0, 0\] faces another tile"),
    ({"host_ports": [{"name": "a", "tile": [0, 0], "side": "N", "direction": "sideways"}]},
     r"host port a direction 'sideways'; use in or out"),
    ({"host_ports": [{"name": "a", "tile": [0, 0], "side": "N", "direction": "in"},
                     {"name": "a", "tile": [0, 1], "side": "N", "direction": "out"}]},
     r"host port name 'a' is used twice"),
    ({"colour": "blue"}, r"unknown field\(s\) \['colour'\]"),
    ({"rows": None}, r"rows is missing; give an integer 1..16"),
    ({"tiles": [["mem", "mac"], ["alu", "mem"]]},
     r"tiles row 0 is \['mem', 'mac'\]; write each row as one string of kinds separated by spaces"),
    ({"failed_tiles": 5}, r"failed_tiles = 5 is not an array; write e.g. failed_tiles = \[\[1, 1\]\]"),
    ({"failed_links": "0,0,E"}, r"failed_links = '0,0,E' is not an array"),
    ({"failed_links": [[0, 0, "N"]]}, r"failed link \[0, 0, 'N'\] leaves the grid, and no host port sits on "
                                     r"side N of tile \[0, 0\]; a failed link joins two tiles, or a tile and "
                                     r"its host port: check the side"),
    ({"host_ports": {"name": "a"}},
     r"host_ports = \{'name': 'a'\} is not an array; write each host port as a \[\[host_ports\]\] table"),
    ({"host_ports": [1]}, r"host_ports\[0\] is 1; each host port is a \[\[host_ports\]\] table"),
    ({"host_ports": [{"name": "a", "tile": [0, 0], "side": "N", "direction": "in", "width": 8}]},
     r"host_ports\[0\] has unknown field\(s\) \['width'\]; a host port takes direction, name, side, tile"),
])
def test_bad_descriptions_are_refused(change, message):
    with pytest.raises(FabricError, match=message):
        parse_fabric({**BASE, **change})


def test_file_errors_name_the_file(tmp_path):
    with pytest.raises(FabricError, match=r"does not exist"):
        load_fabric(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("rows = [")
    with pytest.raises(FabricError, match=r"broken.toml: not valid TOML"):
        load_fabric(broken)
    with pytest.raises(FabricError, match=r"fabric description .* cannot be read \(Is a directory\); give a "
                                          r"\.toml file"):
        load_fabric(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(FabricError, match=r"binary.toml: not a text file \(byte 0 is not UTF-8\)"):
        load_fabric(binary)


@pytest.mark.parametrize("flat,table,key,value", [
    ("mem_depth", "mem", "depth", 1024), ("mac_depth", "mac", "depth", 16),
    ("pe_mem_depth", "pe", "mem_depth", 64), ("pe_ripple_ops", "pe", "ripple_ops", False),
    ("xbar_axons", "xbar", "axons", 32), ("xbar_preset", "xbar", "preset", "loihi"),
])
def test_old_flat_kind_fields_are_refused_showing_the_table(flat, table, key, value):
    rendered = {False: "false", "loihi": '"loihi"'}.get(value, str(value))
    with pytest.raises(FabricError, match=rf"f.toml: {flat} = .* is the old spelling; .*write\n  "
                                          rf"\[{table}\]\n  {key} = {rendered}\n"):
        parse_fabric({**BASE, flat: value}, "f.toml")


def test_kind_tables_give_parameters_and_defaults():
    spec = parse_fabric({**BASE, "mem": {"depth": 256}})
    assert spec.parameters("mem").depth == 256 and spec.parameters("mac").depth == 256
    assert spec.parameters("pe").mem_depth == 0         # no pe tiles: the kind's defaults
    assert spec == parse_fabric({**BASE, "mem": {"depth": 256}, "mac": {}})   # defaults written or not
    wider = spec.with_parameters("mac", depth=512)
    assert wider.parameters("mac").depth == 512 and wider.parameters("mem").depth == 256
    with pytest.raises(FabricError, match=r"\[mac\]: depth=1 is not allowed"):
        spec.with_parameters("mac", depth=1)
    with pytest.raises(FabricError, match=r"\[pe\]: mem_depth=3 is not allowed"):    # checked, no pe tiles
        parse_fabric({**BASE, "pe": {"mem_depth": 3}})


@pytest.mark.parametrize("change,message", [
    ({"rows": 100_000, "tiles": ["mem"] * 100_000}, r"rows=100000 is not allowed; use an integer 1..16"),
    ({"data_width": 1 << 20}, r"data_width=1048576 is not allowed; use an integer 8..64"),
    ({"queue_depth": 100_000_000}, r"queue_depth=100000000 is not allowed; use an integer 1..64"),
    ({"uop_queue_depth": 65}, r"uop_queue_depth=65 is not allowed; use an integer 1..64"),
])
def test_sizes_that_would_exhaust_the_machine_are_refused(change, message):
    """Every size in a description is bounded (the grid by the control plane's 16-bit masks),
    so no description can make elaboration run for minutes or exhaust memory."""
    with pytest.raises(FabricError, match=message):
        parse_fabric({**BASE, **change})


PE_GRID = {"rows": 2, "cols": 2, "tiles": ["pe pe", "alu pe"]}


def test_a_memory_table_gives_the_shared_memory_and_its_tiles_in_chain_order():
    spec = parse_fabric({**PE_GRID, "memory": {"words": 4096, "banks": 8}})
    assert (spec.memory.words, spec.memory.banks, spec.memory.lock_entries) == (4096, 8, 4)
    assert spec.memory_tiles() == [(0, 0), (0, 1), (1, 1)], "chain order, pe tiles only"
    assert parse_fabric(PE_GRID).memory is None and parse_fabric(PE_GRID).memory_tiles() == []


@pytest.mark.parametrize("memory,message", [
    ({}, r"\[memory\]: say how many 32-bit words the shared memory holds"),
    ({"words": 1000}, r"\[memory\]: words=1000 is not allowed; use a power of two from 2 to 1048576"),
    ({"words": 1024, "banks": 3}, r"banks=3 is not allowed; use a power of two from 1 to 64"),
    ({"words": 2, "banks": 4}, r"banks=4 is more than words=2"),
    ({"words": 1024, "lock_entries": 17}, r"lock_entries=17 is not allowed; use an integer 0..16"),
    ({"words": 1024, "ports": 4}, r"unknown parameter\(s\) \['ports'\]; the shared memory takes: words"),
    (1024, r"\[memory\] must be a table"),
])
def test_bad_memory_tables_are_refused(memory, message):
    with pytest.raises(FabricError, match=message):
        parse_fabric({**PE_GRID, "memory": memory}, "x.toml")


def test_a_memory_table_needs_tiles_that_use_it_and_pe_tiles_then_have_no_banks():
    with pytest.raises(FabricError, match=r"x.toml: \[memory\]: no tile of this fabric can use the shared "
                                          r"memory; tiles of kind pe have a memory port"):
        parse_fabric({**BASE, "memory": {"words": 1024}}, "x.toml")
    with pytest.raises(FabricError, match=r"\[pe\]: mem_depth=64 is not allowed with a \[memory\] table"):
        parse_fabric({**PE_GRID, "memory": {"words": 1024}, "pe": {"mem_depth": 64}}, "x.toml")
