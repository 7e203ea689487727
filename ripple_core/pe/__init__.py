"""The ``pe`` FU kind: the Ripple processing element, one ordered-dataflow operator chosen at run time.

One PE design serves every operator, as a CGRA PE does: the host writes a configuration word
(operator, decider polarity, STREAM compare mode, each operand slot's kind, which output ports
discard) and the constant of each constant or ``hold`` slot over a :data:`rsn.fu.ConfigBus`.
The semantics are those of :mod:`ripple_core.ops` (``ripple_core.ops``), the specification;
docs/ripple.md ("The PE hardware") describes the architecture. :class:`RipplePE` is the PE
itself; :class:`PeFu` puts it behind the FU interface of the fabric (``pe`` tiles), where
micro-ops grant it firings.

Architecture
------------
* **Operand slots.** Up to three. An ``EDGE`` slot is fed by the stream ``i[k]`` through a
  :class:`hw.token_queue.TokenQueue` of ``depth`` tokens (``depth=0``: no queue, the firing
  logic reads ``i[k]`` directly, for a tile that puts its own queues in front). A ``CONST`` slot
  holds one token, armed by writing its constant register and consumed by the first firing that
  takes it. A ``HOLD`` slot holds its constant for ever: firings read it and never take it.
* **Firing logic.** Combinational, from the slot fronts, the operator's state (a LOOP/ACTIVE bit
  and STREAM's index register) and the room in the output registers. A firing happens when the
  operator's firing rule holds and every output port it emits on has room; it takes the slots
  the rule takes, updates the state and loads the output registers, all at one clock edge. At
  most one firing per cycle, one token per cycle sustained.
* **Outputs.** ``o[0]`` and ``o[1]`` (STREAM's index and flag) each have one output register,
  so a result is offered the cycle after its firing and ``o[k].valid`` never depends on
  ``o[k].ready``. A port marked in the ``drop`` mask has no consumer: its tokens are discarded,
  as a port with no consumer drops its tokens in the golden model. ``o[k].ready`` reaches the
  queues' ``o.ready`` combinationally (a queue's ``i.ready`` never depends on it, so no loop).
* **Memory bank** (``mem_depth`` > 0). A PE may own a bank of ``mem_depth`` 32-bit words (an
  :class:`amaranth.lib.memory.Memory` with one write port and one synchronous read port, the
  shape of a block RAM) holding one array: bank word ``w`` is flat address ``origin + w``. Only
  such a PE runs LOAD (slots base, offset, sync; ``o[0]`` the word, ``o[1]`` a done token 1)
  and STORE (slots base, offset, value; ``o[0]`` a done token 1), with the firing rules of
  :mod:`ripple_core.ops`. A LOAD without a sync slot is configured with slot 2 ``hold`` (always
  present, never taken); a STORE has no sync slot (an ORDER in front of its value does that
  job). A firing accesses ``address = base + offset`` (32-bit wrap), bank word
  ``address - origin`` (signed, exact). A PE without a bank configured as LOAD or STORE never
  fires.

  *Latency.* A STORE writes at the clock edge of its firing and offers its done token the cycle
  after, as an ALU result; a LOAD's done token also comes the cycle after its firing, but its
  word is read at that edge and offered on ``o[0]`` two cycles after the firing
  (:data:`LOAD_LATENCY`). Between the read port and ``o[0]`` a catch register holds a word that
  cannot enter the output register, so LOADs fire one per cycle sustained while ``o[0]`` is
  ready; ``o[0]``'s room counts the word being read, the catch register and the output register.
  Anything a LOAD of the same configuration reads was written at least one edge before, so it
  sees every earlier STORE and window write.

  *Out of range.* An address outside ``origin .. origin + mem_depth - 1`` is a program error.
  The PE still fires (so the fabric does not hang): a LOAD offers 0, a STORE writes nothing, and
  the sticky fault bit (status bit 4) is set with the flat address of the first such access in
  the fault register. Writing the configuration word clears the fault bit. The golden model
  raises :class:`PeMemoryError` instead.

  *Config bus.* An access to the window (0x0800-0x0FFF) in a cycle keeps LOAD and STORE from
  firing in that cycle (the bus wins the bank's ports). The window shows bank words
  ``page * 2048 + (addr - 0x0800)`` modulo ``mem_depth``: a bank of 2048 words or fewer is
  aliased through the whole window, and a 4096-word bank needs the page register for its upper
  half. The host preloads an array by writing the window before the run and reads it back after.

* **Shared memory** (``shared_words`` > 0, instead of a bank). The PE reaches a memory that
  other PEs share (:class:`hw.banked_memory.BankedMemory`, docs/shared-memory.md) through
  ``mem_req`` and ``mem_resp``. A LOAD or STORE firing puts a request for flat address
  ``base + offset`` in the request register (any base, any offset; the firing waits while the
  register is full and not being taken). The answers come back in request order and fill the
  output registers: a LOAD's word on ``o[0]`` with a done token 1 on ``o[1]``, a STORE's done
  token 1 on ``o[0]`` once the write has happened, which is what lets a sync token order a later
  LOAD after it. Without contention a LOAD's word is offered three cycles after its firing. An
  address at or above ``shared_words`` is a program error: the memory answers a LOAD with 0 and
  writes nothing, and the PE keeps the first such address in the fault register with status
  bit 4, as with a bank. ``ACQUIRE`` and ``RELEASE`` (slot 0 the address, slots 1 and 2 sync
  or hold, port 0) are one site each on the memory's atomic directory: ACQUIRE fires when the
  memory grants its address and emits it, asking again while the answer is "busy"; RELEASE
  fires as it asks and emits its done token 1 with the answer. A release the memory answers
  "not held" sets the fault bit with the address. ``QUEUE`` runs here too: it keeps up to
  :data:`SHARED_QUEUE_WORDS` words in a buffer of its own and the newer ones in a ring of the
  shared memory (``origin``, register 12 its words), refilling the buffer from the ring's head;
  a spill queue that finds its ring full sets bit 4 with the address past the ring's end and
  waits (docs/shared-memory.md, "Spill queues through the memory").

* **Ripple's operators** (docs/ripple.md, "Ripple's operators in hardware"). ``ARB``: a
  round-robin merge of the slots that have a token, from the slot after the last grant (a
  ``const`` slot never armed is an absent source), with the granted slot's number on ``o[1]``
  (drop the port when no tuple field follows the choice). ``TASK``: dispatch of slot 0's arguments on
  ``o[0]``; with ``pred`` (``ind``) whenever there is room, without it one at a time, a token on
  slot 1 returning the one credit (before any dispatch). With a bank only: ``QUEUE`` keeps its
  tokens in the bank as a ring: slot 0's tokens enter while fewer than the depth (register 8)
  are queued, or, with ``pred`` (spill), while the bank has room; a firing dequeues one, as a
  LOAD's word. Words beyond the depth are spill traffic, counted in registers 9 and 10.
  ``LOCK`` is the atomic directory of one ACQUIRE site (slot 0 to ``o[0]``) and one RELEASE
  site (slots 1 and 2, address and sync, to ``o[1]``), with :data:`LOCK_ENTRIES` entries.
  ``LDST`` serves a LOAD site (slot 0, a word offset, to ``o[0]``) and a STORE site (slots 1 and
  2, offset and value, to ``o[1]``) on the one array in the bank. In LOCK and LDST the second
  site goes first when both can fire, since it frees what the first may wait for.

Configuration registers (``cfg.addr``; writes take effect at the clock edge, reads return the
register in the next cycle):

* ``0``: the configuration word, :data:`PE_CONFIG`. Writing it also puts the operator back in its
  first state (INIT / IDLE) and disarms the constant slots.
* ``1 + k`` (k = 0, 1, 2): the constant of slot ``k``; writing it arms the slot (one token for a
  ``CONST`` slot, a permanent one for ``HOLD``).
* ``4`` (read only): bit 0 the operator is in its first state, bits 1-3 the armed constant slots,
  bit 4 a LOAD or STORE address was out of range since the configuration word was written.

With a bank (without one, these read 0 and writes are ignored):

* ``5``: ``origin``, the flat address of bank word 0 (a signed 32-bit word address).
* ``6`` (read only): the flat address of the first out-of-range access (valid while bit 4 is set).
* ``7``: bit 0, the window's page.
* ``8``: QUEUE's depth (a larger value reads back as ``mem_depth``); ``9``, ``10`` (read only):
  its spill writes and reads (16 bits, wrapping); ``11`` (read only): the addresses LOCK holds.
  Writing the configuration word clears 9-11, the ring, the directory and the fault.
* ``0x0800-0x0FFF``: the bank window; a read returns the word in the next cycle, as a register.

With the shared memory (Ripple's operators built): ``5`` the QUEUE ring's base, ``6`` (read
only) the fault address, ``8`` the depth, ``9`` and ``10`` (read only) the words written to and
read back from the ring, ``12`` the ring's words. Writing the configuration word clears the
ring, the counters and the fault.
"""

from . import config
from .config import *  # noqa: F403
from .fu import LATENCY, LOAD_LATENCY, PE_KIND, PeFu, PeParameters
from .model import PeMemoryError, PeModel
from .rtl import RipplePE

__all__ = [*config.__all__, "LATENCY", "LOAD_LATENCY", "PE_KIND", "PeFu", "PeParameters", "PeMemoryError",
           "PeModel", "RipplePE"]
