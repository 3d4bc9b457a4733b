"""The comparison rule and what is built on it, on rows and samples alone
(nothing here reads the evidence store: callers hand it the rows).

  verdict   two rows' samples to one word; common/course/detail/decide.cuh
            is its copy in the programs, held to the same words by a test
  compare   two runs of a lesson, row by row
  carry     what carries over from one run to another: the declared ratios
"""
