"""Cascaded selective evaluation ("Trust or Escalate", Jung et al., ICLR 2025): stages of judges with the
same judgment, a small one first; a row whose confidence is below its stage's threshold goes on to the next
stage. Thresholds are given by hand or calibrated on labelled rows with a stated guarantee
(:mod:`jurist.stats.selective`). See docs/guide/cascades.md.

Modules: what a stage's confidence is (``confidence``), calibration on labelled rows (``calibrate``), the
cascade's engine (``engine``), stage outputs kept beside a run until committed (``side``), the output
columns (``columns``), the batch source a :class:`~jurist.engine.run.Run` commits (``batches``). The stages
and their thresholds are part of the run spec (:mod:`jurist.config.cascade`); the front door
(:func:`jurist.launch.launch`) builds a cascade run.
"""
