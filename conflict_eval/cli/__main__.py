"""``python -m conflict_eval.cli``."""

import sys

from conflict_eval.cli.main import main

sys.exit(main())
