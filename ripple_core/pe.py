"""The Ripple PE hardware: :mod:`rsn.fu_pe` under the name the Ripple code uses.

The PE is a FU kind of the RSN fabric (``pe``), so its RTL lives in ``rsn``, which may not
import ``ripple_core`` (docs/ripple.md, "The PE as an RSN FU kind").
"""

from rsn.fu_pe import *  # noqa: F403
from rsn.fu_pe import __all__  # noqa: F401
