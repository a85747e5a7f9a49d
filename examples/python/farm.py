"""An agent farm's driver: many commands over a few connections to one `paddock serve`,
streamed, with throughput and latency (median, p99) at the end. Also the daemon's soak.

    python3 examples/python/farm.py --connect unix:/tmp/paddock.sock \
        --commands 1000 --connections 8 --concurrency 64 -- /bin/echo hello
"""

import argparse
import asyncio
import statistics
import sys
import time

sys.path.insert(0, __import__("os").path.dirname(__file__))
from paddock_client import PaddockClient, PaddockError  # noqa: E402


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--connect", required=True)
    p.add_argument("--token", help="for tcp: (or PADDOCK_SERVE_TOKEN)")
    p.add_argument("--commands", type=int, default=1000)
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("argv", nargs="+")
    a = p.parse_args()

    try:
        clients = [await PaddockClient.connect(a.connect, token=a.token)
                   for _ in range(a.connections)]
    except (PaddockError, OSError) as e:
        print(f"farm: cannot connect to {a.connect}: {e}", file=sys.stderr)
        return 1
    gate = asyncio.Semaphore(a.concurrency)
    latencies, failures, streamed = [], [], [0]

    async def one(i):
        async with gate:
            start = time.perf_counter()
            try:
                r = await clients[i % len(clients)].run(
                    a.argv, on_output=lambda s, d: streamed.__setitem__(0, streamed[0] + len(d)))
                if r.exit_code != 0:
                    failures.append(f"#{i}: exit {r.exit_code}")
            except PaddockError as e:
                failures.append(f"#{i}: {e}")
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(a.commands)))
    took = time.perf_counter() - start
    for c in clients:
        await c.close()
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"{a.commands} commands over {a.connections} connections, concurrency {a.concurrency}: "
          f"{a.commands / took:.0f}/s; latency median {statistics.median(latencies) * 1000:.2f} ms, "
          f"p99 {p99 * 1000:.2f} ms; {streamed[0]} bytes streamed; {len(failures)} failed")
    for f in failures[:10]:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
