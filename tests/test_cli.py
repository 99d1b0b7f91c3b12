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


def test_daemonize_yes_is_announced_and_the_server_stays_in_the_foreground():
    proc, port, lines = start("--port", "0", "--daemonize", "yes")
    log = "".join(lines)
    assert re.search(r"^\d+:M .* # daemonize yes is not supported: streamd stays in the "
                     r"foreground", log, re.M), log
    client = redis.Redis(port=port)
    assert client.config_get("daemonize") == {"daemonize": "yes"}
    client.close()
    assert stop(proc)[0] == 0


def test_loglevel_verbose_logs_connections_as_redis_does():
    proc, port, _ = start("--port", "0", "--loglevel", "verbose")
    client = redis.Redis(port=port, client_name="worker-1")
    assert client.ping()
    client.close()  # the peer closes: Redis logs its CLIENT LIST line
    killer = redis.Redis(port=port)
    killer.client_kill_filter(_type="normal", skipme=True)  # closed by the server: no line
    code, out = stop(proc)
    assert code == 0
    accepted = re.findall(r"^\d+:M .* - Accepted 127\.0\.0\.1:(\d+)$", out, re.M)
    closed = re.findall(r"^\d+:M .* - Client closed connection id=\d+ addr=127\.0\.0\.1:(\d+) "
                        r"laddr=127\.0\.0\.1:\d+ .* name=(\S*) .* cmd=(\S+) ", out, re.M)
    assert len(accepted) == 2, out
    assert closed == [(accepted[0], "worker-1", "ping")], out


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


def _fatal(lineno, line, reason):
    return (f"\n*** FATAL CONFIG FILE ERROR (Redis 8.8.0) ***\n"
            f"Reading the configuration file, at line {lineno}\n>>> '{line}'\n{reason}\n")


# The command line is read as redis-server reads it: the options become config lines after
# the file's (quoted, one line each, after an empty separator line), and the first bad line
# ends the start with Redis's report and exit code 1.
@pytest.mark.parametrize("args, stderr", [
    (["--no-such-option", "1"],
     _fatal(2, 'no-such-option "1"', "Bad directive or wrong number of arguments")),
    (["--port", "notaport"],
     _fatal(2, 'port "notaport"', "argument couldn't be parsed into an integer")),
    (["--port", "70000"],
     _fatal(2, 'port "70000"', "argument must be between 0 and 65535 inclusive")),
    (["--port"], _fatal(2, "port", "wrong number of arguments")),
    (["--port", "1", "2"], _fatal(2, 'port "1" "2"', "wrong number of arguments")),
    (["--hz", "0", "--port", "x"],
     _fatal(3, 'port "x"', "argument couldn't be parsed into an integer")),
    (["--save", "--port", "x"],
     _fatal(3, 'port "x"', "argument couldn't be parsed into an integer")),
    (["--port", "--save"],
     _fatal(2, 'port "--save"', "argument couldn't be parsed into an integer")),
    (["--loglevel", "loud"], _fatal(2, 'loglevel "loud"', "argument(s) must be one of the "
                                    "following: debug, verbose, notice, warning, nothing")),
    (["stray"], "Fatal error, can't open config file 'stray': No such file or directory\n"),
])
def test_invalid_options_fail_at_start(args, stderr):
    proc = subprocess.run([sys.executable, "-m", "streamd", *args], capture_output=True,
                          text=True, timeout=20)
    assert (proc.returncode, proc.stderr) == (1, stderr)


@pytest.mark.parametrize("text, args, lineno, line, reason", [
    ("port 0\nhz 10 11\n", [], 2, "hz 10 11", "wrong number of arguments"),
    ("# c\n\n   nosuch 1  \n", [], 3, "nosuch 1", "Bad directive or wrong number of arguments"),
    ('requirepass "open\n', [], 1, 'requirepass "open',
     "Unbalanced quotes in configuration line"),
    ("port 0", ["--stray-key", "x"], 2, 'stray-key "x"',
     "Bad directive or wrong number of arguments"),
    ("port 0\n", ["--hz", "x"], 3, 'hz "x"', "argument couldn't be parsed into an integer"),
])
def test_bad_config_file_lines_are_fatal(tmp_path, text, args, lineno, line, reason):
    conf = tmp_path / "bad.conf"
    conf.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "streamd", str(conf), *args],
                          capture_output=True, text=True, timeout=20)
    assert (proc.returncode, proc.stderr) == (1, _fatal(lineno, line, reason))


def test_config_file_include_save_lines_and_old_names(tmp_path):
    (tmp_path / "part.conf").write_text("timeout 7\n")
    conf = tmp_path / "main.conf"
    conf.write_text(f"include {tmp_path / 'part.conf'}\nsave 3600 1\nsave \"300 100\"\n"
                    "list-max-ziplist-entries 5\nslave-read-only no\nport 0\n")
    proc, port, _ = start(str(conf))
    try:
        client = redis.Redis(port=port)
        got = client.config_get("*")
        assert (got["timeout"], got["save"], got["replica-read-only"]) == (
            "7", "3600 1 300 100", "no")
        client.close()
    finally:
        stop(proc)


def test_config_rewrite_keeps_the_file_and_edits_in_place(tmp_path):
    conf = tmp_path / "streamd.conf"
    conf.write_text("# top comment\nport 0\n   # indented comment\nhz 20\n"
                    f"include {os.devnull}\nslave-read-only yes\ntimeout 5\ntimeout 6\n"
                    'requirepass "pw"\n')
    proc, port, _ = start(str(conf))
    try:
        client = redis.Redis(port=port, password="pw")
        client.config_set("hz", "30")
        client.config_set("replica-read-only", "no")
        client.config_set("notify-keyspace-events", "KEA")
        client.config_set("stream-node-max-bytes", "8kb")
        client.config_set("requirepass", "")
        assert client.execute_command("CONFIG", "REWRITE") == b"OK"
        first = conf.read_text()
        assert first == (
            "# top comment\nport 0\n# indented comment\nhz 30\n"
            f"include {os.devnull}\nreplica-read-only no\ntimeout 6\n\n"
            "# Generated by CONFIG REWRITE\nstream-node-max-bytes 8kb\nsave \"\"\n"
            f'dir "{os.getcwd()}"\nnotify-keyspace-events "AKE"\n'
            # Redis 7.0 writes this one even at its default.
            "latency-tracking-info-percentiles 50 99 99.9\n")
        client.config_set("timeout", "0")
        client.config_set("hz", "11")
        assert client.execute_command("CONFIG", "REWRITE") == b"OK"
        assert conf.read_text() == first.replace("hz 30", "hz 11").replace(
            "timeout 6", "timeout 0") + "\n"
        client.close()
    finally:
        stop(proc)


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
