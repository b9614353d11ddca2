"""Probe heads: linear heads on a judge model's own hidden states, fitted from labels (people's, or a bigger
judge's verdicts) and read by ``judge_params.scoring: PROBE``.

:mod:`.examples` turns labelled rows into the judge's prompts and targets, :mod:`.features` extracts the
states once, :mod:`.fit` chooses and measures a head, :mod:`.job` runs ``jurist probe fit`` end to end and
:mod:`.text` prints its report. The head file itself is :mod:`jurist.models.probe_head`; a judge reads it in
scoring PROBE (:mod:`jurist.scoring.probe`), from the states engines give
(:mod:`jurist.backends.local.states`).
"""
