"""`python -m toolgrammar` is the `toolgrammar` command."""

import sys

from .cli import main

sys.exit(main())
