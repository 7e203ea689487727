"""Compile a fuzzer source program (:mod:`ripple_core.fuzz.source`) to an ordered-dataflow graph,
in the shape RipTide's compiler gives C code without stream fusion.

* **Regions.** Every statement list runs in a region that is activated once per token of its
  *decider* with the right polarity: the top level once, a loop body once per true loop
  condition, a branch once per matching ``if`` condition. A value that enters a region is
  STEERed into it on its decider (lazily, at its first use); a constant a region needs as a token
  is a STEER of a ``hold`` constant on the decider, or a ``const`` slot at the top level. A
  constant operand of an operator is a ``hold`` slot.
* **Loops.** A ``carry`` loop keeps its counter and every variable its body assigns in CARRYs
  whose decider is the compare ``rel(counter, bound)`` (or its complement with the other
  polarity); variables the body only reads pass through INVARIANTs. Exit values leave through
  STEERs of the other polarity. A ``stream`` loop is a STREAM whose flag is that decider.
* **Branches.** ``if`` STEERs what each branch reads, and MERGEs every variable either branch
  assigns. A ``select`` expression is a SELECT.
* **Memory.** An array that is only loaded needs no order. An array that is stored and loaded
  (one site each, so that the two share a pe tile's bank) threads a memory token through the
  program like a variable: the load waits for it through an ORDER on its index and hands on its
  word, the store waits for it through an ORDER on its value and hands on its done token. An
  array that is only stored is ordered by its one STORE node.

Pure operators whose results nobody uses are removed at the end.
"""

from ripple_core.builder import Builder, Ref
from ripple_core.graph import Graph, Input, const, hold

from .source import Program, SourceError, apply_binary, expression_nodes, statements

__all__ = ["compile_program", "MEMORY_TOKEN", "COMPLEMENT"]

MEMORY_TOKEN = "@mem"
COMPLEMENT = {"SLT": "SGE", "SGE": "SLT", "SLE": "SGT", "SGT": "SLE", "ULT": "UGE", "UGE": "ULT",
              "ULE": "UGT", "UGT": "ULE", "EQ": "NE", "NE": "EQ"}
# A STREAM's L modes end when the relation fails; each G mode ends when it holds, so SGE ends
# where SLT fails: the same loop, spelt with the other code.
_STREAM_TWIN = {"SLT": "SGE", "SLE": "SGT", "ULT": "UGE", "ULE": "UGT"}
_PURE_KEEP = ("STORE", "SINK")


class _Const:
    """A value known at compile time (folded; a ``hold`` operand where an operator needs it)."""

    def __init__(self, value: int):
        self.value = value

    def slot(self):
        return hold(self.value)

    def once(self):
        return const(self.value)

    def key(self):
        return ("const", self.value)


class _Arg:
    """A scalar argument: a constant of the case, read through an ``arg`` slot."""

    def __init__(self, name: str):
        self.name = name

    def slot(self):
        return Input("arg", name=self.name, hold=True)

    def once(self):
        return Input("arg", name=self.name, hold=False)

    def key(self):
        return ("arg", self.name)


_STATIC = (_Const, _Arg)


class _Region:
    """A region's decider and its variables. A value read but not yet known comes from
    ``entry`` if given (a loop body: the loop header's value, steered in), else from the parent,
    steered in on the decider. ``token`` makes a static operand a token (default: once per
    activation of the region)."""

    def __init__(self, compiler, decider=None, parent=None, *, entry=None, knows=None, token=None):
        self.compiler, self.decider, self.parent = compiler, decider, parent
        self.entry, self._knows, self.make_token = entry, knows, token
        self.env: dict = {}
        self.assigned: set[str] = set()
        self.tokens: dict = {}          # a static operand's token in this region, made once

    def read(self, name):
        if name in self.env:
            return self.env[name]
        if self.entry is not None:
            value = self.entry(name)
        elif self.parent is not None:
            value = self.compiler.steer_in(self, self.parent.read(name))
        else:
            raise SourceError(f"variable {name!r} is read before it is assigned")
        self.env[name] = value
        return value

    def knows(self, name) -> bool:
        if name in self.env:
            return True
        if self._knows is not None:
            return self._knows(name)
        return self.parent is not None and self.parent.knows(name)

    def write(self, name, value):
        self.env[name] = value
        self.assigned.add(name)


