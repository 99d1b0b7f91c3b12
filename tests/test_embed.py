"""The public ways to run streamd inside a Python program: ``streamd.embed`` and the pytest
plugin's fixtures (``streamd.pytest_plugin``)."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys

import pytest
import redis

from streamd.embed import EmbeddedServer

pytest_plugins = ["pytester"]


@pytest.mark.streamd_only
def test_an_embedded_server_serves_until_stopped():
    with EmbeddedServer(stream_node_max_entries=7) as srv:
        assert srv.port > 0
        assert srv.url == f"redis://127.0.0.1:{srv.port}/0"
        r = redis.Redis.from_url(srv.url)
        assert r.ping() is True
        assert r.config_get("stream-node-max-entries") == {"stream-node-max-entries": "7"}
        r.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()


@pytest.mark.streamd_only
def test_an_embedded_servers_url_carries_its_password():
    with EmbeddedServer(requirepass="s3cret") as srv:
        assert srv.url == f"redis://:s3cret@127.0.0.1:{srv.port}/0"
        assert redis.Redis.from_url(srv.url).ping() is True
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=srv.port).ping()


@pytest.mark.streamd_only
def test_a_server_that_cannot_listen_raises_at_start():
    with EmbeddedServer() as first:
        with pytest.raises(OSError):
            EmbeddedServer(port=first.port).start()


@pytest.mark.streamd_only
def test_the_pytest_plugin_is_registered_with_pytest():
    from importlib.metadata import entry_points

    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("streamd") == "streamd.pytest_plugin"


@pytest.mark.streamd_only
def test_the_pytest_plugin_gives_each_test_empty_databases(pytester, monkeypatch):
    # Loaded by name, with entry points off: the inner run does not depend on which
    # plugins this environment has installed.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile("""
        import redis

        def test_first(streamd_url, streamd_server):
            r = redis.Redis.from_url(streamd_url)
            r.xadd("orders", {"item": "book"})
            r.select(3)
            r.set("checkpoint", "1-0")
            assert streamd_server.port > 0

        def test_second(streamd_url):
            r = redis.Redis.from_url(streamd_url)
            assert r.dbsize() == 0
            r.select(3)
            assert r.dbsize() == 0
    """)
    result = pytester.runpytest_inprocess("-p", "streamd.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


@pytest.mark.streamd_only
def test_an_embedded_server_prints_nothing_when_the_program_has_no_logging(tmp_path):
    # A program that never configured logging: a normal start and stop leaves its stderr
    # clean (the shutdown lines go to the "streamd" logger, for programs that want them).
    script = tmp_path / "embed_quiet.py"
    script.write_text(
        "import redis\n"
        "from streamd.embed import EmbeddedServer\n"
        "with EmbeddedServer() as srv:\n"
        "    redis.Redis.from_url(srv.url).xadd('orders', {'item': 'book'})\n"
        "print('done')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "done\n", "")


@pytest.mark.streamd_only
def test_an_embedded_servers_log_reaches_the_programs_handlers(caplog):
    with caplog.at_level(logging.INFO, logger="streamd"):
        with EmbeddedServer():
            pass
    assert "User requested shutdown (embedded stop)..." in caplog.messages


@pytest.mark.streamd_only
@pytest.mark.parametrize("bind", ["127.0.0.1 -::1", "-192.0.2.1 127.0.0.1"])
def test_optional_bind_addresses_are_skipped_when_missing(bind):
    # redis.conf's own sample line is "bind 127.0.0.1 -::1": a "-" address that cannot be
    # bound (192.0.2.1 is a documentation address, on no interface) is left out.
    with EmbeddedServer(bind=bind) as srv:
        assert redis.Redis(host="127.0.0.1", port=srv.port).ping() is True


@pytest.mark.streamd_only
@pytest.mark.parametrize("bind", ["192.0.2.1", "-192.0.2.1"])
def test_a_bind_with_no_usable_address_fails_the_start(bind):
    with pytest.raises(OSError):
        EmbeddedServer(bind=bind).start()


@pytest.mark.streamd_only
def test_bind_words_as_redis_reads_them():
    from streamd.server.server import listen_addresses

    assert listen_addresses("* -::*") == [("0.0.0.0", False), ("::", True)]
    assert listen_addresses("127.0.0.1 -::1") == [("127.0.0.1", False), ("::1", True)]
