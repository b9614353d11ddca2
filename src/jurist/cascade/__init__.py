"""Cascaded selective evaluation ("Trust or Escalate", Jung et al., ICLR 2025): stages of judges with the
same judgment, a small one first; a row whose confidence is below its stage's threshold goes on to the next
stage. Thresholds are given by hand or calibrated on labelled rows with a stated guarantee
(:mod:`jurist.analysis.selective`). See docs/guide/cascades.md.

Modules: what a stage's confidence is (``confidence``), the stages and their thresholds (``plan``),
calibration on labelled rows (``calibrate``), stage outputs kept beside a run until committed (``side``),
the output columns (``columns``), the batch source a :class:`~jurist.engine.run.Run` commits
(``batches``), building a run (``launch``).
"""