class _Compiler:
    def __init__(self, program: Program, name: str):
        self.program = program
        self.b = Builder(name)
        self.rw_arrays = self._rw_arrays()

    def _rw_arrays(self) -> set[str]:
        loaded, stored = set(), set()
        for stmt in statements(self.program.body):
            if stmt[0] == "store":
                stored.add(stmt[1])
            for expr in _expressions(stmt):
                for node in expression_nodes(expr):
                    if node[0] == "load":
                        loaded.add(node[1])
        return loaded & stored

    # operands -----------------------------------------------------------------------------
    def token(self, region, operand) -> Ref:
        """``operand`` as one token per activation of ``region``."""
        if isinstance(operand, Ref):
            return operand
        key = operand.key()
        if key not in region.tokens:
            if region.make_token is not None:
                region.tokens[key] = region.make_token(operand)
            elif region.decider is None:
                region.tokens[key] = self.b.ident(operand.once())
            else:
                decider, pred = region.decider
                region.tokens[key] = self.b.steer(decider, operand.slot(), pred=pred)
        return region.tokens[key]

    def initial(self, region, operand):
        """A loop's initial value: a slot consumed once at the top level, else a token."""
        if isinstance(operand, _STATIC) and region.decider is None:
            return operand.once()
        return self.token(region, operand)

    def steer_in(self, region, operand):
        if not isinstance(operand, Ref):
            return operand
        decider, pred = region.decider
        return self.b.steer(decider, operand, pred=pred)

    @staticmethod
    def slot(operand):
        return operand if isinstance(operand, Ref) else operand.slot()

    def pair(self, region, a, b):
        """Two operands of one operator, at least one of them a token (two hold slots would
        make the operator fire for ever)."""
        if not isinstance(a, Ref) and not isinstance(b, Ref):
            a = self.token(region, a)
        return self.slot(a), self.slot(b)

    # expressions --------------------------------------------------------------------------
    def expr(self, region, expr):
        tag = expr[0]
        if tag == "var":
            return region.read(expr[1])
        if tag == "const":
            return _Const(expr[1])
        if tag == "bin":
            a, b = self.expr(region, expr[2]), self.expr(region, expr[3])
            if isinstance(a, _Const) and isinstance(b, _Const):
                return _Const(apply_binary(expr[1], a.value, b.value))
            return self.b.op(expr[1], *self.pair(region, a, b))
        if tag == "select":
            cond, a, b = (self.expr(region, part) for part in expr[1:])
            if isinstance(cond, _Const):
                return a if cond.value else b
            if isinstance(a, _Const) and isinstance(b, _Const) and a.value == b.value:
                return a
            return self.b.select(self.token(region, cond), self.slot(a), self.slot(b))
        if tag == "load":
            array = expr[1]
            index = self.token(region, self.expr(region, expr[2]))
            if array in self.rw_arrays:
                index = self.b.order(index, region.read(MEMORY_TOKEN))
            word = self.b.load(self.b.array(array), index)
            if array in self.rw_arrays:
                region.write(MEMORY_TOKEN, word)
            return word
        raise SourceError(f"unknown expression {expr!r}")

    # statements ---------------------------------------------------------------------------
    def block(self, region, stmts):
        for stmt in stmts:
            getattr(self, "stmt_" + stmt[0])(region, *stmt[1:])

    def stmt_let(self, region, name, expr):
        region.write(name, self.expr(region, expr))

    def stmt_out(self, region, sink, expr):
        self.b.sink(sink, self.token(region, self.expr(region, expr)))

    def stmt_store(self, region, array, index, value):
        index = self.token(region, self.expr(region, index))
        value = self.token(region, self.expr(region, value))
        if array in self.rw_arrays:
            value = self.b.order(value, region.read(MEMORY_TOKEN))
        done = self.b.store(self.b.array(array), index, value)
        if array in self.rw_arrays:
            region.write(MEMORY_TOKEN, done)

    def stmt_if(self, region, cond, then, otherwise):
        decider = self.expr(region, cond)
        if isinstance(decider, _Const):
            self.block(region, then if decider.value else otherwise)
            return
        decider = self.token(region, decider)
        sides = []
        for pred, stmts in ((True, then), (False, otherwise)):
            branch = _Region(self, (decider, pred), region)
            self.block(branch, stmts)
            sides.append(branch)
        for name in sorted(sides[0].assigned | sides[1].assigned):
            if not region.knows(name):
                continue            # local to a branch
            t, f = (side.read(name) for side in sides)
            if isinstance(t, _Const) and isinstance(f, _Const) and t.value == f.value:
                region.write(name, t)
            else:
                region.write(name, self.b.merge(decider, self.slot(t), self.slot(f)))

    def stmt_for(self, region, var, start, bound, step, rel, style, body):
        carried = sorted(name for name in _assigned(body) if region.knows(name))
        if self._touches_rw_memory(body):
            carried = sorted(set(carried) | {MEMORY_TOKEN})
        invert = "~" in style
        if style.startswith("stream"):
            self._stream_loop(region, var, start, bound, step, rel, body, carried, invert, "^" in style)
        else:
            self._carry_loop(region, var, start, bound, step, rel, body, carried, invert)

    def _touches_rw_memory(self, body) -> bool:
        for stmt in statements(body):
            if stmt[0] == "store" and stmt[1] in self.rw_arrays:
                return True
            if any(node[0] == "load" and node[1] in self.rw_arrays
                   for expr in _expressions(stmt) for node in expression_nodes(expr)):
                return True
        return False

    def _header(self, region, decider, pred, carry_of):
        """name -> its value in the loop header, once per evaluation of the loop condition: a
        CARRY of ``carry_of``, else an INVARIANT of the enclosing value (made at first use)."""
        invariants = {}

        def header(name):
            if name in carry_of:
                return carry_of[name]
            if name not in invariants:
                outer = region.read(name)
                invariants[name] = outer if not isinstance(outer, Ref) else \
                    self.b.invariant(decider, outer, pred=pred)
            return invariants[name]
        return header

    def _body(self, region, decider, pred, header, body, var, index):
        inner = _Region(self, (decider, pred), region, entry=lambda name: self.steer_in(inner, header(name)),
                        knows=region.knows)
        inner.env[var] = index
        self.block(inner, body)
        return inner

    def _carry_loop(self, region, var, start, bound, step, rel, body, carried, invert):
        b = self.b
        pred = not invert
        cond_wire = b.wire(f"{var}.cond")
        carry_of, nexts = {}, {}
        for name in [var, *carried]:
            initial = self.expr(region, start) if name == var else region.read(name)
            nexts[name] = b.wire(f"{var}.{name}.next")
            carry_of[name] = b.carry(cond_wire, self.initial(region, initial), nexts[name], pred=pred)
        header = self._header(region, cond_wire, pred, carry_of)
        # The bound as the header sees it: per evaluation of the condition.
        header_region = _Region(self, None, None, entry=header, knows=region.knows,
                                token=lambda operand: b.invariant(cond_wire, operand.slot(), pred=pred))
        bound_operand = self.expr(header_region, bound)
        compare = rel if pred else COMPLEMENT[rel]
        cond = b.op(compare, carry_of[var], self.slot(bound_operand))
        cond_wire.bind(cond)
        counter = b.steer(cond, carry_of[var], pred=pred)
        inner = self._body(region, cond, pred, header, body, var, counter)
        nexts[var].bind(b.add(counter, b.hold(step)))
        for name in carried:
            nexts[name].bind(self.token(inner, inner.read(name)))
            region.write(name, b.steer(cond, carry_of[name], pred=not pred))

    def _stream_loop(self, region, var, start, bound, step, rel, body, carried, invert, twin):
        b = self.b
        pred = invert                   # a STREAM's flag is `finished XOR pred`: pred while running
        cmp = _STREAM_TWIN[rel] if twin else rel
        start_slot = self.initial(region, self.expr(region, start))
        index, flag = b.stream(start_slot, self.slot(self.expr(region, bound)), b.hold(step), cmp=cmp,
                               pred=pred)
        carry_of, nexts = {}, {}
        for name in carried:
            nexts[name] = b.wire(f"{var}.{name}.next")
            carry_of[name] = b.carry(flag, self.initial(region, region.read(name)), nexts[name], pred=pred)
        header = self._header(region, flag, pred, carry_of)
        inner = self._body(region, flag, pred, header, body, var, index)
        for name in carried:
            nexts[name].bind(self.token(inner, inner.read(name)))
            region.write(name, b.steer(flag, carry_of[name], pred=not pred))


