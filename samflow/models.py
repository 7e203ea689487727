"""Golden models of SAM's streaming primitives, one function each, written from SAM's semantics
(the paper and the conformance suite's README), not from the RTL.

A model maps whole input streams to whole output streams: for every primitive here SAM's token
output does not depend on arrival timing (the suite checked this; ``repeat`` needs its first
reference no later than its first signal, which the conformance runner checks on the schedule).
Each takes ``(params, memory, inputs)`` and returns ``(outputs, memory_out)``.
"""

from .tokens import is_data, is_stop, stop, stop_level

__all__ = ["ModelError", "MODELS", "InputStream", "whole_sums", "graph_accumulator"]


class ModelError(ValueError):
    """An input the primitive does not accept, naming the port and the token's position."""


class InputStream:
    """One input port's tokens, read front to back, with errors that name the token."""

    def __init__(self, port: str, tokens):
        self.port, self.tokens, self.at = port, list(tokens), 0

    def peek(self):
        if self.at >= len(self.tokens):
            raise self.error("the stream ended before its 'D'")
        return self.tokens[self.at]

    def pop(self):
        token = self.peek()
        self.at += 1
        return token

    @property
    def exhausted(self) -> bool:
        return self.at >= len(self.tokens)

    def error(self, why: str, at: int | None = None) -> ModelError:
        at = self.at if at is None else at
        shown = repr(self.tokens[at]) if at < len(self.tokens) else "(end)"
        return ModelError(f"{self.port} token {at} {shown}: {why}")


def _streams(inputs):
    return {port: InputStream(port, tokens) for port, tokens in inputs.items()}


def _close_fiber(source: InputStream, out_lists):
    """The stop after a fiber a reference opened: an input stop right behind the reference is
    raised one level and merged with it, anything else leaves the fiber's own S0."""
    token = source.peek()
    if is_stop(token):
        source.pop()
        closing = stop(stop_level(token) + 1)
    else:
        closing = "S0"
    for out in out_lists:
        out.append(closing)


def _level_scan(source: InputStream, fiber):
    """The skeleton of a level scanner: ``fiber(ref)`` gives the (crd, ref) pairs of one fiber."""
    crd, ref = [], []
    while True:
        token = source.pop()
        if token == "D":
            crd.append("D")
            ref.append("D")
            return {"crd": crd, "ref": ref}
        if is_stop(token):          # a stop with no fiber before it: an empty fiber, raised
            crd.append(stop(stop_level(token) + 1))
            ref.append(stop(stop_level(token) + 1))
            continue
        if token == "N":
            crd.append("N")
            ref.append("N")
        else:
            for c, r in fiber(token, source):
                crd.append(c)
                ref.append(r)
        _close_fiber(source, (crd, ref))


def rd_scan_uncompressed(params, memory, inputs):
    dim = params.get("dim", 0)
    source = _streams(inputs)["in_ref"]

    def fiber(ref, _source):
        if ref == "N" or not is_data(ref):
            raise _source.error("the dense scanner takes integer references only", _source.at - 1)
        return [(c, ref * dim + c) for c in range(dim)]
    return _level_scan(source, fiber), {}


def rd_scan_compressed(params, memory, inputs):
    seg, crd_arr = memory["seg_arr"], memory["crd_arr"]
    source = _streams(inputs)["in_ref"]

    def fiber(ref, _source):
        if not 0 <= ref < len(seg) - 1:
            raise _source.error(f"reference {ref} is outside the segment array (fibers 0.."
                                f"{len(seg) - 2})", _source.at - 1)
        return [(crd_arr[p], p) for p in range(seg[ref], seg[ref + 1])]
    return _level_scan(source, fiber), {}


