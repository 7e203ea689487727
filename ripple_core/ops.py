"""The ordered-dataflow operators: :mod:`rsn.dataflow_ops` under the name the Ripple model uses.

The operator state machines are the specification of the ``pe`` FU kind, whose golden model in
``rsn`` runs them; since ``rsn`` may not import ``ripple_core``, they live in ``rsn`` and this
module is the same objects (docs/ripple.md, "The PE as an RSN FU kind").
"""

from rsn.dataflow_ops import *  # noqa: F403
from rsn.dataflow_ops import LOAD_VALUE, __all__  # noqa: F401
