"""The 0-5 educational-value teacher and its 0.5B students on published text of five kinds.

    python benchmarks/distil_web.py [--work /tmp/jurist-web] [--out FILE]

No web crawl installs from the registries, so the passages are text that registries publish as web pages and
that this box holds: PyPI project descriptions (each installed distribution's ``METADATA``), Debian package
READMEs, changelogs and copyright files (``/usr/share/doc``), and the module docstrings of Python's standard
library, its tests left out (what docs.python.org renders). Each document is cut at paragraph breaks into
passages of at most ``MAX_WORDS`` words (a longer paragraph cut at that many), and at most ``PER_DOCUMENT``
passages of each document are drawn (seeded), up to ``PER_SOURCE`` per kind. The passages are written once
to ``WORK/passages.jsonl`` (another box holds other documents: its sha256 is in the results). A quarter of
the documents (seeded) are held out, with all their passages, so no held-out passage shares a document with
a fitted one.

1. The teacher: Qwen2.5-Coder-1.5B with ``corpus/educational_value`` in LOGPROBS grades every passage; its
   expected grade is the reference, its grade distribution the soft target. The prompted 0.5B (the same
   judge in LOGPROBS) grades the held-out passages.
2. Each student's state for every passage (:data:`STUDENTS`): the 0.5B's at layer 18, the last token's
   and ``--pool last_mean`` over the passage's tokens, and the teacher's own at layer 10 (an early exit),
   through vLLM's pooling runner on the model cut after that layer, as PROBE judging reads it (chunk caches
   in WORK).
3. For each student, the learning curve at 100, 300 and every fit passage: C chosen by 5-fold
   cross-validation on those passages alone (grid ``CS``, the targets' log-likelihood, as ``probe fit``
   chooses it), the head fitted on them, and on the held-out passages: Spearman with the teacher's
   expected grade and F1 of the keep class at 10, 30 and 50 % (distil_graded.py's ``agreement``), beside
   the length rule (its direction fitted on the fit passages) and the prompted 0.5B.
4. Cost per passage: the teacher's and the prompted 0.5B's rows/s from their run summaries (engine start
   not counted), the heads' from the seconds the state passes took (the same engine path PROBE judging
   takes; a rerun that reads a student's states from the caches keeps the cost the earlier results hold).
"""

from __future__ import annotations

import argparse
import ast
import email
import gzip
import hashlib
import json
import re
import shlex
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import numpy as np

from common import RESULTS, header, write
from distil_graded import agreement, expected_grade, graded_states, judged
from distil_recipe import LARGE, SMALL, write_jsonl

JUDGE = "corpus/educational_value"
COLUMN = "educational_value"
GRADES = tuple(float(g) for g in range(6))
STUDENTS: dict[str, tuple[str, int, str]] = {
    "student_0.5b_last": (SMALL, 18, "last"),
    "student_0.5b_last_mean": (SMALL, 18, "last_mean"),
    "early_exit_last": (LARGE, 10, "last"),
}
"""Each student's model, layer and pooling: the 0.5B at layer 18 and the teacher's own layer 10, the layers
distil_graded.py's fits chose for the response-quality teacher (the early exit's within 0.4 of its cost)."""
CS = (0.001, 0.003, 0.01, 0.03, 0.1)
CURVE = (100, 300)
MIN_WORDS, MAX_WORDS = 60, 250
PER_DOCUMENT = 2
PER_SOURCE = {
    "PyPI description": 400,
    "Debian README": 200,
    "Debian changelog": 120,
    "Debian copyright": 120,
    "Python docstring": 160,
}
HELD_SHARE = 0.25
SEED = 0


# ------------------------------------------------------------------------------------------ passages


def _pypi() -> list[tuple[str, str]]:
    """Each installed distribution's description (the text after its METADATA headers)."""
    found = []
    for meta in sorted(Path(sysconfig.get_paths()["purelib"]).glob("*.dist-info/METADATA")):
        message = email.message_from_string(meta.read_text(encoding="utf-8", errors="replace"))
        body = message.get_payload()
        if isinstance(body, str) and body.strip():
            found.append((f"pypi:{message.get('Name', meta.parent.name)}", body))
    return found


