"""The ``rivulet`` command and what it drives: run orchestration, the front-ends, the demo, and
the simulation back-end (:mod:`rivulet.sim`) that the command and the tests share.

It sits on top of the dependency order (``hw`` <- ``rsn`` <- ``ripple_core``, ``snn``, ``board``
<- ``rivulet``); ``testbench`` and ``bench`` import it, and it imports neither.
"""
