"""Analysis of results: agreement statistics (:mod:`.agreement`), judges against human labels
(:mod:`.human`), calibration of probabilities (:mod:`.calibration`)."""
