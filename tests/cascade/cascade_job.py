"""A cascade run as its own process, for the kill -9 test: LLMBar rows, two scripted stages that log every
request to a file; stage 2 blocks (sleeps) on its call number BLOCK (0: never), after writing MARKER.

    python cascade_job.py INPUT OUTPUT LOG BLOCK MARKER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cascade_stages import Stage, factory, stage_config, truth_of

from jurist.config.cascade import CascadeSettings, stage_configs
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.launch import launch


def main() -> None:
    source, output, log, block, marker = sys.argv[1:6]
    truth = truth_of(json.loads(Path(source).read_text()))
    stages = {
        "small": Stage("small", truth, lambda c: c, Path(log)),
        "big": Stage("big", truth, lambda c: 1.0, Path(log), int(block) or None, Path(marker)),
    }
    configs = stage_configs([stage_config("small"), stage_config("big")])
    options = RunOptions(chunk_size=10, max_open_chunks=2)
    spec = RunSpec(tuple(configs), Selection(source), options, CascadeSettings(thresholds=(0.8,)))
    summary = launch(spec, backend_factory=factory(stages)).run(output)
    print(json.dumps(summary.as_dict()))


if __name__ == "__main__":
    main()
