"""Reports over result tables, built from :mod:`jurist.stats`: judges against human labels (:mod:`.human`),
the bias audit (:mod:`.audit`), comparisons (:mod:`.compare`), estimates (:mod:`.estimate`), their text."""
