"""Readers of expert labels into labelled items: annotator CSV files (one per annotator, as in
the Kumar et al. release), label files (JSON Lines or CSV) and the RESCUE-BENCH sessions. They
read files only: no database, no judges."""
