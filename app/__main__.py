"""``python -m tokenprism.app``: the same as the ``tokenprism`` command."""

import sys

from tokenprism.app.cli import main

sys.exit(main())
