"""The streamd command line: options, config file, logging, signals and SHUTDOWN."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
import redis

pytestmark = pytest.mark.streamd_only


def start(*args, cwd=None):
    proc = subprocess.Popen([sys.executable, "-m", "streamd", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=cwd)
    lines = []
    deadline = time.time() + 20
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"Ready to accept connections tcp on port (\d+)", line)
        if m:
            return proc, int(m.group(1)), lines
    proc.kill()
    raise AssertionError("server did not start:\n" + "".join(lines))


def stop(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=10)
    return proc.returncode, out


def test_port_zero_logs_chosen_port_and_sigterm_is_graceful():
    proc, port, lines = start("--port", "0")
    log = "".join(lines)
    assert re.search(r"^\d+:M \d{2} \w{3} \d{4} [\d:.]+ \* ", log, re.M), log
    assert f"pid={proc.pid}" in log and "version=" in log
    client = redis.Redis(port=port)
    assert client.ping()
    client.close()
    code, out = stop(proc)
    assert code == 0
    assert "shutdown (SIGTERM)" in out and "bye bye" in out


def test_sigint_is_graceful():
    proc, port, _ = start("--port", "0")
    code, out = stop(proc, signal.SIGINT)
    assert code == 0 and "SIGINT" in out


def test_shutdown_command():
    proc, port, _ = start("--port", "0")
    client = redis.Redis(port=port)
    try:
        client.shutdown()
    except redis.ConnectionError:
        pass
    assert proc.wait(timeout=10) == 0


def test_config_file_and_overrides(tmp_path):
    conf = tmp_path / "streamd.conf"
    conf.write_text("# comment\nport 0\nrequirepass \"pw one\"\ndatabases 4\n"
                    "stream-node-max-entries 7\n")
    proc, port, _ = start(str(conf), "--stream-node-max-entries", "9")
    try:
        client = redis.Redis(port=port, password="pw one")
        assert client.config_get("databases")["databases"] == "4"
        assert client.config_get("stream-node-max-entries")["stream-node-max-entries"] == "9"
        with pytest.raises(redis.ResponseError, match="DB index is out of range"):
            client.execute_command("SELECT", "4")
        client.config_set("stream-node-max-entries", "11")
        assert client.execute_command("CONFIG", "REWRITE") == b"OK"
        assert "stream-node-max-entries 11" in conf.read_text()
        client.close()
    finally:
        stop(proc)


@pytest.mark.parametrize("args,message", [
    (["--no-such-option", "1"], "no-such-option"),
    (["--port", "notaport"], "port"),
    (["--port", "70000"], "port"),
    (["--loglevel", "loud"], "loglevel"),
    (["stray"], "can't open config file"),
    (["--port"], "port"),
])
def test_invalid_options_fail_at_start(args, message):
    proc = subprocess.run([sys.executable, "-m", "streamd", *args], capture_output=True,
                          text=True, timeout=20)
    assert proc.returncode != 0
    assert message in proc.stderr


def test_version_flag():
    out = subprocess.run([sys.executable, "-m", "streamd", "--version"], capture_output=True,
                         text=True, timeout=20)
    assert out.returncode == 0 and "redis-api=8.8.0" in out.stdout


def test_console_script_is_declared():
    import tomllib

    root = os.path.dirname(os.path.dirname(__file__))
    with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
        data = tomllib.load(fh)
    assert data["project"]["scripts"]["streamd"] == "streamd.cli:main"
