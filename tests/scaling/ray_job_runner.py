"""A dataset run on Ray as its own process (the driver), so that test_ray.py can kill it with SIGKILL.

    python ray_job_runner.py ADDRESS INPUT OUTPUT CHUNK_SIZE DELAY_SECONDS

Each backend call sleeps DELAY_SECONDS (so that a kill lands mid-run); answers depend on the request alone.
Prints the run summary as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/mortal
sys.path.insert(0, str(Path(__file__).parent))

import scaling_backends as sb

from jurist.config.models import JudgeConfig
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.launch import Placement, launch


def main() -> None:
    address, source, output, chunk, delay = sys.argv[1:6]
    spec = RunSpec(
        (JudgeConfig.model_validate(sb.JUDGE),), Selection(source), RunOptions(chunk_size=int(chunk))
    )
    placement = Placement(data_parallel=2, ray=address)
    launched = launch(spec, placement, output=output, backend_factory=sb.SlowFor(float(delay)))
    try:
        summary = launched.run(output)
    finally:
        launched.close()
    print(json.dumps(summary.as_dict()))


if __name__ == "__main__":
    main()
