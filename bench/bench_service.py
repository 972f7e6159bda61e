"""Throughput and latency of the web service's stateless endpoints under concurrent load.

Starts the service the way the README does (`canasta-scan serve`, the bundled model,
SQLite in a throw-away data directory, loopback only), waits for `/healthz`, then sends
a fixed number of requests to `POST /api/score` and `POST /api/scan` at each
concurrency level and prints requests per second and p50/p95 latency. Only 127.0.0.1 is
ever contacted; `--url` may point at an already running local server instead.

    .venv/bin/python bench/bench_service.py                      # start, measure, stop
    .venv/bin/python bench/bench_service.py --requests 40 --concurrency 1,2,4 \
        --photo path/to/table.jpg --json build/bench_service.json

If the model is not bundled yet, `/healthz` stays 503: the score endpoint is measured
and the scan endpoint is reported as unavailable.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

import httpx

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = {
    "rules": {"players": 4, "target": 5000},
    "teams": [
        {"name": "Us", "total_before": 1200,
         "melds": [["K"] * 7, ["A", "A", "2"], ["3S", "3S", "3C"]],
         "red_threes": 2, "went_out": True, "concealed": False, "hand": []},
        {"name": "Them", "total_before": 950, "melds": [["9", "9", "JK"]],
         "red_threes": 1, "went_out": False, "concealed": False, "hand": ["Q", "4", "2"]},
    ],
}
MAX_REQUESTS = 2000  # a benchmark, not a load generator: keep every run bounded


def default_photo() -> tuple[bytes, str]:
    """A phone-sized photo of a Canasta table: a rendered test scene (`python -m
    datasets.build`) when there is one, else a real photo of cards, else a generated one."""
    scenes = sorted((ROOT / "build" / "scenes" / "test").glob("scene_*.jpg"))
    real = sorted(Path("/work/shared/data/real-photos").rglob("*.JPG"))
    for found in (scenes, real):
        if found:
            return found[0].read_bytes(), str(found[0])
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    rgb = np.full((3024, 4032, 3), (30, 110, 50), np.uint8)
    for _ in range(40):  # white card-sized rectangles, so the JPEG is not trivially small
        x, y = rng.integers(0, 3700), rng.integers(0, 2600)
        rgb[y:y + 400, x:x + 280] = 245
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, format="JPEG", quality=90)
    return out.getvalue(), "generated 4032x3024 JPEG"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, data_dir: Path, model_dir: Path | None) -> subprocess.Popen:
    """`canasta-scan serve` as the README runs it (scripts/serve.sh execs exactly this)."""
    exe = ROOT / ".venv" / "bin" / "canasta-scan"
    cmd = [str(exe) if exe.exists() else shutil.which("canasta-scan") or "canasta-scan",
           "serve", "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "CANASTA_DATA_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    if model_dir is not None:
        env["CANASTA_MODEL_DIR"] = str(model_dir.resolve())
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_ready(url: str, server: subprocess.Popen | None, timeout: float) -> tuple[bool, str]:
    """(model loaded, status text) once the server answers /healthz, or on timeout."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if server is not None and server.poll() is not None:
            err = server.stderr.read().decode(errors="replace") if server.stderr else ""
            raise SystemExit(f"the server exited with {server.returncode}:\n{err[-2000:]}")
        try:
            r = httpx.get(url + "/healthz", timeout=2)
            last = f"{r.status_code} {r.text[:200]}"
            if r.status_code == 200:
                return True, last
            if r.json().get("status") == "error":
                return False, last
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.25)
    return False, last


