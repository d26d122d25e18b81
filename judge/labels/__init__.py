"""Readers of expert labels into labelled items: annotator CSV files (one per annotator, as in
the Kumar et al. release), label files (JSON Lines or CSV) and the RESCUE-BENCH sessions. Also the
expert loop's blind labelling rounds (:mod:`judge.labels.tasks`) and Label Studio's side of
them (:mod:`judge.labels.label_studio`, and its REST API over httpx in
:mod:`judge.labels.label_studio_api`). No database, no judges."""
