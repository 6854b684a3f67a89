"""``python -m model_foundry.cli``: what the ``model-foundry`` script runs."""

import os
import sys

from model_foundry.cli import main

if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
