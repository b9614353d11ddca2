"""Datasets in (:mod:`.readers`) and results out (:mod:`.writers`)."""
