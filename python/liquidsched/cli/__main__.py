"""``python -m liquidsched.cli``."""

import sys

from . import main

sys.exit(main())
