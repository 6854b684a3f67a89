"""``python -m model_foundry.devtools.simulator ARGS`` = ``model-foundry simulate-slots ARGS``."""

import sys

from model_foundry.devtools.simulator.command import main

raise SystemExit(main(sys.argv[1:]))
