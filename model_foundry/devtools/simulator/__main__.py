"""``python -m model_foundry.devtools.simulator ARGS`` = ``model-foundry simulate-slots ARGS``."""

import sys

from model_foundry.cli import main

raise SystemExit(main(["simulate-slots", *sys.argv[1:]]))
