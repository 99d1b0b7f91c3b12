"""Real clients against the server: redis-py asyncio, redis-cli, redis-benchmark."""

from __future__ import annotations

import asyncio
import shutil
import subprocess

import pytest
import redis.asyncio as aioredis


def test_asyncio_client_pipeline_and_resp3(target, r):
    async def main():
        for protocol in (2, 3):
            client = aioredis.Redis(host=target.host, port=target.port, protocol=protocol)
            async with client.pipeline(transaction=False) as pipe:
                for i in range(200):
                    pipe.echo(f"m{i}")
                replies = await pipe.execute()
            assert replies == [f"m{i}".encode() for i in range(200)]
            async with client.pipeline(transaction=True) as pipe:
                pipe.set("k", "v").get("k")
                assert await pipe.execute() == [True, b"v"]
            await client.aclose()

    asyncio.run(main())


def test_many_concurrent_asyncio_clients(target, r):
    async def worker(n):
        client = aioredis.Redis(host=target.host, port=target.port)
        for i in range(20):
            assert await client.echo(f"{n}-{i}") == f"{n}-{i}".encode()
        await client.aclose()

    async def main():
        await asyncio.gather(*(worker(n) for n in range(50)))

    asyncio.run(main())


needs_cli = pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")


@needs_cli
def test_redis_cli_command_docs(target, r):
    out = subprocess.run(["redis-cli", "-h", target.host, "-p", str(target.port),
                          "COMMAND", "DOCS", "XADD"], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0
    assert "summary" in out.stdout and "arguments" in out.stdout and "stream" in out.stdout


@needs_cli
def test_redis_cli_interactive_session(target, r):
    # redis-cli reads commands from stdin when it is not a terminal, as in a piped session.
    script = "SET greeting hello\nGET greeting\nPING\nNOSUCH x\n"
    out = subprocess.run(["redis-cli", "-h", target.host, "-p", str(target.port)],
                         input=script, capture_output=True, text=True, timeout=20)
    assert out.stdout.split("\n")[:4] == [
        "OK", "hello", "PONG",
        "ERR unknown command 'NOSUCH', with args beginning with: 'x' "]


@pytest.mark.skipif(shutil.which("redis-benchmark") is None, reason="redis-benchmark not installed")
def test_redis_benchmark_runs_without_errors(target, r):
    out = subprocess.run(["redis-benchmark", "-h", target.host, "-p", str(target.port), "-q",
                          "-t", "ping_mbulk,set,get", "-c", "50", "-P", "16", "-n", "20000"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout.replace("\r", "\n")
    for name in ("PING_MBULK", "SET", "GET"):
        assert f"{name}: " in text and "requests per second" in text
    assert "ERR" not in text and "error" not in out.stderr.lower()
