"""``jurist label``: a local web page for labelling a judge's rows, one at a time, into an append-only
labels file.

The labels file itself (appends under a lock, fsync'd; the claims beside it) is
:mod:`jurist.labels.file`, which every command that reads labels goes through; :mod:`.choices` the
labels a judge's verdicts take (a button each), :mod:`.rows` what a row shows, :mod:`.queue` which row
comes next (a sampling plan's order, or a review's), :mod:`.desk` the sessions' actions and the progress,
:mod:`.app` the Starlette app and its server; ``page.html``, ``label.js`` and ``label.css`` are the page.
"""
