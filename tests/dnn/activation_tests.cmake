# (filled in by the op family's work)
