"""People's labels and the verdicts used as labels: the labels file (:mod:`.file`: its line format,
reading, the locked and fsync'd appends), a label source as one value with one id rule, joined to rows or
results (:mod:`.source`), labels in a judge's vocabulary (:mod:`.vocabulary`), and which rows to label
(:mod:`.sampling`)."""
