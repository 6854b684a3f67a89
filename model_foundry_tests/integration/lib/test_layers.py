"""lib/ is plain code: importing every module of it loads no Dagster at all."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_no_lib_module_loads_dagster() -> None:
    # A fresh interpreter: this test process has long imported Dagster for the other tests.
    code = textwrap.dedent(
        """
        import importlib, json, pkgutil, sys
        import model_foundry.lib as lib
        names = [m.name for m in pkgutil.walk_packages(lib.__path__, lib.__name__ + ".")]
        for name in names:
            importlib.import_module(name)
        loaded = sorted(m for m in sys.modules if m.split(".")[0].startswith("dagster"))
        print(json.dumps({"modules": names, "dagster": loaded}))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]

    found = json.loads(result.stdout.strip().splitlines()[-1])
    # The walk reached the deep modules too, so an empty list below means something.
    assert {"model_foundry.lib.nats.connection", "model_foundry.lib.slots.dispatcher"} <= set(
        found["modules"]
    )
    assert found["dagster"] == [], "lib imported Dagster: " + ", ".join(found["dagster"][:10])