def _debian(pattern: str, kind: str) -> list[tuple[str, str]]:
    found = []
    for path in sorted(Path("/usr/share/doc").glob(pattern)):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        if path.suffix == ".gz":
            try:
                raw = gzip.decompress(raw)
            except OSError:
                continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found.append((f"debian-{kind}:{path.parent.name}/{path.name}", text))
    return found


def _docstrings() -> list[tuple[str, str]]:
    """The module docstrings of the standard library (its tests left out)."""
    found = []
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        if {"test", "tests", "site-packages", "idlelib"} & set(path.relative_to(root).parts):
            continue
        try:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        if doc:
            found.append((f"python:{path.relative_to(root).with_suffix('')}", doc))
    return found


def cut(text: str) -> list[str]:
    """A document's passages: its paragraphs (line breaks kept) joined up to ``MAX_WORDS`` words, a longer
    paragraph cut there; those under ``MIN_WORDS`` words dropped."""
    passages: list[list[str]] = []
    current: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        if not paragraph.split():
            continue
        if current and _words(current) + len(paragraph.split()) > MAX_WORDS:
            passages.append(current)
            current = []
        current.append(_head(paragraph.strip("\n"), MAX_WORDS))
        if _words(current) >= MAX_WORDS:
            passages.append(current)
            current = []
    passages.append(current)
    return ["\n\n".join(p) for p in passages if _words(p) >= MIN_WORDS]


def _words(paragraphs: list[str]) -> int:
    return sum(len(p.split()) for p in paragraphs)


def _head(paragraph: str, limit: int) -> str:
    """The paragraph's first ``limit`` words, its line breaks kept."""
    lines, count = [], 0
    for line in paragraph.split("\n"):
        words = line.split()
        if count + len(words) > limit:
            lines.append(" ".join(words[: limit - count]))
            break
        lines.append(line)
        count += len(words)
    return "\n".join(lines)


def passages(work: Path) -> list[dict[str, Any]]:
    """The passages (written to ``WORK/passages.jsonl`` once, read from there after)."""
    path = work / "passages.jsonl"
    if path.exists():
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    sources = {
        "PyPI description": _pypi(),
        "Debian README": _debian("*/README*", "readme"),
        "Debian changelog": _debian("*/changelog.Debian.gz", "changelog"),
        "Debian copyright": _debian("*/copyright", "copyright"),
        "Python docstring": _docstrings(),
    }
    rng = np.random.default_rng(SEED)
    rows = []
    for source, documents in sources.items():
        taken = 0
        for index in rng.permutation(len(documents)):
            name, text = documents[index]
            pieces = cut(text)
            if not pieces:
                continue
            chosen = sorted(rng.choice(len(pieces), size=min(PER_DOCUMENT, len(pieces)), replace=False))
            for k in chosen[: PER_SOURCE[source] - taken]:
                rows.append({"id": f"{name}#{k}", "document": name, "source": source, "text": pieces[k]})
                taken += 1
            if taken >= PER_SOURCE[source]:
                break
    write_jsonl(path, rows)
    return rows


def split(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Fit and held-out passages, a seeded quarter of the documents held out with all their passages."""
    documents = sorted({r["document"] for r in rows})
    rng = np.random.default_rng(SEED)
    held_documents = {
        documents[i] for i in rng.permutation(len(documents))[: round(HELD_SHARE * len(documents))]
    }
    fit = [r for r in rows if r["document"] not in held_documents]
    held = [r for r in rows if r["document"] in held_documents]
    return [fit[i] for i in rng.permutation(len(fit))], held


# ------------------------------------------------------------------------------------------ runs


def states(rows: list[dict[str, Any]], teacher: Path, student: str, cache: Path) -> tuple[Any, Any]:
    """The passages' examples (the teacher's grade distributions as targets) and their states as the
    student (:data:`STUDENTS`) reads them, through vLLM's pooling runner (chunk caches in ``cache``)."""
    model, layer, pooling = STUDENTS[student]
    field = None if pooling == "last" else "text"
    return graded_states(JUDGE, model, rows, teacher, layer, cache, pooling, field)


