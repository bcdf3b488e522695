"""Course-only content the lesson and lab notebooks load but do not show.

- ``quizzes``: every self-check question with its answer and explanation, keyed by quiz
  id, so a notebook names the id and the answer is not readable in the notebook.
- ``progress``: which questions a student got right, kept in a small JSON file.
- ``facts``: the Kafka defaults the lessons state, for the test that keeps them honest.
- ``exercises``: the "Your turn" checks (``exercises.check(id, answer)``), with their
  scenarios in ``lesson_exercises`` and ``lab_exercises`` and the worked answers, shown only
  on request, in ``solutions``.
- ``security``: lesson 19's helpers: a SASL login's messages, the authorizer's answers in
  words, a cluster's ACLs as a table, and ``minikafka serve`` run on a broker file.
"""
