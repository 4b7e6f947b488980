"""`python -m naus`: the same command line as `naus` (used by the workflow inside conda envs)."""

import sys

from naus.cli import main

sys.exit(main())
