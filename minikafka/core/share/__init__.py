"""Share groups (KIP-932, "queues for Kafka"): several consumers share the records of
the same partitions, each record acquired by one at a time, acknowledged one by one.

    assignor.py     Kafka's `simple` assignor: a pure function
    coordinator.py  share groups, members, heartbeats, assignment; the share-partitions
    partition.py    one share-partition: SPSO, in-flight records, locks, delivery counts
    sessions.py     share sessions: the epochs of a member's ShareFetch stream
    state_file.py   the share state of a durable cluster, kept across restarts

The ShareFetch / ShareAcknowledge functions both doors call are in `core.api.share`.
"""
