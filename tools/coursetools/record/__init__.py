"""Recording: what the GPU machine runs, with Python's standard library
alone (a test holds it; the GPU machine may have nothing else).

  run           `record`: build, run and write one record, never overwriting
  machine       what this machine says about itself: clocks, driver, git
  profile       counters from Nsight Compute, for the record
  proof         what shows that a GPU ran the program
  plausibility  the numbers no device allows
  review        the reviewer's hardware check (sanitizers, negative builds)
"""
