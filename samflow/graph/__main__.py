"""``python -m samflow.graph GRAPH.gv --size N --density D --seed S`` (see :mod:`.cli`)."""

import sys

from .cli import main

sys.exit(main())
