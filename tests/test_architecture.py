"""The code's layout tells the architecture: these checks keep it honest.

- imports point one way: protocol, store and idmp know nothing of commands or the server;
  commands never import the server; only the CLI (and tests) import the server. The
  neutral module that store and idmp share (dueheap) imports nothing of streamd, so
  neither sibling comes to depend on the other through them. config reads the keyspace
  event letters from store, so store never imports config. The Lua bridge (scripting)
  knows only protocol's reply values; commands drive it, nothing below imports it.
  The RDB codec (rdb) turns store values into Redis's serialized form and back: it knows
  the store, and only commands use it.
- every command-table row is complete, and every handler's docstring opens with its
  syntax line, so COMMAND DOCS and the code say the same thing.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

from streamd.commands import TABLE, load_commands

ROOT = pathlib.Path(__file__).resolve().parent.parent / "streamd"

FORBIDDEN = {
    "protocol": {"commands", "server", "store", "idmp", "spark", "cli", "scripting", "rdb"},
    "store": {"commands", "server", "protocol", "spark", "cli", "config", "scripting", "rdb"},
    "idmp": {"commands", "server", "protocol", "spark", "cli", "scripting", "rdb"},
    "rdb": {"commands", "server", "protocol", "spark", "cli", "config", "scripting"},
    "commands": {"server", "spark", "cli"},
    "server": {"spark", "cli", "scripting"},
    "spark": {"server", "commands", "store", "idmp", "cli", "scripting", "rdb"},
    "config": {"idmp", "commands", "server", "spark", "cli", "scripting"},
    "dueheap": {"protocol", "store", "idmp", "commands", "server", "spark", "cli", "config",
                "scripting", "rdb"},
    # The Lua bridge knows replies (protocol) only: commands hand it what it runs.
    "scripting": {"commands", "server", "store", "idmp", "spark", "cli", "config", "rdb"},
    # Entry points for other programs: embed starts a server, the pytest plugin uses embed.
    "embed": {"spark", "cli", "pytest_plugin"},
    "pytest_plugin": {"server", "commands", "store", "idmp", "protocol", "spark", "cli",
                      "scripting"},
}
# Nothing inside streamd depends on its entry points for other programs.
for _inner in ("protocol", "store", "idmp", "commands", "server", "spark", "config", "dueheap",
               "scripting", "cli", "rdb"):
    FORBIDDEN.setdefault(_inner, set()).update({"embed", "pytest_plugin"})


def _streamd_imports(path: pathlib.Path) -> set[str]:
    """Top-level streamd packages a module imports (absolute or relative)."""
    tree = ast.parse(path.read_text())
    rel = path.relative_to(ROOT).parts
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-1])[: len(rel) - node.level]
                parts = base + (node.module.split(".") if node.module else [])
                if parts:
                    out.add(parts[0])
                else:
                    out.update(a.name.split(".")[0] for a in node.names)
            elif node.module and node.module.startswith("streamd."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("streamd."):
                    out.add(a.name.split(".")[1])
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package):
    module = ROOT / f"{package}.py"
    paths = [module] if module.is_file() else sorted((ROOT / package).rglob("*.py"))
    assert paths, f"no code found for {package}"
    bad = []
    for path in paths:
        wrong = _streamd_imports(path) & FORBIDDEN[package]
        if wrong:
            bad.append(f"{path.relative_to(ROOT)} imports {sorted(wrong)}")
    assert not bad, "\n".join(bad)


def _all_rows():
    load_commands()
    for cmd in TABLE.values():
        yield cmd
        yield from cmd.subcommands.values()


def test_every_row_is_documented():
    missing = [c.name for c in _all_rows() if not (c.summary and c.since and c.group)]
    assert not missing, missing


def test_handler_docstrings_open_with_syntax_line():
    bad = []
    for cmd in _all_rows():
        if cmd.handler is None:
            continue
        doc = (cmd.handler.__doc__ or "").strip().splitlines()
        first = doc[0] if doc else ""
        words = cmd.name.upper().split("|")
        if not first.upper().startswith(" ".join(words)):
            bad.append(f"{cmd.name}: {first!r}")
    assert not bad, "\n".join(bad)


def test_key_positions_are_consistent():
    for cmd in _all_rows():
        if cmd.first_key:
            assert cmd.step >= 1, cmd.name
            assert cmd.last_key == -1 or cmd.last_key >= cmd.first_key, cmd.name
