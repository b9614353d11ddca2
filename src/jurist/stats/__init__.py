"""The numbers, with no I/O and no knowledge of results files: a share with its interval (:mod:`.share`),
agreement (:mod:`.agreement`), baselines (:mod:`.baselines`), calibration and ECE (:mod:`.calibration`),
PPI++ estimates (:mod:`.estimate`), cascade thresholds (:mod:`.selective`), paired tests (:mod:`.paired`)
and the position prior (:mod:`.position`). The reports over result tables are :mod:`jurist.analysis`."""