def repeat(params, memory, inputs):
    streams = _streams(inputs)
    refs, signals = streams["in_ref"], streams["in_repsig"]
    out = []
    while True:
        token = refs.pop()
        if token == "D":
            if signals.pop() != "D":
                raise signals.error("the references ended ('D') but the repeat signal did not",
                                    signals.at - 1)
            out.append("D")
            return {"ref": out}, {}
        if is_stop(token):
            # A stop with no reference before it is an empty fiber. Whoever made the repeat signal
            # from the level below saw that fiber's raised stop and gave it an 'S'; SAM's Repeat
            # takes that 'S' here, so the two streams stay in step past empty fibers.
            if signals.peek() != "S":
                raise signals.error("an empty fiber on in_ref (a stop with no reference before it) "
                                    "must face an 'S' on the repeat signal")
            signals.pop()
            out.append(stop(stop_level(token) + 1))
            continue
        while True:
            signal = signals.pop()
            if signal == "R":
                out.append(token)
            elif signal == "S":
                break
            else:
                raise signals.error("a repeat signal ended while a reference was being repeated",
                                    signals.at - 1)
        _close_fiber(refs, (out,))


def repeat_sig_gen(params, memory, inputs):
    out = []
    for token in inputs["in_stream"]:
        out.append("D" if token == "D" else "S" if is_stop(token) else "R")
    return {"repsig": out}, {}


def _joiner_sides(inputs):
    streams = _streams(inputs)
    return [(streams[f"in_crd{k}"], streams[f"in_ref{k}"]) for k in (1, 2)]


def _check_pair(crd: InputStream, ref: InputStream):
    """A joiner's coordinate and reference streams move together: their control tokens match."""
    c, r = crd.peek(), ref.peek()
    if not (c == r or (is_data(c) or c == "N") and (is_data(r) or r == "N")):
        raise crd.error(f"does not line up with {ref.port} token {ref.at} {r!r}")
    return c


def _same_stop(sides, a, b):
    if a != b:
        raise sides[1][0].error(f"closes a fiber at another level than {sides[0][0].port} ({a!r}); "
                                "the two sides must be fibers of the same shape")


def intersect(params, memory, inputs):
    sides = _joiner_sides(inputs)
    (crd1, ref1), (crd2, ref2) = sides
    out = {"crd": [], "ref1": [], "ref2": [], "crd_skip1": [], "crd_skip2": []}
    last_hint = [None, None]

    def emit(c, r1, r2):
        out["crd"].append(c)
        out["ref1"].append(r1)
        out["ref2"].append(r2)

    def step_past(side):
        other = sides[1 - side][0].peek()
        if other != last_hint[side]:
            out[f"crd_skip{side + 1}"].append(other)
            last_hint[side] = other
        sides[side][0].pop()
        sides[side][1].pop()

    while True:
        a, b = _check_pair(crd1, ref1), _check_pair(crd2, ref2)
        if a == "D" or b == "D":
            if a != b:
                raise (crd1 if a != "D" else crd2).error("one side ended ('D') before the other")
            emit("D", "D", "D")
            return out, {}
        if is_stop(a) and is_stop(b):
            _same_stop(sides, a, b)
            emit(a, a, a)
            out["crd_skip1"].append(a)
            out["crd_skip2"].append(b)
            last_hint = [None, None]
            for stream in (crd1, ref1, crd2, ref2):
                stream.pop()
        elif a == "N" or b == "N":
            if is_stop(a) or is_stop(b):       # an N facing an ended fiber has nothing to pair with
                for crd, ref in sides:
                    if crd.peek() == "N":
                        crd.pop()
                        ref.pop()
                continue
            emit("N", "N", "N")
            for stream in (crd1, ref1, crd2, ref2):
                stream.pop()
        elif is_stop(a):
            crd2.pop()
            ref2.pop()
        elif is_stop(b):
            crd1.pop()
            ref1.pop()
        elif a == b:
            emit(a, ref1.pop(), ref2.pop())
            crd1.pop()
            crd2.pop()
        elif a < b:
            step_past(0)
        else:
            step_past(1)