def run_load(url: str, endpoint: str, requests: int, concurrency: int,
             photo: bytes) -> dict:
    """Send `requests` requests from `concurrency` threads; latency per request, wall rps."""
    latencies: list[float] = []
    failures: dict[str, int] = {}

    def one(client: httpx.Client) -> None:
        start = time.perf_counter()
        if endpoint == "score":
            r = client.post(url + "/api/score", json=LAYOUT)
        else:
            r = client.post(url + "/api/scan",
                            files={"photo": ("table.jpg", photo, "image/jpeg")})
        elapsed = time.perf_counter() - start
        if r.status_code == 200:
            latencies.append(elapsed)
        else:
            failures[str(r.status_code)] = failures.get(str(r.status_code), 0) + 1

    clients = [httpx.Client(timeout=300) for _ in range(concurrency)]
    try:
        for c in clients[:1]:  # warm-up: first request loads lazily imported code
            one(c)
        latencies.clear()
        failures.clear()
        start = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            for i in range(requests):
                pool.submit(one, clients[i % concurrency])
        wall = time.perf_counter() - start
    finally:
        for c in clients:
            c.close()
    ok = sorted(latencies)

    def pct(p: float) -> float | None:
        return round(ok[min(len(ok) - 1, int(p * len(ok)))] * 1000, 1) if ok else None

    return {"endpoint": f"/api/{endpoint}", "concurrency": concurrency, "requests": requests,
            "ok": len(ok), "failures": failures,
            "rps": round(len(ok) / wall, 2) if wall > 0 else None,
            "p50_ms": pct(0.50), "p95_ms": pct(0.95),
            "mean_ms": round(statistics.fmean(ok) * 1000, 1) if ok else None}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}: {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="an already running local server (http://127.0.0.1:PORT); "
                    "default: start one with `canasta-scan serve`")
    ap.add_argument("--requests", type=int, default=40, help="requests per endpoint and level")
    ap.add_argument("--score-requests", type=int, default=400,
                    help="requests per level for /api/score (it is fast)")
    ap.add_argument("--concurrency", default="1,4", help="comma-separated thread counts")
    ap.add_argument("--endpoints", default="score,scan")
    ap.add_argument("--photo", type=Path, help="photo for /api/scan (default: a real one)")
    ap.add_argument("--ready-timeout", type=float, default=180)
    ap.add_argument("--model-dir", type=Path, help="serve this model instead of the bundled "
                    "one (CANASTA_MODEL_DIR), e.g. a candidate before it is bundled")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    if not 0 < args.requests <= MAX_REQUESTS or not 0 < args.score_requests <= MAX_REQUESTS:
        ap.error(f"requests must be between 1 and {MAX_REQUESTS}")
    levels = [int(c) for c in args.concurrency.split(",")]
    if not all(0 < c <= 64 for c in levels):
        ap.error("concurrency levels must be between 1 and 64")

    if args.url:
        host = urlparse(args.url).hostname
        if host not in ("127.0.0.1", "localhost", "::1"):
            ap.error("only a server on this machine (127.0.0.1) is benchmarked")
    photo, photo_name = ((args.photo.read_bytes(), str(args.photo)) if args.photo
                         else default_photo())

    server = None
    data_dir = None
    url = args.url.rstrip("/") if args.url else None
    try:
        if url is None:
            data_dir = Path(tempfile.mkdtemp(prefix="canasta-bench-"))
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            started = time.perf_counter()
            server = start_server(port, data_dir, args.model_dir)
        model_ready, health = wait_ready(url, server, args.ready_timeout)
        if server is not None:
            print(f"server up and /healthz answered in {time.perf_counter() - started:.1f} s")
        print(f"machine: {machine()}")
        if args.model_dir:
            print(f"model: {args.model_dir}")
        print(f"/healthz: {health}")
        print(f"photo for /api/scan: {photo_name} ({len(photo) / 2**20:.1f} MB)")
        results = []
        for endpoint in args.endpoints.split(","):
            if endpoint == "scan" and not model_ready:
                print("/api/scan: skipped, the detector model is not loaded (see /healthz)")
                continue
            n = args.score_requests if endpoint == "score" else args.requests
            for level in levels:
                res = run_load(url, endpoint, n, level, photo)
                results.append(res)
                print(f"{res['endpoint']:<11} concurrency {level:>2}: {res['ok']:>4}/{n} ok  "
                      f"{res['rps']} req/s  p50 {res['p50_ms']} ms  p95 {res['p95_ms']} ms"
                      + (f"  failures {res['failures']}" if res["failures"] else ""))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps({"machine": machine(), "photo": photo_name,
                                             "health": health, "results": results}, indent=2))
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
        if data_dir is not None:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
