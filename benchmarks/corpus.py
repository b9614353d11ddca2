"""Scoring a corpus: one dataset of shards through the three executors, the driver's memory, S3 against disk.

    python benchmarks/corpus.py throughput [--rows 1000000] [--shards 100] [--formats jsonl.gz parquet]
                                           [--executors merged one dp2 ray]
    python benchmarks/corpus.py driver [--shards 10 1000] [--rows-per-shard 1000] [--executors ray dp2 one]
    python benchmarks/corpus.py storage [--rows 100000] [--shards 20] [--executors one dp2]

Every run judges the corpus with ``graded/truthfulness`` (generation) on a scripted backend whose answer is
chosen from the prompt alone (:class:`ContentAnswers`), so that any executor gives the same rows, and is its
own child process (the driver), so that its peak RSS (``VmHWM``) and CPU seconds are its own:

* ``merged``: one process over the same rows merged into one JSONL file (a results file run);
* ``one``: one process over the shards (a dataset run, :class:`~jurist.engine.corpus.CorpusRun`);
* ``dp2``: the same on two data-parallel worker processes (``--data-parallel 2``);
* ``ray``: the same on a Ray cluster of two worker nodes of one CPU each, started here on 127.0.0.1
  (``ray.cluster_utils.Cluster``; the head node holds no actor), two actors (``--ray ADDRESS
  --data-parallel 2``). The cluster runs only while the Ray runs do.

``throughput``: rows/s of each executor on ``--rows`` rows in ``--shards`` shards per format, over the whole
wall time (``rows_per_s``) and, as the run's summary counts it, without starting the workers or actors and
loading their models (``judging_rows_per_s``); its overhead per row against ``one`` (wall seconds per row,
less one's, in microseconds; negative: faster), and whether its rows equal ``one``'s (and ``merged``'s).

``driver``: the driver's peak RSS at ``--shards`` shards of ``--rows-per-shard`` rows each (the corpus grows
with the shards). ``storage``: the same corpus read from and written to local disk, then moto's S3 server on
127.0.0.1 (a Python server, its own process): the cost of object storage through pyarrow's S3 filesystem,
with a slow server. Results go to ``benchmarks/results/corpus_<command>.json`` with the command that made
them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT, header, write
from pipeline_modes import POINTWISE_ANSWERS

JUDGE = "graded/truthfulness"
HERE = Path(__file__).resolve().parent
SRC = ROOT / "src"


@dataclass(frozen=True)
class ContentAnswers:
    """A picklable backend factory: the scripted backend answering each prompt by a hash of its text, so
    that the answer does not depend on which worker, actor or batch the row goes to."""

    def __call__(self, config: Any) -> Any:
        from jurist import ScriptedBackend
        from jurist.models.default_model import DEFAULT_MODEL_LABEL

        def respond(request: Any) -> str:
            text = request.messages[-1].content.encode()
            return POINTWISE_ANSWERS[zlib.crc32(text) % len(POINTWISE_ANSWERS)]

        return ScriptedBackend(respond, record=False, model_id=config.model.model_name or DEFAULT_MODEL_LABEL)


def row(i: int) -> dict[str, Any]:
    request = f"Question {i}: explain why the sky looks blue during the day and red at sunset."
    response = f"Answer {i}: sunlight scatters off air molecules; " + "blue light scatters most. " * 8
    return {"id": f"r{i:08d}", "request": request, "response": response}


def make_corpus(root: str, rows: int, shards: int, fmt: str) -> None:
    """``rows`` rows in ``shards`` shards of ``fmt`` (``jsonl.gz`` or ``parquet``) under ``root`` (a folder or
    an ``s3://`` prefix)."""
    import gzip

    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    fs, base = pafs.FileSystem.from_uri(root) if "://" in root else (pafs.LocalFileSystem(), root)
    if "://" not in root:
        Path(root).mkdir(parents=True, exist_ok=True)
    per = -(-rows // shards)
    for number in range(shards):
        batch = [row(i) for i in range(number * per, min(rows, (number + 1) * per))]
        path = f"{base.rstrip('/')}/part-{number:05d}.{fmt}"
        with fs.open_output_stream(path, compression=None) as sink:
            if fmt == "parquet":
                pq.write_table(pa.Table.from_pylist(batch), sink, row_group_size=2000)
            else:
                text = "".join(json.dumps(r) + "\n" for r in batch).encode()
                sink.write(gzip.compress(text, compresslevel=1, mtime=0))


def merged_file(path: Path, rows: int) -> None:
    with path.open("w") as handle:
        for i in range(rows):
            handle.write(json.dumps(row(i)) + "\n")


def child(job: dict[str, Any]) -> None:
    """One run, in this process (the driver); prints its figures as JSON."""
    from jurist.config.loading import load_judge_config
    from jurist.engine.spec import RunOptions, RunSpec, Selection
    from jurist.launch import Placement, launch

    placement = Placement(
        data_parallel=2 if job["executor"] in ("dp2", "ray") else None,
        ray=job.get("address") if job["executor"] == "ray" else None,
    )
    spec = RunSpec((load_judge_config(JUDGE),), Selection(job["input"]), RunOptions(chunk_size=1024))
    cpu0, wall0 = _cpu(), time.perf_counter()
    launched = launch(spec, placement, output=job["output"], backend_factory=ContentAnswers())
    try:
        summary = launched.run(job["output"])
    finally:
        launched.close()
    wall = time.perf_counter() - wall0
    statuses = next(iter(summary.judges.values())).statuses
    figures = {
        "rows": summary.rows,
        "ok": statuses.get("ok", 0),
        "units": summary.units,
        "wall_s": round(wall, 2),
        "load_s": round(summary.load_seconds, 2),
        "rows_per_s": round(summary.rows / wall),
        "judging_rows_per_s": round(summary.rows_per_second),
        "driver_cpu_s": round(_cpu() - cpu0, 2),
        "driver_peak_rss_mib": peak_rss_mib(),
    }
    print(json.dumps(figures))


def peak_rss_mib() -> float:
    """This process's peak resident memory (``VmHWM``: its own, where ``ru_maxrss`` would also hold the
    parent's at the fork that started it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(job: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    """A run in a child process; its figures, with the box's load average before and after."""
    load = os.getloadavg()[0]
    command = [sys.executable, __file__, "--child", json.dumps(job)]
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})}
    )
    if done.returncode != 0:
        raise RuntimeError(f"{job['executor']} on {job['input']} failed:\n{done.stderr[-4000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["load_1min_before_after"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    return figures


@contextmanager
def ray_cluster(env: dict[str, str] | None = None) -> Iterator[str]:
    """A head node without CPUs for actors and two worker nodes of one CPU each, on 127.0.0.1."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray.cluster_utils import Cluster

    node_env = {"PYTHONPATH": os.pathsep.join([str(HERE), str(SRC)]), **(env or {})}
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=1, object_store_memory=200 * 2**20, env_vars=node_env)
    try:
        yield str(cluster.address)
    finally:
        cluster.shutdown()


def same_rows(first: str, second: str, env: dict[str, str] | None = None) -> bool:
    """Whether two outputs (results files or datasets) hold the same rows, in the same order."""
    before = dict(os.environ)
    os.environ.update(env or {})
    try:
        from jurist.io.results import ResultTable

        return bool(ResultTable.open(first).table.equals(ResultTable.open(second).table))
    finally:
        os.environ.clear()
        os.environ.update(before)


def throughput(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    runs: dict[str, Any] = {}
    merged = scratch / "merged.jsonl"
    if "merged" in args.executors:
        merged_file(merged, args.rows)
    for fmt in args.formats:
        corpus = scratch / f"corpus-{fmt}"
        make_corpus(str(corpus), args.rows, args.shards, fmt)
        found: dict[str, Any] = {}
        outputs = {e: f"{scratch}/out-{fmt.replace('.', '_')}-{e}/" for e in args.executors}
        outputs["merged"] = str(scratch / "merged.parquet")
        for executor in [e for e in args.executors if e != "ray"]:
            source = str(merged) if executor == "merged" else str(corpus)
            if executor == "merged" and fmt != args.formats[0]:
                continue
            found[executor] = measure({"executor": executor, "input": source, "output": outputs[executor]})
            print(fmt, executor, found[executor], flush=True)
        if "ray" in args.executors:
            with ray_cluster() as address:
                job = {"executor": "ray", "input": str(corpus), "output": outputs["ray"], "address": address}
                found["ray"] = measure(job)
            print(fmt, "ray", found["ray"], flush=True)
        base = found.get("one")
        for executor, figures in found.items():
            if base is not None and executor != "one":
                per_row = figures["wall_s"] / figures["rows"] - base["wall_s"] / base["rows"]
                figures["overhead_us_per_row_vs_one"] = round(1e6 * per_row, 2)
                figures["rows_per_s_vs_one"] = round(figures["rows_per_s"] / base["rows_per_s"], 3)
                figures["same_rows_as_one"] = same_rows(outputs[executor], outputs["one"])
        if "ray" in found and "dp2" in found:
            ray, dp2 = found["ray"], found["dp2"]
            ray["rows_per_s_vs_dp2"] = round(ray["rows_per_s"] / dp2["rows_per_s"], 3)
            ray["judging_rows_per_s_vs_dp2"] = round(ray["judging_rows_per_s"] / dp2["judging_rows_per_s"], 3)
        runs[fmt] = found
        for executor in args.executors:
            if executor != "merged":
                shutil.rmtree(outputs[executor], ignore_errors=True)
        shutil.rmtree(corpus, ignore_errors=True)
    return runs


def driver(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    runs: dict[str, Any] = {}
    for shards in args.shards:
        corpus = scratch / f"corpus-{shards}"
        make_corpus(str(corpus), shards * args.rows_per_shard, shards, "jsonl.gz")
        found: dict[str, Any] = {}
        for executor in [e for e in args.executors if e != "ray"]:
            job = {
                "executor": executor,
                "input": str(corpus),
                "output": f"{scratch}/out-{shards}-{executor}/",
            }
            found[executor] = measure(job)
            print(shards, executor, found[executor], flush=True)
        if "ray" in args.executors:
            with ray_cluster() as address:
                job = {"executor": "ray", "input": str(corpus), "output": f"{scratch}/out-{shards}-ray/",
                       "address": address}  # fmt: skip
                found["ray"] = measure(job)
            print(shards, "ray", found["ray"], flush=True)
        runs[str(shards)] = found
        shutil.rmtree(corpus, ignore_errors=True)
    low, high = (str(s) for s in (min(args.shards), max(args.shards)))
    ratios = {
        e: round(runs[high][e]["driver_peak_rss_mib"] / runs[low][e]["driver_peak_rss_mib"], 3)
        for e in args.executors
    }
    return {"runs": runs, f"driver_peak_rss_{high}_over_{low}_shards": ratios}


def storage(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from s3_server import s3_server  # type: ignore[import-not-found]  # tests/s3_server.py

    runs: dict[str, Any] = {}
    local = scratch / "corpus"
    make_corpus(str(local), args.rows, args.shards, "jsonl.gz")
    for executor in args.executors:
        job = {"executor": executor, "input": str(local), "output": f"{scratch}/out-{executor}/"}
        runs[f"local-{executor}"] = measure(job)
        print("local", executor, runs[f"local-{executor}"], flush=True)
    with s3_server(scratch / "moto.log") as server:
        server.bucket("corpus")
        before = dict(os.environ)
        os.environ.update(server.env)
        try:
            make_corpus("s3://corpus/in/", args.rows, args.shards, "jsonl.gz")
        finally:
            os.environ.clear()
            os.environ.update(before)
        for executor in args.executors:
            job = {"executor": executor, "input": "s3://corpus/in/", "output": f"s3://corpus/out-{executor}/"}
            runs[f"s3-{executor}"] = measure(job, server.env)
            runs[f"s3-{executor}"]["same_rows_as_local"] = same_rows(
                f"s3://corpus/out-{executor}/", str(scratch / f"out-{executor}"), server.env
            )
            local_rate = runs[f"local-{executor}"]["rows_per_s"]
            runs[f"s3-{executor}"]["rows_per_s_vs_local"] = round(
                runs[f"s3-{executor}"]["rows_per_s"] / local_rate, 3
            )
            print("s3", executor, runs[f"s3-{executor}"], flush=True)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["throughput", "driver", "storage"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, nargs="+", default=None)
    parser.add_argument("--rows-per-shard", type=int, default=1000)
    parser.add_argument("--formats", nargs="+", default=["jsonl.gz", "parquet"])
    parser.add_argument("--executors", nargs="+", choices=["merged", "one", "dp2", "ray"], default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    defaults: dict[str, tuple[list[int], list[str]]] = {
        "throughput": ([100], ["merged", "one", "dp2", "ray"]),
        "driver": ([10, 1000], ["ray", "dp2", "one"]),
        "storage": ([20], ["one", "dp2"]),
    }
    shards, executors = defaults[args.command]
    args.shards = args.shards or shards
    if args.command != "driver":
        args.shards = args.shards[0]
    args.executors = args.executors or executors
    if args.command == "storage" and args.rows == 1_000_000:
        args.rows = 100_000
    scratch = Path(tempfile.mkdtemp(prefix="jurist-corpus-"))
    try:
        started = time.time()
        found = {"throughput": throughput, "driver": driver, "storage": storage}[args.command](args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results = {
        **header(f"corpus_{args.command}"),
        "command": "python benchmarks/corpus.py " + shlex.join(sys.argv[1:]),
        "judge": JUDGE,
        "backend": "scripted, answer chosen by a hash of the prompt (ContentAnswers)",
        "settings": {k: v for k, v in vars(args).items() if k not in ("child", "out", "command")},
        "seconds": round(time.time() - started, 1),
        "runs": found,
    }
    write(results, args.out or RESULTS / f"corpus_{args.command}.json")


if __name__ == "__main__":
    main()