def union(params, memory, inputs):
    sides = _joiner_sides(inputs)
    (crd1, ref1), (crd2, ref2) = sides
    out = {"crd": [], "ref1": [], "ref2": []}

    def emit(c, r1, r2):
        out["crd"].append(c)
        out["ref1"].append(r1)
        out["ref2"].append(r2)

    def take(side):
        sides[side][0].pop()
        return sides[side][1].pop()

    while True:
        a, b = _check_pair(crd1, ref1), _check_pair(crd2, ref2)
        if a == "D" or b == "D":
            if a != b:
                raise (crd1 if a != "D" else crd2).error("one side ended ('D') before the other")
            emit("D", "D", "D")
            return out, {}
        # An N waits while the other side drains its fiber, then leaves as a coordinate.
        held1 = a == "N" or is_stop(a)
        held2 = b == "N" or is_stop(b)
        if held1 and held2:
            if a == "N" or b == "N":
                r1 = take(0) if a == "N" else "N"
                r2 = take(1) if b == "N" else "N"
                emit("N", r1, r2)
            else:
                _same_stop(sides, a, b)
                emit(a, take(0), take(1))
        elif held1:
            emit(b, "N", take(1))
        elif held2:
            emit(a, take(0), "N")
        elif a == b:
            emit(a, take(0), take(1))
        elif a < b:
            emit(a, take(0), "N")
        else:
            emit(b, "N", take(1))


def _alu(inputs, combine, port1="in_val1", port2="in_val2"):
    streams = _streams(inputs)
    s1, s2 = streams[port1], streams[port2]
    out = []
    while True:
        a, b = s1.peek(), s2.peek()
        for stream, token in ((s1, a), (s2, b)):
            if token == "N":
                raise stream.error("SAM's ALUs do not take 'N'; drop empty positions before an ALU")
        if a == "D" or b == "D":
            if a != b:
                raise (s1 if a != "D" else s2).error("one operand stream ended ('D') before the other")
            out.append("D")
            return {"val": out}, {}
        if is_stop(a) and is_stop(b):
            if a != b:
                raise s2.error(f"closes a fiber at another level than {s1.port} ({a!r})")
            out.append(a)
            s1.pop()
            s2.pop()
        elif is_stop(a):         # a value facing a stop is combined with 0; the stop side waits
            out.append(combine(0, s2.pop()))
        elif is_stop(b):
            out.append(combine(s1.pop(), 0))
        else:
            out.append(combine(s1.pop(), s2.pop()))


def add(params, memory, inputs):
    sign1 = -1 if params.get("neg1", False) else 1
    sign2 = -1 if params.get("neg2", False) else 1
    return _alu(inputs, lambda a, b: sign1 * a + sign2 * b)


def multiply(params, memory, inputs):
    return _alu(inputs, lambda a, b: a * b)


def reduce(params, memory, inputs):
    source = _streams(inputs)["in_val"]
    out, total = [], 0
    while True:
        token = source.pop()
        if token == "D":
            if total:
                raise source.error("values are left over before 'D'; close the fiber with a stop",
                                   source.at - 1)
            out.append("D")
            return {"val": out}, {}
        if token == "N":
            raise source.error("reduce does not take 'N'", source.at - 1)
        if is_stop(token):
            out.append(total)
            total = 0
            if stop_level(token) >= 1:
                out.append(stop(stop_level(token) - 1))
        else:
            total += token


def crd_drop(params, memory, inputs):
    streams = _streams(inputs)
    outer, inner = streams["in_outer_crd"], streams["in_inner_crd"]
    kept, inner_out = [], []
    crds_in_fiber = 0

    def pass_inner_fiber() -> bool:
        """Copy one inner fiber through; say whether it held any element."""
        held = False
        while True:
            token = inner.pop()
            inner_out.append(token)
            if is_stop(token):
                return held
            if token == "D":
                raise inner.error("the inner stream ended inside a fiber", inner.at - 1)
            held = True

    while True:
        token = outer.pop()
        if token == "D":
            closing = inner.pop()
            if closing != "D":
                raise inner.error("the inner stream goes on after the outer one ended", inner.at - 1)
            inner_out.append("D")
            kept.append("D")
            return {"outer_crd": kept, "inner_crd": inner_out}, {}
        if is_stop(token):
            if crds_in_fiber == 0:      # an empty outer fiber still has its inner stop
                if not is_stop(inner.peek()):
                    raise inner.error("an empty outer fiber must face a stop on the inner stream")
                inner_out.append(inner.pop())
            kept.append(token)
            crds_in_fiber = 0
            continue
        crds_in_fiber += 1
        if pass_inner_fiber():
            kept.append(token)


