"""``python -m providers`` is the ``oaicompat`` command."""

import sys

from providers.cli import main

sys.exit(main())
