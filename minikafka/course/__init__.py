"""What only the lesson and lab notebooks use, one job a module; nothing else in minikafka
imports it. A notebook imports each helper from the module that does its job:

For the lessons (a seeded, simulated cluster):

- ``quiz``: self-check questions (``quiz(id)``, ``progress(lesson)``).
- ``tables``: results as small tables (``Table``, ``topic_table``, ``replica_table``,
  ``broker_table``, ``batches_table``, ``journal_table``, ``metadata_table``, ``znodes``,
  ``group_table``, ``assignment_table``).
- ``pictures``: ``show()`` draws graphviz pictures; ``widgets``: ``explore()``.
- ``reading``: ``read_topic``, ``drain``, ``keep_polling``, ``send_every``.
- ``served``: ``real_cluster()``, a served cluster for the "on a real cluster" cells.
- one lesson's experiment each: ``placement`` (2), ``durability`` (5), ``batching`` (7),
  ``rebalance`` (9, 10), ``connectors`` (13).

For the labs (real clients against minikafka's server or Apache Kafka):

- ``lab_cluster``: ``bootstrap_servers()``, the embedded or native cluster;
  ``lab_admin``: ``fresh_topic``, ``drop_topics``, ``partitions_table``, ``topic_bytes``,
  ``live_brokers``; ``lab_brokers``: stop, crash and start a broker.
- ``resend``, ``shell`` (``cli``, ``parse_table``), ``workdir``, ``charts`` (``lines``,
  ``bars``), ``spark`` (``spark_session``), ``customers`` (customers.csv).

For both:

- ``checks``: ``checked()``, the outcomes each check cell reports as hidden display data
  (``CHECK_MIME``), one line when run outside a notebook; ``lesson_outcomes``: what each
  lesson's check cell asserts (``check_lesson``), kept out of the notebook because it
  answers the lesson's "Predict first" questions.
- ``trucks``: the running example and its one record schema, ``TruckPosition`` (key
  ``truck-01``, JSON value, ``SPARK_SCHEMA``): ``truck_positions`` for the labs' event-time
  stream, ``truck_reports`` for the lessons' rounds, used by the assignments too.
- ``quizzes``: every self-check question with its answer and explanation, keyed by quiz
  id, so a notebook names the id and the answer is not readable in the notebook.
- ``progress``: which questions a student got right, kept in a small JSON file.
- ``facts``: the Kafka defaults the lessons state, for the test that keeps them honest.
- ``exercises``: the "Your turn" checks (``exercises.check(id, answer)``), with their
  scenarios in ``lesson_exercises`` and ``lab_exercises`` and the worked answers, shown only
  on request, in ``solutions``.
- ``group_protocols`` and ``share_groups``: the experiments of lessons 17 and 18 (one
  group under the classic and the KIP-848 protocol as a timeline; a share partition's
  in-flight records as plain data), drawn by ``minikafka.viz``.
- ``security``: lesson 19's helpers: a SASL login's messages, the authorizer's answers in
  words, a cluster's ACLs as a table, and ``minikafka serve`` run on a broker file.
"""

from ..extras import require
from .browser import BROWSER, install

# In a browser tab the site ships the course's pure-Python part (pictures, widgets); the
# page itself is JupyterLab, and cells that need what a tab lacks are skipped in one line.
require("course", *(("graphviz", "ipywidgets") if BROWSER else ()),
        what="minikafka.course (the lessons and labs)")
if BROWSER:
    install()