def stkn_drop(params, memory, inputs):
    return {"val": [t for t in inputs["in_stream"] if not is_stop(t)]}, {}


def empty_stkn_drop(params, memory, inputs):
    """A run of stops becomes its highest stop; stops before the first element are dropped."""
    out, pending, seen = [], None, False
    for token in inputs["in_stream"]:
        if is_stop(token):
            if seen:
                pending = token if pending is None else stop(max(stop_level(pending), stop_level(token)))
            continue
        if pending is not None:
            out.append(pending)
            pending = None
        out.append(token)
        seen = token != "D"
    return {"val": out}, {}


def array(params, memory, inputs):
    size = params.get("size", 1024)
    words = list(memory.get("init_arr", [params.get("fill", 0)] * size))
    streams = _streams(inputs)
    addresses, values = streams["in_store_addr"], streams["in_store_val"]
    while not addresses.exhausted:
        address, value = addresses.pop(), values.pop()
        if address == "D" or is_stop(address):
            if address != value:
                raise values.error(f"does not line up with {addresses.port} token {address!r}", values.at - 1)
            continue
        if not is_data(address) or not 0 <= address < len(words):
            raise addresses.error(f"store address outside the array (0..{len(words) - 1})", addresses.at - 1)
        words[address] = value
    loads = []
    source = streams["in_load_addr"]
    while not source.exhausted:
        token = source.pop()
        if is_data(token):
            if not 0 <= token < len(words):
                raise source.error(f"load address outside the array (0..{len(words) - 1})", source.at - 1)
            loads.append(words[token])
        else:
            loads.append(0 if token == "N" else token)
    return {"load": loads}, {"arr": words}


def wr_scan_vals(params, memory, inputs):
    written = [t for t in inputs["in_val"] if is_data(t)]
    if len(written) > params.get("size", 1024):
        raise InputStream("in_val", inputs["in_val"]).error(f"more values than the array's "
                                                             f"size={params.get('size', 1024)}")
    return {}, {"arr": written}


def wr_scan_compressed(params, memory, inputs):
    crd_arr, seg_arr, open_fiber = [], [0], False
    for token in inputs["in_crd"]:
        if is_data(token):
            crd_arr.append(token)
            open_fiber = True
        elif is_stop(token):
            if open_fiber:      # an empty fiber gets no segment entry (SAM's writer)
                seg_arr.append(len(crd_arr))
            open_fiber = False
    return {}, {"crd_arr": crd_arr, "seg_arr": seg_arr}


def crd_hold(params, memory, inputs):
    """The outer coordinate once per inner element (SAM's CrdHold: a repeat-signal generator on
    the inner stream driving a repeat of the outer one); the inner stream passes unchanged."""
    signals, _ = repeat_sig_gen({}, {}, {"in_stream": inputs["in_inner_crd"]})
    held, _ = repeat({}, {}, {"in_ref": inputs["in_outer_crd"], "in_repsig": signals["repsig"]})
    return {"outer_crd": held["ref"], "inner_crd": list(inputs["in_inner_crd"])}, {}


def flatten(params, memory, inputs):
    """Two levels into one: ``outer * split_factor + inner``; inner stops are absorbed, outer
    stops pass (SAM's Flatten)."""
    factor = params.get("split_factor", 4)
    streams = _streams(inputs)
    outer, inner = streams["in_outer_crd"], streams["in_inner_crd"]
    out = []
    while True:
        token = outer.pop()
        if token == "D":
            if inner.pop() != "D":
                raise inner.error("the inner stream goes on after the outer one ended", inner.at - 1)
            out.append("D")
            return {"crd": out}, {}
        if is_stop(token):
            out.append(token)
            continue
        while True:
            element = inner.pop()
            if is_stop(element):
                break
            if not is_data(element):
                raise inner.error("an inner fiber must hold coordinates and end with a stop", inner.at - 1)
            out.append(token * factor + element)