def _expressions(stmt):
    tag = stmt[0]
    if tag in ("let", "out"):
        return [stmt[2]]
    if tag == "store":
        return [stmt[2], stmt[3]]
    if tag == "if":
        return [stmt[1]]
    if tag == "for":
        return [stmt[2], stmt[3]]
    return []


def _assigned(stmts) -> set[str]:
    return {stmt[1] for stmt in statements(stmts) if stmt[0] == "let"}


def _prune(graph: Graph) -> Graph:
    """Remove pure operators nobody consumes, until none is left."""
    while True:
        used = {source for sources in [[(i.source, i.port) for i in node.inputs if i.kind == "edge"]
                                       for node in graph.nodes.values()] for source in sources}
        dead = [name for name, node in graph.nodes.items()
                if node.op not in _PURE_KEEP and not any(src == name for src, _ in used)]
        if not dead:
            return graph
        for name in dead:
            del graph.nodes[name]


def compile_program(program: Program, name: str = "fuzz") -> Graph:
    """The dataflow graph of ``program`` (scalars and arrays in the program's order)."""
    compiler = _Compiler(program, name)
    top = _Region(compiler)
    for scalar in program.scalars:
        compiler.b.scalar(scalar)
        top.env[scalar] = _Arg(scalar)
    for array, contents in program.arrays.items():
        compiler.b.array(array, len(contents))
    if compiler.rw_arrays:
        top.env[MEMORY_TOKEN] = compiler.b.ident(compiler.b.const(0))
    compiler.block(top, program.body)
    return _prune(compiler.b.build()).validate()