def graded(work: Path, name: str, rows: Path, model: str) -> dict[str, Any]:
    """The judge in LOGPROBS on ``rows`` (reused when its results exist): expected grades by passage id,
    the statuses and the run summary."""
    scoring = ("--judge_params.scoring", "LOGPROBS")
    return judged(work, name, rows, model, *scoring, judge=JUDGE, column=COLUMN)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jurist-web"))
    parser.add_argument("--out", type=Path, default=RESULTS / "distil_web.json")
    args = parser.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    earlier = json.loads(args.out.read_text()) if args.out.exists() else {}
    from jurist.probe.fit import FitSettings, choose, row_probabilities, train

    rows = passages(work)
    fit_rows, held = split(rows)
    every = fit_rows + held
    words = [len(r["text"].split()) for r in rows]
    results: dict[str, Any] = {
        **header("distil_web"),
        "command": "python benchmarks/" + Path(__file__).name + " " + shlex.join(sys.argv[1:]),
        "teacher": f"{LARGE} / {JUDGE} / LOGPROBS (expected grade 0 to 5)",
        "passages": {
            "sha256": hashlib.sha256((work / "passages.jsonl").read_bytes()).hexdigest(),
            "fit": len(fit_rows),
            "held_out": len(held),
            "documents": len({r["document"] for r in rows}),
            "by_source": {s: sum(r["source"] == s for r in rows) for s in PER_SOURCE},
            "words_5_50_95": [int(np.quantile(words, q)) for q in (0.05, 0.5, 0.95)],
        },
    }  # fmt: skip

    # 1. the teacher's grades and the prompted student's
    every_path = write_jsonl(work / "every.jsonl", every)
    teacher = graded(work, "teacher", every_path, LARGE)
    prompted = graded(work, "prompted", write_jsonl(work / "held.jsonl", held), SMALL)
    grade = teacher["scores"]
    if any(grade[r["id"]] is None for r in every):
        raise SystemExit(f"the teacher did not grade every passage: statuses {teacher['statuses']}")
    results["teacher_grades"] = {
        source: {
            "passages": len(values),
            "mean": round(float(np.mean(values)), 3),
            "quantiles_5_50_95": [round(float(np.quantile(values, q)), 3) for q in (0.05, 0.5, 0.95)],
        }
        for source in PER_SOURCE
        if (values := [grade[r["id"]] for r in every if r["source"] == source])
    }
    reference = np.asarray([grade[r["id"]] for r in held])
    trend = (
        1.0
        if np.corrcoef([len(r["text"]) for r in fit_rows], [grade[r["id"]] for r in fit_rows])[0, 1] >= 0
        else -1.0
    )
    baselines = {
        "length_rule": trend * np.asarray([len(r["text"]) for r in held], dtype=float),
        "student_prompted": np.asarray([prompted["scores"][r["id"]] for r in held], dtype=float),
    }  # fmt: skip
    results["baselines"] = {name: agreement(s, reference) for name, s in baselines.items()}
    teacher_rate = teacher["summary"]["rows_per_second"]
    results["cost"] = {
        "teacher_rows_per_second": teacher_rate,
        "prompted_0.5b_of_teacher": round(teacher_rate / prompted["summary"]["rows_per_second"], 4),
    }
    write(results, args.out)

    # 2-4. each feature's states, curve and cost
    settings = FitSettings(cs=CS, inner_folds=5, seed=SEED)
    for student, (model, layer, pooling) in STUDENTS.items():
        found, got = states(every, work / "teacher.parquet", student, work / f"states_{student}")
        x, truth, soft = got.states[:, :, 0], found.truth, found.soft
        n_fit = len(fit_rows)
        entry: dict[str, Any] = {"model": model, "layer": layer, "pooling": pooling, "curve": []}
        if got.run == len(every):
            entry["cost_of_teacher"] = round(got.seconds / got.run * teacher_rate, 4)
        else:  # its states were read from the caches: the cost is the run's that timed them
            entry["cost_of_teacher"] = earlier.get(student, {}).get("cost_of_teacher")
        for n in (*CURVE, n_fit):
            _, c, _ = choose(
                found.shape, x[:n, :, None], truth[:n], settings, np.random.default_rng(SEED), soft[:n]
            )
            head = train(found.shape, x[:n], truth[:n], c, soft[:n])
            guess = expected_grade(row_probabilities(found.shape, head, x[n_fit:]), GRADES)
            entry["curve"].append({"teacher_labels": n, "c": c, **agreement(guess, reference)})
            print(student, n, entry["curve"][-1]["spearman"], flush=True)
        results[student] = entry
        write(results, args.out)
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    write(results, args.out)


if __name__ == "__main__":
    main()