def split(params, memory, inputs):
    """One level into two by ``split_factor`` (SAM's Split): the outer output is ``crd //
    split_factor`` once per change, the inner one ``crd % split_factor`` (or ``crd`` with
    ``orig_crd``) with ``S0`` between outer groups; input stops go to the outer output and, one
    level higher, to the inner one."""
    factor, original = params.get("split_factor", 4), params.get("orig_crd", True)
    outer, inner, group = [], [], None
    for token in inputs["in_crd"]:
        if is_data(token):
            if group is not None and token // factor != group:
                inner.append("S0")
            if token // factor != group:
                group = token // factor
                outer.append(group)
            inner.append(token if original else token % factor)
        elif is_stop(token):
            outer.append(token)
            inner.append(stop(stop_level(token) + 1))
            group = None
        else:
            outer.append(token)
            inner.append(token)
    return {"outer_crd": outer, "inner_crd": inner}, {}


def crdpt_converter(params, memory, inputs):
    """Point form (one outer and one inner coordinate per element, no stops) back into two nested
    coordinate streams (SAM's CrdPtConverter); ``last_level`` closes the inner stream with
    ``S1`` instead of ``S0``."""
    streams = _streams(inputs)
    outer_points, inner_points = streams["in_outer_crdpt"], streams["in_inner_crdpt"]
    outer, inner, group = [], [], None
    while True:
        o, i = outer_points.pop(), inner_points.pop()
        if o == "D" or i == "D":
            if o != i:
                longer = outer_points if o != "D" else inner_points
                raise longer.error("the two point streams must end together", longer.at - 1)
            if group is not None:
                outer.append("S0")
                inner.append("S1" if params.get("last_level", False) else "S0")
            outer.append("D")
            inner.append("D")
            return {"outer_crd": outer, "inner_crd": inner}, {}
        if not (is_data(o) and is_data(i)):
            raise outer_points.error("point streams carry coordinates only, then 'D'", outer_points.at - 1)
        if o != group:
            if group is not None:
                inner.append("S0")
            outer.append(o)
            group = o
        inner.append(i)


def _popcount(word: int) -> int:
    return bin(word).count("1")


def bv(params, memory, inputs):
    """Each fiber's coordinates as one bit-vector word, stops kept; an empty fiber gives only its
    stop (SAM's BV)."""
    out, word, held = [], 0, False
    for token in inputs["in_crd"]:
        if is_data(token):
            word |= 1 << token
            held = True
            continue
        if held:
            out.append(word)
        out.append(token)
        word, held = 0, False
    return {"bv": out}, {}


