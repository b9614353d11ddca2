"""Judges: a config compiled into requests per row and an output per row (:class:`.judge.Judge`), built
from small parts (:mod:`.parts`); the pointwise and pairwise kinds; their declared output columns; panels."""
