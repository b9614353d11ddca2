"""A Ray judging job as its own process, so that test_ray.py can kill it with SIGKILL.

    python ray_job_runner.py ADDRESS INPUT OUTPUT CHUNK_SIZE DELAY_SECONDS

Each backend call sleeps DELAY_SECONDS (so that a kill lands between blocks); answers depend on the request
alone. Prints the run summary as JSON, with the blocks sent to Ray.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import scaling_backends as sb

from jurist import Engine, ScriptedBackend
from jurist.config.inference import InferenceConfig
from jurist.engine.ray_job import RayRun
from jurist.models.default_model import DEFAULT_MODEL_LABEL


class Slow(ScriptedBackend):
    def __init__(self, delay: float) -> None:
        super().__init__(sb.answer, model_id=DEFAULT_MODEL_LABEL)
        self.delay = delay

    def generate(self, requests: Any) -> Any:
        time.sleep(self.delay)
        return super().generate(requests)


class SlowFactory:
    def __init__(self, delay: float) -> None:
        self.delay = delay

    def __call__(self, config: InferenceConfig) -> Slow:
        return Slow(self.delay)


def main() -> None:
    address, source, output, chunk, delay = sys.argv[1:6]
    engine = Engine(sb.JUDGE, chunk_size=int(chunk), backend_factory=SlowFactory(float(delay)))
    run = RayRun(
        engine, address, concurrency=2, runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).parent)}}
    )
    summary = run.run_file(source, output)
    print(json.dumps({**summary.as_dict(), "sent_blocks": run.sent_blocks}))


if __name__ == "__main__":
    main()
