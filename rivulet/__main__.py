"""``python -m rivulet``: the same command as the ``rivulet`` script."""

import sys

from .cli import main

sys.exit(main())
