"""``jurist label``: a local web page for labelling a judge's rows, one at a time, into an append-only
labels file.

:mod:`.store` is the labels file (appends under a lock, fsync'd; the claims beside it), :mod:`.choices`
the labels a judge's verdicts take (a button each), :mod:`.rows` what a row shows, :mod:`.queue` which row
comes next (a sampling plan's order, or a review's), :mod:`.desk` the sessions' actions and the progress,
:mod:`.app` the Starlette app and its server; ``page.html``, ``label.js`` and ``label.css`` are the page.
"""
