"""The documentation site builds with warnings as errors, and the README is a short front page whose every
link resolves."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(root / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = _build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    for page in ("index.html", "guide/judging-a-dataset/index.html", "reference/config/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in html  # it reads offline


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    page = copy / "docs" / "guide" / "engines.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8"
    )
    result = _build(copy, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr


# ------------------------------------------------------------------------------------------- README
def _slug(heading: str) -> str:
    """A heading's anchor, as GitHub and MkDocs make it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return {_slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def _links(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"`[^`]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_the_readme_is_a_short_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200
    fence = next(i for i, line in enumerate(lines) if line.startswith("```"))
    assert lines[fence] == "```bash"
    assert lines[fence + 1].startswith("./scripts/demo.sh ")
    assert lines[fence + 2].startswith("./scripts/test.sh ")
    for script in ("scripts/demo.sh", "scripts/test.sh"):
        assert (ROOT / script).is_file()


def test_ci_runs_the_readmes_test_command_and_the_slow_tier() -> None:
    """The README's test command runs the default tier; CI runs it, then the slow tier, so every test runs."""
    lines = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    commands = [line for line in lines if not line.startswith("#")]
    assert commands[-2:] == ["scripts/test.sh", 'exec "${JURIST_VENV:-.venv}/bin/python" -m pytest -m slow']
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    assert "-m 'not slow'" in options["ini_options"]["addopts"]


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").rglob("*.md"))], ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    """Files and anchors exist (links to the web are not fetched: there is no network here)."""
    broken = []
    for link in _links(page):
        if re.match(r"^[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in _anchors(path)):
            broken.append(link)
    assert broken == []


def test_the_readme_links_into_the_guide() -> None:
    """One example per job, each followed by a link to its page."""
    links = {link.partition("#")[0] for link in _links(README)}
    jobs = {"docs/guide/judging-a-dataset.md", "docs/guide/training-data.md", "docs/guide/benchmarking.md"}
    assert jobs <= links
