"""``jurist report``: one self-contained HTML page about a result table (:func:`.build.write_report`).

:mod:`.data` reads the columns the page needs and computes its numbers (the audit and the PPI++
estimates of :mod:`jurist.analysis`), :mod:`.plots` draws the figures as embedded PNG images (matplotlib),
:mod:`.page` renders the HTML (no script, no stylesheet or font from elsewhere: it opens with no network).
"""
