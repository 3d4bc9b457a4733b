"""Evidence: tagged runs on real hardware, promoted by a reviewer.

  store         where records and promotions live; reading them as strict
                JSON of the expected shape
  machine       what this machine says about itself: clocks, driver, git
  plausibility  the numbers no device allows
  run           `record`: build, run and write one record, never overwriting
  profile       counters from Nsight Compute, for the record
  review        the reviewer's hardware check on a GPU machine
  promote       the promotion rules and the reviewer's signed gate
  signing       the reviewers' SSH signatures
  verify        what CI re-checks: every promoted entry still holds
  verdict       the comparison rule: two rows' samples to one word
  compare       two runs of a lesson, row by row, by that rule

The modules `record` and `review` use need only Python's standard library:
the GPU machine may have nothing else.
"""
