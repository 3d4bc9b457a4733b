"""Evidence: the recorded runs kept in the repository, promoted by a
reviewer, and what CI re-checks.

  store         where records and promotions live; reading them
  promote       the promotion rules and the reviewer's signed gate
  signing       the reviewers' SSH signatures
  verify        what CI re-checks: every promoted entry still holds

Recording a run on a GPU is record/; the comparison rule is rule/.
"""
