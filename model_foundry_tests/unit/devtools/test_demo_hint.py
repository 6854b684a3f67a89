"""The demo's last line: a query command that works as printed, however the demo was run."""

from __future__ import annotations

from pathlib import Path

from model_foundry.devtools.demo import cli_command


def venv(root: Path) -> Path:
    """A project with a venv holding the model-foundry script; returns the script."""
    script = root / ".venv" / "bin" / "model-foundry"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    (script.parent / "python").write_text("")
    return script


def test_make_demo_prints_the_venvs_script_relative_to_the_project(tmp_path: Path) -> None:
    script = venv(tmp_path)
    python = str(script.parent / "python")
    # `make demo` runs `.venv/bin/model-foundry demo` from the project, outside any venv.
    assert cli_command(".venv/bin/model-foundry", python, tmp_path, None) == (
        ".venv/bin/model-foundry"
    )
    # The same from elsewhere (or by its absolute path) is the absolute path.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert cli_command(str(script), python, elsewhere, None) == str(script)
    # A model-foundry on the PATH that is another install is not the one that ran.
    other = venv(tmp_path / "other")
    assert cli_command(str(script), python, elsewhere, str(other)) == str(script)
    # From inside the script's own folder a bare name would search the PATH.
    assert cli_command("model-foundry", python, script.parent, None) == "./model-foundry"


def test_an_activated_venv_prints_the_bare_name(tmp_path: Path) -> None:
    script = venv(tmp_path)
    python = str(script.parent / "python")
    assert cli_command(str(script), python, tmp_path, str(script)) == "model-foundry"


def test_python_dash_m_prints_the_script_beside_the_interpreter_or_the_same_form(
    tmp_path: Path,
) -> None:
    script = venv(tmp_path / "project")
    main = str(tmp_path / "src" / "model_foundry" / "cli" / "__main__.py")
    assert cli_command(main, str(script.parent / "python"), tmp_path, None) == (
        "project/.venv/bin/model-foundry"
    )
    bare = tmp_path / "bare python dir" / "python3"
    assert cli_command(main, str(bare), tmp_path, None) == (f"'{bare}' -m model_foundry.cli")
