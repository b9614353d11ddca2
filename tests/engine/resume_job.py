"""A judging job run as its own process by test_resume.py, so that the test can kill it with SIGKILL.

    python resume_job.py INPUT OUTPUT CHUNK_SIZE DELAY_SECONDS

Every answer depends only on the row's content (the same verdict whatever the batch), and each backend call
sleeps DELAY_SECONDS, so that a kill lands between commits. It prints the run summary as JSON.
"""

from __future__ import annotations

import json
import sys
import time

from jurist import Engine, ScriptedBackend
from jurist.records import GenerationRequest

JUDGE = {
    "name": "j",
    "judge_params": {"prompt_template": "Q: {question}", "include_explanation": True},
}


def main() -> None:
    source, output, chunk_size, delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])

    def answer(request: GenerationRequest) -> str:
        text = request.messages[-1].content
        verdict = "Yes" if sum(map(ord, text)) % 3 else "No"
        return json.dumps({"explanation": f"saw {len(text)} characters", "judgment": verdict})

    class SlowBackend(ScriptedBackend):
        def generate(self, requests):  # type: ignore[no-untyped-def]
            time.sleep(delay)
            return super().generate(requests)

    backend = SlowBackend(answer, model_id="scripted")
    summary = Engine(JUDGE, backend, chunk_size=chunk_size).run_file(source, output)
    print(json.dumps({**summary.as_dict(), "requests": len(backend.requests)}))


if __name__ == "__main__":
    main()