def bv_chunk(params, memory, inputs):
    """Each word split into ``size / width`` chunks of ``width`` bits, low bits first; ``ref`` is
    the number of set bits in the word's earlier chunks (SAM's ChunkBV)."""
    width, size = params.get("width", 4), params.get("size", 16)
    words, refs = [], []
    for token in inputs["in_bv"]:
        if not is_data(token):
            words.append(token)
            refs.append(token)
            continue
        below = 0
        for k in range(size // width):
            chunk = token >> (k * width) & ((1 << width) - 1)
            words.append(chunk)
            refs.append(below)
            below += _popcount(chunk)
    return {"bv": words, "ref": refs}, {}


def rd_scan_bv(params, memory, inputs):
    """A bit-vector level scanner (SAM's BVRdScan): reference *r* gives the word ``bv_arr[r]``
    and, as its reference, the set bits of the words before it; stops as for every scanner."""
    words = memory["bv_arr"]
    source = _streams(inputs)["in_ref"]

    def fiber(ref, _source):
        if not 0 <= ref < len(words):
            raise _source.error(f"reference {ref} is outside bv_arr (0..{len(words) - 1})", _source.at - 1)
        return [(words[ref], sum(_popcount(w) for w in words[:ref]))]
    scanned = _level_scan(source, fiber)
    return {"bv": scanned["crd"], "ref": scanned["ref"]}, {}


def intersect_bv(params, memory, inputs):
    """Bit-vector intersection (SAM's IntersectBV2): the AND of the two words (dropped when 0,
    unless ``emit_zeros``), and per set bit of it each side's reference: the side's base reference
    plus its set bits below that bit."""
    streams = _streams(inputs)
    out = {"bv": [], "ref1": [], "ref2": []}
    sides = [(streams["in_bv1"], streams["in_ref1"]), (streams["in_bv2"], streams["in_ref2"])]
    while True:
        (w1, r1), (w2, r2) = [(words.pop(), refs.pop()) for words, refs in sides]
        if not (is_data(w1) and is_data(w2)):
            if w1 != w2:
                raise sides[1][0].error(f"does not line up with in_bv1's {w1!r}", sides[1][0].at - 1)
            for port in out:
                out[port].append(w1)
            if w1 == "D":
                return out, {}
            continue
        both = w1 & w2
        if both or params.get("emit_zeros", False):
            out["bv"].append(both)
        for bit in range(both.bit_length()):
            if both >> bit & 1:
                out["ref1"].append(r1 + _popcount(w1 & ((1 << bit) - 1)))
                out["ref2"].append(r2 + _popcount(w2 & ((1 << bit) - 1)))


def bv_drop(params, memory, inputs):
    """The bit-vector form of crd_drop (SAM's BVDrop): each outer bit whose inner fiber is empty
    is cleared, then both streams go through empty_stkn_drop."""
    streams = _streams(inputs)
    outer, inner = streams["in_outer_bv"], streams["in_inner_bv"]
    outer_out, inner_out = [], []
    while True:
        word = outer.pop()
        if not is_data(word):
            outer_out.append(word)
            if word == "D":
                inner_out.append(inner.pop())
                break
            continue
        kept = 0
        for bit in range(word.bit_length()):
            if not word >> bit & 1:
                continue
            held = False
            while True:
                token = inner.pop()
                inner_out.append(token)
                if is_stop(token):
                    break
                if token == "D":
                    raise inner.error("the inner stream ended inside an outer word's fibers", inner.at - 1)
                held = True
            if held:
                kept |= 1 << bit
        outer_out.append(kept)
    dropped = {name: empty_stkn_drop({}, {}, {"in_stream": tokens})[0]["val"]
               for name, tokens in (("outer_bv", outer_out), ("inner_bv", inner_out))}
    return dropped, {}


def _points(inputs):
    """(outer, inner, value) triples of a sparse accumulator's three aligned point streams."""
    streams = _streams(inputs)
    ports = [streams["in_outer_crdpt"], streams["in_inner_crdpt"], streams["in_val"]]
    points = []
    while True:
        tokens = [port.pop() for port in ports]
        if "D" in tokens:
            if tokens != ["D"] * 3:
                late = ports[[t == "D" for t in tokens].index(False)]
                raise late.error("the three point streams must end together", late.at - 1)
            return points
        if not (is_data(tokens[0]) and is_data(tokens[1])) or isinstance(tokens[2], str):
            raise ports[0].error("a point is an outer and an inner coordinate and a value", ports[0].at - 1)
        points.append(tuple(tokens))


def _accumulate(points, whole: bool):
    """Sum values per (outer, inner): over runs of equal outer coordinates, or the whole stream;
    groups in order of appearance (runs) or sorted (whole), inner coordinates sorted."""
    groups = []
    for outer, inner, value in points:
        if whole:
            match = next((g for g in groups if g[0] == outer), None)
        else:
            match = groups[-1] if groups and groups[-1][0] == outer else None
        if match is None:
            match = (outer, {})
            groups.append(match)
        match[1][inner] = match[1].get(inner, 0.0) + float(value)
    if whole:
        groups.sort(key=lambda group: group[0])
    return [(outer, sorted(sums.items())) for outer, sums in groups]


def _fibers(params, groups):
    outer, inner, values = [], [], []
    closing = "S1" if params.get("last_level", True) else "S0"
    for k, (crd, sums) in enumerate(groups):
        outer.append(crd)
        for coordinate, total in sums:
            inner.append(coordinate)
            values.append(total)
        stop_token = "S0" if k < len(groups) - 1 else closing
        inner.append(stop_token)
        if params.get("val_stkn", False):
            values.append(stop_token)
    if groups:
        outer.append("S0")
    return {"outer_crd": outer + ["D"], "inner_crd": inner + ["D"], "val": values + ["D"]}


def _crdpts(groups):
    outer, inner, values = [], [], []
    for crd, sums in groups:
        for coordinate, total in sums:
            outer.append(crd)
            inner.append(coordinate)
            values.append(total)
    return {"outer_crdpt": outer + ["D"], "inner_crdpt": inner + ["D"], "val": values + ["D"]}


def spacc1(params, memory, inputs):
    """Sparse accumulator, vector form (SAM's SparseAccumulator1): sums per inner coordinate
    within each run of equal outer coordinates, each run one fiber with sorted coordinates."""
    return _fibers(params, _accumulate(_points(inputs), whole=False)), {}


def spacc2(params, memory, inputs):
    """Sparse accumulator, matrix form (SAM's SparseAccumulator2): sums per (outer, inner) over
    the whole stream, emitted at the end as sorted nested fibers."""
    return _fibers(params, _accumulate(_points(inputs), whole=True)), {}


def spcrdpt_accum1(params, memory, inputs):
    """The point form of spacc1: one (outer, inner, value) per stored point, no stops."""
    return _crdpts(_accumulate(_points(inputs), whole=False)), {}


def spcrdpt_accum2(params, memory, inputs):
    """The point form of spacc2."""
    return _crdpts(_accumulate(_points(inputs), whole=True)), {}


def whole_sums(tokens) -> list:
    """An accumulator's float sums that are whole numbers as integers (SAM sums in Python floats;
    the other primitives, the writers and the RTL take integers); anything else unchanged."""
    return [int(t) if isinstance(t, float) and t.is_integer() else t for t in tokens]


def graph_accumulator(inputs):
    """SAM's ``spaccumulator`` of order 1 as its graphs use it: a stop dropper on each of the three
    coordinate / value streams, then ``spacc1`` with the inner level's stops on the sums too and
    ``S1`` after the last run; whole sums as integers."""
    points = {port: stkn_drop({}, {}, {"in_stream": tokens})[0]["val"] for port, tokens in inputs.items()}
    outputs = spacc1({"val_stkn": True, "last_level": True}, {}, points)[0]
    return {**outputs, "val": whole_sums(outputs["val"])}


MODELS = {
    "rd_scan_compressed": rd_scan_compressed, "rd_scan_uncompressed": rd_scan_uncompressed,
    "repeat": repeat, "repeat_sig_gen": repeat_sig_gen, "intersect": intersect, "union": union,
    "add": add, "multiply": multiply, "reduce": reduce, "crd_drop": crd_drop,
    "stkn_drop": stkn_drop, "empty_stkn_drop": empty_stkn_drop, "array": array,
    "wr_scan_vals": wr_scan_vals, "wr_scan_compressed": wr_scan_compressed,
    "crd_hold": crd_hold, "flatten": flatten, "split": split, "crdpt_converter": crdpt_converter,
    "bv": bv, "bv_chunk": bv_chunk, "rd_scan_bv": rd_scan_bv, "intersect_bv": intersect_bv,
    "bv_drop": bv_drop, "spacc1": spacc1, "spacc2": spacc2, "spcrdpt_accum1": spcrdpt_accum1,
    "spcrdpt_accum2": spcrdpt_accum2,
}
